"""``vcore simulate --trace-dir DIR ...``: replay an openb GPU trace with the FGD protocol and report the metrics.

    vcore simulate --trace-dir ../shared/data/openb --workload default --policy fgd --policy vcore \\
        --seeds 42-51 [--json] [--plot curves.png]

Every (policy, seed) pair is one native replay, run in parallel worker processes (multiprocessing, "spawn").
Text output: per policy the mean (and min/max) GPU allocation ratio at 130 % arrived and the time per seed.
``--json`` prints, per policy and seed and as the mean over seeds, the allocation ratio and fragmentation ratio at
each arrived percentage 0..130. ``--plot`` draws the mean allocation curves with matplotlib. A progress bar
(tqdm) is shown when stderr is a terminal.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from vcore.sim.gpu.trace import NodeList, PodList

__all__ = ["add_trace_arguments", "run_trace", "parse_seeds", "simulate", "main"]


def parse_seeds(text: str) -> list[int]:
    """``"42-51"`` -> 42..51; ``"1,5,9"``; ``"7"``; mixtures like ``"1-3,10"``. ValueError names the bad part."""
    seeds: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "-" in part[1:]:
                k = part.index("-", 1)
                lo, hi = int(part[:k]), int(part[k + 1 :])
                if hi < lo:
                    raise ValueError
                seeds.extend(range(lo, hi + 1))
            else:
                seeds.append(int(part))
        except ValueError:
            raise ValueError(f"--seeds: bad seed or range {part!r} (use e.g. 42-51 or 1,2,3)") from None
    if not seeds:
        raise ValueError("--seeds: no seeds given")
    return seeds


def add_trace_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the trace-replay options of ``vcore simulate`` to ``parser``.

    ``--trace-dir`` selects trace replay; without it the host command keeps its own behaviour. Options the host
    parser already defines (e.g. ``--json``) are reused, not redefined.
    """
    from vcore.gpu.policies import DEFAULT_POLICY

    existing = set(getattr(parser, "_option_string_actions", {}))
    g = parser.add_argument_group("GPU trace replay (openb format, FGD protocol)")

    def add(flag: str, **kw: Any) -> None:
        if flag not in existing:
            g.add_argument(flag, **kw)

    add(
        "--trace-dir",
        default=None,
        metavar="DIR",
        help="replay the openb trace in DIR with the FGD protocol (instead of a synthetic cluster)",
    )
    add(
        "--workload",
        default="default",
        help="pod list: name (default, cpu050, gpushare40 ...), file name or path (default: default)",
    )
    add("--node-list", default=None, help="node list file (default: openb_node_list_gpu_node.csv in --trace-dir)")
    add(
        "--policy",
        action="append",
        default=None,
        help=f"placement policy, repeatable (default: {DEFAULT_POLICY}); first-fit, best-fit, random, fgd, "
        "dot-product, gpu-packing, gpu-clustering, binpack, spread, vcore",
    )
    add("--seeds", default="42-51", help="seeds, e.g. 42-51 or 1,2,3 (default: 42-51)")
    add("--ratio", type=float, default=1.3, help="workload size as a multiple of GPU capacity (default: 1.3)")
    add(
        "--tie-order",
        choices=["name", "shuffled"],
        default="name",
        help="score ties: smallest node name (default, the published protocol) or a seeded random node order "
        "(what the FGD artifact effectively does by prefixing node names with a random index)",
    )
    add("--json", action="store_true", help="print the full results as JSON")
    add("--plot", default=None, metavar="FILE.png", help="plot the allocation curves of the policies to this file")
    add("--jobs", type=int, default=0, help="worker processes (default: number of CPUs)")


@lru_cache(maxsize=4)
def _load(trace_dir: str, workload: str, node_list: str | None) -> tuple[NodeList, PodList]:
    from vcore.sim.gpu.trace import load_nodes, load_pods, node_list_path, workload_path

    return load_nodes(node_list_path(trace_dir, node_list)), load_pods(workload_path(trace_dir, workload))


def _run_one(
    trace_dir: str, workload: str, node_list: str | None, policy: str, seed: int, ratio: float, tie_order: str = "name"
) -> dict[str, Any]:
    from vcore.sim.gpu.replay import run_protocol

    nodes, pods = _load(trace_dir, workload, node_list)
    return run_protocol(nodes, pods, policy, seed, ratio=ratio, tie_order=tie_order).to_dict()


def _mean(runs: list[dict[str, Any]]) -> dict[str, Any]:
    alloc = np.mean([r["alloc_ratio"] for r in runs], axis=0)
    frag = np.mean([r["frag_ratio"] for r in runs], axis=0)
    finals = [r["alloc_ratio_final"] for r in runs]
    return {
        "alloc_ratio_final": float(np.mean(finals)),
        "alloc_ratio_final_std": float(np.std(finals)),
        "alloc_ratio": [round(float(x), 6) for x in alloc],
        "frag_ratio": [round(float(x), 6) for x in frag],
        "seconds_per_seed": float(np.mean([r["seconds"] for r in runs])),
    }


