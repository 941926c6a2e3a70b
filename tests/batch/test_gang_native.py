"""The native gang placement (Engine.place_gang, fit_counts) against the pure-Python reference and by hand."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import reference as ref
import vcore
from conftest import GIB, container, make_node, make_profile, node_dicts, pod_dicts, profiles, req_pod
from test_reference_vs_native import build_both
from vcore._native import _core

from .gang_reference import reference_place_gang

UNLIMITED = 2**63 - 1


def _renamed(pod: dict, name: str) -> dict:
    out = copy.deepcopy(pod)
    out["metadata"]["name"] = name
    return out


@st.composite
def roomy_clusters(draw):
    """Nodes with room for several gang tasks each (labels, taints and small pod limits still vary), and a few
    pods already running."""
    nodes = []
    for i in range(draw(st.integers(1, 16))):
        node = draw(node_dicts(f"n{i}"))
        if draw(st.integers(0, 2)):  # most nodes take any task: choices between nodes are what is tested
            node["spec"] = {}
        alloc = node["status"]["allocatable"]
        alloc["pods"] = str(draw(st.sampled_from([110, 110, 3])))
        alloc["cpu"] = f"{draw(st.sampled_from([0, 2000, 4000, 8000, 16000]))}m"
        alloc["memory"] = str(draw(st.integers(1, 32)) * GIB)
        if draw(st.booleans()):
            alloc["nvidia.com/gpu"] = str(draw(st.integers(0, 4)))
        nodes.append(node)
    existing = [
        (f"n{draw(st.integers(0, len(nodes) - 1))}", _small(draw, pod_dicts(f"bound{j}", constraints=False), j))
        for j in range(draw(st.integers(0, len(nodes))))
    ]
    return nodes, existing


def _small(draw, pod_strategy, salt) -> dict:
    """A drawn pod whose requests are small next to a node (so gangs actually land), keeping its constraints."""
    pod = draw(pod_strategy)
    requests = {"cpu": f"{draw(st.integers(0, 2000))}m", "memory": str(draw(st.integers(0, 2 * GIB)))}
    if draw(st.integers(0, 3)) == 0:
        requests["nvidia.com/gpu"] = "1"
    pod["spec"]["containers"] = [container(requests)]
    pod["spec"].pop("initContainers", None)
    pod["spec"].pop("overhead", None)
    return pod


@st.composite
def gangs(draw):
    """Tasks drawn as copies of 1..3 templates (so runs of identical specs occur), with roles and minimums."""
    templates = [
        _small(draw, pod_dicts(f"t{i}", constraints=draw(st.integers(0, 2)) == 0), i)
        for i in range(draw(st.integers(1, 3)))
    ]
    tasks, roles = [], []
    for _ in range(draw(st.integers(1, 4))):  # runs of identical tasks, as a PodGroup's roles come
        t = draw(st.integers(0, len(templates) - 1))
        for _ in range(draw(st.integers(1, 8))):
            tasks.append(_renamed(templates[t], f"g{len(tasks)}"))
            roles.append(t)
    role_need = [draw(st.integers(0, roles.count(r) + 1)) for r in range(len(templates))]
    need = draw(st.integers(0, len(tasks) + 1))
    headroom = None if draw(st.integers(0, 2)) else {"cpu": draw(st.integers(0, 40_000))}
    return tasks, roles, role_need, need, headroom, draw(st.integers(0, 2)) == 0


@st.composite
def confinements(draw, n_nodes: int):
    """What topology placement hands the gang placement: an allowed mask, per-node caps, a per-node score bonus
    (each optional), as native arrays and as the reference's dicts keyed by node name."""
    names = [f"n{i}" for i in range(n_nodes)]
    allowed = cap = bonus = None
    if draw(st.integers(0, 2)) == 0:
        allowed = np.array(draw(st.lists(st.booleans(), min_size=n_nodes, max_size=n_nodes)), np.uint8)
    if draw(st.integers(0, 2)) == 0:
        cap = np.array(draw(st.lists(st.integers(0, 4), min_size=n_nodes, max_size=n_nodes)), np.int32)
    if draw(st.integers(0, 2)) == 0:
        # Volcano's float scores: fractions rank nodes whose whole totals are equal, as a float sum does.
        bonus = np.array(
            draw(
                st.lists(
                    st.sampled_from([0, 0, 7, 7.25, 7.5, 50, 400, -30, -29.75]), min_size=n_nodes, max_size=n_nodes
                )
            ),
            np.float64,
        )
    as_ref = (
        None if allowed is None else {n for n, a in zip(names, allowed) if a},
        None if cap is None else dict(zip(names, cap.tolist())),
        None if bonus is None else dict(zip(names, bonus.tolist())),
    )
    return (allowed, cap, bonus), as_ref


