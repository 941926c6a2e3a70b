"""Simulation scenarios built on the public vcore API (trace replays move here when gpu/ is next touched).

- :mod:`vcore.sim.topology_stream`: mixed gangs on a leaf / spine / core GPU tree, per placement policy.
"""
