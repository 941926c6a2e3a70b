"""Framework: the configured job plugins in tier order, answering the cycle's questions as Volcano's session does
(framework/session_plugins.go).

Built once per configuration; each cycle opens it (:meth:`Framework.open`). A plugin answers a part only when it
registers the part and the part's switch is on in its tier entry (``vcore.batch.plugins.base.PART_SWITCHES``; an
unset switch is on). The answers combine as Volcano combines them:

* job order, task order, queue order: the plugins' keys (or comparisons) in tier order, the first that differs
  decides; then the job's (queue's) creation time and name;
* job_ready, allocatable, preemptive: every answering plugin must agree (none answering: yes); overused: any;
* job_pipelined, job_enqueueable: tier by tier, a REJECT says no at once, a tier with a PERMIT says yes, and with no
  vote at all the answer is yes;
* job_starving: the first tier with an answering plugin decides (all of them must say starving); none: not starving;
* job_valid: the first plugin finding the job invalid says why;
* preemptable, reclaimable: the victims every plugin of a tier lets go (their intersection); a tier whose plugins
  leave none passes the question to the next tier; no tier deciding: no victims;
* victim_queue_order: the first plugin that tells the queues apart; else the reverse of the queue order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from vcore.batch import config as C
from vcore.batch.job import Job
from vcore.batch.nodegroups import NodeGroups
from vcore.batch.plugins.base import PART_SWITCHES, Candidate, JobPlugin, PluginSession, Preemptor
from vcore.batch.plugins.cdp import CooldownProtectionPlugin
from vcore.batch.plugins.conformance import ConformancePlugin
from vcore.batch.plugins.drf import DrfPlugin
from vcore.batch.plugins.gang import GangPlugin
from vcore.batch.plugins.overcommit import OvercommitPlugin
from vcore.batch.plugins.pdb import PdbPlugin
from vcore.batch.plugins.priority import PriorityPlugin
from vcore.batch.plugins.queue_shares import QueueSharePlugin
from vcore.batch.plugins.resourcequota import ResourceQuotaPlugin
from vcore.batch.plugins.sla import SlaPlugin
from vcore.batch.pods import PodInfo
from vcore.batch.shares.base import QueueShare

#: The job plugins by their volcano-scheduler.conf name (the queue-share plugins are QueueSharePlugin).
JOB_PLUGINS: dict[str, type[JobPlugin]] = {
    cls.name: cls
    for cls in (
        PriorityPlugin,
        GangPlugin,
        ConformancePlugin,
        DrfPlugin,
        OvercommitPlugin,
        PdbPlugin,
        SlaPlugin,
        CooldownProtectionPlugin,
        ResourceQuotaPlugin,
    )
}

JobKey = Callable[[Job], tuple[Any, ...]]
Vote = Callable[[Job], int]  # PERMIT, REJECT or ABSTAIN


def build_plugin(option: C.PluginOption) -> JobPlugin | None:
    """The job plugin of a tier entry (None for node-level and topology plugins, which are not job plugins)."""
    if option.name in C.SHARE_PLUGINS:
        return QueueSharePlugin(
            option.name, dict(option.arguments), option.path, hierarchy=option.switches.get(C.ENABLE_HIERARCHY, False)
        )
    cls = JOB_PLUGINS.get(option.name)
    return None if cls is None else cls(option.arguments, option.path)


class Framework:
    """The job plugins of one configuration, by tier (see the module docstring for how answers combine)."""

    def __init__(self, config: C.CycleConfig) -> None:
        self.tiers: list[list[tuple[C.PluginOption, JobPlugin]]] = []
        for tier in config.tiers:
            entries = [(option, plugin) for option in tier if (plugin := build_plugin(option)) is not None]
            self.tiers.append(entries)
        self.plugins = [plugin for tier in self.tiers for _, plugin in tier]
        self.shares = [p for p in self.plugins if isinstance(p, QueueSharePlugin)]
        # Per part, per tier, the plugins that answer it: the switches are fixed with the configuration.
        self.voters: dict[str, list[list[JobPlugin]]] = {
            part: [
                [p for option, p in tier if part in p.parts and (switch is None or option.enabled(switch))]
                for tier in self.tiers
            ]
            for part, switch in PART_SWITCHES.items()
        }
        self.flat = {part: [p for tier in tiers for p in tier] for part, tiers in self.voters.items()}
        # The node plugin whose filter and score follow the job's queue (kept across cycles: see NodeGroups).
        self.node_groups = NodeGroups.from_config(config)
        # The voting parts, per tier the voters' bound functions (asked once per job).
        self._enqueueable: list[list[Vote]] = [[p.job_enqueueable for p in t] for t in self.voters["job_enqueueable"]]
        self._pipelined: list[list[Vote]] = [[p.job_pipelined for p in t] for t in self.voters["job_pipelined"]]
        self.job_order_key = _composed([p.job_order_key for p in self.flat["job_order"]])
        self._task_keys = [p.task_order_key for p in self.flat["task_order"]]
        self._queue_keys = [getattr(p, "queue_key", None) for p in self.flat["queue_order"]]
        # The plugins that keep books on allocations (asked once per job placed: the others are not asked).
        self._bookkeepers = [p.on_allocate for p in self.plugins if type(p).on_allocate is not JobPlugin.on_allocate]
        self._unbookkeepers = [
            p.on_deallocate for p in self.plugins if type(p).on_deallocate is not JobPlugin.on_deallocate
        ]
        # The queue questions allocate asks once per job, as the voters' own functions (a queue-share plugin's are
        # its share plugin's): no lookup or layer between the cycle and the answer.
        self._overused = [p.queue_hook("overused") for p in self.flat["overused"]]
        self._headrooms = [p.queue_hook("headroom") for p in self.flat["allocatable"]]

    def attach(self, ssn: PluginSession) -> None:
        for plugin in self.plugins:
            plugin.attach(ssn)

    def open(self, ssn: PluginSession) -> None:
        for plugin in self.plugins:
            plugin.open(ssn)

    def answers(self, part: str) -> bool:
        """Whether any plugin answers the part (with its switch on)."""
        return bool(self.flat[part])

    def keeps_gangs(self, part: str) -> bool:
        """Whether the gang plugin votes on ``part`` (preemptable or reclaimable): then no victim may break a gang,
        whichever tier decides."""
        return any(isinstance(p, GangPlugin) for p in self.flat[part])

    # -- orders ----------------------------------------------------------------------------------------------
    @property
    def orders_tasks(self) -> bool:
        return bool(self._task_keys)

    def task_order_key(self, task: PodInfo) -> tuple[Any, ...]:
        return tuple(key(task) for key in self._task_keys)

    def queue_order(self, queues: Sequence[str], tie: Callable[[str], tuple[str, str]]) -> str:
        """The queue to serve first: the plugins' order, then ``tie`` (creation time and name)."""
        if len(queues) == 1:
            return queues[0]
        plugins = self.flat["queue_order"]
        keys = self._queue_keys
        if len(keys) == 1 and (key := keys[0]) is not None:  # Volcano's default: proportion's key, then the tie
            return min([(key(q), tie(q), q) for q in queues])[-1]
        if all(key is not None for key in keys):  # the order as keys: one call per plugin and queue
            return min([(*(k(q) for k in keys), tie(q), q) for q in queues])[-1]  # type: ignore[misc]

        def ahead(a: str, b: str) -> bool:
            for p in plugins:
                c = p.queue_order(a, b)
                if c:
                    return c < 0
            return tie(a) < tie(b)

        best = queues[0]
        for q in queues[1:]:
            if ahead(q, best):
                best = q
        return best

    def queue_compare(self, left: str, right: str, tie: Callable[[str], tuple[str, str]]) -> int:
        """QueueOrderFn as a comparison (negative: left first)."""
        for p in self.flat["queue_order"]:
            c = p.queue_order(left, right)
            if c:
                return c
        a, b = tie(left), tie(right)
        return (a > b) - (a < b)

    def victim_queue_compare(self, left: str, right: str, preemptor: str, tie: Callable[[str], tuple[str, str]]) -> int:
        """VictimQueueOrderFn as a comparison (negative: victims of ``left`` first)."""
        for p in self.flat["victim_queue_order"]:
            c = p.victim_queue_order(left, right, preemptor)
            if c:
                return c
        return -self.queue_compare(left, right, tie)

    # -- jobs ------------------------------------------------------------------------------------------------
    def job_valid(self, job: Job) -> tuple[str, str] | None:
        for p in self.flat["job_valid"]:
            why = p.job_valid(job)
            if why is not None:
                return why
        return None

    def job_ready(self, job: Job) -> bool:
        return all(p.job_ready(job) for p in self.flat["job_ready"])

    def job_pipelined(self, job: Job) -> bool:
        return _vote(self._pipelined, job)

    def job_enqueueable(self, job: Job) -> bool:
        return _vote(self._enqueueable, job)

    def job_enqueued(self, job: Job) -> None:
        for p in self.flat["job_enqueued"]:
            p.job_enqueued(job)

    def job_starving(self, job: Job) -> bool:
        for tier in self.voters["job_starving"]:
            if tier:
                return all(p.job_starving(job) for p in tier)
        return False

    # -- queues ----------------------------------------------------------------------------------------------
    def overused(self, queue: str) -> bool:
        for overused in self._overused:
            if overused(queue):
                return True
        return False

    def allocatable(self, queue: str, request: np.ndarray) -> bool:
        return all(p.allocatable(queue, request) for p in self.flat["allocatable"])

    def headroom(self, queue: str) -> np.ndarray | None:
        """What the queue may still be allocated per resource, as every allocatable plugin sees it (None: no
        plugin bounds it)."""
        room = None
        for headroom in self._headrooms:
            mine = headroom(queue)
            if mine is not None:
                room = mine if room is None else np.minimum(room, mine)
        return room

    def preemptive(self, queue: str, request: np.ndarray) -> bool:
        return all(p.preemptive(queue, request) for p in self.flat["preemptive"])

    # -- victims ---------------------------------------------------------------------------------------------
    def preemptable(self, preemptor: Preemptor, candidates: Sequence[Candidate]) -> list[Candidate]:
        return _victims(self.voters["preemptable"], "preemptable", preemptor, candidates)

    def reclaimable(self, reclaimer: Preemptor, candidates: Sequence[Candidate]) -> list[Candidate]:
        return _victims(self.voters["reclaimable"], "reclaimable", reclaimer, candidates)

    # -- events ----------------------------------------------------------------------------------------------
    def on_allocate(self, job: Job, request: np.ndarray) -> None:
        for on_allocate in self._bookkeepers:
            on_allocate(job, request)

    def on_deallocate(self, job: Job, request: np.ndarray) -> None:
        for on_deallocate in self._unbookkeepers:
            on_deallocate(job, request)

    def share_status(self) -> dict[str, QueueShare]:
        """The queues' standing as the first configured queue-share plugin sees it (empty: none configured)."""
        return self.shares[0].status() if self.shares else {}


