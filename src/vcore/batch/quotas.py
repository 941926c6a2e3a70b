"""ResourceQuotas (v1) as Volcano's resourcequota plugin reads them: per namespace, each quota's ``status.hard`` and
``status.used`` (what kube-controller-manager's quota controller last counted), by resource name.

Amounts are integers as vcore counts every resource (cpu in millicores, the others in units, a fraction rounded up),
so a quota compares with a PodGroup's ``minResources`` read the same way (vcore.batch.podgroup.resource_amounts).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vcore._native import _convert
from vcore.batch.podgroup import metadata, resource_amounts
from vcore.errors import ObjectExistsError, ObjectNotFoundError
from vcore.validation import optional_mapping

KIND = "resourcequota"


@dataclass(frozen=True)
class QuotaStatus:
    key: str  # namespace/name
    hard: Mapping[str, int]  # status.hard
    used: Mapping[str, int]  # status.used


def parse(obj: Any) -> QuotaStatus:
    """A ResourceQuota (dict or client model); errors name the object and the field."""
    d = _convert.api_dict(obj, KIND)
    namespace, name, _ = metadata(d, KIND)
    what = f"{KIND} {namespace}/{name}"
    status = optional_mapping(d.get("status"), f"{what}: status")
    hard = resource_amounts(status.get("hard") or {}, f"{what}: status.hard")
    used = resource_amounts(status.get("used") or {}, f"{what}: status.used")
    return QuotaStatus(f"{namespace}/{name}", hard, used)


def key_of(obj: Any) -> str:
    """namespace/name of a quota, or the string itself."""
    return obj if isinstance(obj, str) else parse(obj).key


class ResourceQuotas:
    """The cluster's ResourceQuotas by namespace."""

    def __init__(self) -> None:
        self._by_namespace: dict[str, dict[str, QuotaStatus]] = {}

    def set(self, obj: Any, *, exists: bool) -> None:
        """Add (exists=False) or replace (exists=True) a quota; ObjectExistsError / ObjectNotFoundError otherwise."""
        quota = parse(obj)
        namespace, name = quota.key.split("/", 1)
        held = self._by_namespace.get(namespace, {})
        if exists != (name in held):
            raise (ObjectNotFoundError if exists else ObjectExistsError)(
                f"{KIND} {quota.key}: " + ("not found" if exists else "already exists")
            )
        self._by_namespace.setdefault(namespace, {})[name] = quota

    def remove(self, obj: Any) -> None:
        key = key_of(obj)
        namespace, _, name = key.partition("/")
        held = self._by_namespace.get(namespace, {})
        if name not in held:
            raise ObjectNotFoundError(f"{KIND} {key}: not found")
        del held[name]
        if not held:
            del self._by_namespace[namespace]

    def of(self, namespace: str) -> list[QuotaStatus]:
        """The namespace's quotas, by name."""
        return [q for _, q in sorted(self._by_namespace.get(namespace, {}).items())]
