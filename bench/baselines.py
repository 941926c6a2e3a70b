"""Baselines the benchmarks measure vcore against: the default profile in idiomatic numpy and in pure Python.

Both implement kube-scheduler's default profile restricted to vcore's plugins, exactly as vcore's native engine
is specified to (see shared/design/SCORING.md and kube-scheduler's plugin sources):

  filters  NodeUnschedulable, TaintToleration, NodeAffinity (nodeSelector + required terms), NodeResourcesFit
  scores   TaintToleration x3 (PreferNoSchedule taints, reverse-normalized), NodeAffinity x2 (preferred weights,
           normalized), NodeResourcesFit x1 (LeastAllocated cpu/memory, non-zero requests),
           NodeResourcesBalancedAllocation x1 (cpu/memory, plain requests)

Normalization runs over the feasible nodes, as in kube-scheduler, so only feasible entries of ``scores`` are
meaningful. The numpy version is what a competent engineer would write without a compiled core: labels and
taints interned once per cluster, one vectorized pass per plugin over all nodes, per-pod work in Python.

Inputs are the contract's flat spec dicts (``vcore._native._convert.node_spec`` / ``pod_spec``) and the
cluster's public views (allocatable, requested and non-zero requested matrices), read in place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

MAX_NODE_SCORE = 100
HARD_EFFECTS = ("NoSchedule", "NoExecute")
UNSCHEDULABLE_TAINT = ("node.kubernetes.io/unschedulable", "", "NoSchedule")
WEIGHTS = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 1}


# ---------------------------------------------------------------------------------------------------------------
# Shared Kubernetes predicates (per object, no node loops)


def tolerates(tolerations: list[tuple[str, str, str, str]], taint: tuple[str, str, str]) -> bool:
    """v1.Toleration.ToleratesTaint over a list: any toleration matches key, effect and (for Equal) value."""
    key, value, effect = taint
    for t_key, op, t_value, t_effect in tolerations:
        if t_effect and t_effect != effect:
            continue
        if t_key and t_key != key:
            continue
        if op == "Exists" or (op in ("Equal", "") and t_value == value):
            return True
    return False


def _parse_int64(text: str) -> int | None:
    try:
        return int(text, 10)
    except ValueError:
        return None


def expression_matches(labels: dict[str, str], key: str, op: str, values: list[str]) -> bool:
    """One NodeSelectorRequirement against a node's labels (k8s.io/component-helpers nodeaffinity)."""
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if not present:
            return False
        have, want = _parse_int64(labels[key]), _parse_int64(values[0])
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want
    raise ValueError(f"unknown operator {op!r}")


def term_matches(labels: dict[str, str], name: str, term: dict[str, Any]) -> bool:
    """A NodeSelectorTerm: all expressions and fields match; an empty term matches nothing."""
    if not term["expressions"] and not term["fields"]:
        return False
    for key, op, values in term["expressions"]:
        if not expression_matches(labels, key, op, values):
            return False
    for _field, op, values in term["fields"]:  # only metadata.name exists
        if (name in values) != (op == "In"):
            return False
    return True


