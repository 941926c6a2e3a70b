"""openb loaders: both pod-list formats, node lists, and bad input rejected with the object and field named."""

from __future__ import annotations

import pytest

from tests.sim.gpu.conftest import write
from vcore.sim.gpu.trace import list_workloads, load_nodes, load_pods, node_list_path, workload_path

NODES = "sn,cpu_milli,memory_mib,gpu,model\nn-b,64000,262144,2,P100\nn-a,32000,131072,0,\nn-c,96000,393216,8,G2\n"
PODS11 = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
    "p0,12000,16384,1,1000,,LS,Running,0,10,0\n"
    "p1,6000,12288,1,460,P100|G2,LS,Running,1,10,1\n"
    "p2,8000,30517,0,0,,BE,Running,2,10,2\n"
    "p3,32000,65536,8,1000,,LS,Running,3,10,3\n"
)
PODS5 = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,12000,16384,1,1000\np1,6000,12288,1,460\n"


def test_nodes(tmp_path):
    nodes = load_nodes(write(tmp_path, "nodes.csv", NODES))
    assert nodes.names == ["n-b", "n-a", "n-c"]
    assert nodes.cpu_milli.tolist() == [64000, 32000, 96000]
    assert nodes.gpu_count.tolist() == [2, 0, 8]
    assert nodes.model == ["P100", "", "G2"]
    assert nodes.gpu_capacity_milli == 10_000


def test_pods_11_columns(tmp_path):
    pods = load_pods(write(tmp_path, "pods.csv", PODS11))
    assert pods.names == ["p0", "p1", "p2", "p3"]
    assert pods.num_gpu.tolist() == [1, 1, 0, 8]
    assert pods.gpu_milli.tolist() == [1000, 460, 0, 1000]
    assert pods.gpu_spec == [(), ("G2", "P100"), (), ()]
    assert pods.gpu_demand_milli.tolist() == [1000, 460, 0, 8000]


def test_pods_5_columns_and_headerless(tmp_path):
    a = load_pods(write(tmp_path, "a.csv", PODS5))
    b = load_pods(write(tmp_path, "b.csv", PODS5.split("\n", 1)[1]))
    for pods in (a, b):
        assert pods.names == ["p0", "p1"]
        assert pods.gpu_milli.tolist() == [1000, 460]
        assert pods.gpu_spec == [(), ()]


def test_take_repeats(tmp_path):
    pods = load_pods(write(tmp_path, "pods.csv", PODS11))
    sub = pods.take([3, 0, 0])
    assert sub.names == ["p3", "p0", "p0"]
    assert sub.num_gpu.tolist() == [8, 1, 1]


BAD_PODS = [
    ("gpu-milli-over-1000", "p9,1000,10,1,1200", "pod 'p9': gpu_milli: must be in [0, 1000], got 1200"),
    ("negative-cpu", "p9,-5,10,0,0", "pod 'p9': cpu_milli: must be >= 0, got -5"),
    ("not-a-number", "p9,abc,10,0,0", "pod 'p9': cpu_milli: must be an integer, got 'abc'"),
    ("fraction-multi-gpu", "p9,1000,10,2,500", "pod 'p9': gpu_milli: a pod with num_gpu 2 > 1 takes whole GPUs"),
    ("milli-without-gpu", "p9,1000,10,0,500", "pod 'p9': gpu_milli: 500 GPU milli requested with num_gpu 0"),
    ("gpu-without-milli", "p9,1000,10,2,0", "pod 'p9': gpu_milli: num_gpu 2 requested with gpu_milli 0"),
    ("wrong-column-count", "p9,1000,10,0", "pod 'p9': row has 4 columns, expected 5"),
    ("negative-memory", "p9,1000,-10,0,0", "pod 'p9': memory_mib: must be >= 0, got -10"),
]


@pytest.mark.parametrize("row,message", [b[1:] for b in BAD_PODS], ids=[b[0] for b in BAD_PODS])
def test_bad_pods_rejected(tmp_path, row, message):
    path = write(tmp_path, "pods.csv", PODS5 + row + "\n")
    with pytest.raises(ValueError) as err:
        load_pods(path)
    assert message in str(err.value)
    assert f"{path}:4" in str(err.value)  # file and line


BAD_NODES = [
    ("duplicate", "n-b,1,1,0,", "node 'n-b': sn: duplicate node name"),
    ("gpu-without-model", "n-x,1,1,2,", "node 'n-x': model: a node with GPUs needs a GPU model"),
    ("too-many-gpus", "n-x,1,1,65,A100", "node 'n-x': gpu: must be in [0, 64], got 65"),
    ("negative-cpu", "n-x,-1,1,0,", "node 'n-x': cpu_milli: must be >= 0, got -1"),
]


@pytest.mark.parametrize("row,message", [b[1:] for b in BAD_NODES], ids=[b[0] for b in BAD_NODES])
def test_bad_nodes_rejected(tmp_path, row, message):
    with pytest.raises(ValueError, match="node") as err:
        load_nodes(write(tmp_path, "nodes.csv", NODES + row + "\n"))
    assert message in str(err.value)


def test_bad_header_and_missing_file(tmp_path):
    with pytest.raises(ValueError, match="header"):
        load_pods(write(tmp_path, "pods.csv", "name,cpu,mem\np,1,1\n"))
    with pytest.raises(FileNotFoundError, match="pod list"):
        load_pods(str(tmp_path / "nope.csv"))


def test_paths(tmp_path):
    write(tmp_path, "openb_pod_list_tiny.csv", PODS5)
    write(tmp_path, "openb_node_list_gpu_node.csv", NODES)
    assert workload_path(str(tmp_path), "tiny").endswith("openb_pod_list_tiny.csv")
    assert node_list_path(str(tmp_path)).endswith("openb_node_list_gpu_node.csv")
    assert list_workloads(str(tmp_path)) == ["tiny"]
    with pytest.raises(FileNotFoundError, match="available: tiny"):
        workload_path(str(tmp_path), "nothere")
