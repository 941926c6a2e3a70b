"""Held-out workloads of the openb trace family: derivations of a pod list / node list, and the held-out check.

This module owns (1) the derivation of openb-family workloads that were not shared with us, modelled on the
workloads the FGD paper (Weng et al., ATC'23, section 6) evaluates besides ``default``/``cpuNNN``/``gpushareNN``,
and (2) a small runner that replays them with the FGD protocol (:func:`vcore.sim.gpu.replay.run_protocol`,
unchanged) to check that a policy that was tuned on the shared lists holds on the others. Every derivation takes
and returns the plain :class:`~vcore.sim.gpu.trace.PodList` / :class:`~vcore.sim.gpu.trace.NodeList` of
:mod:`vcore.sim.gpu.trace`, is seeded (``numpy.random.default_rng``) and deterministic, and never modifies its
input.

Held-out workloads (:data:`HELDOUT_WORKLOADS`), each derived from ``openb_pod_list_default.csv`` with
:data:`VARIANT_SEED` and replayed on ``openb_node_list_gpu_node.csv`` unless said otherwise:

``multigpu20`` ``multigpu30`` ``multigpu40`` ``multigpu50`` -- :func:`raise_multi_gpu_share`
    The share of the GPU demand (sum of ``num_gpu x gpu_milli``) that comes from multi-GPU pods (``num_gpu > 1``)
    is raised to NN %. Resampling: the single-GPU pods (``num_gpu == 1``, whole or fractional) are put in a
    seeded random order; walking that order, each one is replaced in place by a copy of a multi-GPU pod of the
    same list drawn uniformly with replacement (all its columns, ``gpu_spec`` included; name
    ``<multi pod>@<replaced pod>``). CPU-only pods, the other multi-GPU pods and the list length are untouched,
    so the mix of 2/4/8-GPU pods and the CPU-only share stay those of the source list. Replacements stop at the
    count whose share is closest to the target: every replacement raises the share, so the result is within half
    a step, and a step is at most ``max pod demand / total demand`` (0.1 point on ``default``; the tests check
    ``<= max demand / total``). The lists grow past 130 % of capacity, so the protocol trims them by random
    removal (its "above it" branch, as for the artifact's multi-GPU-heavy lists).

``gpuspec10`` ``gpuspec20`` ``gpuspec25`` ``gpuspec33`` -- :func:`constrain_gpu_types`
    NN % of the GPU pods (``num_gpu > 0``, by count: ``floor(NN/100 x n_gpu_pods + 0.5)`` pods in all, pods that
    already carry a constraint counted first) get a ``gpu_spec``. The pods to constrain are drawn uniformly
    without replacement from the unconstrained GPU pods. For each, its candidate models are the models of
    the node list with a node that could host the pod when empty (GPU count, CPU and memory), or every model
    of the node list when no node could. The number k of allowed models is drawn with P(k) proportional to
    2^-(k-1), k = 1..#candidates (mostly one model, sometimes two, rarely more: the shape of the artifact's
    published gpuspec lists), then k distinct models with probability proportional to the model's GPU count
    in the node list (a constraint names a common model more often than a rare one).

``spot-default`` -- :func:`spot_node_list` + :func:`restrict_gpu_spec`
    A different cluster: the alibaba-spot-gpu-v2026 node list (``gpu_model,gpu_capacity_num,cpu_num,
    node_name``: 4278 nodes, 10,412 GPUs of 6 models) converted to the openb node-list form
    ``sn,cpu_milli,memory_mib,gpu,model``: ``sn = spot-NNNNN`` (node_name zero-padded, so name order is the
    file's numeric order), ``cpu_milli = 1000 x cpu_num``, ``gpu = gpu_capacity_num``, ``model = gpu_model``.
    That list has no memory column: ``memory_mib = mib_per_cpu x cpu_num`` with ``mib_per_cpu = 4096`` (4 GiB
    per core, the ratio of 642 of the 1213 openb GPU nodes); memory then never binds before CPU does for the
    openb pods. The default pod list is replayed on it. Pod ``gpu_spec`` models absent from the cluster are
    dropped; a pod left with no allowed model loses its constraint (it becomes "any GPU"). The default list has
    no ``gpu_spec`` at all, so for ``spot-default`` nothing is dropped (the count is reported by
    :func:`restrict_gpu_spec` and :func:`load_heldout`).

:func:`heldout_comparison` replays every (workload, policy, seed, tie order) in worker processes (spawn, like
:mod:`vcore.sim.gpu.cli`) and returns the mean final allocation ratio (GPU allocation at 130 % arrived) per workload,
policy and tie order. ``python -m vcore.sim.gpu.variants [DATA_DIR]`` prints the table.
"""

