"""A pure-Python kube-scheduler v1.34 DefaultPreemption (PostFilter), straight from
pkg/scheduler/framework/preemption/preemption.go and plugins/defaultpreemption/default_preemption.go, walking pods
one by one: the reference that vcore's native dry run (``Scheduler.preempt``) is compared with.

It covers the filters the comparison generates, in kube-scheduler's order, each giving the first failing plugin's
status: NodeUnschedulable, TaintToleration, NodeAffinity (nodeSelector and required terms), NodePorts,
NodeResourcesFit (cpu, memory, pod count) and InterPodAffinity (required pod anti-affinity both ways; required pod
affinity is refused), every one re-evaluated from the bound pods at each look. Filtering runs as
RunFilterPluginsWithNominatedPods does: pending pods nominated to the node, of the preemptor's priority or higher,
count as there first; when the pod fits beside them it must fit without them too.

Where kube-scheduler leaves an order open, the reference fixes it as vcore does: victims of equal priority and start
time are ordered by key (kube's sort.Slice is not stable), and among candidates tied on every criterion the first in
DryRunPreemption's list wins (kube iterates a map); candidates are found walking the nodes one at a time (kube's
parallelism 1).
"""

from __future__ import annotations

import datetime
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tests.reference import RefNode, RefPod, fit_reasons, node_affinity_matches, tolerated

NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NEVER = "not eligible due to preemptionPolicy=Never."
TERMINATING = "not eligible due to a terminating pod on the nominated node."

R_UNSCHEDULABLE = "node(s) were unschedulable"
R_TAINT = "node(s) had untolerated taint(s)"
R_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
R_PORTS = "node(s) didn't have free ports for the requested pod ports"
R_POD_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
R_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
UNRESOLVABLE = {R_UNSCHEDULABLE, R_TAINT, R_AFFINITY}  # fwk.UnschedulableAndUnresolvable


def unresolvable(pod: Pod, node: RefNode, reasons: list[str]) -> bool:
    """Whether a node's failure is UnschedulableAndUnresolvable: its first plugin's status, or NodeResourcesFit's
    when the pod asks for more of a resource than the node's allocatable (fit.go: InsufficientResource.Unresolvable)."""
    if not reasons:
        return False
    if reasons[0] in UNRESOLVABLE:
        return True
    asked = [r[len("Insufficient ") :] for r in reasons if r.startswith("Insufficient ")]
    return any(pod.ref.requests.get(name, 0) > node.alloc(name) for name in asked)


MAX_INT32 = 2**31 - 1


def _seconds(value: Any) -> int | None:
    if value is None:
        return None
    when = datetime.datetime.fromisoformat(value)
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return int(when.timestamp())


def _match_labels(selector: dict | None, labels: dict[str, str]) -> bool:
    """A metav1.LabelSelector with matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist)."""
    if selector is None:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e["key"], e["operator"], e.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


@dataclass
class Term:
    selector: dict
    topology_key: str
    namespaces: frozenset[str]


