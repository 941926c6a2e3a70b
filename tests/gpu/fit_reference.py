"""Pure-Python reference of the device-level GPU fit check of one node, for the property tests of the native fit.

``fit(node_gpus, used_state, request)`` answers whether a pod's :class:`~vcore.gpu.requests.GpuRequest` fits
the GPUs of one node given what is already in use, and if so which GPUs (and MIG start slots) it would take.
It is the specification the native kernel is checked against, so it favours plain loops over speed.

Rules:

- Whole GPUs and shared slices only go to GPUs without MIG mode; MIG instances only to MIG-enabled GPUs
  (a MIG-mode GPU is not offered as ``nvidia.com/gpu`` by the device plugin).
- Exclusive and shared use never mix on one GPU: an ``n``-GPU pod needs ``n`` wholly free GPUs (no used milli,
  no used memory, no shared pod, not exclusive: a slice of nothing still holds its GPU); a shared slice never
  lands on a GPU held exclusively.
- A shared slice needs, on each of its ``count`` distinct GPUs, ``milli`` free compute share (out of 1000)
  and its device memory free.
- Among the GPU sets that fit, the choice prefers a set inside one NVLink domain, then inside one NUMA node,
  then the lowest indices (compared as sorted tuples). A set of one GPU counts as inside one domain; unknown
  domains (-1) never do. A single slice therefore goes to the lowest-index GPU that fits: node-level policies
  (binpack, spread, FGD) decide on top of this check, the reference only needs a deterministic answer.
- A MIG request needs, for each instance, a MIG-enabled GPU of an allowed model whose geometry has the
  profile and a free place for it: with a configured layout (``Gpu.mig_instances``, e.g. from GFD) a
  configured instance of that profile nobody uses; without one (dynamic MIG) a start where
  :func:`vcore.gpu.mig.can_place` succeeds beside the instances in use. Instances go to the lowest GPU index,
  then the lowest start. One profile's placements never overlap each other on these GPUs, so this greedy
  choice finds room whenever any assignment would.
- Model constraints (``GpuRequest.allows``) apply to every kind.

``used_state`` is one :class:`GpuUse` per device (or None for an idle node); it is validated and a bad one
raises ValueError/TypeError naming ``used_state[i]`` and the node.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vcore.gpu import mig as _mig
from vcore.gpu.devices import Gpu, NodeGpus
from vcore.gpu.mig import MigInstance
from vcore.gpu.requests import MILLI, GpuRequest
from vcore.types import GpuChoice

__all__ = ["GpuUse", "fit", "free_state", "is_wholly_free"]


@dataclass(frozen=True)
class GpuUse:
    """What is in use on one GPU.

    ``milli``: compute share held by shared pods (0..1000); ``memory_mib``: device memory they hold;
    ``exclusive``: a whole-GPU pod holds the GPU (then milli/memory are not consulted);
    ``mig_instances``: MIG instances in use (MIG-mode GPUs only); ``shared_pods``: how many shared pods hold it.
    """

    milli: int = 0
    memory_mib: int = 0
    exclusive: bool = False
    mig_instances: tuple[MigInstance, ...] = ()
    shared_pods: int = 0


def free_state(node: NodeGpus) -> tuple[GpuUse, ...]:
    """A used state with nothing in use."""
    return tuple(GpuUse() for _ in node.devices)


def is_wholly_free(use: GpuUse) -> bool:
    return (
        use.milli == 0 and use.memory_mib == 0 and not use.exclusive and not use.mig_instances and use.shared_pods == 0
    )


def _validate(node: NodeGpus, used: Sequence[GpuUse] | None, request: GpuRequest) -> tuple[GpuUse, ...]:
    if not isinstance(node, NodeGpus):
        raise TypeError(f"node_gpus: expected NodeGpus, got {type(node).__name__}")
    if not isinstance(request, GpuRequest):
        raise TypeError(f"request: expected GpuRequest, got {type(request).__name__}")
    if type(request.count) is not int or request.count < 0:
        raise ValueError(f"request.count: must be a non-negative integer, got {request.count!r}")
    if used is None:
        return free_state(node)
    used = tuple(used)
    ctx = f"node {node.name}"
    if len(used) != len(node.devices):
        raise ValueError(f"{ctx}: used_state: {len(used)} entries for {len(node.devices)} GPUs")
    for i, (g, u) in enumerate(zip(node.devices, used)):
        where = f"{ctx}: used_state[{i}]"
        if not isinstance(u, GpuUse):
            raise TypeError(f"{where}: expected GpuUse, got {type(u).__name__}")
        for field in ("milli", "memory_mib"):
            v = getattr(u, field)
            if type(v) is not int or v < 0:
                raise ValueError(f"{where}.{field}: must be a non-negative integer, got {v!r}")
        if u.milli > MILLI:
            raise ValueError(f"{where}.milli: must be <= {MILLI}, got {u.milli}")
        if u.memory_mib > g.memory_mib:
            raise ValueError(f"{where}.memory_mib: {u.memory_mib} exceeds the GPU's {g.memory_mib} MiB")
        if g.mig_mode:
            if u.exclusive or u.milli or u.memory_mib:
                raise ValueError(f"{where}: GPU {g.index} is in MIG mode; only mig_instances can be in use")
            geometry = g.mig_geometry
            if geometry is None:
                raise ValueError(f"{where}: GPU {g.index} ({g.model!r}) is in MIG mode but has no MIG geometry")
            try:
                _mig.validate_layout(geometry, u.mig_instances)
            except ValueError as e:
                raise ValueError(f"{where}.mig_instances: {e}") from None
            if g.mig_instances:
                missing = [x for x in u.mig_instances if x not in g.mig_instances]
                if missing:
                    raise ValueError(
                        f"{where}.mig_instances: {missing[0].profile} at {missing[0].start} is not "
                        f"one of GPU {g.index}'s configured MIG instances"
                    )
        elif u.mig_instances:
            raise ValueError(f"{where}.mig_instances: GPU {g.index} is not in MIG mode")
    return used


def _one(values: list[int]) -> bool:
    """A set lies in one domain: a single GPU always does; otherwise all known (!= -1) and equal."""
    return len(values) <= 1 or (values[0] != -1 and all(v == values[0] for v in values))


def set_key(gpus: Sequence[Gpu]) -> tuple[bool, bool, tuple[int, ...]]:
    """The preference key of a GPU set (smaller is better): NVLink domain, NUMA node, lowest indices."""
    return (
        not _one([g.nvlink_domain for g in gpus]),
        not _one([g.numa for g in gpus]),
        tuple(sorted(g.index for g in gpus)),
    )


def pick(candidates: list[Gpu], n: int) -> tuple[int, ...] | None:
    """The preferred ``n``-subset of ``candidates`` (ascending by index) under :func:`set_key`.

    Not a search over all subsets: the best set of each key class is the first ``n`` candidates of one group
    (one NVLink domain and NUMA node; one domain; one NUMA node; everything), so comparing those few is exact.
    """
    if len(candidates) < n:
        return None
    if n == 0:
        return ()
    groups: dict[tuple, list[Gpu]] = {("all",): candidates}
    for g in candidates:
        if g.nvlink_domain != -1 and g.numa != -1:
            groups.setdefault(("both", g.nvlink_domain, g.numa), []).append(g)
        if g.nvlink_domain != -1:
            groups.setdefault(("nvlink", g.nvlink_domain), []).append(g)
        if g.numa != -1:
            groups.setdefault(("numa", g.numa), []).append(g)
    best = min(set_key(members[:n]) for members in groups.values() if len(members) >= n)
    return best[2]


def fit(node_gpus: NodeGpus, used_state: Sequence[GpuUse] | None, request: GpuRequest) -> GpuChoice | None:
    """Where ``request`` fits on this node's GPUs, or None when it does not (see the module rules)."""
    used = _validate(node_gpus, used_state, request)
    if request.kind == "none" or request.count == 0:
        return GpuChoice(())
    devices = node_gpus.devices

    if request.kind == "whole":
        cands = [g for g, u in zip(devices, used) if not g.mig_mode and request.allows(g.model) and is_wholly_free(u)]
        picked = pick(cands, request.count)
        return None if picked is None else GpuChoice(picked)

    if request.kind == "shared":
        cands = []
        for g, u in zip(devices, used):
            if g.mig_mode or u.exclusive or not request.allows(g.model):
                continue
            if (
                request.milli_on(g.memory_mib) <= MILLI - u.milli
                and request.memory_on(g.memory_mib) <= g.memory_mib - u.memory_mib
            ):
                cands.append(g)
        picked = pick(cands, request.count)
        return None if picked is None else GpuChoice(picked)

    if request.kind == "mig":
        prof = request.mig_profile
        if not isinstance(prof, str) or prof not in _mig.all_profile_names():
            raise ValueError(f"request.mig_profile: unknown MIG profile {prof!r}")
        indices: list[int] = []
        starts: list[int] = []
        for g, u in zip(devices, used):
            if len(indices) == request.count:
                break
            if not g.mig_mode or not request.allows(g.model):
                continue
            geometry = g.mig_geometry
            if geometry is None or prof not in _mig.profiles_for(geometry):
                continue
            if g.mig_instances:
                # Static layout: the instance must exist already and be unused.
                free = sorted(
                    (x for x in g.mig_instances if x.profile == prof and x not in u.mig_instances),
                    key=lambda x: x.start,
                )
                for x in free[: request.count - len(indices)]:
                    indices.append(g.index)
                    starts.append(x.start)
            else:
                taken = list(u.mig_instances)
                while len(indices) < request.count:
                    s = _mig.can_place(geometry, taken, prof)
                    if s is None:
                        break
                    taken.append(MigInstance(prof, s))
                    indices.append(g.index)
                    starts.append(s)
        if len(indices) < request.count:
            return None
        return GpuChoice(tuple(indices), tuple(starts))

    raise ValueError(f"request.kind: must be one of none, whole, shared, mig, got {request.kind!r}")
