"""Property tests: vcore's InterPodAffinity and PodTopologySpread equal the pure-Python reference
(tests/plugins/interpod_reference.py, which walks every bound pod) on random small clusters.

Random clusters: nodes labelled over hostname/zone/region keys (some nodes lack some keys), some tainted; 2-3
namespaces (labelled, and not always created); bound pods in them with random labels, some terminating, with
random required and preferred (anti-)affinity terms (namespaces, namespaceSelector, matchLabelKeys,
mismatchLabelKeys); Services and ReplicaSets that select them. Incoming pods get random terms, node affinity,
tolerations and spread constraints (both whenUnsatisfiable, minDomains, node inclusion policies, matchLabelKeys),
or none, so the default constraints (System, or a List) apply. Compared: each node's filter outcome (reason text),
the reason counts, and the final scores over the feasible nodes; after random unbinds and rebinds (the index must
follow); and ``schedule()`` of a batch, each pod placed on a node the reference scores best once the batch's earlier
pods are bound. Hypothesis runs derandomized (profile "ci" in conftest.py).
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings, strategies as st

import vcore
from tests.plugins import interpod_reference as iref
from tests.plugins.kube_builders import HOSTNAME, ZONE, filter_per_node, namespace, plugin_profile, replica_set

REGION = "topology.kubernetes.io/region"
TOPOLOGY_KEYS = [HOSTNAME, ZONE, REGION]
NAMESPACES = ["default", "ns-a", "ns-b"]
TEAMS = ["t1", "t2"]
APPS = ["web", "db", "cache"]
TIERS = ["front", "back"]
TAINT = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}


# ---------------------------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------------------------
@st.composite
def pod_labels(draw) -> dict[str, str]:
    labels = {}
    if draw(st.integers(0, 4)):
        labels["app"] = draw(st.sampled_from(APPS))
    if draw(st.booleans()):
        labels["tier"] = draw(st.sampled_from(TIERS))
    return labels


@st.composite
def label_selectors(draw, allow_nil: bool = True) -> dict | None:
    kind = draw(st.integers(0, 9))
    if kind == 0 and allow_nil:
        return None
    if kind == 1:
        return {}
    sel: dict = {}
    if draw(st.booleans()):
        sel["matchLabels"] = {"app": draw(st.sampled_from(APPS))}
    exprs = []
    for _ in range(draw(st.integers(0 if sel else 1, 2))):
        key = draw(st.sampled_from(["app", "tier"]))
        op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]))
        e = {"key": key, "operator": op}
        if op in ("In", "NotIn"):
            e["values"] = draw(
                st.lists(st.sampled_from(APPS if key == "app" else TIERS), min_size=1, max_size=2, unique=True)
            )
        exprs.append(e)
    if exprs:
        sel["matchExpressions"] = exprs
    return sel


@st.composite
def affinity_terms(draw) -> dict:
    term: dict = {"topologyKey": draw(st.sampled_from(TOPOLOGY_KEYS))}
    sel = draw(label_selectors())
    if sel is not None:
        term["labelSelector"] = sel
        keys = draw(st.sampled_from([(), ("tier",), ("app",)]))
        if keys and draw(st.booleans()):
            term["matchLabelKeys" if draw(st.booleans()) else "mismatchLabelKeys"] = list(keys)
    ns_kind = draw(st.integers(0, 5))
    if ns_kind in (1, 4):
        term["namespaces"] = draw(st.lists(st.sampled_from(NAMESPACES), min_size=1, max_size=2, unique=True))
    if ns_kind in (2, 4):
        term["namespaceSelector"] = draw(
            st.sampled_from(
                [
                    {},
                    {"matchLabels": {"team": "t1"}},
                    {"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["t1"]}]},
                ]
            )
        )
    return term


@st.composite
def affinities(draw, max_terms: int = 2) -> dict | None:
    if draw(st.integers(0, 2)) == 0:
        return None
    out: dict = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        part: dict = {}
        required = draw(st.lists(affinity_terms(), max_size=max_terms))
        if required:
            part["requiredDuringSchedulingIgnoredDuringExecution"] = required
        preferred = draw(st.lists(st.tuples(st.integers(1, 100), affinity_terms()), max_size=max_terms))
        if preferred:
            part["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": w, "podAffinityTerm": t} for w, t in preferred
            ]
        if part:
            out[kind] = part
    return out or None


@st.composite
def spread_constraints(draw) -> list[dict]:
    out, seen = [], set()
    for _ in range(draw(st.integers(0, 3))):
        key = draw(st.sampled_from(TOPOLOGY_KEYS))
        when = draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]))
        if (key, when) in seen:
            continue
        seen.add((key, when))
        c: dict = {"maxSkew": draw(st.integers(1, 3)), "topologyKey": key, "whenUnsatisfiable": when}
        sel = draw(label_selectors())
        if sel is not None:
            c["labelSelector"] = sel
            if draw(st.integers(0, 3)) == 0:
                c["matchLabelKeys"] = [draw(st.sampled_from(["tier", "app"]))]
        if when == "DoNotSchedule" and draw(st.integers(0, 2)) == 0:
            c["minDomains"] = draw(st.integers(1, 5))
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            if draw(st.integers(0, 2)) == 0:
                c[policy] = draw(st.sampled_from(["Honor", "Ignore"]))
        out.append(c)
    return out


@st.composite
def pods(draw, name: str, *, incoming: bool = False) -> dict:
    meta: dict = {"name": name, "namespace": draw(st.sampled_from(NAMESPACES)), "labels": draw(pod_labels())}
    if not incoming and draw(st.integers(0, 6)) == 0:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    if draw(st.integers(0, 3)) == 0:
        meta["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "controller": True,
                "name": draw(st.sampled_from(["rs-web", "rs-db"])),
                "uid": "u",
            }
        ]
    spec: dict = {"containers": [{"name": "c", "image": "pause"}]}
    aff = draw(affinities(max_terms=2 if incoming else 1))
    if aff:
        spec["affinity"] = aff
    if incoming:
        spread = draw(spread_constraints())
        if spread:
            spec["topologySpreadConstraints"] = spread
        if draw(st.integers(0, 3)) == 0:
            spec.setdefault("affinity", {})["nodeAffinity"] = {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": ZONE,
                                    "operator": draw(st.sampled_from(["In", "NotIn"])),
                                    "values": [draw(st.sampled_from(["z1", "z2"]))],
                                }
                            ]
                        }
                    ]
                }
            }
        if draw(st.integers(0, 3)) == 0:
            spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


@st.composite
def nodes(draw, n: int) -> list[dict]:
    out = []
    for i in range(n):
        name = f"n{i}"
        labels = {}
        if draw(st.integers(0, 6)):
            labels[HOSTNAME] = name
        if draw(st.integers(0, 4)):
            labels[ZONE] = draw(st.sampled_from(["z1", "z2", "z3"]))
        if draw(st.integers(0, 2)):
            labels[REGION] = draw(st.sampled_from(["r1", "r2"]))
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "spec": {},
            "status": {"allocatable": {"pods": "110"}, "capacity": {"pods": "110"}},
        }
        if draw(st.integers(0, 4)) == 0:
            node["spec"]["taints"] = [dict(TAINT)]
        out.append(node)
    return out


@st.composite
def worlds(draw, max_nodes: int = 8, max_bound: int = 12):
    n = draw(st.integers(1, max_nodes))
    ns = [
        namespace(name, {"team": draw(st.sampled_from(TEAMS))}) for name in NAMESPACES if draw(st.integers(0, 2))
    ]  # now and then a namespace has no Namespace object
    bound = [(f"n{draw(st.integers(0, n - 1))}", draw(pods(f"b{j}"))) for j in range(draw(st.integers(0, max_bound)))]
    services = []
    for i in range(draw(st.integers(0, 2))):
        services.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": f"svc{i}", "namespace": draw(st.sampled_from(NAMESPACES))},
                "spec": {"selector": {"app": draw(st.sampled_from(APPS))}},
            }
        )
    sets = [
        replica_set(name, draw(label_selectors(allow_nil=False)), draw(st.sampled_from(NAMESPACES)))
        for name in draw(st.lists(st.sampled_from(["rs-web", "rs-db"]), max_size=2, unique=True))
    ]
    return draw(nodes(n)), ns, bound, services, sets


@st.composite
def spread_args(draw) -> iref.SpreadArgs:
    if draw(st.booleans()):
        return iref.SpreadArgs()
    defaults, seen = [], set()
    for _ in range(draw(st.integers(0, 2))):
        key, when = draw(st.sampled_from(TOPOLOGY_KEYS)), draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]))
        if (key, when) not in seen:
            seen.add((key, when))
            defaults.append({"maxSkew": draw(st.integers(1, 3)), "topologyKey": key, "whenUnsatisfiable": when})
    return iref.SpreadArgs(system=False, defaults=tuple(defaults))


def spread_profile_args(args: iref.SpreadArgs) -> dict:
    if args.system:
        return {"defaultingType": "System"}
    return {"defaultingType": "List", "defaultConstraints": [dict(c) for c in args.defaults]}


# ---------------------------------------------------------------------------------------------------------------
# Both sides
# ---------------------------------------------------------------------------------------------------------------
def build_both(world):
    node_list, ns, bound, services, sets = world
    native, reference = vcore.Cluster(), iref.Cluster()
    for namespace_obj in ns:
        native.add_namespace(namespace_obj)
        reference.namespaces[namespace_obj["metadata"]["name"]] = dict(namespace_obj["metadata"]["labels"])
    for svc in services:
        native.add_service(svc)
        reference.services.append(svc)
    for rs in sets:
        native.add_replica_set(rs)
        reference.replica_sets.append(rs)
    for node in node_list:
        native.add_node(node)
        reference.add_node(node)
    for node_name, pod in bound:
        native.bind(pod, node_name)
        reference.bind(pod, node_name)
    return native, reference


def check_plugins(
    native: vcore.Cluster,
    reference: iref.Cluster,
    pod: dict,
    args: iref.SpreadArgs,
    hard_weight: int,
    ignore_preferred: bool,
) -> None:
    names = list(reference.nodes)
    ipa = vcore.Scheduler(
        native,
        plugin_profile(
            "InterPodAffinity",
            {"hardPodAffinityWeight": hard_weight, "ignorePreferredTermsOfExistingPods": ignore_preferred},
        ),
    )
    want = iref.ipa_filter(reference, pod)
    assert filter_per_node(ipa, pod, names) == want
    feasible = [n for n in names if want[n] is None]
    assert ipa.score(pod) == iref.ipa_score(reference, pod, feasible, hard_weight, ignore_preferred)

    pts = vcore.Scheduler(native, plugin_profile("PodTopologySpread", spread_profile_args(args)))
    want = iref.spread_filter(reference, pod, args)
    assert filter_per_node(pts, pod, names) == want
    feasible = [n for n in names if want[n] is None]
    assert pts.score(pod) == iref.spread_score(reference, pod, feasible, args)


@given(
    world=worlds(),
    incoming=st.lists(pods("incoming", incoming=True), min_size=1, max_size=3),
    args=spread_args(),
    hard_weight=st.integers(0, 3),
    ignore_preferred=st.booleans(),
)
@settings(max_examples=150)
def test_filter_and_score_match_reference(world, incoming, args, hard_weight, ignore_preferred):
    native, reference = build_both(world)
    for pod in incoming:
        check_plugins(native, reference, pod, args, hard_weight, ignore_preferred)


@given(world=worlds(), incoming=pods("incoming", incoming=True), args=spread_args(), data=st.data())
@settings(max_examples=80)
def test_unbind_and_rebind_keep_the_index(world, incoming, args, data):
    native, reference = build_both(world)
    bound = [pod for _, pod in world[2]]
    for _ in range(data.draw(st.integers(1, 3))):
        if not bound:
            break
        gone = data.draw(st.sampled_from(bound))
        bound.remove(gone)
        native.unbind(gone)
        reference.unbind(iref.ref.pod_key(gone))
        check_plugins(native, reference, incoming, args, 1, False)
        if data.draw(st.booleans()):  # back, possibly elsewhere
            node_name = data.draw(st.sampled_from(list(reference.nodes)))
            native.bind(gone, node_name)
            reference.bind(gone, node_name)
            bound.append(gone)
            check_plugins(native, reference, incoming, args, 1, False)


def combined_profile(args: iref.SpreadArgs) -> dict:
    return {
        "plugins": {
            "multiPoint": {
                "disabled": [{"name": "*"}],
                "enabled": [{"name": "InterPodAffinity", "weight": 2}, {"name": "PodTopologySpread", "weight": 1}],
            }
        },
        "pluginConfig": [
            {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 1}},
            {"name": "PodTopologySpread", "args": spread_profile_args(args)},
        ],
    }


@given(world=worlds(max_bound=8), batch=st.integers(2, 6), args=spread_args(), seed=st.integers(0, 3), data=st.data())
@settings(max_examples=60)
def test_schedule_places_each_pod_on_a_best_node_of_the_pods_before_it(world, batch, args, seed, data):
    """schedule() of a batch: each pod goes where filter and score send it once the batch's earlier pods are bound
    (the constraints hold within one batch)."""
    native, reference = build_both(world)
    incoming = [data.draw(pods(f"q{i}", incoming=True)) for i in range(batch)]
    placements = vcore.Scheduler(native, combined_profile(args), seed=seed).schedule(incoming)
    assert [p.pod for p in placements] == [iref.ref.pod_key(p) for p in incoming]
    names = list(reference.nodes)
    for pod, placement in zip(incoming, placements):
        ipa, pts = iref.ipa_filter(reference, pod), iref.spread_filter(reference, pod, args)
        feasible = [n for n in names if ipa[n] is None and pts[n] is None]
        if not feasible:
            assert placement.node is None, f"{placement.pod}: placed on {placement.node}, the reference fits none"
            continue
        a = iref.ipa_score(reference, pod, feasible, 1, False)
        s = iref.spread_score(reference, pod, feasible, args)
        total = {n: 2 * a[n] + s[n] for n in feasible}
        best = {n for n in feasible if total[n] == max(total.values())}
        assert placement.node in best, f"{placement.pod}: vcore chose {placement.node}, reference best {sorted(best)}"
        reference.bind(copy.deepcopy(pod), placement.node)
    for name in names:
        assert sorted(native.pods_on(name)) == sorted(iref.ref.pod_key(p) for p in reference.pods_on(name))


# ---------------------------------------------------------------------------------------------------------------
# Memory: a selector costs what its pods cost, not what the cluster's nodes cost
# ---------------------------------------------------------------------------------------------------------------
def test_selectors_cost_memory_by_pods_not_nodes():
    """Many distinct selectors on a 20,000-node cluster: each new selector's counts take memory in proportion to
    the pods it matches (a few), never a row over the nodes (20,000 slots would be 80 KB or more each)."""
    n_nodes, n_selectors = 20_000, 300
    cluster = vcore.Cluster()
    for i in range(n_nodes):
        cluster.add_node(
            {
                "metadata": {"name": f"n{i}", "labels": {HOSTNAME: f"n{i}", ZONE: f"z{i % 50}"}},
                "status": {"allocatable": {"pods": "110"}},
            }
        )
    for i in range(n_selectors):  # two bound pods per app
        for j in range(2):
            cluster.bind(
                {
                    "metadata": {"name": f"p{i}-{j}", "labels": {"app": f"a{i}"}},
                    "spec": {"containers": [{"name": "c"}]},
                },
                f"n{(i * 7 + j) % n_nodes}",
            )

    def spread_and_anti(i: int) -> dict:
        sel = {"matchLabels": {"app": f"a{i}"}}
        return {
            "metadata": {"name": f"new{i}", "labels": {"app": f"a{i}"}},
            "spec": {
                "containers": [{"name": "c"}],
                "topologySpreadConstraints": [
                    {"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": sel}
                ],
                "affinity": {
                    "podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": ZONE, "labelSelector": sel}]
                    }
                },
            },
        }

    scheduler = vcore.Scheduler(cluster)
    scheduler.compile(spread_and_anti(0))  # the label columns for both keys exist from here on
    before = cluster.native_bytes
    for i in range(1, n_selectors):
        scheduler.compile(spread_and_anti(i))  # registers its selectors' counters, counted from the bound pods
    per_selector = (cluster.native_bytes - before) / (n_selectors - 1)
    assert per_selector < 2_000, f"{per_selector:.0f} bytes per selector on {n_nodes} nodes"
    # The counts are right for the last one: its anti-affinity rules out the two zones of its app's pods (400 nodes
    # each), which hold the two nodes its spread rules out (a pod there would make a skew of 2).
    last = n_selectors - 1
    zones = {(last * 7 + j) % n_nodes % 50 for j in range(2)}
    assert len(zones) == 2
    got = scheduler.filter(spread_and_anti(last))
    assert len(got.feasible) == n_nodes - 2 * n_nodes // 50
    assert sum(got.reasons.values()) == 2 * n_nodes // 50


# ---------------------------------------------------------------------------------------------------------------
# Namespaces that do not exist: kube-scheduler resolves the two sides of a term differently
# ---------------------------------------------------------------------------------------------------------------
NOT_TEAM_T1 = {"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["t1"]}]}


def _anti_pod(name: str, ns: str, namespace_selector: dict, node: str | None = None) -> dict:
    term = {
        "topologyKey": ZONE,
        "labelSelector": {"matchLabels": {"app": "web"}},
        "namespaceSelector": namespace_selector,
    }
    pod = {
        "metadata": {"name": name, "namespace": ns, "labels": {"app": "web"}},
        "spec": {
            "containers": [{"name": "c"}],
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
        },
    }
    if node:
        pod["spec"]["nodeName"] = node
    return pod


@pytest.mark.parametrize("namespace_selector", [NOT_TEAM_T1, {}], ids=["NotIn", "empty"])
def test_a_namespace_without_a_namespace_object(namespace_selector):
    """The incoming pod's own namespaceSelector takes in only namespaces that exist (kube lists them), an empty one
    every namespace; a bound pod's term reads a missing namespace of the incoming pod as one without labels."""
    nodes_ = [
        {"metadata": {"name": f"n{i}", "labels": {ZONE: f"z{i}"}}, "status": {"allocatable": {"pods": "9"}}}
        for i in range(2)
    ]
    native, reference = build_both((nodes_, [], [("n0", _anti_pod("bound", "ghost", namespace_selector))], [], []))
    scheduler = vcore.Scheduler(native, plugin_profile("InterPodAffinity"))
    own = _anti_pod("own", "other", namespace_selector)
    selector_matches_nothing = bool(namespace_selector)  # "ghost" has no Namespace object yet
    for _ in range(2):
        want = iref.ipa_filter(reference, own)
        assert filter_per_node(scheduler, own, ["n0", "n1"]) == want
        # the bound pod's term (in namespace "ghost") against the incoming pod of "other", which does not exist: it
        # reads as no labels, which NotIn t1 and {} both match; so n0's zone is ruled out either way
        assert want["n0"] is not None
        if selector_matches_nothing:
            assert want["n0"] == iref.R_EXISTING  # the pod's own term takes in nothing: only the bound pod's rule
        native.add_namespace(namespace("ghost", {"team": "t2"}))
        native.add_namespace(namespace("other", {"team": "t1"}))
        reference.namespaces.update({"ghost": {"team": "t2"}, "other": {"team": "t1"}})
        want = iref.ipa_filter(reference, own)
        assert filter_per_node(scheduler, own, ["n0", "n1"]) == want
        assert want["n0"] == iref.R_ANTI  # now the own term takes in "ghost" (team t2) in both cases
        native.remove_namespace("ghost")
        native.remove_namespace("other")
        reference.namespaces.clear()
