"""python -m vcore_kube.testenv up --dir DIR [--nodes K] | down --dir DIR | env --dir DIR"""

from __future__ import annotations

import argparse
import sys

from vcore_kube.testenv.build import BuildError
from vcore_kube.testenv.control_plane import ControlPlane, ControlPlaneError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vcore_kube.testenv",
                                     description="A real kube-apiserver and etcd on loopback for vcore-scheduler.")
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="build (first time) or reuse the binaries, start etcd and kube-apiserver")
    up.add_argument("--dir", required=True, help="folder for data, logs, keys and kubeconfigs")
    up.add_argument("--nodes", type=int, default=0, help="create this many synthetic Nodes")
    down = sub.add_parser("down", help="stop the control plane started in DIR")
    down.add_argument("--dir", required=True)
    args = parser.parse_args(argv)
    if args.command == "up" and args.nodes < 0:
        parser.error("--nodes must be >= 0")
    try:
        if args.command == "up":
            plane = ControlPlane.up(args.dir, nodes=args.nodes)
            print(f"kube-apiserver {plane.apiserver_url} ready (etcd {plane.etcd_url})")
            print(f"admin:           KUBECONFIG={plane.kubeconfig}")
            print(f"vcore-scheduler: --kubeconfig {plane.scheduler_kubeconfig}")
        else:
            ControlPlane.load(args.dir).down()
            print(f"stopped the control plane in {args.dir}")
    except (BuildError, ControlPlaneError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
