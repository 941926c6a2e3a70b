"""vcore-scheduler --demo: the adapter's main job on an embedded default.

Starts the test control plane (building it the first time), creates synthetic nodes (a tenth with 8 GPUs),
runs vcore-scheduler in this process against it with exactly its ClusterRole's permissions, creates a mixed
workload in a burst (services, batch pods, GPU-sharing and whole-GPU pods, pods of another scheduler and a
few that fit nowhere), waits until every pod is bound or reported unschedulable, and prints a summary.
"""

from __future__ import annotations

import collections
import logging
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vcore_kube.config import load_config
from vcore_kube.testenv import ControlPlane, ControlPlaneError
from vcore_kube.testenv.build import BuildError
from vcore_kube.testenv.objects import create_nodes, create_pods, ensure_namespace, pod, synthetic_nodes

if TYPE_CHECKING:
    from prometheus_client import Histogram

    from vcore_kube.kubeclient import Api
    from vcore_kube.process import SchedulerProcess


NAMESPACE = "vcore-demo"


def mixed_workload(n: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    pods = []
    for i in range(n):
        r = rng.random()
        if r < 0.45:
            p = pod(
                f"web-{i}", NAMESPACE, cpu=rng.choice(["100m", "250m", "500m"]), memory="256Mi", labels={"app": "web"}
            )
        elif r < 0.75:
            p = pod(f"batch-{i}", NAMESPACE, cpu=rng.choice(["1", "2", "4"]), memory="2Gi", labels={"app": "batch"})
        elif r < 0.85:
            p = pod(f"infer-{i}", NAMESPACE, cpu="2", memory="8Gi", gpu_memory_mib=rng.choice([10000, 20000, 40000]))
        elif r < 0.92:
            p = pod(f"train-{i}", NAMESPACE, cpu="8", memory="64Gi", gpus=rng.choice([1, 2, 4, 8]))
        elif r < 0.97:
            p = pod(f"other-{i}", NAMESPACE, scheduler="someone-else")
        else:
            p = pod(f"huge-{i}", NAMESPACE, cpu="256")  # fits no node
        pods.append(p)
    return pods


def run_demo(*, nodes: int = 200, pods: int = 2000, directory: str | None = None) -> int:
    from vcore_kube.process import SchedulerProcess  # after the argument checks: the client import is slow

    folder = Path(directory or tempfile.mkdtemp(prefix="vcore-demo-"))
    if folder.exists() and any(folder.iterdir()):
        print(f"vcore-scheduler --demo: {folder} is not empty; the demo needs a fresh control plane")
        return 2
    print(f"starting the test control plane in {folder} ...", flush=True)
    try:
        plane = ControlPlane.up(folder)
    except (BuildError, ControlPlaneError) as e:  # no Go to build it with, or it did not start: say why, no traceback
        if directory is None:
            shutil.rmtree(folder, ignore_errors=True)
        print(f"vcore-scheduler --demo: {e}", file=sys.stderr)
        return 1
    process = None
    try:
        admin = plane.admin_api()
        started = time.perf_counter()
        create_nodes(admin, synthetic_nodes(nodes, gpu_every=10), workers=16)
        print(f"{nodes} nodes created ({nodes // 10} with 8 GPUs) in {time.perf_counter() - started:.1f} s")
        config = load_config(
            {
                "metricsAddress": "127.0.0.1:0",
                "leaderElection": {"leaderElect": False},
                "cyclePeriod": "20ms",
                "bindConcurrency": 32,
            }
        )
        logging.getLogger("vcore_kube").setLevel(logging.WARNING)
        process = SchedulerProcess(config, plane.scheduler_kubeconfig, identity="demo")
        process.start()
        while not process.synced():
            time.sleep(0.05)
        ensure_namespace(admin, NAMESPACE)
        workload = mixed_workload(pods)
        ours = [p for p in workload if p["spec"]["schedulerName"] == "vcore"]
        started = time.perf_counter()
        create_pods(admin, workload, workers=16)
        created = time.perf_counter() - started
        print(f"{len(workload)} pods created in {created:.1f} s ({len(ours)} for vcore)", flush=True)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            loop = process.loop
            if (
                not loop.in_flight
                and all(e.state != "active" for e in loop.pending.values())
                and len(loop.pending) + _bound_count(admin) >= len(ours)
            ):
                break
            time.sleep(0.2)
        elapsed = time.perf_counter() - started
        _summary(admin, process, ours, elapsed)
        return 0
    finally:
        if process is not None:
            process.shutdown()
        plane.down()


def _bound_count(admin: Api) -> int:
    items = admin.get(f"/api/v1/namespaces/{NAMESPACE}/pods", fieldSelector="spec.nodeName!=")["items"]
    return sum(1 for p in items if p["spec"].get("schedulerName") == "vcore")


def _summary(admin: Api, process: SchedulerProcess, ours: list[dict[str, Any]], elapsed: float) -> None:
    items = admin.get(f"/api/v1/namespaces/{NAMESPACE}/pods")["items"]
    mine = [p for p in items if p["spec"].get("schedulerName") == "vcore"]
    bound = [p for p in mine if p["spec"].get("nodeName")]
    kinds = collections.Counter(p["metadata"]["name"].split("-")[0] for p in bound)
    gpu_annotated = sum(1 for p in bound if "volcano.sh/gpu-index" in (p["metadata"].get("annotations") or {}))
    untouched = sum(1 for p in items if p["spec"].get("schedulerName") != "vcore" and not p["spec"].get("nodeName"))
    reasons: collections.Counter[str] = collections.Counter()
    for entry in process.loop.pending.values():
        reasons[entry.event_message.split(":", 1)[-1].strip() or "(retrying)"] += 1
    m = process.metrics
    print(
        f"\n{len(bound)}/{len(mine)} vcore pods bound in {elapsed:.1f} s from the first create "
        f"({len(bound) / elapsed:.0f} pods/s end to end, API server included)"
    )
    print("bound by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    print(f"GPU pods bound with a volcano.sh/gpu-index annotation: {gpu_annotated}")
    print(f"pods of another scheduler left alone: {untouched}")
    print(
        f"scheduling cycles: {process.loop.cycles}; cycle time p50 (vcore call): "
        f"{_histogram_quantile(m.cycle_duration, 0.5) * 1000:.1f} ms"
    )
    if reasons:
        print("pending, with their FailedScheduling reason:")
        for reason, count in reasons.most_common():
            print(f"  {count:5d}  {reason}")


def _histogram_quantile(histogram: Histogram, q: float) -> float:
    samples = {
        s.labels["le"]: s.value for metric in histogram.collect() for s in metric.samples if s.name.endswith("_bucket")
    }
    total = samples.get("+Inf", 0)
    for le, count in samples.items():
        if total and count >= q * total:
            return float(le)
    return float("nan")
