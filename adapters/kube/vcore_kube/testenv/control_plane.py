"""The test control plane: etcd, kube-apiserver and kube-controller-manager (its volume controllers only: the PV
binder and the ephemeral volume controller) on free loopback ports, with no kubelet, prepared the way
vcore-scheduler needs a cluster to be. Dynamic provisioning for WaitForFirstConsumer classes is the testenv's own
provisioner (provisioner.py), which the tests that need it start.

What a cluster without kubelets, and with only those controllers, lacks, and what is done about it here:
- No ServiceAccount controller creates the `default` ServiceAccount of a namespace, and the ServiceAccount
  admission plugin rejects pods in a namespace without one: the plugin is disabled (pods get no token volume,
  which nothing here mounts anyway).
- No node lifecycle controller removes the `node.kubernetes.io/not-ready` taint that the TaintNodesByCondition
  admission plugin puts on every new Node: the plugin is disabled, so a Node is created ready to use.
- No kubelet writes Node status: Nodes are created with their status (capacity, allocatable, a Ready condition)
  in the create request, as a kubelet's registration does, and status updates go through nodes/status.
- No kubelet confirms the deletion of a bound pod: delete bound pods with gracePeriodSeconds 0.
- No namespace controller finalizes a deleted namespace (it stays Terminating): tests use fresh namespaces and
  delete their pods, not their namespaces. The API server itself creates default, kube-system, kube-public
  and kube-node-lease; `vcore-system` is created here for the scheduler's Lease.

The state of a running control plane (ports, pids, tokens, argv) is in DIR/testenv.json, so `down` and the fault
tests (kill or restart the API server, compact etcd) work from the folder alone.
"""

from __future__ import annotations

import base64
import json
import os
import random
import secrets
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import yaml

from vcore_kube.testenv import build, certs, chart

if TYPE_CHECKING:
    from vcore_kube.kubeclient import Api

ADMIN_USER = "vcore-admin"
SCHEDULER_USER = "vcore-scheduler"
SHARDER_USER = "vcore-sharder"
KUBE_SCHEDULER_USER = "system:kube-scheduler"  # kube-scheduler's own identity, bound by the API server's bootstrap RBAC
CONTROLLER_MANAGER_USER = "vcore-controller-manager"  # kube-controller-manager's (system:masters: a test cluster)
# The controllers kube-controller-manager runs: what binds PVs to claims and makes generic ephemeral volumes' claims.
CONTROLLERS = "persistentvolume-binder-controller,ephemeral-volume-controller"
SYSTEM_NAMESPACE = "vcore-system"
DISABLED_ADMISSION = "ServiceAccount,TaintNodesByCondition"


class ControlPlaneError(RuntimeError):
    """A control-plane process did not start or did not become ready (the message ends with its log)."""


def deploy_manifests() -> list[dict[str, Any]]:
    """The objects of deploy/'s plain manifests: the scheduler's namespace, identity, ClusterRole, ...; the sharding
    controller's; what warm pools add."""
    deploy = resources.files("vcore_kube").joinpath("deploy")
    return [d for name in chart.PLAIN_MANIFESTS for d in yaml.safe_load_all(deploy.joinpath(name).read_text()) if d]


def crd_manifests() -> list[dict[str, Any]]:
    """vcore's CustomResourceDefinitions (Volcano's PodGroup, Queue, HyperNode, NodeShard shapes)."""
    folder = resources.files("vcore_kube").joinpath("deploy/crds")
    return [
        yaml.safe_load(f.read_text())
        for f in sorted(folder.iterdir(), key=lambda f: f.name)
        if f.name.endswith(".yaml")
    ]


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def free_port() -> int:
    """A free loopback port below the kernel's ephemeral range, so that no client's outgoing connection can
    hold it while the server on it is down (kube-apiserver restarts on the same port in the fault tests)."""
    low, _ = _ephemeral_range()
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(10000, low) if low > 11000 else 0
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise ControlPlaneError(f"no free loopback port in 10000..{low - 1}")


