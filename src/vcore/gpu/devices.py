"""A node's GPU inventory, read from a Kubernetes Node the way NVIDIA's device plugin and GFD describe it.

Sources, in the order they are trusted:

- ``status.allocatable``: ``nvidia.com/gpu`` (whole GPUs, or MIG devices under the ``single`` strategy) and,
  under the ``mixed`` strategy, ``nvidia.com/mig-<profile>`` per MIG profile. Allocatable is what the kubelet
  will actually hand out, so it wins over labels when they disagree (a GPU the device plugin marked unhealthy
  is still in ``nvidia.com/gpu.count``).
- Without ``nvidia.com/gpu``, Volcano's GPU-share device plugin: ``volcano.sh/gpu-number`` GPUs sharing
  ``volcano.sh/gpu-memory`` MiB equally (as Volcano's scheduler splits it); that memory wins over the label's.
- GPU Feature Discovery labels: ``nvidia.com/gpu.product``, ``nvidia.com/gpu.memory`` (MiB),
  ``nvidia.com/gpu.count``, ``nvidia.com/mig.strategy`` (``none`` | ``single`` | ``mixed``) and
  ``nvidia.com/mig-<profile>.count``. Under ``single`` GFD overwrites product/count/memory with the MIG device's
  (``A100-SXM4-40GB-MIG-1g.5gb``, the number of MIG devices, the memory of one), so the whole GPU is recovered
  from the product prefix and the MIG geometry.
- The vcore annotation ``vcore.io/gpu-topology`` for what labels cannot say: per-GPU NUMA node and NVLink
  domain, per-GPU model/memory overrides (mixed-model nodes), and the exact MIG layout of a GPU. JSON::

      {"gpus": [{"index": 0, "numa": 0, "nvlink": 0},
                {"index": 1, "numa": 1, "nvlink": 0, "memory_mib": 81920, "model": "NVIDIA-A100-SXM4-80GB",
                 "mig_mode": true, "mig": [{"profile": "3g.40gb", "start": 0}, {"profile": "1g.10gb", "start": 4}]}]}

  Unknown keys are errors (a typo must not silently mean "no topology").

Labels do not say which physical GPU holds which MIG instance, nor which GPU index is MIG-enabled under the
mixed strategy. Without the annotation the inventory is inferred deterministically: whole GPUs take the low
indices, MIG GPUs follow, and MIG instances are laid out largest profile first at the lowest GPU and start
where :func:`vcore.gpu.mig.can_place` succeeds. NUMA node and NVLink domain default to -1 (unknown).

:func:`to_csr` flattens a list of inventories into the CSR arrays the native cluster state will own.
Fields are checked with :mod:`vcore.validation`: every error is a TypeError (a value of the wrong JSON type) or a
ValueError (a bad value) in the form ``node <name>: <field>: <problem>``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vcore._native._convert import api_dict, parse_quantity
from vcore.gpu import mig as _mig
from vcore.gpu.mig import MigInstance
from vcore.gpu.requests import VOLCANO_GPU_MEMORY
from vcore.validation import Boolean, Integer, ListOf, Record, String, fail, optional_mapping

__all__ = [
    "GPU_RESOURCE",
    "MIG_RESOURCE_PREFIX",
    "TOPOLOGY_ANNOTATION",
    "Gpu",
    "NodeGpus",
    "node_gpus",
    "to_csr",
]

GPU_RESOURCE = "nvidia.com/gpu"
VOLCANO_GPU_NUMBER = "volcano.sh/gpu-number"  # Volcano's device plugin: the node's GPUs (and VOLCANO_GPU_MEMORY)
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
TOPOLOGY_ANNOTATION = "vcore.io/gpu-topology"
LABEL_PRODUCT = "nvidia.com/gpu.product"
LABEL_MEMORY = "nvidia.com/gpu.memory"
LABEL_COUNT = "nvidia.com/gpu.count"
LABEL_MIG_STRATEGY = "nvidia.com/mig.strategy"
MIG_STRATEGIES = ("none", "single", "mixed")


@dataclass(frozen=True)
class Gpu:
    """One physical GPU of a node. ``numa``/``nvlink_domain`` are -1 when unknown."""

    index: int
    model: str
    memory_mib: int
    numa: int = -1
    nvlink_domain: int = -1
    mig_mode: bool = False
    mig_instances: tuple[MigInstance, ...] = ()  # the configured MIG layout; () = none or created on demand

    @property
    def mig_geometry(self) -> str | None:
        """The MIG geometry name of this GPU's model (``"A100-80GB"``...), None when it has none."""
        return _mig.mig_model(self.model, self.memory_mib)


