"""NUMA alignment (Topology Manager policies via volcano.sh/numa-topology-policy): GPUs and pinned CPUs on one NUMA
node under single-numa-node, the fewest possible under restricted, as few as fit under best-effort, one NVLink
domain inside; the node's NUMA model from vcore.io/numa-topology (or a Volcano Numatopology); bad input named."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

import vcore
from vcore.gpu.numa import numa_annotation_from_numatopology

# GPUs 0-3 on NUMA 0 (NVLink domains 0: {0, 1}, 1: {2, 3}), GPUs 4-7 on NUMA 1 (NVLink 2).
GPU_TOPOLOGY = {
    "gpus": [{"index": i, "numa": 0 if i < 4 else 1, "nvlink": 0 if i < 2 else 1 if i < 4 else 2} for i in range(8)]
}
NUMA = {"numa": [{"id": 0, "cpu": "16"}, {"id": 1, "cpu": "16"}]}


def node(name: str = "n0", gpus: int = 8, numa: dict | None = NUMA, gpu_topology: dict | None = GPU_TOPOLOGY) -> dict:
    annotations = {}
    if numa is not None:
        annotations["vcore.io/numa-topology"] = json.dumps(numa)
    if gpu_topology is not None and gpus:
        annotations["vcore.io/gpu-topology"] = json.dumps(gpu_topology)
    alloc = {"cpu": "32", "memory": "512Gi", "pods": "110"}
    labels = {}
    if gpus:
        alloc["nvidia.com/gpu"] = str(gpus)
        labels = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.memory": "81920"}
    return {"metadata": {"name": name, "labels": labels, "annotations": annotations}, "status": {"allocatable": alloc}}


def pod(name: str, gpus: int = 0, cpu: str = "4", policy: str | None = "single-numa-node") -> dict:
    req = {"cpu": cpu, "memory": "1Gi"}
    if gpus:
        req["nvidia.com/gpu"] = str(gpus)
    ann = {"volcano.sh/numa-topology-policy": policy} if policy else {}
    return {
        "metadata": {"name": name, "namespace": "ml", "annotations": ann},
        "spec": {"containers": [{"name": "c", "resources": {"requests": req, "limits": dict(req)}}]},
    }


def setup(*nodes) -> tuple[vcore.Cluster, vcore.Scheduler]:
    c = vcore.Cluster()
    for n in nodes or (node(),):
        c.add_node(n)
    return c, vcore.Scheduler(c)


def place(s: vcore.Scheduler, p: dict):
    return s.schedule([p])[0]


def test_single_numa_node_puts_gpus_and_cpus_on_one_numa_node_and_one_nvlink_domain():
    c, s = setup()
    p = place(s, pod("a", gpus=2, cpu="8"))
    assert p.node == "n0" and p.gpus.indices == (0, 1)  # NUMA 0, NVLink domain 0
    p = place(s, pod("b", gpus=2, cpu="8"))
    assert p.gpus.indices == (2, 3)  # NUMA 0 still has 8 CPUs and two GPUs (one NVLink domain)
    # NUMA 0's 16 pinned CPUs are gone: the next pod's CPUs and GPUs go to NUMA 1 together.
    p = place(s, pod("c", gpus=1, cpu="2"))
    assert p.gpus.indices == (4,)


def test_single_numa_node_filters_what_no_numa_node_holds():
    c, s = setup()
    p = place(s, pod("five", gpus=5, cpu="2"))
    assert p.node is None
    assert p.reasons == {"node(s) could not align the pod on NUMA nodes as its topology policy asks": 1}
    cpu_only = place(s, pod("wide", cpu="20"))  # 20 CPUs fit the node (32), not a NUMA node (16)
    assert cpu_only.node is None and "topology policy" in cpu_only.message
    assert place(s, pod("narrow", cpu="12")).node == "n0"  # pinned on NUMA 0
    assert place(s, pod("narrow2", cpu="12")).node == "n0"  # NUMA 1
    assert place(s, pod("narrow3", cpu="6")).node is None  # 4 + 4 pinned CPUs left, not 6 on one NUMA node
    assert place(s, pod("shared-pool", cpu="1500m")).node == "n0"  # not whole CPUs: not pinned
    c.unbind("ml/narrow")
    assert place(s, pod("narrow4", cpu="6")).node == "n0"  # unbinding returned NUMA 0's CPUs


def test_restricted_uses_the_fewest_numa_nodes_the_node_could_offer():
    c, s = setup()
    assert place(s, pod("five", gpus=5, cpu="2", policy="restricted")).node == "n0"  # needs 2 NUMA nodes anyway
    c2, s2 = setup()
    c2.bind(pod("a", gpus=3, cpu="1", policy=None), "n0", gpus="0,1,2")  # NUMA 0
    c2.bind(pod("b", gpus=3, cpu="1", policy=None), "n0", gpus="4,5,6")  # NUMA 1
    # One free GPU per NUMA node: 2 GPUs could be on one NUMA node of this node, so restricted refuses to split.
    assert place(s2, pod("r", gpus=2, cpu="1", policy="restricted")).node is None
    best = place(s2, pod("be", gpus=2, cpu="1", policy="best-effort"))  # best-effort places it across NUMA nodes
    assert best.node == "n0" and best.gpus.indices == (3, 7)


def test_best_effort_prefers_one_numa_node_and_none_keeps_the_device_preference():
    c, s = setup()
    c.bind(pod("a", gpus=3, cpu="1", policy=None), "n0", gpus="0,1,2")
    p = place(s, pod("b", gpus=2, cpu="1", policy="best-effort"))
    assert p.gpus.indices == (4, 5)  # one NUMA node (1) rather than GPUs 3 and 4
    p = place(s, pod("c", gpus=1, cpu="1", policy="none"))
    assert p.gpus.indices == (3,)


def test_nodes_without_numa_information_are_one_numa_node():
    c, s = setup(node(numa=None, gpu_topology=None))
    assert place(s, pod("a", gpus=8, cpu="30")).node == "n0"


def test_node_updates_keep_pinned_cpus():
    c, s = setup()
    place(s, pod("a", cpu="16"))  # all of NUMA 0
    c.update_node(node())
    assert place(s, pod("b", cpu="16")).node == "n0"  # NUMA 1
    assert place(s, pod("c", cpu="1")).node is None


def test_volcano_numatopology_conversion():
    numatopo = {
        "metadata": {"name": "n0"},
        "spec": {
            "policies": {"CPUManagerPolicy": "static", "TopologyManagerPolicy": "single-numa-node"},
            "numares": {"cpu": {"allocatable": "1-3,6-7", "capacity": 8}},
            "cpuDetail": {str(i): {"numa": 0 if i < 4 else 1, "socket": 0, "core": i} for i in range(8)},
        },
    }
    assert json.loads(numa_annotation_from_numatopology(numatopo)) == {
        "numa": [{"id": 0, "cpu": "3"}, {"id": 1, "cpu": "2"}]
    }


@pytest.mark.parametrize(
    "annotation, message",
    [
        ("{", "node bad: metadata.annotations[vcore.io/numa-topology]: not valid JSON"),
        ('{"numa": [{"id": -1, "cpu": "4"}]}', "numa[0].id: expected an integer >= 0"),
        ('{"numa": [{"id": 0, "cpu": "lots"}]}', "numa[0].cpu: expected a cpu quantity"),
        ('{"numa": [{"id": 0, "cpu": "4"}, {"id": 0, "cpu": "4"}]}', "NUMA node 0 listed twice"),
        ('{"nodes": []}', 'expected {"numa"'),
    ],
    ids=["json", "negative-id", "bad-cpu", "duplicate", "shape"],
)
def test_bad_node_annotation(annotation, message):
    c = vcore.Cluster()
    n = node("bad")
    n["metadata"]["annotations"]["vcore.io/numa-topology"] = annotation
    with pytest.raises(ValueError) as info:
        c.add_node(n)
    assert message in str(info.value) and c.n_nodes == 0


def test_bad_pod_policy():
    c, s = setup()
    with pytest.raises(ValueError, match=r"pod .*numa-topology-policy\]: expected one of none, best-effort"):
        s.schedule([pod("x", policy="strict")])


# -- the native NUMA fit against a pure-Python reference ------------------------------------------------------
def reference_numa_fit(gpus, cpu, policy, count, cpu_req):
    """gpus: [(numa, nvlink, free)] by index; cpu: {numa: [alloc, used]} (empty: unknown). Returns (GPU indices or
    None when filtered, {numa: pinned milli}). The rule of vcore.gpu.numa, written from its docstring."""
    from tests.gpu.fit_reference import pick, set_key
    from vcore.gpu.devices import Gpu

    objs = [Gpu(i, "A100", 81920, n, link) for i, (n, link, _) in enumerate(gpus)]
    ids = sorted(set(cpu) | {n for n, _, _ in gpus if n >= 0})
    if not ids:  # no NUMA information: one NUMA node, the plain device preference
        return pick([g for g in objs if gpus[g.index][2]], count), {}
    known = bool(cpu)

    def free_gpus(numa_ids):
        return [g for g in objs if gpus[g.index][2] and g.numa in numa_ids]

    def all_gpus(numa_ids):
        return [g for g in objs if g.numa in numa_ids]

    def free_cpu(s):
        return sum(cpu[i][0] - cpu[i][1] for i in s if i in cpu)

    def cap_cpu(s):
        return sum(cpu[i][0] for i in s if i in cpu)

    def holds(s):
        return (not known or free_cpu(s) >= cpu_req) and len(free_gpus(s)) >= count

    def could(s):
        return (not known or cap_cpu(s) >= cpu_req) and len(all_gpus(s)) >= count

    def members(m):
        return {ids[k] for k in range(len(ids)) if m >> k & 1}

    masks = sorted(range(1, 1 << len(ids)), key=lambda m: m)
    if policy == "single-numa-node":
        sizes = [1]
    elif policy == "restricted":
        k_min = next(
            (k for k in range(1, len(ids) + 1) for m in masks if bin(m).count("1") == k and could(members(m))), None
        )
        if k_min is None:
            return None, {}
        sizes = [k_min]
    else:
        sizes = list(range(1, len(ids) + 1))
    best = None
    for k in sizes:
        for m in masks:
            if bin(m).count("1") != k or not holds(members(m)):
                continue
            picked = pick(free_gpus(members(m)), count)
            one = count <= 1 or not set_key([objs[i] for i in picked])[0]
            if best is None or (one and not best[1]):
                best = (m, one)
            if one:
                break
        if best is not None:
            break
    if best is None:
        if policy != "best-effort":
            return None, {}
        chosen_set = set(ids)
        picked = pick([g for g in objs if gpus[g.index][2]], count)
        if picked is None:
            return None, {}
    else:
        chosen_set = members(best[0])
        picked = pick(free_gpus(chosen_set), count)
    pinned = {}
    left = cpu_req if known else 0
    for i in sorted(chosen_set):
        if left <= 0 or i not in cpu:
            continue
        take = min(left, cpu[i][0] - cpu[i][1])
        if take > 0:
            pinned[i] = take
            left -= take
    return picked, pinned


@st.composite
def numa_nodes(draw):
    n_numa = draw(st.integers(1, 4))
    n_gpus = draw(st.integers(0, 8))
    gpus = [
        (draw(st.sampled_from(list(range(n_numa)) + [-1])), draw(st.integers(-1, 2)), draw(st.booleans()))
        for _ in range(n_gpus)
    ]
    cpu = {i: [draw(st.integers(0, 8)) * 1000, 0] for i in range(n_numa)} if draw(st.booleans()) else {}
    return gpus, cpu


@settings(max_examples=200, deadline=None)
@given(
    numa_nodes(),
    st.sampled_from(["single-numa-node", "restricted", "best-effort"]),
    st.integers(0, 4),
    st.integers(0, 6),
    st.lists(st.integers(1, 3), max_size=3),
)
def test_native_numa_fit_equals_reference(node_case, policy, count, cpus, pinned_before):
    gpus, cpu = node_case
    topo = {
        "gpus": [
            {"index": i, **({"numa": n} if n >= 0 else {}), **({"nvlink": link} if link >= 0 else {})}
            for i, (n, link, _) in enumerate(gpus)
        ]
    }
    numa = {"numa": [{"id": i, "cpu": str(a // 1000)} for i, (a, _) in cpu.items()]} if cpu else None
    n = node(gpus=len(gpus), numa=numa, gpu_topology=topo if gpus else None)
    n["status"]["allocatable"]["cpu"] = "64"
    c, s = setup(n)
    busy = [i for i, (_, _, free) in enumerate(gpus) if not free]
    if busy:
        c.bind(pod("busy", gpus=len(busy), cpu="1", policy=None), "n0", gpus=busy)
    for j, k in enumerate(pinned_before):  # pinned CPU-only pods, placed by the same rule on both sides
        want, pins = reference_numa_fit(gpus, cpu, "single-numa-node", 0, k * 1000)
        got = place(s, pod(f"pin{j}", cpu=str(k)))
        assert (got.node is not None) == (want is not None)
        for i, milli in pins.items():
            cpu[i][1] += milli
    want, _ = reference_numa_fit(gpus, cpu, policy, count, cpus * 1000)
    got = place(s, pod("x", gpus=count, cpu=str(cpus) if cpus else "500m", policy=policy))
    if not cpus:  # 500m is not whole CPUs: nothing pinned; the reference sees no CPU request
        want, _ = reference_numa_fit(gpus, cpu, policy, count, 0)
    assert (got.node is not None) == (want is not None), (got, want)
    if got.node is not None and count:
        assert got.gpus.indices == want
