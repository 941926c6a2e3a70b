"""PriorityClasses (scheduling.k8s.io/v1), resolved by name as the API server's Priority admission does.

The two system classes every cluster has are present from the start. A pod's priority is its ``spec.priority``
when the API server set it, else its class's value, else the global default class's value, else 0; a PodGroup's
priority is its ``priorityClassName``'s value the same way (Volcano's job priority).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vcore._native import _convert

SYSTEM_CLUSTER_CRITICAL = "system-cluster-critical"
SYSTEM_NODE_CRITICAL = "system-node-critical"
#: The largest value a user-defined class may have (HighestUserDefinablePriority).
HIGHEST_USER_PRIORITY = 1_000_000_000
PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER = "PreemptLowerPriority", "Never"


@dataclass(frozen=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = PREEMPT_LOWER_PRIORITY


SYSTEM_CLASSES = (
    PriorityClass(SYSTEM_CLUSTER_CRITICAL, 2_000_000_000),
    PriorityClass(SYSTEM_NODE_CRITICAL, 2_000_001_000),
)


def parse_priority_class(obj: Any) -> PriorityClass:
    d = _convert.api_dict(obj, "priorityclass")
    meta = d.get("metadata") or {}
    name = meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not name:
        raise ValueError("priorityclass <unnamed>: metadata.name: required")
    what = f"priorityclass {name}"
    value = d.get("value")
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what}: value: expected an integer, got {type(value).__name__}")
    if not name.startswith("system-") and value > HIGHEST_USER_PRIORITY:
        raise ValueError(
            f"{what}: value: must be at most {HIGHEST_USER_PRIORITY} for a user-defined class, got {value}"
        )
    if not -(2**31) <= value < 2**31:
        raise ValueError(f"{what}: value: must fit in int32, got {value}")
    global_default = d.get("globalDefault", False)
    if not isinstance(global_default, bool):
        raise TypeError(f"{what}: globalDefault: expected a boolean")
    policy = d.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY
    if policy not in (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER):
        raise ValueError(
            f"{what}: preemptionPolicy: expected {PREEMPT_LOWER_PRIORITY} or {PREEMPT_NEVER}, got {policy!r}"
        )
    pc = PriorityClass(name, value, global_default, policy)
    if name.startswith("system-") and pc not in SYSTEM_CLASSES:
        # The API server's rule: the prefix is reserved for the built-in classes, exactly as they are defined.
        raise ValueError(
            f"{what}: metadata.name: priority class names with the 'system-' prefix are reserved for "
            f"system use (only {SYSTEM_CLUSTER_CRITICAL} and {SYSTEM_NODE_CRITICAL}, with their values)"
        )
    return pc


class PriorityClasses:
    """The cluster's PriorityClasses by name."""

    def __init__(self) -> None:
        self._classes: dict[str, PriorityClass] = {pc.name: pc for pc in SYSTEM_CLASSES}

    def add(self, obj: Any, *, replace: bool = False) -> PriorityClass:
        pc = parse_priority_class(obj)
        if pc in SYSTEM_CLASSES:  # present from the start; a cluster's copy of it (a watch, a relist) changes nothing
            return pc
        if not replace and pc.name in self._classes:
            raise ValueError(f"priorityclass {pc.name}: already exists")
        if pc.global_default:
            other = self.global_default()
            if other is not None and other.name != pc.name:
                raise ValueError(f"priorityclass {pc.name}: globalDefault: {other.name} is the global default already")
        self._classes[pc.name] = pc
        return pc

    def remove(self, name: str) -> None:
        if name not in self._classes:
            raise KeyError(f"priorityclass {name}: not found")
        if any(name == pc.name for pc in SYSTEM_CLASSES):
            raise ValueError(f"priorityclass {name}: a system priority class cannot be removed")
        del self._classes[name]

    def get(self, name: str) -> PriorityClass | None:
        return self._classes.get(name)

    def global_default(self) -> PriorityClass | None:
        return next((pc for pc in self._classes.values() if pc.global_default), None)

    def value_of(self, class_name: str) -> int:
        """The priority of a class name ("" or an unknown name: the global default's, else 0)."""
        pc = self._classes.get(class_name) if class_name else None
        if pc is None:
            pc = self.global_default()
        return pc.value if pc is not None else 0

    def preemption_policy(self, class_name: str) -> str:
        pc = self._classes.get(class_name) if class_name else self.global_default()
        return pc.preemption_policy if pc is not None else PREEMPT_LOWER_PRIORITY
