"""Queues: Volcano Queue, KAI Scheduler Queue and Kueue ClusterQueue objects as one validated QueueSpec, and the
QueueTree that holds them.

A QueueSpec keeps each resource field as given (only the resources the object names), in vcore's units: cpu in
millicores, memory and every other resource in whole units (bytes, devices, pods), GPUs as ``nvidia.com/gpu``
devices, so queue vectors line up with ``Cluster.resource_names``. What a field means is the source system's:

* Volcano ``scheduling.volcano.sh/v1beta1`` Queue: ``spec.weight`` (admission defaults 0/unset to 1 and rejects
  negatives), ``spec.capability``, ``spec.guarantee.resource``, ``spec.deserved``, ``spec.reclaimable`` (default
  true), ``spec.parent``, ``spec.priority`` and ``status.state`` (unset reads as Open, as the queue controller
  sets it). An unset capability is unlimited, and so is a cpu or memory capability <= 0 (Volcano's scheduler reads
  them as MaxFloat64).
* KAI Scheduler ``scheduling.run.ai/v2`` Queue: ``spec.parentQueue``, ``spec.priority`` (default 100) and
  ``spec.resources.{cpu,memory,gpu}.{quota,limit,overQuotaWeight}``; cpu in millicores, memory in megabytes
  (10**6 bytes), gpu in devices; -1 means unlimited and an unset value is 0, as KAI's Go types read it (so an unset
  limit allows nothing: write ``limit: -1``). quota becomes ``deserved``, limit ``capability``.
* Kueue ``kueue.x-k8s.io/v1beta1`` ClusterQueue: ``spec.cohort``, ``spec.resourceGroups[].flavors[].resources[]``
  with ``nominalQuota`` (-> ``deserved``), ``borrowingLimit`` and ``lendingLimit``, ``spec.preemption`` and
  ``spec.stopPolicy`` (Hold / HoldAndDrain read as Closed). vcore has no resource flavors: each resource's flavors
  are summed (nominal quotas add up; a borrowing or lending limit is the sum over flavors, unbounded when one flavor
  leaves it unset).

An object without apiVersion and kind is read as a Volcano Queue, vcore's input language.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from vcore._native._convert import api_dict, parse_quantity
from vcore.batch.amounts import UNLIMITED  # a bound that is not set; also KAI's -1
from vcore.errors import QueueExistsError, QueueInUseError, QueueNotFoundError
from vcore.validation import ANY, Boolean, Integer, ListOf, String, mapping

VOLCANO_API = "scheduling.volcano.sh/v1beta1"
KAI_API = "scheduling.run.ai/v2"
KUEUE_API = "kueue.x-k8s.io/v1beta1"
_KINDS = {(VOLCANO_API, "Queue"), (KAI_API, "Queue"), (KUEUE_API, "ClusterQueue")}

OPEN = "Open"
STATES = (OPEN, "Closed", "Closing", "Unknown")  # Volcano's QueueState values
DEFAULT_QUEUE = "default"
ROOT_QUEUE = "root"
GPU = "nvidia.com/gpu"

KAI_DEFAULT_PRIORITY = 100  # KAI's DefaultQueuePriority
_INT32_MAX = 2**31 - 1
_KAI_RESOURCES = (("cpu", "cpu", 1), ("memory", "memory", 10**6), ("gpu", GPU, 1))  # field, axis, unit scale
RECLAIM_POLICIES = ("Never", "LowerPriority", "Any")
WITHIN_QUEUE_POLICIES = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
BORROW_POLICIES = ("Never", "LowerPriority")


class ResourceList(Mapping[str, int]):
    """An immutable resource name -> integer quantity mapping (only the resources an object names)."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, int] | None = None) -> None:
        self._items = dict(items or {})

    def __getitem__(self, key: str) -> int:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(frozenset(self._items.items()))

    def __repr__(self) -> str:
        return f"ResourceList({self._items!r})"


_EMPTY = ResourceList()


