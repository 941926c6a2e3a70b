"""The sharding hand-over protocol (membership.py, shardwriter.publish, nodeshard.apply_assignment) against an
in-memory API server with the real one's concurrency rules: scenarios, and a property test that interleaves the
controller's moves, lagging watches, delayed writes and bindings in flight at random and checks that no node is
ever used by two instances."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings, strategies as st

from vcore_kube.membership import Membership
from vcore_kube.nodeshard import apply_assignment
from vcore_kube.shardwriter import publish

from .fake_shards import FakeApi


class Instance:
    """One scheduler instance: its membership, its lagging NodeShard watch, its bindings in flight and at most
    one status write waiting to run."""

    def __init__(self, api: FakeApi, shard: str, soft: bool = False) -> None:
        self.api, self.m = api, Membership(shard, soft=soft)
        self.events = api.watch()
        self.in_flight: Counter = Counter()
        self.request = None

    def consume(self, n: int = 10**9) -> None:
        while self.events and n > 0:
            name, obj = self.events.pop(0)
            self.m.shard_changed(name, obj)
            n -= 1

    def ask(self) -> None:
        if self.request is None:
            self.request = self.m.to_publish(lambda node: self.in_flight[node])

    def write(self) -> None:
        if self.request is not None:
            result = publish(self.api, self.m.shard, self.request)
            self.request = None
            self.m.published(result, lambda key: None)
            for node, keys in result.claimed.items():
                for key in keys:
                    self.m.pod_seen(key, node)

    def settle(self, rounds: int = 6) -> None:
        for _ in range(rounds):
            self.consume()
            self.ask()
            self.write()

    def active(self) -> set[str]:
        """Nodes this instance may place on, or still has bindings in flight to."""
        return set(self.m.usable()) | {n for n, k in self.in_flight.items() if k > 0}


def converge(*instances: Instance) -> None:
    for _ in range(6):
        for i in instances:
            i.settle(1)


def test_first_assignment_is_claimed_and_published():
    api = FakeApi()
    apply_assignment(api, {"a": ["n1", "n2"], "b": ["n3"]})
    a, b = Instance(api, "a"), Instance(api, "b")
    converge(a, b)
    assert a.m.usable() == {"n1", "n2"} and b.m.usable() == {"n3"}
    status = api.objects["a"]["status"]
    assert status["nodesInUse"] == ["n1", "n2"] and status["nodesToAdd"] == [] and status["nodesToRemove"] == []


def test_handover_waits_for_the_losers_bindings_and_its_status():
    api = FakeApi()
    apply_assignment(api, {"a": ["n1", "n2"], "b": ["n3"]})
    a, b = Instance(api, "a"), Instance(api, "b")
    converge(a, b)
    a.in_flight["n2"] += 1  # a binding of a's to n2 is on its way
    apply_assignment(api, {"a": ["n1"], "b": ["n2", "n3"]})
    converge(a, b)
    assert "n2" not in a.m.usable()  # a stopped placing on it at once
    assert a.m.releasing() == {"n2"} and api.objects["a"]["status"]["nodesToRemove"] == ["n2"]
    assert "n2" not in b.m.usable() and api.objects["b"]["status"]["nodesToAdd"] == ["n2"]  # waits for a
    a.in_flight["n2"] -= 1
    converge(a, b)
    assert api.objects["a"]["status"]["nodesInUse"] == ["n1"]
    assert b.m.usable() == {"n2", "n3"}


def test_claimed_node_is_used_once_its_pods_are_in_our_state():
    api = FakeApi()
    apply_assignment(api, {"a": ["n1"]})
    api.pods["n1"] = [{"metadata": {"name": "p", "namespace": "ns"}, "spec": {"nodeName": "n1"}}]
    a = Instance(api, "a")
    a.consume()
    a.ask()
    result = publish(api, "a", a.request)
    a.request = None
    a.m.published(result, lambda key: None)
    assert result.claimed == {"n1": frozenset({"ns/p"})}
    assert a.m.usable() == set() and a.m.settling == {"n1": {"ns/p"}}
    assert a.m.pod_seen("ns/p", "n1") and a.m.usable() == {"n1"}


def test_restart_reclaims_what_the_previous_run_published():
    api = FakeApi()
    apply_assignment(api, {"a": ["n1", "n2"]})
    first = Instance(api, "a")
    first.settle()
    again = Instance(api, "a")  # a new process of the same instance
    again.consume()
    assert again.m.usable() == set()  # nothing is used before it is verified again
    assert again.m.in_use == {"n1", "n2"}  # ... but nobody else may take them meanwhile
    again.settle()
    assert again.m.usable() == {"n1", "n2"}


def test_controller_takes_nodes_away_before_giving_them():
    """The claim's safety rests on it: a node is never in two shards' nodesDesired at once, in any prefix of the
    history an instance's watch delivers."""
    api = FakeApi()
    apply_assignment(api, {"a": ["n1", "n2"], "b": ["n3"], "c": []})
    log = api.watch()
    log.clear()
    apply_assignment(api, {"a": ["n3"], "b": ["n1"], "c": ["n2"]})  # a full rotation
    desired = {"a": {"n1", "n2"}, "b": {"n3"}, "c": set()}
    for name, obj in log:
        desired[name] = set(obj["spec"]["nodesDesired"])
        owners = Counter(n for nodes in desired.values() for n in nodes)
        assert max(owners.values(), default=0) <= 1, desired
    assert desired == {"a": {"n3"}, "b": {"n1"}, "c": {"n2"}}


