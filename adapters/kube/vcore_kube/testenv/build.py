"""Build (once) and locate the Go programs of the test environment, each pinned by a Go module shipped in go/:

- go/controlplane: kube-apiserver, kube-scheduler, kube-controller-manager and etcd (the test control plane);
- go/helm: helm (the deploy chart's lint and template tests).

`go build` compiles a module's commands with the machine's Go into ``${XDG_CACHE_HOME:-~/.cache}/vcore/<key>/``
where the key names the versions and hashes everything that decides the bytes (the module's go.mod without its
comments, go.sum and its own Go sources, the Go version, the target platform, the flags) -- never where the module
lies, so a source checkout and an installed wheel share one build. A cache folder that exists is reused as it is;
a build goes to a temporary folder first and is renamed into place, under a file lock, so concurrent callers wait
for one build instead of racing.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

GO_MODULES = Path(__file__).resolve().parent / "go"
# Lean binaries: no symbol tables, no local paths, no cgo (static, and no C toolchain needed for Go).
BUILD_ENV = {"CGO_ENABLED": "0", "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=readonly"}


class BuildError(RuntimeError):
    """A program could not be built (no Go, the module proxy refused a module, a compile error)."""


@dataclass(frozen=True)
class GoBuild:
    """Commands built from one pinned Go module of go/."""

    what: str  # for messages: "the test control plane"
    module: str  # its folder under go/
    binaries: tuple[str, ...]
    packages: tuple[str, ...]  # what `go build` compiles, in the binaries' order
    sources: tuple[str, ...]  # the module's own files besides go.mod and go.sum (hashed into the key)
    pinned: tuple[tuple[str, str], ...]  # (name in the key, module path) of the versions that name the build
    ldflags: Callable[[dict[str, str]], str]  # from the pinned versions
    duration: str  # how long a first build takes, for the progress line

    @property
    def module_dir(self) -> Path:
        return GO_MODULES / self.module

    def versions(self) -> dict[str, str]:
        """The pinned versions, as go.mod requires them."""
        go_mod = (self.module_dir / "go.mod").read_text()
        versions = {}
        for name, module in self.pinned:
            m = re.search(rf"^\s*(?:require\s+)?{re.escape(module)}\s+(v\S+)", go_mod, re.MULTILINE)
            if not m:
                raise BuildError(f"{self.module_dir / 'go.mod'}: does not require {module}")
            versions[name] = m.group(1)
        return versions

    def key(self) -> str:
        """Folder name of this build: versions first (readable), then a hash of everything that decides the bytes."""
        versions = self.versions()
        digest = hashlib.sha256()
        go_mod = (self.module_dir / "go.mod").read_text()
        digest.update(
            "".join(line + "\n" for line in go_mod.splitlines() if not line.lstrip().startswith("//")).encode()
        )
        for name in ("go.sum", *self.sources):
            digest.update((self.module_dir / name).read_bytes())
        toolchain = go_version()
        digest.update(toolchain.encode())
        digest.update(self.ldflags(versions).encode())
        digest.update(repr(sorted(BUILD_ENV.items())).encode())
        named = "_".join(f"{name}-{version}" for name, version in versions.items())
        return f"{named}_{toolchain}_{digest.hexdigest()[:12]}"

    def directory(self, *, build: bool = True, out: TextIO = sys.stderr) -> Path:
        """The folder holding the binaries, building them first when they are not cached (and build=True)."""
        if not (self.module_dir / "go.mod").exists():
            raise BuildError(f"{self.module_dir}: the Go module of {self.what} is missing (a broken install of vcore?)")
        target = cache_root() / self.key()
        if self._complete(target):
            return target
        if not build:
            raise BuildError(f"{target}: {self.what} not built")
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target.parent / f".{target.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be building the same key: wait for it
            if not self._complete(target):
                self._build(target, out)
        return target

    def _complete(self, folder: Path) -> bool:
        return all((folder / name).is_file() and os.access(folder / name, os.X_OK) for name in self.binaries)

    def _build(self, target: Path, out: TextIO) -> None:
        versions = self.versions()
        tmp = target.with_name(target.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        started = time.monotonic()
        named = ", ".join(f"{name} {version}" for name, version in versions.items())
        progress = _Progress(out, f"building {self.what} ({named}) into {target}; first time only, {self.duration}")
        progress.line(f"downloading the modules {', '.join(self.binaries)} import")
        listed = self._run(
            ["go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", *self.packages], "go list"
        ).split()
        total = len(listed)
        cmd = [
            "go",
            "build",
            "-v",
            "-trimpath",
            f"-ldflags={self.ldflags(versions)}",
            "-o",
            str(tmp) + "/",
            *self.packages,
        ]
        proc = subprocess.Popen(
            cmd, cwd=self.module_dir, env=_go_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        compiled, errors = 0, []
        assert proc.stderr is not None, "stderr=PIPE"
        for line in proc.stderr:  # go build -v names each package as it compiles it; anything else is an error
            line = line.rstrip("\n")
            if re.fullmatch(r"[\w./~-]+", line):
                compiled += 1
                progress.update(f"compiling: {compiled}/{total} packages")
            else:
                errors.append(line)
        if proc.wait() != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise BuildError(f"go build of {self.what} failed:\n" + "\n".join(errors[-40:]))
        (tmp / "BUILD_INFO").write_text(f"{' '.join(cmd)}\nseconds {time.monotonic() - started:.0f}\n")
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)
        progress.line(f"built in {time.monotonic() - started:.0f} s")

    def _run(self, cmd: list[str], what: str) -> str:
        try:
            res = subprocess.run(cmd, cwd=self.module_dir, env=_go_env(), capture_output=True, text=True)
        except FileNotFoundError:
            raise BuildError(f"{self.what} is built with Go: `go` is not on PATH") from None
        if res.returncode != 0:
            raise BuildError(f"{what} failed (in {self.module_dir}):\n{res.stderr.strip()[-4000:]}")
        return res.stdout


def kubernetes_ldflags(versions: dict[str, str]) -> str:
    """-s -w, and the version the binaries report (/version, kubectl version), as Kubernetes' own build sets."""
    kubernetes_version = versions["kubernetes"]
    major, minor = kubernetes_version.lstrip("v").split(".")[:2]
    pkg = "k8s.io/component-base/version"
    return (
        f"-s -w -X {pkg}.gitVersion={kubernetes_version} -X {pkg}.gitMajor={major} -X {pkg}.gitMinor={minor}"
        f" -X {pkg}.gitTreeState=clean"
    )