def _composed(keys: list[Callable[[Job], Any]]) -> JobKey:
    """A job's order key: the plugins' keys, then its creation time and key (Volcano's last job order)."""
    if not keys:
        return lambda job: (job.creation, job.key)
    if len(keys) == 1:
        (a,) = keys
        return lambda job: (a(job), job.creation, job.key)
    if len(keys) == 2:
        a, b = keys
        return lambda job: (a(job), b(job), job.creation, job.key)
    if len(keys) == 3:  # Volcano's default tiers: priority, gang, drf (asked for every job, twice a cycle)
        a, b, c = keys
        return lambda job: (a(job), b(job), c(job), job.creation, job.key)
    return lambda job: (*(k(job) for k in keys), job.creation, job.key)


def _vote(tiers: list[list[Vote]], job: Job) -> bool:
    for tier in tiers:
        permitted = False
        for vote_on in tier:
            vote = vote_on(job)
            if vote < 0:
                return False
            if vote > 0:
                permitted = True
        if permitted:
            return True
    return True


def _victims(
    tiers: list[list[JobPlugin]], part: str, preemptor: Preemptor, candidates: Sequence[Candidate]
) -> list[Candidate]:
    for tier in tiers:
        victims: list[Candidate] | None = None
        for p in tier:
            chosen = getattr(p, part)(preemptor, candidates)
            if chosen is None:  # abstains
                continue
            if not chosen:
                victims = None
                break
            if victims is None:
                victims = list(chosen)
            else:
                keep = {c.key for c in chosen}
                victims = [v for v in victims if v.key in keep] or None  # Go's empty intersection is nil
        if victims:  # an empty intersection leaves the question to the next tier, as Volcano's nil list does
            return victims
    return []
