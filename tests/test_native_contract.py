"""Contract of the compiled module vcore._native._core (the pybind11 boundary).

Covers: the hand-written stub _core.pyi matches the compiled module (public names of the module, its classes and
the ``gpu`` submodule; which members are properties; parameter names, positional-only parameters and defaults
as pybind11 reports them); views share memory, are read-only (writing raises ValueError) and keep their buffers
alive; wrong value types in spec dicts raise instead of being converted; the C++ reason table
(_core.reason_names) equals vcore.reasons.FIXED_REASONS + "Insufficient <resource>" per resource axis; the GIL is
released during long kernels (a second thread makes progress strictly inside the call window); results are
identical across runs and across fresh clusters; and garbage fed to every entry point raises a Python exception
and never crashes the interpreter (run in a subprocess, resumed past any crash so every crasher is reported).
No timing is asserted.
"""

from __future__ import annotations

import ast
import gc
import json
import os
import random
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from vcore import reasons
from vcore._native import _core

ROOT = Path(__file__).resolve().parents[1]
STUB = ROOT / "src" / "vcore" / "_native" / "_core.pyi"
GIB = 2**30

DEFAULT_PROFILE = {
    "filters": ["NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodeResourcesFit"],
    "scores": [
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodeResourcesFit", 1),
        ("NodeResourcesBalancedAllocation", 1),
    ],
    "fit": {"strategy": "LeastAllocated", "resources": [("cpu", 1), ("memory", 1)]},
    "balanced": {"resources": [("cpu", 1), ("memory", 1)]},
    "percentage_of_nodes_to_score": 100,
}


def node(name: str, cpu: int = 4000, mem: int = 8 * GIB, **kw) -> dict:
    spec = {
        "name": name,
        "labels": [],
        "allocatable": {"cpu": cpu, "memory": mem, "pods": 110},
        "taints": [],
        "unschedulable": False,
    }
    spec.update(kw)
    return spec


def pod(key: str, cpu: int = 100, mem: int = 2**20, **kw) -> dict:
    spec = {
        "key": key,
        "requests": {"cpu": cpu, "memory": mem},
        "nonzero_cpu_milli": cpu,
        "nonzero_mem_bytes": mem,
        "node_selector": [],
        "required_terms": None,
        "preferred_terms": [],
        "tolerations": [],
        "priority": 0,
    }
    spec.update(kw)
    return spec


# =============================================================================================================
# The stub matches the compiled module
# =============================================================================================================
def _stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text(encoding="utf-8"))


def _public(name: str) -> bool:
    return not name.startswith("_")


def _stub_top_level(tree: ast.Module) -> dict[str, ast.AST]:
    out: dict[str, ast.AST] = {}
    for item in tree.body:
        if isinstance(item, (ast.ClassDef, ast.FunctionDef)):
            out[item.name] = item
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            out[item.target.id] = item
        elif isinstance(item, ast.Assign):
            for target in item.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = item
    return out


def _stub_members(cls: ast.ClassDef) -> dict[str, ast.AST]:
    return {item.name: item for item in cls.body if isinstance(item, (ast.FunctionDef, ast.ClassDef))}


def _decorators(fn: ast.FunctionDef) -> set[str]:
    return {ast.unparse(d) for d in fn.decorator_list}


def _runtime_public(obj) -> set[str]:
    return {n for n in dir(obj) if _public(n)}


def _stub_public(members: dict[str, ast.AST]) -> set[str]:
    return {n for n in members if _public(n)}


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def runtime_params(func, name: str) -> list[tuple[str, str | None]]:
    """(name, default text or None) of a pybind11 function from its generated signature, without self."""
    first = (func.__doc__ or "").strip().splitlines()[0]
    assert first.startswith(name + "("), first
    depth, end = 0, None
    for i, ch in enumerate(first[len(name) :], len(name)):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            end = i
            break
    params = []
    for part in _split_top_level(first[len(name) + 1 : end]):
        pname = part.split(":", 1)[0].strip()
        default = part.rsplit(" = ", 1)[1].strip() if " = " in part else None
        if pname != "self":
            params.append((pname, default))
    return params


