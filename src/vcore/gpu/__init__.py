"""GPU sharing in vcore: openb trace loading, the FGD experiment protocol and GPU placement policies.

The replay loop, the fit rules and every policy are native (``vcore._native._core.gpu``); this package loads
traces, applies the published protocol (shuffle, tune to 130 % of GPU capacity, one pass) and computes metrics.
The command line front end is ``vcore simulate`` (:mod:`vcore.gpu.cli`).
"""

from vcore.gpu.policies import DEFAULT_POLICY, POLICIES, native_policy_name
from vcore.gpu.protocol import (
    Cluster,
    ReplayRun,
    TargetWorkload,
    build_cluster,
    replay,
    run_protocol,
    target_workload,
    tune_workload,
)
from vcore.gpu.trace import NodeList, PodList, load_nodes, load_pods

__all__ = [
    "DEFAULT_POLICY",
    "POLICIES",
    "native_policy_name",
    "Cluster",
    "ReplayRun",
    "TargetWorkload",
    "build_cluster",
    "replay",
    "run_protocol",
    "target_workload",
    "tune_workload",
    "NodeList",
    "PodList",
    "load_nodes",
    "load_pods",
]
