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
  other's private modules or names, nor into vcore_kube.testenv (the test control plane, not a runtime part);
- inside each adapter the modules form layers (LAYERS, lowest first): a module imports only from its own layer
  or below, the imports form no circle (module level and inside functions, type-only imports included), and no
  module reads another module's private names (an import of one, or an attribute `_name` that the reading module
  does not define itself: `loop._failed` in a module that is not loop.py); the package's docstring lists the same
  layers, so a reader finds them where the package starts;
- inside src/vcore the same (VCORE_LAYERS): base (errors, reasons, validation, types, the plugin declarations) ->
  native -> the object model -> the cluster -> profiles -> the capability packages -> the scheduler -> the public
  API -> the simulations -> the command line; no circle; no private name of another module (vcore._native, vcore's
  own private layer, aside).

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
ADAPTERS = {
    "vcore_kube": ROOT / "adapters" / "kube" / "vcore_kube",
    "vcore_router": ROOT / "adapters" / "router" / "vcore_router",
}
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
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
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
    return [
        f"line {imp.line}: imports {imp.module}"
        for imp in imports
        if any(_in(imp.module, adapter) for adapter in ADAPTERS)
    ]


BELOW_ALL = "vcore.types"
BELOW_ALL_MAY_USE = ("vcore.errors",)


def below_all_violations(imports: list[Import]) -> list[str]:
    """vcore.types imports from vcore only vcore.errors (and third-party / standard modules)."""

    def allowed(module: str) -> bool:
        return not _in(module, "vcore") or any(_in(module, m) for m in BELOW_ALL_MAY_USE)

    # "from vcore import errors" takes the module vcore.errors: judge each name taken from a package.
    return [
        f"line {imp.line}: imports {imp.module}"
        for imp in imports
        if not allowed(imp.module) and not (imp.names and all(allowed(f"{imp.module}.{n}") for n in imp.names))
    ]


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


# Each adapter's modules, lowest layer first (names relative to the package; "__init__" is the package itself, a
# subpackage's name stands for all its modules). A module imports from its own layer and the layers below only.
LAYERS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "vcore_kube": (
        (
            "values and connections",
            (
                "__init__",
                "config",
                "kubeclient",
                "metrics",
                "inbox",
                "cache",
                "convert",
                "schedqueue",
                "pending",
                "volumehints",
            ),
        ),
        ("the API's objects", ("reflector", "nodeshard", "binder", "volumewriter", "events", "leader", "statuswriter")),
        ("decisions", ("batchcycle", "fastpath", "warmpool", "membership", "shardplan", "volcanostatus")),
        ("beside the loop", ("agentcontrol", "shardcontrol", "shardwriter", "statusreport")),
        ("the loop", ("loop",)),
        ("processes", ("process", "sharder")),
        ("the test control plane", ("testenv",)),  # above every runtime part: only the demo may start one
        ("commands", ("cli", "demo", "__main__")),
    ),
    "vcore_router": (
        ("values and parsing", ("__init__", "config", "request", "metrics", "ratelimit", "scraper")),
        ("endpoints", ("health", "discovery")),
        ("servers", ("server", "engine_sim")),
        ("commands", ("demo", "cli")),
    ),
}


def internal_graph(package: str, files: dict[str, tuple[str, bool]]) -> dict[str, dict[str, int]]:
    """The import graph inside `package`: module -> {module of the same package it imports: first line}, for the
    modules of `files` (absolute name -> (source, is_package)). "from p import m" is an edge to the module p.m
    when there is one, else to p; "import p.m.n" to the deepest module of the package that the name holds."""
    graph: dict[str, dict[str, int]] = {m: {} for m in files}
    for module, (source, is_package) in files.items():
        for imp in python_imports(source, module, is_package):
            if not _in(imp.module, package):
                continue
            targets = [f"{imp.module}.{n}" if f"{imp.module}.{n}" in files else imp.module for n in imp.names] or [
                imp.module
            ]
            for target in targets:
                while target not in files and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in files and target != module:
                    graph[module].setdefault(target, imp.line)
    return graph