def stub_params(fn: ast.FunctionDef, method: bool) -> list[tuple[str, bool, str | None]]:
    """(name, positional-only, default text or None), without self."""
    args = fn.args
    positional = [(a.arg, True) for a in args.posonlyargs] + [(a.arg, False) for a in args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + [ast.unparse(d) for d in args.defaults]
    out = [(n, po, d) for (n, po), d in zip(positional, defaults)]
    assert not args.vararg and not args.kwarg and not args.kwonlyargs, fn.name
    if method:
        assert out and out[0][0] == "self", fn.name
        out = out[1:]
    return out


def _compare_signature(func, fn: ast.FunctionDef, name: str, method: bool) -> None:
    runtime = runtime_params(func, name)
    stub = stub_params(fn, method)
    assert len(runtime) == len(stub), (name, runtime, stub)
    for (rname, rdefault), (sname, positional_only, sdefault) in zip(runtime, stub):
        if rname.startswith("arg") and rname[3:].isdigit():
            assert positional_only, f"{name}: {sname} must be positional-only (pybind11 calls it {rname})"
        else:
            assert (sname, positional_only) == (rname, False), f"{name}: stub {sname} vs runtime {rname}"
        assert rdefault == sdefault, f"{name}({rname}): default {sdefault} in the stub, {rdefault} at runtime"


CLASSES = ["ClusterState", "CompiledPod", "Engine"]


def test_stub_module_names_match():
    top = _stub_top_level(_stub_tree())
    assert _stub_public(top) == _runtime_public(_core)


@pytest.mark.parametrize(
    "path",
    [
        "ClusterState",
        "CompiledPod",
        "Engine",
        "gpu",
        "gpu.GpuInventory",
        "topology",
        "routing",
        "routing.Policy",
        "routing.Router",
    ],
)
def test_stub_class_members_match(path):
    node_ = _stub_top_level(_stub_tree())[path.split(".")[0]]
    runtime = getattr(_core, path.split(".")[0])
    for part in path.split(".")[1:]:
        node_ = _stub_members(node_)[part]
        runtime = getattr(runtime, part)
    assert isinstance(node_, ast.ClassDef)
    members = _stub_members(node_)
    assert _stub_public(members) == _runtime_public(runtime), path
    if isinstance(runtime, type):
        # A Python constructor exists exactly when the stub declares one (CompiledPod has none: pybind11 leaves
        # the default slot that raises TypeError "No constructor defined!").
        bound_init = (getattr(runtime.__dict__.get("__init__"), "__doc__", "") or "").startswith("__init__(")
        assert ("__init__" in members) == bound_init, path


@pytest.mark.parametrize(
    "path", ["ClusterState", "CompiledPod", "Engine", "gpu.GpuInventory", "routing.Policy", "routing.Router"]
)
def test_stub_properties_and_methods_match(path):
    node_ = _stub_top_level(_stub_tree())[path.split(".")[0]]
    runtime = getattr(_core, path.split(".")[0])
    for part in path.split(".")[1:]:
        node_ = _stub_members(node_)[part]
        runtime = getattr(runtime, part)
    for name, fn in _stub_members(node_).items():
        if name != "__init__" and not _public(name):
            continue
        attr = runtime.__dict__[name]
        if "property" in _decorators(fn):
            assert isinstance(attr, property), f"{path}.{name} is not a property at runtime"
            assert attr.fset is None, f"{path}.{name} is writable at runtime"
        else:
            assert not isinstance(attr, property), f"{path}.{name} is a property at runtime"
            _compare_signature(getattr(runtime, name), fn, name, method=True)


def test_stub_function_signatures_match():
    top = _stub_top_level(_stub_tree())
    _compare_signature(_core.reason_names, top["reason_names"], "reason_names", method=False)
    for name in (
        "volumes_put",
        "volumes_remove",
        "volume_assumption",
        "volume_assumed_pods",
        "volume_rejection",
        "volume_pv_fits",
        "volume_claim_users",
        "volume_objects",
    ):
        _compare_signature(getattr(_core, name), top[name], name, method=False)
    for sub in ("gpu", "topology", "routing"):
        for name, fn in _stub_members(top[sub]).items():
            if isinstance(fn, ast.FunctionDef):
                assert "staticmethod" in _decorators(fn), name
                _compare_signature(getattr(getattr(_core, sub), name), fn, name, method=False)


def test_stub_signature_checker_catches_a_mismatch():
    fn = ast.parse("def unbind(self, key): ...").body[0]
    with pytest.raises(AssertionError, match="positional-only"):
        _compare_signature(_core.ClusterState.unbind, fn, "unbind", method=True)
    fn = ast.parse("def remove_node(self, name: str, evict: bool = True) -> list[str]: ...").body[0]
    with pytest.raises(AssertionError, match="default"):
        _compare_signature(_core.ClusterState.remove_node, fn, "remove_node", method=True)


def test_stub_imports_only_native_and_third_party():
    for item in ast.walk(_stub_tree()):
        if isinstance(item, ast.ImportFrom) and item.module and item.module.startswith("vcore"):
            assert item.module.startswith("vcore._native"), item.module


# =============================================================================================================
# Views
# =============================================================================================================
@pytest.fixture
def state() -> _core.ClusterState:
    s = _core.ClusterState()
    for i in range(3):
        s.add_node(node(f"n{i}"))
    return s


VIEWS = ["allocatable", "requested", "nonzero_requested", "live_mask"]


@pytest.mark.parametrize("name", VIEWS)
def test_views_are_read_only(state, name):
    view = getattr(state, name)
    assert not view.flags.writeable and not view.flags.owndata
    with pytest.raises(ValueError):
        view[..., 0] = 1
    with pytest.raises(ValueError):
        view.setflags(write=True)
    with pytest.raises(ValueError):
        np.copyto(view, 0)
    assert view.base is not None


def test_view_shapes_and_dtypes(state):
    r, n = len(state.resource_names()), state.n_slots
    assert state.allocatable.shape == state.requested.shape == (r, n)
    assert state.nonzero_requested.shape == (2, n)
    assert state.live_mask.shape == (n,)
    assert state.allocatable.dtype == state.requested.dtype == state.nonzero_requested.dtype == np.int64
    assert state.live_mask.dtype == np.bool_


def test_views_share_memory(state):
    generation = state.generation
    a1, a2 = state.allocatable, state.allocatable
    assert np.shares_memory(a1, a2)
    r1, nz1, live1 = state.requested, state.nonzero_requested, state.live_mask
    state.bind(state.compile_pod(pod("ns/p", 300, 5)), 1)
    assert state.generation == generation
    assert r1[0, 1] == 300 and r1[1, 1] == 5 and r1[3, 1] == 1  # the pods row counts pods
    assert nz1[:, 1].tolist() == [300, 5]
    state.update_node(node("n1", cpu=1234))
    assert a1[0, 1] == 1234 and a2[0, 1] == 1234
    state.remove_node("n2")
    assert live1.tolist() == [True, True, False]
    assert not a1[:, 2].any()


def test_views_keep_buffers_alive(state):
    state.bind(state.compile_pod(pod("ns/p", 300, 5)), 0)
    alloc, req, live = state.allocatable, state.requested, state.live_mask
    del state
    gc.collect()
    junk = [np.ones(10_000, dtype=np.int64) for _ in range(50)]  # reuse freed memory if it was freed
    assert alloc[0].tolist() == [4000] * 3 and req[0].tolist() == [300, 0, 0] and live.all()
    del junk


def test_stale_view_after_growth_stays_readable(state):
    old, generation = state.requested, state.generation
    i = 0
    while state.generation == generation:
        state.add_node(node(f"grow{i}"))
        i += 1
    state.bind(state.compile_pod(pod("ns/p", 300, 5)), 0)
    assert old.shape == (len(state.resource_names()), 3) and old[0, 0] == 0
    assert state.requested[0, 0] == 300


@pytest.mark.parametrize("kind", ["CompiledPod", "DetachedPod"])
def test_objects_only_the_core_makes_cannot_be_made_from_python(kind):
    """Made with __new__ (or as a subclass), such an object would reach the core as uninitialized storage."""
    cls = getattr(_core, kind)

    class Sub(cls):
        pass

    for make in (lambda: cls(), lambda: cls.__new__(cls), lambda: Sub(), lambda: Sub.__new__(Sub)):
        with pytest.raises(TypeError):
            make()


@pytest.mark.parametrize("bad", [1.5, "4000", None, 2**63, -(2**64), [1], np.float64(2.0)], ids=repr)
def test_wrong_value_type_raises_instead_of_converting(state, bad):
    before = state.allocatable.copy()
    with pytest.raises(TypeError):
        state.add_node(node("x", cpu=bad) if bad is not None else {"name": "x", "allocatable": {"cpu": bad}})
    with pytest.raises(TypeError):
        state.compile_pod(pod("ns/x", cpu=bad))
    assert np.array_equal(state.allocatable, before) and state.n_nodes == 3


def test_numpy_integers_are_accepted(state):
    assert state.add_node(node("np", cpu=np.int64(2000), mem=np.int32(7))) == 3
    assert state.allocatable[:2, 3].tolist() == [2000, 7]


def test_gpu_wrong_dtype_raises():
    gpu = _core.gpu
    ok = dict(
        cpu_milli=np.array([8000], np.int64),
        memory=np.array([1], np.int64),
        node_model=np.array([0], np.int32),
        dev_offsets=np.array([0, 1], np.int32),
        dev_free_milli=np.array([1000], np.int32),
    )
    gpu.GpuInventory(**ok)
    with pytest.raises(TypeError):
        gpu.GpuInventory(**{**ok, "cpu_milli": np.array([8000.5])})
    with pytest.raises(TypeError):
        gpu.GpuInventory(**{**ok, "dev_free_milli": np.array(["1000"])})


# =============================================================================================================
# Reason table
# =============================================================================================================
def test_reason_table_matches_python(state):
    def expected():
        plugin_reasons = _core.reason_names(state)[
            len(reasons.FIXED_REASONS) : len(_core.reason_names(state)) - len(state.resource_names())
        ]
        assert "node(s) didn't match the requested node name" in plugin_reasons  # NodeName's, a node plugin
        return [*reasons.FIXED_REASONS, *plugin_reasons, *(reasons.insufficient(r) for r in state.resource_names())]

    assert _core.reason_names(state) == expected()
    assert state.resource_names()[:4] == ["cpu", "memory", "ephemeral-storage", "pods"]
    state.add_node(node("g", allocatable={"pods": 110, "nvidia.com/gpu": 4, "hugepages-1Gi": GIB}))
    state.compile_pod(pod("ns/p", requests={"example.com/foo": 1}))
    names = _core.reason_names(state)
    assert names == expected()
    assert names[-3:] == ["Insufficient nvidia.com/gpu", "Insufficient hugepages-1Gi", "Insufficient example.com/foo"]
    engine = _core.Engine(state, DEFAULT_PROFILE, 0)
    assert engine.n_reasons == len(names)
    _, _, counts = engine.evaluate(state.compile_pod(pod("ns/q", requests={"nvidia.com/gpu": 1})))
    assert counts.shape == (len(names),)
    assert reasons.reason_counts(counts, names) == {"Insufficient nvidia.com/gpu": 3}


def test_every_native_node_plugin_has_its_python_half():
    from vcore import plugins

    native = {name for name, p in plugins.PLUGINS.items() if p.native_args is not None}
    assert set(_core.node_plugins()) == native


def test_reason_codes_used_by_the_kernels(state):
    state.update_node(node("n0", unschedulable=True))
    state.update_node(node("n1", taints=[("k", "", "NoSchedule")]))
    state.update_node(node("n2", labels=[("zone", "b")]))
    state.add_node(node("n3", cpu=10))
    state.add_node(node("n4", allocatable={"cpu": 4000, "memory": GIB, "pods": 0}))
    engine = _core.Engine(state, DEFAULT_PROFILE, 0)
    names = _core.reason_names(state)
    _, _, counts = engine.evaluate(state.compile_pod(pod("ns/p", 100, 1, node_selector=[("zone", "b")])))
    by_name = {names[i]: int(c) for i, c in enumerate(counts) if c}
    assert by_name == {reasons.UNSCHEDULABLE: 1, reasons.UNTOLERATED_TAINT: 1, reasons.AFFINITY_MISMATCH: 2}
    _, _, counts = engine.evaluate(state.compile_pod(pod("ns/q", 100, 1)))
    by_name = {names[i]: int(c) for i, c in enumerate(counts) if c}
    assert by_name == {
        reasons.UNSCHEDULABLE: 1,
        reasons.UNTOLERATED_TAINT: 1,
        "Insufficient cpu": 1,
        reasons.TOO_MANY_PODS: 1,
    }


# =============================================================================================================
# GIL
# =============================================================================================================
N_BIG = 50_000


@pytest.fixture(scope="module")
def big():
    """N_BIG nodes (3 zones, every 7th tainted PreferNoSchedule), an engine and two pods (plain; with affinity)."""
    s = _core.ClusterState()
    for i in range(N_BIG):
        s.add_node(
            node(
                f"n{i:05d}",
                cpu=4000 + (i % 5) * 1000,
                labels=[("zone", "abc"[i % 3])],
                taints=[("spot", "", "PreferNoSchedule")] if i % 7 == 0 else [],
            )
        )
    engine = _core.Engine(s, DEFAULT_PROFILE, 7)
    plain = s.compile_pod(pod("ns/plain", 500, GIB))
    affine = s.compile_pod(
        pod(
            "ns/affine",
            500,
            GIB,
            required_terms=[{"expressions": [("zone", "In", ["a", "b"])], "fields": []}],
            preferred_terms=[(10, {"expressions": [("zone", "In", ["a"])], "fields": []})],
        )
    )
    return s, engine, plain, affine


def released_gil(call) -> bool:
    """Whether ``call`` runs its kernel without the GIL, proven by the native probe rather than by timing.

    The armed probe stops the kernel at its probe point (inside the GIL-released block) until this thread lets it
    go. This thread is Python: it can only do so if the kernel really released the GIL. A kernel that kept it would
    wait out the probe's deadline, which the probe records, and this returns False.
    """
    _core._nogil_probe_arm()
    done, errors = threading.Event(), []

    def run():
        try:
            call()
        except BaseException as e:  # noqa: BLE001 - re-raised below
            errors.append(e)
        finally:
            done.set()

    worker = threading.Thread(target=run)
    try:
        worker.start()
        while not done.wait(0.001):
            if _core._nogil_probe_state() == 2:  # the kernel waits at its probe point, and we could run
                _core._nogil_probe_release()
        worker.join()
        if errors:
            raise errors[0]
        return _core._nogil_probe_state() == 3
    finally:
        _core._nogil_probe_reset()


def test_gil_probe_sees_nothing_for_a_call_without_a_kernel():
    """Control: a long C call that never reaches a kernel's probe point (sorting a big list) proves nothing."""
    data = list(range(300_000, 0, -1))
    assert not released_gil(lambda: sorted(data))


def test_gil_released_during_evaluate(big):
    s, engine, plain, affine = big
    assert released_gil(lambda: engine.evaluate(affine))
    assert released_gil(lambda: engine.evaluate(plain))


def test_gil_released_during_schedule():
    s = _core.ClusterState()
    for i in range(20_000):
        s.add_node(node(f"n{i:05d}"))
    engine = _core.Engine(s, DEFAULT_PROFILE, 0)
    batches = iter([s.compile_pods([pod(f"b{b}/p{i}", 10, 1) for i in range(30)]) for b in range(20)])
    assert released_gil(lambda: engine.schedule(next(batches)))


# =============================================================================================================
# Determinism
# =============================================================================================================
def random_inputs(seed: int, n_nodes: int, n_pods: int) -> tuple[list[dict], list[dict]]:
    rng = random.Random(seed)
    nodes = []
    for i in range(n_nodes):
        alloc = {"cpu": rng.choice([2000, 4000, 8000]), "memory": rng.choice([4, 8, 16]) * GIB, "pods": 110}
        if rng.random() < 0.2:
            alloc["nvidia.com/gpu"] = rng.choice([1, 2, 8])
        taints = [("spot", "", rng.choice(["NoSchedule", "PreferNoSchedule"]))] if rng.random() < 0.15 else []
        nodes.append(
            node(
                f"n{i:05d}",
                allocatable=alloc,
                labels=[("zone", rng.choice("abc"))],
                taints=taints,
                unschedulable=rng.random() < 0.03,
            )
        )
    pods = []
    for i in range(n_pods):
        requests = {"cpu": rng.choice([0, 100, 500, 1000]), "memory": rng.choice([0, 2**20, GIB])}
        if rng.random() < 0.1:
            requests["nvidia.com/gpu"] = 1
        kw = {}
        if rng.random() < 0.3:
            kw["preferred_terms"] = [
                (rng.randint(1, 100), {"expressions": [("zone", "In", [rng.choice("abc")])], "fields": []})
            ]
        if rng.random() < 0.2:
            kw["tolerations"] = [("spot", "Exists", "", "")]
        if rng.random() < 0.1:
            kw["node_selector"] = [("zone", rng.choice("abc"))]
        pods.append(
            pod(
                f"ns/p{i}",
                requests=requests,
                nonzero_cpu_milli=requests["cpu"] or 100,
                nonzero_mem_bytes=requests["memory"] or 200 * 2**20,
                **kw,
            )
        )
    return nodes, pods


def run_once(nodes: list[dict], pods: list[dict], seed: int, pct: int):
    s = _core.ClusterState()
    for n in nodes:
        s.add_node(n)
    engine = _core.Engine(s, {**DEFAULT_PROFILE, "percentage_of_nodes_to_score": pct}, seed)
    compiled = s.compile_pods(pods)
    evaluations = [engine.evaluate(p) for p in compiled[:20]]
    placed, counts, _gpus, _ = engine.schedule(compiled)
    return evaluations, placed, counts, s.requested.copy()


@pytest.mark.parametrize(
    "n_nodes, pct", [(500, 100), (3000, 0), (40_000, 0)], ids=["500-all", "3000-adaptive", "40000-parallel-kernel"]
)
def test_identical_results_across_fresh_clusters(n_nodes, pct):
    nodes, pods = random_inputs(11, n_nodes, 300 if n_nodes < 10_000 else 40)
    first = run_once(nodes, pods, 5, pct)
    second = run_once(nodes, pods, 5, pct)
    for (m1, s1, r1), (m2, s2, r2) in zip(first[0], second[0]):
        assert np.array_equal(m1, m2) and np.array_equal(s1, s2) and np.array_equal(r1, r2)
    assert np.array_equal(first[1], second[1]) and np.array_equal(first[2], second[2])
    assert np.array_equal(first[3], second[3])
    assert (first[1] >= 0).any() and first[1].dtype == np.int32


def test_evaluate_repeatable_on_the_same_state(big):
    s, engine, plain, affine = big
    for p in (plain, affine):
        runs = [engine.evaluate(p) for _ in range(3)]
        for other in runs[1:]:
            for a, b in zip(runs[0], other):
                assert np.array_equal(a, b)
    mask, scores, counts = engine.evaluate(affine)
    assert mask.sum() == sum(1 for i in range(N_BIG) if i % 3 != 2)
    assert counts[2] == N_BIG - mask.sum()  # affinity mismatch for zone c


# =============================================================================================================
# Garbage never crashes the interpreter
# =============================================================================================================
GARBAGE_DRIVER = textwrap.dedent(r"""
    import gc, json, sys
    import numpy as np
    from vcore._native import _core

    I64, I32, U64 = np.int64, np.int32, np.uint64
    PROFILE = {"filters": ["NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodeResourcesFit"],
               "scores": [("NodeResourcesFit", 1)]}

    def node(name, **kw):
        spec = {"name": name, "allocatable": {"cpu": 4000, "memory": 2**30, "pods": 110}}
        spec.update(kw)
        return spec

    s = _core.ClusterState()
    s.add_node(node("n0")); s.add_node(node("busy")); s.add_node(node("gone")); s.remove_node("gone")
    free_slot = 2
    p = s.compile_pod({"key": "ns/p"})
    bound = s.compile_pod({"key": "ns/bound"}); s.bind(bound, 1)
    other = _core.ClusterState(); other.add_node(node("o"))
    foreign = other.compile_pod({"key": "ns/foreign"})
    dead = _core.ClusterState(); dead_pod = dead.compile_pod({"key": "ns/dead"}); del dead; gc.collect()
    e = _core.Engine(s, PROFILE, 0)
    gpu_pod = s.compile_pod({"key": "ns/gpu", "gpu": {"kind": 1, "count": 1}})
    gpu = _core.gpu
    inv = gpu.GpuInventory(np.array([8000, 8000], I64), np.array([100, 100], I64), np.array([0, 0], I32),
                           np.array([0, 2, 4], I32), np.full(4, 1000, I32))
    tgt = (np.array([1000], I64), np.array([500], I32), np.array([1], I32), np.array([0], U64), np.array([1.0]))
    one = lambda dtype, v=1: np.array([v], dtype)

    def replay(**over):
        args = dict(inventory=inv, cpu_milli=one(I64), memory=one(I64), num_gpu=one(I32), gpu_milli=one(I32, 500),
                    model_mask=one(U64, 0), order=np.array([0, 1], I32), target=tgt, policy="fgd")
        args.update(over)
        return gpu.replay(**args)

    rr = _core.routing
    router = rr.Router(16, 100, 0)
    router.add_endpoint("r0")
    free_route = router.add_endpoint("r1")
    router.remove_endpoint(free_route)
    pol = rr.Policy(w_prefix=1.0)

    def rt(**kw):
        return {"key": "ns/x", "required_terms": [dict({"expressions": [], "fields": []}, **kw)]}

    T = _core.topology

    def hn(**kw):
        spec = {"name": "h", "tier": 1, "members": [("Node", "exactMatch", "n0", [], [])]}
        spec.update(kw)
        return spec

    def gang(**kw):
        args = dict(state=s, fit=np.ones(3, I32), n_pods=1, start_row=0, limit_row=0, hard=False, layers=[],
                    running=None, bandwidth_weight=0.0, congestion_weight=0.0, tie_slack=0)
        args.update(kw)
        return T.place_gang(**args)

    CALLS = [
        ("ClusterState(1)", lambda: _core.ClusterState(1)),
        ("CompiledPod()", lambda: _core.CompiledPod()),
        ("add_node(None)", lambda: s.add_node(None)),
        ("add_node(1)", lambda: s.add_node(1)),
        ("add_node(str)", lambda: s.add_node("n9")),
        ("add_node(list)", lambda: s.add_node([("name", "x")])),
        ("add_node({})", lambda: s.add_node({})),
        ("add_node(name None)", lambda: s.add_node({"name": None})),
        ("add_node(name int)", lambda: s.add_node({"name": 5})),
        ("add_node(name empty)", lambda: s.add_node({"name": ""})),
        ("add_node(duplicate)", lambda: s.add_node(node("n0"))),
        ("add_node(cpu -1)", lambda: s.add_node(node("x", allocatable={"cpu": -1}))),
        ("add_node(cpu 2**63)", lambda: s.add_node(node("x", allocatable={"cpu": 2**63}))),
        ("add_node(cpu -2**63-1)", lambda: s.add_node(node("x", allocatable={"cpu": -2**63 - 1}))),
        ("add_node(cpu 10**40)", lambda: s.add_node(node("x", allocatable={"cpu": 10**40}))),
        ("add_node(cpu float)", lambda: s.add_node(node("x", allocatable={"cpu": 1.5}))),
        ("add_node(cpu str)", lambda: s.add_node(node("x", allocatable={"cpu": "1"}))),
        ("add_node(resource None)", lambda: s.add_node(node("x", allocatable={None: 1}))),
        ("add_node(resource empty)", lambda: s.add_node(node("x", allocatable={"": 1}))),
        ("add_node(allocatable list)", lambda: s.add_node(node("x", allocatable=[1, 2]))),
        ("add_node(labels dict)", lambda: s.add_node(node("x", labels={"a": "b"}))),
        ("add_node(labels str)", lambda: s.add_node(node("x", labels="a=b"))),
        ("add_node(label 1-tuple)", lambda: s.add_node(node("x", labels=[("a",)]))),
        ("add_node(label None value)", lambda: s.add_node(node("x", labels=[("a", None)]))),
        ("add_node(label duplicate)", lambda: s.add_node(node("x", labels=[("k", "1"), ("k", "2")]))),
        ("add_node(taint effect)", lambda: s.add_node(node("x", taints=[("k", "v", "Bogus")]))),
        ("add_node(taint effect NUL)", lambda: s.add_node(node("x", taints=[("k", "v", "NoSchedule\x00")]))),
        ("add_node(taint key empty)", lambda: s.add_node(node("x", taints=[("", "v", "NoSchedule")]))),
        ("add_node(taint 2-tuple)", lambda: s.add_node(node("x", taints=[("k", "v")]))),
        ("add_node(taints None item)", lambda: s.add_node(node("x", taints=[None]))),
        ("add_node(unschedulable str)", lambda: s.add_node(node("x", unschedulable="yes"))),
        ("update_node(None)", lambda: s.update_node(None)),
        ("update_node(unknown)", lambda: s.update_node(node("ghost"))),
        ("update_node(NUL suffix)", lambda: s.update_node(node("n0\x00"))),
        ("update_node(removed)", lambda: s.update_node(node("gone"))),
        ("update_node(cpu -5)", lambda: s.update_node(node("n0", allocatable={"cpu": -5}))),
        ("remove_node(None)", lambda: s.remove_node(None)),
        ("remove_node(unknown)", lambda: s.remove_node("ghost")),
        ("remove_node(NUL suffix)", lambda: s.remove_node("n0\x00")),
        ("remove_node(empty)", lambda: s.remove_node("")),
        ("remove_node(busy)", lambda: s.remove_node("busy")),
        ("remove_node(evict str)", lambda: s.remove_node("n0", "yes")),
        ("node_name(-1)", lambda: s.node_name(-1)),
        ("node_name(free slot)", lambda: s.node_name(free_slot)),
        ("node_name(10**6)", lambda: s.node_name(10**6)),
        ("node_name(2**31)", lambda: s.node_name(2**31)),
        ("node_name(-2**31-1)", lambda: s.node_name(-2**31 - 1)),
        ("node_name(None)", lambda: s.node_name(None)),
        ("node_name(str)", lambda: s.node_name("0")),
        ("node_index(None)", lambda: s.node_index(None)),
        ("has_node(5)", lambda: s.has_node(5)),
        ("resource_axis(empty)", lambda: s.resource_axis("")),
        ("resource_axis(None)", lambda: s.resource_axis(None)),
        ("find_resource_axis(None)", lambda: s.find_resource_axis(None)),
        ("pods_on(-1)", lambda: s.pods_on(-1)),
        ("pods_on(10**6)", lambda: s.pods_on(10**6)),
        ("pods_on(2**31)", lambda: s.pods_on(2**31)),
        ("pods_on(None)", lambda: s.pods_on(None)),
        ("pod_node(None)", lambda: s.pod_node(None)),
        ("compile_pod(None)", lambda: s.compile_pod(None)),
        ("compile_pod({})", lambda: s.compile_pod({})),
        ("compile_pod(key empty)", lambda: s.compile_pod({"key": ""})),
        ("compile_pod(key None)", lambda: s.compile_pod({"key": None})),
        ("compile_pod(cpu -1)", lambda: s.compile_pod({"key": "ns/x", "requests": {"cpu": -1}})),
        ("compile_pod(cpu 2**64)", lambda: s.compile_pod({"key": "ns/x", "requests": {"cpu": 2**64}})),
        ("compile_pod(resource empty)", lambda: s.compile_pod({"key": "ns/x", "requests": {"": 1}})),
        ("compile_pod(requests list)", lambda: s.compile_pod({"key": "ns/x", "requests": [1, 2]})),
        ("compile_pod(nonzero -1)", lambda: s.compile_pod({"key": "ns/x", "nonzero_cpu_milli": -1})),
        ("compile_pod(nonzero mem -1)", lambda: s.compile_pod({"key": "ns/x", "nonzero_mem_bytes": -1})),
        ("compile_pod(priority 2**63)", lambda: s.compile_pod({"key": "ns/x", "priority": 2**63})),
        ("compile_pod(selector dict)", lambda: s.compile_pod({"key": "ns/x", "node_selector": {"a": "b"}})),
        ("compile_pod(toleration op)", lambda: s.compile_pod({"key": "ns/x", "tolerations": [("k", "Bogus", "", "")]})),
        ("compile_pod(toleration op NUL)",
         lambda: s.compile_pod({"key": "ns/x", "tolerations": [("k", "Exists\x00", "", "")]})),
        ("compile_pod(toleration empty key Equal)",
         lambda: s.compile_pod({"key": "ns/x", "tolerations": [("", "Equal", "", "")]})),
        ("compile_pod(toleration effect NUL)",
         lambda: s.compile_pod({"key": "ns/x", "tolerations": [("k", "Exists", "", "NoSchedule\x00")]})),
        ("compile_pod(toleration 3-tuple)",
         lambda: s.compile_pod({"key": "ns/x", "tolerations": [("k", "Exists", "")]})),
        ("compile_pod(term op)", lambda: s.compile_pod(rt(expressions=[("k", "Bogus", ["a"])]))),
        ("compile_pod(term op NUL)", lambda: s.compile_pod(rt(expressions=[("k", "In\x00", ["a"])]))),
        ("compile_pod(Gt not int)", lambda: s.compile_pod(rt(expressions=[("k", "Gt", ["x"])]))),
        ("compile_pod(Gt 2 values)", lambda: s.compile_pod(rt(expressions=[("k", "Gt", ["1", "2"])]))),
        ("compile_pod(Lt no value)", lambda: s.compile_pod(rt(expressions=[("k", "Lt", [])]))),
        ("compile_pod(Gt overflow)", lambda: s.compile_pod(rt(expressions=[("k", "Gt", ["9223372036854775808"])]))),
        ("compile_pod(Gt NUL)", lambda: s.compile_pod(rt(expressions=[("k", "Gt", ["1\x00"])]))),
        ("compile_pod(field key)", lambda: s.compile_pod(rt(fields=[("metadata.namespace", "In", ["a"])]))),
        ("compile_pod(field op)", lambda: s.compile_pod(rt(fields=[("metadata.name", "Exists", [])]))),
        ("compile_pod(expressions None item)", lambda: s.compile_pod(rt(expressions=[None]))),
        ("compile_pod(values str)", lambda: s.compile_pod(rt(expressions=[("k", "In", "abc")]))),
        ("compile_pod(required str)", lambda: s.compile_pod({"key": "ns/x", "required_terms": "abc"})),
        ("compile_pod(required [None])", lambda: s.compile_pod({"key": "ns/x", "required_terms": [None]})),
        ("compile_pod(required [1])", lambda: s.compile_pod({"key": "ns/x", "required_terms": [1]})),
        ("compile_pod(preferred [(1,)])", lambda: s.compile_pod({"key": "ns/x", "preferred_terms": [(1,)]})),
        ("compile_pod(preferred [None])", lambda: s.compile_pod({"key": "ns/x", "preferred_terms": [None]})),
        ("compile_pod(preferred weight str)", lambda: s.compile_pod({"key": "ns/x", "preferred_terms": [("w", {})]})),
        ("compile_pod(preferred term None)", lambda: s.compile_pod({"key": "ns/x", "preferred_terms": [(1, None)]})),
        ("compile_pods(None)", lambda: s.compile_pods(None)),
        ("compile_pods([None])", lambda: s.compile_pods([None])),
        ("compile_pods(one bad)", lambda: s.compile_pods([{"key": "ns/a"}, {"key": ""}])),
        ("compile_pods(tuple)", lambda: s.compile_pods(({"key": "ns/a"},))),
        ("bind(None, 0)", lambda: s.bind(None, 0)),
        ("bind(str, 0)", lambda: s.bind("ns/p", 0)),
        ("bind(p, None)", lambda: s.bind(p, None)),
        ("bind(p, -1)", lambda: s.bind(p, -1)),
        ("bind(p, free slot)", lambda: s.bind(p, free_slot)),
        ("bind(p, 10**6)", lambda: s.bind(p, 10**6)),
        ("bind(p, 2**31)", lambda: s.bind(p, 2**31)),
        ("bind(p, 2**64)", lambda: s.bind(p, 2**64)),
        ("bind(p, 1.0)", lambda: s.bind(p, 1.0)),
        ("bind(foreign, 0)", lambda: s.bind(foreign, 0)),
        ("bind(pod of a dead state, 0)", lambda: s.bind(dead_pod, 0)),
        ("bind(bound, 0)", lambda: s.bind(bound, 0)),
        ("unbind(None)", lambda: s.unbind(None)),
        ("unbind(unknown)", lambda: s.unbind("ns/ghost")),
        ("unbind(NUL suffix)", lambda: s.unbind("ns/bound\x00")),
        ("reason_names(None)", lambda: _core.reason_names(None)),
        ("reason_names(1)", lambda: _core.reason_names(1)),
        ("reason_names(engine)", lambda: _core.reason_names(e)),
        ("Engine(None, profile)", lambda: _core.Engine(None, PROFILE, 0)),
        ("Engine(1, profile)", lambda: _core.Engine(1, PROFILE, 0)),
        ("Engine(state, None)", lambda: _core.Engine(s, None, 0)),
        ("Engine(state, {})", lambda: _core.Engine(s, {}, 0)),
        ("Engine(filters str)", lambda: _core.Engine(s, {"filters": "NodeAffinity", "scores": []})),
        ("Engine(filter NUL)", lambda: _core.Engine(s, {"filters": ["NodeAffinity\x00"], "scores": []})),
        ("Engine(filter unknown)", lambda: _core.Engine(s, {"filters": ["Bogus"], "scores": []})),
        ("Engine(score unknown)", lambda: _core.Engine(s, {"filters": [], "scores": [("Bogus", 1)]})),
        ("Engine(score NUL)", lambda: _core.Engine(s, {"filters": [], "scores": [("binpack\x00", 1)]})),
        ("Engine(weight 0)", lambda: _core.Engine(s, {"filters": [], "scores": [("NodeResourcesFit", 0)]})),
        ("Engine(weight -1)", lambda: _core.Engine(s, {"filters": [], "scores": [("NodeResourcesFit", -1)]})),
        ("Engine(weight 2**63)", lambda: _core.Engine(s, {"filters": [], "scores": [("NodeResourcesFit", 2**63)]})),
        ("Engine(score 1-tuple)", lambda: _core.Engine(s, {"filters": [], "scores": [("NodeResourcesFit",)]})),
        ("Engine(strategy)", lambda: _core.Engine(s, {"filters": [], "scores": [], "fit": {"strategy": "Bogus"}})),
        ("Engine(strategy NUL)",
         lambda: _core.Engine(s, {"filters": [], "scores": [], "fit": {"strategy": "LeastAllocated\x00"}})),
        ("Engine(fit str)", lambda: _core.Engine(s, {"filters": [], "scores": [], "fit": "LeastAllocated"})),
        ("Engine(fit resource weight str)",
         lambda: _core.Engine(s, {"filters": [], "scores": [], "fit": {"resources": [("cpu", "x")]}})),
        ("Engine(fit resource empty)",
         lambda: _core.Engine(s, {"filters": [], "scores": [], "fit": {"resources": [("", 1)]}})),
        ("Engine(shape out of range)", lambda: _core.Engine(s, {"filters": [], "scores": [("NodeResourcesFit", 1)],
                                                               "fit": {"strategy": "RequestedToCapacityRatio",
                                                                       "shape": [(200, 5)]}})),
        ("Engine(shape empty)", lambda: _core.Engine(s, {"filters": [], "scores": [("NodeResourcesFit", 1)],
                                                        "fit": {"strategy": "RequestedToCapacityRatio",
                                                                "shape": []}})),
        ("Engine(shape score 11)", lambda: _core.Engine(s, {"filters": [], "scores": [("NodeResourcesFit", 1)],
                                                           "fit": {"strategy": "RequestedToCapacityRatio",
                                                                   "shape": [(0, 11)]}})),
        ("Engine(binpack weight str)",
         lambda: _core.Engine(s, {"filters": [], "scores": [], "binpack": {"weight": "x"}})),
        ("Engine(pct 101)",
         lambda: _core.Engine(s, {"filters": [], "scores": [], "percentage_of_nodes_to_score": 101})),
        ("Engine(pct -1)", lambda: _core.Engine(s, {"filters": [], "scores": [], "percentage_of_nodes_to_score": -1})),
        ("Engine(pct 2**31)",
         lambda: _core.Engine(s, {"filters": [], "scores": [], "percentage_of_nodes_to_score": 2**31})),
        ("Engine(seed -1)", lambda: _core.Engine(s, PROFILE, -1)),
        ("Engine(seed 2**64)", lambda: _core.Engine(s, PROFILE, 2**64)),
        ("Engine(seed str)", lambda: _core.Engine(s, PROFILE, "0")),
        ("evaluate(None)", lambda: e.evaluate(None)),
        ("evaluate(str)", lambda: e.evaluate("ns/p")),
        ("evaluate(foreign)", lambda: e.evaluate(foreign)),
        ("evaluate(pod of a dead state)", lambda: e.evaluate(dead_pod)),
        ("evaluate(state)", lambda: e.evaluate(s)),
        ("schedule(None)", lambda: e.schedule(None)),
        ("schedule(str)", lambda: e.schedule("ab")),
        ("schedule([None])", lambda: e.schedule([None])),
        ("schedule([p, None])", lambda: e.schedule([p, None])),
        ("schedule([1])", lambda: e.schedule([1])),
        ("schedule([foreign])", lambda: e.schedule([foreign])),
        ("schedule([p, foreign])", lambda: e.schedule([p, foreign])),
        ("schedule([bound])", lambda: e.schedule([bound])),
        ("schedule([p, p])", lambda: e.schedule([p, p])),
        ("schedule(dict)", lambda: e.schedule({"a": p})),
        ("place_gang(None)", lambda: e.place_gang(None, None, [0], 1)),
        ("place_gang(str)", lambda: e.place_gang("ab", None, [0], 1)),
        ("place_gang(dict)", lambda: e.place_gang({"a": p}, None, [0], 1)),
        ("place_gang([None])", lambda: e.place_gang([None], None, [0], 1)),
        ("place_gang([p, 1])", lambda: e.place_gang([p, 1], None, [0], 2)),
        ("place_gang([state])", lambda: e.place_gang([s], None, [0], 1)),
        ("place_gang([foreign])", lambda: e.place_gang([foreign], None, [0], 1)),
        ("place_gang([pod of a dead state])", lambda: e.place_gang([dead_pod], None, [0], 1)),
        ("place_gang([p, p])", lambda: e.place_gang((p, p), None, [0], 2)),
        ("place_gang([bound])", lambda: e.place_gang([bound], None, [0], 1)),
        ("place_gang(role short)", lambda: e.place_gang([p], [], [0], 1)),
        ("gpu.GpuInventory(None...)", lambda: gpu.GpuInventory(None, None, None, None, None)),
        ("gpu.GpuInventory(float)", lambda: gpu.GpuInventory(np.array([1.5]), one(I64), one(I32, 0),
                                                             np.array([0, 0], I32), np.array([], I32))),
        ("gpu.GpuInventory(2-d)", lambda: gpu.GpuInventory(np.zeros((1, 1), I64), one(I64), one(I32, 0),
                                                           np.array([0, 0], I32), np.array([], I32))),
        ("gpu.GpuInventory(offsets empty)", lambda: gpu.GpuInventory(np.array([], I64), np.array([], I64),
                                                                     np.array([], I32), np.array([], I32),
                                                                     np.array([], I32))),
        ("gpu.GpuInventory(offsets -1 end)", lambda: gpu.GpuInventory(one(I64), one(I64), one(I32, 0),
                                                                      np.array([0, -1], I32), np.array([], I32))),
        ("gpu.GpuInventory(offsets huge)", lambda: gpu.GpuInventory(one(I64), one(I64), one(I32, 0),
                                                                    np.array([0, 2**31 - 1], I32), np.array([], I32))),
        ("gpu.node_fragments(None)", lambda: gpu.node_fragments(None, tgt)),
        ("gpu.node_fragments(short target)", lambda: gpu.node_fragments(inv, tgt[:2])),
        ("gpu.node_fragments(target list)", lambda: gpu.node_fragments(inv, list(tgt))),
        ("gpu.node_fragments(target lengths)",
         lambda: gpu.node_fragments(inv, (np.array([1, 2], I64),) + tgt[1:])),
        ("gpu.node_fragments(target str)", lambda: gpu.node_fragments(inv, ("a", "b", "c", "d", "e"))),
        ("gpu.fgd_scores(num_gpu 2**31)", lambda: gpu.fgd_scores(inv, 1, 1, 2**31, 500, 0, tgt)),
        ("gpu.fgd_scores(mask -1)", lambda: gpu.fgd_scores(inv, 1, 1, 1, 500, -1, tgt)),
        ("gpu.fgd_scores(None inv)", lambda: gpu.fgd_scores(None, 1, 1, 1, 500, 0, tgt)),
        ("gpu.replay(policy)", lambda: replay(policy="bogus")),
        ("gpu.replay(policy NUL)", lambda: replay(policy="fgd\x00")),
        ("gpu.replay(lengths)", lambda: replay(memory=np.array([1, 2], I64))),
        ("gpu.replay(order out of range)", lambda: replay(order=np.array([5, -1], I32))),
        ("gpu.replay(order short)", lambda: replay(order=np.array([0], I32))),
        ("gpu.replay(order repeated)", lambda: replay(order=np.array([0, 0], I32))),
        ("gpu.replay(float requests)", lambda: replay(cpu_milli=np.array([1.5]))),
        ("gpu.replay(seed -1)", lambda: replay(seed=-1)),
        ("gpu.replay(None inventory)", lambda: replay(inventory=None)),
        # the live GPU device table
        ("add_node(gpus str)", lambda: s.add_node(node("g", gpus="8"))),
        ("add_node(gpus [None])", lambda: s.add_node(node("g", gpus=[None]))),
        ("add_node(gpu 6-tuple)", lambda: s.add_node(node("g", gpus=[("m", 1, 0, 0, False, 0)]))),
        ("add_node(gpu memory -1)", lambda: s.add_node(node("g", gpus=[("m", -1, 0, 0, False, 0, [])]))),
        ("add_node(gpu numa -2)", lambda: s.add_node(node("g", gpus=[("m", 1, -2, 0, False, 0, [])]))),
        ("add_node(gpu geometry 9)", lambda: s.add_node(node("g", gpus=[("m", 1, 0, 0, True, 9, [])]))),
        ("add_node(gpu geometry -1)", lambda: s.add_node(node("g", gpus=[("m", 1, 0, 0, True, -1, [])]))),
        ("add_node(mig without geometry)", lambda: s.add_node(node("g", gpus=[("m", 1, 0, 0, True, 0, [])]))),
        ("add_node(mig shape 6)", lambda: s.add_node(node("g", gpus=[("m", 1, 0, 0, True, 1, [(6, 0)])]))),
        ("add_node(mig start 63)", lambda: s.add_node(node("g", gpus=[("m", 1, 0, 0, True, 1, [(0, 63)])]))),
        ("add_node(mig start -1)", lambda: s.add_node(node("g", gpus=[("m", 1, 0, 0, True, 1, [(0, -1)])]))),
        ("add_node(mig start not allowed)", lambda: s.add_node(node("g", gpus=[("m", 1, 0, 0, True, 1, [(4, 2)])]))),
        ("add_node(mig overlap)", lambda: s.add_node(node("g", gpus=[("m", 1, 0, 0, True, 1, [(5, 0), (0, 0)])]))),
        ("add_node(mig 8 instances)",
         lambda: s.add_node(node("g", gpus=[("m", 1, 0, 0, True, 1, [(0, i) for i in range(7)] + [(0, 0)])]))),
        ("add_node(layout without mig)", lambda: s.add_node(node("g", gpus=[("m", 1, 0, 0, False, 0, [(0, 0)])]))),
        ("add_node(65 gpus)", lambda: s.add_node(node("g", gpus=[("m", 1, 0, 0, False, 0, [])] * 65))),
        ("compile_pod(gpu str)", lambda: s.compile_pod({"key": "ns/x", "gpu": "1"})),
        ("compile_pod(gpu no kind)", lambda: s.compile_pod({"key": "ns/x", "gpu": {"count": 1}})),
        ("compile_pod(gpu kind 4)", lambda: s.compile_pod({"key": "ns/x", "gpu": {"kind": 4, "count": 1}})),
        ("compile_pod(gpu kind -1)", lambda: s.compile_pod({"key": "ns/x", "gpu": {"kind": -1, "count": 1}})),
        ("compile_pod(gpu count -1)", lambda: s.compile_pod({"key": "ns/x", "gpu": {"kind": 1, "count": -1}})),
        ("compile_pod(gpu count 2**40)", lambda: s.compile_pod({"key": "ns/x", "gpu": {"kind": 1, "count": 2**40}})),
        ("compile_pod(gpu milli 1001)",
         lambda: s.compile_pod({"key": "ns/x", "gpu": {"kind": 2, "count": 1, "milli": 1001, "memory_milli": 1}})),
        ("compile_pod(gpu both memories)", lambda: s.compile_pod(
            {"key": "ns/x", "gpu": {"kind": 2, "count": 1, "milli": 1, "memory_mib": 1, "memory_milli": 1}})),
        ("compile_pod(gpu mig shape 3 entries)",
         lambda: s.compile_pod({"key": "ns/x", "gpu": {"kind": 3, "count": 1, "mig_shape": [0, 0, 0]}})),
        ("compile_pod(gpu mig shape 99)",
         lambda: s.compile_pod({"key": "ns/x", "gpu": {"kind": 3, "count": 1, "mig_shape": [-1, 99, -1, -1]}})),
        ("compile_pod(gpu mig no shape)",
         lambda: s.compile_pod({"key": "ns/x", "gpu": {"kind": 3, "count": 1, "mig_shape": [-1, -1, -1, -1]}})),
        ("compile_pod(gpu models str)",
         lambda: s.compile_pod({"key": "ns/x", "gpu": {"kind": 1, "count": 1, "models": "A100"}})),
        ("compile_pod(gpu term 3-tuple)",
         lambda: s.compile_pod({"key": "ns/x", "gpu": {"kind": 1, "count": 1, "product_terms": [(True, [], [])]}})),
        ("bind(p, 0, gpus str)", lambda: s.bind(p, 0, "0")),
        ("bind(gpu pod, 0, gpus [-1])", lambda: s.bind(gpu_pod, 0, [-1])),
        ("bind(gpu pod, 0, gpus [64])", lambda: s.bind(gpu_pod, 0, [64])),
        ("bind(gpu pod, 0, gpus [2**40])", lambda: s.bind(gpu_pod, 0, [2**40])),
        ("bind(gpu pod, 0, gpus [0, 0])", lambda: s.bind(gpu_pod, 0, [0, 0])),
        ("bind(gpu pod, free slot, gpus [0])", lambda: s.bind(gpu_pod, free_slot, [0])),
        ("pod_gpus(None)", lambda: s.pod_gpus(None)),
        ("Engine(gpu policy)", lambda: _core.Engine(s, {"filters": [], "scores": [], "gpu": {"policy": "bogus"}})),
        ("Engine(gpu str)", lambda: _core.Engine(s, {"filters": [], "scores": [], "gpu": "fgd"})),
        ("Engine(gpu coverage 0)", lambda: _core.Engine(s, {"filters": [], "scores": [], "gpu": {"coverage": 0.0}})),
        ("Engine(gpu scale 0)", lambda: _core.Engine(s, {"filters": [], "scores": [], "gpu": {"vcore_scale": 0.0}})),
        ("Engine(gpu target milli 2000)", lambda: _core.Engine(
            s, {"filters": [], "scores": [], "gpu": {"learn": False, "target": [(0, 2000, 1, [], 1.0)]}})),
        ("Engine(gpu target weight 0)", lambda: _core.Engine(
            s, {"filters": [], "scores": [], "gpu": {"learn": False, "target": [(0, 500, 1, [], 0.0)]}})),
        ("Engine(gpu target 4-tuple)", lambda: _core.Engine(
            s, {"filters": [], "scores": [], "gpu": {"target": [(0, 500, 1, [])]}})),
        ("observe(None)", lambda: e.observe(None)),
        ("observe([None])", lambda: e.observe([None])),
        ("observe([foreign])", lambda: e.observe([foreign])),
        # NUMA alignment fields
        ("add_node(numa_cpu str)", lambda: s.add_node(node("x", numa_cpu="0"))),
        ("add_node(numa id -1)", lambda: s.add_node(node("x", numa_cpu=[(-1, 1000)]))),
        ("add_node(numa twice)", lambda: s.add_node(node("x", numa_cpu=[(0, 1000), (0, 1000)]))),
        ("add_node(numa cpu -1)", lambda: s.add_node(node("x", numa_cpu=[(0, -1)]))),
        ("add_node(numa 17 nodes)", lambda: s.add_node(node("x", numa_cpu=[(i, 1) for i in range(17)]))),
        ("compile_pod(numa_policy 4)",
         lambda: s.compile_pod({"key": "ns/x", "gpu": {"kind": 0, "count": 0, "numa_policy": 4}})),
        ("compile_pod(numa cpu -1)", lambda: s.compile_pod(
            {"key": "ns/x", "gpu": {"kind": 0, "count": 0, "numa_policy": 3, "numa_cpu_milli": -1}})),
        # the network topology
        ("topology.add_hypernode(None)", lambda: T.add_hypernode(s, None)),
        ("topology.add_hypernode({})", lambda: T.add_hypernode(s, {})),
        ("topology.add_hypernode(tier str)", lambda: T.add_hypernode(s, hn(tier="1"))),
        ("topology.add_hypernode(tier -1)", lambda: T.add_hypernode(s, hn(tier=-1))),
        ("topology.add_hypernode(tier 2**40)", lambda: T.add_hypernode(s, hn(tier=2**40))),
        ("topology.add_hypernode(no members)", lambda: T.add_hypernode(s, hn(members=[]))),
        ("topology.add_hypernode(member 4-tuple)",
         lambda: T.add_hypernode(s, hn(members=[("Node", "exactMatch", "n0", [])]))),
        ("topology.add_hypernode(member None)", lambda: T.add_hypernode(s, hn(members=[None]))),
        ("topology.add_hypernode(member type)",
         lambda: T.add_hypernode(s, hn(members=[("Rack", "exactMatch", "n0", [], [])]))),
        ("topology.add_hypernode(selector)", lambda: T.add_hypernode(s, hn(members=[("Node", "bogus", "n0", [], [])]))),
        ("topology.add_hypernode(regex)",
         lambda: T.add_hypernode(s, hn(members=[("Node", "regexMatch", "(", [], [])]))),
        ("topology.add_hypernode(regex no match)",
         lambda: T.add_hypernode(s, hn(members=[("Node", "regexMatch", "^zz$", [], [])]))),
        ("topology.add_hypernode(label op)",
         lambda: T.add_hypernode(s, hn(members=[("Node", "labelMatch", "", [("k", "Gt", ["1"])], [])]))),
        ("topology.add_hypernode(labels empty)",
         lambda: T.add_hypernode(s, hn(members=[("Node", "labelMatch", "", [], [])]))),
        ("topology.add_hypernode(child by regex)",
         lambda: T.add_hypernode(s, hn(members=[("HyperNode", "regexMatch", "h", [], [])]))),
        ("topology.add_hypernode(congestion 2)", lambda: T.add_hypernode(s, hn(congestion=2.0))),
        ("topology.add_hypernode(regex without membership)",
         lambda: T.add_hypernode(s, hn(members=[("Node", "regexMatch", "n", [], [0])]))),
        ("topology.add_hypernode(regex stale membership)",
         lambda: T.add_hypernode(s, hn(members=[("Node", "regexMatch", "n", [], [0])]), T.node_names(s)[0] + 1)),
        ("topology.add_hypernode(regex membership -1)",
         lambda: T.add_hypernode(s, hn(members=[("Node", "regexMatch", "n", [], [0])]), -1)),
        ("topology.add_hypernode(regex slot -1)",
         lambda: T.add_hypernode(s, hn(members=[("Node", "regexMatch", "n", [], [-1])]), T.node_names(s)[0])),
        ("topology.add_hypernode(regex slot 99)",
         lambda: T.add_hypernode(s, hn(members=[("Node", "regexMatch", "n", [], [99])]), T.node_names(s)[0])),
        ("topology.add_hypernode(regex free slot)",
         lambda: T.add_hypernode(s, hn(members=[("Node", "regexMatch", "n", [], [2])]), T.node_names(s)[0])),
        ("topology.add_hypernode(regex slot 2**31)",
         lambda: T.add_hypernode(s, hn(members=[("Node", "regexMatch", "n", [], [2**31])]), T.node_names(s)[0])),
        ("topology.add_hypernode(exact with slots)",
         lambda: T.add_hypernode(s, hn(members=[("Node", "exactMatch", "n0", [], [0])]), T.node_names(s)[0])),
        ("topology.node_names(None)", lambda: T.node_names(None)),
        ("topology.patterns(None)", lambda: T.patterns(None)),
        ("add_node(pattern_ids str)", lambda: s.add_node({**node("x"), "pattern_ids": "0"})),
        ("add_node(pattern_version -1)", lambda: s.add_node({**node("x"), "pattern_version": -1})),
        ("topology.update_hypernode(unknown)", lambda: T.update_hypernode(s, hn(name="ghost"))),
        ("topology.remove_hypernode(None)", lambda: T.remove_hypernode(s, None)),
        ("topology.remove_hypernode(unknown)", lambda: T.remove_hypernode(s, "ghost")),
        ("topology.set_hypernodes(None)", lambda: T.set_hypernodes(s, None)),
        ("topology.set_hypernodes([None])", lambda: T.set_hypernodes(s, [None])),
        ("topology.set_hypernodes(twice)", lambda: T.set_hypernodes(s, [hn(), hn()])),
        ("topology.set_hypernodes(cycle)", lambda: T.set_hypernodes(s, [
            hn(name="a", members=[("HyperNode", "exactMatch", "b", [], [])]),
            hn(name="b", members=[("HyperNode", "exactMatch", "a", [], [])])])),
        ("topology.set_levels(None)", lambda: T.set_levels(s, None)),
        ("topology.set_levels([''])", lambda: T.set_levels(s, [""])),
        ("topology.set_levels(twice)", lambda: T.set_levels(s, ["k", "k"])),
        ("topology.tree(None)", lambda: T.tree(None)),
        ("topology.tiers(1)", lambda: T.tiers(1)),
        ("topology.node_topo(engine)", lambda: T.node_topo(e)),
        ("topology.place_gang(fit None)", lambda: gang(fit=None)),
        ("topology.place_gang(fit list)", lambda: gang(fit=[1, 1, 1])),
        ("topology.place_gang(fit int64)", lambda: gang(fit=np.ones(3, I64))),
        ("topology.place_gang(fit 2-d)", lambda: gang(fit=np.ones((3, 1), I32))),
        ("topology.place_gang(fit short)", lambda: gang(fit=np.ones(2, I32))),
        ("topology.place_gang(fit -1)", lambda: gang(fit=np.full(3, -1, I32))),
        ("topology.place_gang(pods 0)", lambda: gang(n_pods=0)),
        ("topology.place_gang(pods 2**63)", lambda: gang(n_pods=2**63)),
        ("topology.place_gang(start > limit)", lambda: gang(start_row=1, limit_row=0)),
        ("topology.place_gang(limit 99)", lambda: gang(limit_row=99)),
        ("topology.place_gang(row -1)", lambda: gang(start_row=-1)),
        ("topology.place_gang(layer size 0)", lambda: gang(layers=[(0, 0)])),
        ("topology.place_gang(layer 3-tuple)", lambda: gang(layers=[(1, 0, 0)])),
        ("topology.place_gang(running float)", lambda: gang(running=np.ones(3))),
        ("topology.place_gang(tie_slack -1)", lambda: gang(tie_slack=-1)),
        ("topology.place_gang(weight nan)", lambda: gang(bandwidth_weight=float("nan"))),
        ("topology.place_gang(state None)", lambda: gang(state=None)),
        ("topology.node_scores(None)", lambda: T.node_scores(s, None, 1, 1.0, None)),
        ("topology.node_scores(int64)", lambda: T.node_scores(s, np.ones(3, I64), 1, 1.0, None)),
        ("topology.node_scores(-1 pods)", lambda: T.node_scores(s, np.full(3, -1, I32), 1, 1.0, None)),
        ("topology.node_scores(candidates int)", lambda: T.node_scores(s, np.ones(3, I32), 1, 1.0, np.ones(3, I32))),
        ("topology.node_scores(weight inf)", lambda: T.node_scores(s, np.ones(3, I32), 1, float("inf"), None)),
        # routing
        ("routing.Router(block_tokens 0)", lambda: rr.Router(0)),
        ("routing.Router(capacity -1)", lambda: rr.Router(16, -1)),
        ("routing.Policy(kind bogus)", lambda: rr.Policy(kind="bogus")),
        ("routing.Policy(w nan)", lambda: rr.Policy(w_prefix=float("nan"))),
        ("routing.hash_blocks(block 0)", lambda: rr.hash_blocks("abc", 0)),
        ("route(hashes None)", lambda: router.route(pol, None, 1)),
        ("route(hashes str)", lambda: router.route(pol, "abc", 1)),
        ("route(hashes 2d)", lambda: router.route(pol, np.zeros((2, 2), U64), 1)),
        ("route(hashes float)", lambda: router.route(pol, np.zeros(3), 1)),
        ("route(candidates -1)", lambda: router.route(pol, [], 1, -1, -1, np.array([-1], I32))),
        ("route(candidates 2**31)", lambda: router.route(pol, [], 1, -1, -1, [2**31])),
        ("route(session 99)", lambda: router.route(pol, [], 1, -1, 99)),
        ("route(lora 99)", lambda: router.route(pol, [], 1, 99)),
        ("route_pd(candidates free)", lambda: router.route_pd(pol, [], 1, -1, -1, [free_route])),
        ("match(candidates 10**6)", lambda: router.match([1], [10**6])),
        ("dispatch(slot -5)", lambda: router.dispatch(1, -5, [], 1, 0)),
        ("dispatch(matched -1)", lambda: router.dispatch(1, 0, [], 1, -1)),
        ("finish(unknown)", lambda: router.finish(12345)),
        ("update_metrics(lengths)", lambda: router.update_metrics([0], [1, 2], [0], [0.0], [0], [0])),
        ("update_metrics(kv nan)", lambda: router.update_metrics([0], [0], [0], [float("nan")], [0], [0])),
        ("record_blocks(free slot)", lambda: router.record_blocks(free_route, [1])),
        ("set_loras(None)", lambda: router.set_loras(0, None)),
        ("remove_endpoint(twice)", lambda: router.remove_endpoint(free_route)),
    ]

    start = int(sys.argv[1])
    if start < 0:
        print(json.dumps([label for label, _ in CALLS]), flush=True)
        sys.exit(0)
    for index in range(start, len(CALLS)):
        label, call = CALLS[index]
        print(json.dumps({"start": index}), flush=True)
        try:
            result = call()
        except Exception as exc:  # the expected outcome
            print(json.dumps({"raised": index, "type": type(exc).__name__}), flush=True)
        else:
            print(json.dumps({"returned": index, "repr": repr(result)[:200]}), flush=True)
    # The state is still consistent after all that.
    assert s.n_nodes == 2 and s.pod_node("ns/bound") == 1 and s.n_pods == 1
    print(json.dumps({"done": True}), flush=True)
""")


def _run_driver(script: Path, start: int) -> subprocess.CompletedProcess:
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
        PYTHONFAULTHANDLER="1",
    )
    return subprocess.run(
        [sys.executable, str(script), str(start)], capture_output=True, text=True, env=env, cwd=str(ROOT)
    )


