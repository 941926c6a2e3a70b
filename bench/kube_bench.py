"""vcore-scheduler next to the real kube-scheduler on one real control plane (no kubelets, as kube-scheduler's
scheduler_perf runs): both place the same burst of pods onto the same Node objects, in turn; plus the API
server's own binding throughput with a minimal client (the physical limit of any scheduler here), and the
restart benchmark (nodes plus many running pods: scheduler start to first bind, peak RSS), and the PodGroup status
burst (single-pod PodGroups: pods/s from the first create to the last PodGroup read Running, the status writes it
took, beside the API server's create+bind limit in the same run).

    python bench/kube_bench.py [--nodes 5000] [--pods 10000] [--restart-pods 50000] [--podgroups 10000]

Creation-to-bind latency is measured by this process: from just before a pod's create request is sent to the
moment its watch shows the pod bound. Pods/s is pods bound over the span from the first pod created to the
last pod bound. Both schedulers emit their Scheduled events (kube-scheduler always does) and run without a
client-side rate limit (kube-scheduler's default of 50 QPS would cap it at 50 pods/s).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import multiprocessing
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from vcore_kube.testenv.control_plane import ADMIN_USER, ControlPlane, free_port
from vcore_kube.testenv.objects import create_nodes, ensure_namespace, pod, synthetic_nodes


# -- a minimal, fast client: one keep-alive HTTPS connection per thread, bodies serialized up front ----------
class RawClient:
    def __init__(self, url: str, ca_file: str, token: str) -> None:
        self.host, self.port = url.split("//")[1].split(":")
        self.ca_file, self.token = ca_file, token
        self._local = threading.local()

    def _conn(self) -> http.client.HTTPSConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            ctx = ssl.create_default_context(cafile=self.ca_file)
            conn = self._local.conn = http.client.HTTPSConnection(self.host, int(self.port), context=ctx, timeout=60)
        return conn

    def post(self, path: str, body: bytes) -> int:
        for _attempt in range(3):
            conn = self._conn()
            try:
                conn.request(
                    "POST",
                    path,
                    body,
                    {
                        "Authorization": f"Bearer {self.token}",
                        "Content-Type": "application/json",
                        "Accept": "application/json",
                    },
                )
                response = conn.getresponse()
                response.read()
                return response.status
            except (http.client.HTTPException, OSError):
                conn.close()
                self._local.conn = None
        raise RuntimeError(f"POST {path} failed 3 times")


def _post_all(args) -> list[tuple[float, int]]:
    """(worker process) POST bodies with threads; returns (time sent, status) per item. An item is one
    (path, body) or a tuple of them, sent in order on one connection (status: the worst of them)."""
    url, ca_file, token, items, threads = args
    client = RawClient(url, ca_file, token)

    def one(item):
        requests = item if isinstance(item[0], tuple) else (item,)
        sent = time.time()
        return sent, max(client.post(path, body) for path, body in requests)

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(one, items))


def fan_out(plane: ControlPlane, worker, items: list, processes: int = 2, threads: int = 16) -> list:
    """items split over worker processes (so the GIL is not the limit), each posting with `threads` threads as
    the admin; the workers' results in item order."""
    chunks = [items[i::processes] for i in range(processes)]
    args = [(plane.apiserver_url, plane.ca_file, plane.tokens[ADMIN_USER], c, threads) for c in chunks]
    # Spawned, not forked: the caller has threads running (watchers, other bursts), and a fork can inherit a lock
    # one of them held; a forked worker once hung for good creating its SSL context.
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        parts = pool.map(worker, args)
    out: list = [None] * len(items)
    for i, part in enumerate(parts):
        out[i::processes] = part
    return out


def burst(
    plane: ControlPlane, items: list[tuple[str, bytes]], processes: int = 2, threads: int = 16
) -> list[tuple[float, int]]:
    """POST everything as fast as this machine can."""
    return fan_out(plane, _post_all, items, processes, threads)


