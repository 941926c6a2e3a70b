"""Agent workloads on one real control plane, each figure beside the physical limit measured in the
same run (the API server's own binding rate with a minimal client, and its create+bind rate):

- fast path: a paced burst of agent pods (``--rate`` pods/s, and 40% of the measured create+bind limit, a rate
  the API server sustains) arriving while batch cycles of gangs run (the
  ``vcore.sim.gang`` workload, ``--jobs`` PodGroups, posted at the same time): p50/p99 from each pod's watch event
  to its binding request (the scheduler's own exact samples, /debug/samples) and from creation to bind as observed
  through the API; beside the same burst with no batch work, and the real kube-scheduler on the same burst;
- sharded throughput: ``--pods`` pods split over 1, 2 and 4 hard-sharded vcore-scheduler instances (the nodes
  split into as many NodeShards), pods/s from the first creation to the last bind;
- warm pool: ``--pool`` session pods (paced) onto a warm pool of as many placeholders: creation-to-bind p50/p99 of
  the hits, beside the same pods through the plain fast path (no pool).

    python bench/agent_bench.py [--nodes 5000] [--jobs 2000] [--agents 5000] [--rate 1000] [--pods 10000]
                                [--pool 500] [--instances 1,2,4]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from kube_bench import (
    BindWatcher,
    RawClient,
    Result,
    bind_limit,
    burst,
    cpu_seconds,
    create_and_bind_limit,
    delete_pods,
    fan_out,
    percentile,
    plane_with_nodes,
    start_kube_scheduler,
    stop,
    wait_ready,
)
from vcore.sim.gang import NAMESPACE as BATCH_NS, gang_workload
from vcore_kube import nodeshard
from vcore_kube.testenv.control_plane import ControlPlane, free_port
from vcore_kube.testenv.objects import create_all, ensure_namespace, pod
from vcore_kube.warmpool import POOL_LABEL

SCHED, AGENT = "vcore", "vcore-agent"
MOST_ALLOCATED = {
    "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]
}


# -- pacing ---------------------------------------------------------------------------------------------------
def _post_paced(args) -> list[tuple[float, int]]:
    """(worker process) POST each (path, body) at its time (epoch seconds); returns (time sent, status)."""
    url, ca_file, token, items, threads = args
    client = RawClient(url, ca_file, token)

    def one(item):
        at, path, body = item
        delay = at - time.time()
        if delay > 0:
            time.sleep(delay)
        sent = time.time()
        return sent, client.post(path, body)

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(one, items))


def paced(
    plane: ControlPlane, items: list[tuple[str, bytes]], rate: float, processes: int = 2, threads: int = 16
) -> list[tuple[float, int]]:
    """POST items at `rate` per second (item i at start + i / rate), from several processes."""
    start = time.time() + 0.5
    timed = [(start + i / rate, path, body) for i, (path, body) in enumerate(items)]
    return fan_out(plane, _post_paced, timed, processes, threads)


def bodies(pods: list[dict]) -> list[tuple[str, bytes]]:
    return [(f"/api/v1/namespaces/{p['metadata']['namespace']}/pods", json.dumps(p).encode()) for p in pods]


# -- vcore-scheduler processes ----------------------------------------------------------------------------------
def start_vcore(
    plane: ControlPlane, workdir: Path, name: str, kubeconfig: str | None = None, **config
) -> tuple[subprocess.Popen, int]:
    port = free_port()
    path = workdir / f"{name}.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "schedulerName": name,
                "bindConcurrency": 32,
                "cyclePeriod": "20ms",
                "metricsAddress": f"127.0.0.1:{port}",
                "leaderElection": {"leaderElect": False},
                **config,
            }
        )
    )
    log = open(workdir / f"{name}.log", "ab")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vcore_kube",
            "--kubeconfig",
            kubeconfig or plane.scheduler_kubeconfig,
            "--config",
            str(path),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    return proc, port


def debug_samples(port: int) -> dict[str, list[float]]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/debug/samples", timeout=10) as r:
        return json.loads(r.read())


def metric(port: int, name: str) -> float:
    """A metric's value, summed over its label sets ('name{label="v"}' for one of them)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    total = 0.0
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            if key == name or ("{" not in name and key.split("{")[0] == name):
                total += float(value)
    return total


