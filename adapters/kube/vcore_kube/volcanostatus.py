"""Volcano's status shapes, as its scheduler writes them: a PodGroup's status (phase, conditions, counts) and a
Queue's (state, allocated resources, its PodGroups counted by phase), built from a cycle's result (vcore's
PodGroupStatus and QueueStatus: this is the seam that knows both); when the status the API server has already says
the same; and the StatusKinds the status writer writes them as.

A PodGroup has no status subresource (Volcano's CRD), so its status is patched on the object itself; a Queue's
goes to queues/{name}/status. Two statuses are the same when they differ at most in a condition's
lastTransitionTime or transitionID (Volcano's isPodGroupStatusUpdated) and in how a quantity or a zero count is
spelled (an absent count is 0, "1Gi" is 1073741824).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from vcore import PodGroupStatus, QueueStatus, parse_quantity
from vcore_kube.statuswriter import StatusKind

VOLCANO = "/apis/scheduling.volcano.sh/v1beta1"
PODGROUP, QUEUE = "PodGroup", "Queue"
COUNTS = ("running", "succeeded", "failed")  # PodGroupStatus
QUEUE_COUNTS = {
    "Pending": "pending",
    "Running": "running",
    "Unknown": "unknown",
    "Inqueue": "inqueue",
    "Completed": "completed",
}  # PodGroup phase -> QueueStatus field
OPEN = "Open"
ROOT_QUEUE = "root"
_CONDITION_FIELDS = ("type", "status", "reason", "message")  # compared; the times and transitionID are not
_DECIMAL_SUFFIXES = {-3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


# -- PodGroup -------------------------------------------------------------------------------------------------
def podgroup_status(status: PodGroupStatus) -> dict[str, Any]:
    """The status to write for a PodGroup (Volcano's PodGroupStatus)."""
    return status.to_dict()


def same_podgroup_status(have: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    if (have.get("phase") or "") != want["phase"]:
        return False
    if any(_count(have.get(k)) != want[k] for k in COUNTS):
        return False
    conditions = have.get("conditions") or []
    return len(conditions) == len(want["conditions"]) and all(
        _condition(a) == _condition(b) for a, b in zip(conditions, want["conditions"])
    )


def podgroup_patch(have: Mapping[str, Any], want: Mapping[str, Any]) -> dict[str, Any]:
    """A merge patch's status: the fields vcore owns, conditions replaced as a whole."""
    return dict(want)


def podgroup_path(key: str) -> str:
    namespace, _, name = key.partition("/")
    return f"{VOLCANO}/namespaces/{quote(namespace, safe='')}/podgroups/{quote(name, safe='')}"


# -- Queue ----------------------------------------------------------------------------------------------------
def queue_status(status: QueueStatus, allocated: Mapping[str, int]) -> dict[str, Any]:
    """The status to write for a Volcano Queue: its state (unset reads as Open, as Volcano's queue controller
    sets it), the resources allocated to it (cpu and memory always, as Volcano's scheduler writes them; a parent's
    allocation sums its children's) and its PodGroups counted by phase."""
    out: dict[str, Any] = {
        "state": status.state or OPEN,
        "allocated": {
            name: format_quantity(name, allocated.get(name, 0)) for name in sorted({"cpu", "memory", *allocated})
        },
    }
    for phase, field in QUEUE_COUNTS.items():
        out[field] = int(status.podgroups.get(phase, 0))
    return out


def rolled_up(queues: Mapping[str, QueueStatus], parents: Mapping[str, str]) -> dict[str, dict[str, int]]:
    """Each queue's allocated resources, a parent's including its descendants' when the hierarchy has a root queue
    (Volcano's updateQueueStatus: a queue without a parent is the root's child). `parents`: queue -> spec.parent."""
    out = {name: dict(q.allocated) for name, q in queues.items()}
    if ROOT_QUEUE not in queues:
        return out
    for name, q in queues.items():
        seen = {name}
        parent = name
        while parent != ROOT_QUEUE:
            parent = parents.get(parent) or ROOT_QUEUE
            if parent in seen or parent not in out:  # a cycle or a missing parent: vcore's tree refuses both
                break
            seen.add(parent)
            for resource, amount in q.allocated.items():
                out[parent][resource] = out[parent].get(resource, 0) + amount
    return out


def same_queue_status(have: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    if (have.get("state") or "") != want["state"]:
        return False
    if any(_count(have.get(field)) != want[field] for field in QUEUE_COUNTS.values()):
        return False
    try:
        held = _amounts(have.get("allocated") or {})
    except (TypeError, ValueError):  # not a quantity we can read: rewrite it
        return False
    wanted = _amounts(want["allocated"])
    return all(held.get(name, 0) == wanted.get(name, 0) for name in held.keys() | wanted.keys())


def queue_patch(have: Mapping[str, Any], want: Mapping[str, Any]) -> dict[str, Any]:
    """A merge patch's status: a resource the queue no longer has allocated is removed (null), not left behind."""
    out = dict(want)
    allocated = dict(want["allocated"])
    for name in have.get("allocated") or {}:
        allocated.setdefault(name, None)
    out["allocated"] = allocated
    return out


def queue_path(key: str) -> str:
    return f"{VOLCANO}/queues/{quote(key, safe='')}/status"


def queue_object_path(key: str) -> str:
    return f"{VOLCANO}/queues/{quote(key, safe='')}"


KINDS = (
    StatusKind(PODGROUP, podgroup_path, podgroup_path, same_podgroup_status, podgroup_patch),
    StatusKind(QUEUE, queue_path, queue_object_path, same_queue_status, queue_patch),
)


# -- quantities -----------------------------------------------------------------------------------------------
def format_quantity(resource: str, amount: int) -> str:
    """An amount in vcore's units (cpu in millicores, everything else whole) as the canonical quantity Volcano
    writes: cpu and scalars in decimal SI ("1500m", "2", "3k"), memory in binary SI when exact ("1Gi", "1500")."""
    if amount < 0:
        raise ValueError(f"queue status: allocated.{resource}: must not be negative, got {amount}")
    if resource == "cpu":
        return _decimal(amount, -3)
    if resource == "memory" and amount >= 1024:
        power = 0
        while power < len(_BINARY_SUFFIXES) - 1 and amount % 1024 == 0:
            amount //= 1024
            power += 1
        return f"{amount}{_BINARY_SUFFIXES[power]}"
    return _decimal(amount, 0)


def _decimal(mantissa: int, exponent: int) -> str:
    """mantissa * 10**exponent in Go's canonical decimal SI form: the largest multiple-of-3 exponent that keeps the
    mantissa whole."""
    if mantissa == 0:
        return "0"
    while mantissa % 1000 == 0 and exponent < 18:
        mantissa //= 1000
        exponent += 3
    return f"{mantissa}{_DECIMAL_SUFFIXES[exponent]}"


def _amounts(resources: Mapping[str, Any]) -> dict[str, int]:
    return {name: parse_quantity(str(q), milli=name == "cpu") for name, q in resources.items() if q is not None}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _condition(c: Any) -> tuple:
    c = c if isinstance(c, Mapping) else {}
    return tuple(c.get(k) or "" for k in _CONDITION_FIELDS)