def least_allocated(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def balanced(fractions: list[float]) -> int:
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = (sum((f - mean) ** 2 for f in fractions) / len(fractions)) ** 0.5
    else:
        std = 0.0
    return int((1 - std) * MAX_NODE_SCORE)


def default_normalize(raw: list[int] | np.ndarray, reverse: bool) -> Any:
    """framework/plugins/helper.DefaultNormalizeScore; works on lists (python) and arrays (numpy)."""
    if isinstance(raw, np.ndarray):
        top = int(raw.max()) if raw.size else 0
        if top == 0:
            return np.full_like(raw, MAX_NODE_SCORE) if reverse else raw.copy()
        out = MAX_NODE_SCORE * raw // top
        return MAX_NODE_SCORE - out if reverse else out
    top = max(raw, default=0)
    if top == 0:
        return [MAX_NODE_SCORE] * len(raw) if reverse else list(raw)
    out = [MAX_NODE_SCORE * s // top for s in raw]
    return [MAX_NODE_SCORE - s for s in out] if reverse else out


# ---------------------------------------------------------------------------------------------------------------
# The cluster as the baselines see it


@dataclass
class NodeTable:
    """Per-node data for the baselines, indexed by the cluster's node slots (dead slots are never feasible)."""

    n_slots: int
    live: np.ndarray  # bool[n_slots]
    names: list[str | None]
    name_index: dict[str, int]
    labels: list[dict[str, str] | None]
    taints: list[list[tuple[str, str, str]]]
    unschedulable: np.ndarray  # bool[n_slots]
    # Interned forms for numpy.
    taint_vocab: list[tuple[str, str, str]]
    taint_rows: np.ndarray  # bool[n_taints, n_slots]
    label_codes: dict[str, np.ndarray]  # key -> int32[n_slots], -1 where absent
    label_vocab: dict[str, dict[str, int]]  # key -> value -> code
    alloc: dict[str, np.ndarray]  # resource -> int64[n_slots] (live views into the cluster)
    req: dict[str, np.ndarray]
    nonzero_cpu: np.ndarray  # int64[n_slots], non-zero semantics (LeastAllocated input)
    nonzero_mem: np.ndarray

    @classmethod
    def build(cls, cluster: Any, node_specs: list[dict[str, Any]]) -> NodeTable:
        n_slots = int(cluster.allocatable_matrix.shape[1])
        live = np.zeros(n_slots, dtype=bool)
        names: list[str | None] = [None] * n_slots
        labels: list[dict[str, str] | None] = [None] * n_slots
        taints: list[list[tuple[str, str, str]]] = [[] for _ in range(n_slots)]
        unschedulable = np.zeros(n_slots, dtype=bool)
        taint_vocab: dict[tuple[str, str, str], int] = {}
        label_vocab: dict[str, dict[str, int]] = {}
        cells: list[tuple[int, int]] = []
        label_cells: dict[str, tuple[list[int], list[int]]] = {}
        for spec in node_specs:
            i = cluster.node_index(spec["name"])
            live[i] = True
            names[i] = spec["name"]
            labels[i] = dict(spec["labels"])
            taints[i] = [tuple(t) for t in spec["taints"]]
            unschedulable[i] = spec["unschedulable"]
            for t in taints[i]:
                cells.append((taint_vocab.setdefault(t, len(taint_vocab)), i))
            for k, v in spec["labels"]:
                vocab = label_vocab.setdefault(k, {})
                idx, codes = label_cells.setdefault(k, ([], []))
                idx.append(i)
                codes.append(vocab.setdefault(v, len(vocab)))
        taint_rows = np.zeros((len(taint_vocab), n_slots), dtype=bool)
        for t, i in cells:
            taint_rows[t, i] = True
        label_codes = {}
        for k, (idx, codes) in label_cells.items():
            row = np.full(n_slots, -1, dtype=np.int32)
            row[np.asarray(idx)] = np.asarray(codes, dtype=np.int32)
            label_codes[k] = row
        resources = {r for s in node_specs for r in s["allocatable"]} | {"cpu", "memory", "pods"}
        alloc, req = {}, {}
        for r in sorted(resources):
            if r in cluster.resource_names:
                alloc[r] = cluster.allocatable(r)
                req[r] = cluster.requested(r)
        name_index = {n: i for i, n in enumerate(names) if n is not None}
        nonzero = cluster.nonzero_requested_matrix
        return cls(
            n_slots,
            live,
            names,
            name_index,
            labels,
            taints,
            unschedulable,
            list(taint_vocab),
            taint_rows,
            label_codes,
            label_vocab,
            alloc,
            req,
            nonzero[0],
            nonzero[1],
        )

    def resource(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        zero = np.zeros(self.n_slots, dtype=np.int64)
        return self.alloc.get(name, zero), self.req.get(name, zero)


# ---------------------------------------------------------------------------------------------------------------
# numpy


def _np_expression(table: NodeTable, key: str, op: str, values: list[str]) -> np.ndarray:
    codes = table.label_codes.get(key)
    if codes is None:
        codes = np.full(table.n_slots, -1, dtype=np.int32)
    vocab = table.label_vocab.get(key, {})
    if op in ("In", "NotIn"):
        wanted = [vocab[v] for v in values if v in vocab]
        hit = np.isin(codes, wanted) if wanted else np.zeros(table.n_slots, dtype=bool)
        return hit if op == "In" else ~hit
    if op == "Exists":
        return codes >= 0
    if op == "DoesNotExist":
        return codes < 0
    # Gt/Lt: compare per distinct value (few), then gather by code.
    want = _parse_int64(values[0])
    ok = np.zeros(len(vocab) + 1, dtype=bool)  # last entry is "absent" (code -1)
    if want is not None:
        for v, c in vocab.items():
            have = _parse_int64(v)
            ok[c] = have is not None and (have > want if op == "Gt" else have < want)
    return ok[codes]


def _np_term(table: NodeTable, term: dict[str, Any]) -> np.ndarray:
    if not term["expressions"] and not term["fields"]:
        return np.zeros(table.n_slots, dtype=bool)
    m = np.ones(table.n_slots, dtype=bool)
    for key, op, values in term["expressions"]:
        m &= _np_expression(table, key, op, values)
    for _field, op, values in term["fields"]:
        hit = np.zeros(table.n_slots, dtype=bool)
        hit[[table.name_index[v] for v in values if v in table.name_index]] = True
        m &= hit if op == "In" else ~hit
    return m


def numpy_filter(table: NodeTable, pod: dict[str, Any]) -> np.ndarray:
    """Feasibility mask over all slots for one pod."""
    tol = pod["tolerations"]
    mask = table.live.copy()
    if not tolerates(tol, UNSCHEDULABLE_TAINT):
        mask &= ~table.unschedulable
    bad = [t for t, taint in enumerate(table.taint_vocab) if taint[2] in HARD_EFFECTS and not tolerates(tol, taint)]
    if bad:
        mask &= ~table.taint_rows[bad].any(axis=0)
    for key, value in pod["node_selector"]:
        mask &= _np_expression(table, key, "In", [value])
    if pod["required_terms"] is not None:
        any_term = np.zeros(table.n_slots, dtype=bool)
        for term in pod["required_terms"]:
            any_term |= _np_term(table, term)
        mask &= any_term
    alloc, req = table.resource("pods")
    mask &= req + 1 <= alloc
    for r, amount in pod["requests"].items():
        if amount > 0:
            alloc, req = table.resource(r)
            mask &= req + amount <= alloc
    return mask


def numpy_scores(table: NodeTable, pod: dict[str, Any], feasible_idx: np.ndarray) -> np.ndarray:
    """Weighted default-profile score of the nodes in ``feasible_idx`` (int64, same order)."""
    tol = [t for t in pod["tolerations"] if t[3] in ("", "PreferNoSchedule")]
    soft = [
        t for t, taint in enumerate(table.taint_vocab) if taint[2] == "PreferNoSchedule" and not tolerates(tol, taint)
    ]
    if soft:
        intolerable = table.taint_rows[soft][:, feasible_idx].sum(axis=0, dtype=np.int64)
    else:
        intolerable = np.zeros(len(feasible_idx), dtype=np.int64)
    taint_score = default_normalize(intolerable, reverse=True)

    affinity = np.zeros(len(feasible_idx), dtype=np.int64)
    for weight, term in pod["preferred_terms"]:
        affinity += weight * _np_term(table, term)[feasible_idx]
    affinity_score = default_normalize(affinity, reverse=False)

    cpu_alloc, cpu_req = (a[feasible_idx] for a in table.resource("cpu"))
    mem_alloc, mem_req = (a[feasible_idx] for a in table.resource("memory"))
    cpu_nz, mem_nz = table.nonzero_cpu[feasible_idx], table.nonzero_mem[feasible_idx]
    fit = np.zeros(len(feasible_idx), dtype=np.int64)
    weight_sum = np.zeros(len(feasible_idx), dtype=np.int64)
    fractions = []
    for alloc, req, node_nz, nonzero, plain in (
        (cpu_alloc, cpu_req, cpu_nz, pod["nonzero_cpu_milli"], pod["requests"].get("cpu", 0)),
        (mem_alloc, mem_req, mem_nz, pod["nonzero_mem_bytes"], pod["requests"].get("memory", 0)),
    ):
        used = node_nz + nonzero  # LeastAllocated: non-zero semantics; BalancedAllocation below: plain requests
        has = alloc > 0
        safe = np.where(has, alloc, 1)
        s = np.where(has & (used <= alloc), (alloc - used) * MAX_NODE_SCORE // safe, 0)
        fit += s
        weight_sum += has
        f = np.minimum((req + plain) / safe, 1.0)
        fractions.append(np.where(has, f, np.nan))
    fit = np.where(weight_sum > 0, fit // np.maximum(weight_sum, 1), 0)
    f0, f1 = fractions
    both = ~np.isnan(f0) & ~np.isnan(f1)
    std = np.where(both, np.abs((f0 - f1) / 2), 0.0)
    bal = ((1 - std) * MAX_NODE_SCORE).astype(np.int64)

    return (
        WEIGHTS["TaintToleration"] * taint_score
        + WEIGHTS["NodeAffinity"] * affinity_score
        + WEIGHTS["NodeResourcesFit"] * fit
        + WEIGHTS["NodeResourcesBalancedAllocation"] * bal
    )


def numpy_evaluate(table: NodeTable, pod: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(feasible_mask bool[n_slots], scores int64[n_slots]); scores of infeasible slots are 0."""
    mask = numpy_filter(table, pod)
    idx = np.flatnonzero(mask)
    scores = np.zeros(table.n_slots, dtype=np.int64)
    if idx.size:
        scores[idx] = numpy_scores(table, pod, idx)
    return mask, scores


# ---------------------------------------------------------------------------------------------------------------
# pure Python (one loop over nodes, as a scheduler without numpy would do it)


def python_evaluate(table: NodeTable, pod: dict[str, Any]) -> tuple[list[bool], list[int]]:
    tol = pod["tolerations"]
    soft_tol = [t for t in tol if t[3] in ("", "PreferNoSchedule")]
    pods_alloc, pods_req = (a.tolist() for a in table.resource("pods"))
    wanted = [(r, a, *(x.tolist() for x in table.resource(r))) for r, a in pod["requests"].items() if a > 0]
    cpu_alloc, cpu_req = (a.tolist() for a in table.resource("cpu"))
    mem_alloc, mem_req = (a.tolist() for a in table.resource("memory"))
    cpu_nz, mem_nz = table.nonzero_cpu.tolist(), table.nonzero_mem.tolist()
    feasible = [False] * table.n_slots
    order, raw_taint, raw_aff, fit_bal = [], [], [], []
    for i in range(table.n_slots):
        labels = table.labels[i]
        if labels is None:
            continue
        if table.unschedulable[i] and not tolerates(tol, UNSCHEDULABLE_TAINT):
            continue
        if any(t[2] in HARD_EFFECTS and not tolerates(tol, t) for t in table.taints[i]):
            continue
        if any(labels.get(k) != v for k, v in pod["node_selector"]):
            continue
        if pod["required_terms"] is not None and not any(
            term_matches(labels, table.names[i], t) for t in pod["required_terms"]
        ):
            continue
        if pods_req[i] + 1 > pods_alloc[i]:
            continue
        if any(req[i] + a > alloc[i] for _r, a, alloc, req in wanted):
            continue
        feasible[i] = True
        order.append(i)
        raw_taint.append(sum(1 for t in table.taints[i] if t[2] == "PreferNoSchedule" and not tolerates(soft_tol, t)))
        raw_aff.append(sum(w for w, term in pod["preferred_terms"] if term_matches(labels, table.names[i], term)))
        total = weights = 0
        fractions = []
        for alloc, req, node_nz, nonzero, plain in (
            (cpu_alloc[i], cpu_req[i], cpu_nz[i], pod["nonzero_cpu_milli"], pod["requests"].get("cpu", 0)),
            (mem_alloc[i], mem_req[i], mem_nz[i], pod["nonzero_mem_bytes"], pod["requests"].get("memory", 0)),
        ):
            if alloc == 0:
                continue
            total += least_allocated(node_nz + nonzero, alloc)
            weights += 1
            fractions.append(min((req + plain) / alloc, 1.0))
        fit_bal.append((total // weights if weights else 0) + balanced(fractions))
    scores = [0] * table.n_slots
    taint_score = default_normalize(raw_taint, reverse=True)
    aff_score = default_normalize(raw_aff, reverse=False)
    for j, i in enumerate(order):
        scores[i] = WEIGHTS["TaintToleration"] * taint_score[j] + WEIGHTS["NodeAffinity"] * aff_score[j] + fit_bal[j]
    return feasible, scores


# ---------------------------------------------------------------------------------------------------------------
# numpy scheduling loop (SchedulingBasic baseline)


def adaptive_nodes_to_find(n_nodes: int, percentage: int = 0) -> int:
    """kube-scheduler's numFeasibleNodesToFind with percentageOfNodesToScore (0 = adaptive)."""
    if n_nodes < 100 or percentage >= 100:
        return n_nodes
    if percentage <= 0:
        percentage = max(5, 50 - n_nodes // 125)
    return max(100, n_nodes * percentage // 100)


def numpy_schedule_basic(
    alloc: dict[str, np.ndarray], req: dict[str, np.ndarray], pod_requests: dict[str, int], n_pods: int, seed: int = 0
) -> int:
    """Place ``n_pods`` identical pods (explicit cpu/memory requests) on untainted, unlabeled nodes.

    Per pod, as kube-scheduler: fit filter over nodes in rotating order until enough feasible nodes are found,
    LeastAllocated + BalancedAllocation over those (TaintToleration and NodeAffinity are constant on such a
    cluster), highest score wins with a seeded random tie-break, then the pod's requests are added to the node.
    ``req`` is modified in place (its own arrays, not the cluster's views). Returns the number placed.
    """
    rng = np.random.default_rng(seed)
    n = len(alloc["cpu"])
    to_find = adaptive_nodes_to_find(n)
    start = 0
    placed = 0
    cpu, mem = pod_requests.get("cpu", 0), pod_requests.get("memory", 0)
    for _ in range(n_pods):
        order = np.roll(np.arange(n), -start)
        fits = req["pods"][order] + 1 <= alloc["pods"][order]
        for r, amount in pod_requests.items():
            fits &= req[r][order] + amount <= alloc[r][order]
        feasible_pos = np.flatnonzero(fits)
        if feasible_pos.size == 0:
            start = (start + n) % n
            continue
        chosen_pos = feasible_pos[:to_find]
        processed = int(chosen_pos[-1]) + 1 if feasible_pos.size >= to_find else n
        start = (start + processed) % n
        idx = order[chosen_pos]
        ca, ma = alloc["cpu"][idx], alloc["memory"][idx]
        cu, mu = req["cpu"][idx] + cpu, req["memory"][idx] + mem
        fit = (
            np.where(cu <= ca, (ca - cu) * MAX_NODE_SCORE // ca, 0)
            + np.where(mu <= ma, (ma - mu) * MAX_NODE_SCORE // ma, 0)
        ) // 2
        std = np.abs((np.minimum(cu / ca, 1.0) - np.minimum(mu / ma, 1.0)) / 2)
        score = fit + ((1 - std) * MAX_NODE_SCORE).astype(np.int64)
        best = np.flatnonzero(score == score.max())
        node = idx[best[rng.integers(best.size)]]
        for r, amount in pod_requests.items():
            req[r][node] += amount
        req["pods"][node] += 1
        placed += 1
    return placed
