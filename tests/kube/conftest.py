"""The real control plane for the adapter's tests: one etcd + kube-apiserver for the whole session (built from
the pinned Go module the first time, then reused from the cache), and per-test namespaces on it."""

from __future__ import annotations

import itertools
import shutil
import sys

import pytest

from vcore_kube.testenv import ControlPlane
from vcore_kube.testenv import build
from vcore_kube.testenv.objects import ensure_namespace


def _control_plane_available() -> str | None:
    """Why the control plane cannot be had here, or None."""
    try:
        build.binaries_dir(build=False)
        return None
    except build.BuildError:
        pass
    if shutil.which("go") is None:
        return "no Go toolchain to build kube-apiserver and etcd (and no cached build)"
    return None


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory):
    """etcd + kube-apiserver with vcore's CRDs and RBAC, started once for the suite."""
    why = _control_plane_available()
    if why:
        pytest.skip(why)
    # The first build takes minutes: show its progress line through pytest's output capture.
    build.binaries_dir(out=sys.__stderr__)
    plane = ControlPlane.up(tmp_path_factory.mktemp("kube-testenv"))
    try:
        yield plane
    finally:
        plane.down()


@pytest.fixture(scope="session")
def admin(control_plane):
    """The admin's raw-JSON Api (system:masters)."""
    api = control_plane.admin_api()
    yield api
    api.close()


_namespaces = itertools.count()


@pytest.fixture
def namespace(admin, request):
    """A fresh namespace per test (namespaces are never deleted: no namespace controller runs)."""
    name = f"t{next(_namespaces)}-{request.node.name.lower().replace('_', '-')}"[:63].rstrip("-")
    ensure_namespace(admin, name)
    return name
