"""Helpers of the adapter's end-to-end tests: vcore-scheduler as a real subprocess, waiting on the API server,
and the invariants every test checks after its workload (and its fault)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import yaml

from vcore_kube.kubeclient import ApiException
from vcore_kube.testenv.control_plane import free_port


class SchedulerRun:
    """One vcore-scheduler process with its own config, log and metrics port."""

    def __init__(self, kubeconfig: str, directory: Path, name: str, **config) -> None:
        self.kubeconfig, self.directory, self.name = kubeconfig, Path(directory), name
        self.port = free_port()
        self.config = {
            "schedulerName": name,
            "metricsAddress": f"127.0.0.1:{self.port}",
            "cyclePeriod": "50ms",
            "leaderElection": {"leaderElect": False},
            **config,
        }
        self.config_file = self.directory / f"{name}-{self.port}.yaml"
        self.config_file.write_text(yaml.safe_dump(self.config))
        self.log = self.directory / f"{name}-{self.port}.log"
        self.proc: subprocess.Popen | None = None

    def start(self, identity: str | None = None, wait_ready: bool = True) -> SchedulerRun:
        argv = [sys.executable, "-m", "vcore_kube", "--kubeconfig", self.kubeconfig, "--config", str(self.config_file)]
        if identity:
            argv += ["--identity", identity]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        if wait_ready:
            wait_for(lambda: self.get("/readyz") == 200, 60, f"{self.name} /readyz", self)
        return self

    def get(self, path: str) -> int | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=2) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code
        except OSError:
            return None

    def metrics(self) -> dict[str, float]:
        """Sample name with labels -> value (e.g. 'vcore_scheduler_bind_errors_total{reason="conflict"}')."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as r:
            text = r.read().decode()
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                out[name] = float(value)
        return out

    def metric(self, name: str) -> float:
        return self.metrics().get(name, 0.0)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self, timeout: float = 30) -> int:
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
                raise AssertionError(f"{self.name} did not stop on SIGTERM; log:\n{self.log_tail()}") from None
        return self.proc.returncode if self.proc else 0

    def log_tail(self, n: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:]) if self.log.exists() else ""


def wait_for(predicate, timeout: float, what: str, run: SchedulerRun | None = None, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(
        f"timed out after {timeout:.0f} s waiting for {what}" + (f"; scheduler log:\n{run.log_tail()}" if run else "")
    )


def pods(api, namespace: str) -> list[dict]:
    return api.get(f"/api/v1/namespaces/{namespace}/pods")["items"]


def bound(api, namespace: str) -> dict[str, str]:
    return {p["metadata"]["name"]: p["spec"]["nodeName"] for p in pods(api, namespace) if p["spec"].get("nodeName")}


def events(api, namespace: str, reason: str | None = None) -> list[dict]:
    items = api.get(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events")["items"]
    return [e for e in items if reason is None or e.get("reason") == reason]


def wait_bound(api, namespace: str, names, timeout: float = 60, run: SchedulerRun | None = None) -> dict:
    names = set(names)
    return wait_for(
        lambda: (b := bound(api, namespace)) and names <= b.keys() and b,
        timeout,
        f"{len(names)} pods bound in {namespace}",
        run,
    )


def quantity(value: str, resource: str) -> int:
    """Kubernetes quantity as an integer: cpu in millicores, everything else in units."""
    from vcore import parse_quantity

    return parse_quantity(str(value), milli=resource == "cpu")


def check_invariants(api, namespace: str, scheduler: str, *, expect_all_bound: bool = False) -> None:
    """Every pod of the namespace bound at most once (one Scheduled event at most, and none for a pod bound by
    someone else), every unbound one of ours pending with a reason (a FailedScheduling event or the
    PodScheduled=False condition), and no node in the cluster over-committed on cpu, memory, pods or GPUs."""
    items = pods(api, namespace)
    scheduled = Counter(
        e["regarding"]["name"] for e in events(api, namespace, "Scheduled") if e.get("reportingController") == scheduler
    )
    failed = {e["regarding"]["name"] for e in events(api, namespace, "FailedScheduling")}
    for p in items:
        name = p["metadata"]["name"]
        assert scheduled[name] <= 1, f"pod {name}: {scheduled[name]} Scheduled events (double bind?)"
        if p["spec"].get("schedulerName") != scheduler:
            assert scheduled[name] == 0 and name not in failed, f"pod {name} of another scheduler was touched"
            continue
        if not p["spec"].get("nodeName"):
            assert not expect_all_bound, f"pod {name} is not bound"
            conditions = {c["type"]: c for c in p.get("status", {}).get("conditions", [])}
            reason = conditions.get("PodScheduled", {}).get("reason")
            assert name in failed or reason == "Unschedulable", f"pod {name} is pending without a reason"
    # No node over-committed, over the whole cluster (every namespace, every scheduler).
    nodes = {n["metadata"]["name"]: n["status"]["allocatable"] for n in api.get("/api/v1/nodes")["items"]}
    used: dict[str, Counter] = {}
    for p in api.get("/api/v1/pods", fieldSelector="status.phase!=Succeeded,status.phase!=Failed")["items"]:
        node = p["spec"].get("nodeName")
        if not node or node not in nodes:
            continue
        c = used.setdefault(node, Counter())
        c["pods"] += 1
        for container in p["spec"]["containers"]:
            for res, q in {
                **container.get("resources", {}).get("limits", {}),
                **container.get("resources", {}).get("requests", {}),
            }.items():
                c[res] += quantity(q, res)
    for node, c in used.items():
        for res, amount in c.items():
            alloc = nodes[node].get(res)
            assert alloc is not None and amount <= quantity(alloc, res), (
                f"node {node} over-committed on {res}: {amount} > {alloc}"
            )


def delete_pod(api, namespace: str, name: str) -> None:
    try:
        api.delete(f"/api/v1/namespaces/{namespace}/pods/{name}", gracePeriodSeconds=0)
    except ApiException as e:
        if e.status != 404:
            raise
