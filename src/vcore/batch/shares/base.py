"""The interface between the scheduling cycle and a queue-share plugin, modelled on Volcano's session functions.

A plugin is built once per configuration (``cls(arguments, hierarchy=...)``, arguments validated then) and opened
once per cycle with the queue tree, the resource axes, the cluster's total allocatable and each queue's usage
(:class:`QueueUsage`, int64 vectors over the axes). The cycle then asks it, through the hooks named after Volcano's
session functions:

* ``queue_order(left, right)`` (QueueOrderFn): negative when ``left`` goes first;
* ``overused(queue)`` (OverusedFn): the allocate action skips an overused queue;
* ``allocatable(queue, request)`` (AllocatableFn): may this task's request be placed for the queue; ``headroom``
  says the same as a vector, for the native placement to check every task of a gang;
* ``job_enqueueable(queue, min_resources)`` (JobEnqueueableFn): PERMIT, ABSTAIN or REJECT a Pending job;
  ``on_job_enqueued`` (JobEnqueuedFn) records an admitted job's minResources;
* ``preemptive(queue, request)`` (PreemptiveFn): may the queue reclaim resources from other queues for this request;
* ``reclaimable(reclaimer, candidates)`` (ReclaimableFn): which running tasks of other queues may be evicted for
  the reclaimer;
* ``victim_queue_order(left, right, preemptor)`` (VictimQueueOrderFn);
* ``on_allocate`` / ``on_deallocate`` (the AllocateFunc / DeallocateFunc event handlers), and ``status()``.

``hooks`` lists the functions a plugin registers, as a Volcano plugin registers its session functions; an
unregistered hook answers what Volcano's session answers when no plugin registered the function (not overused,
allocatable, ABSTAIN, preemptive, no victims, order 0).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from vcore.batch.amounts import MAX_AMOUNT, UNLIMITED, bounded
from vcore.batch.queue import QueueSpec, QueueTree
from vcore.errors import ProfileError, QueueNotFoundError
from vcore.validation import Number, fail, optional_mapping, unknown_key

PERMIT, ABSTAIN, REJECT = 1, 0, -1  # Volcano's util.Permit / util.Abstain / util.Reject votes


@dataclass(frozen=True)
class QueueUsage:
    """What a queue's jobs hold and ask for at session open; int64 vectors over the cluster's resource axes.

    allocated: pods running or bound (placed) in the queue; request: every pod of the queue's jobs, placed or
    pending; inqueue: minResources of the queue's Inqueue jobs (and of Running jobs, the part of minResources not
    yet allocated, as Volcano's GetInqueueResource); elastic: summed over jobs, allocated beyond minResources.
    """

    allocated: np.ndarray
    request: np.ndarray
    inqueue: np.ndarray
    elastic: np.ndarray


@dataclass(frozen=True)
class Claim:
    """A task (or a group of tasks evicted together) of a queue: the reclaimer, or a candidate victim."""

    queue: str
    request: np.ndarray
    priority: int = 0


@dataclass(frozen=True)
class QueueShare:
    """A queue's standing: allocated and deserved (int64 vectors) and share (max over resources of
    allocated/deserved; >= 1 means at or above what it deserves)."""

    allocated: np.ndarray
    deserved: np.ndarray
    share: float


ArgumentParser = Callable[[str, str, Any], Any]  # (plugin, key, the user's value) -> the parsed value


class Standing(Protocol):
    """What ``SharePlugin._status`` reads of a queue's session attributes."""

    allocated: np.ndarray
    deserved: np.ndarray
    share: float


A = TypeVar("A")  # a plugin's session attributes of one queue
S = TypeVar("S", bound=Standing)