def import_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One circle of imports per strongly connected group of modules (a -> b -> a as [a, b, a]), in name order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def connect(v: str) -> None:  # Tarjan's algorithm (module graphs are small: recursion is fine)
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            groups.append(group)

    for v in sorted(graph):
        if v not in index:
            connect(v)
    cycles = []
    for group in groups:
        if len(group) < 2:
            continue
        start = min(group)
        path, seen = [start], {start}
        while True:  # walk inside the group until the path comes back to the start or meets itself
            nxt = sorted(w for w in graph[path[-1]] if w in group)
            back = start if start in nxt else next((w for w in nxt if w not in seen), nxt[0])
            path.append(back)
            if back in seen:
                cycles.append(path[path.index(back) :])
                break
            seen.add(back)
    return sorted(cycles)


def _relative(module: str, package: str) -> str:
    return "__init__" if module == package else module[len(package) + 1 :]


def layer_of(module: str, package: str, layers) -> int | None:
    """The index of the layer holding `module` (an entry holds itself and, for a subpackage, its modules)."""
    name = _relative(module, package)
    found = [i for i, (_, entries) in enumerate(layers) for e in entries if name == e or name.startswith(e + ".")]
    return found[0] if len(found) == 1 else None


def placement_violations(package: str, modules: list[str], layers) -> list[str]:
    """Every module is in exactly one layer, and every entry names a module."""
    bad = []
    entries = [e for _, group in layers for e in group]
    for module in sorted(modules):
        name = _relative(module, package)
        held = [e for e in entries if name == e or name.startswith(e + ".")]
        if len(held) != 1:
            bad.append(f"{module}: in {len(held)} layers of LAYERS[{package!r}] {held}, not 1")
    names = {_relative(m, package) for m in modules}
    for e in entries:
        if not any(n == e or n.startswith(e + ".") for n in names):
            bad.append(f"LAYERS[{package!r}]: {e!r} names no module")
    return bad


def upward_imports(package: str, graph: dict[str, dict[str, int]], layers) -> list[str]:
    """Imports from a higher layer than the importing module's own."""
    bad = []
    for module, targets in sorted(graph.items()):
        here = layer_of(module, package, layers)
        for target, line in sorted(targets.items()):
            there = layer_of(target, package, layers)
            if here is not None and there is not None and there > here:
                bad.append(
                    f"{module} line {line}: imports {target} ({layers[there][0]}) from below it ({layers[here][0]})"
                )
    return bad


_PUBLIC_UNDERSCORED = {"_replace", "_asdict", "_fields", "_make"}  # namedtuple's public API


def private_reads(package: str, module: str, source: str, is_package: bool = False) -> list[str]:
    """Another module's private names read by `module`: an import of a private name or module of the same package,
    or an attribute `x._name` where `_name` is not defined in this module (a def, a class, an assignment, a class
    body's field) and `x` is not the object itself (`self`, `cls`: what a subclass inherits is its own). A private
    attribute of an object from elsewhere (another module's, vcore's, a library's) is read through that module's
    public functions instead."""
    bad = []
    for imp in python_imports(source, module, is_package):
        if _in(imp.module, package) and (
            any(_private(p) for p in imp.module.split(".")) or any(_private(n) for n in imp.names)
        ):
            bad.append(f"line {imp.line}: imports a private part of {imp.module} {imp.names}")
    tree = ast.parse(source)
    defined: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        ):
            defined.add(node.attr)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
    for node in ast.walk(tree):
        own = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
        if (
            isinstance(node, ast.Attribute)
            and _private(node.attr)
            and node.attr not in defined
            and node.attr not in _PUBLIC_UNDERSCORED
            and not own
        ):  # self._x: its own (or inherited) state
            bad.append(f"line {node.lineno}: reads {ast.unparse(node)}, private to another module")
    return bad


def adapter_files(package: str, root: Path) -> dict[str, tuple[str, bool]]:
    """module -> (source, is_package) for every Python module of an adapter package at `root`."""
    out = {}
    for path in sources(root, (".py",)):
        module, is_package = module_name(path, root.parent)
        out[module] = (path.read_text(encoding="utf-8"), is_package)
    return out


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


@pytest.mark.parametrize(
    "adapter, root, path", ADAPTER_SOURCES, ids=[str(p.relative_to(ROOT)) for _, _, p in ADAPTER_SOURCES]
)
def test_adapters_use_only_the_public_vcore_api(adapter, root, path):
    imports = file_imports(path, root.parent)
    bad = adapter_violations(imports, path.read_text(encoding="utf-8"))
    assert not bad, (path, bad)


