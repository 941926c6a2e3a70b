"""The dependency direction of ARCHITECTURE.md, checked by parsing imports with ast (no import-linter needed).

    adapters -> vcore (public API) -> vcore internals -> vcore._native

- vcore._native (.py, .pyi, and the Cython .pyx/.pxd by their import lines) imports nothing from vcore except
  vcore._native itself;
- vcore (src/vcore, any depth, including imports inside functions and importlib.import_module("...") with a
  literal name) never imports vcore_kube or vcore_router;
- vcore.types (the value types shared across layers) sits below every other vcore module: it imports nothing
  from vcore but vcore.errors;
- the adapters (adapters/kube, adapters/router) import only the public vcore API: no private module
  (a dotted component starting with "_", e.g. vcore._native) and no private name (from vcore.cluster import
  _helper, vcore.cluster._helper);
- adapters share machinery one way only: vcore_router may use vcore_kube's public modules (its Kubernetes
  client and reflector, for pod discovery), vcore_kube never imports vcore_router; neither reaches into the
  other's private modules or names, nor into vcore_kube.testenv (the test control plane, not a runtime part).

The checker itself is tested on small synthetic sources, so the rules are known to bite even while the adapter
packages are still nearly empty.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
VCORE = SRC / "vcore"
NATIVE = VCORE / "_native"
ADAPTERS = {"vcore_kube": ROOT / "adapters" / "kube" / "vcore_kube",
            "vcore_router": ROOT / "adapters" / "router" / "vcore_router"}
SKIP_DIRS = {"build", "__pycache__"}


@dataclass(frozen=True)
class Import:
    module: str  # absolute dotted module imported (for "from m import n": m)
    names: tuple[str, ...]  # names taken with "from m import ...", () for "import m"
    line: int


def _private(component: str) -> bool:
    return component.startswith("_") and not (component.startswith("__") and component.endswith("__"))


def module_name(path: Path, root: Path) -> tuple[str, bool]:
    """Dotted module name of a source file under `root` (a sys.path entry) and whether it is a package."""
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def resolve(level: int, module: str | None, current: str, is_package: bool) -> str:
    """Absolute name of a relative import ("from ..x import y" in `current`)."""
    if level == 0:
        return module or ""
    base = current.split(".") if is_package else current.split(".")[:-1]
    if level - 1 > len(base):
        raise ValueError(f"{current}: relative import beyond the top-level package")
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def python_imports(source: str, current: str, is_package: bool) -> list[Import]:
    """Every import in a Python source (any nesting), plus importlib.import_module / __import__ of literals."""
    out: list[Import] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.extend(Import(alias.name, (), node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = resolve(node.level, node.module, current, is_package)
            out.append(Import(module, tuple(alias.name for alias in node.names), node.lineno))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in ("import_module", "__import__"):
                out.append(Import(node.args[0].value, (), node.lineno))
    return out


_CYTHON_IMPORT = re.compile(r"^\s*(?:from\s+(\.*[\w.]*)\s+c?import\s+(.+)|c?import\s+([\w., ]+))")


def cython_imports(source: str, current: str, is_package: bool) -> list[Import]:
    """Import lines of a .pyx/.pxd file (Cython is not Python syntax; its import statements are line-based)."""
    out: list[Import] = []
    for lineno, line in enumerate(source.splitlines(), 1):
        m = _CYTHON_IMPORT.match(line.split("#", 1)[0])
        if not m:
            continue
        if m.group(1) is not None:
            dots = len(m.group(1)) - len(m.group(1).lstrip("."))
            module = resolve(dots, m.group(1).lstrip(".") or None, current, is_package)
            names = tuple(n.strip().split(" as ")[0].strip("() ") for n in m.group(2).split(","))
            out.append(Import(module, names, lineno))
        else:
            for name in m.group(3).split(","):
                out.append(Import(name.strip().split(" ")[0], (), lineno))
    return out


def file_imports(path: Path, root: Path) -> list[Import]:
    current, is_package = module_name(path, root)
    source = path.read_text(encoding="utf-8")
    if path.suffix in (".pyx", ".pxd"):
        return cython_imports(source, current, is_package)
    return python_imports(source, current, is_package)


def sources(directory: Path, suffixes=(".py", ".pyi", ".pyx", ".pxd")) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.suffix in suffixes and not SKIP_DIRS & set(p.parts))


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


# -------------------------------------------------------------------------------------------------------------
# The rules, as functions returning violations (so they can be tested on synthetic input)
# -------------------------------------------------------------------------------------------------------------
def native_violations(imports: list[Import]) -> list[str]:
    """vcore._native may import only vcore._native (and third-party / standard modules)."""
    bad = []
    for imp in imports:
        if _in(imp.module, "vcore") and not _in(imp.module, "vcore._native"):
            bad.append(f"line {imp.line}: imports {imp.module}")
    return bad


def core_violations(imports: list[Import]) -> list[str]:
    """vcore never imports an adapter."""
    return [f"line {imp.line}: imports {imp.module}" for imp in imports
            if any(_in(imp.module, adapter) for adapter in ADAPTERS)]


BELOW_ALL = "vcore.types"
BELOW_ALL_MAY_USE = ("vcore.errors",)


def below_all_violations(imports: list[Import]) -> list[str]:
    """vcore.types imports from vcore only vcore.errors (and third-party / standard modules)."""

    def allowed(module: str) -> bool:
        return not _in(module, "vcore") or any(_in(module, m) for m in BELOW_ALL_MAY_USE)

    # "from vcore import errors" takes the module vcore.errors: judge each name taken from a package.
    return [f"line {imp.line}: imports {imp.module}" for imp in imports
            if not allowed(imp.module) and not (imp.names and all(allowed(f"{imp.module}.{n}") for n in imp.names))]


def adapter_violations(imports: list[Import], source: str = "") -> list[str]:
    """Adapters use vcore's public API only: no private module, no private name, no private attribute."""
    bad = []
    vcore_aliases: set[str] = set()
    for imp in imports:
        if not _in(imp.module, "vcore"):
            continue
        if any(_private(part) for part in imp.module.split(".")):
            bad.append(f"line {imp.line}: imports private module {imp.module}")
        for name in imp.names:
            if _private(name):
                bad.append(f"line {imp.line}: imports private name {imp.module}.{name}")
    if source:
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if _in(alias.name, "vcore"):
                        vcore_aliases.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and _in(node.module, "vcore"):
                vcore_aliases.update(alias.asname or alias.name for alias in node.names)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                base = node.value
                while isinstance(base, ast.Attribute):
                    base = base.value
                if isinstance(base, ast.Name) and base.id in vcore_aliases and _chain_is_module(node.value):
                    bad.append(f"line {node.lineno}: uses private name {ast.unparse(node)}")
    return bad