@given(cluster=roomy_clusters(), gang=gangs(), profile=profiles(with_pct=True), seed=st.integers(0, 3), data=st.data())
@settings(max_examples=150)
def test_place_gang_matches_reference(cluster, gang, profile, seed, data):
    nodes, existing = cluster
    tasks, roles, role_need, need, headroom, all_or_nothing = gang
    (allowed, cap, bonus), (ref_allowed, ref_cap, ref_bonus) = data.draw(confinements(len(nodes)))
    native, reference = build_both(nodes, existing)
    sched = vcore.Scheduler(native, profile=profile, seed=seed)
    compiled = [sched.compile(t) for t in tasks]
    vector = None
    if headroom is not None:
        vector = [UNLIMITED] * len(native.resource_names)
        vector[native.resource_names.index("cpu")] = headroom["cpu"]
    got_nodes, outcome, _, ready, first_unfit, reasons, _ = sched._engine.place_gang(
        compiled, roles, role_need, need, vector, allowed, all_or_nothing, cap, bonus
    )
    names = native._state.node_names()
    chosen = {ref.pod_key(t): (names[n] if n >= 0 else None) for t, n in zip(tasks, got_nodes.tolist())}
    # Undone placements leave no trace in the native result, so follow native's choice only where it kept one;
    # an undone gang must also be undone in the reference (checked below through `ready`).
    placed_before_undo = {}

    def follow(key, best):
        node = chosen[key]
        if node is None:  # native placed it and then undid the gang: any best node will do for the reference
            node = min(best)
            placed_before_undo[key] = node
        assert node in best, f"{key}: native chose {node}, reference best {sorted(best)}"
        return node

    want = reference_place_gang(
        reference,
        tasks,
        roles,
        role_need,
        need,
        headroom,
        ref.profile_to_native(profile),
        all_or_nothing,
        follow,
        allowed=ref_allowed,
        cap=ref_cap,
        bonus=ref_bonus,
    )
    assert ready == want.ready
    assert [chosen[ref.pod_key(t)] for t in tasks] == want.nodes
    if want.first_unfit >= 0 and (ready or not all_or_nothing):
        assert ref.pod_key(tasks[first_unfit]) == ref.pod_key(tasks[want.first_unfit])
        assert vcore.reasons.reason_counts(reasons, _core.reason_names(native._state)) == want.reasons
    for name in reference.nodes:
        assert sorted(native.pods_on(name)) == sorted(p.key for p in reference.pods_on(name))


def _cluster(n: int, cpu: int = 4000, **kw) -> vcore.Cluster:
    c = vcore.Cluster()
    for i in range(n):
        c.add_node(make_node(f"n{i:04d}", cpu, 16 * 2**30, **kw))
    return c


def _gang(sched, n: int, cpu: int = 1000, prefix: str = "p") -> list:
    return [sched.compile(req_pod(f"{prefix}{i}", cpu, 2**20)) for i in range(n)]