@dataclass
class Latency:
    name: str
    pods: int
    bound: int
    creation_to_bind_p50_ms: float
    creation_to_bind_p99_ms: float
    event_to_bind_p50_ms: float = float("nan")
    event_to_bind_p99_ms: float = float("nan")
    extra: dict = field(default_factory=dict)

    def row(self) -> str:
        return (
            f"{self.name:<44} {self.bound:>6}/{self.pods:<6} "
            f"creation->bind p50 {self.creation_to_bind_p50_ms:7.1f} p99 {self.creation_to_bind_p99_ms:7.1f} ms  "
            f"event->bind request p50 {self.event_to_bind_p50_ms:6.2f} p99 {self.event_to_bind_p99_ms:6.2f} ms  "
            f"{self.extra}"
        )


def _latencies(sent: list[tuple[float, int]], names: list[str], watcher: BindWatcher) -> list[float]:
    created = {n: t for n, (t, _) in zip(names, sent)}
    return [watcher.bound_at[n] - created[n] for n in names if n in watcher.bound_at]


# -- fast path --------------------------------------------------------------------------------------------------
def batch_background(plane: ControlPlane, n_nodes: int, n_jobs: int, max_gang: int) -> list[tuple[str, bytes]]:
    """The gang workload's queues, classes and PodGroups created now; its pods returned to be posted."""
    w = gang_workload(n_nodes=n_nodes, n_jobs=n_jobs, max_gang=max_gang, seed=0)
    api = plane.admin_api()
    ensure_namespace(api, BATCH_NS)
    for obj, path in [(q, "/apis/scheduling.volcano.sh/v1beta1/queues") for q in w.queues] + [
        (pc, "/apis/scheduling.k8s.io/v1/priorityclasses") for pc in w.priority_classes
    ]:
        try:
            api.create(path, obj)
        except Exception:  # already there from an earlier round
            pass
    create_all(
        api,
        [(f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{BATCH_NS}/podgroups", pg) for pg in w.podgroups],
        workers=16,
    )
    api.close()
    return bodies(w.pods)


def delete_podgroups(plane: ControlPlane) -> None:
    api = plane.admin_api()
    api.delete(f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{BATCH_NS}/podgroups", timeout=600)
    api.close()


def agent_burst(
    plane: ControlPlane, namespace: str, scheduler: str, n: int, rate: float, background: list | None = None
) -> tuple[list[tuple[float, int]], list[str], BindWatcher]:
    api = plane.admin_api()
    ensure_namespace(api, namespace)
    api.close()
    watcher = BindWatcher(plane, namespace)
    watcher.start()
    watcher.started.wait(10)
    names = [f"a{i}" for i in range(n)]
    agents = bodies([pod(name, namespace, scheduler=scheduler, cpu="100m", memory="64Mi") for name in names])
    poster = None
    if background:
        poster = threading.Thread(target=burst, args=(plane, background), daemon=True)
        poster.start()
        time.sleep(0.2)  # the first gangs are in the queue when the agents start
    sent = paced(plane, agents, rate)
    assert all(status == 201 for _, status in sent), {s for _, s in sent}
    watcher.wait(n, 600)
    watcher.stop = True
    if poster is not None:
        poster.join()
    return sent, names, watcher


def fast_path(
    plane: ControlPlane, workdir: Path, n_nodes: int, n_jobs: int, n_agents: int, rate: float, max_gang: int
) -> dict[str, Latency]:
    """The three runs at one rate: vcore beside gang cycles, vcore alone, kube-scheduler alone."""
    out = {}
    at = f" at {rate:.0f}/s"
    for key, with_batch in (("vcore+batch", True), ("vcore", False)):
        proc, port = start_vcore(
            plane,
            workdir,
            SCHED,
            fastPath={"enabled": True, "schedulerName": AGENT, "window": "1ms", "profile": MOST_ALLOCATED},
        )
        try:
            wait_ready(port)
            background = batch_background(plane, n_nodes, n_jobs, max_gang) if with_batch else None
            cpu0 = cpu_seconds(proc.pid)
            sent, names, watcher = agent_burst(
                plane, f"bench-agents-{key.replace('+', '-')}", AGENT, n_agents, rate, background
            )
            lat = _latencies(sent, names, watcher)
            samples = debug_samples(port)
            events = samples.get("fast_event_to_bind_request", [])
            decisions = samples.get("fast_event_to_decision", [])
            cycles = samples.get("cycle", [])
            out[key] = Latency(
                f"vcore fast path{' beside gang cycles' if with_batch else ''}{at}",
                n_agents,
                len(lat),
                1000 * percentile(lat, 0.5),
                1000 * percentile(lat, 0.99),
                percentile(events, 0.5),
                percentile(events, 0.99),
                {
                    "event_to_decision_p50_ms": round(percentile(decisions, 0.5), 2),
                    "event_to_decision_p99_ms": round(percentile(decisions, 0.99), 2),
                    "cycles": len(cycles),
                    "cycle_p50_ms": round(percentile(cycles, 0.5), 1),
                    "cycle_max_ms": round(max(cycles, default=float("nan")), 1),
                    "pods_bound": int(metric(port, 'vcore_scheduler_schedule_attempts_total{result="scheduled"}')),
                    "cpu_s": round(cpu_seconds(proc.pid) - cpu0, 1),
                },
            )
        finally:
            stop(proc)
        delete_pods(plane, f"bench-agents-{key.replace('+', '-')}")
        if with_batch:
            delete_pods(plane, BATCH_NS)
            delete_podgroups(plane)
    ks = start_kube_scheduler(plane, workdir)
    try:
        sent, names, watcher = agent_burst(plane, "bench-agents-kube", "default-scheduler", n_agents, rate)
        lat = _latencies(sent, names, watcher)
        out["kube-scheduler"] = Latency(
            f"kube-scheduler v1.34.4, same burst{at}",
            n_agents,
            len(lat),
            1000 * percentile(lat, 0.5),
            1000 * percentile(lat, 0.99),
        )
    finally:
        stop(ks)
    delete_pods(plane, "bench-agents-kube")
    return out


# -- sharded throughput ----------------------------------------------------------------------------------------
def sharded(plane: ControlPlane, workdir: Path, n_pods: int, instances: list[int]) -> dict[int, Result]:
    api = plane.admin_api()
    nodes = sorted(n["metadata"]["name"] for n in api.get("/api/v1/nodes")["items"])
    out = {}
    for k in instances:
        shards = [f"k{k}-s{i}" for i in range(k)]
        nodeshard.apply_assignment(api, {s: nodes[i::k] for i, s in enumerate(shards)})
        procs = [
            start_vcore(plane, workdir, f"vcore-k{k}-{i}", sharding={"mode": "hard", "shard": s})
            for i, s in enumerate(shards)
        ]
        namespace = f"bench-sharded-{k}"
        try:
            for _, port in procs:
                wait_ready(port)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                states = [nodeshard.Shard.of(api.get(nodeshard.path(s))) for s in shards]
                if all(s.in_use == s.desired for s in states):
                    break
                time.sleep(0.1)
            ensure_namespace(api, namespace)
            watcher = BindWatcher(plane, namespace)
            watcher.start()
            watcher.started.wait(10)
            names = [f"p{i}" for i in range(n_pods)]
            items = bodies(
                [
                    pod(n, namespace, scheduler=f"vcore-k{k}-{i % k}", cpu="100m", memory="64Mi")
                    for i, n in enumerate(names)
                ]
            )
            cpu0 = sum(cpu_seconds(p.pid) for p, _ in procs)
            sent = burst(plane, items)
            watcher.wait(n_pods, 600)
            watcher.stop = True
            lat = _latencies(sent, names, watcher)
            first, last = min(t for t, _ in sent), max(watcher.bound_at.values(), default=time.time())
            out[k] = Result(
                f"vcore-scheduler x{k} (hard shards)",
                n_pods,
                len(lat),
                last - first,
                len(lat) / (last - first),
                1000 * percentile(lat, 0.5),
                1000 * percentile(lat, 0.99),
                sum(cpu_seconds(p.pid) for p, _ in procs) - cpu0,
            )
        finally:
            for proc, _ in procs:
                stop(proc)
            for s in shards:  # the next round's instances get these nodes
                api.delete(nodeshard.path(s))
        delete_pods(plane, namespace)
    api.close()
    return out


# -- warm pool --------------------------------------------------------------------------------------------------
def warm_pool(plane: ControlPlane, workdir: Path, size: int, rate: float) -> dict[str, Latency]:
    out = {}
    for key, with_pool in (("hit", True), ("no pool", False)):
        proc, port = start_vcore(plane, workdir, SCHED, fastPath={"enabled": True, "schedulerName": AGENT})
        namespace = f"bench-warm-{'pool' if with_pool else 'plain'}"
        api = plane.admin_api()
        try:
            wait_ready(port)
            ensure_namespace(api, namespace)
            if with_pool:
                api.create(
                    f"/apis/vcore.io/v1alpha1/namespaces/{namespace}/warmpools",
                    {
                        "apiVersion": "vcore.io/v1alpha1",
                        "kind": "WarmPool",
                        "metadata": {"name": "sessions", "namespace": namespace},
                        "spec": {
                            "size": size,
                            "schedulerName": AGENT,
                            "template": {
                                "spec": {
                                    "containers": [
                                        {"name": "agent", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
                                    ]
                                }
                            },
                        },
                    },
                )
                deadline = time.monotonic() + 300
                while time.monotonic() < deadline and metric(port, "vcore_scheduler_warm_pool_ready") < size:
                    time.sleep(0.2)
            watcher = BindWatcher(plane, namespace)
            watcher.start()
            watcher.started.wait(10)
            names = [f"s{i}" for i in range(size)]
            labels = {POOL_LABEL: "sessions"} if with_pool else None
            sent = paced(
                plane,
                bodies([pod(n, namespace, scheduler=AGENT, cpu="100m", memory="64Mi", labels=labels) for n in names]),
                rate,
            )
            deadline = time.monotonic() + 300  # the namespace's placeholders are bound too: wait for the sessions
            while not set(names) <= watcher.bound_at.keys() and time.monotonic() < deadline:
                time.sleep(0.05)
            watcher.stop = True
            lat = _latencies(sent, names, watcher)
            hits = metric(port, "vcore_scheduler_warm_pool_hits_total")
            refill = debug_samples(port).get("warm_refill", [])
            out[key] = Latency(
                f"session pods, {'warm pool hits' if with_pool else 'plain fast path'}",
                size,
                len(lat),
                1000 * percentile(lat, 0.5),
                1000 * percentile(lat, 0.99),
                extra={"hits": int(hits), "refill_p50_ms": round(percentile(refill, 0.5), 1)} if with_pool else {},
            )
        finally:
            stop(proc)
            api.close()
        delete_pods(plane, namespace)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--max-gang", type=int, default=64)
    parser.add_argument("--agents", type=int, default=5000)
    parser.add_argument("--rate", type=float, default=1000)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--pool", type=int, default=500)
    parser.add_argument("--pool-rate", type=float, default=100)
    parser.add_argument("--instances", default="1,2,4")
    parser.add_argument("--dir", help="control-plane folder (default: a temporary one)")
    args = parser.parse_args()
    workdir = Path(args.dir or tempfile.mkdtemp(prefix="vcore-agent-bench-"))
    with plane_with_nodes(workdir, args.nodes, gpu_every=10) as plane:
        limits = {"bind": bind_limit(plane, args.pods), "create+bind": create_and_bind_limit(plane, args.pods)}
        for r in limits.values():
            print(r.row())
        sustainable = 0.4 * limits["create+bind"].pods_per_second
        for rate in (args.rate, sustainable):
            for r in fast_path(plane, workdir, args.nodes, args.jobs, args.agents, rate, args.max_gang).values():
                print(r.row())
        for r in sharded(plane, workdir, args.pods, [int(k) for k in args.instances.split(",")]).values():
            print(r.row())
        for r in warm_pool(plane, workdir, args.pool, args.pool_rate).values():
            print(r.row())


if __name__ == "__main__":
    main()
