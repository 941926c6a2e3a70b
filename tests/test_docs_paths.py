"""What the documentation names exists: README.md, CONTRIBUTING.md and docs/*.md, checked against the repository.

- every repository path they name (``src/...``, ``tests/...``, ``adapters/...``, ``bench/...``, ``docs/...``,
  ``.ci/...``, the top-level files; ``core/...`` and ``bindings/...`` are under src/vcore/_native/; a placeholder
  such as ``src/vcore/plugins/<plugin>.py`` needs its folder) and every relative link;
- in CONTRIBUTING.md and docs/: a bare file name in a code span (```loop.py```) is a file of the repository; a
  pytest node id (```tests/x.py::test_name[case id]```) names a file, a function or class defined in it, and a
  case id that a test file spells; a code span holding only ```[case id]``` is such an id; a dotted name
  (```vcore.topology.node_scores```) imports; ```Class::member``` is a C++ name of the native core.

The checker is tested on small synthetic documents too, so it is known to catch what it should.
"""

from __future__ import annotations

import ast
import importlib
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NATIVE = ROOT / "src" / "vcore" / "_native"
DOCS = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")])
SKIP_DIRS = {".git", "build", "__pycache__", ".benchmarks", ".hypothesis"}

_TOP = r"(?:src|adapters|tests|bench|docs|\.ci|core|bindings)/[\w./<>*{}-]*"
_FILES = r"setup\.py|pyproject\.toml|README\.md|CONTRIBUTING\.md|MANIFEST\.in"
PATH = re.compile(rf"(?<![\w./<>-])({_TOP}|(?:{_FILES})(?![\w.]))")
LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
NODE_ID = re.compile(r"^(\S+?\.py)::(\w+)(?:\[(.+)\])?$")
CASE_ID = re.compile(r"^\[(.+)\]$")
BARE_FILE = re.compile(r"^[\w-]+\.(?:py|pyx|pyi|cpp|h|go|md)$")
DOTTED = re.compile(r"^(?:vcore|vcore_kube|vcore_router)(?:\.\w+)+$")
CPP_MEMBER = re.compile(r"^([A-Z]\w*)::(\w+)$")


def resolve(token: str, base: Path = ROOT) -> Path:
    """The repository path a documented path names (core/ and bindings/ are the native core's)."""
    token = token.rstrip(".,;:")
    if token.startswith(("core/", "bindings/")):
        return NATIVE / token
    return base / token


def path_problems(token: str, base: Path = ROOT) -> list[str]:
    token = token.rstrip(".,;:")
    placeholder = re.search(r"[<*{]", token)
    if placeholder:  # src/vcore/plugins/<plugin>.py: the folder must exist
        folder = token[: placeholder.start()].rsplit("/", 1)[0]
        return [] if resolve(folder, base).is_dir() else [f"{token}: no folder {folder}"]
    return [] if resolve(token, base).exists() else [f"{token}: no such path"]


@cache
def repository_file_names() -> frozenset[str]:
    names = {path.name for path in ROOT.iterdir() if path.is_file()}
    for top in ("src", "adapters", "tests", "bench", "docs", ".ci"):
        for path in (ROOT / top).rglob("*"):
            if path.is_file() and not SKIP_DIRS & set(path.relative_to(ROOT).parts):
                names.add(path.name)
    return frozenset(names)


@cache
def source_of_tests() -> str:
    return "\n".join(
        p.read_text(encoding="utf-8") for p in sorted((ROOT / "tests").rglob("*.py")) if not SKIP_DIRS & set(p.parts)
    )