def test_two_gangs_that_fit_alone_but_not_together():
    c = _cluster(100, cpu=1000)
    sched = vcore.Scheduler(c)
    first = sched._engine.place_gang(_gang(sched, 100, prefix="a"), [0] * 100, [0], 100)
    second = sched._engine.place_gang(_gang(sched, 100, prefix="b"), [0] * 100, [0], 100)
    assert first[3] and (first[0] >= 0).all()
    assert not second[3] and (second[0] == -1).all()
    assert c.n_pods == 100 and all(k.startswith("default/a") for n in c.node_names for k in c.pods_on(n))
    assert vcore.reasons.reason_counts(second[5], _core.reason_names(c._state)) == {"Insufficient cpu": 100}


def test_partial_gang_is_undone_and_leaves_nothing():
    c = _cluster(3, cpu=2000)
    sched = vcore.Scheduler(c)
    before = c.requested("cpu").copy()
    nodes, outcome, _, ready, first_unfit, _, _ = sched._engine.place_gang(_gang(sched, 8), [0] * 8, [0], 8)
    assert not ready and (nodes == -1).all() and first_unfit == 6
    assert outcome.tolist() == [1] * 6 + [2] * 2
    np.testing.assert_array_equal(c.requested("cpu"), before)


def test_elastic_tasks_beyond_the_minimum_stay_when_the_gang_is_ready():
    c = _cluster(3, cpu=2000)
    sched = vcore.Scheduler(c)
    nodes, _, _, ready, first_unfit, _, _ = sched._engine.place_gang(_gang(sched, 8), [0] * 8, [0], 4)
    assert ready and (nodes >= 0).sum() == 6 and first_unfit == 6


def test_role_minimum_decides_readiness():
    c = _cluster(4, cpu=1000)
    sched = vcore.Scheduler(c)
    tasks = [sched.compile(req_pod("ps", 2000, 1))] + _gang(sched, 3)
    # The parameter server fits nowhere: without it the gang is not ready even though 3 >= minMember 3.
    out = sched._engine.place_gang(tasks, [0, 1, 1, 1], [1, 3], 3)
    assert not out[3] and (out[0] == -1).all() and c.n_pods == 0


def test_headroom_limits_what_the_queue_takes():
    c = _cluster(10)
    sched = vcore.Scheduler(c)
    headroom = [UNLIMITED] * len(c.resource_names)
    headroom[c.resource_names.index("cpu")] = 3500
    nodes, outcome, *_ = sched._engine.place_gang(_gang(sched, 5), [0] * 5, [0], 0, headroom, None, False)
    assert (nodes >= 0).sum() == 3 and outcome.tolist() == [1, 1, 1, 3, 3]


def test_allowed_mask_confines_the_gang():
    c = _cluster(10)
    sched = vcore.Scheduler(c)
    allowed = np.zeros(10, np.uint8)
    allowed[[2, 5]] = 1
    nodes, *_ = sched._engine.place_gang(_gang(sched, 8), [0] * 8, [0], 8, None, allowed)
    assert set(nodes.tolist()) == {2, 5}


def test_caps_bound_tasks_per_node_across_runs():
    c = _cluster(4, cpu=8000)
    sched = vcore.Scheduler(c)
    cap = np.array([3, 0, 1, 2], np.int32)
    tasks = _gang(sched, 4, prefix="a") + [sched.compile(req_pod(f"b{i}", 2000, 2**20)) for i in range(2)]
    nodes, *_ = sched._engine.place_gang(tasks, [0] * 4 + [1] * 2, [0, 0], 6, None, None, True, cap)
    assert np.bincount(nodes, minlength=4).tolist() == [3, 0, 1, 2]
    # One more task than the caps allow: the gang cannot be ready and nothing stays bound.
    more = _gang(sched, 7, prefix="c")
    nodes, outcome, _, ready, *_ = sched._engine.place_gang(more, [0] * 7, [0], 7, None, None, True, cap)
    assert not ready and (nodes == -1).all() and outcome.tolist()[-1] == 2


