"""Benchmark group (d): memory of the native state at 100k nodes, printed beside the time to build it.

Timed: ingest of 100,000 synthetic nodes (labels, taints, GPUs) into a fresh Cluster, plus one bound pod per node
(the dicts are generated before timing and before the RSS baseline is taken).
Reported per node:
  views      nbytes of the numpy views over the SoA arrays (allocatable, requested, non-zero requested,
             live mask) divided by the slot count: the dense, per-resource part
  native     Cluster.native_bytes (the core's own accounting: the arrays above at capacity, plus interned
             labels/taints, names, the name index and the per-node pod lists) per node
  rss        growth of the resident set across the build, per node (includes allocator slack and the Python
             side of bound pods), and peak RSS via getrusage. Both are measured in a fresh child process:
             in the bench process, memory freed by earlier groups is reused and hides the growth.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

from scenarios import background_bindings, ingest
from vcore.sim.synthetic import synthetic_nodes

GROUP = "memory 100k nodes"
N_NODES = 100_000


CHILD = """
import gc, json, sys
sys.path.insert(0, {bench!r})
from conftest import current_rss_bytes, peak_rss_mib
from scenarios import background_bindings, ingest
from vcore.sim.synthetic import synthetic_nodes
nodes = synthetic_nodes({n}, seed=0)
bindings = background_bindings(nodes)
gc.collect()
before, peak_before = current_rss_bytes(), peak_rss_mib()
cluster = ingest(nodes, bindings)
gc.collect()
print(json.dumps({{"grown": current_rss_bytes() - before, "peak_mib": peak_rss_mib(),
                  "peak_before_mib": peak_before, "native": cluster.native_bytes}}))
"""


def child_rss(n_nodes: int) -> dict:
    code = CHILD.format(bench=str(Path(__file__).resolve().parent), n=n_nodes)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"memory child failed:\n{out.stderr}"
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_memory_100k(benchmark, bench_report):
    benchmark.group = GROUP
    nodes = synthetic_nodes(N_NODES, seed=0)
    bindings = background_bindings(nodes)
    gc.collect()
    cluster = benchmark.pedantic(ingest, args=(nodes, bindings), rounds=1, warmup_rounds=0)
    child = child_rss(N_NODES)
    assert cluster.n_nodes == N_NODES
    n_slots = cluster.allocatable_matrix.shape[1]
    views = sum(
        v.nbytes
        for v in (
            cluster.allocatable_matrix,
            cluster.requested_matrix,
            cluster.nonzero_requested_matrix,
            cluster.live_mask,
        )
    )
    figures = {
        "resources": len(cluster.resource_names),
        "views_B/node": round(views / n_slots, 1),
        "native_B/node": round(cluster.native_bytes / N_NODES, 1),
        "rss_B/node": round(child["grown"] / N_NODES, 1),
        "peak_rss_MiB(child)": round(child["peak_mib"]),
        "peak_rss_MiB(before ingest)": round(child["peak_before_mib"]),
    }
    if benchmark.stats is not None:
        figures["objects_per_s"] = round(2 * N_NODES / benchmark.stats.stats.median)
        bench_report.add(benchmark, GROUP, "nodes + 1 pod/node", **figures)
