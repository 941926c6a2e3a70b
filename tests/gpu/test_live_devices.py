"""The live cluster's GPU devices: the native device table and GPUDeviceFit against the pure-Python reference
(tests/gpu/fit_reference.py) by hypothesis, GPU indices in placements, explicit binds, and bad input leaving state
unchanged."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

import vcore
from tests.gpu.fit_reference import GpuUse, fit
from vcore._native import _core
from vcore.gpu import mig
from vcore.gpu.devices import Gpu, NodeGpus
from vcore.gpu.mig import MigInstance
from vcore.gpu.requests import GpuRequest
from vcore.gpu.specs import device_tuples, native_request
from vcore.types import GpuChoice

A40, A80, H80, T4 = "NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "Tesla-T4"
MEMORY = {A40: 40960, A80: 81920, H80: 81559, T4: 15360}
GPU_FIT_ONLY = {"filters": ["GPUDeviceFit"], "scores": []}


# ---------------------------------------------------------------------------------------------------------
# Native fit == reference fit, over random inventories and request sequences
# ---------------------------------------------------------------------------------------------------------


@st.composite
def layouts(draw, geometry: str) -> tuple[MigInstance, ...]:
    """A valid configured MIG layout (possibly empty = instances created on demand)."""
    taken: list[MigInstance] = []
    for name in draw(st.lists(st.sampled_from(sorted(mig.profiles_for(geometry))), max_size=4)):
        start = mig.can_place(geometry, taken, name)
        if start is not None:
            taken.append(MigInstance(name, start))
    return tuple(taken)


@st.composite
def inventories(draw) -> NodeGpus:
    devices = []
    for i in range(draw(st.integers(1, 8))):
        model = draw(st.sampled_from([A40, A80, H80, T4]))
        gpu = Gpu(i, model, MEMORY[model], draw(st.sampled_from([-1, 0, 1])), draw(st.sampled_from([-1, 0, 1])))
        if gpu.mig_geometry and draw(st.integers(0, 3)) == 0:
            gpu = Gpu(i, model, gpu.memory_mib, gpu.numa, gpu.nvlink_domain, True, draw(layouts(gpu.mig_geometry)))
        devices.append(gpu)
    return NodeGpus("n", devices[0].model, devices[0].memory_mib, "mixed", tuple(devices))


MODELS = st.sampled_from([None, None, ("A100",), ("H100", "T4"), ("A100-40GB",)])


@st.composite
def requests(draw) -> GpuRequest:
    kind = draw(st.sampled_from(["whole", "shared", "shared", "mig"]))
    models = draw(MODELS)
    if kind == "whole":
        return GpuRequest("whole", count=draw(st.integers(1, 4)), models=models)
    if kind == "mig":
        return GpuRequest(
            "mig",
            count=draw(st.integers(1, 3)),
            models=models,
            mig_profile=draw(st.sampled_from(sorted(mig.all_profile_names()))),
        )
    milli = draw(st.sampled_from([None, 0, 100, 250, 500, 700, 1000]))
    if milli is None:  # KAI gpu-memory: the share follows from the memory on each GPU
        return GpuRequest(
            "shared",
            count=draw(st.integers(1, 2)),
            milli=None,
            models=models,
            memory_mib=draw(st.sampled_from([1024, 8192, 20000, 40960])),
        )
    if draw(st.booleans()):
        return GpuRequest("shared", count=draw(st.integers(1, 2)), milli=milli, memory_milli=milli, models=models)
    return GpuRequest(
        "shared",
        count=draw(st.integers(1, 2)),
        milli=milli,
        models=models,
        memory_mib=draw(st.sampled_from([0, 2048, 16384, 40000])),
    )


def _use_after(node: NodeGpus, used: list[GpuUse], req: GpuRequest, choice: GpuChoice) -> None:
    for k, i in enumerate(choice.indices):
        u, g = used[i], node.devices[i]
        if req.kind == "whole":
            used[i] = GpuUse(exclusive=True)
        elif req.kind == "shared":
            used[i] = GpuUse(
                u.milli + req.milli_on(g.memory_mib),
                u.memory_mib + req.memory_on(g.memory_mib),
                shared_pods=u.shared_pods + 1,
            )
        else:
            used[i] = GpuUse(mig_instances=u.mig_instances + (MigInstance(req.mig_profile, choice.mig_starts[k]),))


def _state_with(node: NodeGpus):
    state = _core.ClusterState()
    state.add_node({"name": node.name, "allocatable": {"cpu": 64000, "pods": 1000}, "gpus": device_tuples(node)})
    return state, _core.Engine(state, GPU_FIT_ONLY, 0)


@settings(max_examples=300, deadline=None)
@given(node=inventories(), reqs=st.lists(requests(), min_size=1, max_size=12))
def test_native_fit_matches_reference(node, reqs):
    state, engine = _state_with(node)
    used = [GpuUse() for _ in node.devices]
    for k, req in enumerate(reqs):
        want = fit(node, used, req)
        spec = {"key": f"ns/p{k}", "requests": {"cpu": 1}}
        gpu = native_request(req)
        if gpu is not None:
            spec["gpu"] = gpu
        placed, _, held, _ = engine.schedule([state.compile_pod(spec)])
        got = vcore.cluster.gpu_choice(held[0]) if placed[0] >= 0 else None
        if gpu is None:
            assert placed[0] == 0
            continue
        assert got == want, (req, used)
        if want is not None:
            _use_after(node, used, req, want)
    snapshot = state.gpu_devices()
    assert list(snapshot["dev_exclusive"]) == [int(u.exclusive) for u in used]
    assert list(snapshot["dev_used_milli"]) == [1000 if u.exclusive else u.milli for u in used]


def test_unbinding_everything_frees_every_device():
    node = NodeGpus("n", A80, MEMORY[A80], "mixed", tuple(Gpu(i, A80, MEMORY[A80], mig_mode=i == 3) for i in range(4)))
    state, engine = _state_with(node)
    reqs = [
        GpuRequest("whole", count=2),
        GpuRequest("shared", count=1, milli=300, memory_milli=300),
        GpuRequest("mig", count=2, mig_profile="3g.40gb"),
    ]
    engine.schedule([state.compile_pod({"key": f"ns/p{k}", "gpu": native_request(r)}) for k, r in enumerate(reqs)])
    assert [state.pod_gpus(f"ns/p{k}") for k in range(3)] == [((0, -1), (1, -1)), ((2, -1),), ((3, 0), (3, 4))]
    for k in range(3):
        state.unbind(f"ns/p{k}")
    snap = state.gpu_devices()
    for key in ("dev_used_milli", "dev_used_memory_mib", "dev_shared_pods", "dev_exclusive", "dev_mig_compute_used"):
        assert not snap[key].any(), key


# ---------------------------------------------------------------------------------------------------------
# Through the public API: Kubernetes objects in, GPU indices out
# ---------------------------------------------------------------------------------------------------------


def gpu_node(name, n=4, product=A80, topology=None, mig_counts=None, cpu="64"):
    labels = {
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.memory": str(MEMORY[product]),
        "nvidia.com/gpu.count": str(n + (1 if mig_counts else 0)),
    }
    alloc = {"cpu": cpu, "memory": "512Gi", "pods": "110", "nvidia.com/gpu": str(n)}
    if mig_counts:
        labels["nvidia.com/mig.strategy"] = "mixed"
        alloc.update({f"nvidia.com/mig-{p}": str(c) for p, c in mig_counts.items()})
    meta = {"name": name, "labels": labels}
    if topology:
        meta["annotations"] = {"vcore.io/gpu-topology": json.dumps({"gpus": topology})}
    return {"metadata": meta, "status": {"allocatable": alloc}}


def gpu_pod(name, gpus=None, fraction=None, mig_profile=None, gpu_memory=None, cpu="1"):
    meta = {"name": name, "namespace": "ml"}
    limits = {}
    if gpus:
        limits["nvidia.com/gpu"] = str(gpus)
    if mig_profile:
        limits[f"nvidia.com/mig-{mig_profile}"] = "1"
    if gpu_memory:
        limits["volcano.sh/gpu-memory"] = str(gpu_memory)
    if fraction:
        meta["annotations"] = {"gpu-fraction": fraction}
    return {
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}, "limits": limits}}]},
    }


def test_whole_gpus_go_to_one_nvlink_domain_and_are_in_the_placement():
    topology = [{"index": i, "nvlink": [0, 1, 1, 0, 1][i], "numa": i // 3} for i in range(5)]
    cluster = vcore.Cluster()
    cluster.add_node(gpu_node("a", 5, topology=topology))
    sched = vcore.Scheduler(cluster)
    first, second = sched.schedule([gpu_pod("one", gpus=1), gpu_pod("three", gpus=3)])
    assert first.gpus == GpuChoice((0,))
    assert second.gpus == GpuChoice((1, 2, 4))  # the only three GPUs in one NVLink domain
    assert second.gpus.gpu_index_annotation() == "1,2,4"
    assert cluster.pod_gpus("ml/three") == second.gpus


def test_exclusive_and_shared_never_mix():
    cluster = vcore.Cluster()
    cluster.add_node(gpu_node("a", 2))
    sched = vcore.Scheduler(cluster)
    placed = sched.schedule([gpu_pod("half", fraction="0.5"), gpu_pod("whole", gpus=1), gpu_pod("two", gpus=1)])
    assert [p.gpus for p in placed[:2]] == [GpuChoice((0,)), GpuChoice((1,))]
    assert placed[2].node is None
    assert placed[2].reasons == {"node(s) had no free GPU devices that fit": 1}
    # GPUs that pods hold could be freed by evicting them: kube-scheduler's preemption would look at the node.
    assert placed[2].message == (
        "0/1 nodes are available: 1 node(s) had no free GPU devices that fit. no new claims "
        "to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found "
        "for incoming pod."
    )


def test_mig_instance_from_gfd_labels():
    cluster = vcore.Cluster()
    cluster.add_node(gpu_node("a", 1, mig_counts={"3g.40gb": 2}))
    sched = vcore.Scheduler(cluster)
    placed = sched.schedule([gpu_pod(f"m{i}", mig_profile="3g.40gb") for i in range(3)])
    assert [p.gpus for p in placed[:2]] == [GpuChoice((1,), (0,)), GpuChoice((1,), (4,))]
    assert placed[2].node is None


def test_gpu_model_constraint_by_node_affinity():
    cluster = vcore.Cluster()
    cluster.add_node(gpu_node("a100", 2, product=A80))
    cluster.add_node(gpu_node("h100", 2, product=H80))
    pod = gpu_pod("p", gpus=1)
    pod["metadata"]["annotations"] = {"vcore.io/gpu-models": "H100"}
    assert vcore.Scheduler(cluster).filter(pod).feasible == ["h100"]


def test_pods_without_gpus_ignore_the_device_table():
    cluster = vcore.Cluster()
    cluster.add_node(gpu_node("a", 1))
    placed = vcore.Scheduler(cluster).schedule([gpu_pod("cpu-only")])
    assert placed[0].node == "a" and placed[0].gpus is None
    assert cluster.pod_gpus("ml/cpu-only") is None


def test_bind_with_explicit_gpu_indices_and_conflicts():
    cluster = vcore.Cluster()
    cluster.add_node(gpu_node("a", 4))
    cluster.bind(gpu_pod("x", gpus=2), "a", gpus="1,3")
    assert cluster.pod_gpus("ml/x") == GpuChoice((1, 3))
    before = cluster.gpu_devices()
    with pytest.raises(ValueError, match=r"pod ml/y: node a: GPU 3: is not wholly free"):
        cluster.bind(gpu_pod("y", gpus=2), "a", gpus=[0, 3])
    with pytest.raises(ValueError, match=r"pod ml/z: GPU 7 does not exist on node a"):
        cluster.bind(gpu_pod("z", gpus=1), "a", gpus=[7])
    with pytest.raises(ValueError, match=r"needs 2"):
        cluster.bind(gpu_pod("w", gpus=2), "a", gpus=[0])
    with pytest.raises(TypeError, match=r"pod ml/v: gpus"):
        cluster.bind(gpu_pod("v", gpus=1), "a", gpus=["0"])
    after = cluster.gpu_devices()
    assert all((before[k] == after[k]).all() for k in before if k != "model_names")
    assert cluster.n_pods == 1


def test_running_pod_without_identifiable_devices_is_still_accounted():
    cluster = vcore.Cluster()
    cluster.add_node(gpu_node("a", 1))
    cluster.bind(gpu_pod("p1", gpus=1), "a")
    cluster.bind(gpu_pod("p2", gpus=1), "a")  # the kubelet runs it: resources count, devices are unknown
    assert cluster.pod_gpus("ml/p2") is None
    assert cluster.requested("nvidia.com/gpu")[0] == 2


def test_node_update_is_the_truth_about_its_gpus():
    cluster = vcore.Cluster()
    cluster.add_node(gpu_node("a", 4))
    cluster.bind(gpu_pod("x", gpus=2), "a", gpus=[1, 3])
    cluster.update_node(gpu_node("a", 6))  # growing keeps what pods hold
    snap = cluster.gpu_devices()
    assert snap["dev_offsets"].tolist() == [0, 6] and snap["dev_exclusive"].tolist() == [0, 1, 0, 1, 0, 0]
    cluster.update_node(gpu_node("a", 2))  # the device plugin reports fewer GPUs: GPU 3 is gone
    assert cluster.pod_gpus("ml/x") == GpuChoice((1,))
    assert cluster.gpu_devices()["dev_exclusive"].tolist() == [0, 1]
    assert cluster.requested("nvidia.com/gpu")[0] == 2  # the pod is still accounted by its resources
    cluster.unbind("ml/x")
    assert not cluster.gpu_devices()["dev_exclusive"].any()


def test_removed_node_releases_its_devices_and_slots_are_reused():
    cluster = vcore.Cluster()
    for name in ("a", "b"):
        cluster.add_node(gpu_node(name, 2))
    cluster.bind(gpu_pod("x", gpus=2), "a")
    assert cluster.remove_node("a", evict=True) == ["ml/x"]
    cluster.add_node(gpu_node("c", 3))
    snap = cluster.gpu_devices()
    assert snap["dev_offsets"].tolist() == [0, 3, 5]
    assert not snap["dev_exclusive"].any()


def test_bad_topology_annotation_names_node_and_field_and_changes_nothing():
    cluster = vcore.Cluster()
    bad = gpu_node("a", 2, topology=[{"index": 0, "numa": "zero"}])
    with pytest.raises(TypeError, match=r"node a: metadata.annotations\[vcore.io/gpu-topology\].gpus\[0\].numa"):
        cluster.add_node(bad)
    assert cluster.n_nodes == 0 and cluster.gpu_devices()["dev_offsets"].tolist() == [0]


@pytest.mark.parametrize(
    "pod, match",
    [
        pytest.param(gpu_pod("f", fraction="1.5"), r"pod ml/f: metadata.annotations\[gpu-fraction\]", id="fraction>1"),
        pytest.param(gpu_pod("m", mig_profile="9g.99gb"), r"pod ml/m: .*unknown MIG profile", id="unknown-mig-profile"),
        pytest.param(gpu_pod("g", gpu_memory="-5"), r"pod ml/g: .*volcano.sh/gpu-memory", id="negative-memory"),
    ],
)
def test_bad_gpu_requests_are_rejected_and_bind_nothing(pod, match):
    cluster = vcore.Cluster()
    cluster.add_node(gpu_node("a", 2))
    sched = vcore.Scheduler(cluster)
    with pytest.raises(ValueError, match=match):
        sched.schedule([gpu_pod("ok", gpus=1), pod])
    assert cluster.n_pods == 0


def test_native_rejects_inconsistent_specs_without_crashing():
    state = _core.ClusterState()
    with pytest.raises(ValueError, match=r"node n: gpus\[0\].memory_mib: must be >= 0"):
        state.add_node({"name": "n", "gpus": [("m", -1, -1, -1, False, 0, [])]})
    with pytest.raises(ValueError, match=r"node n: gpus\[0\].mig_layout: instances overlap"):
        state.add_node({"name": "n", "gpus": [("m", 1, -1, -1, True, 2, [(3, 0), (4, 0)])]})
    with pytest.raises(ValueError, match=r"node n: gpus\[0\]: in MIG mode but its model has no MIG geometry"):
        state.add_node({"name": "n", "gpus": [("m", 1, -1, -1, True, 0, [])]})
    with pytest.raises(ValueError, match=r"pod a/b: gpu request: count must be in 0..64"):
        state.compile_pod({"key": "a/b", "gpu": {"kind": 1, "count": 65}})
    with pytest.raises(ValueError, match=r"pod a/b: gpu request: exactly one of memory_mib and memory_milli"):
        state.compile_pod({"key": "a/b", "gpu": {"kind": 2, "count": 1, "milli": 10}})
    with pytest.raises(ValueError, match=r"pod a/b: gpu request: kind must be 0..3"):
        state.compile_pod({"key": "a/b", "gpu": {"kind": 9, "count": 1}})
    assert state.n_nodes == 0


def test_converter_marks_only_objects_that_may_have_gpus():
    from vcore._native._convert import node_spec, pod_spec

    assert pod_spec(gpu_pod("w", gpus=1))["may_use_gpus"] is True
    assert pod_spec(gpu_pod("f", fraction="0.5"))["may_use_gpus"] is True
    assert pod_spec(gpu_pod("v", gpu_memory=1024))["may_use_gpus"] is True
    assert "may_use_gpus" not in pod_spec(gpu_pod("cpu"))
    assert node_spec(gpu_node("a", 2))["may_have_gpus"] is True
    assert "may_have_gpus" not in node_spec({"metadata": {"name": "c"}, "status": {"allocatable": {"cpu": "4"}}})


def test_pool_nodes_share_one_parse_but_errors_name_each_node():
    cluster = vcore.Cluster()
    for name in ("a", "b"):
        cluster.add_node(gpu_node(name, 2, topology=[{"index": 1, "numa": 1}]))
    assert cluster.gpu_devices()["dev_numa"].tolist() == [-1, 1, -1, 1]
    for name in ("x", "y"):
        with pytest.raises(ValueError, match=rf"node {name}: .*GPU index 5 out of range"):
            cluster.add_node(gpu_node(name, 2, topology=[{"index": 5, "numa": 1}]))


def test_product_affinity_applies_per_gpu_on_mixed_model_nodes():
    # GFD labels the node with one product; the annotation says GPUs 0 and 1 are A100s. A pod that requires the
    # H100 product passes NodeAffinity on the node label and must then get the H100s only.
    topology = [{"index": i, "model": A80, "memory_mib": MEMORY[A80]} for i in (0, 1)]
    cluster = vcore.Cluster()
    cluster.add_node(gpu_node("mixed", 4, product=H80, topology=topology))
    pod = gpu_pod("h", gpus=2)
    pod["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In", "values": [H80]}]}
                ]
            }
        }
    }
    placed = vcore.Scheduler(cluster).schedule([pod, gpu_pod("any", gpus=2), gpu_pod("more", gpus=1)])
    assert [p.gpus for p in placed] == [GpuChoice((2, 3)), GpuChoice((0, 1)), None]
