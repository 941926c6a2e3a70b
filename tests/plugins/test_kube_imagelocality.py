"""ImageLocality against kube-scheduler v1.34's own table (plugins/imagelocality/image_locality_test.go
TestImageLocalityPriority), case names kept: a node scores by the pod's images it has, each weighted by its size
and the share of nodes that have it, clamped to [23 MiB, 1000 MiB per container] and mapped onto 0..100."""

from __future__ import annotations

import pytest

import vcore

MB = 1024 * 1024
ALLOCATABLE = {"cpu": "4", "memory": "4Gi", "pods": "10"}


def images(*entries: tuple[tuple[str, ...], int]) -> list[dict]:
    return [{"names": list(names), "sizeBytes": size * MB} for names, size in entries]


NODE_40_300_2000 = images(
    (("gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"), 40),
    (("gcr.io/300:latest", "gcr.io/300:v1"), 300),
    (("gcr.io/2000:latest",), 2000),
)
NODE_250_10 = images((("gcr.io/250:latest",), 250), (("gcr.io/10:latest", "gcr.io/10:v1"), 10))
NODE_600_40_900 = images((("gcr.io/600:latest",), 600), (("gcr.io/40:latest",), 40), (("gcr.io/900:latest",), 900))
NODE_300_600_900 = images((("gcr.io/300:latest",), 300), (("gcr.io/600:latest",), 600), (("gcr.io/900:latest",), 900))
NODE_4000_30 = images((("gcr.io/4000:latest",), 4000), (("gcr.io/30:latest",), 30))
NODE_20_30_40 = images((("gcr.io/20:latest",), 20), (("gcr.io/30:latest",), 30), (("gcr.io/40:latest",), 40))
NO_IMAGES: list[dict] = []


def pod(*images_: str, init: tuple[str, ...] = ()) -> dict:
    spec = {"containers": [{"name": f"c{i}", "image": image} for i, image in enumerate(images_)]}
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "image": image} for i, image in enumerate(init)]
    return {"metadata": {"name": "p"}, "spec": spec}


CASES = [
    (
        "two images spread on two nodes, prefer the larger image one",
        pod("gcr.io/40", "gcr.io/250"),
        [NODE_40_300_2000, NODE_250_10],
        [0, 5],
    ),
    (
        "two images on one node, prefer this node",
        pod("gcr.io/40", "gcr.io/300"),
        [NODE_40_300_2000, NODE_250_10],
        [7, 0],
    ),
    ("if exceed limit, use limit", pod("gcr.io/10", "gcr.io/4000"), [NODE_4000_30, NODE_250_10], [100, 0]),
    (
        "if exceed limit, use limit (with node which has no images present)",
        pod("gcr.io/10", "gcr.io/4000"),
        [NODE_4000_30, NODE_250_10, NO_IMAGES],
        [66, 0, 0],
    ),
    (
        "pod with multiple large images, node2 is preferred",
        pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
        [NODE_600_40_900, NODE_300_600_900, NO_IMAGES],
        [32, 36, 0],
    ),
    ("pod with multiple small images", pod("gcr.io/30", "gcr.io/40"), [NODE_20_30_40, NODE_4000_30], [1, 0]),
    (
        "include InitContainers: two images spread on two nodes, prefer the larger image one",
        pod("gcr.io/30", init=("gcr.io/300",)),
        [NODE_40_300_2000, NODE_20_30_40],
        [6, 0],
    ),
]

ONLY_IMAGE_LOCALITY = {
    "plugins": {"multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": "ImageLocality", "weight": 1}]}}
}


def _cluster(node_images: list[list[dict]]) -> vcore.Cluster:
    cluster = vcore.Cluster()
    for i, node_imgs in enumerate(node_images):
        status = {"allocatable": ALLOCATABLE, "images": node_imgs}
        cluster.add_node({"metadata": {"name": f"node{i + 1}"}, "status": status})
    return cluster


@pytest.mark.parametrize("name, incoming, node_images, expected", CASES, ids=[c[0] for c in CASES])
def test_image_locality_table(name, incoming, node_images, expected):
    scores = vcore.Scheduler(_cluster(node_images), ONLY_IMAGE_LOCALITY).score(incoming)
    assert [scores[f"node{i + 1}"] for i in range(len(node_images))] == expected


def test_node_updates_and_removals_keep_the_spread_right():
    cluster = _cluster([NODE_4000_30, NO_IMAGES, NO_IMAGES])
    scheduler = vcore.Scheduler(cluster, ONLY_IMAGE_LOCALITY)
    incoming = pod("gcr.io/10", "gcr.io/4000")
    assert scheduler.score(incoming)["node1"] == 66  # 4000M on 1 of 3 nodes
    cluster.update_node({"metadata": {"name": "node2"}, "status": {"allocatable": ALLOCATABLE, "images": NODE_4000_30}})
    assert scheduler.score(incoming) == {"node1": 100, "node2": 100, "node3": 0}  # on 2 of 3: over the limit
    cluster.remove_node("node2")
    assert scheduler.score(incoming) == {"node1": 100, "node3": 0}  # on 1 of 2 nodes: 2000M, the limit
    cluster.update_node({"metadata": {"name": "node1"}, "status": {"allocatable": ALLOCATABLE, "images": NO_IMAGES}})
    assert scheduler.score(incoming) == {"node1": 0, "node3": 0}


def test_bad_images_name_the_field():
    with pytest.raises(ValueError, match=r"node n: status.images\[0\].sizeBytes: must be between 0 and 2\*\*63-1"):
        _cluster([]).add_node({"metadata": {"name": "n"}, "status": {"images": [{"names": ["a"], "sizeBytes": -1}]}})
