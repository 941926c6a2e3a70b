"""The wheel's package list (pyproject's [tool.setuptools] packages) names every Python package of the tree, so a
new package cannot be left out of a plain `pip install` (the editable install used by the tests would not notice)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_of_the_tree_is_in_the_wheel():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = set()
    for name, folder in setuptools["package-dir"].items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            if "build" in init.relative_to(ROOT).parts:
                continue
            parts = init.parent.relative_to(base).parts
            found.add(".".join((name, *parts)) if name else ".".join(parts))
    assert found == set(setuptools["packages"])
