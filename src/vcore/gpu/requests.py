"""A pod's GPU request, read from the conventions Kubernetes GPU schedulers use. Exactly one kind per pod.

Kinds (``GpuRequest.kind``):

- ``"whole"``: ``nvidia.com/gpu: n`` in container requests/limits (NVIDIA device plugin), or KAI's
  ``gpu-fraction: "1"`` (one whole GPU per device; ``gpu-fraction-num-devices`` sets how many).
- ``"shared"``: a slice of ``count`` distinct GPUs (usually 1), each needing ``milli`` of compute and some
  device memory, on GPUs no pod holds exclusively. Sources:

  * Volcano: ``volcano.sh/gpu-memory`` (GPU-share, MiB) or the vGPU resources ``volcano.sh/vgpu-memory``
    (MiB per vGPU), ``volcano.sh/vgpu-number`` (vGPUs, each on a different GPU; 1 when only memory/cores are
    given) and ``volcano.sh/vgpu-cores`` (percent of one GPU's compute, 0-100; 0 or absent means no compute
    share is reserved). A vGPU request without memory takes the whole device memory, as HAMi does.
  * KAI Scheduler annotations: ``gpu-fraction`` (0 < f < 1 of a GPU, compute share and that share of the
    device memory) or ``gpu-memory`` (MiB; the compute share is memory / device memory, decided per GPU),
    with ``gpu-fraction-num-devices`` (n devices of that slice).
- ``"mig"``: ``count`` instances of one MIG profile (``nvidia.com/mig-3g.40gb: 1``), the mixed-strategy
  resources of NVIDIA's device plugin.
- ``"none"``: no GPU.

GPU model constraints travel with any kind: ``vcore.io/gpu-models: "A100,H100"`` (a model matches a product
label when every ``-``-separated token of it appears in the product, so ``A100`` matches
``NVIDIA-A100-SXM4-80GB`` and ``A100-80GB`` matches it too), and required node affinity / nodeSelector on
``nvidia.com/gpu.product`` (exact label values, In/NotIn/Exists/DoesNotExist per term, terms ORed, as
Kubernetes evaluates them). The node-level filter already enforces affinity; repeating it per GPU matters on
nodes whose GPUs differ (``vcore.io/gpu-topology`` model overrides).

Container quantities follow Kubernetes: an extended resource's request equals its limit (a limit alone
implies the request), values are whole numbers, app containers add up and an init container counts when it
asks for more than all app containers together. Fields are checked with :mod:`vcore.validation`: every error is a
TypeError (a value of the wrong JSON type) or a ValueError (a bad value) in the form
``pod <namespace>/<name>: <field>: <problem>``; mixing kinds is an error, never a guess.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from vcore._native._convert import api_dict, parse_quantity
from vcore.gpu import mig as _mig
from vcore.validation import ListOf, String, fail, optional_list, optional_mapping

__all__ = [
    "GPU_RESOURCE",
    "MIG_RESOURCE_PREFIX",
    "VOLCANO_GPU_MEMORY",
    "VOLCANO_VGPU_MEMORY",
    "VOLCANO_VGPU_NUMBER",
    "VOLCANO_VGPU_CORES",
    "KAI_GPU_FRACTION",
    "KAI_GPU_MEMORY",
    "KAI_NUM_DEVICES",
    "MODELS_ANNOTATION",
    "PRODUCT_LABEL",
    "ProductTerm",
    "GpuRequest",
    "model_matches",
    "pod_gpu_request",
]

MILLI = 1000
GPU_RESOURCE = "nvidia.com/gpu"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
VOLCANO_GPU_MEMORY = "volcano.sh/gpu-memory"
VOLCANO_VGPU_MEMORY = "volcano.sh/vgpu-memory"
VOLCANO_VGPU_NUMBER = "volcano.sh/vgpu-number"
VOLCANO_VGPU_CORES = "volcano.sh/vgpu-cores"
KAI_GPU_FRACTION = "gpu-fraction"
KAI_GPU_MEMORY = "gpu-memory"
KAI_NUM_DEVICES = "gpu-fraction-num-devices"
MODELS_ANNOTATION = "vcore.io/gpu-models"
PRODUCT_LABEL = "nvidia.com/gpu.product"

_VOLCANO = (VOLCANO_GPU_MEMORY, VOLCANO_VGPU_MEMORY, VOLCANO_VGPU_NUMBER, VOLCANO_VGPU_CORES)

Kind = Literal["none", "whole", "shared", "mig"]


def _tokens(s: str) -> set[str]:
    return {t for t in s.upper().split("-") if t}


def model_matches(allowed: str, product: str) -> bool:
    """Whether an allowed model name (``A100``, ``A100-80GB``, a full product) matches a GPU product label."""
    a = _tokens(allowed)
    return bool(a) and a <= _tokens(product)


@dataclass(frozen=True)
class ProductTerm:
    """The ``nvidia.com/gpu.product`` part of one required node-selector term (terms are ORed).

    ``allowed`` None = any product (no In on the key); ``excluded`` = NotIn values; ``never`` = the term can
    match no GPU node (DoesNotExist, or In sets with an empty intersection).
    """

    allowed: tuple[str, ...] | None = None
    excluded: tuple[str, ...] = ()
    never: bool = False

    def allows(self, product: str) -> bool:
        if self.never:
            return False
        if self.allowed is not None and product not in self.allowed:
            return False
        return product not in self.excluded


@dataclass(frozen=True)
class GpuRequest:
    """What a pod asks of a node's GPUs. See the module docstring for the sources of each field.

    For ``shared``: ``milli`` is compute per GPU (0..1000; None = ``ceil(memory_mib * 1000 / device MiB)``,
    decided per GPU, KAI ``gpu-memory``); device memory per GPU is ``memory_mib`` (absolute) or
    ``memory_milli`` (share of the device; exactly one of the two is set).
    """

    kind: Kind
    count: int = 0  # GPUs (whole, shared) or MIG instances
    milli: int | None = None
    memory_mib: int | None = None
    memory_milli: int | None = None
    mig_profile: str | None = None
    models: tuple[str, ...] | None = None  # vcore.io/gpu-models; None = any
    product_terms: tuple[ProductTerm, ...] = ()  # ORed; () = no affinity on the product
    source: str = ""  # the convention the request came from, for messages

    def allows(self, product: str) -> bool:
        """Whether a GPU whose product label is ``product`` satisfies the pod's model constraints."""
        if self.models is not None and not any(model_matches(m, product) for m in self.models):
            return False
        if self.product_terms and not any(t.allows(product) for t in self.product_terms):
            return False
        return True

    def milli_on(self, device_memory_mib: int) -> int:
        """Compute share (milli) this request takes on one GPU of the given memory."""
        if self.milli is not None:
            return self.milli
        if device_memory_mib <= 0:
            return MILLI + 1  # no known memory: a memory-sized slice cannot be sized, so it never fits
        return -(-(self.memory_mib or 0) * MILLI // device_memory_mib)

    def memory_on(self, device_memory_mib: int) -> int:
        """Device memory (MiB) this request takes on one GPU of the given memory."""
        if self.memory_mib is not None:
            return self.memory_mib
        return -(-(self.memory_milli or 0) * device_memory_mib // MILLI)


# ---------------------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------------------

# A wrong JSON type is a TypeError, a bad value a ValueError; both name the pod and the field.
_STRING = String()
_STRINGS = ListOf(_STRING)
_OPERATOR = String(choices=("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"))


def _is_gpu_resource(key: str) -> bool:
    return key == GPU_RESOURCE or key.startswith(MIG_RESOURCE_PREFIX) or key in _VOLCANO


def _container_gpu(c: Mapping[str, Any], ctx: str, path: str, fields: dict[str, str]) -> dict[str, int]:
    """GPU-related extended resources of one container (request == limit, whole numbers).

    ``fields`` collects, per resource, the first field that named it (where a later error should point).
    """
    res = optional_mapping(c.get("resources"), f"{ctx}: {path}.resources", TypeError)
    requests = optional_mapping(res.get("requests"), f"{ctx}: {path}.resources.requests", TypeError)
    limits = optional_mapping(res.get("limits"), f"{ctx}: {path}.resources.limits", TypeError)
    out: dict[str, int] = {}
    for key in {**limits, **requests}:
        if not _is_gpu_resource(key):
            continue
        values = {}
        for where, rl in (("requests", requests), ("limits", limits)):
            if key in rl:
                field = f"{path}.resources.{where}[{key}]"
                milli = parse_quantity(rl[key], milli=True, obj=ctx, field=field)
                if milli % MILLI:
                    raise fail(ValueError, f"{ctx}: {field}", f"must be a whole number, got {rl[key]!r}")
                values[where] = (milli // MILLI, field)
        if "requests" in values and "limits" in values and values["requests"][0] != values["limits"][0]:
            raise fail(
                ValueError,
                f"{ctx}: {values['requests'][1]}",
                f"must equal the limit for an extended resource ({values['requests'][0]} != {values['limits'][0]})",
            )
        # Kubernetes defaults a missing request to the limit; a request alone is rejected by the API server,
        # but a pod dict from a test or a trace may carry one: read it as is.
        value, field = values.get("requests") or values["limits"]
        out[key] = value
        fields.setdefault(key, field)
    return out


def _effective(containers: list[dict[str, int]], inits: list[dict[str, int]]) -> dict[str, int]:
    """Kubernetes' pod request: sum of app containers, raised to any single init container's ask."""
    total: dict[str, int] = {}
    for c in containers:
        for k, v in c.items():
            total[k] = total.get(k, 0) + v
    for c in inits:
        for k, v in c.items():
            total[k] = max(total.get(k, 0), v)
    return {k: v for k, v in total.items() if v > 0}


def _annotation_str(annotations: Mapping[str, Any], key: str, ctx: str) -> str | None:
    v = annotations.get(key)
    if v is None:
        return None
    return _STRING(v, f"{ctx}: metadata.annotations[{key}]", TypeError).strip()


def _annotation_positive_int(annotations: Mapping[str, Any], key: str, ctx: str, what: str) -> int | None:
    v = _annotation_str(annotations, key, ctx)
    if v is None:
        return None
    at = f"{ctx}: metadata.annotations[{key}]"
    try:
        n = int(v, 10)
    except ValueError:
        raise fail(ValueError, at, f"expected an integer ({what}), got {v!r}") from None
    if n <= 0:
        raise fail(ValueError, at, f"must be positive ({what}), got {n}")
    return n


def _fraction_milli(annotations: Mapping[str, Any], ctx: str) -> int | None:
    v = _annotation_str(annotations, KAI_GPU_FRACTION, ctx)
    if v is None:
        return None
    at = f"{ctx}: metadata.annotations[{KAI_GPU_FRACTION}]"
    try:
        # Decimal, not float: 0.1 * 1000 is 100.00000000000001 in binary and would round up to 101.
        f = Decimal(v)
    except InvalidOperation:
        raise fail(ValueError, at, f"expected a number in (0, 1], got {v!r}") from None
    if not f.is_finite() or f <= 0 or f > 1:
        raise fail(ValueError, at, f"must be in (0, 1], got {v}")
    # Rounded up to a whole milli so the pod never gets less than it asked for (0.0001 -> 1 milli).
    return int(math.ceil(f * MILLI))


def _models(annotations: Mapping[str, Any], ctx: str) -> tuple[str, ...] | None:
    v = _annotation_str(annotations, MODELS_ANNOTATION, ctx)
    if v is None:
        return None
    names = tuple(s.strip() for s in v.split(","))
    if not v or any(not n for n in names):
        raise fail(
            ValueError,
            f"{ctx}: metadata.annotations[{MODELS_ANNOTATION}]",
            f'expected a comma-separated list of GPU models such as "A100,H100", got {v!r}',
        )
    return names


def _product_terms(spec: Mapping[str, Any], ctx: str) -> tuple[ProductTerm, ...]:
    """The product constraint of nodeSelector AND required node affinity (terms ORed)."""
    selector = optional_mapping(spec.get("nodeSelector"), f"{ctx}: spec.nodeSelector", TypeError)
    pinned = selector.get(PRODUCT_LABEL)
    if pinned is not None:
        pinned = _STRING(pinned, f"{ctx}: spec.nodeSelector[{PRODUCT_LABEL}]", TypeError)
    affinity = optional_mapping(spec.get("affinity"), f"{ctx}: spec.affinity", TypeError)
    node_aff = optional_mapping(affinity.get("nodeAffinity"), f"{ctx}: spec.affinity.nodeAffinity", TypeError)
    base = f"{ctx}: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    required = optional_mapping(node_aff.get("requiredDuringSchedulingIgnoredDuringExecution"), base, TypeError)
    terms_raw = optional_list(required.get("nodeSelectorTerms"), f"{base}.nodeSelectorTerms", TypeError)
    terms: list[ProductTerm] = []
    for i, term in enumerate(terms_raw):
        tpath = f"{base}.nodeSelectorTerms[{i}]"
        term = optional_mapping(term, tpath, TypeError)
        allowed: set[str] | None = None
        excluded: set[str] = set()
        never = False
        for j, expr in enumerate(optional_list(term.get("matchExpressions"), f"{tpath}.matchExpressions", TypeError)):
            epath = f"{tpath}.matchExpressions[{j}]"
            expr = optional_mapping(expr, epath, TypeError)
            if expr.get("key") != PRODUCT_LABEL:
                continue
            op = _OPERATOR(expr.get("operator"), f"{epath}.operator", ValueError)
            values = expr.get("values")
            values = () if values is None else _STRINGS(values, f"{epath}.values", TypeError)
            if op == "In":
                allowed = set(values) if allowed is None else allowed & set(values)
            elif op == "NotIn":
                excluded |= set(values)
            elif op == "Exists":
                pass
            else:
                # DoesNotExist, Gt, Lt: no GPU node lacks the label, and a product name never parses as the
                # integer Gt/Lt need.
                never = True
        if allowed is not None and not allowed:
            never = True
        if allowed is None and not excluded and not never:
            # This term says nothing about the product, so (terms being ORed) the affinity allows any GPU,
            # unless a nodeSelector pins it.
            terms = []
            break
        terms.append(ProductTerm(None if allowed is None else tuple(sorted(allowed)), tuple(sorted(excluded)), never))
    if pinned is not None:
        # nodeSelector is ANDed with every term.
        if not terms:
            return (ProductTerm((pinned,)),)
        return tuple(
            ProductTerm((pinned,), t.excluded, t.never or (t.allowed is not None and pinned not in t.allowed))
            for t in terms
        )
    return tuple(terms)


def pod_gpu_request(pod: Mapping[str, Any] | Any) -> GpuRequest:
    """The GPU request of a v1 Pod (an API-shaped dict or a kubernetes.client.V1Pod).

    Raises ValueError (bad value, unknown MIG profile, several kinds at once) or TypeError (wrong JSON type),
    naming the pod and the field.
    """
    pod = api_dict(pod, "pod")
    meta = optional_mapping(pod.get("metadata"), "pod <unnamed>: metadata", TypeError)
    ns = meta.get("namespace") or "default"
    name = meta.get("name") or "<unnamed>"
    ctx = f"pod {ns}/{name}"
    annotations = optional_mapping(meta.get("annotations"), f"{ctx}: metadata.annotations", TypeError)
    spec = optional_mapping(pod.get("spec"), f"{ctx}: spec", TypeError)

    per_container = []
    fields: dict[str, str] = {}
    for group in ("containers", "initContainers"):
        out = []
        for i, c in enumerate(optional_list(spec.get(group), f"{ctx}: spec.{group}", TypeError)):
            path = f"spec.{group}[{i}]"
            out.append(_container_gpu(optional_mapping(c, f"{ctx}: {path}", TypeError), ctx, path, fields))
        per_container.append(out)
    containers, inits = per_container
    res = _effective(containers, inits)

    models = _models(annotations, ctx)
    terms = _product_terms(spec, ctx)

    def where(key: str) -> str:
        """The field that named a resource, with the pod: where an error about it points."""
        return f"{ctx}: {fields.get(key, f'spec.containers[*].resources[{key}]')}"

    # Which conventions does the pod use? More than one is ambiguous: refuse instead of guessing.
    mig_keys = sorted(k for k in res if k.startswith(MIG_RESOURCE_PREFIX))
    volcano_keys = [k for k in _VOLCANO if k in res]
    kai_keys = [k for k in (KAI_GPU_FRACTION, KAI_GPU_MEMORY, KAI_NUM_DEVICES) if k in annotations]
    used = []
    if GPU_RESOURCE in res:
        used.append(f"whole GPUs ({GPU_RESOURCE})")
    if mig_keys:
        used.append(f"MIG ({', '.join(mig_keys)})")
    if volcano_keys:
        used.append(f"Volcano GPU sharing ({', '.join(volcano_keys)})")
    if kai_keys:
        used.append(f"KAI GPU sharing (annotations {', '.join(kai_keys)})")
    if len(used) > 1:
        raise fail(ValueError, f"{ctx}: spec", f"a pod asks for GPUs in exactly one way, got {' and '.join(used)}")

    request = functools.partial(GpuRequest, models=models, product_terms=terms)
    if GPU_RESOURCE in res:
        return request("whole", count=res[GPU_RESOURCE], source=GPU_RESOURCE)

    if mig_keys:
        known = _mig.all_profile_names()
        for k in mig_keys:
            prof = k[len(MIG_RESOURCE_PREFIX) :]
            if prof not in known:
                raise fail(ValueError, where(k), f"unknown MIG profile {prof!r} (known: {', '.join(sorted(known))})")
        if len(mig_keys) > 1:
            # A GPU instance of each profile would be a separate allocation, possibly on different GPUs; one
            # profile per pod keeps the placement (and the gpu-index annotation) a single decision.
            raise fail(
                ValueError,
                f"{ctx}: spec.containers",
                f"more than one MIG profile ({', '.join(mig_keys)}); a pod may request one MIG profile",
            )
        k = mig_keys[0]
        return request("mig", count=res[k], mig_profile=k[len(MIG_RESOURCE_PREFIX) :], source=k)

    if volcano_keys:
        users = [i for i, c in enumerate(containers) if any(k in c for k in _VOLCANO)]
        users += [i for i, c in enumerate(inits) if any(k in c for k in _VOLCANO)]
        if len(users) > 1:
            # vgpu-memory/-cores are per vGPU, not additive across containers: summing them would be wrong.
            raise fail(
                ValueError,
                f"{ctx}: spec.containers",
                "Volcano GPU sharing resources in more than one "
                "container; vcore models one shared-GPU container per pod",
            )
        if VOLCANO_GPU_MEMORY in res and VOLCANO_VGPU_MEMORY in res:
            raise fail(
                ValueError, where(VOLCANO_VGPU_MEMORY), f"give {VOLCANO_GPU_MEMORY} or {VOLCANO_VGPU_MEMORY}, not both"
            )
        cores = res.get(VOLCANO_VGPU_CORES, 0)
        if cores > 100:
            raise fail(ValueError, where(VOLCANO_VGPU_CORES), f"must be a percentage 0-100, got {cores}")
        number = res.get(VOLCANO_VGPU_NUMBER, 1)
        memory = res.get(VOLCANO_GPU_MEMORY, res.get(VOLCANO_VGPU_MEMORY))
        return request(
            "shared",
            count=number,
            milli=cores * 10,
            memory_mib=memory,
            memory_milli=None if memory is not None else MILLI,
            source="volcano.sh",
        )

    if kai_keys:
        frac = _fraction_milli(annotations, ctx)
        mem = _annotation_str(annotations, KAI_GPU_MEMORY, ctx)
        devices = _annotation_positive_int(annotations, KAI_NUM_DEVICES, ctx, "GPU devices")
        if frac is not None and mem is not None:
            raise fail(
                ValueError,
                f"{ctx}: metadata.annotations[{KAI_GPU_MEMORY}]",
                f"give {KAI_GPU_FRACTION} or {KAI_GPU_MEMORY}, not both",
            )
        if frac is None and mem is None:
            raise fail(
                ValueError,
                f"{ctx}: metadata.annotations[{KAI_NUM_DEVICES}]",
                f"needs {KAI_GPU_FRACTION} or {KAI_GPU_MEMORY}",
            )
        n = devices or 1
        if mem is None:  # exactly one of the two is given
            if frac == MILLI:
                return request("whole", count=n, source=KAI_GPU_FRACTION)
            return request("shared", count=n, milli=frac, memory_milli=frac, source=KAI_GPU_FRACTION)
        at = f"{ctx}: metadata.annotations[{KAI_GPU_MEMORY}]"
        try:
            mib = int(mem, 10)
        except ValueError:
            raise fail(ValueError, at, f"expected an integer number of MiB, got {mem!r}") from None
        if mib <= 0:
            raise fail(ValueError, at, f"must be a positive number of MiB, got {mib}")
        return request("shared", count=n, milli=None, memory_mib=mib, source=KAI_GPU_MEMORY)

    return request("none")