@dataclass
class Pod:
    """What preemption reads of a v1.Pod (API dict)."""

    key: str
    name: str
    namespace: str
    labels: dict[str, str]
    priority: int
    start: int | None  # status.startTime, Unix seconds; None: unknown (kube reads it as "now")
    ref: RefPod  # requests, tolerations, node affinity
    host_ports: set[tuple[str, int]]  # (protocol, port), host IP 0.0.0.0
    anti_affinity: list[Term]
    policy: str
    nominated: str
    terminating_by_preemption: bool

    @classmethod
    def from_dict(cls, pod: dict) -> Pod:
        meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
        ns = meta.get("namespace") or "default"
        ports = set()
        for c in spec.get("containers") or []:
            for p in c.get("ports") or []:
                if p.get("hostPort"):
                    ports.add((p.get("protocol") or "TCP", int(p["hostPort"])))
        aff = spec.get("affinity") or {}

        def terms(kind: str) -> list[Term]:
            required = (aff.get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
            return [
                Term(t.get("labelSelector") or {}, t["topologyKey"], frozenset(t.get("namespaces") or [ns]))
                for t in required
            ]

        preempted = bool(meta.get("deletionTimestamp")) and any(
            (c.get("type"), c.get("status"), c.get("reason")) == ("DisruptionTarget", "True", "PreemptionByScheduler")
            for c in status.get("conditions") or []
        )
        if terms("podAffinity"):
            raise NotImplementedError("the preemption reference does not model required pod affinity")
        return cls(
            key=f"{ns}/{meta['name']}",
            name=meta["name"],
            namespace=ns,
            labels=dict(meta.get("labels") or {}),
            priority=int(spec.get("priority") or 0),
            start=_seconds(status.get("startTime")),
            ref=RefPod.from_dict(pod),
            host_ports=ports,
            anti_affinity=terms("podAntiAffinity"),
            policy=spec.get("preemptionPolicy") or "PreemptLowerPriority",
            nominated=status.get("nominatedNodeName") or "",
            terminating_by_preemption=preempted,
        )

    def importance(self) -> tuple:
        """util.MoreImportantPod as a sort key: higher priority, then the earlier start (unknown: latest), then key."""
        return (-self.priority, float("inf") if self.start is None else self.start, self.key)


@dataclass
class Pdb:
    namespace: str
    selector: dict | None
    allowed: int
    disrupted: frozenset[str]

    @classmethod
    def from_dict(cls, pdb: dict) -> Pdb:
        meta, spec, status = pdb.get("metadata") or {}, pdb.get("spec") or {}, pdb.get("status") or {}
        return cls(
            meta.get("namespace") or "default",
            spec.get("selector"),
            int(status.get("disruptionsAllowed") or 0),
            frozenset(status.get("disruptedPods") or {}),
        )

    def covers(self, pod: Pod) -> bool:
        """filterPodsWithPDBViolation's match: same namespace, a non-empty selector matching the pod's labels."""
        selector = self.selector or {}
        if pod.namespace != self.namespace or not pod.labels:
            return False
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            return False
        return _match_labels(selector, pod.labels)


@dataclass
class Result:
    node: str | None
    victims: tuple[str, ...] = ()
    pdb_violations: int = 0
    message: str = ""
    candidates: tuple[tuple[str, tuple[str, ...], int], ...] = ()


@dataclass
class Cluster:
    nodes: dict[str, RefNode] = field(default_factory=dict)  # in insertion order
    bound: dict[str, tuple[str, Pod]] = field(default_factory=dict)  # key -> (node, pod); change via _place/_take
    on_node: dict[str, dict[str, Pod]] = field(default_factory=dict)  # node -> its bound pods (an index of `bound`)
    with_anti: dict[str, tuple[str, Pod]] = field(default_factory=dict)  # bound pods with required anti-affinity
    pending: dict[str, Pod] = field(default_factory=dict)  # pods waiting (possibly nominated)
    pdbs: list[Pdb] = field(default_factory=list)

    def add_node(self, node: dict) -> None:
        n = RefNode.from_dict(node)
        self.nodes[n.name] = n

    def bind(self, pod: dict) -> None:
        self._place(Pod.from_dict(pod), pod["spec"]["nodeName"])

    def _place(self, pod: Pod, node: str) -> None:
        self.bound[pod.key] = (node, pod)
        self.on_node.setdefault(node, {})[pod.key] = pod
        if pod.anti_affinity:
            self.with_anti[pod.key] = (node, pod)

    def _take(self, key: str) -> tuple[str, Pod]:
        node, pod = self.bound.pop(key)
        del self.on_node[node][key]
        self.with_anti.pop(key, None)
        return node, pod

    def add_pending(self, pod: dict) -> None:
        p = Pod.from_dict(pod)
        self.pending[p.key] = p

    def add_pdb(self, pdb: dict) -> None:
        self.pdbs.append(Pdb.from_dict(pdb))

    def pods_on(self, node: str) -> list[Pod]:
        return list(self.on_node.get(node, {}).values())

    # -- filters ---------------------------------------------------------------------------------------------
    def _topology_pods(self, node: RefNode, key: str) -> list[Pod]:
        """Bound pods on nodes sharing the node's value of a topology label (none when it lacks the label)."""
        if key not in node.labels:
            return []
        value = node.labels[key]
        return [p for n, p in self.bound.values() if self.nodes[n].labels.get(key) == value]

    def _term_matches(self, term: Term, pod: Pod) -> bool:
        return pod.namespace in term.namespaces and _match_labels(term.selector, pod.labels)

    def filter(self, pod: Pod, node: RefNode) -> list[str]:
        """The first failing filter plugin's reasons; [] when the pod fits."""
        if node.unschedulable and not tolerated(
            pod.ref.tolerations, ("node.kubernetes.io/unschedulable", "", "NoSchedule")
        ):
            return [R_UNSCHEDULABLE]
        for taint in node.taints:
            if taint[2] in ("NoSchedule", "NoExecute") and not tolerated(pod.ref.tolerations, taint):
                return [R_TAINT]
        if not node_affinity_matches(pod.ref, node):
            return [R_AFFINITY]
        here = self.pods_on(node.name)
        taken = set().union(*(p.host_ports for p in here)) if here else set()
        if pod.host_ports & taken:
            return [R_PORTS]
        reasons = fit_reasons(pod.ref, node, self._usage(here))
        if reasons:
            return reasons
        for term in pod.anti_affinity:
            if any(self._term_matches(term, p) for p in self._topology_pods(node, term.topology_key)):
                return [R_POD_ANTI_AFFINITY]
        for n, p in self.with_anti.values():
            for term in p.anti_affinity:
                key = term.topology_key
                if (
                    key in node.labels
                    and self.nodes[n].labels.get(key) == node.labels[key]
                    and self._term_matches(term, pod)
                ):
                    return [R_EXISTING_ANTI_AFFINITY]
        return []

    @staticmethod
    def _usage(pods: list[Pod]):
        from tests.reference import NodeUsage

        u = NodeUsage()
        for p in pods:
            for r, v in p.ref.requests.items():
                u.requested[r] = u.requested.get(r, 0) + v
            u.n_pods += 1
        return u

    def filter_with_nominated(self, pod: Pod, node: RefNode) -> list[str]:
        """RunFilterPluginsWithNominatedPods."""
        nominees = [
            p
            for p in self.pending.values()
            if p.nominated == node.name and p.priority >= pod.priority and p.key != pod.key and p.key not in self.bound
        ]
        for p in nominees:
            self._place(p, node.name)
        try:
            first = self.filter(pod, node)
        finally:
            for p in nominees:
                self._take(p.key)
        if first or not nominees:
            return first
        return self.filter(pod, node)

    # -- preemption ------------------------------------------------------------------------------------------
    def _split_by_budgets(self, victims: list[Pod]) -> tuple[list[Pod], list[Pod]]:
        """filterPodsWithPDBViolation."""
        allowed = [pdb.allowed for pdb in self.pdbs]
        violating, keeping = [], []
        for p in victims:
            violated = False
            for i, pdb in enumerate(self.pdbs):
                if not pdb.covers(p) or p.name in pdb.disrupted:
                    continue
                allowed[i] -= 1
                violated |= allowed[i] < 0
            (violating if violated else keeping).append(p)
        return violating, keeping

    def select_victims_on_node(self, pod: Pod, node: RefNode) -> tuple[list[Pod], int, list[str]]:
        """(victims most important first, PDB violations, []) or ([], 0, the reasons it fails)."""
        potential = [p for p in self.pods_on(node.name) if p.priority < pod.priority]
        if not potential:
            return [], 0, [NO_VICTIMS]
        removed = {p.key: self._take(p.key) for p in potential}
        try:
            reasons = self.filter_with_nominated(pod, node)
            if reasons:
                return [], 0, reasons
            potential.sort(key=Pod.importance)
            violating, keeping = self._split_by_budgets(potential)
            victims, violations = [], 0
            for group, counts in ((violating, True), (keeping, False)):
                for p in group:
                    self._place(p, node.name)
                    if not self.filter_with_nominated(pod, node):
                        continue
                    self._take(p.key)
                    victims.append(p)
                    violations += counts
            victims.sort(key=Pod.importance)
            return victims, violations, []
        finally:
            for key, (n, p) in removed.items():
                if key not in self.bound:
                    self._place(p, n)

    def preempt(self, pod_obj: dict, *, offset: int, percentage: int = 10, absolute: int = 100) -> Result:
        pod = Pod.from_dict(pod_obj)
        if pod.policy == "Never":
            return Result(None, message="preemption: " + NEVER)
        statuses = {name: self.filter_with_nominated(pod, node) for name, node in self.nodes.items()}
        if pod.nominated in self.nodes:  # PodEligibleToPreemptOthers
            status = statuses[pod.nominated]
            if not unresolvable(pod, self.nodes[pod.nominated], status) and any(
                p.priority < pod.priority and p.terminating_by_preemption for p in self.pods_on(pod.nominated)
            ):
                return Result(None, message="preemption: " + TERMINATING)
        potential = [
            name for name, reasons in statuses.items() if reasons and not unresolvable(pod, self.nodes[name], reasons)
        ]
        tried: dict[str, list[str]] = {}
        non_violating: list[tuple[str, list[Pod], int]] = []
        violating: list[tuple[str, list[Pod], int]] = []
        if potential:
            n = len(potential)
            wanted = min(max(n * percentage // 100, absolute), n)
            for i in range(n):
                if non_violating and len(non_violating) + len(violating) >= wanted:
                    break
                name = potential[(offset + i) % n]
                victims, violations, reasons = self.select_victims_on_node(pod, self.nodes[name])
                if reasons:
                    tried[name] = reasons
                    continue
                group = non_violating if violations == 0 else violating
                if len(group) < wanted:
                    group.append((name, victims, violations))
        candidates = non_violating + violating
        if not candidates:
            counts: Counter[str] = Counter()
            for reasons in tried.values():
                counts.update(reasons)
            if len(self.nodes) > len(tried):
                counts[NOT_HELPFUL] += len(self.nodes) - len(tried)
            parts = sorted(f"{c} {r}" for r, c in counts.items())
            return Result(None, message=f"preemption: 0/{len(self.nodes)} nodes are available: {', '.join(parts)}.")
        name, victims, violations = pick_one_node(candidates)
        return Result(
            name,
            tuple(p.key for p in victims),
            violations,
            candidates=tuple((c, tuple(p.key for p in vs), v) for c, vs, v in candidates),
        )


def pick_one_node(candidates: list[tuple[str, list[Pod], int]]) -> tuple[str, list[Pod], int]:
    """pickOneNodeForPreemption: each criterion keeps the best; the first left wins."""

    def earliest_start_of_most_important(victims: list[Pod]) -> float:
        top = max(p.priority for p in victims)
        return min(float("inf") if p.start is None else p.start for p in victims if p.priority == top)

    criteria = [
        lambda c: -c[2],
        lambda c: -c[1][0].priority,
        lambda c: -sum(p.priority + MAX_INT32 + 1 for p in c[1]),
        lambda c: -len(c[1]),
        lambda c: earliest_start_of_most_important(c[1]),
    ]
    left = list(candidates)
    for score in criteria:
        best = max(score(c) for c in left)
        left = [c for c in left if score(c) == best]
        if len(left) == 1:
            break
    return left[0]
