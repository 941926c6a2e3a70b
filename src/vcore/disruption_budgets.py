"""PodDisruptionBudgets (policy/v1) as preemption reads them: the pods a budget covers (its namespace and selector)
and how many of them may still be disrupted (``status.disruptionsAllowed``, less the ``status.disruptedPods`` the
API server already counts). kube-scheduler's DefaultPreemption and Volcano's preempt and reclaim spare the pods a
budget protects where they can; the native core keeps the budgets and matches them to bound pods."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vcore._native import _convert
from vcore.validation import Integer, mapping, optional_mapping

if TYPE_CHECKING:
    from vcore._native._convert import LabelSelector

KIND = "poddisruptionbudget"


@dataclass(frozen=True)
class DisruptionBudget:
    key: str  # namespace/name
    selector: LabelSelector | None  # as _convert.label_selector gives it; None: covers no pod
    disruptions_allowed: int
    disrupted: tuple[str, ...]  # names of pods the API server already counts as disrupted


def parse(obj: Any) -> DisruptionBudget:
    """A PodDisruptionBudget (dict or client model); errors name the object and the field."""
    d = mapping(_convert.api_dict(obj, KIND), KIND)
    meta = optional_mapping(d.get("metadata"), f"{KIND}: metadata")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{KIND} <unnamed>: metadata.name: required")
    key = f"{meta.get('namespace') or 'default'}/{name}"
    what = f"{KIND} {key}"
    spec = optional_mapping(d.get("spec"), f"{what}: spec")
    status = optional_mapping(d.get("status"), f"{what}: status")
    allowed = status.get("disruptionsAllowed")
    allowed = 0 if allowed is None else Integer(0, 2**31 - 1)(allowed, f"{what}: status.disruptionsAllowed")
    disrupted = optional_mapping(status.get("disruptedPods"), f"{what}: status.disruptedPods")
    return DisruptionBudget(
        key,
        _convert.label_selector(spec.get("selector"), what, "spec.selector"),
        allowed,
        tuple(str(pod) for pod in disrupted),
    )


def key_of(obj: Any) -> str:
    """namespace/name of a budget, or the string itself."""
    return obj if isinstance(obj, str) else parse(obj).key