@contextlib.contextmanager
def plane_with_nodes(directory: str | Path, n_nodes: int, gpu_every: int = 0, workers: int = 16):
    """A test control plane in `directory` holding `n_nodes` synthetic nodes; stopped on exit."""
    plane = ControlPlane.up(directory)
    try:
        started = time.time()
        create_nodes(plane.admin_api(), synthetic_nodes(n_nodes, gpu_every=gpu_every), workers=workers)
        print(f"{n_nodes} nodes created in {time.time() - started:.1f} s", flush=True)
        yield plane
    finally:
        plane.down()


@contextlib.contextmanager
def bench_plane(directory: str | Path, n_nodes: int, **kw):
    """plane_with_nodes for a pytest benchmark, which skips when the control plane cannot be built (no Go)."""
    import pytest

    from vcore_kube.testenv import build

    try:
        build.binaries_dir(build=shutil.which("go") is not None)
    except build.BuildError as e:
        pytest.skip(f"no control plane: {e}")
    with plane_with_nodes(directory, n_nodes, **kw) as plane:
        yield plane


def pod_bodies(namespace: str, n: int, scheduler: str, prefix: str = "p") -> list[tuple[str, bytes]]:
    path = f"/api/v1/namespaces/{namespace}/pods"
    return [
        (path, json.dumps(pod(f"{prefix}{i}", namespace, scheduler=scheduler, cpu="100m", memory="128Mi")).encode())
        for i in range(n)
    ]


# -- watching binds (and PodGroups) --------------------------------------------------------------------------
class Watcher(threading.Thread):
    """Watches one collection of a namespace (relisting when the stream breaks) and hands each object to
    `seen(event_type, obj, now)`: ADDED for a listed one."""

    def __init__(self, plane: ControlPlane, path: str) -> None:
        super().__init__(daemon=True)
        self.api = plane.admin_api(pool_size=2)
        self.path = path
        self.started = threading.Event()
        self.stop = False

    def seen(self, event_type: str, obj: dict, now: float) -> None:
        raise NotImplementedError

    def run(self) -> None:
        rv = self._relist()
        self.started.set()
        while not self.stop:
            try:
                rv = self._watch(rv)
            except Exception:  # the stream broke or expired: catch up with a list, then watch again
                rv = self._relist()

    def _relist(self) -> str:
        listed = self.api.get(self.path)
        now = time.time()
        for obj in listed["items"]:
            self.seen("ADDED", obj, now)
        return listed["metadata"]["resourceVersion"]

    def _watch(self, rv: str) -> str:
        response = self.api.open(
            "GET",
            self.path,
            query={"watch": True, "resourceVersion": rv, "timeoutSeconds": 600, "allowWatchBookmarks": True},
        )
        buffer = b""
        try:
            for chunk in response.stream(amt=None, decode_content=False):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                now = time.time()
                for line in lines:
                    if not line:
                        continue
                    event = json.loads(line)
                    obj = event["object"]
                    if event["type"] == "ERROR":
                        raise RuntimeError(obj.get("message"))
                    rv = obj["metadata"].get("resourceVersion", rv)
                    if event["type"] != "BOOKMARK":
                        self.seen(event["type"], obj, now)
                if self.stop:
                    break
        finally:
            response.release_conn()
        return rv