@pytest.mark.parametrize(
    "adapter, root, path", ADAPTER_SOURCES, ids=[str(p.relative_to(ROOT)) for _, _, p in ADAPTER_SOURCES]
)
def test_adapters_use_each_other_only_one_way_and_publicly(adapter, root, path):
    bad = cross_adapter_violations(adapter, file_imports(path, root.parent))
    assert not bad, (path, bad)


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_each_adapter_module_has_one_layer(adapter):
    files = adapter_files(adapter, ADAPTERS[adapter])
    assert f"{adapter}.__init__" not in files and adapter in files
    bad = placement_violations(adapter, list(files), LAYERS[adapter])
    assert not bad, bad


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_adapter_imports_form_no_circle(adapter):
    cycles = import_cycles(internal_graph(adapter, adapter_files(adapter, ADAPTERS[adapter])))
    assert not cycles, [" -> ".join(c) for c in cycles]


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_adapter_imports_point_down_the_layers(adapter):
    bad = upward_imports(adapter, internal_graph(adapter, adapter_files(adapter, ADAPTERS[adapter])), LAYERS[adapter])
    assert not bad, bad


def documented_layers(docstring: str) -> list[tuple[str, tuple[str, ...]]]:
    """The layers a package docstring lists after its "Modules by layer" paragraph: an unindented line names a
    layer, each indented line under it starts with its modules ("cli, demo   what they do")."""
    layers: list[tuple[str, list[str]]] = []
    for line in docstring.split("Modules by layer", 1)[1].split("\n\n", 1)[1].splitlines():
        if not line.strip():
            break
        if not line.startswith(" "):
            layers.append((line.strip(), []))
        elif layers:
            layers[-1][1].extend(m.strip() for m in re.split(r"\s{2,}", line.strip())[0].split(","))
    return [(name, tuple(modules)) for name, modules in layers]


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_package_docstring_lists_the_layers(adapter):
    doc = ast.get_docstring(ast.parse((ADAPTERS[adapter] / "__init__.py").read_text(encoding="utf-8"))) or ""
    declared = [(name, tuple(sorted(set(entries) - {"__init__", "__main__"}))) for name, entries in LAYERS[adapter]]
    assert [(name, tuple(sorted(modules))) for name, modules in documented_layers(doc)] == declared


@pytest.mark.parametrize(
    "adapter, root, path", ADAPTER_SOURCES, ids=[str(p.relative_to(ROOT)) for _, _, p in ADAPTER_SOURCES]
)
def test_adapter_modules_read_no_other_module_s_private_names(adapter, root, path):
    module, is_package = module_name(path, root.parent)
    bad = private_reads(adapter, module, path.read_text(encoding="utf-8"), is_package)
    assert not bad, (path, bad)


# -------------------------------------------------------------------------------------------------------------
# The checker catches what it should (synthetic sources)
# -------------------------------------------------------------------------------------------------------------
def _py(source: str, current: str = "vcore._native.mod", is_package: bool = False) -> list[Import]:
    return python_imports(source, current, is_package)


@pytest.mark.parametrize(
    "source, current, is_package",
    [
        ("import vcore", "vcore._native.m", False),
        ("from vcore import cluster", "vcore._native.m", False),
        ("from vcore.errors import VCoreError", "vcore._native.m", False),
        ("def f():\n    import vcore.reasons\n", "vcore._native.m", False),
        ("from .. import errors", "vcore._native.m", False),
        ("from ..reasons import FIXED_REASONS", "vcore._native.m", False),
        ("from .. import reasons", "vcore._native", True),
        ("import importlib\nimportlib.import_module('vcore.cluster')", "vcore._native.m", False),
    ],
)
def test_checker_flags_native_importing_vcore(source, current, is_package):
    assert native_violations(python_imports(source, current, is_package))


@pytest.mark.parametrize(
    "source",
    [
        "import numpy as np\nfrom typing import Any",
        "from vcore._native import _convert",
        "from vcore._native._convert import NodeSpec",
        "from . import _convert",
        "from ._convert import node_spec",
        "import vcore._native._core",
    ],
)
def test_checker_allows_native_internal_imports(source):
    assert not native_violations(_py(source))


