"""The ``vcore`` command line (console script ``vcore``, also ``python -m vcore``).

Commands:

  vcore simulate [--nodes N] [--pods M] [--seed S] [--profile PATH] [--json]
      Generate a synthetic cluster (vcore.sim.synthetic), ingest it, place every pod with one Scheduler.schedule()
      call (vcore.sim.pods), and report throughput plus why the pending pods did not fit.

  vcore simulate --scenario gang [--nodes N] [--jobs J] [--queues Q] [--seed S] [--cycle PATH] [--json]
      A synthetic batch workload of Volcano PodGroups over weighted queues (vcore.sim.gang), one scheduling
      cycle (Scheduler.run_cycle): jobs Running, pods placed, cycle time and queue shares.

  vcore simulate --scenario topology [--gangs G] [--seed S] [--policy P ...] [--plot FILE.png] [--json]
      A stream of G mixed gangs (8 to 1024 pods of 1-8 GPUs, soft network topology) arriving at and leaving the
      4096-node leaf / spine / core tree (vcore.sim.topology_stream), one run_cycle() per arrival, per policy
      (native, cpsat-0.1, cpsat-1, unaware by default): gangs placed, leaves and spines spanned per gang, GPUs
      stranded on partly used nodes; --plot draws both.

  vcore simulate --scenario agent [--nodes N] [--jobs J] [--agents A] [--rate R] [--seed S] [--json]
      The gang cycle with a burst of A agent pods arriving at R pods/s (vcore.sim.agent), placed between the
      cycle's jobs as the adapter's fast path places them: wait from arrival to placement (p50/p99/max), the
      cycle's time beside the cycle alone, and the checks (no node over-committed, no partial gang).

  vcore simulate --trace-dir DIR [--workload W] [--policy P ...] [--seeds 42-51] [--json] [--plot FILE.png]
      Replay an openb GPU trace with the FGD paper's protocol (vcore.sim.gpu.cli, which owns these options; this
      module only wires them in and dispatches to it).

Exit codes: 0 success, 1 runtime failure, 2 bad usage (argparse convention).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from vcore.sim.gpu import cli as trace_cli

if TYPE_CHECKING:
    from vcore.sim.pods import PodsScenarioResult

__all__ = ["build_parser", "main"]

PROG = "vcore"


def _int_at_least(minimum: int, what: str) -> Callable[[str], int]:
    """An argparse ``type`` accepting integers >= ``minimum`` with a message that says what was wrong."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {what}, got {value}")
        return value

    return parse


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text}")
    return value


