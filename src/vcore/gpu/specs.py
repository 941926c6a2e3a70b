"""The GPU parts of the native node and pod specs: what :mod:`vcore.cluster` and :mod:`vcore.scheduler` hand to
the C++ device table and engine.

The GPU conventions are parsed by :mod:`vcore.gpu.devices` (nodes) and :mod:`vcore.gpu.requests` (pods); this
module flattens their results into the plain tuples and dicts the native converter reads, and decides cheaply
which objects need that parsing at all (most pods ask for no GPU, and their conversion must stay fast).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from vcore.gpu import mig as _mig, numa as _numa
from vcore.gpu.devices import GPU_RESOURCE, TOPOLOGY_ANNOTATION, NodeGpus, node_gpus
from vcore.gpu.requests import GpuRequest, pod_gpu_request

if TYPE_CHECKING:
    from vcore._native._convert import GpuDevice

__all__ = [
    "GEOMETRIES",
    "MIG_SHAPES",
    "device_tuples",
    "native_request",
    "node_devices",
    "node_has_gpus",
    "pod_gpu",
    "pod_may_use_gpus",
]

#: MIG geometry ids of the native table (0 = none), in vcore.gpu.mig.MIG_MODELS order.
GEOMETRIES: dict[str, int] = {name: i + 1 for i, name in enumerate(_mig.MIG_MODELS)}
#: Native MIG shape ids: (compute slices, memory slices) in the order of the native shape table.
MIG_SHAPES: dict[tuple[int, int], int] = {(1, 1): 0, (1, 2): 1, (2, 2): 2, (3, 4): 3, (4, 4): 4, (7, 8): 5}
_KINDS = {"none": 0, "whole": 1, "shared": 2, "mig": 3}


def _shape_id(geometry: str, profile: str) -> int:
    p = _mig.profiles_for(geometry).get(profile)
    return -1 if p is None else MIG_SHAPES[(p.compute_slices, p.memory_slices)]


def node_has_gpus(spec: Mapping[str, Any]) -> bool:
    """Whether a converted node spec shows GPUs (the converter's test: allocatable or GFD labels)."""
    return "may_have_gpus" in spec


def _annotation(obj: Any, key: str) -> Any:
    meta = obj.get("metadata") if isinstance(obj, Mapping) else getattr(obj, "metadata", None)
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else getattr(meta, "annotations", None)
    return annotations.get(key) if annotations else None


def node_devices(node: Any, spec: Mapping[str, Any]) -> list[GpuDevice]:
    """The native device tuples of a Node whose converted spec is ``spec`` (see :func:`device_tuples`).

    Nodes of one pool describe their GPUs identically, so the parse is cached by everything it reads (the
    ``nvidia.com/`` labels and allocatable, the topology annotation); a node that fails to parse is not cached
    and fails again with its own name in the message.
    """
    topology = _annotation(node, TOPOLOGY_ANNOTATION)
    key = (
        tuple(kv for kv in spec.get("labels", ()) if kv[0].startswith("nvidia.com/")),
        tuple(kv for kv in spec.get("allocatable", {}).items() if kv[0].startswith("nvidia.com/")),
        topology if isinstance(topology, str) else repr(topology),
    )
    devices = _DEVICE_CACHE.get(key)
    if devices is None:
        devices = device_tuples(node_gpus(node))
        if len(_DEVICE_CACHE) >= _DEVICE_CACHE_SIZE:
            _DEVICE_CACHE.pop(next(iter(_DEVICE_CACHE)))
        _DEVICE_CACHE[key] = devices
    return devices


_DEVICE_CACHE: dict[tuple[Any, ...], list[GpuDevice]] = {}  # (GPU labels, allocatable, topology) -> devices
_DEVICE_CACHE_SIZE = 1024


def device_tuples(inventory: NodeGpus) -> list[GpuDevice]:
    """The native device tuples of an inventory: (model, memory MiB, NUMA, NVLink, MIG mode, geometry, layout)."""
    out: list[GpuDevice] = []
    for g in inventory.devices:
        if not g.mig_mode:  # the common case: no MIG geometry lookup (it parses the product name)
            out.append((g.model, g.memory_mib, g.numa, g.nvlink_domain, False, 0, []))
            continue
        geometry = g.mig_geometry
        if geometry is None:  # node_gpus refuses MIG mode on such a model
            raise ValueError(f"GPU {g.index}: MIG mode on {g.model!r}, which has no MIG geometry")
        layout = [(_shape_id(geometry, inst.profile), inst.start) for inst in g.mig_instances]
        out.append((g.model, g.memory_mib, g.numa, g.nvlink_domain, True, GEOMETRIES.get(geometry, 0), layout))
    return out


def pod_may_use_gpus(spec: Mapping[str, Any]) -> bool:
    """Whether a converted pod spec may carry a GPU request (the converter's cheap test)."""
    return "may_use_gpus" in spec


def native_request(request: GpuRequest, requests: Mapping[str, int] | None = None) -> dict[str, Any] | None:
    """The native form of a parsed request; None when it asks for no GPU.

    ``requests`` are the pod's effective resource requests as the converter computed them (Kubernetes'
    PodRequests: sidecars, overhead, pod-level resources); a count that comes from a resource
    (``nvidia.com/gpu``, ``nvidia.com/mig-*``) is taken from there, so the device fit and NodeResourcesFit
    always agree on how many devices the pod needs.
    """
    count = request.count
    counted_by_resource = request.source == GPU_RESOURCE or request.kind == "mig"  # source: the resource name
    if requests is not None and counted_by_resource:
        count = int(requests.get(request.source, 0))
    if request.kind == "none" or count == 0:
        return None
    out: dict[str, Any] = {"kind": _KINDS[request.kind], "count": count}
    if request.kind == "shared":
        out["milli"] = -1 if request.milli is None else request.milli
        out["memory_mib"] = -1 if request.memory_mib is None else request.memory_mib
        out["memory_milli"] = -1 if request.memory_milli is None else request.memory_milli
    if request.kind == "mig":
        profile = request.mig_profile
        assert profile is not None, "a MIG request names its profile"
        # indexed by native geometry id; id 0 (no MIG) has no shape
        out["mig_shape"] = [-1] + [_shape_id(g, profile) for g in GEOMETRIES]
    if request.models is not None:
        out["models"] = list(request.models)
    out["product_terms"] = [
        (t.allowed is None, list(t.allowed or ()), list(t.excluded), t.never) for t in request.product_terms
    ]
    return out


def pod_gpu(pod: Any, requests: Mapping[str, int] | None = None) -> dict[str, Any] | None:
    """The native GPU request of a pod object, or None (``requests``: see :func:`native_request`); with the pod's
    NUMA policy (:mod:`vcore.gpu.numa`) when it has one, GPUs or not."""
    out = native_request(pod_gpu_request(pod), requests)
    numa = _numa.pod_numa(pod, requests)
    if numa is not None:
        out = out or {"kind": 0, "count": 0}
        out["numa_policy"], out["numa_cpu_milli"] = numa
    return out
