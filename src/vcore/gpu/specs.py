"""The GPU parts of the native node and pod specs: what :mod:`vcore.cluster` and :mod:`vcore.scheduler` hand to
the C++ device table and engine.

The GPU conventions are parsed by :mod:`vcore.gpu.devices` (nodes) and :mod:`vcore.gpu.requests` (pods); this
module flattens their results into the plain tuples and dicts the native converter reads, and decides cheaply
which objects need that parsing at all (most pods ask for no GPU, and their conversion must stay fast).
"""

from __future__ import annotations

from typing import Any, Mapping

from vcore.gpu import mig as _mig
from vcore.gpu.devices import GPU_RESOURCE, MIG_RESOURCE_PREFIX, LABEL_COUNT, LABEL_PRODUCT, NodeGpus, node_gpus
from vcore.gpu.requests import KAI_GPU_FRACTION, KAI_GPU_MEMORY, GpuRequest, pod_gpu_request

__all__ = ["GEOMETRIES", "MIG_SHAPES", "device_tuples", "native_request", "node_devices", "node_has_gpus", "pod_gpu", "pod_may_use_gpus"]

#: MIG geometry ids of the native table (0 = none), in vcore.gpu.mig.MIG_MODELS order.
GEOMETRIES: dict[str, int] = {name: i + 1 for i, name in enumerate(_mig.MIG_MODELS)}
#: Native MIG shape ids: (compute slices, memory slices) in the order of the native shape table.
MIG_SHAPES: dict[tuple[int, int], int] = {(1, 1): 0, (1, 2): 1, (2, 2): 2, (3, 4): 3, (4, 4): 4, (7, 8): 5}
_KINDS = {"none": 0, "whole": 1, "shared": 2, "mig": 3}
_DEVICE_PREFIXES = ("nvidia.com/", "volcano.sh/")


def _shape_id(geometry: str, profile: str) -> int:
    p = _mig.profiles_for(geometry).get(profile)
    return -1 if p is None else MIG_SHAPES[(p.compute_slices, p.memory_slices)]


def node_has_gpus(spec: Mapping[str, Any]) -> bool:
    """Whether a converted node spec shows GPUs (allocatable or GPU feature discovery labels)."""
    if any(k == GPU_RESOURCE or k.startswith(MIG_RESOURCE_PREFIX) for k in spec.get("allocatable", ())):
        return True
    return any(k in (LABEL_PRODUCT, LABEL_COUNT) for k, _ in spec.get("labels", ()))


def node_devices(node: Any) -> list[tuple]:
    """The native device tuples of a Node (see :func:`device_tuples`)."""
    return device_tuples(node_gpus(node))


def device_tuples(inventory: NodeGpus) -> list[tuple]:
    """The native device tuples of an inventory: (model, memory MiB, NUMA, NVLink, MIG mode, geometry, layout)."""
    out = []
    for g in inventory.devices:
        geometry = g.mig_geometry
        layout = [(_shape_id(geometry, inst.profile), inst.start) for inst in g.mig_instances] if geometry else []
        out.append((g.model, g.memory_mib, g.numa, g.nvlink_domain, g.mig_mode,
                    GEOMETRIES.get(geometry, 0) if g.mig_mode else 0, layout))
    return out


def pod_may_use_gpus(spec: Mapping[str, Any], pod: Any) -> bool:
    """A cheap test that is true for every pod whose GPU request is not "none" (and for a few more)."""
    if any(k.startswith(_DEVICE_PREFIXES) for k in spec.get("requests", ())):
        return True
    meta = pod.get("metadata") if isinstance(pod, Mapping) else getattr(pod, "metadata", None)
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else getattr(meta, "annotations", None)
    return bool(annotations) and (KAI_GPU_FRACTION in annotations or KAI_GPU_MEMORY in annotations)


def native_request(request: GpuRequest, requests: Mapping[str, int] | None = None) -> dict[str, Any] | None:
    """The native form of a parsed request; None when it asks for no GPU.

    ``requests`` are the pod's effective resource requests as the converter computed them (Kubernetes'
    PodRequests: sidecars, overhead, pod-level resources); a count that comes from a resource
    (``nvidia.com/gpu``, ``nvidia.com/mig-*``) is taken from there, so the device fit and NodeResourcesFit
    always agree on how many devices the pod needs.
    """
    count = request.count
    if requests is not None and request.source in (GPU_RESOURCE,) + (() if request.kind != "mig" else (request.source,)):
        count = int(requests.get(request.source, 0))
    if request.kind == "none" or count == 0:
        return None
    out: dict[str, Any] = {"kind": _KINDS[request.kind], "count": count}
    if request.kind == "shared":
        out["milli"] = -1 if request.milli is None else request.milli
        out["memory_mib"] = -1 if request.memory_mib is None else request.memory_mib
        out["memory_milli"] = -1 if request.memory_milli is None else request.memory_milli
    if request.kind == "mig":
        out["mig_shape"] = [-1] + [_shape_id(g, request.mig_profile) for g in GEOMETRIES]
    if request.models is not None:
        out["models"] = list(request.models)
    out["product_terms"] = [(t.allowed is None, list(t.allowed or ()), list(t.excluded), t.never)
                            for t in request.product_terms]
    return out


def pod_gpu(pod: Any, requests: Mapping[str, int] | None = None) -> dict[str, Any] | None:
    """The native GPU request of a pod object, or None (``requests``: see :func:`native_request`)."""
    return native_request(pod_gpu_request(pod), requests)
