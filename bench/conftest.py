"""Shared fixtures of the vcore benchmarks and the summary table printed at the end of a bench session.

Run: ``python -m pytest bench/ --benchmark-only`` (plain ``python -m pytest`` collects tests/ only).

Each benchmark records its figures through the ``bench_report`` fixture (ns/node, pods/s, objects/s, bytes/node,
ratio to its baseline); ``pytest_terminal_summary`` prints them as one table, because on a shared, noisy machine
the ratios measured in the same run are the numbers to read, not the absolute times.
"""

from __future__ import annotations

import os
import resource
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

BENCH_DIR = Path(__file__).resolve().parent
# bench/ is not a package; make its helper modules importable however pytest was started.
sys.path.insert(0, str(BENCH_DIR))


def pytest_collect_file(file_path: Path, parent: Any) -> Any:
    """Collect bench/bench_*.py too (pyproject's python_files is the default test_*.py, and is not ours to edit)."""
    if (
        file_path.suffix == ".py"
        and file_path.name.startswith("bench_")
        and file_path.parent == BENCH_DIR
        and not parent.session.isinitpath(file_path)
    ):  # a file named on the command line is collected anyway
        return pytest.Module.from_parent(parent, path=file_path)
    return None


@dataclass
class Row:
    group: str
    impl: str
    median_s: float
    min_s: float
    figures: dict[str, str] = field(default_factory=dict)


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    # (group, impl) -> median seconds, so a fast path can compute its ratio against a baseline run earlier.
    medians: dict[tuple[str, str], float] = field(default_factory=dict)

    def add(self, benchmark: Any, group: str, impl: str, **figures: Any) -> Row | None:
        """Record a finished benchmark; figures go to the table and to benchmark.extra_info (JSON output)."""
        stats = getattr(benchmark, "stats", None)
        if stats is None:  # --benchmark-disable: the function ran once, untimed
            return None
        median, fastest = stats.stats.median, stats.stats.min
        self.medians[(group, impl)] = median
        benchmark.extra_info.update({k: v for k, v in figures.items()})
        row = Row(group, impl, median, fastest, {k: _fmt(v) for k, v in figures.items()})
        self.rows.append(row)
        return row


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if value >= 100:
            return f"{value:,.0f}"
        return f"{value:.3g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


_REPORT = Report()


@pytest.fixture(scope="session")
def bench_report() -> Report:
    return _REPORT


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def current_rss_bytes() -> int:
    """Current resident set size (Linux /proc; falls back to the peak elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * resource.getpagesize()
    except OSError:
        return int(peak_rss_mib() * 1024 * 1024)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _REPORT.rows:
        return
    tr = terminalreporter
    tr.section("vcore bench summary (median; ratios measured in this run)")
    width = max(len(r.group) for r in _REPORT.rows)
    iwidth = max(len(r.impl) for r in _REPORT.rows)
    for r in _REPORT.rows:
        figures = "  ".join(f"{k}={v}" for k, v in r.figures.items())
        tr.write_line(f"{r.group:<{width}}  {r.impl:<{iwidth}}  {r.median_s * 1e3:>10.3f} ms  {figures}")
    tr.write_line(f"peak RSS of the bench process: {peak_rss_mib():,.0f} MiB")
    # Context for reading the numbers: the machines are shared, so the load at the end of the run is printed with
    # them, and the native helper-thread count (VCORE_THREADS; default: every core).
    load = " ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    tr.write_line(
        f"machine: {os.cpu_count()} cpus, load average {load}, VCORE_THREADS={os.environ.get('VCORE_THREADS', 'unset')}"
    )
