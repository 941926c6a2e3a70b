"""The FGD trace experiment: openb GPU traces replayed with the published protocol, to measure GPU placement
policies.

- :mod:`vcore.sim.gpu.trace`: the openb trace reader (node and pod lists as column arrays).
- :mod:`vcore.sim.gpu.replay`: the FGD paper's replay protocol (shuffle, tune to 130 % of GPU capacity, one pass)
  over the native replay kernel, and its metrics.
- :mod:`vcore.sim.gpu.live_replay`: the same protocol through ``vcore.Scheduler`` (Node and Pod objects in).
- :mod:`vcore.sim.gpu.variants`: held-out workloads derived from the openb lists, and the held-out check.
- :mod:`vcore.sim.gpu.cli`: ``vcore simulate --trace-dir DIR``.

The replay loop and every policy are native (``vcore._native._core.gpu``); the policies' names are
:mod:`vcore.gpu.policies`.
"""