from __future__ import annotations

import csv
import math
import multiprocessing
import os
import sys
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from typing import Any

import numpy as np

from vcore.sim.gpu.trace import (
    MAX_GPUS_PER_NODE,
    NodeList,
    PodList,
    csv_int,
    csv_number,
    load_nodes,
    load_pods,
    node_list_path,
    workload_path,
)
from vcore.validation import Integer, Number, fail

__all__ = [
    "MULTIGPU_WORKLOADS",
    "GPUSPEC_WORKLOADS",
    "SPOT_WORKLOADS",
    "HELDOUT_WORKLOADS",
    "VARIANT_SEED",
    "SPOT_NODE_LIST",
    "multi_gpu_share",
    "constrained_share",
    "raise_multi_gpu_share",
    "constrain_gpu_types",
    "spot_node_list",
    "write_node_list",
    "restrict_gpu_spec",
    "load_heldout",
    "heldout_comparison",
]

MULTIGPU_WORKLOADS: dict[str, float] = {"multigpu20": 20.0, "multigpu30": 30.0, "multigpu40": 40.0, "multigpu50": 50.0}
GPUSPEC_WORKLOADS: dict[str, float] = {"gpuspec10": 10.0, "gpuspec20": 20.0, "gpuspec25": 25.0, "gpuspec33": 33.0}
SPOT_WORKLOADS: dict[str, str] = {"spot-default": "default"}  # held-out name -> openb pod list replayed on spot
HELDOUT_WORKLOADS: tuple[str, ...] = (*MULTIGPU_WORKLOADS, *GPUSPEC_WORKLOADS, *SPOT_WORKLOADS)
VARIANT_SEED = 0  # seed of the derivations (the protocol seeds 42-51 then shuffle/tune the derived list)
SPOT_NODE_LIST = os.path.join("alibaba-spot-gpu-v2026", "node_info_df.csv")  # relative to the data dir
_SPOT_COLUMNS = ("gpu_model", "gpu_capacity_num", "cpu_num", "node_name")
_SPOT_GPUS = Integer(0, MAX_GPUS_PER_NODE)
_SPOT_CPUS = Number(0)


# ---------------------------------------------------------------------------------------------------- checks


def _check_pods(pods: object, arg: str = "pods") -> None:
    if not isinstance(pods, PodList):
        raise TypeError(f"{arg}: expected a vcore.sim.gpu.trace.PodList, got {type(pods).__name__}")


def _check_nodes(nodes: object, arg: str = "nodes") -> None:
    if not isinstance(nodes, NodeList):
        raise TypeError(f"{arg}: expected a vcore.sim.gpu.trace.NodeList, got {type(nodes).__name__}")


def _check_percent(percent: object, arg: str, lo_open: float, hi: float, hi_open: bool) -> float:
    if isinstance(percent, bool) or not isinstance(percent, (int, float, np.integer, np.floating)):
        raise TypeError(f"{arg}: expected a number (percent), got {type(percent).__name__}")
    p = float(percent)
    if not math.isfinite(p) or p <= lo_open or (p >= hi if hi_open else p > hi):
        bracket = ")" if hi_open else "]"
        raise ValueError(f"{arg}: must be in ({lo_open:g}, {hi:g}{bracket} percent, got {percent!r}")
    return p


