"""Volcano's nodegroup plugin (pkg/scheduler/plugins/nodegroup): a Volcano Queue's ``spec.affinity`` names the node
groups (values of the ``volcano.sh/nodegroup-name`` node label) its jobs' tasks may run in, as a filter and a
node score.

The filter, per task and node:
- a node without the label is refused, unless the plugin's ``strict`` argument is false and the queue sets no
  group at all;
- a node with the label is refused when the queue sets no group; else its group is admitted when the queue
  requires or prefers it and does not require to avoid it, and always when it prefers to avoid it (Volcano's
  order of checks, kept as it is);
so with ``strict`` (the default) a queue without affinity runs nothing.

The score, added to the node's score: +100 for a required group, +50 for a preferred one, -1 (replacing both) for
a group it prefers to avoid; 0 for a node without the label.

With the plugin's ``enableHierarchy`` on, a queue without ``spec.affinity`` takes the nearest ancestor's (a queue
without a parent being root's child). ``enablePredicate`` and ``enableNodeOrder`` switch the two parts.

How vcore applies them: the filter becomes a required node-affinity expression on the label, ANDed into each
pending task's own node affinity and compiled into the task while its queue's rule stays the same, so every node
filter of the cycle (allocate, backfill, preempt, reclaim, the topology planner) honours it, and a refused node
reads as a node-affinity mismatch. The score becomes a per-node bonus beside the profile's node score where the
cycle ranks nodes for a task (allocate, and preempt's node order).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

import numpy as np

from vcore.batch import config as C
from vcore.batch.queue import ROOT_QUEUE, NodeGroupAffinity, QueueTree

if TYPE_CHECKING:
    from vcore._native import _core
    from vcore._native._convert import PodSpec, Requirement as SelectorRequirement, SelectorOperator, SelectorTerm
    from vcore.batch.job import Job
    from vcore.batch.pods import PodInfo
    from vcore.batch.state import BatchState


class Session(Protocol):
    """What the plugin reads of its cycle's session (:class:`vcore.batch.session.Session`, which asks the plugin
    and so is described here rather than imported)."""

    @property
    def batch(self) -> BatchState: ...
    @property
    def state(self) -> _core.ClusterState: ...


NODE_GROUP_LABEL = "volcano.sh/nodegroup-name"
BASE_SCORE = 100.0

#: Node-affinity expressions (key, operator, values), ANDed into every required node-selector term of a task.
Requirement = tuple[tuple[str, str, tuple[str, ...]], ...]
#: No node has the label and lacks it: what a queue whose rule admits no group asks.
NO_NODE: Requirement = ((NODE_GROUP_LABEL, "Exists", ()), (NODE_GROUP_LABEL, "DoesNotExist", ()))
UNLABELLED_ONLY: Requirement = ((NODE_GROUP_LABEL, "DoesNotExist", ()),)


def is_unset(affinity: NodeGroupAffinity | None) -> bool:
    """Whether a queue sets no group (no ``spec.affinity``, or one with every list empty)."""
    return affinity is None or not (
        affinity.required or affinity.preferred or affinity.anti_required or affinity.anti_preferred
    )


def admits(affinity: NodeGroupAffinity, group: str) -> bool:
    """The filter on a node of ``group`` for a queue that sets groups."""
    admitted = group in affinity.required or group in affinity.preferred
    if group in affinity.anti_required:
        admitted = False
    if group in affinity.anti_preferred:  # Volcano admits it again: preferring to avoid is not refusing
        admitted = True
    return admitted


def score(affinity: NodeGroupAffinity | None, group: str | None) -> float:
    """The node score of a node of ``group`` (None: the node lacks the label)."""
    if affinity is None or group is None:
        return 0.0
    total = 0.0
    if group in affinity.required:
        total += BASE_SCORE
    if group in affinity.preferred:
        total += 0.5 * BASE_SCORE
    if group in affinity.anti_preferred:
        total = -1.0
    return total


def requirement(affinity: NodeGroupAffinity | None, strict: bool) -> Requirement:
    """The filter as node-affinity expressions (only a group some list names can be admitted)."""
    if is_unset(affinity):
        return NO_NODE if strict else UNLABELLED_ONLY
    assert affinity is not None
    named = affinity.required | affinity.preferred | affinity.anti_required | affinity.anti_preferred
    allowed = tuple(sorted(g for g in named if admits(affinity, g)))
    return ((NODE_GROUP_LABEL, "In", allowed),) if allowed else NO_NODE


def inherited(queues: QueueTree, name: str) -> NodeGroupAffinity | None:
    """The queue's affinity, or its nearest ancestor's when it has none (Volcano: root is every parentless queue's
    parent)."""
    own = queues.get(name).node_groups
    if own is not None or name == ROOT_QUEUE:
        return own
    chain = queues.ancestors(name)[::-1]  # parent first
    if (not chain or chain[-1] != ROOT_QUEUE) and ROOT_QUEUE in queues:
        chain.append(ROOT_QUEUE)
    for ancestor in chain:
        if (affinity := queues.get(ancestor).node_groups) is not None:
            return affinity
    return None


def with_requirement(spec: PodSpec, expressions: Requirement) -> PodSpec:
    """A copy of a native pod spec whose required node affinity also asks ``expressions``."""
    added: list[SelectorRequirement] = [
        (key, cast("SelectorOperator", op), list(values)) for key, op, values in expressions
    ]
    terms = spec["required_terms"]
    required: list[SelectorTerm] = (
        [{"expressions": added, "fields": []}]
        if terms is None
        else [{"expressions": [*term["expressions"], *added], "fields": term["fields"]} for term in terms]
    )
    out = spec.copy()
    out["required_terms"] = required
    return out


def recompile(ssn: Session, tasks: list[PodInfo], rule: Requirement | None) -> None:
    """Compile ``rule`` into pending tasks (None: their own spec alone)."""
    if not tasks:
        return
    specs = [t.spec if rule is None else with_requirement(t.spec, rule) for t in tasks]
    for info, compiled in zip(tasks, ssn.state.compile_pods(specs)):
        ssn.batch.set_compiled(info, compiled, rule)


def release(ssn: Session) -> None:
    """Without the plugin: pending tasks an earlier cycle's configuration constrained get their own spec back."""
    batch = ssn.batch
    if batch.constrained:
        recompile(ssn, [batch.pods[k] for k in list(batch.constrained)], None)


