"""Simulation: synthetic workloads, scenarios, trace replays and models of the systems vcore schedules for,
built on the public vcore API.

- :mod:`vcore.sim.synthetic`: deterministic synthetic clusters and workloads (Kubernetes-shaped dicts).
- :mod:`vcore.sim.pods`: the default ``vcore simulate`` scenario, one ``schedule()`` call over a synthetic cluster.
- :mod:`vcore.sim.gang`: a batch workload of gangs over weighted queues, and one scheduling cycle over it.
- :mod:`vcore.sim.topology_stream`: mixed gangs on a leaf / spine / core GPU tree, per placement policy.
- :mod:`vcore.sim.agent`: a burst of agent pods placed between the jobs of a gang cycle.
- :mod:`vcore.sim.llm`: the LLM inference engine model (latency and KV cache) shared by the router's trace replay
  and the HTTP engine simulator.
- :mod:`vcore.sim.gpu`: the openb GPU trace replayed with the FGD paper's protocol (``vcore simulate --trace-dir``).
"""