class BindWatcher(Watcher):
    """Records when each pod of a namespace is first seen bound."""

    def __init__(self, plane: ControlPlane, namespace: str) -> None:
        super().__init__(plane, f"/api/v1/namespaces/{namespace}/pods")
        self.namespace = namespace
        self.bound_at: dict[str, float] = {}

    def seen(self, event_type: str, obj: dict, now: float) -> None:
        if obj["spec"].get("nodeName"):
            self.bound_at.setdefault(obj["metadata"]["name"], now)

    def wait(self, n: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while len(self.bound_at) < n and time.monotonic() < deadline:
            time.sleep(0.05)
        return len(self.bound_at) >= n


class PodGroupWatcher(Watcher):
    """Records, per PodGroup of a namespace, when it is first seen Running and how many times it was modified (a
    status write is one modification)."""

    def __init__(self, plane: ControlPlane, namespace: str) -> None:
        super().__init__(plane, f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{namespace}/podgroups")
        self.running_at: dict[str, float] = {}
        self.modified: Counter[str] = Counter()

    def seen(self, event_type: str, obj: dict, now: float) -> None:
        name = obj["metadata"]["name"]
        if event_type == "MODIFIED":
            self.modified[name] += 1
        if (obj.get("status") or {}).get("phase") == "Running":
            self.running_at.setdefault(name, now)


@dataclass
class Result:
    name: str
    pods: int
    bound: int
    seconds: float
    pods_per_second: float
    p50_ms: float
    p99_ms: float
    cpu_seconds: float = float("nan")  # the scheduler process's CPU time during the run

    def row(self) -> str:
        return (
            f"{self.name:<30} {self.bound:>6}/{self.pods:<6} {self.seconds:8.2f} s {self.pods_per_second:9.0f} "
            f"pods/s  p50 {self.p50_ms:8.0f} ms  p99 {self.p99_ms:8.0f} ms  "
            f"scheduler CPU {self.cpu_seconds:6.1f} s"
        )


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def measure_burst(
    plane: ControlPlane,
    namespace: str,
    scheduler: str,
    n: int,
    name: str,
    pid: int,
    timeout: float = 600,
    bodies: list[tuple[str, bytes]] | None = None,
) -> Result:
    ensure_namespace(admin := plane.admin_api(), namespace)
    cpu_before = cpu_seconds(pid)
    watcher = BindWatcher(plane, namespace)
    watcher.start()
    watcher.started.wait(10)
    bodies = bodies if bodies is not None else pod_bodies(namespace, n, scheduler)
    sent = burst(plane, bodies)
    assert all(status == 201 for _, status in sent), {s for _, s in sent}
    watcher.wait(n, timeout)
    watcher.stop = True
    created = {f"p{i}": t for i, (t, _) in enumerate(sent)}
    latencies = [watcher.bound_at[k] - created[k] for k in watcher.bound_at if k in created]
    first, last = min(created.values()), max(watcher.bound_at.values(), default=time.time())
    admin.close()
    return Result(
        name,
        n,
        len(watcher.bound_at),
        last - first,
        len(watcher.bound_at) / (last - first),
        1000 * percentile(latencies, 0.5),
        1000 * percentile(latencies, 0.99),
        cpu_seconds(pid) - cpu_before,
    )


def delete_pods(plane: ControlPlane, namespace: str) -> None:
    """Delete every pod of the namespace."""
    delete_collection(plane, f"/api/v1/namespaces/{namespace}/pods")


def delete_collection(plane: ControlPlane, path: str) -> None:
    """Delete every object of a collection (a deletecollection; a large one outlives the API server's request
    timeout, so it is repeated until the collection is empty)."""
    import urllib3

    from vcore_kube.kubeclient import ApiException

    api = plane.admin_api()
    while api.get(path, limit=1)["items"]:
        try:
            api.delete(path, gracePeriodSeconds=0, timeout=600)
        except ApiException as e:
            if e.status != 504:
                raise
        except urllib3.exceptions.HTTPError:  # the server gave up on the request; the deletion went on
            time.sleep(1)
    api.close()


# -- the schedulers -----------------------------------------------------------------------------------------
def start_kube_scheduler(plane: ControlPlane, workdir: Path) -> subprocess.Popen:
    config = workdir / "kube-scheduler.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "clientConnection": {"kubeconfig": plane.kube_scheduler_kubeconfig, "qps": 100000, "burst": 100000},
                "leaderElection": {"leaderElect": False},
            }
        )
    )
    log = open(workdir / "kube-scheduler.log", "ab")
    proc = subprocess.Popen(
        [str(Path(plane.binaries) / "kube-scheduler"), "--config", str(config), "--secure-port=0"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    time.sleep(3)  # informers sync (no readiness endpoint without the secure port)
    return proc


def start_vcore_scheduler(
    plane: ControlPlane, workdir: Path, concurrency: int = 32, events: bool = True
) -> tuple[subprocess.Popen, int]:
    port = free_port()
    config = workdir / "vcore-scheduler.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "schedulerName": "vcore",
                "bindConcurrency": concurrency,
                "cyclePeriod": "20ms",
                "metricsAddress": f"127.0.0.1:{port}",
                "emitEvents": events,
                "leaderElection": {"leaderElect": False},
            }
        )
    )
    log = open(workdir / "vcore-scheduler.log", "ab")
    proc = subprocess.Popen(
        [sys.executable, "-m", "vcore_kube", "--kubeconfig", plane.scheduler_kubeconfig, "--config", str(config)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    return proc, port


def wait_ready(port: int, timeout: float = 600) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise TimeoutError("vcore-scheduler not ready")


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# -- the measurements ---------------------------------------------------------------------------------------
def binding_bodies(namespace: str, n: int, nodes: list[str]) -> list[tuple[str, bytes]]:
    return [
        (
            f"/api/v1/namespaces/{namespace}/pods/p{i}/binding",
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Binding",
                    "metadata": {"name": f"p{i}"},
                    "target": {"apiVersion": "v1", "kind": "Node", "name": nodes[i % len(nodes)]},
                }
            ).encode(),
        )
        for i in range(n)
    ]


