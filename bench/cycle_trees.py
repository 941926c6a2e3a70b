"""The gang cycle of test_gang_bench.py in several git trees, side by side in one run.

    python bench/cycle_trees.py 07d5dfa HEAD [--rounds 2] [--cycles 8]

Each tree runs the same workload (vcore.sim.gang: 2000 PodGroups of 1..64 pods, 4 queues, 5000 nodes) and reports
the CPU time of Scheduler.run_cycle on a fresh cluster, as a minimum and a median over ``--cycles`` cycles, with
the pods it placed. A commit is checked out in a git worktree under ~/.cache/vcore/trees/ and built in place
once. Rounds alternate between the trees, so a VM whose speed drifts during the run slows them alike.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TREES = Path.home() / ".cache" / "vcore" / "trees"

# Run in a child process per tree and round, with the tree's src first on the path.
_MEASURE = """
import json, sys, time
from vcore import Cluster, Scheduler
from vcore.sim.gang import gang_workload, load
workload = gang_workload(n_nodes=5000, n_jobs=2000, n_queues=4, seed=0)
seconds, placed = [], set()
for _ in range(int(sys.argv[1])):
    cluster = Cluster()
    load(cluster, workload)
    scheduler = Scheduler(cluster, seed=0)
    start = time.process_time()
    result = scheduler.run_cycle()
    seconds.append(time.process_time() - start)
    placed.add(len(result.bindings))
print(json.dumps({"seconds": seconds, "placed": sorted(placed)}))
"""


def tree_of(commit: str) -> Path:
    """A built checkout of ``commit`` (the working tree itself for ``.``)."""
    if commit == ".":
        return REPO
    sha = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--verify", f"{commit}^{{commit}}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    tree = TREES / sha[:12]
    if not tree.exists():
        TREES.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), sha], check=True)
    if not list((tree / "src" / "vcore" / "_native").glob("_core*.so")):
        print(f"building {commit} in {tree}", file=sys.stderr)
        subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-j", "2"], cwd=tree, check=True)
    return tree


def measure(tree: Path, cycles: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(cycles)], env=env, check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commits", nargs="+", help="commits to compare ('.' is the working tree as built)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cycles", type=int, default=8, help="fresh cycles per tree and round")
    args = parser.parse_args(argv)
    trees = {commit: tree_of(commit) for commit in args.commits}
    print(f"{'round':>5}  {'tree':<12} {'min ms':>8} {'median ms':>10}  placed")
    for round_ in range(1, args.rounds + 1):
        for commit, tree in trees.items():
            run = measure(tree, args.cycles)
            ms = [s * 1000 for s in run["seconds"]]
            print(f"{round_:>5}  {commit:<12} {min(ms):8.1f} {statistics.median(ms):10.1f}  {run['placed']}")


if __name__ == "__main__":
    main()