@pytest.mark.parametrize(
    "source, expected",
    [  # expected: 1 = flagged, 0 = allowed
        ("from dataclasses import dataclass\nfrom vcore.errors import VCoreError\n", 0),
        ("from . import errors", 0),
        ("from vcore.gpu.mig import MigInstance", 1),
        ("import vcore.cluster", 1),
        ("def f():\n    from vcore import scheduler\n", 1),
        ("from . import cluster", 1),
    ],
)
def test_checker_flags_shared_value_types_importing_vcore(source, expected):
    assert bool(below_all_violations(_py(source, BELOW_ALL))) == bool(expected)


def test_checker_reads_cython_imports():
    source = (
        "# cython: language_level=3\nfrom libc.stdint cimport int64_t\nimport numpy as np\n"
        "from vcore.errors import VCoreError  # bad\ncimport cython\nfrom . import _core\n"
    )
    imports = cython_imports(source, "vcore._native._convert", False)
    modules = [i.module for i in imports]
    assert modules == ["libc.stdint", "numpy", "vcore.errors", "cython", "vcore._native"]
    assert native_violations(imports) == ["line 4: imports vcore.errors"]


@pytest.mark.parametrize(
    "source",
    [
        "import vcore_kube",
        "from vcore_router.app import main",
        "def f():\n    import vcore_kube.cache\n",
        "import importlib\nimportlib.import_module('vcore_router')",
        "__import__('vcore_kube')",
    ],
)
def test_checker_flags_vcore_importing_an_adapter(source):
    assert core_violations(_py(source, "vcore.cli"))


@pytest.mark.parametrize(
    "source, expected",
    [  # expected: 1 = flagged, 0 = allowed
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
    ],
)
def test_checker_flags_adapters_reaching_into_private_vcore(source, expected):
    imports = _py(source, "vcore_kube.loop")
    assert bool(adapter_violations(imports, source)) == bool(expected), adapter_violations(imports, source)


@pytest.mark.parametrize(
    "adapter, source, expected",
    [  # expected: 1 = flagged, 0 = allowed
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
    ],
)
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


def _package(**modules: str) -> dict[str, tuple[str, bool]]:
    """A synthetic package "pkg" from module name -> source: "init" is pkg itself, "sub__x" the module pkg.sub.x
    (which makes "sub" a subpackage)."""
    files = {}
    for name, source in modules.items():
        dotted = "pkg" if name == "init" else "pkg." + name.replace("__", ".")
        files[dotted] = (source, dotted == "pkg" or any(m.startswith(name + "__") for m in modules))
    return files


def test_internal_graph_resolves_every_form_of_import():
    files = _package(
        init="",
        a="from pkg import b, CONST\nfrom . import c\nimport pkg.sub.x\nimport os\n",
        b="from .sub import x\nfrom pkg.c import f\nfrom pkg.missing import y\n",
        c="",
        sub="",
        sub__x="def f():\n    import importlib\n    importlib.import_module('pkg.b')\n",
    )
    assert internal_graph("pkg", files) == {
        "pkg": {},
        "pkg.a": {"pkg.b": 1, "pkg": 1, "pkg.c": 2, "pkg.sub.x": 3},
        "pkg.b": {"pkg.sub.x": 1, "pkg.c": 2, "pkg": 3},
        "pkg.c": {},
        "pkg.sub": {},
        "pkg.sub.x": {"pkg.b": 3},
    }