def test_score_bonus_steers_the_gang():
    c = _cluster(4)
    sched = vcore.Scheduler(c)
    bonus = np.array([0, 0, 1000, 0], np.float64)
    nodes, *_ = sched._engine.place_gang(_gang(sched, 3), [0] * 3, [0], 3, None, None, True, None, bonus)
    assert nodes.tolist() == [2, 2, 2]  # least-allocated would spread them; the bonus outweighs it


@pytest.mark.parametrize(
    "bonus, best",
    [
        ([0.25, 0.5, 0.0, 0.0], 1),  # equal whole totals: the larger fraction wins, as in a float sum
        ([0.75, 0.5, 0.0, 0.0], 0),
        ([1.0, 0.75, 0.0, 0.0], 0),  # a whole point outweighs any fraction
        ([-0.5, -0.75, -1.0, -1.0], 0),  # -0.5 is -1 + 0.5: above -0.75 (-1 + 0.25), below 0
    ],
)
def test_a_bonus_fraction_ranks_nodes_as_their_float_totals(bonus, best):
    """Volcano sums node scores in float64: a fractional bonus (its network-topology scores) orders nodes whose
    integer totals are equal, for every seed's tie order."""
    for seed in range(4):
        c = _cluster(4)
        sched = vcore.Scheduler(c, seed=seed)
        scores = np.array(bonus, np.float64)
        nodes, *_ = sched._engine.place_gang(_gang(sched, 1), [0], [0], 1, None, None, True, None, scores)
        assert nodes.tolist() == [best], (seed, bonus)


def test_discovery_samples_like_kube_scheduler_and_grows_for_big_gangs():
    c = _cluster(1000, cpu=2000)
    sched = vcore.Scheduler(c)  # adaptive percentage: 1000 nodes -> 42 % -> 420 nodes to find
    *_, evaluations = sched._engine.place_gang(_gang(sched, 1, prefix="one"), [0], [0], 1)
    assert 420 <= evaluations < 420 + 512 + 1  # whole blocks are evaluated, the search stops at the 420th
    # A gang of 1500 two-per-node pods needs 750 nodes: discovery goes on until they hold it.
    nodes, *_ = sched._engine.place_gang(_gang(sched, 1500, prefix="big"), [0] * 1500, [0], 1500)
    assert (nodes >= 0).all() and len(set(nodes.tolist())) >= 750


def test_pct_100_spreads_like_sequential_least_allocated():
    c = _cluster(4, cpu=4000)
    sched = vcore.Scheduler(c, profile=make_profile([("NodeResourcesFit", 1)], pct=100))
    nodes, *_ = sched._engine.place_gang(_gang(sched, 8), [0] * 8, [0], 8)
    assert sorted(np.bincount(nodes, minlength=4).tolist()) == [2, 2, 2, 2]


