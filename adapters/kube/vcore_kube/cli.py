"""vcore-scheduler: place every pod with `schedulerName: vcore` (configurable) with vcore.

vcore-scheduler [--kubeconfig FILE] [--config FILE.yaml]     (in-cluster credentials without --kubeconfig)
vcore-scheduler --demo [--nodes N] [--pods M]
"""

from __future__ import annotations

import argparse
import logging
import sys

from vcore_kube.config import ConfigError, load_config, one_line, with_sharding


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="vcore-scheduler", description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: the in-cluster service account)")
    parser.add_argument(
        "--config",
        help="YAML configuration (schedulerName, profile, cyclePeriod, "
        "bindConcurrency, leaderElection, metricsAddress, ...)",
    )
    parser.add_argument("--identity", help="leader-election identity (default: hostname_random)")
    parser.add_argument(
        "--sharding-mode",
        choices=["none", "soft", "hard"],
        help="place only on this instance's NodeShard (hard), prefer it (soft), or everywhere "
        "(none); overrides the configuration's sharding.mode",
    )
    parser.add_argument("--shard", help="this instance's NodeShard name (sharding.shard)")
    parser.add_argument(
        "--role",
        choices=["scheduler", "sharder"],
        default="scheduler",
        help="sharder: run the sharding controller instead (--sharding-config)",
    )
    parser.add_argument("--sharding-config", help="--role sharder: its YAML (schedulerConfigs, shardSyncPeriod, ...)")
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    parser.add_argument(
        "--demo",
        action="store_true",
        help="start a test control plane with synthetic nodes, schedule a mixed workload on it and print a summary",
    )
    parser.add_argument("--nodes", type=int, default=200, help="--demo: synthetic nodes")
    parser.add_argument("--pods", type=int, default=2000, help="--demo: pods of the mixed workload")
    parser.add_argument("--dir", help="--demo: folder of the control plane (default: a temporary one)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.demo:
        if args.nodes < 1 or args.pods < 1:
            parser.error("--nodes and --pods must be >= 1")
        from vcore_kube.demo import run_demo

        return run_demo(nodes=args.nodes, pods=args.pods, directory=args.dir)
    if args.role == "sharder":
        from vcore_kube.sharder import run_sharder

        return run_sharder(args.kubeconfig, args.sharding_config, identity=args.identity)
    try:
        config = with_sharding(load_config(args.config), args.sharding_mode, args.shard)
    except ConfigError as e:
        print(f"vcore-scheduler: {one_line(str(e))}", file=sys.stderr)
        return 2
    from vcore_kube.kubeclient import KubeconfigError  # after the configuration's checks: the client import is slow
    from vcore_kube.process import SchedulerProcess

    try:
        process = SchedulerProcess(config, args.kubeconfig, identity=args.identity)
    except KubeconfigError as e:
        print(f"vcore-scheduler: {one_line(str(e))}", file=sys.stderr)
        return 2
    except OSError as e:  # the metrics address is taken, or not this machine's
        print(f"vcore-scheduler: metricsAddress: {e.strerror or e}", file=sys.stderr)
        return 2
    return process.run_until_signalled()


if __name__ == "__main__":
    sys.exit(main())