class SharePlugin(Generic[A]):
    """Base of the queue-share plugins: argument validation, session open, input checks and neutral hooks."""

    name: ClassVar[str]
    hooks: frozenset[str] = frozenset()  # per class; an instance may register more (its configuration's)
    accepted_arguments: ClassVar[Mapping[str, ArgumentParser]] = {}
    supports_hierarchy: ClassVar[bool] = False
    _attrs: dict[str, A]  # the session attributes of the queues the plugin tracks, set by _open

    def __init__(self, arguments: Mapping[str, Any] | None = None, *, hierarchy: bool = False) -> None:
        parsed = {}
        for key, value in optional_mapping(arguments, f"{self.name}: arguments", ProfileError).items():
            parse = self.accepted_arguments.get(key)
            if parse is None:
                raise unknown_key(
                    f"{self.name}: arguments.{key}", key, sorted(self.accepted_arguments), ProfileError, what="argument"
                )
            parsed[key] = parse(self.name, key, value)
        if hierarchy and not self.supports_hierarchy:
            raise ProfileError(f"{self.name}: enableHierarchy: the {self.name} plugin has no hierarchical mode")
        self.hierarchy = bool(hierarchy)
        self.arguments = parsed
        self._opened = False

    # -- session open ----------------------------------------------------------------------------------------
    def open(
        self, tree: QueueTree, resource_names: Sequence[str], total: npt.ArrayLike, usage: Mapping[str, QueueUsage]
    ) -> None:
        """Start a session. ``usage`` holds one entry per queue that has jobs this session (Volcano's plugins only
        share the cluster among those); every name must be in ``tree``. Inputs are validated before any state
        changes: a failed open leaves the previous session in place."""
        names = tuple(resource_names)
        if len(set(names)) != len(names) or not all(isinstance(n, str) and n for n in names):
            raise ValueError(f"{self.name}: resource_names: expected distinct non-empty strings, got {names!r}")
        n = len(names)
        total_vec = as_vector(total, n, "cluster", "total")
        checked = {}
        for queue, u in usage.items():
            if queue not in tree:
                raise QueueNotFoundError(f"queue {queue}: has usage but is not in the queue tree")
            if not isinstance(u, QueueUsage):
                raise TypeError(f"queue {queue}: usage: expected a QueueUsage, got {type(u).__name__}")
            checked[queue] = QueueUsage(
                *(
                    as_vector(getattr(u, f), n, f"queue {queue}", f)
                    for f in ("allocated", "request", "inqueue", "elastic")
                )
            )
        previous = dict(self.__dict__)
        try:
            self.tree = tree
            self.resource_names = names
            self.total = total_vec
            self.usage = checked
            self._opened = True
            self._open()
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(previous)
            raise

    def _open(self) -> None:
        """Compute the session's attributes from ``tree``, ``resource_names``, ``total`` and ``usage``."""
        raise NotImplementedError

    # -- hooks (neutral answers; plugins override those in ``hooks``) ----------------------------------------
    def queue_order(self, left: str, right: str) -> int:
        return 0

    def overused(self, queue: str) -> bool:
        return False

    def allocatable(self, queue: str, request: npt.ArrayLike) -> bool:
        return True

    def headroom(self, queue: str) -> np.ndarray:
        """What the queue may still be allocated, per resource (UNLIMITED: no bound), such that
        ``allocatable(queue, r)`` holds exactly when ``r <= headroom`` on every resource ``r`` asks for. The
        native gang placement checks each task against it, so the cycle calls the plugin once per job."""
        self._spec(queue)
        return np.full(len(self.resource_names), UNLIMITED, dtype=np.int64)

    def job_enqueueable(self, queue: str, min_resources: npt.ArrayLike | None) -> int:
        return ABSTAIN

    def on_job_enqueued(self, queue: str, min_resources: npt.ArrayLike | None) -> None:
        self._spec(queue)

    def preemptive(self, queue: str, request: npt.ArrayLike) -> bool:
        return True

    def victim_queue_order(self, left: str, right: str, preemptor: str) -> int:
        return 0

    def reclaimable(self, reclaimer: Claim, candidates: Sequence[Claim]) -> list[int]:
        """Indices (into ``candidates``, ascending) of the tasks that may be evicted for ``reclaimer``.

        Reclaim works across queues: candidates of the reclaimer's own queue and of queues whose ``reclaimable``
        is false are never victims (Volcano's reclaim action skips them); the plugin picks among the rest.
        """
        self._spec(reclaimer.queue)
        reclaimer = Claim(reclaimer.queue, self._vector(reclaimer.request, "reclaimer.request"), reclaimer.priority)
        eligible = []
        for i, c in enumerate(candidates):
            spec = self._spec(c.queue)
            if c.queue != reclaimer.queue and spec.reclaimable:
                eligible.append((i, Claim(c.queue, self._vector(c.request, f"candidates[{i}].request"), c.priority)))
        if "reclaimable" not in self.hooks or not eligible:
            return []
        return sorted(self._victims(reclaimer, eligible))

    def _victims(self, reclaimer: Claim, candidates: list[tuple[int, Claim]]) -> list[int]:
        raise NotImplementedError

    def on_allocate(self, queue: str, request: npt.ArrayLike) -> None:
        raise NotImplementedError

    def on_deallocate(self, queue: str, request: npt.ArrayLike) -> None:
        raise NotImplementedError

    def status(self) -> dict[str, QueueShare]:
        raise NotImplementedError

    def sorted_queues(self, queues: Iterable[str]) -> list[str]:
        """Queues in ``queue_order``; ties keep name order, so the result is deterministic."""

        def cmp(a: str, b: str) -> int:
            return self.queue_order(a, b) or (a > b) - (a < b)

        return sorted(queues, key=functools.cmp_to_key(cmp))

    # -- helpers for subclasses ---------------------------------------------------------------------------
    def _require_open(self) -> None:
        if not self._opened:
            raise RuntimeError(f"{self.name}: the plugin is not open (call open() first)")

    def _spec(self, queue: str) -> QueueSpec:
        self._require_open()
        return self.tree.get(queue)

    def _tracked(self, queue: str) -> A:
        """``self._attrs[queue]``, the session attributes of a queue the plugin tracks (for Volcano's flat plugins,
        one with jobs)."""
        self._spec(queue)
        try:
            return self._attrs[queue]
        except KeyError:
            raise ValueError(f"queue {queue}: has no jobs this session (no usage was given for it at open)") from None

    def _status(self: SharePlugin[S]) -> dict[str, QueueShare]:
        """status() from ``self._attrs`` (allocated, deserved, share); queues not tracked report zeros."""
        self._require_open()
        zero = np.zeros(len(self.resource_names), dtype=np.int64)
        return {
            q: QueueShare(np.array(a.allocated, np.int64), a.deserved.copy(), a.share)
            if (a := self._attrs.get(q))
            else QueueShare(zero, zero, 0.0)
            for q in self.tree
        }

    def _vector(self, v: npt.ArrayLike, what: str) -> np.ndarray:
        self._require_open()
        return as_vector(v, len(self.resource_names), self.name, what)

    def _row(self, v: npt.ArrayLike, what: str) -> list[int]:
        """_vector as Python ints, for a hook's arithmetic over a handful of axes."""
        self._require_open()
        return as_row(v, len(self.resource_names), self.name, what)

    def _resources(self, resources: Mapping[str, int], default: int = 0) -> np.ndarray:
        """A queue field (name -> quantity) as a vector over the axes; axes it does not name get ``default``.
        Resources no node or pod has (no axis) cannot be asked for, so they are dropped."""
        out = np.full(len(self.resource_names), default, dtype=np.int64)
        for i, r in enumerate(self.resource_names):
            if r in resources:
                out[i] = bounded(resources[r])
        return out

    def _mask(self, resources: Iterable[str]) -> np.ndarray:
        names = set(resources)
        return np.array([r in names for r in self.resource_names], dtype=bool)