def _check_seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed: expected an integer, got {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"seed: must be >= 0, got {seed}")
    return int(seed)


def _copy(pods: PodList, source: str) -> PodList:
    return PodList(
        names=list(pods.names),
        cpu_milli=pods.cpu_milli.copy(),
        memory_mib=pods.memory_mib.copy(),
        num_gpu=pods.num_gpu.copy(),
        gpu_milli=pods.gpu_milli.copy(),
        gpu_spec=list(pods.gpu_spec),
        source=source,
    )


# ---------------------------------------------------------------------------------------------------- shares


def multi_gpu_share(pods: PodList) -> float:
    """Share (0..1) of the GPU demand (num_gpu x gpu_milli) that comes from pods with ``num_gpu > 1``."""
    _check_pods(pods)
    d = pods.gpu_demand_milli
    total = int(d.sum())
    return float(d[pods.num_gpu > 1].sum()) / total if total else 0.0


def constrained_share(pods: PodList) -> float:
    """Share (0..1) of the GPU pods (``num_gpu > 0``) that carry a ``gpu_spec``."""
    _check_pods(pods)
    gpu = np.flatnonzero(pods.num_gpu > 0)
    if not len(gpu):
        return 0.0
    return sum(1 for i in gpu if pods.gpu_spec[i]) / len(gpu)


# ---------------------------------------------------------------------------------------------------- multigpu


def raise_multi_gpu_share(pods: PodList, percent: float, seed: int = VARIANT_SEED) -> PodList:
    """``pods`` with the multi-GPU share of the GPU demand raised to ``percent`` % (see the module docstring).

    ValueError (naming the argument) when ``percent`` is not in (0, 100), is below the list's current share, or
    when the list has no multi-GPU pod to resample. Every target below 100 % is reachable: replacing all
    single-GPU pods leaves only multi-GPU GPU demand.
    """
    _check_pods(pods)
    target = _check_percent(percent, "percent", 0.0, 100.0, hi_open=True) / 100.0
    seed = _check_seed(seed)
    source = f"{pods.source}#multigpu{percent:g}@seed{seed}"
    demand = pods.gpu_demand_milli
    total0 = int(demand.sum())
    multi = np.flatnonzero(pods.num_gpu > 1)
    single = np.flatnonzero(pods.num_gpu == 1)
    if total0 == 0 or not len(multi):
        raise ValueError(f"pods: pod list {pods.source!r} has no multi-GPU pod (num_gpu > 1) to resample from")
    multi0 = int(demand[multi].sum())
    share0 = multi0 / total0
    if target < share0 - 1e-12:
        raise ValueError(
            f"percent: {percent:g} is below the multi-GPU share {100 * share0:.2f} % of pod list "
            f"{pods.source!r}; this derivation only raises it"
        )
    rng = np.random.default_rng([seed, 0x6D67])  # stream "mg": independent of the protocol's seeds
    order = single[rng.permutation(len(single))]
    draws = multi[rng.integers(len(multi), size=len(single))]
    # share after k replacements (k = 0..len(single)): strictly increasing, since a single-GPU pod asks for at
    # most 1000 milli and a multi-GPU pod for at least 2000
    add = demand[draws]
    gain_multi = np.concatenate([[0], np.cumsum(add)])
    gain_total = np.concatenate([[0], np.cumsum(add - demand[order])])
    share = (multi0 + gain_multi) / (total0 + gain_total)
    # replacing every single-GPU pod gives share 1 > target (CPU-only pods have no GPU demand): k <= len(single)
    k = int(np.searchsorted(share, target, side="left"))  # first count with share >= target
    if k > 0 and target - share[k - 1] <= share[k] - target:
        k -= 1
    out = _copy(pods, source)
    for i, j in zip(order[:k].tolist(), draws[:k].tolist()):
        out.names[i] = f"{pods.names[j]}@{pods.names[i]}"
        out.cpu_milli[i] = pods.cpu_milli[j]
        out.memory_mib[i] = pods.memory_mib[j]
        out.num_gpu[i] = pods.num_gpu[j]
        out.gpu_milli[i] = pods.gpu_milli[j]
        out.gpu_spec[i] = pods.gpu_spec[j]
    return out