def _existing_file(text: str) -> str:
    if not os.path.isfile(text):
        raise argparse.ArgumentTypeError(f"no such file: {text!r}")
    return text


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("vcore")
    except PackageNotFoundError:  # running from a source tree via PYTHONPATH
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    """The full ``vcore`` argument parser (exposed for tests and for docs generation)."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="vcore: a compiled scheduling core with kube-scheduler semantics.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    sim = commands.add_parser(
        "simulate",
        help="schedule a synthetic cluster once and report throughput and pending reasons",
        description="Generate a deterministic synthetic cluster, ingest it, place every pod with one "
        "Scheduler.schedule() call, and report pods/s and why pending pods did not fit.",
    )
    sim.add_argument(
        "--nodes",
        type=_int_at_least(1, "a positive integer"),
        help="number of nodes (default: 1000; 5000 with --scenario gang or agent)",
    )
    sim.add_argument(
        "--pods",
        type=_int_at_least(0, "a non-negative integer"),
        default=5000,
        help="number of pods to schedule (default: %(default)s)",
    )
    sim.add_argument(
        "--seed",
        type=_int_at_least(0, "a non-negative integer"),
        default=0,
        help="seed of the generator and of the scheduler's tie-breaking (default: %(default)s)",
    )
    sim.add_argument(
        "--profile",
        type=_existing_file,
        metavar="PATH",
        help="scheduler profile (YAML, one KubeSchedulerConfiguration profile); default profile if omitted",
    )
    sim.add_argument("--json", action="store_true", help="print one JSON object instead of a report")
    sim.add_argument(
        "--scenario",
        choices=("pods", "gang", "topology", "agent"),
        default="pods",
        help="pods: one schedule() call over synthetic pods (default); gang: one run_cycle() over "
        "synthetic PodGroups and queues; topology: a stream of gangs on a 4096-node network tree, "
        "per placement policy; agent: the gang cycle with a burst of agent pods placed between "
        "its jobs",
    )
    sim.add_argument(
        "--gangs",
        type=_int_at_least(1, "a positive integer"),
        default=100,
        help="--scenario topology: number of gangs in the stream (default: %(default)s)",
    )
    sim.add_argument(
        "--policy",
        action="append",
        default=None,
        help="placement policy, repeatable; --scenario topology: native, cpsat-<seconds>, unaware "
        "(default: native, cpsat-0.1, cpsat-1, unaware); trace replay: see below",
    )
    sim.add_argument(
        "--plot",
        default=None,
        metavar="FILE.png",
        help="--scenario topology: plot domains spanned per gang and GPUs stranded; trace replay: the "
        "allocation curves",
    )
    sim.add_argument(
        "--jobs",
        type=_int_at_least(0, "a non-negative integer"),
        default=2000,
        help="--scenario gang or agent: number of PodGroups (default: %(default)s)",
    )
    sim.add_argument(
        "--queues",
        type=_int_at_least(1, "a positive integer"),
        default=4,
        help="--scenario gang: number of weighted queues (default: %(default)s)",
    )
    sim.add_argument(
        "--cycle",
        type=_existing_file,
        metavar="PATH",
        help="--scenario gang: the cycle configuration (volcano-scheduler.conf YAML); Volcano's default if omitted",
    )
    sim.add_argument(
        "--agents",
        type=_int_at_least(1, "a positive integer"),
        default=500,
        help="--scenario agent: number of agent pods in the burst (default: %(default)s)",
    )
    sim.add_argument(
        "--rate",
        type=_positive_float,
        default=1000.0,
        help="--scenario agent: agent pods arriving per second (default: %(default)s)",
    )

    trace_cli.add_trace_arguments(sim)
    sim.set_defaults(handler=_run_simulate)
    return parser


def _format_report(result: PodsScenarioResult, seed: int, profile: str | None) -> str:
    lines = [
        f"vcore simulate: {result.nodes:,} nodes, {result.pods:,} pods (seed {seed}, profile {profile or 'default'})",
        f"  ingest      {result.nodes:,} nodes in {result.ingest_seconds * 1e3:,.1f} ms"
        + (f" = {result.nodes / result.ingest_seconds:,.0f} nodes/s" if result.ingest_seconds > 0 else ""),
        f"  schedule    {result.pods:,} pods in {result.schedule_seconds * 1e3:,.1f} ms "
        f"= {result.pods_per_second:,.0f} pods/s",
    ]
    share = 100.0 * result.scheduled / result.pods if result.pods else 100.0
    lines.append(f"  scheduled   {result.scheduled:,} / {result.pods:,} ({share:.1f}%)")
    if result.unscheduled:
        lines.append(f"  pending     {result.unscheduled:,} pods; reasons (pods affected):")
        width = max(len(f"{n:,}") for n in result.reasons.values()) if result.reasons else 1
        for reason, n in result.reasons.items():
            lines.append(f"    {n:>{width},}  {reason}")
    return "\n".join(lines)


def _run_simulate(args: argparse.Namespace) -> int:
    if args.trace_dir:
        return int(trace_cli.run_trace(args))

    from vcore.errors import VCoreError
    from vcore.sim.pods import run_pods_scenario

    if args.scenario == "gang":
        return _run_gang(args)
    if args.scenario == "topology":
        return _run_topology(args)
    if args.scenario == "agent":
        return _run_agent(args)
    try:
        result = run_pods_scenario(n_nodes=args.nodes or 1000, n_pods=args.pods, seed=args.seed, profile=args.profile)
    except (VCoreError, ValueError, TypeError) as exc:
        # Bad profile contents and the like: the user's input, so a one-line message, not a traceback.
        print(f"{PROG} simulate: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        print(_format_report(result, args.seed, args.profile))
    return 0


class _Result(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


R = TypeVar("R", bound=_Result)


def _scenario(run: Callable[..., R], args: argparse.Namespace, **kwargs: Any) -> R | None:
    """Run a scenario; its result (printed as JSON with --json), or None after a one-line error (bad input)."""
    from vcore.errors import VCoreError

    try:
        result = run(**kwargs)
    except (VCoreError, ValueError, TypeError) as exc:
        print(f"{PROG} simulate: error: {exc}", file=sys.stderr)
        return None
    if args.json:
        print(json.dumps(result.to_dict()))
    return result


def _run_gang(args: argparse.Namespace) -> int:
    from vcore.sim.gang import run_gang_scenario

    result = _scenario(
        run_gang_scenario,
        args,
        n_nodes=args.nodes or 5000,
        n_jobs=args.jobs,
        n_queues=args.queues,
        seed=args.seed,
        cycle=args.cycle,
    )
    if result is None or args.json:
        return 2 if result is None else 0
    print(
        f"vcore simulate --scenario gang: {result.nodes:,} nodes, {result.jobs:,} jobs, {result.pods:,} pods "
        f"(seed {args.seed}, cycle {args.cycle or 'Volcano default'})"
    )
    print(f"  ingest      {result.ingest_seconds:.2f} s")
    print(f"  cycle       {result.cycle_seconds * 1e3:,.1f} ms")
    print(f"  jobs        {result.jobs_running:,} Running; phases {result.phases}")
    print(f"  pods placed {result.pods_placed:,} / {result.pods:,}")
    print("  queue  share  jobs running/pending  allocated cpu / deserved cpu")
    for name, q in result.queues.items():
        print(
            f"  {name:<6} {q['share']:5.2f}  {q['jobs_running']:>5}/{q['jobs_pending']:<5}          "
            f"{q['allocated'].get('cpu', 0) / 1000:,.0f} / {q['deserved'].get('cpu', 0) / 1000:,.0f}"
        )
    return 0


def _run_agent(args: argparse.Namespace) -> int:
    from vcore.sim.agent import run_agent_scenario

    r = _scenario(
        run_agent_scenario,
        args,
        n_nodes=args.nodes or 5000,
        n_jobs=args.jobs,
        n_agents=args.agents,
        rate=args.rate,
        seed=args.seed,
        cycle=args.cycle,
    )
    if r is None:
        return 2
    if args.json:
        return 0 if r.checks_passed else 1
    print(
        f"vcore simulate --scenario agent: {r.nodes:,} nodes, {r.jobs:,} jobs, {r.agents:,} agent pods at "
        f"{r.rate:,.0f}/s (seed {args.seed})"
    )
    print(
        f"  agents      {r.agents_placed:,} placed in {r.micro_batches} micro-batches "
        f"({r.in_cycle_batches} between the cycle's jobs)"
    )
    print(
        f"  wait        arrival to placement p50 {r.wait_p50_ms:.2f} ms, p99 {r.wait_p99_ms:.2f} ms, "
        f"max {r.wait_max_ms:.2f} ms"
    )
    print(
        f"  cycle       {r.cycle_seconds * 1e3:,.1f} ms with the burst, {r.cycle_alone_seconds * 1e3:,.1f} ms alone; "
        f"{r.pods_placed:,} pods placed ({r.pods_placed_alone:,} alone), {r.jobs_running:,} jobs Running"
    )
    print(f"  checks      {r.overcommitted_nodes} nodes over-committed, {r.partial_gangs} gangs below minMember")
    return 0 if r.checks_passed else 1


def _run_topology(args: argparse.Namespace) -> int:
    from vcore.sim import topology_stream as ts

    policies = tuple(args.policy or ts.POLICIES)
    seed = args.seed
    report = sys.stderr if args.json else sys.stdout
    try:
        results = ts.run_scenario(
            args.gangs, seed, policies, progress=lambda p: print(f"  running {p} ...", file=sys.stderr, flush=True)
        )
    except ValueError as exc:
        print(f"{PROG} simulate: error: {exc}", file=sys.stderr)
        return 2
    summaries = {p: r.summary() for p, r in results.items()}
    if args.plot:
        ts.plot(results, args.plot)
    if args.json:
        print(json.dumps({"gangs": args.gangs, "seed": seed, "nodes": 4096, "policies": summaries}))
        return 0
    print(
        f"vcore simulate --scenario topology: {args.gangs} gangs (8-1024 pods, 1-8 GPUs each, soft network "
        f"topology) on 4,096 nodes (8 spines x 16 leaves x 32 nodes x 8 GPUs), seed {seed}",
        file=report,
    )
    print(
        f"  {'policy':<10} {'placed':>6} {'leaves/gang':>11} {'spines/gang':>11} {'multi-spine':>11} "
        f"{'stranded GPUs mean':>18} {'max':>6} {'ms/cycle':>9}",
        file=report,
    )
    for p, s in summaries.items():
        print(
            f"  {p:<10} {s['placed']:>6} {s['leaves_per_gang']:>11.2f} {s['spines_per_gang']:>11.2f} "
            f"{s['multi_spine_gangs']:>11} {s['stranded_gpus_mean']:>18.1f} {s['stranded_gpus_max']:>6} "
            f"{s['seconds_per_gang'] * 1e3:>9.1f}",
            file=report,
        )
    if args.plot:
        print(f"  plot written to {args.plot}", file=report)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``vcore`` console script; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.handler(args))
    except BrokenPipeError:
        # `vcore simulate | head`: the reader left; exit quietly instead of a traceback (Python docs recipe).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