@dataclass(frozen=True)
class NodeGpus:
    """The GPUs of one node. ``model``/``memory_mib`` are the node-level (GFD) values; devices may override."""

    name: str
    model: str
    memory_mib: int
    mig_strategy: str
    devices: tuple[Gpu, ...]

    @property
    def n_gpus(self) -> int:
        return len(self.devices)

    def to_csr(self) -> dict[str, np.ndarray]:
        """:func:`to_csr` of this node alone."""
        return to_csr([self])


# ---------------------------------------------------------------------------------------------------------
# Parsing helpers. A wrong JSON type is a TypeError, a bad value a ValueError; both name the node and the field.
# ---------------------------------------------------------------------------------------------------------

_STRING = String()
_MIG_STRATEGY = String(choices=MIG_STRATEGIES)
_COUNT = Integer(0)
_MIG_INSTANCE = Record({"profile": String(), "start": _COUNT}, required=("profile", "start"))
# One GPU of the vcore.io/gpu-topology annotation; an unknown key is an error (a typo must not mean "no topology").
_GPU_TOPOLOGY = Record(
    {
        "index": _COUNT,
        "numa": _COUNT,
        "nvlink": _COUNT,
        "model": String(nonempty=True),
        "memory_mib": Integer(1),
        "mig_mode": Boolean(),
        "mig": ListOf(_MIG_INSTANCE),
    },
    required=("index",),
)
_TOPOLOGY = Record({"gpus": ListOf(_GPU_TOPOLOGY)})


def _label(labels: Mapping[str, Any], key: str, ctx: str) -> str | None:
    """A label's value (None when absent)."""
    v = labels.get(key)
    return None if v is None else _STRING(v, f"{ctx}: metadata.labels[{key}]", TypeError)


def _label_int(labels: Mapping[str, Any], key: str, ctx: str, what: str) -> int | None:
    """A non-negative decimal label (labels are strings; GFD writes plain integers)."""
    v = _label(labels, key, ctx)
    if v is None:
        return None
    if not v.isdigit() or not v.isascii():
        raise fail(ValueError, f"{ctx}: metadata.labels[{key}]", f"expected a non-negative integer ({what}), got {v!r}")
    return int(v)


def _whole_quantity(v: Any, ctx: str, field: str) -> int:
    """A device-count quantity: Kubernetes only allows whole numbers for extended resources."""
    milli = parse_quantity(v, milli=True, obj=ctx, field=field)
    if milli % 1000:
        raise fail(ValueError, f"{ctx}: {field}", f"must be a whole number, got {v!r}")
    return milli // 1000


@dataclass
class _Override:
    numa: int | None = None
    nvlink: int | None = None
    model: str | None = None
    memory_mib: int | None = None
    mig_mode: bool | None = None
    mig: tuple[MigInstance, ...] | None = None


def _parse_topology(raw: Any, ctx: str) -> dict[int, _Override]:
    base = f"{ctx}: metadata.annotations[{TOPOLOGY_ANNOTATION}]"
    try:
        doc = json.loads(_STRING(raw, base, TypeError))
    except json.JSONDecodeError as e:
        raise fail(ValueError, base, f"invalid JSON: {e}") from None
    out: dict[int, _Override] = {}
    for i, entry in enumerate(_TOPOLOGY(doc, base, ValueError).get("gpus", ())):
        idx = entry["index"]
        if idx in out:
            raise fail(ValueError, f"{base}.gpus[{i}].index", f"GPU {idx} is listed twice")
        mig = entry.get("mig")
        out[idx] = _Override(
            entry.get("numa"),
            entry.get("nvlink"),
            entry.get("model"),
            entry.get("memory_mib"),
            entry.get("mig_mode"),
            None if mig is None else tuple(MigInstance(m["profile"], m["start"]) for m in mig),
        )
    return out


