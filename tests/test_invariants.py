"""Stateful invariants: whatever sequence of add/update/remove(evict)/bind/unbind/schedule is applied, the
native accounting equals the sum of the bound pods' requests (tracked independently by the reference), and
schedule() never places a pod on a node it does not fit.

hypothesis.stateful drives vcore.Cluster / vcore.Scheduler and reference.ReferenceCluster side by side.
"""

from __future__ import annotations

import numpy as np
from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import reference as ref
import vcore
from conftest import fit_args, make_profile, node_dicts, pod_dicts

NODE_NAMES = [f"node{i}" for i in range(8)]
PROFILES = [
    make_profile(
        [("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1), ("NodeResourcesBalancedAllocation", 1)],
        pct=100,
    ),
    make_profile(
        [("NodeResourcesFit", 1), ("binpack", 2)],
        fit=fit_args("MostAllocated"),
        binpack={"binpack.weight": 1, "binpack.resources": "nvidia.com/gpu"},
        pct=100,
    ),
]


class ClusterMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.native = vcore.Cluster()
        self.reference = ref.ReferenceCluster()
        self.schedulers = [vcore.Scheduler(self.native, profile=p) for p in PROFILES]
        self.natives = [ref.profile_to_native(p) for p in PROFILES]
        self.counter = 0

    def _new_key(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    # -- nodes ----------------------------------------------------------------------------------------------
    @rule(data=st.data())
    def add_node(self, data):
        free = [n for n in NODE_NAMES if n not in self.reference.nodes]
        if not free:
            return
        node = data.draw(node_dicts(data.draw(st.sampled_from(free))))
        self.native.add_node(node)
        self.reference.add_node(node)

    @precondition(lambda self: self.reference.nodes)
    @rule(data=st.data())
    def update_node(self, data):
        name = data.draw(st.sampled_from(sorted(self.reference.nodes)))
        node = data.draw(node_dicts(name))
        self.native.update_node(node)
        self.reference.update_node(node)

    @precondition(lambda self: self.reference.nodes)
    @rule(data=st.data())
    def remove_node(self, data):
        name = data.draw(st.sampled_from(sorted(self.reference.nodes)))
        got = self.native.remove_node(name, evict=True)
        want = self.reference.remove_node(name, evict=True)
        assert sorted(got) == sorted(want)

    # -- pods -----------------------------------------------------------------------------------------------
    @precondition(lambda self: self.reference.nodes)
    @rule(data=st.data())
    def bind(self, data):
        name = data.draw(st.sampled_from(sorted(self.reference.nodes)))
        pod = data.draw(pod_dicts(self._new_key("b"), constraints=False))
        self.native.bind(pod, name)
        self.reference.bind(pod, name)

    @precondition(lambda self: self.reference.bound)
    @rule(data=st.data())
    def unbind(self, data):
        key = data.draw(st.sampled_from(sorted(self.reference.bound)))
        assert self.native.unbind(key) == self.reference.unbind(key)

    @precondition(lambda self: self.reference.nodes)
    @rule(data=st.data(), which=st.integers(0, len(PROFILES) - 1))
    def schedule(self, data, which):
        pods = [data.draw(pod_dicts(self._new_key("s"))) for _ in range(data.draw(st.integers(1, 4)))]
        placements = self.schedulers[which].schedule(pods)
        by_key = {p.pod: p.node for p in placements}

        def follow_native(key, best):
            chosen = by_key[key]
            assert chosen in best, f"{key}: native chose {chosen}, reference best {sorted(best)}"
            # not over-committed: the pod fits on top of what the node held before it
            pod = next(ref.RefPod.from_dict(p) for p in pods if ref.pod_key(p) == key)
            node, usage = self.reference.nodes[chosen], self.reference.usage(chosen)
            assert usage.n_pods + 1 <= node.alloc("pods")
            for r, v in pod.requests.items():
                assert usage.get(r) + v <= node.alloc(r), (key, chosen, r)
            return chosen

        steps = ref.reference_schedule(self.reference, pods, self.natives[which], choose=follow_native)
        for step in steps:
            assert by_key[step.pod] == step.node, step

    # -- invariants -----------------------------------------------------------------------------------------
    @invariant()
    def accounting_matches_bound_pods(self):
        names = self.native.resource_names
        req = np.asarray(self.native.requested_matrix)
        nz = np.asarray(self.native.nonzero_requested_matrix)
        live = np.asarray(self.native.live_mask)
        assert sorted(self.native.node_names) == sorted(self.reference.nodes)
        assert int(live.sum()) == len(self.reference.nodes)
        assert self.native.n_pods == len(self.reference.bound)
        for name in self.reference.nodes:
            i = self.native.node_index(name)
            usage = self.reference.usage(name)
            for axis, r in enumerate(names):
                want = usage.n_pods if r == "pods" else usage.get(r)
                assert int(req[axis, i]) == want, (name, r)
            assert (int(nz[0, i]), int(nz[1, i])) == (usage.nonzero_cpu, usage.nonzero_mem), name
            assert sorted(self.native.pods_on(name)) == sorted(p.key for p in self.reference.pods_on(name))
        # slots of removed nodes hold nothing
        dead = ~live
        if dead.any():
            assert not req[:, dead].any()

    @invariant()
    def allocatable_matches_nodes(self):
        names = self.native.resource_names
        alloc = np.asarray(self.native.allocatable_matrix)
        for name, node in self.reference.nodes.items():
            i = self.native.node_index(name)
            for axis, r in enumerate(names):
                assert int(alloc[axis, i]) == node.alloc(r), (name, r)


ClusterMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=25)
TestClusterMachine = ClusterMachine.TestCase
