"""NUMA alignment of a pod's GPUs and CPUs (Kubernetes Topology Manager policies, as Volcano's numa-aware plugin
reads them): the node's NUMA model and the pod's policy, in the native specs' terms.

The model, and why it is the minimal honest one:

- A node describes its NUMA nodes by their allocatable CPUs, in the annotation ``vcore.io/numa-topology``::

      {"numa": [{"id": 0, "cpu": "32"}, {"id": 1, "cpu": "32"}]}

  (``cpu`` a Kubernetes quantity). Volcano's resource exporter publishes the same facts as a ``Numatopology``
  object (``nodeinfo.volcano.sh/v1alpha1``: ``spec.numares.cpu.allocatable`` a cpuset, ``spec.cpuDetail`` the
  NUMA node of each CPU): :func:`numa_annotation_from_numatopology` turns one into the other. A GPU's NUMA node
  comes from ``vcore.io/gpu-topology`` (see :mod:`vcore.gpu.devices`).
- A pod asks for alignment with ``volcano.sh/numa-topology-policy``: ``none``, ``best-effort``, ``restricted``
  or ``single-numa-node``. Its CPUs are pinned (held on particular NUMA nodes) when it has a policy and asks for
  whole CPUs: the kubelet's static CPU manager gives exclusive CPUs only to such (Guaranteed, integer) pods; every
  other pod's CPUs come from the shared pool, which the node-level cpu fit already accounts. So per NUMA node only
  pinned CPUs are tracked, and the node-level NodeResourcesFit keeps the shared pool honest.
- The policies, checked by GPUDeviceFit on each node: ``single-numa-node`` puts the GPUs and pinned CPUs on one
  NUMA node (else the node is filtered); ``restricted`` on the fewest NUMA nodes that could ever hold the request
  on that node (the kubelet's "preferred" hint), else filtered; ``best-effort`` on as few as fit now, anywhere when
  none do (never filtered); ``none`` keeps the plain device preference (one NVLink domain, then one NUMA node).
  Within the chosen NUMA nodes, the GPUs of a pod prefer one NVLink domain. A GPU of unknown NUMA node is not local
  to any; a node that describes no NUMA node is one NUMA node (the kubelet aligns nothing there).
- Not modelled: memory and hugepages per NUMA node (the memory manager), devices other than GPUs, CPU pinning of
  pods bound with explicit GPU indices (their CPUs count in the shared pool).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from vcore._native._convert import parse_quantity

__all__ = [
    "NODE_ANNOTATION",
    "POLICIES",
    "POLICY_ANNOTATION",
    "node_numa_cpu",
    "numa_annotation_from_numatopology",
    "pod_numa",
]

NODE_ANNOTATION = "vcore.io/numa-topology"
POLICY_ANNOTATION = "volcano.sh/numa-topology-policy"
#: Native ids of the Topology Manager policies.
POLICIES = {"none": 0, "best-effort": 1, "restricted": 2, "single-numa-node": 3}


def _meta(obj: Any) -> Any:
    return obj.get("metadata") if isinstance(obj, Mapping) else getattr(obj, "metadata", None)


def _annotations(obj: Any) -> Mapping[str, Any]:
    meta = _meta(obj)
    ann = meta.get("annotations") if isinstance(meta, Mapping) else getattr(meta, "annotations", None)
    return ann or {}


def _name(obj: Any) -> str:
    meta = _meta(obj)
    name = meta.get("name") if isinstance(meta, Mapping) else getattr(meta, "name", None)
    return name or "?"


def node_numa_cpu(node: Any) -> list[tuple[int, int]] | None:
    """[(NUMA id, allocatable cpu millicores)] from a Node's ``vcore.io/numa-topology`` annotation; None without."""
    raw = _annotations(node).get(NODE_ANNOTATION)
    if raw is None:
        return None
    where = f"node {_name(node)}: metadata.annotations[{NODE_ANNOTATION}]"
    try:
        doc = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError as e:
        raise ValueError(f"{where}: not valid JSON ({e.msg})") from None
    entries = doc.get("numa") if isinstance(doc, Mapping) else None
    if not isinstance(entries, list):
        raise ValueError(f'{where}: expected {{"numa": [{{"id": 0, "cpu": "32"}}, ...]}}')
    out = []
    for i, entry in enumerate(entries):
        at = f"{where}.numa[{i}]"
        if not isinstance(entry, Mapping) or set(entry) - {"id", "cpu"}:
            raise ValueError(f"{at}: expected the keys id and cpu")
        nid = entry.get("id")
        if isinstance(nid, bool) or not isinstance(nid, int) or nid < 0:
            raise ValueError(f"{at}.id: expected an integer >= 0, got {nid!r}")
        try:
            milli = parse_quantity(str(entry.get("cpu")), milli=True)
        except (TypeError, ValueError):
            raise ValueError(f"{at}.cpu: expected a cpu quantity, got {entry.get('cpu')!r}") from None
        out.append((nid, int(milli)))
    return out


def pod_numa(pod: Any, requests: Mapping[str, int] | None) -> tuple[int, int] | None:
    """(native policy id, pinned cpu millicores) of a pod with ``volcano.sh/numa-topology-policy``; None without
    (or with ``none``). ``requests`` are the pod's effective requests (cpu in millicores)."""
    raw = _annotations(pod).get(POLICY_ANNOTATION)
    if raw is None:
        return None
    policy = POLICIES.get(raw) if isinstance(raw, str) else None
    if policy is None:
        raise ValueError(
            f"pod {_name(pod)}: metadata.annotations[{POLICY_ANNOTATION}]: expected one of "
            f"{', '.join(POLICIES)}, got {raw!r}"
        )
    if policy == 0:
        return None
    cpu = int((requests or {}).get("cpu", 0))
    return policy, cpu if cpu > 0 and cpu % 1000 == 0 else 0


def _cpuset(text: str, where: str) -> list[int]:
    out: list[int] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        lo, _, hi = part.partition("-")
        try:
            a, b = int(lo), int(hi or lo)
        except ValueError:
            raise ValueError(f"{where}: {text!r} is not a cpuset (e.g. 0-3,8)") from None
        out.extend(range(a, b + 1))
    return out


def numa_annotation_from_numatopology(numatopo: Any) -> str:
    """The ``vcore.io/numa-topology`` annotation value equivalent to a Volcano ``Numatopology`` object: the
    allocatable CPUs of ``spec.numares.cpu.allocatable`` counted per NUMA node of ``spec.cpuDetail``."""
    obj = numatopo if isinstance(numatopo, Mapping) else numatopo.to_dict()
    where = f"Numatopology {_name(obj)}"
    spec = obj.get("spec") or {}
    allocatable = ((spec.get("numares") or {}).get("cpu") or {}).get("allocatable")
    detail = spec.get("cpuDetail") or {}
    if not isinstance(allocatable, str) or not isinstance(detail, Mapping):
        raise ValueError(f"{where}: needs spec.numares.cpu.allocatable (a cpuset) and spec.cpuDetail")
    per: dict[int, int] = {}
    for cpu in _cpuset(allocatable, f"{where}: spec.numares.cpu.allocatable"):
        info = detail.get(str(cpu))
        if not isinstance(info, Mapping):
            raise ValueError(f"{where}: spec.cpuDetail has no entry for cpu {cpu}")
        numa = int(info.get("numa", 0))
        per[numa] = per.get(numa, 0) + 1
    return json.dumps({"numa": [{"id": n, "cpu": str(c)} for n, c in sorted(per.items())]})
