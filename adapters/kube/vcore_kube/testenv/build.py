"""Build (once) and locate the control-plane binaries: kube-apiserver, kube-scheduler and etcd.

The Go module in adapters/kube/testenv pins the releases; `go build` compiles them with the machine's Go into
``${XDG_CACHE_HOME:-~/.cache}/vcore/<key>/`` where the key names the versions and hashes everything that decides
the bytes (go.mod, go.sum, the etcd entry point, the Go version, the target platform, the flags). A cache folder
that exists is reused as it is; a build goes to a temporary folder first and is renamed into place, under a file
lock, so concurrent callers wait for one build instead of racing.
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
from pathlib import Path

BINARIES = ("kube-apiserver", "kube-scheduler", "etcd")
PACKAGES = ("k8s.io/kubernetes/cmd/kube-apiserver", "k8s.io/kubernetes/cmd/kube-scheduler", "./cmd/etcd")
# The Go sources of the module; a checkout places it next to the vcore_kube package.
MODULE_DIR = Path(os.environ.get("VCORE_KUBE_TESTENV_MODULE", Path(__file__).resolve().parents[2] / "testenv"))
# Lean binaries: no symbol tables, no local paths, no cgo (static, and no C toolchain needed for Go).
BUILD_ENV = {"CGO_ENABLED": "0", "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=readonly"}


class BuildError(RuntimeError):
    """The control plane could not be built (no Go, the module proxy refused a module, a compile error)."""


def module_versions(go_mod: str) -> dict[str, str]:
    """The pinned k8s.io/kubernetes and etcd server versions named in go.mod's require block."""
    versions = {}
    for name, module in (("kubernetes", "k8s.io/kubernetes"), ("etcd", "go.etcd.io/etcd/server/v3")):
        m = re.search(rf"^\s*(?:require\s+)?{re.escape(module)}\s+(v\S+)", go_mod, re.MULTILINE)
        if not m:
            raise BuildError(f"{MODULE_DIR / 'go.mod'}: does not require {module}")
        versions[name] = m.group(1)
    return versions


def ldflags(kubernetes_version: str) -> str:
    """-s -w, and the version the binaries report (/version, kubectl version), as Kubernetes' own build sets."""
    major, minor = kubernetes_version.lstrip("v").split(".")[:2]
    pkg = "k8s.io/component-base/version"
    return (f"-s -w -X {pkg}.gitVersion={kubernetes_version} -X {pkg}.gitMajor={major} -X {pkg}.gitMinor={minor}"
            f" -X {pkg}.gitTreeState=clean")


def go_version() -> str:
    try:
        out = subprocess.run(["go", "env", "GOVERSION", "GOOS", "GOARCH"], capture_output=True, text=True,
                             check=True, env=_go_env()).stdout.split()
    except FileNotFoundError:
        raise BuildError("the control plane is built with Go: `go` is not on PATH") from None
    except subprocess.CalledProcessError as e:
        raise BuildError(f"go env failed: {e.stderr.strip()}") from None
    return "-".join(out)


def _go_env() -> dict[str, str]:
    return {**os.environ, **BUILD_ENV}


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vcore"


def version_key() -> str:
    """Folder name of this build: versions first (readable), then a hash of everything that decides the bytes."""
    go_mod = (MODULE_DIR / "go.mod").read_text()
    versions = module_versions(go_mod)
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum", "cmd/etcd/main.go"):
        digest.update((MODULE_DIR / name).read_bytes())
    toolchain = go_version()
    digest.update(toolchain.encode())
    digest.update(ldflags(versions["kubernetes"]).encode())
    digest.update(repr(sorted(BUILD_ENV.items())).encode())
    return f"kubernetes-{versions['kubernetes']}_etcd-{versions['etcd']}_{toolchain}_{digest.hexdigest()[:12]}"


def binaries_dir(*, build: bool = True, out=sys.stderr) -> Path:
    """The folder holding the three binaries, building them first when they are not cached (and build=True)."""
    if not (MODULE_DIR / "go.mod").exists():
        raise BuildError(f"{MODULE_DIR}: the testenv Go module is missing (it ships with a vcore source checkout; "
                         "set VCORE_KUBE_TESTENV_MODULE to its folder)")
    target = cache_root() / version_key()
    if _complete(target):
        return target
    if not build:
        raise BuildError(f"{target}: control plane not built")
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be building the same key: wait for it
        if not _complete(target):
            _build(target, out)
    return target


def _complete(folder: Path) -> bool:
    return all((folder / name).is_file() and os.access(folder / name, os.X_OK) for name in BINARIES)


def _build(target: Path, out) -> None:
    versions = module_versions((MODULE_DIR / "go.mod").read_text())
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    started = time.monotonic()
    progress = _Progress(out, f"building the test control plane (kubernetes {versions['kubernetes']}, etcd "
                              f"{versions['etcd']}) into {target}; first time only, ~15-25 min on 2 cores")
    progress.line("downloading the modules the three commands import (about 80 MB)")
    listed = _run(["go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", *PACKAGES],
                  "go list").split()
    total = len(listed)
    cmd = ["go", "build", "-v", "-trimpath", f"-ldflags={ldflags(versions['kubernetes'])}", "-o", str(tmp) + "/",
           *PACKAGES]
    proc = subprocess.Popen(cmd, cwd=MODULE_DIR, env=_go_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    compiled, errors = 0, []
    for line in proc.stderr:  # go build -v names each package as it compiles it; anything else is an error
        line = line.rstrip("\n")
        if re.fullmatch(r"[\w./~-]+", line):
            compiled += 1
            progress.update(f"compiling: {compiled}/{total} packages")
        else:
            errors.append(line)
    if proc.wait() != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise BuildError("go build of the control plane failed:\n" + "\n".join(errors[-40:]))
    (tmp / "BUILD_INFO").write_text(f"{' '.join(cmd)}\nseconds {time.monotonic() - started:.0f}\n")
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    progress.line(f"built in {time.monotonic() - started:.0f} s")


def _run(cmd: list[str], what: str) -> str:
    try:
        res = subprocess.run(cmd, cwd=MODULE_DIR, env=_go_env(), capture_output=True, text=True)
    except FileNotFoundError:
        raise BuildError("the control plane is built with Go: `go` is not on PATH") from None
    if res.returncode != 0:
        raise BuildError(f"{what} failed (in {MODULE_DIR}):\n{res.stderr.strip()[-4000:]}")
    return res.stdout


class _Progress:
    """One progress line: rewritten in place on a terminal, printed every 30 s otherwise (CI logs)."""

    def __init__(self, out, title: str) -> None:
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