@dataclass(frozen=True)
class NodeGroupAffinity:
    """A Volcano Queue's ``spec.affinity``: the node groups (``volcano.sh/nodegroup-name`` values) its jobs' tasks
    must, should, must not and should not run in. What they mean is the nodegroup plugin's (vcore.batch.nodegroups)."""

    required: frozenset[str] = frozenset()  # nodeGroupAffinity.requiredDuringSchedulingIgnoredDuringExecution
    preferred: frozenset[str] = frozenset()  # nodeGroupAffinity.preferredDuringSchedulingIgnoredDuringExecution
    anti_required: frozenset[str] = frozenset()  # nodeGroupAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution
    anti_preferred: frozenset[str] = frozenset()  # nodeGroupAntiAffinity.preferredDuringSchedulingIgnoredDuring...


@dataclass(frozen=True)
class QueueSpec:
    """One queue, validated, in vcore units. Build it with :meth:`from_object`."""

    name: str
    api: str = VOLCANO_API  # apiVersion of the source object
    parent: str | None = None
    weight: int = 1
    priority: int = 0
    state: str = OPEN
    reclaimable: bool = True
    capability: ResourceList = _EMPTY  # upper bound; Volcano capability, KAI limit
    guarantee: ResourceList = _EMPTY  # Volcano guarantee.resource: reserved, never lent
    deserved: ResourceList = _EMPTY  # Volcano deserved, KAI quota, Kueue nominalQuota
    over_quota_weight: ResourceList = _EMPTY  # KAI, per resource
    cohort: str | None = None  # Kueue
    borrowing_limit: ResourceList = _EMPTY  # Kueue; a resource absent here borrows without bound
    lending_limit: ResourceList = _EMPTY  # Kueue; a resource absent here lends all its unused quota
    covered_resources: frozenset[str] = frozenset()  # Kueue
    reclaim_within_cohort: str = "Never"  # Kueue spec.preemption
    within_cluster_queue: str = "Never"
    borrow_within_cohort: str = "Never"
    max_priority_threshold: int | None = None
    creation_timestamp: str = ""  # RFC 3339, as the API server writes it; KAI's tie-break
    node_groups: NodeGroupAffinity | None = None  # Volcano spec.affinity; None when the queue has none
    implicit: bool = field(default=False, compare=False)  # added by the QueueTree, not by the user

    @staticmethod
    def from_object(obj: Any) -> QueueSpec:
        """Parse a Volcano Queue, KAI Queue or Kueue ClusterQueue (dict in API shape or client model)."""
        d = api_dict(obj, "queue")
        api, kind = d.get("apiVersion"), d.get("kind")
        meta = _mapping(d.get("metadata"), "queue", "metadata")
        name = meta.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"queue: metadata.name: expected a non-empty string, got {name!r}")
        ctx = f"queue {name}"
        if api is None and kind is None:
            api, kind = VOLCANO_API, "Queue"
        if (api, kind) not in _KINDS:
            known = ", ".join(f"{a} {k}" for a, k in sorted(_KINDS))
            raise ValueError(f"{ctx}: apiVersion/kind: unknown kind {api} {kind} (known: {known})")
        created = meta.get("creationTimestamp") or ""
        if not isinstance(created, str):
            created = str(created)
        if api == VOLCANO_API:
            return _volcano(d, name, ctx, created)
        if api == KAI_API:
            return _kai(d, name, ctx, created)
        return _kueue(d, name, ctx, created)

    def limit(self, resource: str) -> int:
        """The upper bound on ``resource`` as the source system reads it (UNLIMITED when there is none)."""
        if self.api == KAI_API:
            return self.capability.get(resource, UNLIMITED)
        if self.api == KUEUE_API:
            return UNLIMITED  # a ClusterQueue's bound comes from its quota and cohort, not from a capability
        cap = self.capability.get(resource)
        if cap is None or (resource in ("cpu", "memory") and cap <= 0):
            return UNLIMITED
        return cap

    def over_quota_weight_of(self, resource: str) -> int:
        """KAI's overQuotaWeight of ``resource``; for other kinds the queue's weight."""
        if self.api == KAI_API:
            return self.over_quota_weight.get(resource, 0)
        return self.weight

    @property
    def is_open(self) -> bool:
        return self.state == OPEN


