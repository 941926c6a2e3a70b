"""The test control plane of vcore_kube: a real kube-apiserver and etcd (and kube-scheduler, for comparison)
built from pinned releases with the machine's Go, started on loopback for tests, the demo and benchmarks.

    python -m vcore_kube.testenv up --dir DIR [--nodes K]
    python -m vcore_kube.testenv down --dir DIR
"""

from vcore_kube.testenv.control_plane import ControlPlane, ControlPlaneError

__all__ = ["ControlPlane", "ControlPlaneError"]