def _timed_burst(plane: ControlPlane, name: str, namespace: str, items: list) -> Result:
    started = time.time()
    sent = burst(plane, items)
    seconds = time.time() - started
    ok = sum(s == 201 for _, s in sent)
    delete_pods(plane, namespace)
    return Result(name, len(items), ok, seconds, ok / seconds, float("nan"), float("nan"))


def _node_names(plane: ControlPlane, namespace: str) -> list[str]:
    ensure_namespace(api := plane.admin_api(), namespace)
    nodes = [n["metadata"]["name"] for n in api.get("/api/v1/nodes")["items"]]
    api.close()
    return nodes


def bind_limit(plane: ControlPlane, n: int) -> Result:
    """The API server's own binding throughput: pre-created pods bound by the minimal client, no scheduler."""
    namespace = "bench-bind-limit"
    nodes = _node_names(plane, namespace)
    assert all(s == 201 for _, s in burst(plane, pod_bodies(namespace, n, "nobody")))
    return _timed_burst(plane, "API server bind limit", namespace, binding_bodies(namespace, n, nodes))


def create_and_bind_limit(plane: ControlPlane, n: int) -> Result:
    """The API server's throughput for what a scheduler's run costs it at least: each pod created and then
    bound by the minimal client (no watch, no scheduling, no events) - a burst with a zero-cost scheduler."""
    namespace = "bench-create-bind-limit"
    nodes = _node_names(plane, namespace)
    pairs = list(zip(pod_bodies(namespace, n, "nobody"), binding_bodies(namespace, n, nodes)))
    return _timed_burst(plane, "API server create+bind limit", namespace, pairs)


def side_by_side(plane: ControlPlane, n_pods: int, workdir: Path) -> dict[str, Result]:
    results = {"limit": bind_limit(plane, n_pods), "create+bind": create_and_bind_limit(plane, n_pods)}
    ks = start_kube_scheduler(plane, workdir)
    try:
        results["kube-scheduler"] = measure_burst(
            plane, "bench-kube-scheduler", "default-scheduler", n_pods, "kube-scheduler v1.34.4", ks.pid
        )
    finally:
        stop(ks)
    delete_pods(plane, "bench-kube-scheduler")
    # The same scheduler without its Scheduled events (one request per pod less for the API server): what the
    # events cost, on a machine where the API server is the limit.
    for key, events in (("vcore", True), ("vcore-no-events", False)):
        vs, port = start_vcore_scheduler(plane, workdir, events=events)
        try:
            wait_ready(port)
            results[key] = measure_burst(
                plane, f"bench-{key}", "vcore", n_pods, "vcore-scheduler" + ("" if events else " (no events)"), vs.pid
            )
        finally:
            stop(vs)
        delete_pods(plane, f"bench-{key}")
    return results