def test_fit_counts_match_numpy():
    c = _cluster(50, cpu=8000)
    sched = vcore.Scheduler(c)
    rng = np.random.default_rng(1)
    for i in range(80):
        c.bind(req_pod(f"b{i}", int(rng.integers(100, 3000)), 2**20), f"n{int(rng.integers(0, 50)):04d}")
    pod = sched.compile(req_pod("x", 1500, 2**20))
    free = c.allocatable("cpu") - c.requested("cpu")
    want = np.minimum(free // 1500, c.allocatable("pods") - c.requested("pods"))
    np.testing.assert_array_equal(sched._engine.fit_counts(pod), np.maximum(want, 0))


def test_fits_somewhere_is_evaluates_feasible_set_not_empty():
    c = _cluster(600, cpu=4000)  # two blocks: the last node is the only one left with room
    sched = vcore.Scheduler(c)
    for i in range(599):
        c.bind(req_pod(f"b{i}", 3000, 2**20), f"n{i:04d}")
    for cpu, anywhere in ((2000, True), (4000, True), (4001, False)):
        pod = sched.compile(req_pod(f"x{cpu}", cpu, 2**20))
        assert bool(sched._engine.evaluate(pod)[0].any()) is anywhere
        assert sched._engine.fits_somewhere(pod) is anywhere


@pytest.mark.parametrize(
    "bad",
    [
        "roles",
        "duplicate",
        "bound",
        "allowed",
        "role_index",
        "cap_width",
        "cap_negative",
        "bonus_width",
        "bonus_huge",
        "bonus_nan",
    ],
)
def test_malformed_requests_raise_and_change_nothing(bad):
    c = _cluster(4)
    sched = vcore.Scheduler(c)
    tasks = _gang(sched, 3)
    c.bind(req_pod("running", 100, 1), "n0000")
    args = dict(tasks=tasks, role=[0, 0, 0], role_need=[0], need=3, headroom=None, allowed=None)
    if bad == "roles":
        args["role"] = [0]
    elif bad == "duplicate":
        args["tasks"] = tasks + [tasks[0]]
        args["role"] = [0] * 4
    elif bad == "bound":
        args["tasks"] = tasks + [sched.compile(req_pod("running", 100, 1))]
        args["role"] = [0] * 4
    elif bad == "allowed":
        args["allowed"] = np.ones(7, np.uint8)
    elif bad == "cap_width":
        args["cap"] = np.ones(3, np.int32)
    elif bad == "cap_negative":
        args["cap"] = np.array([1, -1, 1, 1], np.int32)
    elif bad == "bonus_width":
        args["score_bonus"] = np.zeros(5, np.float64)
    elif bad == "bonus_huge":
        args["score_bonus"] = np.array([0, 2.0**62, 0, 0], np.float64)
    elif bad == "bonus_nan":
        args["score_bonus"] = np.array([0, np.nan, 0, 0], np.float64)
    else:
        args["role"] = [0, 0, 5]
    before = c.requested("cpu").copy()
    with pytest.raises(ValueError):
        sched._engine.place_gang(**args)
    np.testing.assert_array_equal(c.requested("cpu"), before)
    assert c.n_pods == 1


def test_cap_and_bonus_of_a_wrong_dtype_raise_instead_of_copying():
    """A cap must be int32 (never a lossy cast); a bonus is float64, which integers convert to exactly."""
    c = _cluster(4)
    sched = vcore.Scheduler(c)
    with pytest.raises(TypeError):
        sched._engine.place_gang(_gang(sched, 2), [0, 0], [0], 2, None, None, True, np.ones(4, np.int64))
    with pytest.raises(TypeError):
        sched._engine.place_gang(_gang(sched, 2), [0, 0], [0], 2, None, None, True, None, np.ones(4, np.complex128))
    assert c.n_pods == 0
    bonus = np.array([0, 0, 1000, 0], np.int64)
    nodes, *_ = sched._engine.place_gang(_gang(sched, 1), [0], [0], 1, None, None, True, None, bonus)
    assert nodes.tolist() == [2]


def test_a_task_already_bound_leaves_the_state_and_the_rotation_as_they_were():
    """The bound task is found when its turn comes: what the call bound before it is undone, the rotating start is
    restored (the next gang lands where it would have), and the error names the pod."""
    c = _cluster(300, cpu=4000)  # more nodes than one discovery looks at: the start rotates
    sched = vcore.Scheduler(c)
    tasks = _gang(sched, 4)
    c.bind(req_pod("p3", 1000, 2**20), c.node_names[0])
    before = c.requested("cpu").copy()
    with pytest.raises(ValueError, match="pod default/p3: already bound"):
        sched._engine.place_gang(tasks, None, [0], 4)
    np.testing.assert_array_equal(c.requested("cpu"), before)
    assert c.n_pods == 1
    twin_cluster = _cluster(300, cpu=4000)
    twin = vcore.Scheduler(twin_cluster)
    twin_cluster.bind(req_pod("p3", 1000, 2**20), twin_cluster.node_names[0])
    assert (
        sched._engine.place_gang(_gang(sched, 3, prefix="q"), None, [0], 3)[0].tolist()
        == twin._engine.place_gang(_gang(twin, 3, prefix="q"), None, [0], 3)[0].tolist()
    )


def test_a_task_twice_in_the_gang_is_refused_before_anything_is_bound():
    c = _cluster(6, cpu=4000)
    sched = vcore.Scheduler(c)
    tasks = _gang(sched, 3)
    with pytest.raises(ValueError, match="pod default/p1: appears twice in the gang"):
        sched._engine.place_gang(tasks + [tasks[1]], None, [0], 4)
    assert c.n_pods == 0


def test_a_run_the_queue_cannot_take_looks_at_no_node():
    """As schedule() does for such a pod: no discovery (no evaluation), the rotating start stays where it was, and
    a later run of the same gang that fits is placed."""
    c = _cluster(300, cpu=4000)  # more nodes than one discovery looks at: the start rotates
    sched = vcore.Scheduler(c)
    headroom = [UNLIMITED] * len(c.resource_names)
    headroom[c.resource_names.index("cpu")] = 600
    small = [sched.compile(req_pod(f"s{i}", 500, 2**20)) for i in range(1)]
    nodes, outcome, _, _, _, _, evaluations = sched._engine.place_gang(
        _gang(sched, 3) + small, [0, 0, 0, 1], [0, 0], 0, headroom, None, False
    )
    assert outcome.tolist() == [3, 3, 3, 1] and nodes[3] >= 0
    twin_cluster = _cluster(300, cpu=4000)
    twin = vcore.Scheduler(twin_cluster)
    *_, twin_evaluations = twin._engine.place_gang([twin.compile(req_pod("s0", 500, 2**20))], None, [0], 0)
    assert evaluations == twin_evaluations  # only the run that fitted looked at nodes
    assert (
        sched._engine.place_gang(_gang(sched, 3, prefix="q"), None, [0], 3)[0].tolist()
        == twin._engine.place_gang(_gang(twin, 3, prefix="q"), None, [0], 3)[0].tolist()
    )


def _sparse_cluster(specials: dict[int, int]) -> tuple[vcore.Cluster, list[int]]:
    """Feasible nodes (4 cpu) between runs of 0 to 22 full ones (0.5 cpu, too little for a 1-cpu task), so discovery
    crosses runs longer and shorter than its 8-slot skip at every alignment; `specials` gives the k-th feasible
    node more cpu. Returns the cluster and the slots of the feasible nodes in order."""
    c, feasible = vcore.Cluster(), []
    for k in range(230):
        for _ in range((k * 7) % 23):
            c.add_node(make_node(f"n{c.n_nodes:05d}", 500, 16 * 2**30))
        feasible.append(c.n_nodes)
        c.add_node(make_node(f"n{c.n_nodes:05d}", specials.get(k, 4000), 16 * 2**30))
    return c, feasible


def test_discovery_stops_at_the_wanted_feasible_node_across_runs_of_full_ones():
    """With 1 % of the nodes to score, discovery wants 100 feasible nodes: it stops right after the 100th (the
    best of those it may see; the 101st would be better still), and the next gang starts after it."""
    profile = make_profile([("NodeResourcesFit", 1)], pct=1)
    c, feasible = _sparse_cluster({99: 64000, 100: 128000})
    sched = vcore.Scheduler(c, profile=profile)
    assert 2000 < c.n_nodes < 10000  # 1 % of them is below kube-scheduler's minimum of 100
    nodes, *_ = sched._engine.place_gang(_gang(sched, 1), None, [0], 1)
    assert nodes.tolist() == [feasible[99]]
    # Nothing special among the first gang's nodes: the second sees the 101st to 200th feasible nodes exactly.
    c, feasible = _sparse_cluster({199: 64000, 200: 128000})
    sched = vcore.Scheduler(c, profile=profile)
    sched._engine.place_gang(_gang(sched, 1), None, [0], 1)
    nodes, *_ = sched._engine.place_gang(_gang(sched, 1, prefix="q"), None, [0], 1)
    assert nodes.tolist() == [feasible[199]]
