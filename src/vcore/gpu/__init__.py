"""GPUs in vcore's live scheduler: the device model of a node, what a pod asks of GPUs, MIG, NUMA, and the
placement policies' names.

- :mod:`vcore.gpu.devices`: a node's GPU inventory, read from a Kubernetes Node (device plugin, GFD labels and
  vcore's topology annotation).
- :mod:`vcore.gpu.requests`: a pod's GPU request (whole GPUs, shared slices, MIG instances; model constraints).
- :mod:`vcore.gpu.mig`: MIG geometries, profiles and placement rules.
- :mod:`vcore.gpu.numa`: Topology Manager policies and per-NUMA-node CPUs.
- :mod:`vcore.gpu.specs`: the GPU parts of the native node and pod specs.
- :mod:`vcore.gpu.policies`: the names of the GPU placement policies (the kernels are native).

The fit rules and every policy are native (``vcore._native._core.gpu``). The openb trace replay of the FGD paper,
which measures the policies, is simulation: :mod:`vcore.sim.gpu`.
"""

from vcore.gpu.policies import DEFAULT_POLICY, POLICIES, native_policy_name

__all__ = [
    "DEFAULT_POLICY",
    "POLICIES",
    "native_policy_name",
]