# -- inter-pod constraints side by side ---------------------------------------------------------------------
ZONE = "topology.kubernetes.io/zone"


def constrained_pod_bodies(namespace: str, n: int, scheduler: str, n_nodes: int) -> list[tuple[str, bytes]]:
    """n pods: a third (at most one per node) with required anti-affinity to each other per hostname, the rest
    spread over the zones with maxSkew 1 (DoNotSchedule); interleaved in creation order."""
    n_anti = min(n // 3, n_nodes)
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "anti"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "spread"}},
        }
    ]
    path = f"/api/v1/namespaces/{namespace}/pods"
    out = []
    for i in range(n):
        is_anti = i % 3 == 0 and i // 3 < n_anti
        body = pod(
            f"p{i}",
            namespace,
            scheduler=scheduler,
            cpu="100m",
            memory="128Mi",
            labels={"app": "anti" if is_anti else "spread"},
        )
        if is_anti:
            body["spec"]["affinity"] = anti
        else:
            body["spec"]["topologySpreadConstraints"] = spread
        out.append((path, json.dumps(body).encode()))
    return out


def constraint_violations(plane: ControlPlane, namespace: str) -> int:
    """From the API: anti-affinity pods sharing a node, plus how far the spread pods' zones exceed skew 1."""
    api = plane.admin_api()
    zone_of = {
        nd["metadata"]["name"]: nd["metadata"].get("labels", {}).get(ZONE) for nd in api.get("/api/v1/nodes")["items"]
    }
    pods = api.get(f"/api/v1/namespaces/{namespace}/pods")["items"]
    api.close()
    anti_nodes = [
        p["spec"]["nodeName"] for p in pods if p["metadata"]["labels"]["app"] == "anti" and p["spec"].get("nodeName")
    ]
    per_zone = {z: 0 for z in set(zone_of.values())}
    for p in pods:
        if p["metadata"]["labels"]["app"] == "spread" and p["spec"].get("nodeName"):
            per_zone[zone_of[p["spec"]["nodeName"]]] += 1
    skew = max(per_zone.values()) - min(per_zone.values()) if per_zone else 0
    return (len(anti_nodes) - len(set(anti_nodes))) + max(0, skew - 1)


def side_by_side_constraints(plane: ControlPlane, n_pods: int, n_nodes: int, workdir: Path) -> dict[str, Any]:
    """The anti-affinity and spread workload through kube-scheduler and vcore-scheduler in turn, with the API
    server's create+bind limit for as many pods, and the constraint violations each left (read from the API)."""
    results: dict[str, Any] = {"create+bind": create_and_bind_limit(plane, n_pods)}
    runs = (("kube-scheduler", "default-scheduler", start_kube_scheduler), ("vcore", "vcore", None))
    for key, scheduler, start in runs:
        namespace = f"bench-constrained-{key}"
        if start is not None:
            proc, port = start(plane, workdir), None
        else:
            proc, port = start_vcore_scheduler(plane, workdir)
            wait_ready(port)
        try:
            bodies = constrained_pod_bodies(namespace, n_pods, scheduler, n_nodes)
            results[key] = measure_burst(plane, namespace, scheduler, n_pods, key, proc.pid, bodies=bodies)
            results[f"{key} violations"] = constraint_violations(plane, namespace)
        finally:
            stop(proc)
        delete_pods(plane, namespace)
    return results


