"""The real kube-scheduler (the test control plane's build) as a subprocess of a test, and what it says in its log.

kube-scheduler runs with the text log format and ``--vmodule`` raised for two files only: ``schedule_one.go`` at 10,
where it logs every plugin's weighted score and the final score of every node it scored ("Plugin scored node for
pod", "Calculated node's final score for pod") and the end of each attempt, and ``eventhandlers.go`` at 3, where it
logs each node and pod its informers add or delete. A test waits on those lines: once "Add event for node" of a node
is logged the scheduler's cache holds it, so a pod created afterwards is scheduled against it.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

# One klog text line: header, caller, then the quoted message and key=value pairs (values quoted with Go's %q, or
# bare).
_LINE = re.compile(r'^[IWEF]\d{4} [\d:.]+\s+\d+ (?P<caller>[\w.]+:\d+)\] "(?P<msg>(?:[^"\\]|\\.)*)"(?P<kv>.*)$')
_PAIR = re.compile(r'\s(?P<key>[\w.]+)=(?P<value>"(?:[^"\\]|\\.)*"|<[^>]*>|\S+)')


@dataclass(frozen=True)
class LogRecord:
    caller: str
    msg: str
    values: dict[str, str]

    def get(self, key: str, default: str = "") -> str:
        return self.values.get(key, default)


def parse_line(line: str) -> LogRecord | None:
    """A structured klog text line as a record; None for anything else (multi-line values, Go panics)."""
    m = _LINE.match(line)
    if m is None:
        return None
    values = {}
    for pair in _PAIR.finditer(m.group("kv")):
        value = pair.group("value")
        if value.startswith('"'):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                value = value[1:-1]
        values[pair.group("key")] = value
    return LogRecord(m.group("caller"), json.loads(f'"{m.group("msg")}"'), values)


@dataclass
class LogReader:
    """Reads a growing log file; keeps every parsed record, indexed by the pod and the node they name (a long run
    logs a million lines: waits look up their object instead of scanning)."""

    path: Path
    records: list[LogRecord] = field(default_factory=list)
    _index: dict[tuple[str, str], list[LogRecord]] = field(default_factory=dict)
    _offset: int = 0
    _partial: str = ""

    def about(self, key: str, value: str) -> list[LogRecord]:
        """The records whose `key` ("pod", "node") is `value`, in log order."""
        return self._index.get((key, value), [])

    def poll(self) -> None:
        with open(self.path, "rb") as f:
            f.seek(self._offset)
            data = f.read()
        self._offset += len(data)
        text = self._partial + data.decode(errors="replace")
        lines = text.split("\n")
        self._partial = lines.pop()
        for line in lines:
            record = parse_line(line)
            if record is not None:
                self.records.append(record)
                for key in ("pod", "node"):
                    if key in record.values:
                        self._index.setdefault((key, record.values[key]), []).append(record)

    def wait(
        self, done: Callable[[LogReader], bool], timeout: float, what: str, alive: Callable[[], bool] = lambda: True
    ) -> None:
        """Poll until done(self); TimeoutError after `timeout`, RuntimeError as soon as the writer is gone."""
        deadline = time.monotonic() + timeout
        while True:
            self.poll()
            if done(self):
                return
            if not alive():
                raise RuntimeError(f"kube-scheduler exited before its log had {what}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"kube-scheduler: no {what} in its log after {timeout:.0f} s")
            time.sleep(0.01)


class KubeScheduler:
    """kube-scheduler v1.34 against the test control plane with the given profiles (KubeSchedulerConfiguration
    profiles, each naming its schedulerName)."""

    def __init__(self, plane, workdir: Path, profiles: list[dict], *, percentage_of_nodes_to_score: int = 100):
        self.binary = Path(plane.binaries) / "kube-scheduler"
        self.workdir = Path(workdir)
        self.config = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": plane.kube_scheduler_kubeconfig, "qps": 1000, "burst": 1000},
            "leaderElection": {"leaderElect": False},
            "percentageOfNodesToScore": percentage_of_nodes_to_score,
            "profiles": profiles,
        }
        self.log_path = self.workdir / "kube-scheduler.log"
        self.proc: subprocess.Popen | None = None
        self.log = LogReader(self.log_path)

    def start(self) -> KubeScheduler:
        config = self.workdir / "kube-scheduler.yaml"
        config.write_text(yaml.safe_dump(self.config, sort_keys=False))
        with open(self.log_path, "wb") as log:  # the reader starts at its beginning: no earlier run in it
            self.proc = subprocess.Popen(
                [
                    str(self.binary),
                    "--config",
                    str(config),
                    "--secure-port=0",
                    "--vmodule=schedule_one=10,eventhandlers=3,resource_allocation=10",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        self.wait(lambda log: any(r.msg == "Starting Kubernetes Scheduler" for r in log.records), 30, "its start")
        return self

    def logged(self, msg: str, key: str, value: str) -> bool:
        """Whether it logged `msg` about the pod or node `value` (key "pod" or "node")."""
        return any(r.msg == msg for r in self.log.about(key, value))

    def wait(self, done: Callable[[LogReader], bool], timeout: float, what: str) -> None:
        """Wait until its log satisfies `done`; the error ends with the log's tail."""
        try:
            self.log.wait(done, timeout, what, self.alive)
        except (TimeoutError, RuntimeError) as e:
            raise type(e)(f"{e}; its log ends:\n{self.tail()}") from None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def tail(self, n: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""