def implicit_queue(name: str) -> QueueSpec:
    """Volcano's ``default`` or ``root`` queue as Volcano creates it: weight 1, Open, reclaimable, no resources."""
    return QueueSpec(name=name, implicit=True)


# -- parsing helpers: vcore.validation's checks, every message "queue <name>: <field>: <problem>" ---------------
_INT32 = Integer(-_INT32_MAX - 1, _INT32_MAX)


def _at(ctx: str, path: str) -> str:
    return f"{ctx}: {path}"


def _mapping(v: Any, ctx: str, path: str) -> Mapping[str, Any]:
    return {} if v is None else mapping(v, _at(ctx, path))


def _list(v: Any, ctx: str, path: str) -> list[Any]:
    return [] if v is None else list(ListOf(ANY)(v, _at(ctx, path)))


def _str(v: Any, ctx: str, path: str) -> str | None:
    return None if v is None or v == "" else String()(v, _at(ctx, path))


def _int(v: Any, ctx: str, path: str, default: int, *, minimum: int | None = None) -> int:
    if v is None:
        return default
    value = _INT32(v, _at(ctx, path))
    if minimum is not None:
        Integer(minimum)(value, _at(ctx, path))
    return value


def _choice(v: Any, ctx: str, path: str, allowed: tuple[str, ...]) -> str:
    return allowed[0] if v is None or v == "" else String(choices=allowed)(v, _at(ctx, path))


def _quantity(v: Any, resource: str, ctx: str, path: str) -> int:
    return parse_quantity(v, milli=resource == "cpu", obj=ctx, field=path)


def _resource_list(v: Any, ctx: str, path: str) -> ResourceList:
    items = {}
    for key, q in _mapping(v, ctx, path).items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"{ctx}: {path}: resource names must be non-empty strings, got {key!r}")
        items[key] = _quantity(q, key, ctx, f"{path}.{key}")
    return ResourceList(items)


def _check_not_above(low: ResourceList, high: ResourceList, ctx: str, low_path: str, high_path: str) -> None:
    """Reject low[r] > high[r] for the resources both name (an unset bound is unlimited, as schedulers read it)."""
    for r, v in low.items():
        if r in high and v > high[r]:
            raise ValueError(f"{ctx}: {low_path}.{r}: {v} exceeds {high_path}.{r} {high[r]}")


def _volcano(d: Mapping[str, Any], name: str, ctx: str, created: str) -> QueueSpec:
    spec = _mapping(d.get("spec"), ctx, "spec")
    status = _mapping(d.get("status"), ctx, "status")
    weight = _int(spec.get("weight"), ctx, "spec.weight", 0, minimum=0) or 1  # admission: 0 -> 1
    reclaimable = spec.get("reclaimable")
    reclaimable = True if reclaimable is None else Boolean()(reclaimable, _at(ctx, "spec.reclaimable"))
    parent = _str(spec.get("parent"), ctx, "spec.parent")
    if parent == name:
        raise ValueError(f"{ctx}: spec.parent: a queue cannot be its own parent")
    capability = _resource_list(spec.get("capability"), ctx, "spec.capability")
    guarantee = _resource_list(
        _mapping(spec.get("guarantee"), ctx, "spec.guarantee").get("resource"), ctx, "spec.guarantee.resource"
    )
    deserved = _resource_list(spec.get("deserved"), ctx, "spec.deserved")
    _check_not_above(guarantee, capability, ctx, "spec.guarantee.resource", "spec.capability")
    _check_not_above(deserved, capability, ctx, "spec.deserved", "spec.capability")
    _check_not_above(guarantee, deserved, ctx, "spec.guarantee.resource", "spec.deserved")
    state = _choice(status.get("state"), ctx, "status.state", STATES)
    affinity = spec.get("affinity")
    return QueueSpec(
        name=name,
        api=VOLCANO_API,
        parent=parent,
        weight=weight,
        priority=_int(spec.get("priority"), ctx, "spec.priority", 0),
        state=state,
        reclaimable=reclaimable,
        capability=capability,
        guarantee=guarantee,
        deserved=deserved,
        creation_timestamp=created,
        node_groups=None if affinity is None else _node_group_affinity(affinity, ctx),
    )