def test_garbage_never_crashes_the_interpreter(tmp_path):
    script = tmp_path / "garbage.py"
    script.write_text(GARBAGE_DRIVER)
    listing = _run_driver(script, -1)
    assert listing.returncode == 0, listing.stderr
    labels = json.loads(listing.stdout)
    assert len(labels) > 150

    crashed: dict[str, str] = {}
    returned: dict[str, str] = {}
    raised: dict[str, str] = {}
    start, done = 0, False
    while start <= len(labels) and not done:
        proc = _run_driver(script, start)
        last = None
        for line in proc.stdout.splitlines():
            event = json.loads(line)
            if "start" in event:
                last = event["start"]
            elif "raised" in event:
                raised[labels[event["raised"]]] = event["type"]
            elif "returned" in event:
                returned[labels[event["returned"]]] = event["repr"]
            elif "done" in event:
                done = True
        if proc.returncode == 0:
            assert done, proc.stderr
            break
        if last is None or labels[last] in raised or labels[last] in returned:
            pytest.fail(f"driver failed outside any call (rc {proc.returncode}):\n{proc.stderr[-3000:]}")
        crashed[labels[last]] = f"rc {proc.returncode}: {proc.stderr.strip().splitlines()[:1]}"
        start = last + 1
    problems = {
        **{f"CRASH {k}": v for k, v in crashed.items()},
        **{f"NO EXCEPTION {k}": v for k, v in returned.items()},
    }
    assert not problems, json.dumps(problems, indent=1)
    assert len(raised) == len(labels)
    # StaleError: regexMatch results computed against other nodes (vcore.topology.patterns computes them again).
    assert set(raised.values()) <= {
        "TypeError",
        "ValueError",
        "KeyError",
        "IndexError",
        "OverflowError",
        "StaleError",
    }, raised