# ---------------------------------------------------------------------------------------------------- gpuspec


def _model_gpus(nodes: NodeList) -> dict[str, int]:
    """GPU count per model of the node list (models of GPU nodes only), sorted by model name."""
    acc: dict[str, int] = {}
    for m, g in zip(nodes.model, nodes.gpu_count.tolist()):
        if g > 0 and m:
            acc[m] = acc.get(m, 0) + int(g)
    return dict(sorted(acc.items()))


def constrain_gpu_types(pods: PodList, nodes: NodeList, percent: float, seed: int = VARIANT_SEED) -> PodList:
    """``pods`` with ``percent`` % of the GPU pods constrained to a random set of models of ``nodes``.

    See the module docstring for the draw. ValueError (naming the argument) when ``percent`` is not in (0, 100],
    when the node list has no GPU model or the pod list no GPU pod, or when more than ``percent`` % of the GPU
    pods are constrained already.
    """
    _check_pods(pods)
    _check_nodes(nodes)
    p = _check_percent(percent, "percent", 0.0, 100.0, hi_open=False)
    seed = _check_seed(seed)
    model_gpus = _model_gpus(nodes)
    if not model_gpus:
        raise ValueError(f"nodes: node list {nodes.source!r} has no GPU node, so no model to constrain pods to")
    gpu_pods = np.flatnonzero(pods.num_gpu > 0)
    if not len(gpu_pods):
        raise ValueError(f"pods: pod list {pods.source!r} has no GPU pod to constrain")
    want = int(math.floor(p / 100.0 * len(gpu_pods) + 0.5))  # round half up
    free = np.array([i for i in gpu_pods.tolist() if not pods.gpu_spec[i]], dtype=np.int64)
    have = len(gpu_pods) - len(free)
    if have > want:
        raise ValueError(
            f"percent: {percent:g} is below the share {100 * have / len(gpu_pods):.2f} % of GPU pods "
            f"of pod list {pods.source!r} that already carry a gpu_spec"
        )
    rng = np.random.default_rng([seed, 0x6773])  # stream "gs"
    chosen = np.sort(rng.choice(free, size=want - have, replace=False)) if want > have else free[:0]

    models = list(model_gpus)
    weight = np.array([model_gpus[m] for m in models], dtype=np.float64)
    node_mi = np.array([models.index(m) if g > 0 else -1 for m, g in zip(nodes.model, nodes.gpu_count)])
    out = _copy(pods, f"{pods.source}#gpuspec{percent:g}@seed{seed}")
    for i in chosen.tolist():
        fits = (
            (nodes.gpu_count >= pods.num_gpu[i])
            & (nodes.cpu_milli >= pods.cpu_milli[i])
            & (nodes.memory_mib >= pods.memory_mib[i])
            & (node_mi >= 0)
        )
        cand = np.unique(node_mi[fits])
        if not len(cand):
            cand = np.arange(len(models))
        pk = 0.5 ** np.arange(len(cand))
        k = 1 + int(rng.choice(len(cand), p=pk / pk.sum()))
        w = weight[cand]
        picked = rng.choice(cand, size=k, replace=False, p=w / w.sum())
        out.gpu_spec[i] = tuple(sorted(models[j] for j in picked.tolist()))
    return out


# ---------------------------------------------------------------------------------------------------- spot