_GROUP_LISTS = (
    ("requiredDuringSchedulingIgnoredDuringExecution", "required"),
    ("preferredDuringSchedulingIgnoredDuringExecution", "preferred"),
)


def _node_group_affinity(v: Any, ctx: str) -> NodeGroupAffinity:
    affinity = _mapping(v, ctx, "spec.affinity")
    for key in affinity:
        if key not in ("nodeGroupAffinity", "nodeGroupAntiAffinity"):
            raise ValueError(f"{ctx}: spec.affinity.{key}: unknown field (nodeGroupAffinity, nodeGroupAntiAffinity)")
    groups: dict[str, frozenset[str]] = {}
    for field_name, prefix in (("nodeGroupAffinity", ""), ("nodeGroupAntiAffinity", "anti_")):
        path = f"spec.affinity.{field_name}"
        terms = _mapping(affinity.get(field_name), ctx, path)
        for key in terms:
            if key not in dict(_GROUP_LISTS):
                raise ValueError(f"{ctx}: {path}.{key}: unknown field ({', '.join(dict(_GROUP_LISTS))})")
        for key, name in _GROUP_LISTS:
            value = terms.get(key)
            names = [] if value is None else ListOf(String())(value, _at(ctx, f"{path}.{key}"))
            groups[prefix + name] = frozenset(names)
    return NodeGroupAffinity(**groups)


def _kai_amount(v: Any, ctx: str, path: str, scale: int, *, allow_unlimited: bool) -> int:
    """A KAI quota/limit/weight number in vcore units; -1 -> UNLIMITED where allowed; unset -> 0."""
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise TypeError(f"{ctx}: {path}: expected a number, got {type(v).__name__}")
    try:
        x = Decimal(str(v))
    except ArithmeticError:
        raise ValueError(f"{ctx}: {path}: {v!r} is not a number") from None
    if not x.is_finite():
        raise ValueError(f"{ctx}: {path}: {v!r} is not a finite number")
    if allow_unlimited and x == -1:
        return UNLIMITED
    if x < 0:
        raise ValueError(f"{ctx}: {path}: {v} must be >= 0" + (" or -1 (unlimited)" if allow_unlimited else ""))
    units = x * scale
    if units != units.to_integral_value():
        what = (
            "a whole number of GPU devices (vcore counts nvidia.com/gpu in devices)"
            if path.endswith(("gpu.quota", "gpu.limit"))
            else "a whole number in vcore units"
        )
        raise ValueError(f"{ctx}: {path}: {v} is not {what}")
    if units > UNLIMITED - 1:
        raise ValueError(f"{ctx}: {path}: {v} is too large")
    return int(units)


