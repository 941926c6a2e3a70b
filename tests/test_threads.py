"""The thread contract: every Cluster and Scheduler call is atomic from any thread (Cluster.lock), a cycle holds
the cluster throughout, and nothing is bound that no call returned.

The stress test runs scheduling cycles, single-pod schedule() calls and node and pod churn in parallel threads for
a while, then checks the accounting exactly: per node, requested equals the sum of the requests of the pods bound
there; every bound pod was returned as placed by some call; no pod is bound twice.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter

import numpy as np

import vcore
from tests.batch import builders as B

STRESS_SECONDS = float(os.environ.get("VCORE_STRESS_SECONDS", "20"))
CPU_MILLI = {"250m": 250, "500m": 500, "1": 1000}


def test_a_mutation_from_another_thread_waits_for_the_cycle():
    cluster = vcore.Cluster()
    cluster.add_node(B.node("a"))
    for i in range(4):
        cluster.add_pod(B.pod(f"p{i}", cpu="500m"))
    entered, release = threading.Event(), threading.Event()
    order = []

    def between_jobs():  # the cycle's thread, holding the cluster
        if not entered.is_set():
            entered.set()
            release.wait(5)
            order.append("cycle still running")

    def mutate():
        entered.wait(5)
        release.set()
        cluster.add_node(B.node("b"))  # waits for the cycle to end
        order.append("node added")

    other = threading.Thread(target=mutate)
    other.start()
    vcore.Scheduler(cluster).run_cycle(between_jobs=between_jobs)
    order.append("cycle returned")
    other.join(5)
    assert order == ["cycle still running", "cycle returned", "node added"]


def test_cycles_schedule_and_churn_in_parallel_keep_the_accounting_exact():
    cluster = vcore.Cluster()
    requests: dict[str, tuple[int, int]] = {}  # pod key -> (cpu milli, memory bytes) as created
    for i in range(40):
        cluster.add_node(B.node(f"n{i}", cpu="8", mem="32Gi"))
    scheduler = vcore.Scheduler(cluster)
    fast = vcore.Scheduler(
        cluster,
        {"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]},
    )
    returned: Counter = Counter()  # pod key -> times a call returned it as placed
    returned_lock = threading.Lock()
    errors: list[BaseException] = []
    stop = time.monotonic() + STRESS_SECONDS

    def note(keys):
        with returned_lock:
            returned.update(keys)

    def pod(name: str, group: str | None = None) -> dict:
        cpu = ("250m", "500m", "1")[hash(name) % 3]
        requests[f"{B.NS}/{name}"] = (CPU_MILLI[cpu], 2**30)
        return B.pod(name, group, cpu=cpu, mem="1Gi")

    def cycles():
        while time.monotonic() < stop:
            result = scheduler.run_cycle()
            note(b.pod for b in result.bindings)

    def singles():
        i = 0
        while time.monotonic() < stop:
            batch = [pod(f"s{i}-{j}") for j in range(5)]
            i += 1
            note(p.pod for p in fast.schedule(batch) if p.node is not None)

    def pod_churn():
        i = 0
        while time.monotonic() < stop:
            group = f"g{i}"
            cluster.add_podgroup(B.podgroup(group, 3))
            for j in range(3):
                cluster.add_pod(pod(f"{group}-{j}", group))
            cluster.add_pod(pod(f"lone{i}"))
            if i >= 3:  # forget an older gang and a lone pod, whatever they got
                old = f"g{i - 3}"
                for j in range(3):
                    cluster.remove_pod(f"{B.NS}/{old}-{j}")
                cluster.remove_podgroup(f"{B.NS}/{old}")
                cluster.remove_pod(f"{B.NS}/lone{i - 3}")
            i += 1
            time.sleep(0.001)

    def node_churn():
        i = 0
        while time.monotonic() < stop:
            name = f"extra{i % 3}"
            if cluster.has_node(name):
                for key in cluster.remove_node(name, evict=True):  # pods of the batch layer go pending again
                    if not cluster.has_pod(key):
                        requests.pop(key, None)
            else:
                cluster.add_node(B.node(name, cpu="4", mem="16Gi"))
            i += 1
            time.sleep(0.002)

    def guarded(work):
        def run():
            try:
                work()
            except BaseException as e:  # noqa: BLE001 - reported by the main thread
                errors.append(e)

        return run

    threads = [threading.Thread(target=guarded(w)) for w in (cycles, singles, pod_churn, node_churn)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(STRESS_SECONDS + 60)
    assert not any(t.is_alive() for t in threads)
    assert errors == []

    with cluster.lock:  # one consistent view
        bound = {}
        for node in cluster.node_names:
            for key in cluster.pods_on(node):
                assert key not in bound, f"{key} bound twice"
                bound[key] = node
        assert set(bound) <= set(returned), "a pod is bound that no call returned as placed"
        cpu, mem = cluster.requested("cpu"), cluster.requested("memory")
        for node in cluster.node_names:
            index = cluster.node_index(node)
            keys = cluster.pods_on(node)
            assert cpu[index] == sum(requests[k][0] for k in keys)
            assert mem[index] == sum(requests[k][1] for k in keys)
            assert cpu[index] <= cluster.allocatable("cpu")[index]
        live = cluster.live_mask
        np.testing.assert_array_equal(cluster.requested_matrix[:, ~live], 0)