@pytest.mark.parametrize(
    "modules, expected",
    [
        (dict(a="from pkg import b", b="from pkg.a import f"), [["pkg.a", "pkg.b", "pkg.a"]]),
        # in a function, or for type checking only: still a circle of the design
        (
            dict(
                a="from pkg import b",
                b="def f():\n    from pkg.c import x\n",
                c="from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import A\n",
            ),
            [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]],
        ),
        (dict(a="from . import b", b="from .a import f"), [["pkg.a", "pkg.b", "pkg.a"]]),
        (dict(a="import importlib\nimportlib.import_module('pkg.b')", b="import pkg.a"), [["pkg.a", "pkg.b", "pkg.a"]]),
        (dict(init="from pkg.a import A", a="from pkg import VERSION"), [["pkg", "pkg.a", "pkg"]]),
        # two separate circles, both reported
        (
            dict(a="from pkg import b", b="from pkg import a", c="from pkg import d", d="from pkg import c"),
            [["pkg.a", "pkg.b", "pkg.a"], ["pkg.c", "pkg.d", "pkg.c"]],
        ),
        # no circle: a chain, a diamond, a package importing its module that imports a sibling
        (dict(a="from pkg import b", b="from pkg import c", c=""), []),
        (dict(a="from pkg import b, c", b="from pkg import d", c="from pkg import d", d=""), []),
        (dict(init="from pkg.a import A", a="from pkg import b", b=""), []),
    ],
)
def test_checker_finds_import_circles(modules, expected):
    files = _package(**({"init": ""} | modules))
    assert import_cycles(internal_graph("pkg", files)) == expected


_LAYERS = (("low", ("__init__", "a", "b")), ("high", ("c", "sub")))


@pytest.mark.parametrize(
    "modules, expected",
    [
        (dict(a="from pkg import b", c="from pkg import a\nfrom pkg.sub import x"), []),  # same layer, downward
        (dict(a="from pkg import c"), ["pkg.a line 1: imports pkg.c (high) from below it (low)"]),
        (
            dict(b="def f():\n    from pkg.sub.x import y\n"),
            ["pkg.b line 2: imports pkg.sub.x (high) from below it (low)"],
        ),
        (dict(init="from pkg import sub"), ["pkg line 1: imports pkg.sub (high) from below it (low)"]),
    ],
)
def test_checker_flags_upward_imports(modules, expected):
    files = _package(**({"init": "", "a": "", "b": "", "c": "", "sub": "", "sub__x": ""} | modules))
    assert upward_imports("pkg", internal_graph("pkg", files), _LAYERS) == expected


def test_checker_places_every_module_in_one_layer():
    modules = ["pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.sub", "pkg.sub.x"]
    assert placement_violations("pkg", modules, _LAYERS) == []
    assert placement_violations("pkg", modules + ["pkg.new"], _LAYERS) == [
        "pkg.new: in 0 layers of LAYERS['pkg'] [], not 1"
    ]
    assert placement_violations("pkg", ["pkg", "pkg.a", "pkg.b", "pkg.sub"], _LAYERS) == [
        "LAYERS['pkg']: 'c' names no module"
    ]
    twice = (("low", ("__init__", "a", "b", "sub.x")), ("high", ("c", "sub")))
    assert placement_violations("pkg", modules, twice) == [
        "pkg.sub.x: in 2 layers of LAYERS['pkg'] ['sub.x', 'sub'], not 1"
    ]
    assert layer_of("pkg.sub.x", "pkg", _LAYERS) == 1 and layer_of("pkg", "pkg", _LAYERS) == 0


@pytest.mark.parametrize(
    "source, expected",
    [  # expected: 1 = flagged, 0 = allowed
        ("def f(loop):\n    loop._failed(1)\n", 1),  # the loop's own business, read from elsewhere
        ("import vcore\nc = vcore.Cluster()\nc._state\n", 1),  # a library object's private state
        ("from pkg.loop import _helper", 1),
        ("from pkg import _private", 1),
        ("from pkg._impl import thing", 1),
        ("def f(plane):\n    plane._install()\n", 1),
        (
            "class A:\n    def __init__(self):\n        self._x = 1\n\n"
            "    def same(self, other):\n        return other._x\n",
            0,
        ),  # another object of this module's class
        ("class P:\n    _count: int = 0\n\ndef f(p):\n    return p._count\n", 0),
        (
            "class P:\n    @classmethod\n    def make(cls):\n        plane = cls()\n        plane._setup()\n\n"
            "    def _setup(self):\n        pass\n",
            0,
        ),  # a private method of a class of this module
        ("def f(point):\n    return point._replace(x=1), point._asdict()\n", 0),  # namedtuple's public API
        ("def f(obj):\n    return obj.__class__.__name__\n", 0),
        ("from pkg.loop import helper\nimport os\n", 0),
    ],
)
def test_checker_flags_private_names_read_across_modules(source, expected):
    bad = private_reads("pkg", "pkg.mod", source)
    assert bool(bad) == bool(expected), bad