def _pack_instances(geometry: str, n_gpus: int, counts: dict[str, int]) -> list[list[MigInstance]]:
    """Lay out MIG instances over ``n_gpus`` GPUs (growing the list when they do not fit).

    Largest profiles first, each at the lowest GPU and start where it fits: the same deterministic rule a human
    would use when writing a mig-parted config, and one that always finds a layout when one GPU per
    7g/4g instance etc. is available.
    """
    profiles = _mig.profiles_for(geometry)
    order = sorted(counts, key=lambda p: (-profiles[p].compute_slices, -profiles[p].memory_slices, p))
    layout: list[list[MigInstance]] = [[] for _ in range(n_gpus)]
    for name in order:
        for _ in range(counts[name]):
            for gpu in layout:
                start = _mig.can_place(geometry, gpu, name)
                if start is not None:
                    gpu.append(MigInstance(name, start))
                    break
            else:  # a GPU of its own: every profile of the geometry fits an empty one
                start = _mig.can_place(geometry, [], name)
                if start is None:
                    raise ValueError(f"MIG profile {name} does not fit an empty {geometry} GPU")
                layout.append([MigInstance(name, start)])
    return layout


# ---------------------------------------------------------------------------------------------------------
# node_gpus
# ---------------------------------------------------------------------------------------------------------