def helm_ldflags(versions: dict[str, str]) -> str:
    """-s -w, and the version `helm version` reports, as Helm's Makefile sets it."""
    pkg = "helm.sh/helm/v4/internal/version"
    return f"-s -w -X {pkg}.version={versions['helm']} -X {pkg}.gitTreeState=clean"


CONTROL_PLANE = GoBuild(
    what="the test control plane",
    module="controlplane",
    binaries=("kube-apiserver", "kube-scheduler", "kube-controller-manager", "etcd"),
    packages=(
        "k8s.io/kubernetes/cmd/kube-apiserver",
        "k8s.io/kubernetes/cmd/kube-scheduler",
        "k8s.io/kubernetes/cmd/kube-controller-manager",
        "./cmd/etcd",
    ),
    sources=("cmd/etcd/main.go",),
    pinned=(("kubernetes", "k8s.io/kubernetes"), ("etcd", "go.etcd.io/etcd/server/v3")),
    ldflags=kubernetes_ldflags,
    duration="~15-25 min on 2 cores",
)

HELM = GoBuild(
    what="helm",
    module="helm",
    binaries=("helm",),
    packages=("helm.sh/helm/v4/cmd/helm",),
    sources=(),
    pinned=(("helm", "helm.sh/helm/v4"),),
    ldflags=helm_ldflags,
    duration="~5-10 min on 2 cores",
)

MODULE_DIR = CONTROL_PLANE.module_dir
BINARIES = CONTROL_PLANE.binaries


def binaries_dir(*, build: bool = True, out: TextIO = sys.stderr) -> Path:
    """The folder holding kube-apiserver, kube-scheduler, kube-controller-manager and etcd, built first when not
    cached (and build=True)."""
    return CONTROL_PLANE.directory(build=build, out=out)


def version_key() -> str:
    """The control plane's cache folder name."""
    return CONTROL_PLANE.key()


def helm_binary(*, build: bool = True, out: TextIO = sys.stderr) -> Path:
    """The helm command, built first when not cached (and build=True)."""
    return HELM.directory(build=build, out=out) / "helm"


def go_version() -> str:
    try:
        out = subprocess.run(
            ["go", "env", "GOVERSION", "GOOS", "GOARCH"], capture_output=True, text=True, check=True, env=_go_env()
        ).stdout.split()
    except FileNotFoundError:
        raise BuildError(
            "the test environment's programs are built with Go: `go` is not on PATH "
            "(install Go: https://go.dev/doc/install)"
        ) from None
    except subprocess.CalledProcessError as e:
        raise BuildError(f"go env failed: {e.stderr.strip()}") from None
    return "-".join(out)


def _go_env() -> dict[str, str]:
    return {**os.environ, **BUILD_ENV}


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vcore"


class _Progress:
    """One progress line: rewritten in place on a terminal, printed every 30 s otherwise (CI logs)."""

    def __init__(self, out: TextIO, title: str) -> None:
        self.out, self.tty, self.started, self.last = out, out.isatty(), time.monotonic(), 0.0
        print(title, file=out, flush=True)

    def _stamp(self) -> str:
        seconds = int(time.monotonic() - self.started)
        return f"[{seconds // 60}m{seconds % 60:02d}s]"

    def line(self, text: str) -> None:
        print(f"\r{self._stamp()} {text}" if self.tty else f"{self._stamp()} {text}", file=self.out, flush=True)

    def update(self, text: str) -> None:
        now = time.monotonic()
        if self.tty:
            print(f"\r{self._stamp()} {text}", end="", file=self.out, flush=True)
        elif now - self.last >= 30:
            self.last = now
            print(f"{self._stamp()} {text}", file=self.out, flush=True)