# adapter -> the adapters whose public modules it may import
ADAPTER_USES = {"vcore_router": {"vcore_kube"}, "vcore_kube": set()}
TEST_ONLY = ("vcore_kube.testenv",)


def cross_adapter_violations(adapter: str, imports: list[Import]) -> list[str]:
    """An adapter imports another only where ADAPTER_USES allows, and then only its public, non-test modules."""
    bad = []
    for imp in imports:
        other = next((a for a in ADAPTERS if a != adapter and _in(imp.module, a)), None)
        if other is None:
            continue
        if other not in ADAPTER_USES[adapter]:
            bad.append(f"line {imp.line}: imports {imp.module} ({adapter} may not use {other})")
        elif any(_private(part) for part in imp.module.split(".")) or any(_private(n) for n in imp.names):
            bad.append(f"line {imp.line}: imports a private part of {imp.module}")
        elif any(_in(m, t) for m in (imp.module, *(f"{imp.module}.{n}" for n in imp.names)) for t in TEST_ONLY):
            bad.append(f"line {imp.line}: imports test infrastructure {imp.module}")
    return bad


def _chain_is_module(node: ast.expr) -> bool:
    """vcore.x.y (names and attributes only, no calls or subscripts): a reference into a module, not an object."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


# -------------------------------------------------------------------------------------------------------------
# The repository obeys the rules
# -------------------------------------------------------------------------------------------------------------
def test_there_is_something_to_check():
    assert sources(NATIVE), NATIVE
    assert any(p.suffix == ".pyx" for p in sources(NATIVE))
    assert len(sources(VCORE)) > len(sources(NATIVE))
    for package in ADAPTERS.values():
        assert (package / "__init__.py").exists(), package


@pytest.mark.parametrize("path", sources(NATIVE), ids=lambda p: str(p.relative_to(ROOT)))
def test_native_imports_nothing_from_vcore(path):
    imports = file_imports(path, SRC)
    assert not native_violations(imports), (path, native_violations(imports))


@pytest.mark.parametrize("path", sources(VCORE), ids=lambda p: str(p.relative_to(ROOT)))
def test_vcore_never_imports_an_adapter(path):
    imports = file_imports(path, SRC)
    assert not core_violations(imports), (path, core_violations(imports))


def test_shared_value_types_sit_below_every_vcore_module():
    path = VCORE / "types.py"
    imports = file_imports(path, SRC)
    assert not below_all_violations(imports), (path, below_all_violations(imports))


ADAPTER_SOURCES = [(name, root, p) for name, root in ADAPTERS.items() for p in sources(root, (".py", ".pyi"))]


@pytest.mark.parametrize("adapter, root, path", ADAPTER_SOURCES,
                         ids=[str(p.relative_to(ROOT)) for _, _, p in ADAPTER_SOURCES])
def test_adapters_use_only_the_public_vcore_api(adapter, root, path):
    imports = file_imports(path, root.parent)
    bad = adapter_violations(imports, path.read_text(encoding="utf-8"))
    assert not bad, (path, bad)


@pytest.mark.parametrize("adapter, root, path", ADAPTER_SOURCES,
                         ids=[str(p.relative_to(ROOT)) for _, _, p in ADAPTER_SOURCES])
def test_adapters_use_each_other_only_one_way_and_publicly(adapter, root, path):
    bad = cross_adapter_violations(adapter, file_imports(path, root.parent))
    assert not bad, (path, bad)


# -------------------------------------------------------------------------------------------------------------
# The checker catches what it should (synthetic sources)
# -------------------------------------------------------------------------------------------------------------
def _py(source: str, current: str = "vcore._native.mod", is_package: bool = False) -> list[Import]:
    return python_imports(source, current, is_package)


@pytest.mark.parametrize("source, current, is_package", [
    ("import vcore", "vcore._native.m", False),
    ("from vcore import cluster", "vcore._native.m", False),
    ("from vcore.errors import VCoreError", "vcore._native.m", False),
    ("def f():\n    import vcore.reasons\n", "vcore._native.m", False),
    ("from .. import errors", "vcore._native.m", False),
    ("from ..reasons import FIXED_REASONS", "vcore._native.m", False),
    ("from .. import reasons", "vcore._native", True),
    ("import importlib\nimportlib.import_module('vcore.cluster')", "vcore._native.m", False),
])
def test_checker_flags_native_importing_vcore(source, current, is_package):
    assert native_violations(python_imports(source, current, is_package))


@pytest.mark.parametrize("source", [
    "import numpy as np\nfrom typing import Any",
    "from vcore._native import _convert",
    "from vcore._native._convert import NodeSpec",
    "from . import _convert",
    "from ._convert import node_spec",
    "import vcore._native._core",
])
def test_checker_allows_native_internal_imports(source):
    assert not native_violations(_py(source))


@pytest.mark.parametrize("source, expected", [  # expected: 1 = flagged, 0 = allowed
    ("from dataclasses import dataclass\nfrom vcore.errors import VCoreError\n", 0),
    ("from . import errors", 0),
    ("from vcore.gpu.mig import MigInstance", 1),
    ("import vcore.cluster", 1),
    ("def f():\n    from vcore import scheduler\n", 1),
    ("from . import cluster", 1),
])
def test_checker_flags_shared_value_types_importing_vcore(source, expected):
    assert bool(below_all_violations(_py(source, BELOW_ALL))) == bool(expected)


def test_checker_reads_cython_imports():
    source = "# cython: language_level=3\nfrom libc.stdint cimport int64_t\nimport numpy as np\n" \
             "from vcore.errors import VCoreError  # bad\ncimport cython\nfrom . import _core\n"
    imports = cython_imports(source, "vcore._native._convert", False)
    modules = [i.module for i in imports]
    assert modules == ["libc.stdint", "numpy", "vcore.errors", "cython", "vcore._native"]
    assert native_violations(imports) == ["line 4: imports vcore.errors"]


@pytest.mark.parametrize("source", [
    "import vcore_kube", "from vcore_router.app import main", "def f():\n    import vcore_kube.cache\n",
    "import importlib\nimportlib.import_module('vcore_router')", "__import__('vcore_kube')",
])
def test_checker_flags_vcore_importing_an_adapter(source):
    assert core_violations(_py(source, "vcore.cli"))


@pytest.mark.parametrize("source, expected", [  # expected: 1 = flagged, 0 = allowed
    ("import vcore\nfrom vcore import Cluster, Scheduler\nfrom vcore.profile import Profile\n", 0),
    ("import vcore\nc = vcore.Cluster()\nc._state\n", 0),  # attribute of an object, not of a module
    ("from vcore import __version__", 0),
    ("from vcore._native import _core", 1),
    ("import vcore._native._convert", 1),
    ("from vcore import _native", 1),
    ("from vcore.cluster import pod_key, _helper", 1),
    ("import vcore\nvcore.cluster._private_helper()\n", 1),
    ("import vcore.scheduler as s\ns._internal\n", 1),
    ("from vcore import cluster\ncluster._x\n", 1),
    ("def f():\n    from vcore._native._core import Engine\n", 1),
])
def test_checker_flags_adapters_reaching_into_private_vcore(source, expected):
    imports = _py(source, "vcore_kube.loop")
    assert bool(adapter_violations(imports, source)) == bool(expected), adapter_violations(imports, source)


@pytest.mark.parametrize("adapter, source, expected", [  # expected: 1 = flagged, 0 = allowed
    ("vcore_router", "from vcore_kube.reflector import Reflector, Resource", 0),
    ("vcore_router", "from vcore_kube.kubeclient import load_api", 0),
    ("vcore_router", "import vcore_kube.reflector", 0),
    ("vcore_router", "from vcore_kube.reflector import _slim", 1),
    ("vcore_router", "from vcore_kube._private import x", 1),
    ("vcore_router", "from vcore_kube.testenv import ControlPlane", 1),
    ("vcore_router", "from vcore_kube import testenv", 1),
    ("vcore_router", "def f():\n    from vcore_kube.testenv.faultproxy import FaultProxy\n", 1),
    ("vcore_kube", "from vcore_router.config import parse_config", 1),
    ("vcore_kube", "def f():\n    import vcore_router.server\n", 1),
])
def test_checker_flags_cross_adapter_imports(adapter, source, expected):
    bad = cross_adapter_violations(adapter, _py(source, f"{adapter}.mod"))
    assert bool(bad) == bool(expected), bad


def test_relative_import_resolution():
    assert resolve(0, "a.b", "x.y", False) == "a.b"
    assert resolve(1, None, "vcore._native._convert", False) == "vcore._native"
    assert resolve(1, "x", "vcore._native", True) == "vcore._native.x"
    assert resolve(2, None, "vcore._native._convert", False) == "vcore"
    assert resolve(2, "errors", "vcore._native", True) == "vcore.errors"
    with pytest.raises(ValueError):
        resolve(3, None, "vcore.cli", False)