class NodeGroups:
    """The nodegroup plugin of one configuration; ``open`` reads the queues and nodes as a cycle opens."""

    def __init__(self, option: C.PluginOption) -> None:
        self.strict = bool(option.arguments.get(C.NODEGROUP_STRICT, True))
        self.hierarchy = option.enabled(C.ENABLE_HIERARCHY)
        self.filters = option.enabled("enablePredicate")
        self.scores = option.enabled("enableNodeOrder")
        # One object per distinct requirement, across cycles: a task's compiled rule is checked by identity.
        self._interned: dict[Requirement, Requirement] = {}
        self._affinity: dict[str, NodeGroupAffinity | None] = {}
        self._requirements: dict[str, Requirement] = {}
        self._bonus: dict[str, np.ndarray | None] = {}
        self._labels: list[str | None] = []

    @staticmethod
    def from_config(config: C.CycleConfig) -> NodeGroups | None:
        option = config.plugin(C.NODEGROUP)
        if option is None:
            return None
        plugin = NodeGroups(option)
        return plugin if plugin.filters or plugin.scores else None

    def open(self, ssn: Session) -> None:
        queues = ssn.batch.queues
        self._affinity = {
            name: inherited(queues, name) if self.hierarchy else queues.get(name).node_groups for name in queues
        }
        self._requirements = {}
        if self.filters:
            for name, affinity in self._affinity.items():
                rule = requirement(affinity, self.strict)
                self._requirements[name] = self._interned.setdefault(rule, rule)
        self._labels = ssn.state.node_label_values(NODE_GROUP_LABEL) if self.scores else []
        self._bonus = {}

    def constrain(self, ssn: Session, job: Job) -> None:
        """Compile the filter of the job's queue into its pending tasks (again only when the rule changed)."""
        rule: Requirement | None = None
        if self.filters:  # a queue the cluster lacks: its jobs are never placed, and admit no node here either
            rule = self._requirements.get(job.queue, NO_NODE)
        recompile(ssn, [t for t in job.pending if t.node_groups is not rule], rule)

    def bonus(self, queue: str) -> np.ndarray | None:
        """Per node slot, the score the queue's tasks get there (None: 0 everywhere, or scoring is off)."""
        if not self.scores:
            return None
        if queue not in self._bonus:
            affinity = self._affinity.get(queue)
            per_group = {g: score(affinity, g) for g in set(self._labels) if g is not None}
            self._bonus[queue] = (
                np.array([per_group.get(g, 0.0) if g is not None else 0.0 for g in self._labels], dtype=np.float64)
                if any(per_group.values())
                else None
            )
        return self._bonus[queue]
