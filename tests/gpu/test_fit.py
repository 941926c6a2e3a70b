"""The device-level fit reference: hand cases per request kind, the topology preference, errors, and a
hypothesis property against brute force (the choice has the capacity; None means no GPU set could host it)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings, strategies as st

from tests.gpu.fit_reference import GpuUse, fit, free_state
from vcore.gpu import mig
from vcore.gpu.devices import Gpu, NodeGpus
from vcore.gpu.mig import MigInstance
from vcore.gpu.requests import GpuRequest, pod_gpu_request
from vcore.types import GpuChoice

A40, A80, H80, V100 = (
    "NVIDIA-A100-SXM4-40GB",
    "NVIDIA-A100-SXM4-80GB",
    "NVIDIA-H100-80GB-HBM3",
    "Tesla-V100-SXM2-16GB",
)
MEMORY = {A40: 40960, A80: 81920, H80: 81559, V100: 16384}


def node(*gpus, name="n"):
    return NodeGpus(name, gpus[0].model if gpus else "", gpus[0].memory_mib if gpus else 0, "none", tuple(gpus))


def gpus(n, model=A80, numa=None, nvlink=None):
    return [Gpu(i, model, MEMORY[model], numa[i] if numa else -1, nvlink[i] if nvlink else -1) for i in range(n)]


def whole(n, **kw):
    return GpuRequest("whole", count=n, **kw)


def share(milli, memory_mib=None, memory_milli=None, count=1, **kw):
    if memory_mib is None and memory_milli is None:
        memory_milli = milli
    return GpuRequest("shared", count=count, milli=milli, memory_mib=memory_mib, memory_milli=memory_milli, **kw)


def migreq(profile, count=1, **kw):
    return GpuRequest("mig", count=count, mig_profile=profile, **kw)


# --- whole GPUs ---------------------------------------------------------------------------------------------


def test_whole_on_idle_node():
    assert fit(node(*gpus(4)), None, whole(2)) == GpuChoice((0, 1))
    assert fit(node(*gpus(4)), None, whole(4)) == GpuChoice((0, 1, 2, 3))
    assert fit(node(*gpus(4)), None, whole(5)) is None


def test_whole_needs_wholly_free_gpus():
    n = node(*gpus(4))
    used = [GpuUse(), GpuUse(milli=1), GpuUse(memory_mib=1), GpuUse(exclusive=True)]
    assert fit(n, used, whole(1)) == GpuChoice((0,))
    assert fit(n, used, whole(2)) is None


def test_whole_prefers_one_nvlink_domain_then_numa_then_low_indices():
    # GPUs 0-3 on NUMA 0, 4-7 on NUMA 1; NVLink domains interleave.
    n = node(*gpus(8, numa=[0, 0, 0, 0, 1, 1, 1, 1], nvlink=[0, 1, 0, 1, 0, 1, 0, 1]))
    assert fit(n, None, whole(2)).indices == (0, 2)  # one domain and one NUMA node
    used = [GpuUse(exclusive=True)] + [GpuUse()] * 7
    assert fit(n, used, whole(2)).indices == (1, 3)  # domain 1 on NUMA 0 beats 2+4 (domain 0, 2 NUMA)
    assert fit(n, None, whole(4)).indices == (0, 2, 4, 6)  # one domain beats one NUMA node
    assert fit(n, None, whole(5)).indices == (0, 1, 2, 3, 4)  # no single domain or node: lowest indices


def test_whole_numa_preference_without_nvlink():
    n = node(*gpus(4, numa=[0, 1, 1, 0]))
    assert fit(n, None, whole(2)).indices == (0, 3)
    assert fit(n, [GpuUse(milli=5)] + [GpuUse()] * 3, whole(2)).indices == (1, 2)


def test_unknown_topology_never_counts_as_one_domain():
    n = node(*gpus(4, nvlink=[-1, -1, 2, 2]))
    assert fit(n, None, whole(2)).indices == (2, 3)


def test_whole_skips_mig_gpus_and_honours_models():
    g = gpus(3)
    g[0] = Gpu(0, A80, MEMORY[A80], mig_mode=True)
    g[2] = Gpu(2, H80, MEMORY[H80])
    n = node(*g)
    assert fit(n, None, whole(2)) == GpuChoice((1, 2))
    assert fit(n, None, whole(1, models=("H100",))) == GpuChoice((2,))
    assert fit(n, None, whole(2, models=("A100",))) is None


def test_none_request_always_fits():
    assert fit(node(), None, GpuRequest("none")) == GpuChoice(())
    assert fit(node(), None, whole(1)) is None


# --- shared -------------------------------------------------------------------------------------------------


def test_fraction_needs_share_and_memory():
    n = node(*gpus(3, model=A40))
    used = [GpuUse(milli=600, memory_mib=1000), GpuUse(milli=400, memory_mib=30000), GpuUse(milli=100)]
    # 0.5 of a GPU = 500 milli and 20480 MiB: GPU 0 lacks share, GPU 1 lacks memory.
    assert fit(n, used, share(500)) == GpuChoice((2,))
    assert fit(n, used, share(400)) == GpuChoice((0,))
    assert fit(n, used, share(901)) is None


def test_fraction_never_on_exclusive_or_mig_gpu():
    n = node(Gpu(0, A80, 81920), Gpu(1, A80, 81920, mig_mode=True), Gpu(2, A80, 81920))
    used = [GpuUse(exclusive=True), GpuUse(), GpuUse(milli=900)]
    assert fit(n, used, share(100)) == GpuChoice((2,))
    assert fit(n, used, share(200)) is None


def test_memory_request_fits_by_memory():
    n = node(*gpus(2, model=A40))
    used = [GpuUse(milli=1000, memory_mib=40000), GpuUse(milli=1000, memory_mib=20000)]
    volcano = pod_gpu_request(
        {
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "resources": {"limits": {"volcano.sh/gpu-memory": "10240"}}}]},
        }
    )
    assert fit(n, used, volcano) == GpuChoice((1,))  # Volcano's memory share does not count compute
    assert fit(n, used, share(0, memory_mib=20961)) is None


def test_kai_gpu_memory_takes_share_per_gpu():
    n = node(Gpu(0, A40, 40960), Gpu(1, A80, 81920))
    req = share(None, memory_mib=20480)
    # On the 40 GB GPU 20480 MiB is 500 milli; on the 80 GB one 250.
    assert fit(n, [GpuUse(milli=600), GpuUse(milli=700)], req) == GpuChoice((1,))
    assert fit(n, [GpuUse(milli=500), GpuUse(milli=800)], req) == GpuChoice((0,))
    assert fit(n, [GpuUse(milli=501), GpuUse(milli=751)], req) is None


def test_vgpu_cores_and_number():
    n = node(*gpus(4, nvlink=[0, 1, 1, 0]))
    used = [GpuUse(milli=800), GpuUse(), GpuUse(milli=300), GpuUse()]
    req = share(300, memory_mib=1024, count=2)
    assert fit(n, used, req) == GpuChoice((1, 2))  # both fit and share NVLink domain 1
    req = share(800, memory_mib=1024, count=2)
    assert fit(n, used, req) == GpuChoice((1, 3))
    assert fit(n, used, share(800, memory_mib=1024, count=3)) is None


def test_shared_model_constraint():
    n = node(Gpu(0, V100, 16384), Gpu(1, H80, 81559))
    assert fit(n, None, share(100, models=("H100",))) == GpuChoice((1,))
    assert fit(n, None, share(100, models=("A100",))) is None


def test_unknown_device_memory_never_hosts_memory_sized_slice():
    n = node(Gpu(0, "", 0))
    assert fit(n, None, share(None, memory_mib=1)) is None
    assert fit(n, None, share(0, memory_mib=1)) is None
    assert fit(n, None, share(100, memory_milli=100)) == GpuChoice((0,))  # 10 % of unknown memory: 0 MiB


# --- MIG ----------------------------------------------------------------------------------------------------


def mig_gpu(i, model=A80, instances=(), **kw):
    return Gpu(
        i, model, MEMORY[model], mig_mode=True, mig_instances=tuple(MigInstance(p, s) for p, s in instances), **kw
    )


def test_mig_dynamic_places_lowest_start():
    n = node(mig_gpu(0), mig_gpu(1))
    used = [GpuUse(mig_instances=(MigInstance("4g.40gb", 0),)), GpuUse()]
    assert fit(n, used, migreq("3g.40gb")) == GpuChoice((0,), (4,))
    assert fit(n, used, migreq("4g.40gb")) == GpuChoice((1,), (0,))
    assert fit(n, used, migreq("3g.40gb", count=3)) == GpuChoice((0, 1, 1), (4, 0, 4))
    assert fit(n, used, migreq("3g.40gb", count=4)) is None
    assert fit(n, used, migreq("7g.80gb", count=2)) is None


def test_mig_profile_must_exist_on_the_model():
    n = node(mig_gpu(0, model=A40), mig_gpu(1, model=H80))
    assert fit(n, None, migreq("1g.5gb")) == GpuChoice((0,), (0,))
    assert fit(n, None, migreq("1g.20gb")) == GpuChoice((1,), (0,))
    assert fit(n, None, migreq("3g.40gb", models=("A100",))) is None
    assert fit(n, None, migreq("1g.10gb")) == GpuChoice((0,), (0,))  # 1g.10gb exists on both geometries
    assert fit(n, None, migreq("1g.10gb", models=("H100",))) == GpuChoice((1,), (0,))


def test_mig_never_on_non_mig_gpu():
    assert fit(node(*gpus(2)), None, migreq("1g.10gb")) is None


def test_mig_static_layout_uses_configured_instances():
    n = node(mig_gpu(0, instances=[("3g.40gb", 0), ("2g.20gb", 4), ("1g.10gb", 6)]))
    used = [GpuUse(mig_instances=(MigInstance("3g.40gb", 0),))]
    assert fit(n, used, migreq("2g.20gb")) == GpuChoice((0,), (4,))
    assert fit(n, used, migreq("3g.40gb")) is None  # geometry would allow 4, but that instance is not configured
    assert fit(n, used, migreq("1g.10gb")) == GpuChoice((0,), (6,))
    assert fit(n, used, migreq("1g.10gb", count=2)) is None


def test_mig_request_from_pod():
    pod = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/mig-2g.20gb": "2"}}}]},
    }
    n = node(mig_gpu(0, model=H80))
    assert fit(n, None, pod_gpu_request(pod)) == GpuChoice((0, 0), (0, 2))
    assert GpuChoice((0, 0), (0, 2)).gpu_index_annotation() == "0"
    assert GpuChoice((1, 3)).gpu_index_annotation() == "1,3"


# --- errors -------------------------------------------------------------------------------------------------

BAD = [
    ("length", gpus(2), [GpuUse()], whole(1), ValueError, r"node n: used_state: 1 entries for 2 GPUs"),
    ("type", gpus(1), [{}], whole(1), TypeError, r"used_state\[0\]: expected GpuUse, got dict"),
    ("milli<0", gpus(1), [GpuUse(milli=-1)], whole(1), ValueError, r"used_state\[0\].milli: must be a non-negative"),
    ("milli>1000", gpus(1), [GpuUse(milli=1001)], whole(1), ValueError, r"used_state\[0\].milli: must be <= 1000"),
    ("memory-float", gpus(1), [GpuUse(memory_mib=1.5)], whole(1), ValueError, r"memory_mib: must be a non-negative"),
    (
        "memory>gpu",
        gpus(1),
        [GpuUse(memory_mib=90000)],
        whole(1),
        ValueError,
        r"used_state\[0\].memory_mib: 90000 exceeds the GPU's 81920 MiB",
    ),
    (
        "mig-on-plain",
        gpus(1),
        [GpuUse(mig_instances=(MigInstance("1g.10gb", 0),))],
        whole(1),
        ValueError,
        "GPU 0 is not in MIG mode",
    ),
    ("shared-on-mig", [mig_gpu(0)], [GpuUse(milli=5)], whole(1), ValueError, "GPU 0 is in MIG mode"),
    (
        "bad-mig-layout",
        [mig_gpu(0)],
        [GpuUse(mig_instances=(MigInstance("4g.40gb", 0), MigInstance("1g.10gb", 3)))],
        whole(1),
        ValueError,
        r"used_state\[0\].mig_instances: .*overlaps",
    ),
    (
        "not-configured",
        [mig_gpu(0, instances=[("7g.80gb", 0)])],
        [GpuUse(mig_instances=(MigInstance("1g.10gb", 0),))],
        whole(1),
        ValueError,
        "1g.10gb at 0 is not one of GPU 0's configured MIG instances",
    ),
    ("mig-no-geometry", [Gpu(0, V100, 16384, mig_mode=True)], None, migreq("1g.10gb"), None, None),
    ("unknown-profile", [mig_gpu(0)], None, migreq("9g.9gb"), ValueError, "unknown MIG profile '9g.9gb'"),
    ("bad-kind", gpus(1), None, GpuRequest("fractional", count=1), ValueError, "request.kind: must be one of"),
    ("bad-count", gpus(1), None, GpuRequest("whole", count=-1), ValueError, "request.count: must be a non-negative"),
]


@pytest.mark.parametrize("devs,used,req,exc,match", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_errors(devs, used, req, exc, match):
    if exc is None:  # a MIG GPU the geometry table does not know simply hosts no MIG request
        assert fit(node(*devs), used, req) is None
        return
    with pytest.raises(exc, match=match):
        fit(node(*devs), used, req)


def test_mig_mode_without_geometry_in_used_state():
    with pytest.raises(ValueError, match=r"in MIG mode but has no MIG geometry"):
        fit(node(Gpu(0, V100, 16384, mig_mode=True)), [GpuUse()], migreq("1g.10gb"))


def test_type_errors():
    with pytest.raises(TypeError, match="node_gpus: expected NodeGpus"):
        fit([], None, whole(1))
    with pytest.raises(TypeError, match="request: expected GpuRequest"):
        fit(node(*gpus(1)), None, {"kind": "whole"})


def test_free_state():
    assert free_state(node(*gpus(2))) == (GpuUse(), GpuUse())


# --- property: fit against brute force ---------------------------------------------------------------------

MODELS = [A40, A80, H80, V100]


@st.composite
def scenarios(draw):
    n = draw(st.integers(0, 6))
    devices, used = [], []
    for i in range(n):
        model = draw(st.sampled_from(MODELS))
        numa = draw(st.sampled_from([-1, 0, 1]))
        nvlink = draw(st.sampled_from([-1, 0, 1, 2]))
        geometry = mig.mig_model(model)
        if geometry and draw(st.booleans()):
            names = sorted(mig.profiles_for(geometry))
            configured: list[MigInstance] = []
            if draw(st.booleans()):  # a static layout
                for name in draw(st.lists(st.sampled_from(names), max_size=6)):
                    s = mig.can_place(geometry, configured, name)
                    if s is not None:
                        configured.append(MigInstance(name, s))
                in_use = tuple(x for x in configured if draw(st.booleans()))
            else:
                taken: list[MigInstance] = []
                for name in draw(st.lists(st.sampled_from(names), max_size=5)):
                    starts = mig.free_starts(geometry, taken, name)
                    if starts:
                        taken.append(MigInstance(name, draw(st.sampled_from(starts))))
                in_use = tuple(taken)
            devices.append(Gpu(i, model, MEMORY[model], numa, nvlink, True, tuple(configured)))
            used.append(GpuUse(mig_instances=in_use))
            continue
        devices.append(Gpu(i, model, MEMORY[model], numa, nvlink))
        kind = draw(st.sampled_from(["free", "free", "exclusive", "shared"]))
        if kind == "free":
            used.append(GpuUse())
        elif kind == "exclusive":
            used.append(GpuUse(exclusive=True))
        else:
            used.append(GpuUse(milli=draw(st.integers(0, 1000)), memory_mib=draw(st.integers(0, MEMORY[model]))))
    models = draw(
        st.one_of(
            st.none(), st.lists(st.sampled_from(["A100", "H100", "V100", "80GB"]), min_size=1, max_size=2).map(tuple)
        )
    )
    kind = draw(st.sampled_from(["whole", "shared", "shared_mem", "mig"]))
    if kind == "whole":
        req = GpuRequest("whole", count=draw(st.integers(1, 4)), models=models)
    elif kind == "shared":
        milli = draw(st.integers(1, 1000))
        req = GpuRequest("shared", count=draw(st.integers(1, 3)), milli=milli, memory_milli=milli, models=models)
    elif kind == "shared_mem":
        req = GpuRequest(
            "shared",
            count=draw(st.integers(1, 2)),
            milli=draw(st.one_of(st.none(), st.integers(0, 1000))),
            memory_mib=draw(st.integers(1, 50000)),
            models=models,
        )
    else:
        req = GpuRequest(
            "mig",
            count=draw(st.integers(1, 4)),
            models=models,
            mig_profile=draw(st.sampled_from(sorted(mig.all_profile_names()))),
        )
    return node(*devices), tuple(used), req


def _device_ok(g: Gpu, u: GpuUse, req: GpuRequest) -> bool:
    """Independent statement of the per-GPU rule for whole and shared requests."""
    if g.mig_mode or not req.allows(g.model):
        return False
    if req.kind == "whole":
        return u == GpuUse()
    if u.exclusive:
        return False
    if req.milli is not None:
        need_milli = req.milli
    elif g.memory_mib == 0:
        return False
    else:
        need_milli = -(-req.memory_mib * 1000 // g.memory_mib)
    need_mem = req.memory_mib if req.memory_mib is not None else -(-req.memory_milli * g.memory_mib // 1000)
    return u.milli + need_milli <= 1000 and u.memory_mib + need_mem <= g.memory_mib


def _key(chosen):
    def one(vals):
        return len(vals) <= 1 or (vals[0] != -1 and len(set(vals)) == 1)

    return (
        not one([g.nvlink_domain for g in chosen]),
        not one([g.numa for g in chosen]),
        tuple(g.index for g in chosen),
    )


def _mig_free_placements(n: NodeGpus, used, req):
    """Every (gpu, start) where one instance of the profile could go, by slice sets (no bit masks)."""
    out = []
    for g, u in zip(n.devices, used):
        geometry = mig.mig_model(g.model, g.memory_mib)
        if not g.mig_mode or not req.allows(g.model) or geometry is None:
            continue
        profiles = mig.profiles_for(geometry)
        if req.mig_profile not in profiles:
            continue
        p = profiles[req.mig_profile]
        busy_c, busy_m = set(), set()
        for x in u.mig_instances:
            q = profiles[x.profile]
            busy_c |= set(range(x.start, x.start + q.compute_slices))
            busy_m |= set(range(x.start, x.start + q.memory_slices))
        for s in p.starts:
            if g.mig_instances and (
                MigInstance(p.name, s) not in g.mig_instances or MigInstance(p.name, s) in u.mig_instances
            ):
                continue
            if busy_c & set(range(s, s + p.compute_slices)) or busy_m & set(range(s, s + p.memory_slices)):
                continue
            out.append((g.index, s))
    return out


@settings(max_examples=600, deadline=None)
@given(scenarios())
def test_fit_matches_brute_force(scenario):
    n, used, req = scenario
    choice = fit(n, used, req)
    if req.kind in ("whole", "shared"):
        ok = [g for g, u in zip(n.devices, used) if _device_ok(g, u, req)]
        sets = list(itertools.combinations(ok, req.count))
        if not sets:
            assert choice is None
            return
        assert choice is not None
        # The choice really has the capacity, on distinct GPUs ...
        assert len(set(choice.indices)) == req.count
        assert all(_device_ok(n.devices[i], used[i], req) for i in choice.indices)
        # ... and is the preferred set among all that fit.
        assert _key([n.devices[i] for i in choice.indices]) == min(_key(s) for s in sets)
    else:
        free = _mig_free_placements(n, used, req)
        # One profile's placements are pairwise disjoint, so any `count` free placements fit together.
        if len(free) < req.count:
            assert choice is None
            return
        assert choice is not None
        assert list(zip(choice.indices, choice.mig_starts)) == free[: req.count]
        for i in set(choice.indices):  # together with what is in use, each GPU's layout stays valid
            geometry = mig.mig_model(n.devices[i].model)
            new = [MigInstance(req.mig_profile, s) for j, s in zip(choice.indices, choice.mig_starts) if j == i]
            mig.validate_layout(geometry, [*used[i].mig_instances, *new])