_THREADS_SCRIPT = r"""
import hashlib, sys
import vcore
cluster = vcore.Cluster()
for i in range(20000):  # above the size at which kernels split blocks across helper threads
    taints = [{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}] if i % 7 == 0 else []
    cluster.add_node({"metadata": {"name": f"n{i:05d}", "labels": {"zone": f"z{i % 3}"}},
                      "spec": {"taints": taints},
                      "status": {"allocatable": {"cpu": str(4 + i % 5), "memory": f"{8 + i % 9}Gi", "pods": "110"}}})
pod = {"metadata": {"name": "p"},
       "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}],
                "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "preference": {"matchExpressions": [
                        {"key": "zone", "operator": "In", "values": ["z1"]}]}}]}}}}
ev = vcore.Scheduler(cluster).evaluate(pod)
digest = hashlib.sha256(ev.feasible_mask.tobytes() + ev.scores.tobytes() + repr(sorted(ev.reasons.items())).encode())
print(digest.hexdigest())
"""


def test_results_do_not_depend_on_the_thread_count():
    import os
    import subprocess
    import sys

    digests = set()
    for threads in ("1", "2", "4"):
        env = {**os.environ, "VCORE_THREADS": threads}
        out = subprocess.run(
            [sys.executable, "-c", _THREADS_SCRIPT], env=env, capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr
        digests.add(out.stdout.strip())
    assert len(digests) == 1


_FORK_SCRIPT = r"""
import os, sys
import vcore
cluster = vcore.Cluster()
for i in range(20000):  # large enough that evaluate starts the helper threads
    cluster.add_node({"metadata": {"name": f"n{i:05d}"},
                      "status": {"allocatable": {"cpu": str(4 + i % 5), "memory": "8Gi", "pods": "110"}}})
scheduler = vcore.Scheduler(cluster)
pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
expected = scheduler.evaluate(pod).scores.tobytes()
pid = os.fork()
if pid == 0:  # the child has the pool object but not its threads
    os._exit(0 if scheduler.evaluate(pod).scores.tobytes() == expected else 3)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def test_kernels_work_in_a_forked_child():
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", _FORK_SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