def restart(plane: ControlPlane, n_running: int, workdir: Path) -> dict[str, float]:
    """n_running bound pods on the nodes, one pending pod: vcore-scheduler's start to that pod's bind."""
    namespace = "bench-restart"
    ensure_namespace(api := plane.admin_api(), namespace)
    nodes = [n["metadata"]["name"] for n in api.get("/api/v1/nodes")["items"]]
    path = f"/api/v1/namespaces/{namespace}/pods"
    running = [
        (
            path,
            json.dumps(
                pod(f"r{i}", namespace, scheduler="vcore", cpu="100m", node_name=nodes[i % len(nodes)])
            ).encode(),
        )
        for i in range(n_running)
    ]
    assert all(s == 201 for _, s in burst(plane, running))
    api.create(path, pod("first", namespace, scheduler="vcore"))
    watcher = BindWatcher(plane, namespace)
    watcher.start()
    watcher.started.wait(10)
    started = time.time()
    vs, port = start_vcore_scheduler(plane, workdir)
    try:
        while "first" not in watcher.bound_at and vs.poll() is None and time.time() - started < 600:
            time.sleep(0.01)
        to_first_bind = watcher.bound_at.get("first", float("nan")) - started
        rss = peak_rss_mib(vs.pid)
    finally:
        stop(vs)
        watcher.stop = True
    figures = {
        "running_pods": n_running,
        "nodes": len(nodes),
        "start_to_first_bind_s": to_first_bind,
        "peak_rss_mib": rss,
    }
    print("restart:", figures, flush=True)
    delete_pods(plane, namespace)
    api.close()
    return figures


# -- PodGroup statuses after a burst ------------------------------------------------------------------------
PODGROUPS = "/apis/scheduling.volcano.sh/v1beta1/namespaces/{namespace}/podgroups"


def scrape(port: int) -> dict[str, float]:
    """A process's /metrics: sample name with labels -> value."""
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    return {
        name: float(value)
        for name, _, value in (line.rpartition(" ") for line in text.splitlines() if line and not line.startswith("#"))
    }


@dataclass
class StatusBurst:
    """n single-pod PodGroups in one burst: when they were created, bound and read Running, and how many times
    each PodGroup was written (every modification of a PodGroup here is the scheduler's status write)."""

    groups: int
    bound: int
    running: int
    first_create: float  # epoch seconds
    last_bound: float
    last_running: float
    lag_max_s: float  # the longest a PodGroup read not Running after its pod was bound
    lag_p99_s: float
    writes: int  # PodGroup modifications seen, all groups
    writes_max: int  # the most on one PodGroup
    scheduler: dict[str, float]  # vcore-scheduler's metrics at the end

    @property
    def pods_per_second(self) -> float:
        """Pods from the first create to the last PodGroup Running."""
        return self.groups / (self.last_running - self.first_create)

    def metric(self, name: str) -> float:
        return self.scheduler.get(name, 0.0)

    def row(self) -> str:
        return (
            f"{self.groups} single-pod PodGroups: {self.bound} bound, {self.running} Running; first create to "
            f"last bind {self.last_bound - self.first_create:.1f} s, to last Running "
            f"{self.last_running - self.first_create:.1f} s ({self.pods_per_second:.0f} pods/s); Running after "
            f"bound: max {self.lag_max_s:.2f} s, p99 {self.lag_p99_s:.2f} s; status writes {self.writes} "
            f"({self.writes / max(1, self.groups):.2f} per PodGroup, at most {self.writes_max})"
        )