def node_gpus(node: Mapping[str, Any] | Any) -> NodeGpus:
    """The GPU inventory of a v1 Node (an API-shaped dict or a kubernetes.client.V1Node).

    A node without GPUs yields ``devices == ()``. Raises ValueError/TypeError naming the node and field.
    """
    node = api_dict(node, "node")
    meta = optional_mapping(node.get("metadata"), "node <unnamed>: metadata", TypeError)
    name = _STRING(meta.get("name") or "<unnamed>", "node <unnamed>: metadata.name", TypeError)
    ctx = f"node {name}"
    labels = optional_mapping(meta.get("labels"), f"{ctx}: metadata.labels", TypeError)
    annotations = optional_mapping(meta.get("annotations"), f"{ctx}: metadata.annotations", TypeError)
    status = optional_mapping(node.get("status"), f"{ctx}: status", TypeError)
    alloc = optional_mapping(status.get("allocatable"), f"{ctx}: status.allocatable", TypeError)

    strategy = _MIG_STRATEGY(
        _label(labels, LABEL_MIG_STRATEGY, ctx) or "none", f"{ctx}: metadata.labels[{LABEL_MIG_STRATEGY}]", ValueError
    )
    product = _label(labels, LABEL_PRODUCT, ctx) or ""
    at_product = f"{ctx}: metadata.labels[{LABEL_PRODUCT}]"
    memory = _label_int(labels, LABEL_MEMORY, ctx, "MiB") or 0
    count_label = _label_int(labels, LABEL_COUNT, ctx, "GPUs")
    n_alloc = 0
    if GPU_RESOURCE in alloc:
        n_alloc = _whole_quantity(alloc[GPU_RESOURCE], ctx, f"status.allocatable[{GPU_RESOURCE}]")
    elif VOLCANO_GPU_NUMBER in alloc:  # Volcano's device plugin in place of NVIDIA's
        n_alloc = _whole_quantity(alloc[VOLCANO_GPU_NUMBER], ctx, f"status.allocatable[{VOLCANO_GPU_NUMBER}]")
        if n_alloc and VOLCANO_GPU_MEMORY in alloc:
            total = _whole_quantity(alloc[VOLCANO_GPU_MEMORY], ctx, f"status.allocatable[{VOLCANO_GPU_MEMORY}]")
            memory = total // n_alloc

    # MIG device counts per profile: allocatable (what the kubelet offers) first, GFD's labels as a fallback
    # for nodes whose allocatable has not been reported yet.
    mig_counts: dict[str, int] = {}
    known = _mig.all_profile_names()
    for key, value in alloc.items():
        if key.startswith(MIG_RESOURCE_PREFIX):
            prof = key[len(MIG_RESOURCE_PREFIX) :]
            if prof not in known:
                raise fail(ValueError, f"{ctx}: status.allocatable[{key}]", f"unknown MIG profile {prof!r}")
            mig_counts[prof] = _whole_quantity(value, ctx, f"status.allocatable[{key}]")
    if not mig_counts:
        for key in labels:
            if key.startswith(MIG_RESOURCE_PREFIX) and key.endswith(".count"):
                prof = key[len(MIG_RESOURCE_PREFIX) : -len(".count")]
                if prof not in known:
                    raise fail(ValueError, f"{ctx}: metadata.labels[{key}]", f"unknown MIG profile {prof!r}")
                mig_counts[prof] = _label_int(labels, key, ctx, "MIG devices") or 0
    mig_counts = {p: c for p, c in mig_counts.items() if c > 0}

    model, full_memory = product, memory
    layouts: list[list[MigInstance]] = []  # MIG GPUs' instances; they follow the whole GPUs
    n_whole = n_alloc
    if strategy == "single" and "-MIG-" in product:
        # GFD single strategy: product "A100-SXM4-40GB-MIG-1g.5gb", nvidia.com/gpu counts MIG devices.
        model, prof = product.rsplit("-MIG-", 1)
        geometry = _mig.mig_model(model)
        if geometry is None:
            raise fail(ValueError, at_product, f"no MIG geometry for {model!r}")
        if prof not in _mig.profiles_for(geometry):
            raise fail(ValueError, at_product, f"unknown MIG profile {prof!r} for {geometry}")
        n_devices = n_alloc if GPU_RESOURCE in alloc else (count_label or 0)
        full_memory = _mig.full_memory_mib(geometry)
        n_whole = 0
        if n_devices:
            # Single strategy means identical partitions: every GPU full of this profile, the last one partial.
            per_gpu = len(_mig.profiles_for(geometry)[prof].starts)
            layouts = _pack_instances(geometry, math.ceil(n_devices / per_gpu), {prof: n_devices})
    elif strategy == "mixed" and mig_counts:
        geometry = _mig.mig_model(product, memory)
        if geometry is None:
            raise fail(
                ValueError,
                at_product,
                f"no MIG geometry for {product!r} ({memory} MiB), yet the node advertises MIG devices",
            )
        # gpu.count counts every physical GPU; MIG GPUs are those beyond the whole ones. If the label is
        # missing or too small, as many GPUs as the instances need (allocatable is authoritative).
        n_mig = max((count_label or 0) - n_alloc, 0)
        layouts = _pack_instances(geometry, n_mig, mig_counts)

    devices: list[Gpu] = []
    for i in range(n_whole):
        devices.append(Gpu(i, model, full_memory))
    for layout in layouts:
        devices.append(Gpu(len(devices), model, full_memory, mig_mode=True, mig_instances=tuple(layout)))

    if TOPOLOGY_ANNOTATION in annotations:
        overrides = _parse_topology(annotations[TOPOLOGY_ANNOTATION], ctx)
        base = f"{ctx}: metadata.annotations[{TOPOLOGY_ANNOTATION}]"
        for idx, o in sorted(overrides.items()):
            if idx >= len(devices):
                raise fail(ValueError, base, f"GPU index {idx} out of range (the node has {len(devices)} GPUs)")
            g = devices[idx]
            if o.mig and o.mig_mode is False:
                raise fail(ValueError, base, f'GPU {idx}: "mig" instances given with "mig_mode": false')
            mig_mode = o.mig_mode if o.mig_mode is not None else (True if o.mig else g.mig_mode)
            insts = (g.mig_instances if o.mig is None else o.mig) if mig_mode else ()
            new = Gpu(
                idx,
                o.model or g.model,
                o.memory_mib or g.memory_mib,
                g.numa if o.numa is None else o.numa,
                g.nvlink_domain if o.nvlink is None else o.nvlink,
                mig_mode,
                tuple(insts),
            )
            if new.mig_mode:
                geometry = new.mig_geometry
                if geometry is None:
                    raise fail(ValueError, base, f"GPU {idx}: MIG mode on {new.model!r}, which has no MIG geometry")
                try:
                    _mig.validate_layout(geometry, new.mig_instances)
                except ValueError as e:
                    raise fail(ValueError, base, f"GPU {idx}: {e}") from None
            devices[idx] = new
        # The annotation may move MIG mode between GPUs, but never change what the kubelet advertises.
        whole = sum(1 for g in devices if not g.mig_mode)
        if strategy != "single" and whole != n_alloc:
            raise fail(
                ValueError, base, f"{whole} GPUs without MIG mode, but status.allocatable[{GPU_RESOURCE}] is {n_alloc}"
            )
        if strategy == "mixed" and any(g.mig_instances for g in devices):
            got: dict[str, int] = {}
            for g in devices:
                for inst in g.mig_instances:
                    got[inst.profile] = got.get(inst.profile, 0) + 1
            if got != mig_counts:
                raise fail(
                    ValueError,
                    base,
                    f"MIG instances {dict(sorted(got.items()))} differ from the node's "
                    f"advertised MIG devices {dict(sorted(mig_counts.items()))}",
                )
    return NodeGpus(name, model, full_memory, strategy, tuple(devices))