_INT64 = np.dtype(np.int64)


def as_vector(v: npt.ArrayLike, n: int, obj: str, what: str) -> np.ndarray:
    """An integer vector of length ``n`` with no negative entry, as int64 (TypeError / ValueError naming it).
    An int64 array of the right shape is returned as is (the plugins never write into their inputs)."""
    if type(v) is np.ndarray and v.dtype is _INT64 and v.shape == (n,):
        if n and min(v.tolist()) < 0:  # a handful of axes: cheaper in Python than a numpy reduction
            raise ValueError(f"{obj}: {what}: entries must not be negative, got {v.tolist()}")
        return v
    a = np.asarray(v)
    if a.dtype.kind not in "iu" or a.ndim != 1:
        raise TypeError(f"{obj}: {what}: expected a 1-d integer vector, got {a.dtype} with shape {a.shape}")
    if a.shape[0] != n:
        raise ValueError(f"{obj}: {what}: expected {n} entries (one per resource axis), got {a.shape[0]}")
    if a.dtype.kind == "u" and a.size and int(a.max()) > UNLIMITED:
        raise ValueError(f"{obj}: {what}: entries must fit in int64")
    a = a.astype(np.int64)
    if (a < 0).any():
        raise ValueError(f"{obj}: {what}: entries must not be negative, got {a.tolist()}")
    return a


