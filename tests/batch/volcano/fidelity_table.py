"""The tables of docs/volcano-fidelity.md, from a run of the translated Volcano tests.

Runs ``tests/batch/volcano`` in-process with pytest and prints, in Markdown: per Volcano test file (named by the
``pkg/scheduler/..._test.go`` path in each module's docstring) its cases, passes, xfails and skips; per file the
xfail causes with their case counts; per cause the cases it alone explains and all it appears in, with the
exception it raises; the skip reasons with their counts. A case's causes are read from its xfail marker's reason,
which names them (``NAME: summary; then NAME: summary``, volcano_fixtures.param), and counted only when pytest
reports the case xfailed. Anything else (a failure, an error, a strict xpass) is listed and the exit status is 1.

Run from the repository root: ``python -m tests.batch.volcano.fidelity_table``.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from . import causes

HERE = Path(__file__).resolve().parent
GO_FILE = re.compile(r"pkg/scheduler/([\w./-]+?_test\.go)")
CAUSES = {c.name: c for c in vars(causes).values() if isinstance(c, causes.Cause)}
CAUSE_NAME = re.compile(r"(?:^|; then )([A-Z][A-Z0-9_]+): ")


@dataclass
class Outcome:
    """One test case: its module, its outcome, and the causes or the skip reason it carries."""

    module: str
    outcome: str = "passed"  # passed, xfailed, skipped, failed
    causes: tuple[str, ...] = ()
    skip_reason: str = ""


@dataclass
class Collector:
    """A pytest plugin: every case's xfail causes at collection, its outcome from the reports."""

    cases: dict[str, Outcome] = field(default_factory=dict)

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            case = self.cases[item.nodeid] = Outcome(module=item.path.name)
            marker = item.get_closest_marker("xfail")
            if marker is not None:
                case.causes = cause_names(item.nodeid, marker.kwargs.get("reason", ""))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        case = self.cases[report.nodeid]
        if report.failed:
            case.outcome = "failed"
        elif report.skipped and hasattr(report, "wasxfail"):
            case.outcome = "xfailed"
        elif report.skipped:
            case.outcome = "skipped"
            case.skip_reason = skip_reason(report)


def cause_names(nodeid: str, reason: str) -> tuple[str, ...]:
    names = tuple(CAUSE_NAME.findall(reason))
    unknown = [n for n in names if n not in CAUSES]
    if not names or unknown:
        raise ValueError(
            f"{nodeid}: xfail reason names no cause of causes.py"
            f"{f' (unknown: {unknown})' if unknown else ''}: {reason!r}"
        )
    return names


def skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text.removeprefix("Skipped: ")


def go_file(module: str) -> str:
    """The Volcano test file a module translates: the first pkg/scheduler path its docstring names."""
    doc = ast.get_docstring(ast.parse((HERE / module).read_text())) or ""
    found = GO_FILE.search(doc)
    if found is None:
        raise ValueError(f"{module}: its docstring names no pkg/scheduler/..._test.go file")
    return found.group(1)


def table(header: list[str], rows: list[list[object]], right: int = 0) -> str:
    """A Markdown table; the last ``right`` columns are numbers, aligned right."""
    align = ["---"] * (len(header) - right) + ["---:"] * right
    lines = [header, align, *rows]
    return "\n".join("| " + " | ".join(str(cell) for cell in line) + " |" for line in lines)


def report(cases: dict[str, Outcome]) -> str:
    modules = sorted({c.module for c in cases.values()}, key=lambda m: go_file(m))
    counts = {m: Counter(c.outcome for c in cases.values() if c.module == m) for m in modules}
    per_file = []
    for m in modules:
        n = counts[m]
        per_file.append([go_file(m), f"`tests/batch/volcano/{m}`", n.total(), n["passed"], n["xfailed"], n["skipped"]])
    total = Counter(c.outcome for c in cases.values())
    per_file.append(
        [
            "**total**",
            "",
            f"**{total.total()}**",
            f"**{total['passed']}**",
            f"**{total['xfailed']}**",
            f"**{total['skipped']}**",
        ]
    )
    out = [
        "## Per Volcano test file",
        "",
        table(["Volcano test file", "vcore module", "cases", "pass", "xfail", "skip"], per_file, right=4),
    ]

    xfailed = [c for c in cases.values() if c.outcome == "xfailed"]
    by_file = []
    for m in modules:
        per_cause = Counter(name for c in xfailed if c.module == m for name in c.causes)
        if per_cause:
            cells = ", ".join(f"{name} ({k})" for name, k in sorted(per_cause.items(), key=lambda kv: (-kv[1], kv[0])))
            by_file.append([go_file(m), cells])
    out += [
        "",
        "## xfail by cause, per file (a case counts under each of its causes)",
        "",
        table(["Volcano test file", "causes (cases)"], by_file),
    ]

    in_all = Counter(name for c in xfailed for name in c.causes)
    sole = Counter(c.causes[0] for c in xfailed if len(c.causes) == 1)
    unused = sorted(set(CAUSES) - set(in_all))
    rows = [
        [f"{name}", CAUSES[name].raises.__name__, sole[name], in_all[name]]
        for name in sorted(in_all, key=lambda n: (-in_all[n], n))
    ]
    out += ["", "## Causes", "", table(["cause", "raises", "sole cause", "in all"], rows, right=2)]
    if unused:
        out += ["", f"Causes no xfailed case names: {', '.join(unused)}"]

    skips = Counter((c.module, c.skip_reason) for c in cases.values() if c.outcome == "skipped")
    rows = [[go_file(m), reason, k] for (m, reason), k in sorted(skips.items(), key=lambda kv: go_file(kv[0][0]))]
    out += ["", "## Skipped, by reason", "", table(["Volcano test file", "reason", "cases"], rows, right=1)]

    failed = sorted(nodeid for nodeid, c in cases.items() if c.outcome == "failed")
    if failed:
        out += [
            "",
            "## Failed (a difference no cause names, an error, or an xfail whose causes are fixed)",
            "",
            *(f"- {nodeid}" for nodeid in failed),
        ]
    return "\n".join(out)


def main() -> int:
    collector = Collector()
    args = [
        str(HERE),
        "-q",
        "-rN",
        "-p",
        "no:cacheprovider",
        "--no-header",
        "--disable-warnings",
        "-o",
        "console_output_style=classic",
    ]
    exit_code = pytest.main(args, plugins=[collector])
    if exit_code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        print(f"fidelity_table: pytest stopped with {exit_code!r}", file=sys.stderr)
        return 1
    print()
    print(report(collector.cases))
    return 0 if all(c.outcome != "failed" for c in collector.cases.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