def _kai(d: Mapping[str, Any], name: str, ctx: str, created: str) -> QueueSpec:
    spec = _mapping(d.get("spec"), ctx, "spec")
    if spec.get("resources") is None:
        raise ValueError(f"{ctx}: spec.resources: resources must be specified (as KAI's admission requires)")
    resources = _mapping(spec.get("resources"), ctx, "spec.resources")
    parent = _str(spec.get("parentQueue"), ctx, "spec.parentQueue")
    if parent == name:
        raise ValueError(f"{ctx}: spec.parentQueue: a queue cannot be its own parent")
    quota, limit, weight = {}, {}, {}
    for key, axis, scale in _KAI_RESOURCES:
        path = f"spec.resources.{key}"
        entry = _mapping(resources.get(key), ctx, path)
        if entry.get("lendingLimit") is not None:
            raise ValueError(f"{ctx}: {path}.lendingLimit: not supported by vcore's hierarchy plugin")
        quota[axis] = _kai_amount(entry.get("quota"), ctx, f"{path}.quota", scale, allow_unlimited=True)
        limit[axis] = _kai_amount(entry.get("limit"), ctx, f"{path}.limit", scale, allow_unlimited=True)
        weight[axis] = _kai_amount(
            entry.get("overQuotaWeight"), ctx, f"{path}.overQuotaWeight", 1, allow_unlimited=False
        )
    return QueueSpec(
        name=name,
        api=KAI_API,
        parent=parent,
        priority=_int(spec.get("priority"), ctx, "spec.priority", KAI_DEFAULT_PRIORITY),
        capability=ResourceList(limit),
        deserved=ResourceList(quota),
        over_quota_weight=ResourceList(weight),
        creation_timestamp=created,
    )


def _kueue(d: Mapping[str, Any], name: str, ctx: str, created: str) -> QueueSpec:
    spec = _mapping(d.get("spec"), ctx, "spec")
    cohort = _str(spec.get("cohort"), ctx, "spec.cohort")
    nominal: dict[str, int] = {}
    borrowing: dict[str, int | None] = {}
    lending: dict[str, int] = {}
    lending_set: set[str] = set()
    covered: set[str] = set()
    for g, group in enumerate(_list(spec.get("resourceGroups"), ctx, "spec.resourceGroups")):
        gpath = f"spec.resourceGroups[{g}]"
        group = _mapping(group, ctx, gpath)
        given = [
            _str(r, ctx, f"{gpath}.coveredResources")
            for r in _list(group.get("coveredResources"), ctx, f"{gpath}.coveredResources")
        ]
        names: list[str] = []
        for r in given:
            if r is None:
                raise ValueError(f"{ctx}: {gpath}.coveredResources: resource names must be non-empty")
            if r in covered:
                raise ValueError(f"{ctx}: {gpath}.coveredResources: {r} is covered by two resource groups")
            covered.add(r)
            names.append(r)
        for f, flavor in enumerate(_list(group.get("flavors"), ctx, f"{gpath}.flavors")):
            fpath = f"{gpath}.flavors[{f}]"
            flavor = _mapping(flavor, ctx, fpath)
            seen = []
            for i, res in enumerate(_list(flavor.get("resources"), ctx, f"{fpath}.resources")):
                rpath = f"{fpath}.resources[{i}]"
                res = _mapping(res, ctx, rpath)
                r = _str(res.get("name"), ctx, f"{rpath}.name")
                if r is None or r not in names:
                    raise ValueError(f"{ctx}: {rpath}.name: {r!r} is not in {gpath}.coveredResources")
                seen.append(r)
                if res.get("nominalQuota") is None:
                    raise ValueError(f"{ctx}: {rpath}.nominalQuota: required")
                n = _quantity(res.get("nominalQuota"), r, ctx, f"{rpath}.nominalQuota")
                nominal[r] = nominal.get(r, 0) + n
                b = res.get("borrowingLimit")
                l_ = res.get("lendingLimit")
                if (b is not None or l_ is not None) and cohort is None:
                    which = "borrowingLimit" if b is not None else "lendingLimit"
                    raise ValueError(f"{ctx}: {rpath}.{which}: must be unset when spec.cohort is empty")
                borrowed = borrowing.get(r, 0)
                if b is None:
                    borrowing[r] = None
                elif borrowed is not None:
                    borrowing[r] = borrowed + _quantity(b, r, ctx, f"{rpath}.borrowingLimit")
                lend = n
                if l_ is not None:
                    lend = _quantity(l_, r, ctx, f"{rpath}.lendingLimit")
                    if lend > n:
                        raise ValueError(f"{ctx}: {rpath}.lendingLimit: {lend} exceeds nominalQuota {n}")
                    lending_set.add(r)
                lending[r] = (lending.get(r) or 0) + lend
            if sorted(seen) != sorted(names):
                raise ValueError(
                    f"{ctx}: {fpath}.resources: must list exactly {gpath}.coveredResources "
                    f"({', '.join(names)}), got {', '.join(str(s) for s in seen)}"
                )
    preemption = _mapping(spec.get("preemption"), ctx, "spec.preemption")
    reclaim = _choice(
        preemption.get("reclaimWithinCohort"), ctx, "spec.preemption.reclaimWithinCohort", RECLAIM_POLICIES
    )
    within = _choice(
        preemption.get("withinClusterQueue"), ctx, "spec.preemption.withinClusterQueue", WITHIN_QUEUE_POLICIES
    )
    bwc = _mapping(preemption.get("borrowWithinCohort"), ctx, "spec.preemption.borrowWithinCohort")
    borrow = _choice(bwc.get("policy"), ctx, "spec.preemption.borrowWithinCohort.policy", BORROW_POLICIES)
    if borrow != "Never" and reclaim == "Never":
        raise ValueError(
            f"{ctx}: spec.preemption.borrowWithinCohort.policy: {borrow} requires "
            "spec.preemption.reclaimWithinCohort other than Never"
        )
    threshold = bwc.get("maxPriorityThreshold")
    if threshold is not None:
        threshold = _int(threshold, ctx, "spec.preemption.borrowWithinCohort.maxPriorityThreshold", 0)
    stop = _choice(spec.get("stopPolicy"), ctx, "spec.stopPolicy", ("None", "Hold", "HoldAndDrain"))
    return QueueSpec(
        name=name,
        api=KUEUE_API,
        state=OPEN if stop == "None" else "Closed",
        deserved=ResourceList(nominal),
        cohort=cohort,
        borrowing_limit=ResourceList({r: v for r, v in borrowing.items() if v is not None}),
        lending_limit=ResourceList({r: lending[r] for r in lending_set}),
        covered_resources=frozenset(covered),
        reclaim_within_cohort=reclaim,
        within_cluster_queue=within,
        borrow_within_cohort=borrow,
        max_priority_threshold=threshold,
        creation_timestamp=created,
    )


