"""The status writer's bookkeeping and Volcano's status shapes, in process (no API server, no writer threads):
wants coalesce per object, a status the newest known version already has is not written, older versions (the
watch echoing an earlier write) are ignored, a replaced or deleted object is forgotten, the retry backoff grows and
is capped; quantities are spelled as Go's resource.Quantity spells them; two statuses are the same when Volcano
would not write the new one. What touches the API is tested against the real control plane
(test_status_e2e.py)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, strategies as st

import vcore
from vcore_kube.statuswriter import RETRY_CAP, RETRY_INITIAL, StatusWriter, retry_delay
from vcore_kube.volcanostatus import (
    KINDS,
    PODGROUP,
    QUEUE,
    format_quantity,
    queue_patch,
    queue_status,
    rolled_up,
    same_podgroup_status,
    same_queue_status,
)

RUNNING = {
    "phase": "Running",
    "running": 1,
    "succeeded": 0,
    "failed": 0,
    "conditions": [
        {
            "type": "Scheduled",
            "status": "True",
            "reason": "tasks in gang are ready to be scheduled",
            "message": "",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
    ],
}
PENDING = {"phase": "Pending", "running": 0, "succeeded": 0, "failed": 0, "conditions": []}


def podgroup(rv: str, status: dict | None = None, uid: str = "u1") -> dict:
    return {
        "metadata": {"name": "g", "namespace": "ns", "uid": uid, "resourceVersion": rv},
        "spec": {"minMember": 1},
        **({"status": status} if status is not None else {}),
    }


@pytest.fixture
def writer():
    return StatusWriter(None, KINDS, workers=0)  # no threads: only the bookkeeping runs


def test_a_status_the_server_has_is_not_written(writer):
    assert not writer.want(PODGROUP, "ns/g", podgroup("5", RUNNING), RUNNING)
    assert writer.pending() == 0


def test_wants_coalesce_per_object_and_the_latest_wins(writer):
    assert writer.want(PODGROUP, "ns/g", podgroup("5"), PENDING)
    assert writer.want(PODGROUP, "ns/g", podgroup("5"), RUNNING)
    assert writer.pending() == 1 and writer.pending(PODGROUP) == 1 and writer.pending(QUEUE) == 0
    assert writer.wanted(PODGROUP, "ns/g") == RUNNING
    assert len(writer._ready) == 1  # one write queued, not two


def test_a_newer_version_with_the_wanted_status_leaves_nothing_to_write(writer):
    writer.want(PODGROUP, "ns/g", podgroup("5"), RUNNING)
    writer.observed(PODGROUP, "ns/g", podgroup("4", RUNNING))  # older than what is known: ignored
    assert writer.pending() == 1
    writer.observed(PODGROUP, "ns/g", podgroup("6", RUNNING))
    assert writer.pending() == 0


def test_an_echo_of_an_earlier_version_does_not_undo_a_newer_one(writer):
    writer.want(PODGROUP, "ns/g", podgroup("5"), RUNNING)
    writer.observed(PODGROUP, "ns/g", podgroup("7", RUNNING))  # e.g. our write's answer, then the watch
    assert writer.pending() == 0
    # The stale cache still shows version 5 when the loop wants the same status again: nothing to write.
    assert not writer.want(PODGROUP, "ns/g", podgroup("5"), RUNNING)
    # Someone changes it away from the wanted status: it is written back.
    writer.observed(PODGROUP, "ns/g", podgroup("8", PENDING))
    assert writer.pending() == 1


def test_a_deleted_or_replaced_object_is_forgotten(writer):
    writer.want(PODGROUP, "ns/g", podgroup("5"), RUNNING)
    writer.observed(PODGROUP, "ns/g", None)
    assert writer.pending() == 0 and writer.wanted(PODGROUP, "ns/g") is None
    writer.want(PODGROUP, "ns/g", podgroup("9"), RUNNING)
    writer.observed(PODGROUP, "ns/g", podgroup("10", uid="u2"))  # a new object of the same name
    assert writer.pending() == 0 and writer.wanted(PODGROUP, "ns/g") is None


def test_retry_delay_doubles_and_is_capped_with_jitter():
    rng = random.Random(1)
    for failures in range(1, 40):
        d = min(RETRY_CAP, RETRY_INITIAL * 2 ** (failures - 1))
        delays = [retry_delay(failures, rng) for _ in range(50)]
        assert all(d / 2 <= x <= d for x in delays), failures
    assert retry_delay(1000, rng) <= RETRY_CAP


# -- Volcano's shapes -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "resource, amount, text",
    [
        ("cpu", 0, "0"),
        ("cpu", 100, "100m"),
        ("cpu", 1000, "1"),
        ("cpu", 1500, "1500m"),
        ("cpu", 2_500_000, "2500"),
        ("cpu", 3_000_000, "3k"),
        ("memory", 0, "0"),
        ("memory", 1000, "1k"),
        ("memory", 1023, "1023"),
        ("memory", 1024, "1Ki"),
        ("memory", 1536, "1536"),
        ("memory", 128 * 2**20, "128Mi"),
        ("memory", 1_000_000_000, "1000000000"),
        ("memory", 3 * 2**30, "3Gi"),
        ("pods", 110, "110"),
        ("pods", 2000, "2k"),
        ("nvidia.com/gpu", 8, "8"),
        ("ephemeral-storage", 10 * 2**30, "10737418240"),
    ],
)
def test_quantities_are_spelled_as_go_spells_them(resource, amount, text):
    # resource.NewMilliQuantity(cpu, DecimalSI), NewQuantity(memory, BinarySI), NewQuantity(pods, DecimalSI) and
    # the scalars in decimal SI: what Volcano's ConvertRes2ResList gives, as String() prints it.
    assert format_quantity(resource, amount) == text


@given(st.sampled_from(["cpu", "memory", "pods", "nvidia.com/gpu"]), st.integers(0, 2**62))
def test_a_formatted_quantity_parses_back_to_its_amount(resource, amount):
    assert vcore.parse_quantity(format_quantity(resource, amount), milli=resource == "cpu") == amount


def test_a_negative_amount_is_refused_naming_the_resource():
    with pytest.raises(ValueError, match="allocated.cpu: must not be negative"):
        format_quantity("cpu", -1)


def test_podgroup_statuses_compare_as_volcano_compares_them():
    later = {
        **RUNNING,
        "conditions": [{**RUNNING["conditions"][0], "lastTransitionTime": "2027-01-01T00:00:00Z", "transitionID": "x"}],
    }
    assert same_podgroup_status(later, RUNNING)  # a condition's time and transitionID do not count
    sparse = {"phase": "Pending", "conditions": [], "running": 0}  # Go omits zero counts
    assert same_podgroup_status(sparse, PENDING)
    assert not same_podgroup_status({}, PENDING)
    assert not same_podgroup_status(RUNNING, {**RUNNING, "running": 2})
    assert not same_podgroup_status(RUNNING, {**RUNNING, "conditions": []})
    unschedulable = [{"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources", "message": "a"}]
    assert not same_podgroup_status(
        {**PENDING, "conditions": unschedulable}, {**PENDING, "conditions": [{**unschedulable[0], "message": "b"}]}
    )


def queue(allocated=None, podgroups=None, state="Open") -> vcore.QueueStatus:
    return vcore.QueueStatus(allocated or {}, {}, 0.0, 0, 0, state, podgroups or {})


def test_queue_status_is_volcanos_shape():
    status = queue_status(
        queue({"cpu": 1500, "memory": 2**30, "nvidia.com/gpu": 2}, {"Running": 3, "Inqueue": 1}),
        {"cpu": 1500, "memory": 2**30, "nvidia.com/gpu": 2},
    )
    assert status == {
        "state": "Open",
        "allocated": {"cpu": "1500m", "memory": "1Gi", "nvidia.com/gpu": "2"},
        "pending": 0,
        "running": 3,
        "unknown": 0,
        "inqueue": 1,
        "completed": 0,
    }
    assert queue_status(queue(state=""), {})["allocated"] == {"cpu": "0", "memory": "0"}  # always cpu and memory
    assert queue_status(queue(state=""), {})["state"] == "Open"  # unset reads Open, as the queue controller sets


def test_queue_statuses_compare_quantities_by_value():
    want = queue_status(queue({"cpu": 1000, "memory": 2**30}, {"Running": 1}), {"cpu": 1000, "memory": 2**30})
    have = {"state": "Open", "running": 1, "allocated": {"cpu": "1000m", "memory": "1073741824"}}
    assert same_queue_status(have, want)
    assert not same_queue_status({**have, "state": "Closed"}, want)
    assert not same_queue_status({**have, "allocated": {**have["allocated"], "nvidia.com/gpu": "1"}}, want)
    assert same_queue_status({**have, "allocated": {**have["allocated"], "nvidia.com/gpu": "0"}}, want)
    assert not same_queue_status({**have, "allocated": {"cpu": "not a quantity"}}, want)
    # A resource no longer allocated is removed by the merge patch, not left behind.
    assert queue_patch(have | {"allocated": {"nvidia.com/gpu": "1"}}, want)["allocated"]["nvidia.com/gpu"] is None


def test_a_parent_queue_is_allocated_what_its_children_are():
    queues = {
        "root": queue(),
        "team": queue(),
        "a": queue({"cpu": 1000}),
        "b": queue({"cpu": 500, "memory": 10}),
        "default": queue({"cpu": 100}),
    }
    out = rolled_up(queues, {"team": "root", "a": "team", "b": "team"})
    assert out["team"] == {"cpu": 1500, "memory": 10}
    assert out["root"] == {"cpu": 1600, "memory": 10}  # default has no parent: the root's child, as in Volcano
    assert out["a"] == {"cpu": 1000}
    flat = rolled_up({k: v for k, v in queues.items() if k != "root"}, {"a": "team"})
    assert flat["team"] == {}  # no root queue: no hierarchy, each queue its own
