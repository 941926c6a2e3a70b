"""Benchmark group (d): memory of the native state at 100k nodes, printed beside the time to build it.

Timed: ingest of 100,000 synthetic nodes (labels, taints, GPUs) into a fresh Cluster, plus one bound pod per node
(the dicts are generated before timing and before the RSS baseline is taken).
Reported per node:
  views      nbytes of the numpy views over the SoA arrays (allocatable, requested, non-zero requested,
             live mask) divided by the slot count: the dense, per-resource part
  native     Cluster.native_bytes (the core's own accounting: the arrays above at capacity, plus interned
             labels/taints, names, the name index and the per-node pod lists) per node
  rss        growth of this process's resident set across the build, per node (includes allocator slack and
             the Python side of bound pods); peak RSS via getrusage
"""
from __future__ import annotations

import gc

from conftest import current_rss_bytes, peak_rss_mib
from scenarios import background_bindings, ingest
from vcore.synthetic import synthetic_nodes

GROUP = "memory 100k nodes"
N_NODES = 100_000


def test_memory_100k(benchmark, bench_report):
    benchmark.group = GROUP
    nodes = synthetic_nodes(N_NODES, seed=0)
    bindings = background_bindings(nodes)
    gc.collect()
    before = current_rss_bytes()
    cluster = benchmark.pedantic(ingest, args=(nodes, bindings), rounds=1, warmup_rounds=0)
    gc.collect()
    grown = current_rss_bytes() - before
    assert cluster.n_nodes == N_NODES
    n_slots = cluster.allocatable_matrix.shape[1]
    views = sum(v.nbytes for v in (cluster.allocatable_matrix, cluster.requested_matrix,
                                    cluster.nonzero_requested_matrix, cluster.live_mask))
    figures = {
        "resources": len(cluster.resource_names),
        "views_B/node": round(views / n_slots, 1),
        "native_B/node": round(cluster.native_bytes / N_NODES, 1),
        "rss_B/node": round(grown / N_NODES, 1),
        "peak_rss_MiB": round(peak_rss_mib()),
    }
    if benchmark.stats is not None:
        figures["objects_per_s"] = round(2 * N_NODES / benchmark.stats.stats.median)
        bench_report.add(benchmark, GROUP, "nodes + 1 pod/node", **figures)