# -- the tree ---------------------------------------------------------------------------------------------------
class QueueTree:
    """The queues of a cluster and their parent links.

    Volcano's ``default`` queue (weight 1, Open, reclaimable) exists unless ``default_queue=False``; Volcano's
    ``root`` queue exists while a Volcano queue names a parent or any queue names ``root``. Adding a queue under the
    name of an implicit one replaces it. Parent links are the ones the objects give (a queue without a parent is a
    top-level queue; Volcano's hierarchical capacity plugin hangs those under ``root`` itself). Every call validates
    before it changes anything: a failed add, update or remove leaves the tree as it was.
    """

    def __init__(self, *, default_queue: bool = True) -> None:
        self._explicit: dict[str, QueueSpec] = {}
        self._default_queue = default_queue
        self._queues: dict[str, QueueSpec] = {}
        self._children: dict[str, list[str]] = {}
        self._rebuild(self._explicit)

    # -- mutation ------------------------------------------------------------------------------------------
    def add(self, spec: QueueSpec) -> None:
        """Add a queue; QueueExistsError if the name is taken by a queue that was added before."""
        spec = _as_spec(spec)
        if spec.name in self._explicit:
            raise QueueExistsError(f"queue {spec.name}: already exists (use update)")
        self._commit({**self._explicit, spec.name: spec})

    def update(self, spec: QueueSpec) -> None:
        """Replace a queue (an implicit one becomes explicit); QueueNotFoundError if there is none of that name."""
        spec = _as_spec(spec)
        if spec.name not in self._queues:
            raise QueueNotFoundError(f"queue {spec.name}: not found (use add)")
        self._commit({**self._explicit, spec.name: spec})

    def remove(self, name: str, *, n_jobs: int = 0) -> QueueSpec:
        """Remove a queue and return it. QueueInUseError when it has child queues, when ``n_jobs`` (PodGroups that
        name it) is not zero, or for Volcano's ``default`` queue, which Volcano never deletes."""
        if name not in self._queues:
            raise QueueNotFoundError(f"queue {name}: not found")
        if name == DEFAULT_QUEUE and self._default_queue:
            raise QueueInUseError(f"queue {name}: the default queue cannot be removed")
        if self._children.get(name):
            raise QueueInUseError(f"queue {name}: has child queues {', '.join(self._children[name])}")
        if n_jobs:
            raise QueueInUseError(f"queue {name}: {n_jobs} job(s) still use it")
        if name not in self._explicit:
            raise QueueInUseError(f"queue {name}: implicit queue, needed while hierarchical queues exist")
        spec = self._explicit[name]
        self._commit({k: v for k, v in self._explicit.items() if k != name})
        return spec

    def _commit(self, explicit: dict[str, QueueSpec]) -> None:
        queues = self._with_implicit(explicit)
        _check_links(queues)
        self._explicit = explicit
        self._rebuild(explicit)

    def _with_implicit(self, explicit: dict[str, QueueSpec]) -> dict[str, QueueSpec]:
        queues: dict[str, QueueSpec] = {}
        needs_root = any(
            s.parent == ROOT_QUEUE or (s.parent is not None and s.api == VOLCANO_API) for s in explicit.values()
        )
        if needs_root and ROOT_QUEUE not in explicit:
            queues[ROOT_QUEUE] = implicit_queue(ROOT_QUEUE)
        if self._default_queue and DEFAULT_QUEUE not in explicit:
            queues[DEFAULT_QUEUE] = implicit_queue(DEFAULT_QUEUE)
        queues.update(explicit)
        return queues

    def _rebuild(self, explicit: dict[str, QueueSpec]) -> None:
        self._queues = self._with_implicit(explicit)
        self._children = {name: [] for name in self._queues}
        for name, spec in self._queues.items():
            if spec.parent is not None:
                self._children[spec.parent].append(name)

    # -- reading -------------------------------------------------------------------------------------------
    def __contains__(self, name: object) -> bool:
        return name in self._queues

    def __iter__(self) -> Iterator[str]:
        """Queue names: implicit queues first, then in the order they were added."""
        return iter(self._queues)

    def __len__(self) -> int:
        return len(self._queues)

    def get(self, name: str) -> QueueSpec:
        try:
            return self._queues[name]
        except KeyError:
            raise QueueNotFoundError(f"queue {name}: not found") from None

    def specs(self) -> list[QueueSpec]:
        return list(self._queues.values())

    def parent(self, name: str) -> str | None:
        return self.get(name).parent

    def children(self, name: str) -> list[str]:
        self.get(name)
        return list(self._children[name])

    def is_leaf(self, name: str) -> bool:
        return not self.children(name)

    def ancestors(self, name: str) -> list[str]:
        """The queue's ancestors from the top of the tree down to its parent."""
        chain = []
        parent = self.get(name).parent
        while parent is not None:
            chain.append(parent)
            parent = self._queues[parent].parent
        return chain[::-1]


def _as_spec(spec: Any) -> QueueSpec:
    return spec if isinstance(spec, QueueSpec) else QueueSpec.from_object(spec)


def _check_links(queues: Mapping[str, QueueSpec]) -> None:
    """Every parent exists and no chain of parents comes back to where it started."""
    for name, spec in queues.items():
        if spec.parent is not None and spec.parent not in queues:
            raise QueueNotFoundError(f"queue {name}: parent {spec.parent}: no such queue")
    for name in queues:
        seen = [name]
        parent = queues[name].parent
        while parent is not None:
            if parent in seen:
                cycle = " -> ".join(seen[seen.index(parent) :] + [parent])
                raise ValueError(f"queue {name}: parent: cycle in queue parents ({cycle})")
            seen.append(parent)
            parent = queues[parent].parent
