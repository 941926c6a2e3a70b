"""vcore-scheduler against the real API server, with exactly the deploy/ ClusterRole's permissions: plain pods,
GPU-sharing pods and their volcano.sh/gpu-index annotation, an unschedulable pod (event and condition with the
reasons, bound once a node is added), pods of another scheduler left alone, metrics and probes."""

from __future__ import annotations

import functools

import pytest

from vcore_kube.testenv.objects import create_nodes, create_pods, node, pod

from .harness import bound, check_invariants, events, pods, wait_bound, wait_for


@pytest.fixture
def scheduler(scheduler):
    return functools.partial(scheduler, "vcore-e2e")


def labelled_nodes(admin, prefix: str, n: int, **kw) -> dict:
    """n nodes carrying the label pool=<prefix>, so a test's pods (nodeSelector) land only on its own nodes."""
    create_nodes(admin, [node(f"{prefix}-{i}", labels={"pool": prefix}, **kw) for i in range(n)])
    return {"pool": prefix}


def pinned(p: dict, selector: dict) -> dict:
    p["spec"]["nodeSelector"] = selector
    return p


def test_plain_pods_are_bound_with_scheduled_events(admin, namespace, scheduler):
    run = scheduler()
    selector = labelled_nodes(admin, "plain", 3, cpu="4")
    names = [f"p{i}" for i in range(30)]
    create_pods(admin, [pinned(pod(n, namespace, scheduler="vcore-e2e", cpu="300m"), selector) for n in names])
    placed = wait_bound(admin, namespace, names, run=run)
    assert set(placed.values()) <= {"plain-0", "plain-1", "plain-2"}
    assert len(set(placed.values())) == 3  # LeastAllocated spreads them
    wait_for(lambda: len(events(admin, namespace, "Scheduled")) == 30, 30, "30 Scheduled events", run)
    ev = events(admin, namespace, "Scheduled")[0]
    assert ev["type"] == "Normal" and ev["reportingController"] == "vcore-e2e"
    assert ev["note"].startswith(f"Successfully assigned {namespace}/")
    check_invariants(admin, namespace, "vcore-e2e", expect_all_bound=True)
    assert run.metric('vcore_scheduler_schedule_attempts_total{result="scheduled"}') == 30


def test_gpu_sharing_pods_carry_their_gpu_index(admin, namespace, scheduler):
    run = scheduler()
    selector = labelled_nodes(admin, "gpushare", 1, gpus=2)
    shared = [
        pinned(pod(f"share{i}", namespace, scheduler="vcore-e2e", gpu_memory_mib=30000), selector) for i in range(4)
    ]
    whole = pinned(pod("whole", namespace, scheduler="vcore-e2e", gpus=1), selector)
    create_pods(admin, shared)
    wait_bound(admin, namespace, [f"share{i}" for i in range(4)], run=run)
    create_pods(admin, [whole])
    items = {p["metadata"]["name"]: p for p in pods(admin, namespace)}
    indices = [items[f"share{i}"]["metadata"]["annotations"]["volcano.sh/gpu-index"] for i in range(4)]
    # 4 x 30000 MiB on two 80 GiB GPUs: at most two per GPU, so both GPUs are used, by two shares each.
    assert sorted(indices) == ["0", "0", "1", "1"]
    # A whole GPU needs a GPU nobody shares: there is none left.
    wait_for(lambda: events(admin, namespace, "FailedScheduling"), 20, "FailedScheduling for the whole GPU", run)
    assert "whole" not in bound(admin, namespace)
    check_invariants(admin, namespace, "vcore-e2e")


def test_whole_gpu_pod_gets_its_indices(admin, namespace, scheduler):
    run = scheduler()
    selector = labelled_nodes(admin, "gpuwhole", 1, gpus=4)
    create_pods(
        admin,
        [
            pinned(pod("two", namespace, scheduler="vcore-e2e", gpus=2), selector),
            pinned(pod("one", namespace, scheduler="vcore-e2e", gpus=1), selector),
        ],
    )
    wait_bound(admin, namespace, ["two", "one"], run=run)
    items = {
        p["metadata"]["name"]: p["metadata"]["annotations"]["volcano.sh/gpu-index"] for p in pods(admin, namespace)
    }
    two, one = {int(i) for i in items["two"].split(",")}, {int(i) for i in items["one"].split(",")}
    assert len(two) == 2 and len(one) == 1 and not two & one and (two | one) <= {0, 1, 2, 3}
    check_invariants(admin, namespace, "vcore-e2e", expect_all_bound=True)


def test_unschedulable_pod_gets_reasons_then_binds_when_a_node_is_added(admin, namespace, scheduler):
    run = scheduler()
    create_pods(admin, [pod("big", namespace, scheduler="vcore-e2e", cpu="500")])
    failed = wait_for(lambda: events(admin, namespace, "FailedScheduling"), 30, "FailedScheduling", run)
    assert failed[0]["type"] == "Warning" and "Insufficient cpu" in failed[0]["note"]
    assert failed[0]["note"].startswith("0/")
    condition = wait_for(
        lambda: next(
            (c for c in pods(admin, namespace)[0]["status"].get("conditions", []) if c["type"] == "PodScheduled"), None
        ),
        30,
        "PodScheduled condition",
        run,
    )
    assert condition["status"] == "False" and condition["reason"] == "Unschedulable"
    assert "Insufficient cpu" in condition["message"]
    check_invariants(admin, namespace, "vcore-e2e")
    create_nodes(admin, [node("huge-node", cpu="512")])
    assert wait_bound(admin, namespace, ["big"], run=run)["big"] == "huge-node"
    check_invariants(admin, namespace, "vcore-e2e", expect_all_bound=True)


def test_pods_of_another_scheduler_are_untouched(admin, namespace, scheduler):
    run = scheduler()
    create_pods(
        admin, [pod("theirs", namespace, scheduler="someone-else"), pod("ours", namespace, scheduler="vcore-e2e")]
    )
    wait_bound(admin, namespace, ["ours"], run=run)
    run.stop()
    theirs = next(p for p in pods(admin, namespace) if p["metadata"]["name"] == "theirs")
    assert not theirs["spec"].get("nodeName") and not theirs.get("status", {}).get("conditions")
    assert all(e["regarding"]["name"] != "theirs" for e in events(admin, namespace))
    check_invariants(admin, namespace, "vcore-e2e")


def test_pods_bound_by_others_count_against_their_node(admin, namespace, scheduler):
    """A node filled by another scheduler's pods takes no more of ours."""
    selector = labelled_nodes(admin, "shared", 1, cpu="2")
    create_pods(admin, [pod("foreign", namespace, scheduler="other", cpu="1500m", node_name="shared-0")])
    run = scheduler()
    create_pods(admin, [pinned(pod("mine", namespace, scheduler="vcore-e2e", cpu="1"), selector)])
    wait_for(lambda: events(admin, namespace, "FailedScheduling"), 30, "FailedScheduling", run)
    assert "mine" not in bound(admin, namespace)
    check_invariants(admin, namespace, "vcore-e2e")


def test_probes_and_metrics(scheduler):
    run = scheduler()
    assert run.get("/healthz") == 200 and run.get("/readyz") == 200 and run.get("/nope") == 404
    names = run.metrics()
    for metric in (
        "vcore_scheduler_cycle_duration_seconds_count",
        "vcore_scheduler_is_leader",
        'vcore_scheduler_relists_total{kind="Pod",reason="start"}',
    ):
        assert metric in names, metric
    assert names["vcore_scheduler_is_leader"] == 1.0  # leader election off: it leads