def simulate(
    trace_dir: str,
    workload: str,
    policies: list[str],
    seeds: list[int],
    *,
    node_list: str | None = None,
    ratio: float = 1.3,
    jobs: int = 0,
    progress: bool | None = None,
    tie_order: str = "name",
) -> dict[str, Any]:
    """Run every (policy, seed) pair; returns {"policies": {policy: {"seeds": {seed: run}, "mean": {...}}}, ...}."""
    from vcore.gpu.policies import native_policy_name
    from vcore.sim.gpu.trace import node_list_path, workload_path

    names = [native_policy_name(p) for p in policies]
    names = list(dict.fromkeys(names))
    if tie_order not in ("name", "shuffled"):
        raise ValueError(f"--tie-order: must be name or shuffled, got {tie_order!r}")
    # fail fast in the parent on bad paths / files (workers would only report it later)
    nodes, pods = _load(trace_dir, workload, node_list)
    tasks = [(p, s) for p in names for s in seeds]
    if progress is None:
        progress = sys.stderr.isatty()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(tasks), desc=f"simulate {workload}", unit="run", file=sys.stderr)
    jobs = jobs if jobs and jobs > 0 else (os.cpu_count() or 1)
    jobs = min(jobs, len(tasks))
    results: dict[tuple[str, int], dict[str, Any]] = {}
    t0 = time.perf_counter()
    if jobs <= 1:
        for p, s in tasks:
            results[(p, s)] = _run_one(trace_dir, workload, node_list, p, s, ratio, tie_order)
            if bar:
                bar.update(1)
    else:
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as ex:
            futs = {
                ex.submit(_run_one, trace_dir, workload, node_list, p, s, ratio, tie_order): (p, s) for p, s in tasks
            }
            for f in as_completed(futs):
                results[futs[f]] = f.result()
                if bar:
                    bar.update(1)
    if bar:
        bar.close()
    out: dict[str, Any] = {
        "trace_dir": trace_dir,
        "workload": workload,
        "workload_file": workload_path(trace_dir, workload),
        "node_list": node_list_path(trace_dir, node_list),
        "n_nodes": nodes.n_nodes,
        "n_original_pods": pods.n_pods,
        "capacity_milli": nodes.gpu_capacity_milli,
        "ratio": ratio,
        "tie_order": tie_order,
        "seeds": seeds,
        "percents": list(range(0, 131)),
        "wall_seconds": round(time.perf_counter() - t0, 3),
        "policies": {},
    }
    for p in names:
        runs = [results[(p, s)] for s in seeds]
        out["policies"][p] = {"seeds": {str(s): r for s, r in zip(seeds, runs)}, "mean": _mean(runs)}
    return out


def _plot(result: dict[str, Any], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    x = result["percents"]
    for p, d in result["policies"].items():
        y = 100 * np.asarray(d["mean"]["alloc_ratio"])
        ax.plot(x, y, label=f"{p} ({100 * d['mean']['alloc_ratio_final']:.1f}%)")
    ax.plot(x, np.minimum(x, 100), color="grey", linestyle=":", linewidth=1, label="ideal")
    ax.set_xlabel("arrived GPU demand (% of capacity)")
    ax.set_ylabel("GPU allocation ratio (%)")
    ax.set_title(f"openb {result['workload']}: mean of {len(result['seeds'])} seeds")
    ax.set_xlim(0, 130)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run_trace(args: argparse.Namespace) -> int:
    """Entry point behind ``vcore simulate --trace-dir``; returns the process exit code."""
    from vcore.gpu.policies import DEFAULT_POLICY

    if not getattr(args, "trace_dir", None):
        print("vcore simulate: error: --trace-dir is required for trace replay", file=sys.stderr)
        return 2
    try:
        seeds = parse_seeds(args.seeds)
        policies = args.policy or [DEFAULT_POLICY]
        result = simulate(
            args.trace_dir,
            args.workload,
            policies,
            seeds,
            node_list=getattr(args, "node_list", None),
            ratio=getattr(args, "ratio", 1.3),
            jobs=getattr(args, "jobs", 0),
            tie_order=getattr(args, "tie_order", "name"),
        )
    except (ValueError, FileNotFoundError, TypeError) as e:
        print(f"vcore simulate: error: {e}", file=sys.stderr)
        return 2
    if getattr(args, "plot", None):
        _plot(result, args.plot)
    if getattr(args, "json", False):
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
    else:
        print(
            f"workload {result['workload']}: {result['n_original_pods']} pods, {result['n_nodes']} nodes, "
            f"GPU capacity {result['capacity_milli'] // 1000} GPUs, seeds {seeds[0]}..{seeds[-1]} ({len(seeds)})"
        )
        print(f"{'policy':<16}{'alloc@130%':>11}{'std':>7}{'min':>7}{'max':>7}{'frag@130%':>11}{'s/seed':>8}")
        for p, d in result["policies"].items():
            finals = [r["alloc_ratio_final"] for r in d["seeds"].values()]
            print(
                f"{p:<16}{100 * d['mean']['alloc_ratio_final']:>10.2f}%{100 * np.std(finals):>7.2f}"
                f"{100 * min(finals):>7.2f}{100 * max(finals):>7.2f}{100 * d['mean']['frag_ratio'][-1]:>10.2f}%"
                f"{d['mean']['seconds_per_seed']:>8.3f}"
            )
        if getattr(args, "plot", None):
            print(f"plot written to {args.plot}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Standalone entry (``python -m vcore.sim.gpu.cli``); ``vcore simulate`` calls :func:`run_trace` directly."""
    parser = argparse.ArgumentParser(prog="vcore simulate", description=__doc__.split("\n\n")[0])
    add_trace_arguments(parser)
    return run_trace(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
