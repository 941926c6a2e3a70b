"""vcore-scheduler's Helm chart (vcore_kube/deploy) rendered with the pinned helm, and the plain manifests beside it,
which are that rendering written down for `kubectl apply` users and the test control plane:

    vcore-scheduler.yaml   the chart's defaults, with its namespace
    vcore-sharder.yaml     the sharding controller's objects (sharder.enabled)
    warm-pools.yaml        what warm pools add (warmPools.enabled)

    python -m vcore_kube.testenv render-manifests [--check]
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import TextIO

from vcore_kube.testenv import build

RELEASE = "vcore-scheduler"
NAMESPACE = "vcore-system"
# Each plain manifest: the `helm template` arguments that render it, and how it is applied.
PLAIN_MANIFESTS = {
    "vcore-scheduler.yaml": (
        ("--set", "createNamespace=true"),
        "kubectl apply -f crds/ && kubectl apply -f vcore-scheduler.yaml",
    ),
    "vcore-sharder.yaml": (
        ("--set", "sharder.enabled=true", "--show-only", "templates/sharder.yaml"),
        "kubectl apply -f vcore-sharder.yaml, after vcore-scheduler.yaml",
    ),
    "warm-pools.yaml": (
        (
            "--set",
            "warmPools.enabled=true",
            "--set",
            "config.fastPath.enabled=true",
            "--show-only",
            "templates/warm-pools.yaml",
        ),
        "kubectl apply -f warm-pools.yaml, after vcore-scheduler.yaml (and set fastPath.enabled and "
        "warmPools.enabled in its ConfigMap)",
    ),
}
HEADER = (
    "# Generated from the Helm chart in this folder (python -m vcore_kube.testenv render-manifests): edit the\n"
    "# chart's templates and values.yaml, not this file.\n# {usage}\n"
)


class ChartError(RuntimeError):
    """helm refused the chart or the values (the message is helm's)."""


def chart_dir() -> Path:
    return Path(str(resources.files("vcore_kube").joinpath("deploy")))


def helm(*args: str, out: TextIO = sys.stderr, timeout: float = 120) -> str:
    """Run the pinned helm (built first when not cached); its stdout, or ChartError with its stderr."""
    binary = build.helm_binary(out=out)
    # helm's own configuration, repositories and plugins: a folder of its own, never the user's.
    home = build.cache_root() / "helm-home"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_DATA_HOME": str(home / "data"),
    }
    res = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=timeout, env=env)
    if res.returncode != 0:
        raise ChartError(f"helm {' '.join(args)}: {res.stderr.strip()}")
    return res.stdout


def template(*args: str, out: TextIO = sys.stderr) -> str:
    """`helm template` of the chart as the release vcore-scheduler in vcore-system, with these extra arguments."""
    return helm("template", RELEASE, str(chart_dir()), "--namespace", NAMESPACE, *args, out=out)


def plain_manifest(name: str, out: TextIO = sys.stderr) -> str:
    """What the plain manifest `name` must hold."""
    args, usage = PLAIN_MANIFESTS[name]
    return HEADER.format(usage=usage) + template(*args, out=out)


def render_manifests(*, check: bool = False, out: TextIO = sys.stderr) -> list[str]:
    """Write the plain manifests (or, with check, only compare); the names of those that were out of date."""
    stale = []
    for name in PLAIN_MANIFESTS:
        path = chart_dir() / name
        text = plain_manifest(name, out=out)
        if not path.exists() or path.read_text() != text:
            stale.append(name)
            if not check:
                path.write_text(text)
    return stale