def as_row(v: npt.ArrayLike, n: int, obj: str, what: str) -> list[int]:
    """as_vector's entries as Python ints; an int64 array of the right shape is read and checked in one pass."""
    if type(v) is np.ndarray and v.dtype is _INT64 and v.shape == (n,):
        row: list[int] = v.tolist()
        if not row or min(row) >= 0:
            return row
    return as_vector(v, n, obj, what).tolist()  # the checks, and their errors


def quota_axes(resource_names: Sequence[str]) -> np.ndarray:
    """The axes Volcano counts in queue quotas: all but ``pods`` (every pod asks one; Volcano ignores it)."""
    return np.array([r != "pods" for r in resource_names], dtype=bool)


def share(
    allocated: np.ndarray | Sequence[int], deserved: np.ndarray | Sequence[int], dims: np.ndarray | None = None
) -> float:
    """max over ``dims`` of allocated / deserved, a resource with nothing deserved counting 1 when it is used and 0
    when not (Volcano's helpers.Share). By default ``dims`` are the resources the queue deserves, as Volcano's
    updateShare iterates them; 0 when there are none."""
    best = 0.0
    # a handful of resources: plain Python is several times faster than numpy masking here
    allocated = allocated.tolist() if isinstance(allocated, np.ndarray) else allocated
    deserved = deserved.tolist() if isinstance(deserved, np.ndarray) else deserved
    if dims is None:  # the resources deserved: d > 0 on every one counted
        for a, d in zip(allocated, deserved):
            if d > 0 and a / d > best:
                best = a / d
        return best
    for a, d, counted in zip(allocated, deserved, dims.tolist()):
        if counted:
            best = max(best, a / d if d > 0 else (1.0 if a > 0 else 0.0))
    return best


def sub_floor(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a - b per resource, never below 0, with UNLIMITED - b staying UNLIMITED (Volcano's ExceededPart)."""
    return np.where(a >= UNLIMITED, UNLIMITED, np.maximum(a - np.minimum(a, b), 0)).astype(np.int64)


def add_bounded(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b per resource for amounts (each <= MAX_AMOUNT, so the sum cannot wrap), held to MAX_AMOUNT."""
    return np.minimum(a + b, MAX_AMOUNT)


def add_capped(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b per resource, with UNLIMITED absorbing (no int64 overflow)."""
    return np.where((a >= UNLIMITED) | (b >= UNLIMITED) | (a > UNLIMITED - b), UNLIMITED, a + b).astype(np.int64)


def positive_float(plugin: str, key: str, value: Any, *, minimum: float) -> float:
    """An argument that is a number (or a numeric string, as Volcano's Arguments accept) >= ``minimum``."""
    path = f"{plugin}: arguments.{key}"
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise fail(ProfileError, path, f"must be a number, got {value!r}") from None
    return Number(lo=minimum)(value, path, ProfileError)