# ---------------------------------------------------------------------------------------------------------
# CSR export
# ---------------------------------------------------------------------------------------------------------


def to_csr(nodes: Sequence[NodeGpus] | Iterable[NodeGpus]) -> dict[str, np.ndarray]:
    """Flatten inventories into CSR arrays (node i's GPUs are ``dev_offsets[i]:dev_offsets[i+1]``).

    Keys: ``dev_offsets`` int64[N+1]; per device ``dev_memory_mib`` int64, ``dev_model_id`` int32 (index into
    ``model_names``; -1 for an unknown model), ``dev_numa`` int32, ``dev_nvlink`` int32 (-1 unknown; domains are
    node-local ids), ``dev_mig_mode`` uint8, ``dev_mig_offsets`` int64[D+1]; per MIG instance
    ``mig_profile_id`` int32 (into ``mig_profile_names``) and ``mig_start`` int32. Name tables are interned in
    order of first appearance, so the same input always gives the same ids.
    """
    nodes = list(nodes)
    for i, n in enumerate(nodes):
        if not isinstance(n, NodeGpus):
            raise TypeError(f"nodes[{i}]: expected NodeGpus, got {type(n).__name__}")
    models: dict[str, int] = {}
    profiles: dict[str, int] = {}
    offsets = [0]
    mem, model_id, numa, nvlink, mig_mode, mig_offsets, prof_id, start = [], [], [], [], [], [0], [], []
    for n in nodes:
        for g in n.devices:
            mem.append(g.memory_mib)
            model_id.append(models.setdefault(g.model, len(models)) if g.model else -1)
            numa.append(g.numa)
            nvlink.append(g.nvlink_domain)
            mig_mode.append(1 if g.mig_mode else 0)
            for inst in g.mig_instances:
                prof_id.append(profiles.setdefault(inst.profile, len(profiles)))
                start.append(inst.start)
            mig_offsets.append(len(prof_id))
        offsets.append(len(mem))
    return {
        "dev_offsets": np.asarray(offsets, dtype=np.int64),
        "dev_memory_mib": np.asarray(mem, dtype=np.int64),
        "dev_model_id": np.asarray(model_id, dtype=np.int32),
        "dev_numa": np.asarray(numa, dtype=np.int32),
        "dev_nvlink": np.asarray(nvlink, dtype=np.int32),
        "dev_mig_mode": np.asarray(mig_mode, dtype=np.uint8),
        "dev_mig_offsets": np.asarray(mig_offsets, dtype=np.int64),
        "mig_profile_id": np.asarray(prof_id, dtype=np.int32),
        "mig_start": np.asarray(start, dtype=np.int32),
        "model_names": np.asarray(list(models), dtype=np.str_),
        "mig_profile_names": np.asarray(list(profiles), dtype=np.str_),
    }
