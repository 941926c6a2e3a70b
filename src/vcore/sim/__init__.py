"""Simulation: synthetic workloads, scenarios and trace replays built on the public vcore API (trace replays
move here when gpu/ is next touched).

- :mod:`vcore.sim.gang`: a batch workload of gangs over weighted queues, and one scheduling cycle over it.
- :mod:`vcore.sim.topology_stream`: mixed gangs on a leaf / spine / core GPU tree, per placement policy.
"""
