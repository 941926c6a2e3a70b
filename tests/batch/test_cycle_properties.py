"""Random batch workloads over many cycles, preempt and reclaim on (a hypothesis state machine): gangs of several
roles and priorities arrive in queues with capabilities, run, finish, are deleted (their pods Releasing until they
go), and the victims of preempt and reclaim leave some cycles later. After every cycle:

* no node is over-committed;
* no eviction leaves its gang with fewer running pods than minMember, nor (where role minimums bind: minMember at
  least their sum) a role it takes a pod of below its minTaskMember;
* no queue holds more than its capability;
* every binding is returned exactly once: the pods bound during the cycle are exactly the result's bindings, each
  once, each where the cluster says it is;
* every eviction is of a pod that was running, and stays accounted (Releasing) until it is removed;
* the pods of a SubJob (a gang whose subGroupPolicy splits it by a label, Volcano's SubJob model) that request
  something and are not Releasing run within one leaf HyperNode, when its policy's limit is the leaf tier;
* with Volcano's nodegroup plugin on (nodes in two groups, each queue requiring some of them, a queue's groups
  changing between cycles), every pod bound runs in a group its queue requires as the cycle saw it.

Between cycles the pods bound start running (phase Running, as their kubelets report), pods succeed or are deleted,
gangs arrive, and some of the victims go.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import vcore
from topology.trees import hn
from vcore.batch.nodegroups import NODE_GROUP_LABEL

from .builders import NS, node, pod, podgroup, priority_class, queue

CLASSES = ("lo", "mid", "hi")
TIERS = [
    {"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
    {
        "plugins": [
            {"name": "overcommit"},
            {"name": "drf"},
            {"name": "predicates"},
            {"name": "proportion"},
            {"name": "nodeorder"},
        ]
    },
]
CONF = {"actions": "enqueue, allocate, preempt, reclaim, backfill", "tiers": TIERS}
GROUPS = ("ga", "gb")  # node groups (volcano.sh/nodegroup-name), alternating over the nodes
REQUIRED = (("ga",), ("gb",), ("ga", "gb"))  # what a queue's spec.affinity may require


def requiring(groups: tuple[str, ...]) -> dict:
    """A Volcano Queue's spec.affinity that requires these node groups."""
    return {"nodeGroupAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(groups)}}


class CycleMachine(RuleBasedStateMachine):
    @initialize(
        n_nodes=st.integers(1, 4),
        cpus=st.lists(st.sampled_from(["2", "3", "4"]), min_size=4, max_size=4),
        queues=st.lists(
            st.tuples(st.integers(1, 4), st.one_of(st.none(), st.integers(2, 16)), st.booleans()),
            min_size=1,
            max_size=3,
        ),
        topology_aware=st.booleans(),
        tree=st.booleans(),
        node_groups=st.booleans(),
    )
    def setup(self, n_nodes, cpus, queues, topology_aware, tree, node_groups):
        self.cluster = vcore.Cluster()
        self.node_group: dict[str, str] = {}  # node -> its group, with the nodegroup plugin on
        for i in range(n_nodes):
            obj = node(f"n{i}", cpus[i], "64Gi")
            if node_groups:
                self.node_group[f"n{i}"] = GROUPS[i % 2]
                obj["metadata"].setdefault("labels", {})[NODE_GROUP_LABEL] = GROUPS[i % 2]
            self.cluster.add_node(obj)
        self.leaf: dict[str, str] = {}  # node -> its leaf HyperNode (none without a tree)
        if tree:  # two leaves (the first half of the nodes, the rest) under one spine
            halves = {"l0": [f"n{i}" for i in range(n_nodes) if i < (n_nodes + 1) // 2]}
            halves["l1"] = [f"n{i}" for i in range(n_nodes) if f"n{i}" not in halves["l0"]]
            leaves = [hn(name, 1, members) for name, members in halves.items() if members]
            self.cluster.set_hypernodes([*leaves, hn("sp", 2, children=[h["metadata"]["name"] for h in leaves])])
            self.leaf = {n: name for name, members in halves.items() for n in members}
        for value, name in zip((10, 100, 1000), CLASSES):
            self.cluster.add_priority_class(priority_class(name, value))
        self.capability: dict[str, int] = {}
        self.queue_objects: dict[str, dict] = {}
        self.required: dict[str, tuple[str, ...]] = {}  # queue -> the groups it requires, with the plugin on
        for i, (weight, cap, reclaimable) in enumerate(queues):
            q = queue(f"q{i}", weight, capability={"cpu": str(cap)} if cap else None, reclaimable=reclaimable)
            if node_groups:
                self.required[f"q{i}"] = REQUIRED[i % len(REQUIRED)]
                q["spec"]["affinity"] = {
                    "nodeGroupAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": list(self.required[f"q{i}"])
                    }
                }
            self.cluster.add_queue(q)
            self.queue_objects[f"q{i}"] = q
            if cap:
                self.capability[f"q{i}"] = cap * 1000
        self.queues = [f"q{i}" for i in range(len(queues))]
        conf = dict(CONF)
        if node_groups:
            conf["tiers"] = [TIERS[0], {"plugins": [*TIERS[1]["plugins"], {"name": "nodegroup"}]}]
        if topology_aware:
            conf["configurations"] = [{"name": "preempt", "arguments": {"enableTopologyAwarePreemption": True}}]
        self.scheduler = vcore.Scheduler(self.cluster, cycle=conf, seed=7)
        self.groups: dict[str, dict] = {}  # key -> the PodGroup object
        self.evicted: list[str] = []  # victims not gone yet
        self.n = 0

    # -- what happens between cycles -------------------------------------------------------------------------
    @rule(data=st.data(), n=st.integers(1, 3))
    def gangs_arrive(self, data, n):
        for _ in range(n):
            self._gang(data)

    def _gang(self, data: st.DataObject) -> None:
        name = f"g{self.n}"
        self.n += 1
        roles = data.draw(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 2)), min_size=1, max_size=2))
        size = sum(n for n, _ in roles)
        min_task = {f"r{i}": min(m, n) for i, (n, m) in enumerate(roles) if min(m, n)}
        min_member = data.draw(st.integers(0, size))  # elastic gangs (below their size) are the ones that yield
        klass = data.draw(st.sampled_from(CLASSES))
        q = data.draw(st.sampled_from(self.queues))
        cpu = data.draw(st.sampled_from(["1", "1", "2"]))
        pg = podgroup(
            name,
            min_member,
            queue=q,
            min_task=min_task or None,
            priority_class=klass,
            created=f"2026-01-01T00:{self.n // 60:02d}:{self.n % 60:02d}Z",
        )
        parts = 0  # label values of a SubJob policy (0: none)
        if data.draw(st.integers(0, 3)) == 0:
            parts = data.draw(st.integers(1, 3))
            pg["spec"]["subGroupPolicy"] = [
                {
                    "name": "sg",
                    "subGroupSize": data.draw(st.integers(1, 3)),
                    "minSubGroups": data.draw(st.integers(0, parts)),
                    "matchLabelKeys": ["part"],
                    "networkTopology": data.draw(
                        st.sampled_from([{"mode": "hard", "highestTierAllowed": 1}, {"mode": "soft"}])
                    ),
                }
            ]
        self.cluster.add_podgroup(pg)
        self.groups[f"{NS}/{name}"] = pg
        i = 0
        for r, (n, _) in enumerate(roles):
            for _ in range(n):
                best_effort = data.draw(st.integers(0, 9)) == 0
                obj = pod(
                    f"{name}-{i}",
                    name,
                    None if best_effort else cpu,
                    None if best_effort else "1Gi",
                    role=f"r{r}",
                    priority_class=klass,
                )
                if parts:
                    obj["metadata"]["labels"] = {"part": str(i % parts)}
                self.cluster.add_pod(obj)
                i += 1

    @precondition(lambda self: self.required)
    @rule(data=st.data())
    def a_queue_changes_groups(self, data):
        """A queue requires other node groups: its pods still waiting go only there from the next cycle on."""
        name = data.draw(st.sampled_from(sorted(self.required)))
        self.required[name] = data.draw(st.sampled_from(REQUIRED))
        q = self.queue_objects[name]
        q["spec"]["affinity"] = requiring(self.required[name])
        self.cluster.update_queue(q)

    @precondition(lambda self: self.evicted)
    @rule(data=st.data())
    def victims_go(self, data):
        """Some of the evicted pods terminate (the others keep their node's room Releasing)."""
        for key in data.draw(st.lists(st.sampled_from(self.evicted), unique=True)):
            self.cluster.remove_pod(key)
            self.evicted.remove(key)

    @precondition(lambda self: self._running())
    @rule(data=st.data())
    def a_pod_is_deleted(self, data):
        """A running pod gets a deletionTimestamp (Releasing: it holds its room until it is gone), or goes."""
        key = data.draw(st.sampled_from(self._running()))
        obj = self._object(key)
        if data.draw(st.booleans()):
            obj["metadata"]["deletionTimestamp"] = "2026-01-02T00:00:00Z"
            self.cluster.update_pod(obj)
        else:
            self.cluster.remove_pod(key)

    @precondition(lambda self: self._running())
    @rule(data=st.data())
    def a_pod_succeeds(self, data):
        obj = self._object(data.draw(st.sampled_from(self._running())))
        obj["status"] = {"phase": "Succeeded"}
        self.cluster.update_pod(obj)

    # -- the cycle -------------------------------------------------------------------------------------------
    @rule()
    def a_cycle_runs(self):
        before = self._bound()
        running_before = {k for k in before if not self._releasing(k)}
        result = self.scheduler.run_cycle()
        after = self._bound()
        binds = [b.pod for b in result.bindings if b.node is not None]
        assert len(binds) == len(set(binds)), f"a binding returned twice: {Counter(binds).most_common(1)}"
        assert set(binds) == after - before, (
            f"bound without a binding: {after - before - set(binds)}; "
            f"returned but not bound: {set(binds) - (after - before)}"
        )
        for b in result.bindings:
            assert self.cluster.node_of(b.pod) == b.node
            if self.required:  # IgnoredDuringExecution: only where the cycle binds
                group = self.cluster._batch.pods[b.pod].group
                q = self.groups[group]["spec"]["queue"] if group else "default"
                assert self.node_group[b.node] in self.required.get(q, ()), f"{b.pod} of {q} bound on {b.node}"
        victims = {e.victim for e in result.evictions}
        assert len(victims) == len(result.evictions), "a pod evicted twice"
        for e in result.evictions:
            assert e.victim in running_before, f"{e.victim} was not running"
            assert self.cluster.node_of(e.victim) == e.node, "an evicted pod holds its room until it goes"
        self._check_gangs_after_evictions(victims)
        self.evicted += sorted(victims)
        for key in sorted(set(binds)):  # the kubelets start what was bound (Volcano reclaims only Running pods)
            self.cluster.update_pod(self._object(key))

    def _check_gangs_after_evictions(self, victims: set[str]) -> None:
        pods = self.cluster._batch.pods
        hit = {pods[v].group for v in victims}
        # A role is left short by an eviction only when a victim was of that role: a role already short (its pod
        # deleted, no replacement yet) may lose nothing, but its gang's other roles may still give victims.
        roles_hit = {(pods[v].group, pods[v].role) for v in victims}
        for key in hit:
            pg = self.groups[key]
            members = self.cluster._batch.members.get(key, {})
            running = [
                k
                for k, info in members.items()
                if self.cluster.node_of(k) is not None and not self._releasing(k) and not info.terminated
            ]
            succeeded = sum(1 for info in members.values() if info.phase == "Succeeded")
            assert len(running) + succeeded >= pg["spec"]["minMember"], (
                f"an eviction left {key} with {len(running)} running of its minimum {pg['spec']['minMember']}"
            )
            min_task = pg["spec"].get("minTaskMember") or {}
            if min_task and pg["spec"]["minMember"] >= sum(min_task.values()):
                roles = Counter(members[k].role for k in running)
                roles.update(info.role for info in members.values() if info.phase == "Succeeded")
                for role, n in min_task.items():
                    if (key, role) in roles_hit:
                        assert roles[role] >= n, f"an eviction left role {role} of {key} with {roles[role]} of {n}"

    # -- invariants ------------------------------------------------------------------------------------------
    @invariant()
    def no_node_is_over_committed(self):
        if not hasattr(self, "cluster"):
            return
        req, alloc = self.cluster.requested_matrix, self.cluster.allocatable_matrix
        assert (req <= alloc)[:, self.cluster.live_mask].all(), "a node is over-committed"

    @invariant()
    def no_queue_holds_more_than_its_capability(self):
        if not hasattr(self, "cluster"):
            return
        held: Counter[str] = Counter()
        batch = self.cluster._batch
        for key in self._bound():
            info = batch.pods[key]
            if info.group is not None and not self._releasing(key):
                held[self.groups[info.group]["spec"]["queue"]] += dict(batch.shapes[info.shape]).get(0, 0)
        for q, cap in self.capability.items():
            assert held[q] <= cap, f"queue {q} holds {held[q]}m cpu, its capability is {cap}m"

    @invariant()
    def each_sub_job_runs_in_one_leaf(self):
        if not hasattr(self, "cluster") or not self.leaf:
            return
        batch = self.cluster._batch
        leaves: dict[tuple[str, str], set[str]] = {}
        for key in self._bound():
            info = batch.pods[key]
            if info.group is None or info.best_effort:  # backfill places best-effort pods anywhere, as Volcano's
                continue
            if self._releasing(key):  # an evicted pod no longer holds its SubJob's HyperNode (Volcano's session
                continue  # drops a SubJob's allocated HyperNode once none of its tasks is allocated)
            policies = self.groups[info.group]["spec"].get("subGroupPolicy") or []
            if policies and policies[0]["networkTopology"].get("highestTierAllowed") == 1:
                node_name = self.cluster.node_of(key)
                assert node_name is not None
                leaves.setdefault((info.group, info.labels["part"]), set()).add(self.leaf[node_name])
        for (group, part), where in leaves.items():
            assert len(where) == 1, f"SubJob part={part} of {group} runs in leaves {sorted(where)}"

    # -- helpers ---------------------------------------------------------------------------------------------
    def _bound(self) -> set[str]:
        return {k for n in self.cluster.node_names for k in self.cluster.pods_on(n)}

    def _releasing(self, key: str) -> bool:
        batch = self.cluster._batch
        return key in batch.releasing or key in batch.deleting

    def _running(self) -> list[str]:
        return sorted(k for k in self._bound() if not self._releasing(k) and not self.cluster._batch.pods[k].terminated)

    def _object(self, key: str) -> dict:
        info = self.cluster._batch.pods[key]
        namespace, name = key.split("/", 1)
        group = self.groups[info.group] if info.group else None
        requests = info.spec["requests"]
        obj = pod(
            name,
            group["metadata"]["name"] if group else None,
            f"{requests['cpu']}m" if "cpu" in requests else None,
            str(requests["memory"]) if "memory" in requests else None,
            role=info.role,
            priority_class=info.priority_class,
            node=self.cluster.node_of(key) or "",
            phase="Running",
        )
        obj["metadata"]["labels"] = dict(info.labels)
        assert obj["metadata"]["namespace"] == namespace
        return obj


CycleMachine.TestCase.settings = settings(
    max_examples=100, stateful_step_count=30, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
test_cycle_properties = CycleMachine.TestCase
