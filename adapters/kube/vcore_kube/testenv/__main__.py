"""python -m vcore_kube.testenv up --dir DIR [--nodes K] | down --dir DIR | helm ARGS... | render-manifests [--check]"""

from __future__ import annotations

import argparse
import sys

from vcore_kube.testenv.build import BuildError
from vcore_kube.testenv.control_plane import ControlPlane, ControlPlaneError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m vcore_kube.testenv",
        description="A real kube-apiserver and etcd on loopback for vcore-scheduler.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="build (first time) or reuse the binaries, start etcd and kube-apiserver")
    up.add_argument("--dir", required=True, help="folder for data, logs, keys and kubeconfigs")
    up.add_argument("--nodes", type=int, default=0, help="create this many synthetic Nodes")
    down = sub.add_parser("down", help="stop the control plane started in DIR")
    down.add_argument("--dir", required=True)
    helm = sub.add_parser("helm", help="run the pinned helm (built the first time), e.g. `helm lint DIR`")
    helm.add_argument("args", nargs=argparse.REMAINDER)
    render = sub.add_parser(
        "render-manifests",
        help="write the plain manifests of the deploy chart (vcore-scheduler.yaml, ...) from the chart",
    )
    render.add_argument("--check", action="store_true", help="only say which are out of date (exit 1 if any)")
    args = parser.parse_args(argv)
    if args.command == "up" and args.nodes < 0:
        parser.error("--nodes must be >= 0")
    from vcore_kube.testenv import chart

    try:
        if args.command == "up":
            plane = ControlPlane.up(args.dir, nodes=args.nodes)
            print(f"kube-apiserver {plane.apiserver_url} ready (etcd {plane.etcd_url})")
            print(f"admin:           KUBECONFIG={plane.kubeconfig}")
            print(f"vcore-scheduler: --kubeconfig {plane.scheduler_kubeconfig}")
        elif args.command == "down":
            ControlPlane.load(args.dir).down()
            print(f"stopped the control plane in {args.dir}")
        elif args.command == "helm":
            print(chart.helm(*args.args), end="")
        else:
            stale = chart.render_manifests(check=args.check)
            verb = "out of date" if args.check else "written"
            print(f"{verb}: {', '.join(stale)}" if stale else "the plain manifests match the chart")
            return 1 if args.check and stale else 0
    except (BuildError, ControlPlaneError, chart.ChartError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
