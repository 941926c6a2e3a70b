"""Node GPU inventory from realistic GFD-labelled Node objects, the topology annotation, CSR export, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vcore.gpu.devices import Gpu, NodeGpus, node_gpus, to_csr
from vcore.gpu.mig import MigInstance, validate_layout


def make_node(name="gpu-node-1", labels=None, allocatable=None, annotations=None):
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, **(labels or {})},
            "annotations": annotations or {},
        },
        "status": {"allocatable": {"cpu": "95", "memory": "1056000Mi", "pods": "110", **(allocatable or {})}},
    }


# What GFD writes on a DGX A100 (8 x A100-SXM4-80GB, MIG off).
DGX_A100 = {
    "nvidia.com/cuda.driver.major": "535",
    "nvidia.com/gpu.count": "8",
    "nvidia.com/gpu.family": "ampere",
    "nvidia.com/gpu.machine": "DGXA100-920-23687-2530-000",
    "nvidia.com/gpu.memory": "81920",
    "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
    "nvidia.com/mig.capable": "true",
    "nvidia.com/mig.strategy": "none",
}


def test_whole_gpus_from_gfd_labels():
    g = node_gpus(make_node(labels=DGX_A100, allocatable={"nvidia.com/gpu": "8"}))
    assert g == NodeGpus(
        "gpu-node-1",
        "NVIDIA-A100-SXM4-80GB",
        81920,
        "none",
        tuple(Gpu(i, "NVIDIA-A100-SXM4-80GB", 81920) for i in range(8)),
    )
    assert g.n_gpus == 8
    assert all(d.numa == -1 and d.nvlink_domain == -1 and not d.mig_mode for d in g.devices)


def test_allocatable_wins_over_count_label():
    # One GPU marked unhealthy by the device plugin: GFD still counts 8.
    g = node_gpus(make_node(labels=DGX_A100, allocatable={"nvidia.com/gpu": "7"}))
    assert g.n_gpus == 7


def test_node_without_gpus():
    g = node_gpus(make_node(name="cpu-1"))
    assert g == NodeGpus("cpu-1", "", 0, "none", ())
    csr = g.to_csr()
    assert csr["dev_offsets"].tolist() == [0, 0]
    assert csr["dev_memory_mib"].shape == (0,)


def test_gpus_without_gfd_labels():
    g = node_gpus(make_node(allocatable={"nvidia.com/gpu": 2}))
    assert [(d.model, d.memory_mib) for d in g.devices] == [("", 0), ("", 0)]


def test_mixed_strategy_layout_inferred():
    labels = {
        **DGX_A100,
        "nvidia.com/mig.strategy": "mixed",
        "nvidia.com/mig-3g.40gb.count": "2",
        "nvidia.com/mig-1g.10gb.count": "7",
    }
    alloc = {"nvidia.com/gpu": "6", "nvidia.com/mig-3g.40gb": "2", "nvidia.com/mig-1g.10gb": "7"}
    g = node_gpus(make_node(labels=labels, allocatable=alloc))
    assert g.mig_strategy == "mixed"
    assert [d.mig_mode for d in g.devices] == [False] * 6 + [True, True]
    assert g.devices[6].mig_instances == (MigInstance("3g.40gb", 0), MigInstance("3g.40gb", 4))
    assert g.devices[7].mig_instances == tuple(MigInstance("1g.10gb", s) for s in range(7))
    for d in g.devices[6:]:
        validate_layout("A100-80GB", d.mig_instances)


def test_mixed_strategy_falls_back_to_labels_and_grows_gpus():
    # No mig-* allocatable yet, and no gpu.count: the MIG devices GFD counts still need a home.
    labels = {
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.memory": "81559",
        "nvidia.com/mig.strategy": "mixed",
        "nvidia.com/mig-7g.80gb.count": "2",
        "nvidia.com/mig-2g.20gb.count": "3",
    }
    g = node_gpus(make_node(labels=labels))
    assert [d.mig_instances for d in g.devices] == [
        (MigInstance("7g.80gb", 0),),
        (MigInstance("7g.80gb", 0),),
        (MigInstance("2g.20gb", 0), MigInstance("2g.20gb", 2), MigInstance("2g.20gb", 4)),
    ]


def test_single_strategy():
    labels = {
        "nvidia.com/mig.strategy": "single",
        "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb",
        "nvidia.com/gpu.memory": "4864",
        "nvidia.com/gpu.count": "14",
        "nvidia.com/gpu.slices.gi": "1",
    }
    g = node_gpus(make_node(labels=labels, allocatable={"nvidia.com/gpu": "14"}))
    assert g.model == "NVIDIA-A100-SXM4-40GB" and g.memory_mib == 40960
    assert g.n_gpus == 2
    assert all(d.mig_mode and len(d.mig_instances) == 7 for d in g.devices)
    assert {i.profile for d in g.devices for i in d.mig_instances} == {"1g.5gb"}


def test_single_strategy_without_mig_devices_is_plain():
    labels = {**DGX_A100, "nvidia.com/mig.strategy": "single"}
    g = node_gpus(make_node(labels=labels, allocatable={"nvidia.com/gpu": "8"}))
    assert g.n_gpus == 8 and not any(d.mig_mode for d in g.devices)


def topo(*gpus):
    return {"vcore.io/gpu-topology": json.dumps({"gpus": list(gpus)})}


def test_topology_annotation():
    ann = topo(*({"index": i, "numa": i // 4, "nvlink": i % 2} for i in range(8)))
    g = node_gpus(make_node(labels=DGX_A100, allocatable={"nvidia.com/gpu": "8"}, annotations=ann))
    assert [(d.numa, d.nvlink_domain) for d in g.devices] == [(i // 4, i % 2) for i in range(8)]


def test_topology_model_and_memory_override():
    ann = topo({"index": 1, "model": "NVIDIA-H100-80GB-HBM3", "memory_mib": 81559})
    g = node_gpus(make_node(labels=DGX_A100, allocatable={"nvidia.com/gpu": "2"}, annotations=ann))
    assert g.devices[0].model == "NVIDIA-A100-SXM4-80GB"
    assert (g.devices[1].model, g.devices[1].memory_mib) == ("NVIDIA-H100-80GB-HBM3", 81559)


def test_topology_moves_mig_mode_and_sets_exact_layout():
    labels = {**DGX_A100, "nvidia.com/mig.strategy": "mixed", "nvidia.com/gpu.count": "2"}
    alloc = {"nvidia.com/gpu": "1", "nvidia.com/mig-4g.40gb": "1", "nvidia.com/mig-1g.10gb": "1"}
    ann = topo(
        {"index": 0, "mig": [{"profile": "4g.40gb", "start": 0}, {"profile": "1g.10gb", "start": 6}]},
        {"index": 1, "mig_mode": False},
    )
    g = node_gpus(make_node(labels=labels, allocatable=alloc, annotations=ann))
    assert g.devices[0].mig_mode and g.devices[0].mig_instances == (
        MigInstance("4g.40gb", 0),
        MigInstance("1g.10gb", 6),
    )
    assert not g.devices[1].mig_mode and g.devices[1].mig_instances == ()


def test_to_csr_several_nodes():
    a = node_gpus(
        make_node(
            "a",
            labels=DGX_A100,
            allocatable={"nvidia.com/gpu": "2"},
            annotations=topo({"index": 1, "numa": 1, "nvlink": 3}),
        )
    )
    b = node_gpus(make_node("b"))
    labels = {
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.memory": "81559",
        "nvidia.com/mig.strategy": "mixed",
        "nvidia.com/gpu.count": "2",
    }
    c = node_gpus(make_node("c", labels=labels, allocatable={"nvidia.com/gpu": "1", "nvidia.com/mig-3g.40gb": "2"}))
    csr = to_csr([a, b, c])
    assert csr["dev_offsets"].dtype == np.int64 and csr["dev_offsets"].tolist() == [0, 2, 2, 4]
    assert csr["dev_memory_mib"].tolist() == [81920, 81920, 81559, 81559]
    assert csr["model_names"].tolist() == ["NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3"]
    assert csr["dev_model_id"].dtype == np.int32 and csr["dev_model_id"].tolist() == [0, 0, 1, 1]
    assert csr["dev_numa"].tolist() == [-1, 1, -1, -1]
    assert csr["dev_nvlink"].tolist() == [-1, 3, -1, -1]
    assert csr["dev_mig_mode"].tolist() == [0, 0, 0, 1]
    assert csr["dev_mig_offsets"].tolist() == [0, 0, 0, 0, 2]
    assert csr["mig_profile_names"].tolist() == ["3g.40gb"]
    assert csr["mig_profile_id"].tolist() == [0, 0] and csr["mig_start"].tolist() == [0, 4]
    assert a.to_csr()["dev_offsets"].tolist() == [0, 2]


def test_to_csr_unknown_model_is_minus_one():
    csr = to_csr([node_gpus(make_node(allocatable={"nvidia.com/gpu": "1"}))])
    assert csr["dev_model_id"].tolist() == [-1] and csr["model_names"].tolist() == []


def test_to_csr_rejects_other_types():
    with pytest.raises(TypeError, match=r"nodes\[0\]: expected NodeGpus"):
        to_csr([{"name": "x"}])


def test_frozen():
    g = node_gpus(make_node(labels=DGX_A100, allocatable={"nvidia.com/gpu": "1"}))
    with pytest.raises(AttributeError):
        g.devices[0].memory_mib = 1  # type: ignore[misc]


def test_kubernetes_client_object():
    from kubernetes.client import V1Node, V1NodeStatus, V1ObjectMeta

    node = V1Node(
        metadata=V1ObjectMeta(name="k", labels=DGX_A100), status=V1NodeStatus(allocatable={"nvidia.com/gpu": "4"})
    )
    assert node_gpus(node).n_gpus == 4


BAD = [
    (
        dict(labels={"nvidia.com/mig.strategy": "auto"}),
        ValueError,
        r"node n: metadata.labels\[nvidia.com/mig.strategy\]: must be one of none, single, mixed; got 'auto'",
    ),
    (
        dict(labels={"nvidia.com/gpu.memory": "80GB"}),
        ValueError,
        r"node n: metadata.labels\[nvidia.com/gpu.memory\]: expected a non-negative integer \(MiB\), got '80GB'",
    ),
    (dict(labels={"nvidia.com/gpu.count": "-1"}), ValueError, r"metadata.labels\[nvidia.com/gpu.count\]"),
    (
        dict(allocatable={"nvidia.com/gpu": "-2"}),
        ValueError,
        r"node n: status.allocatable\[nvidia.com/gpu\]: quantity '-2' must not be negative",
    ),
    (
        dict(allocatable={"nvidia.com/gpu": "1500m"}),
        ValueError,
        r"node n: status.allocatable\[nvidia.com/gpu\]: must be a whole number",
    ),
    (
        dict(allocatable={"nvidia.com/mig-9g.90gb": "1"}),
        ValueError,
        r"node n: status.allocatable\[nvidia.com/mig-9g.90gb\]: unknown MIG profile '9g.90gb'",
    ),
    (
        dict(labels={"nvidia.com/mig-5g.50gb.count": "1"}),
        ValueError,
        r"metadata.labels\[nvidia.com/mig-5g.50gb.count\]: unknown MIG profile",
    ),
    (
        dict(
            labels={"nvidia.com/mig.strategy": "mixed", "nvidia.com/gpu.product": "Tesla-T4"},
            allocatable={"nvidia.com/mig-1g.10gb": "1"},
        ),
        ValueError,
        "no MIG geometry for 'Tesla-T4'",
    ),
    (
        dict(
            labels={"nvidia.com/mig.strategy": "single", "nvidia.com/gpu.product": "Tesla-T4-MIG-1g.5gb"},
            allocatable={"nvidia.com/gpu": "1"},
        ),
        ValueError,
        "no MIG geometry for 'Tesla-T4'",
    ),
    (
        dict(
            labels={"nvidia.com/mig.strategy": "single", "nvidia.com/gpu.product": "A100-SXM4-40GB-MIG-1g.10gbx"},
            allocatable={"nvidia.com/gpu": "1"},
        ),
        ValueError,
        "unknown MIG profile '1g.10gbx' for A100-40GB",
    ),
    (dict(labels={"nvidia.com/gpu.product": 5}), TypeError, r"metadata.labels\[nvidia.com/gpu.product\]"),
    (dict(annotations={"vcore.io/gpu-topology": "{"}), ValueError, "invalid JSON"),
    (
        dict(annotations={"vcore.io/gpu-topology": "[]"}),
        TypeError,
        r"node n: metadata.annotations\[vcore.io/gpu-topology\]: must be a mapping, got a list",
    ),
    (
        dict(annotations={"vcore.io/gpu-topology": '{"devices": []}'}),
        ValueError,
        r"node n: metadata.annotations\[vcore.io/gpu-topology\].devices: unknown key \(expected one of: gpus\)",
    ),
    (dict(annotations=topo({"numa": 0})), ValueError, r"gpus\[0\].index: required"),
    (dict(annotations=topo({"index": 0, "numa": 0, "nvswitch": 1})), ValueError, r"gpus\[0\].nvswitch: unknown key"),
    (dict(annotations=topo({"index": 0}, {"index": 0})), ValueError, "GPU 0 is listed twice"),
    (dict(annotations=topo({"index": 5})), ValueError, r"GPU index 5 out of range \(the node has 2 GPUs\)"),
    (dict(annotations=topo({"index": 0, "numa": -1})), ValueError, r"gpus\[0\].numa: must be >= 0, got -1"),
    (
        dict(annotations=topo({"index": 0, "numa": "0"})),
        TypeError,
        r"gpus\[0\].numa: must be an integer, got a string '0'",
    ),
    (dict(annotations=topo({"index": True})), TypeError, r"gpus\[0\].index: must be an integer, got a boolean True"),
    (dict(annotations=topo({"index": 0, "memory_mib": 0})), ValueError, r"memory_mib: must be >= 1, got 0"),
    (dict(annotations=topo({"index": 0, "model": ""})), ValueError, "model: must not be empty"),
    (dict(annotations=topo({"index": 0, "mig_mode": "yes"})), TypeError, "mig_mode: must be true or false"),
    (dict(annotations=topo({"index": 0, "mig": [["1g.10gb", 0]]})), TypeError, r"mig\[0\]: must be a mapping"),
    (
        dict(annotations=topo({"index": 0, "mig": [{"profile": "1g.10gb", "start": 0}], "mig_mode": False})),
        ValueError,
        'given with "mig_mode": false',
    ),
    (
        dict(annotations=topo({"index": 0, "mig": [{"profile": "3g.40gb", "start": 2}]})),
        ValueError,
        "GPU 0: MIG instance.*cannot start at 2",
    ),
    (
        dict(annotations=topo({"index": 0, "mig_mode": True})),
        ValueError,
        r"1 GPUs without MIG mode, but status.allocatable\[nvidia.com/gpu\] is 2",
    ),
    (
        dict(annotations={"vcore.io/gpu-topology": 7}),
        TypeError,
        r"node n: metadata.annotations\[vcore.io/gpu-topology\]: must be a string, got an integer 7",
    ),
]


@pytest.mark.parametrize("kw,exc,match", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_nodes(kw, exc, match):
    labels = {**DGX_A100, **kw.get("labels", {})}
    alloc = {"nvidia.com/gpu": "2", **kw.get("allocatable", {})}
    with pytest.raises(exc, match=match):
        node_gpus(make_node("n", labels=labels, allocatable=alloc, annotations=kw.get("annotations")))


def test_topology_mig_on_model_without_geometry():
    labels = {"nvidia.com/gpu.product": "Tesla-V100-SXM2-16GB", "nvidia.com/gpu.memory": "16384"}
    with pytest.raises(ValueError, match="MIG mode on 'Tesla-V100-SXM2-16GB', which has no MIG geometry"):
        node_gpus(
            make_node(
                "n",
                labels=labels,
                allocatable={"nvidia.com/gpu": "1"},
                annotations=topo({"index": 0, "mig_mode": True}),
            )
        )


def test_topology_mig_counts_must_match_allocatable():
    labels = {**DGX_A100, "nvidia.com/mig.strategy": "mixed", "nvidia.com/gpu.count": "1"}
    ann = topo({"index": 0, "mig": [{"profile": "3g.40gb", "start": 0}]})
    with pytest.raises(
        ValueError,
        match=r"MIG instances \{'3g.40gb': 1\} differ from the node's advertised MIG "
        r"devices \{'3g.40gb': 2\}",
    ):
        node_gpus(make_node("n", labels=labels, allocatable={"nvidia.com/mig-3g.40gb": "2"}, annotations=ann))


@pytest.mark.parametrize(
    "node,exc,match",
    [
        (42, TypeError, "node: expected a dict in API shape or a kubernetes V1Node, got int"),
        ({"metadata": []}, TypeError, "node <unnamed>: metadata: must be a mapping, got a list"),
        (
            {"metadata": {"name": "x", "labels": "a=b"}},
            TypeError,
            "node x: metadata.labels: must be a mapping, got a string",
        ),
        ({"metadata": {"name": "x"}, "status": {"allocatable": []}}, TypeError, "node x: status.allocatable"),
    ],
)
def test_bad_shapes(node, exc, match):
    with pytest.raises(exc, match=match):
        node_gpus(node)


def test_gpus_from_volcanos_device_plugin():
    """Volcano's GPU-share device plugin advertises volcano.sh/gpu-number and volcano.sh/gpu-memory instead of
    nvidia.com/gpu: that many GPUs, the memory split equally (as Volcano's scheduler splits it), over the label's."""
    allocatable = {"volcano.sh/gpu-number": "2", "volcano.sh/gpu-memory": "81072"}
    g = node_gpus(make_node(labels=DGX_A100, allocatable=allocatable))
    assert [(d.index, d.model, d.memory_mib) for d in g.devices] == [
        (0, "NVIDIA-A100-SXM4-80GB", 40536),
        (1, "NVIDIA-A100-SXM4-80GB", 40536),
    ]
    # nvidia.com/gpu, when the node has it, stays the source (and the label the memory).
    both = node_gpus(make_node(labels=DGX_A100, allocatable={**allocatable, "nvidia.com/gpu": "8"}))
    assert (both.n_gpus, both.devices[0].memory_mib) == (8, 81920)
