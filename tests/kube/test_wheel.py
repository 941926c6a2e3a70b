"""vcore as a user installs it: an sdist of this tree, the wheel pip builds from it (`pip wheel --no-deps`, not
editable), installed into a fresh venv, runs `vcore-scheduler --demo` and `python -m vcore_kube.testenv` from the
installed package alone. The Go modules the test environment builds from are package data, and the build cache key
does not depend on where they lie, so the installed demo reuses the control plane built for the other tests;
without Go it says so in one line.

The venv sees the system's site-packages, so the dependencies are the ones this test run already has and nothing
is downloaded; the installed vcore still comes first on its path (checked). The wheel compiles the C++ core: about
a minute on two cores, done once for the module.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from conftest import control_plane_unavailable
from vcore_kube.testenv import build

REPO = Path(__file__).resolve().parents[2]
# What a fresh clone does not hold: build output, compiled modules, caches (the wheel must compile its own).
NOT_IN_A_CLONE = shutil.ignore_patterns(
    ".git",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".hypothesis",
    ".pytest_cache",
    ".benchmarks",
    "*.so",
    "*.o",
    "_convert.c",
    "_records.c",
    "_convert.cpp",
)


def _clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without the PYTHONPATH that puts the checkout first."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return {**env, **extra}


@pytest.fixture(scope="module")
def venv_bin(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    shutil.copytree(REPO, source, ignore=NOT_IN_A_CLONE)  # the sdist's egg-info is written beside the sources
    # pyproject.toml's build requirements, when this environment has them, build without a download; otherwise
    # PyPA's build and pip make them in an isolated environment, as a user's machine without them would.
    requirements = ("setuptools", "wheel", "pybind11", "Cython", "numpy")
    local = all(importlib.util.find_spec(m) for m in requirements)
    frontend = [sys.executable, "-m", "build", "--sdist", *(["--no-isolation"] if local else [])]
    sdist = subprocess.run(
        [*frontend, "--outdir", root / "sdist", source],
        capture_output=True,
        text=True,
        timeout=600,
        env=_clean_env(PIP_DISABLE_PIP_VERSION_CHECK="1"),
    )
    assert sdist.returncode == 0, sdist.stdout[-3000:] + sdist.stderr[-3000:]
    (archive,) = (root / "sdist").glob("vcore-*.tar.gz")
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            *(["--no-build-isolation"] if local else []),
            "-q",
            "-w",
            str(root / "dist"),
            str(archive),
        ],
        capture_output=True,
        text=True,
        timeout=1200,
        env=_clean_env(PIP_DISABLE_PIP_VERSION_CHECK="1"),
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheel = next((root / "dist").glob("vcore-*.whl"))
    venv.EnvBuilder(system_site_packages=True).create(root / "venv")
    bin_dir = root / "venv" / "bin"
    # This pip installs into the venv (--python): no pip of its own to bootstrap there.
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(bin_dir / "python"),
            "install",
            "--no-index",
            "--no-deps",
            "-q",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=_clean_env(PIP_DISABLE_PIP_VERSION_CHECK="1"),
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    return bin_dir


def _run(venv_bin: Path, *argv: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
    # cwd outside the checkout: nothing of the source tree may be importable.
    return subprocess.run(
        [str(venv_bin / argv[0]), *argv[1:]],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=venv_bin.parent,
        env=_clean_env(**env),
    )


def test_the_wheel_carries_the_go_modules_and_the_chart_and_shares_the_build_cache(venv_bin):
    res = _run(
        venv_bin,
        "python",
        "-c",
        "import vcore, vcore_kube\n"
        "from vcore_kube.testenv import build\n"
        "print(vcore.__file__, vcore_kube.__file__, build.MODULE_DIR, build.HELM.module_dir, sep='\\n')",
    )
    assert res.returncode == 0, res.stderr
    site = venv_bin.parent / "lib"
    paths = [Path(line) for line in res.stdout.splitlines()]
    assert all(site in p.parents for p in paths), paths  # the installed package, not the checkout
    for module in paths[2:]:
        assert (module / "go.mod").is_file() and (module / "go.sum").is_file()
    assert (paths[2] / "cmd" / "etcd" / "main.go").is_file()
    # The deploy chart whole: every file of the checkout's (templates, schema, CRDs, the plain manifests).
    deploy = REPO / "adapters" / "kube" / "vcore_kube" / "deploy"
    installed = paths[1].parent / "deploy"
    assert sorted(p.relative_to(installed) for p in installed.rglob("*") if p.is_file()) == sorted(
        p.relative_to(deploy) for p in deploy.rglob("*") if p.is_file()
    )
    if shutil.which("go") is None:
        pytest.skip("no Go toolchain: the cache key names the Go version")
    key = _run(venv_bin, "python", "-c", "from vcore_kube.testenv import build; print(build.version_key())")
    assert key.stdout.strip() == build.version_key()  # the checkout's: the binaries built for the tests are reused


def test_the_installed_demo_runs(venv_bin, tmp_path):
    why = control_plane_unavailable()
    if why:
        pytest.skip(why)
    build.binaries_dir(out=sys.__stderr__)  # built by the checkout, found by the installed package
    res = _run(
        venv_bin,
        "vcore-scheduler",
        "--demo",
        "--nodes",
        "10",
        "--pods",
        "40",
        "--dir",
        str(tmp_path / "demo"),
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "vcore pods bound in" in res.stdout and "bound by kind:" in res.stdout


def _without_go(tmp_path: Path) -> dict[str, str]:
    """PATH without Go, and an empty build cache: the state of a machine that never had Go."""
    path = os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep) if p and not (Path(p) / "go").exists()
    )
    return {"PATH": path, "XDG_CACHE_HOME": str(tmp_path / "cache")}


def test_without_go_the_demo_says_so_in_one_line(venv_bin, tmp_path):
    res = _run(venv_bin, "vcore-scheduler", "--demo", "--nodes", "10", "--pods", "40", **_without_go(tmp_path))
    assert res.returncode != 0
    assert "Traceback" not in res.stderr
    assert res.stderr.splitlines() == [
        "vcore-scheduler --demo: the test environment's programs are built with Go: `go` is not on PATH "
        "(install Go: https://go.dev/doc/install)"
    ], res.stderr
    res = _run(
        venv_bin, "python", "-m", "vcore_kube.testenv", "up", "--dir", str(tmp_path / "plane"), **_without_go(tmp_path)
    )
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert res.stderr.splitlines() == [
        "error: the test environment's programs are built with Go: `go` is not on PATH "
        "(install Go: https://go.dev/doc/install)"
    ], res.stderr