def spot_node_list(path: str, mib_per_cpu: int = 4096) -> NodeList:
    """The alibaba-spot-gpu-v2026 node list (``gpu_model,gpu_capacity_num,cpu_num,node_name``) in openb form.

    See the module docstring for the conversion. ``mib_per_cpu`` is the memory (MiB) given per CPU core, since
    that list has none. ValueError names the file, line, node and field of a bad row.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path: expected a file path, got {type(path).__name__}")
    if isinstance(mib_per_cpu, bool) or not isinstance(mib_per_cpu, (int, np.integer)) or mib_per_cpu <= 0:
        raise ValueError(f"mib_per_cpu: must be a positive integer (MiB per CPU core), got {mib_per_cpu!r}")
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"path: spot node list {path!r} does not exist")
    raw: list[tuple[str, float, int, str, int]] = []
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None or tuple(c.strip() for c in header) != _SPOT_COLUMNS:
            raise fail(ValueError, f"{path}:1", f"spot node list header {header!r} is not {','.join(_SPOT_COLUMNS)}")
        seen: set[str] = set()
        for lineno, row in enumerate(reader, start=2):
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != len(_SPOT_COLUMNS):
                raise fail(ValueError, f"{path}:{lineno}", f"row has {len(row)} columns, expected {len(_SPOT_COLUMNS)}")
            model, gpus, cpus, name = (c.strip() for c in row)
            where = f"{path}:{lineno}: node {name!r}"
            if not name:
                raise fail(ValueError, f"{path}:{lineno}: node: node_name", "empty node name")
            if name in seen:
                raise fail(ValueError, f"{where}: node_name", "duplicate node name")
            seen.add(name)
            g = csv_int(gpus, f"{where}: gpu_capacity_num", _SPOT_GPUS)
            c = csv_number(cpus, f"{where}: cpu_num", _SPOT_CPUS)
            if g > 0 and not model:
                raise fail(ValueError, f"{where}: gpu_model", "a node with GPUs needs a GPU model")
            if "|" in model:
                raise fail(ValueError, f"{where}: gpu_model", f"one model per node, got {model!r}")
            raw.append((name, c, g, model, lineno))
    numeric = all(r[0].isdigit() for r in raw)
    width = max((len(r[0]) for r in raw), default=1)
    names = [f"spot-{r[0].zfill(width)}" if numeric else f"spot-{r[0]}" for r in raw]
    cpu_milli = np.array([int(round(1000 * r[1])) for r in raw], dtype=np.int64)
    return NodeList(
        names=names,
        cpu_milli=cpu_milli,
        memory_mib=np.array([int(round(r[1] * mib_per_cpu)) for r in raw], dtype=np.int64),
        gpu_count=np.array([r[2] for r in raw], dtype=np.int32),
        model=[r[3] for r in raw],
        source=f"{path}#openb(mib_per_cpu={mib_per_cpu})",
    )


def write_node_list(nodes: NodeList, path: str) -> None:
    """Write ``nodes`` as an openb node list (``sn,cpu_milli,memory_mib,gpu,model``), readable by load_nodes."""
    _check_nodes(nodes)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["sn", "cpu_milli", "memory_mib", "gpu", "model"])
        for row in zip(
            nodes.names, nodes.cpu_milli.tolist(), nodes.memory_mib.tolist(), nodes.gpu_count.tolist(), nodes.model
        ):
            w.writerow(row)


def restrict_gpu_spec(pods: PodList, nodes: NodeList) -> tuple[PodList, int, int]:
    """``pods`` with every ``gpu_spec`` restricted to the GPU models present in ``nodes``.

    Returns ``(pods, n_dropped, n_narrowed)``: pods whose spec named no present model lose the constraint
    (``n_dropped``, they may then run on any GPU); pods whose spec named some absent models keep the present ones
    (``n_narrowed``).
    """
    _check_pods(pods)
    _check_nodes(nodes)
    present = set(_model_gpus(nodes))
    out = _copy(pods, f"{pods.source}#models-of({nodes.source})")
    dropped = narrowed = 0
    for i, spec in enumerate(pods.gpu_spec):
        if not spec:
            continue
        keep = tuple(m for m in spec if m in present)
        if not keep:
            dropped += 1
        elif len(keep) < len(spec):
            narrowed += 1
        out.gpu_spec[i] = keep
    return out, dropped, narrowed


# ---------------------------------------------------------------------------------------------------- loading


def load_heldout(data_dir: str, workload: str, seed: int = VARIANT_SEED) -> tuple[NodeList, PodList, dict[str, Any]]:
    """(nodes, pods, info) of a held-out workload; ``data_dir`` holds ``openb/`` (and the spot node list).

    ``info`` says what was derived: the achieved multi-GPU share / constrained share, and for the spot cluster how
    many gpu_spec constraints were dropped or narrowed.
    """
    if not isinstance(workload, str) or workload not in HELDOUT_WORKLOADS:
        raise ValueError(f"workload: unknown held-out workload {workload!r} (known: {', '.join(HELDOUT_WORKLOADS)})")
    if not isinstance(data_dir, (str, os.PathLike)) or not os.path.isdir(os.path.join(data_dir, "openb")):
        raise FileNotFoundError(f"data_dir: {data_dir!r} has no openb/ folder")
    openb = os.path.join(os.fspath(data_dir), "openb")
    info: dict[str, Any] = {"workload": workload, "variant_seed": seed}
    if workload in SPOT_WORKLOADS:
        nodes = spot_node_list(os.path.join(data_dir, SPOT_NODE_LIST))
        base = load_pods(workload_path(openb, SPOT_WORKLOADS[workload]))
        pods, dropped, narrowed = restrict_gpu_spec(base, nodes)
        info.update(
            gpu_spec_dropped=dropped, gpu_spec_narrowed=narrowed, gpu_spec_pods=sum(1 for s in base.gpu_spec if s)
        )
        return nodes, pods, info
    nodes = load_nodes(node_list_path(openb))
    base = load_pods(workload_path(openb, "default"))
    if workload in MULTIGPU_WORKLOADS:
        pods = raise_multi_gpu_share(base, MULTIGPU_WORKLOADS[workload], seed)
        info.update(multi_gpu_share=multi_gpu_share(pods), source_share=multi_gpu_share(base))
    else:
        pods = constrain_gpu_types(base, nodes, GPUSPEC_WORKLOADS[workload], seed)
        info.update(constrained_share=constrained_share(pods))
    return nodes, pods, info


# ---------------------------------------------------------------------------------------------------- runner


@lru_cache(maxsize=2)
def _cached(data_dir: str, workload: str, seed: int) -> tuple[NodeList, PodList, dict[str, Any]]:
    return load_heldout(data_dir, workload, seed)


def _run_task(
    data_dir: str,
    workload: str,
    variant_seed: int,
    policy: str,
    seed: int,
    tie_order: str,
    policy_args: tuple[tuple[str, float], ...],
) -> float:
    from vcore.sim.gpu.replay import run_protocol

    nodes, pods, _ = _cached(data_dir, workload, variant_seed)
    return run_protocol(nodes, pods, policy, seed, tie_order=tie_order, **dict(policy_args)).final_alloc_ratio


def heldout_comparison(
    data_dir: str,
    workloads: Sequence[str] = HELDOUT_WORKLOADS,
    policies: Sequence[str] = ("fgd", "vcore"),
    seeds: Iterable[int] = range(42, 52),
    tie_orders: Sequence[str] = ("name",),
    *,
    variant_seed: int = VARIANT_SEED,
    jobs: int = 0,
    policy_args: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Mean final allocation ratio per (tie_order, workload, policy) over ``seeds``, protocol defaults.

    Returns ``{tie_order: {workload: {policy: {"mean": float, "finals": [per seed]}}}}``. ``policy_args`` are
    passed to :func:`~vcore.sim.gpu.replay.run_protocol` for the ``vcore`` policy only. ``jobs`` worker processes
    (spawn; 0 = number of CPUs, 1 = in this process).
    """
    from vcore.gpu.policies import native_policy_name

    workloads = list(workloads)
    for w in workloads:
        if w not in HELDOUT_WORKLOADS:
            raise ValueError(f"workloads: unknown held-out workload {w!r} (known: {', '.join(HELDOUT_WORKLOADS)})")
    pols = list(dict.fromkeys(native_policy_name(p) for p in policies))
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds: no seeds given")
    for t in tie_orders:
        if t not in ("name", "shuffled"):
            raise ValueError(f"tie_orders: must be 'name' or 'shuffled', got {t!r}")
    vargs = tuple(sorted((policy_args or {}).items()))
    data_dir = os.fspath(data_dir)
    # workload-major order, so that each worker's small load cache is hit
    tasks = [(w, p, s, t) for w in workloads for t in tie_orders for p in pols for s in seeds]
    args = [(data_dir, w, variant_seed, p, s, t, vargs if p == "vcore" else ()) for w, p, s, t in tasks]
    jobs = jobs if jobs and jobs > 0 else (os.cpu_count() or 1)
    if jobs <= 1:
        finals = [_run_task(*a) for a in args]
    else:
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(jobs, len(args)), mp_context=ctx) as ex:
            finals = list(ex.map(_run_task, *zip(*args), chunksize=max(1, len(seeds) // 2)))
    out: dict[str, Any] = {t: {w: {p: {"finals": []} for p in pols} for w in workloads} for t in tie_orders}
    for (w, p, _seed, t), f in zip(tasks, finals):
        out[t][w][p]["finals"].append(f)
    for t in out.values():
        for w in t.values():
            for d in w.values():
                d["mean"] = float(np.mean(d["finals"]))
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m vcore.sim.gpu.variants [DATA_DIR] [--policies fgd,vcore,best-fit] [--tie-orders name,shuffled]``."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m vcore.sim.gpu.variants", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "data_dir",
        nargs="?",
        default=os.path.join("..", "shared", "data"),
        help="folder with openb/ and alibaba-spot-gpu-v2026/ (default: ../shared/data)",
    )
    ap.add_argument("--workloads", default=",".join(HELDOUT_WORKLOADS))
    ap.add_argument("--policies", default="fgd,vcore,best-fit")
    ap.add_argument("--tie-orders", default="name,shuffled")
    ap.add_argument("--seeds", default="42-51")
    ap.add_argument("--variant-seed", type=int, default=VARIANT_SEED)
    ap.add_argument("--jobs", type=int, default=0)
    a = ap.parse_args(argv)
    from vcore.sim.gpu.cli import parse_seeds

    try:
        res = heldout_comparison(
            a.data_dir,
            a.workloads.split(","),
            a.policies.split(","),
            parse_seeds(a.seeds),
            a.tie_orders.split(","),
            variant_seed=a.variant_seed,
            jobs=a.jobs,
        )
    except (ValueError, FileNotFoundError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for t, by_w in res.items():
        pols = list(next(iter(by_w.values())))
        print(f"tie order {t}: mean GPU allocation ratio at 130 % arrived (%), seeds {a.seeds}")
        print(f"{'workload':<14}" + "".join(f"{p:>10}" for p in pols) + f"{'vcore-fgd':>11}")
        for w, d in by_w.items():
            row = f"{w:<14}" + "".join(f"{100 * d[p]['mean']:>10.2f}" for p in pols)
            if "vcore" in d and "fgd" in d:
                row += f"{100 * (d['vcore']['mean'] - d['fgd']['mean']):>+11.2f}"
            print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