# -------------------------------------------------------------------------------------------------------------
# Inside src/vcore: the same rules as inside the adapters (layers lowest first, no circle, no private read)
# -------------------------------------------------------------------------------------------------------------
# A module imports only from its own layer or lower ones. The value types shared across layers (types), the
# errors, reasons, validation and the plugin declarations are the base; the object model (the parsers of
# Kubernetes, Volcano, KAI and Kueue objects and the records they become) sits below the cluster that holds it; the
# capability packages (the batch cycle, the topology search, GPU placement, routing) are used by the Scheduler,
# their facade; the root package re-exports the public API, which the simulations and the command line use.
VCORE_LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "base",
        ("errors", "reasons", "validation", "types", "plugins", "gpu.policies", "batch.amounts", "batch.shares.names"),
    ),
    ("native", ("_native",)),
    (
        "object model",
        (
            "pod_selectors",
            "disruption_budgets",
            "batch.podgroup",
            "batch.pods",
            "batch.queue",
            "batch.quotas",
            "batch.priority",
            "batch.state",
            "gpu.specs",
            "gpu.numa",
            "gpu.devices",
            "gpu.requests",
            "gpu.mig",
            "topology.constraint",
            "topology.hypernode",
            "topology.tree",
            "topology.patterns",
            "topology.args",
            "volumes",
        ),
    ),
    ("cluster", ("cluster",)),
    ("profiles", ("profile", "batch.config")),
    (
        "capabilities",
        (
            "batch.__init__",
            "batch.actions",
            "batch.cycle",
            "batch.job",
            "batch.result",
            "batch.session",
            "batch.statement",
            "batch.topology_planner",
            "batch.nodegroups",
            "batch.subjobs",
            "batch.plugins",
            "batch.room",
            "batch.shares.__init__",
            "batch.shares.base",
            "batch.shares.capacity",
            "batch.shares.cohort",
            "batch.shares.hierarchy",
            "batch.shares.proportion",
            "topology.__init__",
            "topology.cost",
            "topology.cpsat",
            "topology.search",
            "gpu.__init__",
            "routing",
            "preemption",
        ),
    ),
    ("scheduler", ("scheduler",)),
    ("public API", ("__init__",)),
    ("simulations", ("sim",)),
    ("command line", ("cli", "__main__")),
)


def vcore_files() -> dict[str, tuple[str, bool]]:
    out = {}
    for path in sources(VCORE, (".py",)):
        module, is_package = module_name(path, SRC)
        out[module] = (path.read_text(encoding="utf-8"), is_package)
    return out


def test_every_vcore_module_is_in_one_layer():
    # A package's __init__ is named "pkg.__init__" where the package's other modules sit in other layers.
    modules = [
        m
        if not is_package or m == "vcore" or any(e == _relative(m, "vcore") for _, g in VCORE_LAYERS for e in g)
        else f"{m}.__init__"
        for m, (_, is_package) in vcore_files().items()
    ]
    assert placement_violations("vcore", modules, VCORE_LAYERS) == []


def _vcore_graph() -> dict[str, dict[str, int]]:
    """vcore's import graph, with a package's __init__ named as VCORE_LAYERS names it."""
    files = vcore_files()
    graph = internal_graph("vcore", files)
    rename = {
        m: f"{m}.__init__"
        for m, (_, is_package) in files.items()
        if is_package and m != "vcore" and not any(e == _relative(m, "vcore") for _, g in VCORE_LAYERS for e in g)
    }
    return {rename.get(m, m): {rename.get(t, t): line for t, line in targets.items()} for m, targets in graph.items()}


def test_vcore_has_no_import_circle():
    assert import_cycles(_vcore_graph()) == []


def test_vcore_imports_point_down_its_layers():
    assert upward_imports("vcore", _vcore_graph(), VCORE_LAYERS) == []


@pytest.mark.parametrize("module", sorted(vcore_files()))
def test_vcore_modules_read_no_other_module_s_private_names(module):
    source, is_package = vcore_files()[module]
    # vcore._native is vcore's own private layer: its modules are what the layers above it are built on.
    bad = [b for b in private_reads("vcore", module, source, is_package) if "vcore._native" not in b]
    assert bad == []