def defined_names(path: Path) -> set[str]:
    """Functions, classes and assigned names at any depth of a Python file."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def case_id_problems(case: str, sources: str) -> list[str]:
    return [] if f'"{case}"' in sources or f"'{case}'" in sources else [f"[{case}]: no test spells this case id"]


def node_id_problems(span: re.Match[str], sources: str) -> list[str]:
    file, name, case = span.groups()
    path = resolve(file)
    if not path.is_file():
        return [f"{span[0]}: no file {file}"]
    if name not in defined_names(path):
        return [f"{span[0]}: {file} defines no {name}"]
    return case_id_problems(case, sources) if case else []


def dotted_problems(name: str) -> list[str]:
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return [f"{name}: {'.'.join(parts[:i])} has no {'.'.join(parts[i:])}"]
            obj = getattr(obj, attr)
        return []
    return [f"{name}: does not import"]


@cache
def native_sources() -> tuple[str, ...]:
    return tuple(
        p.read_text(encoding="utf-8")
        for p in sorted(NATIVE.rglob("*"))
        if p.suffix in (".h", ".cpp") and not SKIP_DIRS & set(p.parts)
    )


def cpp_member_problems(span: re.Match[str]) -> list[str]:
    cls, member = span.groups()
    found = any(re.search(rf"\b{cls}\b", s) and re.search(rf"\b{member}\b", s) for s in native_sources())
    return [] if found else [f"{span[0]}: no native source names both {cls} and {member}"]


def problems(text: str, *, base: Path = ROOT, spans: bool = True, sources: str | None = None) -> list[str]:
    """Everything a document names that the repository does not have. ``spans``: check code spans beyond paths
    (bare file names, node ids, case ids, dotted names, C++ names)."""
    out: list[str] = []
    for token in PATH.findall(text):
        out += path_problems(token)
    for target in LINK.findall(text):
        if not re.match(r"^[a-z]+:", target) and not target.startswith("#"):
            target = target.split("#", 1)[0]
            out += [] if (base / target).exists() else [f"link {target}: no such path"]
    if not spans:
        return out
    sources = source_of_tests() if sources is None else sources
    for span in CODE_SPAN.findall(FENCE.sub("", text)):
        span = span.strip()
        if node_id := NODE_ID.match(span):
            out += node_id_problems(node_id, sources)
        elif case_id := CASE_ID.match(span):
            out += case_id_problems(case_id[1], sources)
        elif BARE_FILE.match(span):
            out += [] if span in repository_file_names() else [f"{span}: no file of this name"]
        elif DOTTED.match(span):
            out += dotted_problems(span)
        elif cpp_member := CPP_MEMBER.match(span):
            out += cpp_member_problems(cpp_member)
    return out


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_what_the_docs_name_exists(doc):
    # README's code spans hold commands, YAML and annotation keys; only its paths and links are checked.
    assert problems(doc.read_text(encoding="utf-8"), base=doc.parent, spans=doc.name != "README.md") == []


def test_the_docs_folder_and_contributing_exist():
    assert (ROOT / "CONTRIBUTING.md").is_file()
    assert {p.name for p in (ROOT / "docs").glob("*.md")} >= {"architecture.md", "scoring.md"}


# -------------------------------------------------------------------------------------------------------------
# The checker catches what it should (synthetic documents)
# -------------------------------------------------------------------------------------------------------------
SOURCES = "CASES = [Case(\"LeastAllocated-1\", ...), Case('vcore: edge', ...)]"


@pytest.mark.parametrize(
    "text, expected",
    [  # expected: the number of problems found
        ("See `src/vcore/cluster.py` and src/vcore/scheduler.py.", 0),
        ("See `src/vcore/clusters.py`.", 1),
        ("The kernel is `core/src/engine.cpp`, bound by `bindings/module.cpp`.", 0),
        ("The kernel is `core/src/engines.cpp`.", 1),
        ("One module `src/vcore/plugins/<plugin>.py`, one file `core/src/plugins/<name>.cpp`.", 0),
        ("One module `src/vcore/plugin/<plugin>.py`.", 1),
        ("```\nsrc/vcore/_native/   the core\nsrc/vcore/nothing/   gone\n```", 1),
        ("[the map](docs/architecture.md), [gone](docs/nothing.md), [web](https://example.com)", 2),  # path and link
        ("`setup.py`, `pyproject.toml` and `README.md`", 0),
        ("`tests/test_scheduler.py::test_nodes_to_find_rule`", 0),
        ("`tests/test_scheduler.py::test_no_such_test`", 1),
        ("`tests/test_nothing.py::test_x`", 2),  # the path, and the node id
        ("`tests/test_conformance.py::test_score_conformance[LeastAllocated-1]` and `[vcore: edge]`", 0),
        ("`tests/test_conformance.py::test_score_conformance[LeastAllocated-9]`", 1),
        ("`[vcore: no such edge]`", 1),
        ("`loop.py`, `node_plugin.h`", 0),
        ("`lop.py`", 1),
        ("`vcore.topology.node_scores`, `vcore.reasons.FIXED_REASONS`, `vcore_kube.reflector`", 0),
        ("`vcore.topology.node_score`", 1),
        ("`vcore.nothing`", 1),
        ("`Engine::place_gang`, `ClusterState::compile_pod`", 0),
        ("`Engine::place_gangs`", 1),
    ],
)
def test_checker_finds_what_is_missing(text, expected):
    found = problems(text, sources=SOURCES)
    assert len(found) == expected, found


def test_checker_skips_spans_where_asked():
    assert problems("`lop.py` and `vcore.io/gpu-topology`", spans=False) == []
    assert problems("`lop.py` in src/vcore/nothing.py", spans=False) == ["src/vcore/nothing.py: no such path"]
