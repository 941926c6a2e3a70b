"""QueueSpec parsing (Volcano, KAI, Kueue), validation errors naming the queue and field, and the QueueTree."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, strategies as st

from vcore.batch.queue import (
    GPU,
    KAI_API,
    KUEUE_API,
    UNLIMITED,
    VOLCANO_API,
    QueueSpec,
    QueueTree,
)
from vcore.errors import QueueExistsError, QueueInUseError, QueueNotFoundError

from .share_builders import kai, kueue, rlist, volcano

GI = 2**30


# -- Volcano ---------------------------------------------------------------------------------------------------
def test_volcano_queue_fields_in_vcore_units():
    spec = QueueSpec.from_object(
        {
            "apiVersion": VOLCANO_API,
            "kind": "Queue",
            "metadata": {"name": "team-a", "creationTimestamp": "2024-05-01T10:00:00Z"},
            "spec": {
                "weight": 3,
                "capability": rlist(cpu="8", mem="32Gi", gpu=4),
                "deserved": rlist(cpu="4"),
                "guarantee": {"resource": rlist(cpu="500m")},
                "reclaimable": False,
                "parent": "org",
                "priority": 7,
            },
            "status": {"state": "Closed"},
        }
    )
    assert spec.name == "team-a" and spec.api == VOLCANO_API and spec.parent == "org"
    assert (spec.weight, spec.priority, spec.state, spec.reclaimable) == (3, 7, "Closed", False)
    assert dict(spec.capability) == {"cpu": 8000, "memory": 32 * GI, GPU: 4}
    assert dict(spec.deserved) == {"cpu": 4000} and dict(spec.guarantee) == {"cpu": 500}
    assert spec.creation_timestamp == "2024-05-01T10:00:00Z"
    assert hash(spec) == hash(dataclasses.replace(spec)) and spec == dataclasses.replace(spec)  # frozen, hashable


def test_volcano_defaults_match_volcanos_admission():
    spec = QueueSpec.from_object({"metadata": {"name": "q"}})  # no apiVersion/kind: a Volcano Queue
    assert (spec.api, spec.weight, spec.reclaimable, spec.state, spec.priority) == (VOLCANO_API, 1, True, "Open", 0)
    assert QueueSpec.from_object(volcano("q", weight=0)).weight == 1  # the mutating webhook sets 0 -> 1


@pytest.mark.parametrize(
    "resource, value, expected",
    [
        pytest.param("cpu", "0", UNLIMITED, id="cpu-0-is-unlimited"),
        pytest.param("memory", "0", UNLIMITED, id="memory-0-is-unlimited"),
        pytest.param(GPU, "0", 0, id="scalar-0-is-0"),
        pytest.param("cpu", "2", 2000, id="cpu-set"),
    ],
)
def test_volcano_limit_reads_capability_as_volcanos_scheduler(resource, value, expected):
    spec = QueueSpec.from_object(volcano("q", capability={resource: value}))
    assert spec.limit(resource) == expected
    assert spec.limit("ephemeral-storage") == UNLIMITED  # unset: unlimited


@pytest.mark.parametrize(
    "obj, error, match",
    [
        pytest.param(
            volcano("q", weight=-1), ValueError, r"queue q: spec.weight: must be >= 0, got -1", id="neg-weight"
        ),
        pytest.param(volcano("q", weight="3"), TypeError, r"queue q: spec.weight: must be an integer", id="str-weight"),
        pytest.param(
            volcano("q", capability={"cpu": "-1"}),
            ValueError,
            r"queue q: spec.capability.cpu: .*negative",
            id="neg-capability",
        ),
        pytest.param(
            volcano("q", guarantee={"memory": "-1Gi"}),
            ValueError,
            r"queue q: spec.guarantee.resource.memory: .*negative",
            id="neg-guarantee",
        ),
        pytest.param(
            volcano("q", deserved={"cpu": "abc"}),
            ValueError,
            r"queue q: spec.deserved.cpu: invalid quantity",
            id="bad-quantity",
        ),
        pytest.param(
            volcano("q", capability=rlist(cpu="2"), guarantee=rlist(cpu="4")),
            ValueError,
            r"queue q: spec.guarantee.resource.cpu: 4000 exceeds spec.capability.cpu 2000",
            id="capability-below-guarantee",
        ),
        pytest.param(
            volcano("q", capability=rlist(cpu="2"), deserved=rlist(cpu="3")),
            ValueError,
            r"queue q: spec.deserved.cpu: 3000 exceeds spec.capability.cpu",
            id="capability-below-deserved",
        ),
        pytest.param(
            volcano("q", deserved=rlist(gpu=1), guarantee=rlist(gpu=2)),
            ValueError,
            r"queue q: spec.guarantee.resource.nvidia.com/gpu: 2 exceeds spec.deserved",
            id="deserved-below-guar",
        ),
        pytest.param(
            volcano("q", state="Paused"),
            ValueError,
            r"queue q: status.state: must be one of Open, Closed, Closing, Unknown; got 'Paused'",
            id="bad-state",
        ),
        pytest.param(
            volcano("q", parent="q"),
            ValueError,
            r"queue q: spec.parent: a queue cannot be its own parent",
            id="self-parent",
        ),
        pytest.param(
            volcano("q", reclaimable="yes"),
            TypeError,
            r"queue q: spec.reclaimable: must be true or false",
            id="bad-reclaimable",
        ),
        pytest.param(
            volcano("q", priority=2**40),
            ValueError,
            r"queue q: spec.priority: must be in \[-2147483648, 2147483647\]",
            id="priority-int32",
        ),
        pytest.param(
            {"apiVersion": "scheduling.volcano.sh/v1alpha9", "kind": "Queue", "metadata": {"name": "q"}},
            ValueError,
            r"queue q: apiVersion/kind: unknown kind",
            id="unknown-kind",
        ),
        pytest.param(
            {"apiVersion": VOLCANO_API, "kind": "PodGroup", "metadata": {"name": "q"}},
            ValueError,
            r"unknown kind scheduling.volcano.sh/v1beta1 PodGroup",
            id="wrong-kind",
        ),
        pytest.param({"metadata": {}}, ValueError, r"queue: metadata.name", id="no-name"),
        pytest.param(["not", "a", "queue"], TypeError, r"queue: expected a dict", id="not-an-object"),
    ],
)
def test_volcano_bad_input_names_queue_and_field(obj, error, match):
    with pytest.raises(error, match=match):
        QueueSpec.from_object(obj)


def test_capability_compares_only_resources_both_fields_name():
    # Volcano's scheduler reads an unset capability as unlimited, so a guarantee on cpu is not "above" it
    spec = QueueSpec.from_object(volcano("q", capability=rlist(mem="4Gi"), guarantee=rlist(cpu="2")))
    assert spec.limit("cpu") == UNLIMITED


# -- KAI -------------------------------------------------------------------------------------------------------
def test_kai_queue_units_and_specials():
    spec = QueueSpec.from_object(
        kai(
            "ml",
            parent="research",
            created="2025-01-01T00:00:00Z",
            cpu={"quota": 1500, "limit": -1, "overQuotaWeight": 2},
            memory={"quota": 4096, "limit": 8192.5},
            gpu={"quota": 2, "limit": 4, "overQuotaWeight": 1},
        )
    )
    assert (spec.api, spec.parent, spec.priority) == (KAI_API, "research", 100)  # KAI's default priority
    assert dict(spec.deserved) == {"cpu": 1500, "memory": 4096 * 10**6, GPU: 2}  # memory in MB = 10**6 bytes
    assert dict(spec.capability) == {"cpu": UNLIMITED, "memory": 8192500000, GPU: 4}
    assert dict(spec.over_quota_weight) == {"cpu": 2, "memory": 0, GPU: 1}  # unset weight: 0
    assert spec.limit("cpu") == UNLIMITED and spec.limit(GPU) == 4
    assert spec.limit("ephemeral-storage") == UNLIMITED  # KAI queues do not quota it


def test_kai_unset_values_are_zero_as_kais_go_types():
    spec = QueueSpec.from_object(kai("q", gpu={"quota": -1}))
    assert spec.deserved[GPU] == UNLIMITED and spec.capability[GPU] == 0  # unset limit: nothing beyond
    assert spec.deserved["cpu"] == 0 and spec.capability["cpu"] == 0


@pytest.mark.parametrize(
    "obj, match",
    [
        pytest.param(
            {"apiVersion": KAI_API, "kind": "Queue", "metadata": {"name": "q"}, "spec": {}},
            r"queue q: spec.resources: resources must be specified",
            id="no-resources",
        ),
        pytest.param(
            kai("q", gpu={"quota": 0.5}),
            r"queue q: spec.resources.gpu.quota: 0.5 is not a whole number of GPU",
            id="fractional-gpu",
        ),
        pytest.param(
            kai("q", cpu={"limit": -2}),
            r"queue q: spec.resources.cpu.limit: -2 must be >= 0 or -1",
            id="negative-limit",
        ),
        pytest.param(
            kai("q", cpu={"overQuotaWeight": -1}),
            r"spec.resources.cpu.overQuotaWeight: -1 must be >= 0",
            id="negative-weight",
        ),
        pytest.param(
            kai("q", cpu={"overQuotaWeight": 1.5}),
            r"spec.resources.cpu.overQuotaWeight: 1.5 is not",
            id="fractional-weight",
        ),
        pytest.param(
            kai("q", cpu={"quota": 10.5}),
            r"spec.resources.cpu.quota: 10.5 is not a whole number",
            id="fractional-millicore",
        ),
        pytest.param(
            kai("q", gpu={"quota": 1, "lendingLimit": 0}),
            r"spec.resources.gpu.lendingLimit: not supported",
            id="lending-limit",
        ),
        pytest.param(kai("q", parent="q", cpu={}), r"spec.parentQueue: a queue cannot be its own parent", id="self"),
    ],
)
def test_kai_bad_input(obj, match):
    with pytest.raises((ValueError, TypeError), match=match):
        QueueSpec.from_object(obj)


# -- Kueue -----------------------------------------------------------------------------------------------------
def _flavor(name, **resources):
    return {"name": name, "resources": [{"name": r, **fields} for r, fields in resources.items()]}


def test_kueue_flavors_sum_per_resource():
    obj = kueue(
        "team-a",
        cohort="ab",
        covered=("cpu", "memory"),
        flavors=[
            _flavor("spot", cpu={"nominalQuota": 9, "borrowingLimit": 1}, memory={"nominalQuota": "36Gi"}),
            _flavor(
                "on-demand",
                cpu={"nominalQuota": "18", "borrowingLimit": 2, "lendingLimit": 3},
                memory={"nominalQuota": "72Gi", "lendingLimit": "8Gi"},
            ),
        ],
        preemption={
            "reclaimWithinCohort": "Any",
            "withinClusterQueue": "LowerPriority",
            "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
        },
    )
    spec = QueueSpec.from_object(obj)
    assert spec.api == KUEUE_API and spec.cohort == "ab" and spec.state == "Open"
    assert dict(spec.deserved) == {"cpu": 27000, "memory": 108 * GI}
    assert dict(spec.borrowing_limit) == {"cpu": 3000}  # memory: a flavor leaves it unset -> unbounded
    # lending: a flavor without a lending limit lends all of its nominal quota
    assert dict(spec.lending_limit) == {"cpu": 9000 + 3000, "memory": 36 * GI + 8 * GI}
    assert spec.covered_resources == frozenset({"cpu", "memory"})
    assert (
        spec.reclaim_within_cohort,
        spec.within_cluster_queue,
        spec.borrow_within_cohort,
        spec.max_priority_threshold,
    ) == ("Any", "LowerPriority", "LowerPriority", 100)


def test_kueue_stop_policy_closes_the_queue():
    obj = kueue("q", covered=("cpu",), flavors=[_flavor("f", cpu={"nominalQuota": 1})], stop="Hold")
    assert QueueSpec.from_object(obj).state == "Closed"


@pytest.mark.parametrize(
    "obj, match",
    [
        pytest.param(
            kueue("q", covered=("cpu",), flavors=[_flavor("f", cpu={"nominalQuota": 1, "borrowingLimit": 1})]),
            r"queue q: spec.resourceGroups\[0\].flavors\[0\].resources\[0\].borrowingLimit: must be unset when "
            r"spec.cohort is empty",
            id="borrowing-without-cohort",
        ),
        pytest.param(
            kueue(
                "q", cohort="c", covered=("cpu",), flavors=[_flavor("f", cpu={"nominalQuota": 1, "lendingLimit": 2})]
            ),
            r"lendingLimit: 2000 exceeds nominalQuota 1000",
            id="lending-above-nominal",
        ),
        pytest.param(
            kueue("q", covered=("cpu",), flavors=[_flavor("f", cpu={"nominalQuota": "-1"})]),
            r"resources\[0\].nominalQuota: quantity '-1' must not be negative",
            id="negative-nominal",
        ),
        pytest.param(
            kueue("q", covered=("cpu",), flavors=[_flavor("f", cpu={})]), r"nominalQuota: required", id="no-nominal"
        ),
        pytest.param(
            kueue("q", covered=("cpu",), flavors=[_flavor("f", memory={"nominalQuota": 1})]),
            r"resources\[0\].name: 'memory' is not in spec.resourceGroups\[0\].coveredResources",
            id="uncovered-resource",
        ),
        pytest.param(
            kueue("q", covered=("cpu", "memory"), flavors=[_flavor("f", cpu={"nominalQuota": 1})]),
            r"flavors\[0\].resources: must list exactly",
            id="missing-covered-resource",
        ),
        pytest.param(
            kueue(
                "q",
                covered=("cpu",),
                flavors=[_flavor("f", cpu={"nominalQuota": 1})],
                preemption={"reclaimWithinCohort": "Sometimes"},
            ),
            r"spec.preemption.reclaimWithinCohort: must be one of Never, LowerPriority, Any; got 'Sometimes'",
            id="bad-policy",
        ),
        pytest.param(
            kueue(
                "q",
                covered=("cpu",),
                flavors=[_flavor("f", cpu={"nominalQuota": 1})],
                preemption={"borrowWithinCohort": {"policy": "LowerPriority"}},
            ),
            r"borrowWithinCohort.policy: LowerPriority requires spec.preemption.reclaimWithinCohort",
            id="borrow-without-reclaim",
        ),
        pytest.param(
            kueue("q", covered=("cpu",), flavors=[_flavor("f", cpu={"nominalQuota": 1})], stop="Pause"),
            r"spec.stopPolicy: must be one of None, Hold, HoldAndDrain; got 'Pause'",
            id="bad-stop-policy",
        ),
    ],
)
def test_kueue_bad_input(obj, match):
    with pytest.raises((ValueError, TypeError), match=match):
        QueueSpec.from_object(obj)


def test_kueue_resource_in_two_groups():
    obj = kueue("q", covered=("cpu",), flavors=[_flavor("f", cpu={"nominalQuota": 1})])
    obj["spec"]["resourceGroups"].append({"coveredResources": ["cpu"], "flavors": []})
    with pytest.raises(ValueError, match=r"queue q: spec.resourceGroups\[1\].coveredResources: cpu is covered by two"):
        QueueSpec.from_object(obj)


# -- QueueTree -------------------------------------------------------------------------------------------------
def _spec(name, **kw):
    return QueueSpec.from_object(volcano(name, **kw))


def test_tree_has_volcanos_default_queue():
    t = QueueTree()
    assert list(t) == ["default"]
    d = t.get("default")
    assert (d.weight, d.state, d.reclaimable, d.implicit) == (1, "Open", True, True)
    assert list(QueueTree(default_queue=False)) == []


def test_tree_add_update_remove():
    t = QueueTree()
    t.add(_spec("a", weight=2))
    t.update(_spec("a", weight=5))
    assert t.get("a").weight == 5
    assert t.remove("a").weight == 5
    assert "a" not in t
    t.add(_spec("default", weight=4))  # the explicit object replaces the implicit default queue
    assert t.get("default").weight == 4 and not t.get("default").implicit


def test_tree_accepts_objects_and_builds_parent_links():
    t = QueueTree()
    t.add(volcano("org"))
    t.add(volcano("team", parent="org"))
    t.add(volcano("leaf", parent="team"))
    assert "root" in t and t.get("root").implicit  # a Volcano queue names a parent: Volcano's root exists
    assert t.children("org") == ["team"] and t.ancestors("leaf") == ["org", "team"]
    assert t.is_leaf("leaf") and not t.is_leaf("team")


def test_kai_tree_has_no_implicit_root():
    t = QueueTree(default_queue=False)
    t.add(kai("dept", gpu={"quota": 4}))
    t.add(kai("team", parent="dept", gpu={"quota": 2}))
    assert list(t) == ["dept", "team"] and t.ancestors("team") == ["dept"]


def _state(t: QueueTree):
    return [(s, s.implicit) for s in t.specs()]


@pytest.mark.parametrize(
    "call, error, match",
    [
        pytest.param(lambda t: t.add(_spec("a")), QueueExistsError, r"queue a: already exists", id="add-existing"),
        pytest.param(lambda t: t.update(_spec("zz")), QueueNotFoundError, r"queue zz: not found", id="update-missing"),
        pytest.param(lambda t: t.remove("zz"), QueueNotFoundError, r"queue zz: not found", id="remove-missing"),
        pytest.param(
            lambda t: t.add(_spec("x", parent="nope")),
            QueueNotFoundError,
            r"queue x: parent nope: no such queue",
            id="unknown-parent",
        ),
        pytest.param(
            lambda t: t.update(_spec("a", parent="b")),
            ValueError,
            r"queue a: parent: cycle in queue parents \(a -> b -> a\)",
            id="cycle",
        ),
        pytest.param(lambda t: t.remove("a"), QueueInUseError, r"queue a: has child queues b", id="remove-parent"),
        pytest.param(
            lambda t: t.remove("b", n_jobs=2),
            QueueInUseError,
            r"queue b: 2 job\(s\) still use it",
            id="remove-with-jobs",
        ),
        pytest.param(
            lambda t: t.remove("default"),
            QueueInUseError,
            r"queue default: the default queue cannot be",
            id="remove-default",
        ),
        pytest.param(
            lambda t: t.remove("root"),
            QueueInUseError,
            r"queue root: implicit queue, needed while",
            id="remove-implicit-root",
        ),
        pytest.param(
            lambda t: t.add({"metadata": {"name": "bad"}, "spec": {"weight": -3}}),
            ValueError,
            r"queue bad: spec.weight",
            id="add-invalid-object",
        ),
    ],
)
def test_tree_failed_calls_change_nothing(call, error, match):
    t = QueueTree()
    t.add(_spec("a"))
    t.add(_spec("b", parent="a"))
    before = _state(t)
    with pytest.raises(error, match=match):
        call(t)
    assert _state(t) == before


def test_tree_get_unknown_queue():
    with pytest.raises(QueueNotFoundError, match="queue nope: not found"):
        QueueTree().get("nope")


_NAMES = ["a", "b", "c", "d", "root", "default"]
_OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "update", "remove"]),
        st.sampled_from(_NAMES),
        st.one_of(st.none(), st.sampled_from(_NAMES)),
        st.integers(0, 2),
    ),
    max_size=25,
)


@given(_OPS)
def test_tree_state_unchanged_after_any_failed_call(ops):
    """Random add/update/remove sequences: a call either succeeds or raises and leaves the tree as it was, and the
    tree always satisfies its invariants (known parents, no cycles, an implicit root while hierarchical)."""
    t = QueueTree()
    for op, name, parent, jobs in ops:
        before = _state(t)
        try:
            if op == "remove":
                t.remove(name, n_jobs=jobs)
            else:
                getattr(t, op)(_spec(name, parent=parent if parent != name else None))
        except (ValueError, KeyError):
            assert _state(t) == before
        for q in t:
            chain = t.ancestors(q)
            assert q not in chain and len(chain) == len(set(chain))
            if t.get(q).parent is not None:
                assert "root" in t