def podgroup_burst(
    plane: ControlPlane,
    workdir: Path,
    n: int,
    *,
    namespace: str = "bench-podgroups",
    timeout: float = 900.0,
    settle: float = 2.0,
) -> StatusBurst:
    """n single-pod PodGroups, each created just before its pod (which names it in scheduling.k8s.io/group-name),
    in one burst onto the plane's nodes, with a fresh vcore-scheduler; waits until every pod is bound and every
    PodGroup reads Running (or `timeout`), then `settle` seconds for late writes; deletes them all after."""
    ensure_namespace(admin := plane.admin_api(), namespace)
    admin.close()
    pods_path, groups_path = f"/api/v1/namespaces/{namespace}/pods", PODGROUPS.format(namespace=namespace)
    items = [
        (
            (
                groups_path,
                json.dumps(
                    {
                        "apiVersion": "scheduling.volcano.sh/v1beta1",
                        "kind": "PodGroup",
                        "metadata": {"name": f"g{i}", "namespace": namespace},
                        "spec": {"minMember": 1},
                    }
                ).encode(),
            ),
            (
                pods_path,
                json.dumps(
                    pod(
                        f"p{i}",
                        namespace,
                        scheduler="vcore",
                        cpu="100m",
                        memory="128Mi",
                        annotations={"scheduling.k8s.io/group-name": f"g{i}"},
                    )
                ).encode(),
            ),
        )
        for i in range(n)
    ]
    vs, port = start_vcore_scheduler(plane, workdir)
    binds, groups = BindWatcher(plane, namespace), PodGroupWatcher(plane, namespace)
    try:
        wait_ready(port)
        for w in (binds, groups):
            w.start()
            w.started.wait(10)
        sent = burst(plane, items)
        assert all(status == 201 for _, status in sent), {s for _, s in sent}
        deadline = time.monotonic() + timeout
        while (
            (len(binds.bound_at) < n or len(groups.running_at) < n)
            and time.monotonic() < deadline
            and vs.poll() is None
        ):
            time.sleep(0.05)
        time.sleep(settle)
        metrics = scrape(port) if vs.poll() is None else {}
    finally:
        binds.stop = groups.stop = True
        stop(vs)
    lags = [
        groups.running_at[f"g{i}"] - binds.bound_at[f"p{i}"]
        for i in range(n)
        if f"g{i}" in groups.running_at and f"p{i}" in binds.bound_at
    ]
    result = StatusBurst(
        n,
        len(binds.bound_at),
        len(groups.running_at),
        min(t for t, _ in sent),
        max(binds.bound_at.values(), default=float("nan")),
        max(groups.running_at.values(), default=float("nan")),
        max(lags, default=float("nan")),
        percentile(lags, 0.99),
        sum(groups.modified.values()),
        max(groups.modified.values(), default=0),
        metrics,
    )
    delete_pods(plane, namespace)
    delete_collection(plane, groups_path)
    return result


def podgroup_burst_beside_limit(plane: ControlPlane, workdir: Path, n: int) -> tuple[StatusBurst, Result]:
    """The PodGroup burst and, in the same run on the same nodes, the API server's create+bind limit for as many
    pods (the ceiling on any scheduler's pods/s here; the burst also creates a PodGroup per pod and writes its
    status)."""
    limit = create_and_bind_limit(plane, n)
    return podgroup_burst(plane, workdir, n), limit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--restart-pods", type=int, default=50000)
    parser.add_argument(
        "--podgroups", type=int, default=10000, help="single-pod PodGroups in the status burst (0: none)"
    )
    parser.add_argument("--dir", help="control-plane folder (default: a temporary one)")
    args = parser.parse_args()
    workdir = Path(args.dir or tempfile.mkdtemp(prefix="vcore-kube-bench-"))
    with plane_with_nodes(workdir, args.nodes) as plane:
        if args.pods:
            results = side_by_side(plane, args.pods, workdir)
            for r in results.values():
                print(r.row())
            vcore = results["vcore"].pods_per_second
            print(
                f"vcore / kube-scheduler pods/s: {vcore / results['kube-scheduler'].pods_per_second:.2f}x; vcore / "
                f"API server create+bind limit: {vcore / results['create+bind'].pods_per_second:.2f}"
            )
        if args.podgroups:
            burst_result, limit = podgroup_burst_beside_limit(plane, workdir, args.podgroups)
            print(limit.row())
            print(burst_result.row())
            print(
                f"PodGroups Running / API server create+bind limit pods/s: "
                f"{burst_result.pods_per_second / limit.pods_per_second:.2f}"
            )
        if args.restart_pods:
            restart(plane, args.restart_pods, workdir)


if __name__ == "__main__":
    main()
