"""The native volume plugins against the plain-Python reference (reference.py) on seeded random clusters: what every
node says about a pod (or the pod-wide rejection), and, for a batch placed by schedule(), that each pod went to a
node the reference accepts given the pods placed before it, with the PVs and claims the reference's Reserve would
assume there."""

from __future__ import annotations

import random

import pytest

import vcore
from tests.volumes import builders as B, reference as R
from tests.volumes.harness import Objects, Outcome, cluster_of, only, outcome

PLUGINS = list(R.ORDER)
ZONES = ("z1", "z2", "z3")
DRIVERS = ("ebs.csi.aws.com", "csi.example.com", "other.csi.io")
SIZES = ("1Gi", "2Gi", "5Gi", "10Gi", "500Mi", "1500Mi")


class Gen:
    """A random cluster of storage objects, bound pods and pending pods, from one seed."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        r = self.r
        self.nodes = []
        for i in range(r.randint(2, 6)):
            labels = {"topology.kubernetes.io/zone": r.choice(ZONES)} if r.random() < 0.8 else {}
            if r.random() < 0.3:
                labels["failure-domain.beta.kubernetes.io/zone"] = labels.get("topology.kubernetes.io/zone", "z1")
            self.nodes.append(B.node(f"n{i}", labels))
        self.names = [n["metadata"]["name"] for n in self.nodes]
        self.classes = [
            B.storage_class("local", "WaitForFirstConsumer", "kubernetes.io/no-provisioner"),
            B.storage_class(
                "dyn",
                "WaitForFirstConsumer",
                DRIVERS[1],
                allowed_topologies=([{"topology.kubernetes.io/zone": ["z1", "z2"]}] if r.random() < 0.5 else None),
            ),
            B.storage_class("cap", "WaitForFirstConsumer", DRIVERS[2]),
            B.storage_class("fast", "Immediate", DRIVERS[0]),
            B.storage_class("nomode", None, DRIVERS[0]),
        ]
        self.drivers = [B.csi_driver(DRIVERS[2], r.random() < 0.7), B.csi_driver(DRIVERS[1], False)]
        self.capacities = [
            B.capacity(f"cap-{n}", "cap", {"matchLabels": {B.HOSTNAME: n}}, r.choice(SIZES))
            for n in self.names
            if r.random() < 0.6
        ]
        self.csi_nodes = []
        for n in self.names:
            if r.random() < 0.7:
                limits = {d: r.randint(0, 4) for d in DRIVERS if r.random() < 0.7}
                migrated = "kubernetes.io/aws-ebs" if r.random() < 0.3 else None
                self.csi_nodes.append(B.csi_node(n, limits, migrated))
        self.pvs, self.pvcs = [], []
        for i in range(r.randint(0, 14)):
            self.pvs.append(self.random_pv(f"pv{i}"))
        self.n_claims = r.randint(2, 12)
        for i in range(self.n_claims):
            self.pvcs.append(self.random_pvc(f"c{i}"))
        self.bound = []
        for i in range(r.randint(0, 6)):
            self.bound.append((self.random_pod(f"b{i}"), r.choice(self.names)))
        self.pending = [self.random_pod(f"p{i}") for i in range(8)]
        self.attachments = [
            B.attachment(f"va{i}", r.choice(self.names), r.choice(DRIVERS), f"pv{r.randint(0, 12)}")
            for i in range(r.randint(0, 3))
        ]

    def random_pv(self, name: str) -> dict:
        r = self.r
        source = (
            {"csi": {"driver": r.choice(DRIVERS), "volumeHandle": f"h-{name}"}}
            if r.random() < 0.8
            else {"awsElasticBlockStore": {"volumeID": f"vol-{name}"}}
        )
        affinity = None
        choice = r.random()
        if choice < 0.5:
            affinity = B.node_affinity(B.HOSTNAME, r.choice(self.names))
        elif choice < 0.7:
            affinity = B.node_affinity("topology.kubernetes.io/zone", *r.sample(ZONES, r.randint(1, 2)))
        labels = {}
        if r.random() < 0.3:
            labels["topology.kubernetes.io/zone"] = "__".join(r.sample(ZONES, r.randint(1, 2)))
        if r.random() < 0.3:
            labels["tier"] = r.choice(("gold", "silver"))
        claim = None
        if r.random() < 0.15:
            claim = {
                "metadata": {"namespace": "default", "name": f"c{r.randint(0, 11)}", "uid": r.choice(("", "uid-x"))}
            }
        modes = (
            ("ReadWriteOnce", "ReadOnlyMany")
            if r.random() < 0.8
            else (r.choice(("ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")),)
        )
        return B.pv(
            name,
            r.choice(("local", "local", "local", "dyn", "cap", "")),
            capacity=r.choice(SIZES),
            phase=r.choice(("Available", "Available", "Available", "Bound", "Released")),
            node_affinity=affinity,
            claim=claim,
            labels=labels,
            access_modes=modes,
            volume_mode="Block" if r.random() < 0.1 else None,
            source=source,
        )

    def random_pvc(self, name: str) -> dict:
        r = self.r
        sc = r.choice(("local", "local", "local", "dyn", "dyn", "cap", "cap", "fast", "nomode", "missing", None))
        state = r.random()
        kwargs = {}
        if state < 0.25 and self.pvs:
            kwargs = {"volume_name": r.choice(self.pvs)["metadata"]["name"], "bound": True}
        elif state < 0.3:
            kwargs = {"volume_name": "pv-gone", "bound": r.random() < 0.5}
        elif state < 0.4:
            kwargs = {"selected_node": r.choice(self.names)}
        return B.pvc(
            name,
            sc,
            uid=f"uid-{name}",
            request=r.choice(SIZES + (None,)),
            access_modes=("ReadWriteOncePod",) if r.random() < 0.15 else ("ReadWriteOnce",),
            phase="Lost" if r.random() < 0.03 else None,
            deleting=r.random() < 0.03,
            volume_mode="Block" if r.random() < 0.1 else None,
            selector={"matchLabels": {"tier": "gold"}} if r.random() < 0.1 else None,
            **kwargs,
        )

    def random_pod(self, name: str) -> dict:
        r = self.r
        volumes = []
        for i in range(r.randint(0, 3)):
            kind = r.random()
            if kind < 0.6:
                known = r.random() < 0.9
                volumes.append(B.claim_volume(f"c{r.randrange(self.n_claims) if known else 99}", f"v{i}"))
            elif kind < 0.7:
                volumes.append(B.ephemeral_volume(f"v{i}"))
                if r.random() < 0.7:  # the ephemeral volume controller made its claim (owned by the pod, or not)
                    owner = f"uid-{name}" if r.random() < 0.9 else None
                    self.pvcs.append(
                        B.pvc(
                            f"{name}-v{i}",
                            r.choice(("local", "dyn", "cap")),
                            owner_uid=owner,
                            uid=f"uid-{name}-v{i}",
                            request=r.choice(SIZES),
                            access_modes=("ReadWriteOnce",),
                        )
                    )
            elif kind < 0.8:
                volumes.append(
                    B.inline("gcePersistentDisk", f"v{i}", pdName=r.choice(("d1", "d2")), readOnly=r.random() < 0.5)
                )
            elif kind < 0.9:
                volumes.append(B.inline("awsElasticBlockStore", f"v{i}", volumeID=r.choice(("vol-1", "aws://z/vol-2"))))
            else:
                volumes.append(
                    B.inline(
                        "iscsi",
                        f"v{i}",
                        iqn=r.choice(("iqn.a", "iqn.b")),
                        targetPortal="p",
                        lun=0,
                        readOnly=r.random() < 0.5,
                    )
                )
        return B.pod(name, *volumes, uid=f"uid-{name}")

    def objects(self) -> Objects:
        return Objects(
            nodes=self.nodes,
            pvs=self.pvs,
            pvcs=self.pvcs,
            classes=self.classes,
            csi_nodes=self.csi_nodes,
            csi_drivers=self.drivers,
            capacities=self.capacities,
            attachments=self.attachments,
            bound=self.bound,
        )

    def world(self) -> R.World:
        w = R.World(
            nodes={n["metadata"]["name"]: n for n in self.nodes},
            pvs={p["metadata"]["name"]: p for p in self.pvs},
            pvcs={f"default/{c['metadata']['name']}": c for c in self.pvcs},
            classes={c["metadata"]["name"]: c for c in self.classes},
            csi_nodes={c["metadata"]["name"]: c for c in self.csi_nodes},
            csi_drivers={d["metadata"]["name"]: d for d in self.drivers},
            capacities=list(self.capacities),
            attachments=list(self.attachments),
        )
        for p, node in self.bound:
            w.bound.setdefault(node, []).append(p)
        return w


def _expected(result: R.Result) -> Outcome:
    return Outcome(
        result.rejection, result.error, dict(result.nodes) if result.rejection is None and result.error is None else {}
    )


@pytest.mark.parametrize("seed", range(100))
def test_every_node_says_what_the_reference_says(seed):
    gen = Gen(seed)
    cluster = cluster_of(gen.objects())
    world = gen.world()
    for pod in gen.pending:
        for plugins in (PLUGINS, [gen.r.choice(PLUGINS)]):
            assert outcome(cluster, pod, plugins) == _expected(R.evaluate(world, pod, plugins)), (seed, pod, plugins)


@pytest.mark.parametrize("seed", range(80))
def test_a_batch_places_pods_where_the_reference_accepts_them_and_assumes_the_same(seed):
    gen = Gen(1000 + seed)
    cluster = cluster_of(gen.objects())
    world = gen.world()
    pods = gen.pending
    placements = vcore.Scheduler(cluster, only(*PLUGINS), seed=seed).schedule(pods)
    for pod, placed in zip(pods, placements):
        expected = R.evaluate(world, pod)
        if placed.node is None:
            assert expected.rejection is not None or expected.error is not None or all(expected.nodes.values()), (
                seed,
                pod,
                expected,
            )
            continue
        assert expected.rejection is None and expected.error is None and expected.nodes[placed.node] == (), (
            seed,
            pod,
            placed,
            expected,
        )
        assumed = R.assume(world, pod, placed.node)
        got = None if placed.volumes is None else (placed.volumes.bindings, placed.volumes.provisions)
        assert got == assumed, (seed, pod, placed)
        world.bound.setdefault(placed.node, []).append(pod)