@dataclass
class Process:
    name: str
    argv: list[str]
    log: str
    pid: int = 0

    def alive(self) -> bool:
        if self.pid <= 0:
            return False
        try:
            done, _ = os.waitpid(self.pid, os.WNOHANG)  # reap our own child if it exited
            if done == self.pid:
                return False
        except ChildProcessError:
            pass  # not our child (started by another process): fall through to a signal probe
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        return _not_zombie(self.pid)

    def start(self) -> None:
        with open(self.log, "ab") as log:
            proc = subprocess.Popen(
                self.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )  # survives `up` returning; never gets our signals
        self.pid = proc.pid

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> None:
        if not self.alive():
            self.pid = 0
            return
        os.kill(self.pid, sig)
        deadline = time.monotonic() + timeout
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.alive():
            os.kill(self.pid, signal.SIGKILL)
            while self.alive():
                time.sleep(0.05)
        self.pid = 0

    def log_tail(self, n: int = 30) -> str:
        try:
            return "\n".join(Path(self.log).read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""


def _not_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@dataclass
class ControlPlane:
    """A running (or stopped) etcd + kube-apiserver described by DIR/testenv.json."""

    dir: str
    binaries: str
    etcd_url: str
    apiserver_url: str
    tokens: dict[str, str]
    processes: dict[str, Process] = field(default_factory=dict)

    # -- files -------------------------------------------------------------------------------------------
    @property
    def path(self) -> Path:
        return Path(self.dir)

    @property
    def kubeconfig(self) -> str:
        """The admin's kubeconfig (system:masters)."""
        return str(self.path / "kubeconfig")

    @property
    def scheduler_kubeconfig(self) -> str:
        """vcore-scheduler's identity: bound to exactly deploy/'s ClusterRoles (the scheduler's, warm pools')."""
        return str(self.path / "scheduler.kubeconfig")

    @property
    def sharder_kubeconfig(self) -> str:
        """The sharding controller's identity: bound to exactly deploy/'s vcore-sharder ClusterRole."""
        return str(self.path / "sharder.kubeconfig")

    @property
    def kube_scheduler_kubeconfig(self) -> str:
        """kube-scheduler's identity (system:kube-scheduler), for running the real kube-scheduler side by side."""
        return str(self.path / "kube-scheduler.kubeconfig")

    @property
    def controller_manager_kubeconfig(self) -> str:
        return str(self.path / "controller-manager.kubeconfig")

    @property
    def ca_file(self) -> str:
        return str(self.path / "apiserver.crt")

    def save(self) -> None:
        data = asdict(self)
        tmp = self.path / "testenv.json.tmp"
        tmp.write_text(json.dumps(data, indent=2))
        tmp.rename(self.path / "testenv.json")

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> ControlPlane:
        state = Path(directory) / "testenv.json"
        if not state.exists():
            raise ControlPlaneError(f"{directory}: no testenv.json (was `up` run with this --dir?)")
        data = json.loads(state.read_text())
        data["processes"] = {k: Process(**v) for k, v in data["processes"].items()}
        return cls(**data)

    # -- lifecycle ---------------------------------------------------------------------------------------
    @classmethod
    def up(cls, directory: str | os.PathLike[str], *, nodes: int = 0, out: TextIO | None = None) -> ControlPlane:
        """Build or reuse the binaries, start etcd and kube-apiserver, install what vcore needs, return when
        /readyz is ok. An existing running control plane in the folder is stopped first."""
        import sys

        out = out or sys.stderr
        path = Path(directory).resolve()
        path.mkdir(parents=True, exist_ok=True)
        if (path / "testenv.json").exists():
            cls.load(path).down()
        binaries = build.binaries_dir(out=out)
        cert, key = certs.serving_certificate(path)
        sa_private, sa_public = certs.service_account_keys(path)
        tokens = {
            user: secrets.token_hex(24)
            for user in (ADMIN_USER, SCHEDULER_USER, KUBE_SCHEDULER_USER, SHARDER_USER, CONTROLLER_MANAGER_USER)
        }
        groups = {
            ADMIN_USER: "system:masters",
            SCHEDULER_USER: "",
            KUBE_SCHEDULER_USER: "",
            SHARDER_USER: "",
            CONTROLLER_MANAGER_USER: "system:masters",
        }
        (path / "tokens.csv").write_text("".join(f'{tokens[u]},{u},{u},"{groups[u]}"\n' for u in tokens))
        (path / "tokens.csv").chmod(0o600)

        etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
        etcd_url = f"http://127.0.0.1:{etcd_port}"
        etcd = Process(
            "etcd",
            [
                str(binaries / "etcd"),
                "--name",
                "testenv",
                "--data-dir",
                str(path / "etcd"),
                "--listen-client-urls",
                etcd_url,
                "--advertise-client-urls",
                etcd_url,
                "--listen-peer-urls",
                f"http://127.0.0.1:{peer_port}",
                "--initial-advertise-peer-urls",
                f"http://127.0.0.1:{peer_port}",
                "--initial-cluster",
                f"testenv=http://127.0.0.1:{peer_port}",
                "--unsafe-no-fsync",  # test data: durability is not wanted, speed is
                "--quota-backend-bytes",
                str(8 << 30),
                "--log-level",
                "warn",
            ],
            str(path / "etcd.log"),
        )
        apiserver = Process(
            "kube-apiserver",
            [
                str(binaries / "kube-apiserver"),
                "--etcd-servers",
                etcd_url,
                "--bind-address",
                "127.0.0.1",
                "--advertise-address",
                "127.0.0.1",
                "--secure-port",
                str(api_port),
                "--tls-cert-file",
                str(cert),
                "--tls-private-key-file",
                str(key),
                "--token-auth-file",
                str(path / "tokens.csv"),
                "--authorization-mode",
                "RBAC",
                "--service-account-issuer",
                "https://kubernetes.default.svc",
                "--service-account-key-file",
                str(sa_public),
                "--service-account-signing-key-file",
                str(sa_private),
                "--service-cluster-ip-range",
                "10.96.0.0/16",
                "--disable-admission-plugins",
                DISABLED_ADMISSION,
                "--enable-priority-and-fairness=true",
                "--profiling=false",
                "--v=1",
                # A killed API server leaves its connections to idle clients half-closed on the port for up to a
                # minute; SO_REUSEPORT lets the restarted one listen beside them.
                "--permit-port-sharing=true",
            ],
            str(path / "kube-apiserver.log"),
        )
        controller_manager = Process(
            "kube-controller-manager",
            [
                str(binaries / "kube-controller-manager"),
                "--kubeconfig",
                str(path / "controller-manager.kubeconfig"),
                "--controllers",
                CONTROLLERS,
                "--leader-elect=false",
                "--use-service-account-credentials=false",
                "--secure-port=0",
                "--profiling=false",
                "--v=1",
            ],
            str(path / "kube-controller-manager.log"),
        )
        plane = cls(
            str(path),
            str(binaries),
            etcd_url,
            f"https://127.0.0.1:{api_port}",
            tokens,
            {"etcd": etcd, "kube-apiserver": apiserver, "kube-controller-manager": controller_manager},
        )
        plane._write_kubeconfigs()
        plane.save()
        try:
            plane.start_etcd()
            plane.start_apiserver()
            plane._install()
            plane.start_controller_manager()
            if nodes:
                from vcore_kube.testenv.objects import create_nodes, synthetic_nodes

                create_nodes(plane.admin_api(), synthetic_nodes(nodes))
        except BaseException:
            plane.down()
            raise
        return plane

    def down(self) -> None:
        """Stop kube-controller-manager, kube-apiserver, then etcd (the data stays in the folder)."""
        for name in ("kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"):
            if name in self.processes:
                self.processes[name].stop()
        self.save()

    def start_etcd(self) -> None:
        etcd = self.processes["etcd"]
        if not etcd.alive():
            etcd.start()
            self.save()
        self._wait(etcd, lambda: self._etcd_health(), "etcd /health")

    def start_apiserver(self) -> None:
        apiserver = self.processes["kube-apiserver"]
        if not apiserver.alive():
            apiserver.start()
            self.save()
        self._wait(apiserver, lambda: self.readyz(), "kube-apiserver /readyz", timeout=120)

    def start_controller_manager(self) -> None:
        """kube-controller-manager (a control plane made before it existed has none: nothing to start)."""
        cm = self.processes.get("kube-controller-manager")
        if cm is None:
            return
        if not cm.alive():
            cm.start()
            self.save()
        # It serves nothing (--secure-port=0): ready once it is up and its log says its controllers started.
        self._wait(
            cm,
            lambda: (
                "Started controller" in Path(cm.log).read_text(errors="replace") if Path(cm.log).exists() else False
            ),
            "kube-controller-manager's controllers",
            timeout=60,
        )

    def kill_apiserver(self, sig: int = signal.SIGKILL) -> None:
        """Stop the API server abruptly (watches drop mid-stream); start_apiserver() brings it back."""
        self.processes["kube-apiserver"].stop(sig)
        self.save()

    def restart_apiserver(self) -> None:
        self.kill_apiserver()
        self.start_apiserver()

    def _wait(self, process: Process, ready: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not process.alive():
                raise ControlPlaneError(
                    f"{process.name} exited while waiting for {what}; its log ends:\n{process.log_tail()}"
                )
            if ready():
                return
            time.sleep(0.1)
        raise ControlPlaneError(
            f"{what} not ready after {timeout:.0f} s; {process.name}'s log ends:\n{process.log_tail()}"
        )

    # -- probes ------------------------------------------------------------------------------------------
    def _ssl(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=self.ca_file)

    def readyz(self) -> bool:
        req = urllib.request.Request(
            self.apiserver_url + "/readyz", headers={"Authorization": f"Bearer {self.tokens[ADMIN_USER]}"}
        )
        try:
            with urllib.request.urlopen(req, context=self._ssl(), timeout=5) as resp:
                return resp.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def _etcd_post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        req = urllib.request.Request(
            self.etcd_url + path,
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    def _etcd_health(self) -> bool:
        try:
            with urllib.request.urlopen(self.etcd_url + "/health", timeout=2) as resp:
                return json.loads(resp.read()).get("health") == "true"
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def etcd_revision(self) -> int:
        """etcd's current revision (the API server's resourceVersions are etcd revisions)."""
        key = base64.b64encode(b"/registry/").decode()
        return int(self._etcd_post("/v3/kv/range", {"key": key, "count_only": True})["header"]["revision"])

    def compact_etcd(self, revision: int | None = None) -> int:
        """Compact etcd's history up to `revision` (default: the current one), through etcd's JSON gateway:
        a watch or list from an older resourceVersion then fails with 410 Gone. Returns the revision."""
        revision = revision or self.etcd_revision()
        self._etcd_post("/v3/kv/compaction", {"revision": str(revision), "physical": True})
        return revision

    # -- clients -----------------------------------------------------------------------------------------
    def admin_api(self, pool_size: int = 16) -> Api:
        from vcore_kube.kubeclient import load_api

        return load_api(self.kubeconfig, pool_size=pool_size)

    def _write_kubeconfigs(self) -> None:
        ca = base64.b64encode(Path(self.ca_file).read_bytes()).decode()
        for path, user in (
            (self.kubeconfig, ADMIN_USER),
            (self.scheduler_kubeconfig, SCHEDULER_USER),
            (self.kube_scheduler_kubeconfig, KUBE_SCHEDULER_USER),
            (self.sharder_kubeconfig, SHARDER_USER),
            (self.controller_manager_kubeconfig, CONTROLLER_MANAGER_USER),
        ):
            if user in self.tokens:  # a control plane made before the sharder's identity existed has none
                write_kubeconfig(path, self.apiserver_url, ca, user, self.tokens[user])

    # -- what vcore-scheduler needs from a cluster -------------------------------------------------------
    def _install(self) -> None:
        api = self.admin_api()
        try:
            for crd in crd_manifests():
                _create(api, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
            manifests = {(m["kind"], m["metadata"]["name"]): m for m in deploy_manifests()}
            _create(api, "/api/v1/namespaces", manifests[("Namespace", SYSTEM_NAMESPACE)])
            # The testenv's scheduler and sharder are users with static tokens, not the ServiceAccounts: bind them
            # to exactly the same ClusterRoles (and the scheduler to the same API priority). The scheduler has
            # every feature's: warm pools' too.
            for role_name, user in (
                ("vcore-scheduler", SCHEDULER_USER),
                ("vcore-scheduler-warm-pools", SCHEDULER_USER),
                ("vcore-sharder", SHARDER_USER),
            ):
                role = manifests[("ClusterRole", role_name)]
                _create(api, "/apis/rbac.authorization.k8s.io/v1/clusterroles", role)
                binding = {
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "ClusterRoleBinding",
                    "metadata": {"name": f"{role_name}-testenv-user"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name},
                    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
                }
                _create(api, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding)
            _create(
                api,
                "/apis/scheduling.k8s.io/v1/priorityclasses",
                manifests[("PriorityClass", "vcore-warm-placeholder")],
            )
            flow = manifests[("FlowSchema", "vcore-scheduler")]
            for rule in flow["spec"]["rules"]:
                rule["subjects"].append({"kind": "User", "user": {"name": SCHEDULER_USER}})
            _create(api, "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas", flow)
            self._wait_established(api, [c["metadata"]["name"] for c in crd_manifests()])
        finally:
            api.close()

    def _wait_established(self, api: Api, names: list[str], timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        pending = set(names)
        while pending and time.monotonic() < deadline:
            for name in list(pending):
                crd = api.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
                if any(
                    c["type"] == "Established" and c["status"] == "True"
                    for c in crd.get("status", {}).get("conditions", [])
                ):
                    pending.discard(name)
            time.sleep(0.1)
        if pending:
            raise ControlPlaneError(f"CRDs not established after {timeout:.0f} s: {sorted(pending)}")


def _create(api: Api, path: str, body: dict[str, Any]) -> None:
    from vcore_kube.kubeclient import ApiException

    try:
        api.create(path, body)
    except ApiException as e:
        if e.status != 409:  # already there (a restarted control plane keeps its etcd data)
            raise


def write_kubeconfig(path: str, server: str, ca_data: str | None, user: str, token: str) -> None:
    cluster: dict[str, Any] = {"server": server}
    if ca_data:
        cluster["certificate-authority-data"] = ca_data
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "testenv",
        "clusters": [{"name": "testenv", "cluster": cluster}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": "testenv", "context": {"cluster": "testenv", "user": user}}],
    }
    Path(path).write_text(yaml.safe_dump(config, sort_keys=False))
    Path(path).chmod(0o600)