def test_a_write_on_a_stale_read_fails_and_is_redone():
    api = FakeApi()
    apply_assignment(api, {"a": ["n1"]})
    a = Instance(api, "a")
    a.consume()
    a.ask()
    apply_assignment(api, {"a": []})  # the controller takes n1 away before the claim is written
    a.write()
    assert a.m.usable() == set()  # the claim re-read the spec: n1 is not desired any more
    converge(a)
    assert api.objects["a"]["status"]["nodesInUse"] == []


def test_soft_avoids_every_node_a_shard_knows():
    api = FakeApi()
    apply_assignment(api, {"a": ["n1"], "b": ["n2"]})
    a, b = Instance(api, "a", soft=True), Instance(api, "b", soft=True)
    converge(a, b)
    assert a.m.avoided() == {"n2"} and b.m.avoided() == {"n1"}


def test_own_nodeshard_deleted_stops_everything():
    api = FakeApi()
    apply_assignment(api, {"a": ["n1"]})
    a = Instance(api, "a")
    a.settle()
    api.delete("/apis/shard.volcano.sh/v1alpha1/nodeshards/a")
    a.consume()
    assert a.m.usable() == set() and a.m.to_publish(lambda n: 0) is None


# -- property ----------------------------------------------------------------------------------------------------
NODES = [f"n{i}" for i in range(5)]
SHARDS = ["a", "b", "c"]
step = st.one_of(
    st.tuples(st.just("move"), st.sampled_from(NODES), st.sampled_from(SHARDS)),
    st.tuples(st.just("round"), st.sampled_from(SHARDS)),  # watch caught up, then a write asked and done
    st.tuples(st.just("consume"), st.sampled_from(SHARDS), st.integers(1, 3)),
    st.tuples(st.just("ask"), st.sampled_from(SHARDS)),
    st.tuples(st.just("write"), st.sampled_from(SHARDS)),
    st.tuples(st.just("bind"), st.sampled_from(SHARDS), st.sampled_from(NODES)),
    st.tuples(st.just("bound"), st.sampled_from(SHARDS), st.sampled_from(NODES)),
)


@settings(max_examples=500, deadline=None)
@given(steps=st.lists(step, max_size=80))
def test_no_node_is_ever_used_by_two_instances(steps):
    api = FakeApi()
    owner = {n: SHARDS[i % len(SHARDS)] for i, n in enumerate(NODES)}
    apply_assignment(api, {s: [n for n, o in owner.items() if o == s] for s in SHARDS})
    inst = {s: Instance(api, s) for s in SHARDS}
    converge(*inst.values())
    for i in inst.values():  # every instance starts busy on all its nodes
        i.in_flight.update(i.m.usable())
    for kind, *args in steps:
        if kind == "move":
            node, to = args
            owner[node] = to
            apply_assignment(api, {s: [n for n, o in owner.items() if o == s] for s in SHARDS})
        elif kind == "round":
            inst[args[0]].settle(1)
        elif kind == "consume":
            inst[args[0]].consume(args[1])
        elif kind == "ask":
            inst[args[0]].ask()
        elif kind == "write":
            inst[args[0]].write()
        elif kind == "bind":  # a binding starts only on a node the instance may place on
            i = inst[args[0]]
            if args[1] in i.m.usable():
                i.in_flight[args[1]] += 1
        else:
            i = inst[args[0]]
            if i.in_flight[args[1]] > 0:
                i.in_flight[args[1]] -= 1
        users = Counter(n for i in inst.values() for n in i.active())
        assert all(k == 1 for k in users.values()), (users, {s: i.active() for s, i in inst.items()})
    # Liveness: with the watches caught up and every binding done, each node ends with its desired owner.
    for i in inst.values():
        i.in_flight.clear()
    converge(*inst.values())
    for s, i in inst.items():
        assert i.m.usable() == {n for n, o in owner.items() if o == s}
