"""Shared test helpers: Kubernetes-shaped object builders, profile builders and hypothesis strategies, and the
real control plane (etcd + kube-apiserver) that the kube adapter's and the router's tests share.

Hypothesis profile "ci" (derandomized, no deadline) is registered and loaded unless HYPOTHESIS_PROFILE names
another one, so the property tests are reproducible and never flaky on a slow shared machine.
"""

from __future__ import annotations

import itertools
import os
import shutil
import sys

import pytest
from hypothesis import HealthCheck, Phase, settings, strategies as st

sys.path.insert(0, os.path.dirname(__file__))  # `import reference` from any test module

# "ci" does not shrink: a failing example of a 40-node cluster can take minutes to shrink, and the assertion
# messages already say which node, plugin and numbers differ. HYPOTHESIS_PROFILE=dev shrinks.
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=100,
    print_blob=True,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev", deadline=None, max_examples=500, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# ---------------------------------------------------------------------------------------------------------------
# Object builders (API-shaped dicts). cpu: int -> milli-cores ("4000m"); memory and others: int -> units.
# ---------------------------------------------------------------------------------------------------------------
def _qty(resource: str, v) -> str:
    if isinstance(v, str):
        return v
    return f"{v}m" if resource == "cpu" else str(v)


def make_node(
    name: str,
    cpu=None,
    mem=None,
    *,
    pods=110,
    extra: dict | None = None,
    labels: dict | None = None,
    taints: list | None = None,
    unschedulable: bool = False,
) -> dict:
    alloc = {}
    if cpu is not None:
        alloc["cpu"] = _qty("cpu", cpu)
    if mem is not None:
        alloc["memory"] = _qty("memory", mem)
    if pods is not None:
        alloc["pods"] = str(pods)
    for k, v in (extra or {}).items():
        alloc[k] = _qty(k, v)
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": {},
        "status": {"allocatable": alloc, "capacity": dict(alloc)},
    }
    if taints:
        node["spec"]["taints"] = [dict(t) for t in taints]
    if unschedulable:
        node["spec"]["unschedulable"] = True
    return node


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> dict:
    t = {"key": key, "effect": effect}
    if value:
        t["value"] = value
    return t


def toleration(key: str = "", operator: str = "Equal", value: str = "", effect: str = "") -> dict:
    t = {"operator": operator}
    if key:
        t["key"] = key
    if value:
        t["value"] = value
    if effect:
        t["effect"] = effect
    return t


def container(requests: dict | None = None, limits: dict | None = None, name: str = "c", **kw) -> dict:
    """requests/limits: {resource: int or str}; a resource absent from both is a *missing* request."""
    res = {}
    if requests is not None:
        res["requests"] = {k: _qty(k, v) for k, v in requests.items()}
    if limits is not None:
        res["limits"] = {k: _qty(k, v) for k, v in limits.items()}
    c = {"name": name, "image": "busybox", "resources": res}
    c.update(kw)
    return c


def zero_container(name: str = "c") -> dict:
    """A container that requests nothing, non-zero semantics included (kube tests' st.MakePod().Obj())."""
    return container({"cpu": 0, "memory": 0}, name=name)


def make_pod(
    name: str,
    *containers: dict,
    namespace: str = "default",
    init: list | None = None,
    overhead: dict | None = None,
    node_selector: dict | None = None,
    required: list | None = None,
    preferred: list | None = None,
    tolerations: list | None = None,
) -> dict:
    """required: list of nodeSelectorTerms; preferred: [(weight, term)]."""
    cs = [dict(c, name=f"c{i}") for i, c in enumerate(containers)] or [zero_container("c0")]
    spec: dict = {"containers": cs}
    if init:
        spec["initContainers"] = [dict(c, name=f"i{i}") for i, c in enumerate(init)]
    if overhead:
        spec["overhead"] = {k: _qty(k, v) for k, v in overhead.items()}
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    na = {}
    if required is not None:
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": list(required)}
    if preferred:
        na["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w, "preference": term} for w, term in preferred
        ]
    if na:
        spec["affinity"] = {"nodeAffinity": na}
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def req_pod(name: str, cpu=None, mem=None, extra: dict | None = None, **kw) -> dict:
    """One container requesting cpu (milli) / memory (bytes); None = missing request."""
    r = {}
    if cpu is not None:
        r["cpu"] = cpu
    if mem is not None:
        r["memory"] = mem
    r.update(extra or {})
    return make_pod(name, container(r), **kw)


def expr(key: str, op: str, *values: str) -> dict:
    e = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def term(*exprs: dict, fields: list | None = None) -> dict:
    t = {}
    if exprs:
        t["matchExpressions"] = list(exprs)
    if fields:
        t["matchFields"] = list(fields)
    return t


# ---------------------------------------------------------------------------------------------------------------
# Profile builders (one KubeSchedulerConfiguration profile as a dict)
# ---------------------------------------------------------------------------------------------------------------
def make_profile(
    scores: list[tuple[str, int]],
    *,
    filters: list[str] | None = None,
    fit: dict | None = None,
    balanced: list | None = None,
    binpack: dict | None = None,
    pct: int | None = None,
) -> dict:
    """scores: [(plugin, weight)] replacing all default score plugins; filters: None = defaults, else exactly
    these filter plugins; fit: NodeResourcesFitArgs; balanced: [(resource, weight)]; binpack: Volcano args."""
    plugins = {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": n, "weight": w} for n, w in scores]}}
    # The reference models kube-scheduler's plugins; vcore's GPUDeviceFit (on by default) is checked against
    # tests/gpu/fit_reference.py by the GPU tests instead.
    plugins["filter"] = {"disabled": [{"name": "GPUDeviceFit"}]}
    if filters is not None:
        plugins["filter"] = {"disabled": [{"name": "*"}], "enabled": [{"name": n} for n in filters]}
    prof: dict = {"plugins": plugins}
    cfg = []
    if fit:
        cfg.append({"name": "NodeResourcesFit", "args": fit})
    if balanced:
        cfg.append(
            {
                "name": "NodeResourcesBalancedAllocation",
                "args": {"resources": [{"name": n, "weight": w} for n, w in balanced]},
            }
        )
    if binpack:
        cfg.append({"name": "binpack", "args": dict(binpack)})
    if cfg:
        prof["pluginConfig"] = cfg
    if pct is not None:
        prof["percentageOfNodesToScore"] = pct
    return prof


def fit_args(
    strategy: str = "LeastAllocated",
    resources=(("cpu", 1), ("memory", 1)),
    shape=None,
    ignored=None,
    ignored_groups=None,
) -> dict:
    s: dict = {"type": strategy, "resources": [{"name": n, "weight": w} for n, w in resources]}
    if shape is not None:
        s["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": v} for u, v in shape]}
    a: dict = {"scoringStrategy": s}
    if ignored:
        a["ignoredResources"] = list(ignored)
    if ignored_groups:
        a["ignoredResourceGroups"] = list(ignored_groups)
    return a


# ---------------------------------------------------------------------------------------------------------------
# Hypothesis strategies for random clusters, pods and profiles
# ---------------------------------------------------------------------------------------------------------------
LABEL_KEYS = ["zone", "gpu", "tier", "rank", "kubernetes.io/hostname"]
LABEL_VALUES = ["a", "b", "c", "1", "7", "42", "x1", "007", "1e3", "0x10"]
TAINT_KEYS = ["dedicated", "gpu", "spot", "node.kubernetes.io/unschedulable"]
TAINT_VALUES = ["", "a", "b"]
EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
EXTENDED = ["nvidia.com/gpu", "example.com/foo", "hugepages-2Mi"]
GIB = 2**30


# Strategies are built once at import: constructing them per draw (and @st.composite's reflection) costs more
# than the whole comparison.
# None = the node does not list the resource at all; strings exercise the quantity grammar and rounding
# (cpu "0.1m" -> 1 milli, "1.5Ki" -> 1536, "100M", "1e3").
_CPU_ALLOC = st.one_of(
    st.just(0),
    st.integers(1, 64_000),
    st.sampled_from([1000, 4000, 8000, 16_000]),
    st.sampled_from([None, "2", "3.5", "750m", "0.1m", "1e1"]),
)
_MEM_ALLOC = st.one_of(
    st.just(0),
    st.integers(1, 64 * GIB),
    st.sampled_from([GIB, 4 * GIB, 10_000]),
    st.sampled_from([None, "4Gi", "1.5Ki", "100M", "1e3", "0.5"]),
)
_PODS_ALLOC = st.one_of(st.just(110), st.integers(0, 6), st.none())
_LABELS = st.dictionaries(st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES), max_size=4)
_TAINTS = st.lists(
    st.builds(taint, st.sampled_from(TAINT_KEYS), st.sampled_from(TAINT_VALUES), st.sampled_from(EFFECTS)),
    max_size=3,
    unique_by=lambda t: (t["key"], t["effect"]),
)
_SMALL = st.integers(0, 8)
_CPU_REQ = st.one_of(
    st.none(),
    st.just(0),
    st.integers(1, 8000),
    st.sampled_from([100, 500, 1000, 3000]),
    st.sampled_from(["0.5", "250m", "0.1m", "1500u", "0"]),
)
_MEM_REQ = st.one_of(
    st.none(),
    st.just(0),
    st.integers(1, 8 * GIB),
    st.sampled_from([10_000, GIB]),
    st.sampled_from(["1Gi", "1.5Ki", "0.5", "1e3", "64Mi"]),
)


@st.composite
def node_dicts(draw, name: str) -> dict:
    cpu, mem, pods = draw(_CPU_ALLOC), draw(_MEM_ALLOC), draw(_PODS_ALLOC)
    extra = {}
    for r in EXTENDED:
        if draw(st.integers(0, 2)) == 0:
            extra[r] = draw(_SMALL) * (2 * 2**20 if r == "hugepages-2Mi" else 1)
    if draw(st.booleans()):
        extra["ephemeral-storage"] = draw(st.integers(0, 100 * GIB))
    labels = draw(_LABELS)
    taints = draw(_TAINTS)
    unsched = draw(st.integers(0, 5)) == 0
    return make_node(name, cpu, mem, pods=pods, extra=extra, labels=labels, taints=taints, unschedulable=unsched)


@st.composite
def requests_dicts(draw, allow_extended: bool = True) -> dict:
    r = {}
    c, m = draw(_CPU_REQ), draw(_MEM_REQ)
    if c is not None:
        r["cpu"] = c
    if m is not None:
        r["memory"] = m
    if allow_extended:
        for name in EXTENDED + ["ephemeral-storage"]:
            if draw(st.integers(0, 5)) == 0:
                if name == "hugepages-2Mi":
                    r[name] = draw(st.integers(0, 4)) * 2 * 2**20
                elif name == "ephemeral-storage":
                    r[name] = draw(st.integers(0, 10 * GIB))
                else:
                    r[name] = draw(st.integers(0, 4))
    return r


_REQS = requests_dicts()
_REQS_NO_EXT = requests_dicts(allow_extended=False)


@st.composite
def selector_terms(draw):
    ops = st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
    exprs = []
    for _ in range(draw(st.integers(0, 2))):
        op = draw(ops)
        key = draw(st.sampled_from(LABEL_KEYS))
        if op in ("In", "NotIn"):
            vals = draw(st.lists(st.sampled_from(LABEL_VALUES), min_size=1, max_size=3, unique=True))
        elif op in ("Gt", "Lt"):
            vals = [str(draw(st.integers(-5, 50)))]
        else:
            vals = []
        exprs.append(expr(key, op, *vals))
    fields = []
    if draw(st.integers(0, 4)) == 0:
        fields.append(
            {
                "key": "metadata.name",
                "operator": draw(st.sampled_from(["In", "NotIn"])),
                "values": [f"n{draw(st.integers(0, 5))}"],
            }
        )
    if not exprs and not fields:
        exprs.append(expr(draw(st.sampled_from(LABEL_KEYS)), "Exists"))
    return term(*exprs, fields=fields)


_POD_LEVEL = st.dictionaries(
    st.sampled_from(["cpu", "memory"]),
    st.one_of(_CPU_REQ.filter(lambda v: v is not None), _MEM_REQ.filter(lambda v: v is not None)),
    min_size=1,
    max_size=2,
)


@st.composite
def pod_dicts(draw, name: str, *, constraints: bool = True, preemption: bool = False) -> dict:
    """A random pod; ``preemption`` adds what kube-scheduler's preemption and its non-zero accounting look at:
    a priority, preemptionPolicy Never, pod-level requests and limits (spec.resources)."""
    containers = [container(draw(_REQS)) for _ in range(draw(st.integers(1, 3)))]
    init = None
    if draw(st.integers(0, 3)) == 0:
        init = []
        for _ in range(draw(st.integers(1, 2))):
            kw = {"restartPolicy": "Always"} if draw(st.booleans()) else {}
            init.append(container(draw(_REQS_NO_EXT), **kw))
    overhead = None
    if draw(st.integers(0, 5)) == 0:
        overhead = {"cpu": draw(st.integers(0, 500)), "memory": draw(st.integers(0, 2**28))}
    kw = {}
    if constraints:
        if draw(st.integers(0, 3)) == 0:
            kw["node_selector"] = draw(
                st.dictionaries(st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES), min_size=1, max_size=2)
            )
        if draw(st.integers(0, 3)) == 0:
            kw["required"] = draw(_REQUIRED)
        if draw(st.integers(0, 2)) == 0:
            kw["preferred"] = draw(_PREFERRED)
        if draw(st.booleans()):
            kw["tolerations"] = draw(_TOLERATIONS)
    pod = make_pod(name, *containers, init=init, overhead=overhead, **kw)
    if preemption:
        spec = pod["spec"]
        # Hypothesis leans to the first choice: the rare case comes last.
        spec["priority"] = draw(st.sampled_from([10, 0, 1000]))
        if draw(st.sampled_from([None, None, None, "Never"])):
            spec["preemptionPolicy"] = "Never"
        if draw(st.sampled_from([False, False, True])):
            section = draw(st.sampled_from(["requests", "limits", "both"]))
            values = draw(_POD_LEVEL)
            spec["resources"] = {
                s: {k: _qty(k, v) for k, v in values.items()}
                for s in (("requests", "limits") if section == "both" else (section,))
            }
    return pod


@st.composite
def toleration_dicts(draw) -> dict:
    op = draw(st.sampled_from(["Equal", "Exists", ""]))
    key = draw(st.sampled_from(TAINT_KEYS + ([""] if op == "Exists" else [])))
    value = draw(st.sampled_from(TAINT_VALUES)) if op != "Exists" else ""
    effect = draw(st.sampled_from(["", *EFFECTS]))
    t = toleration(key, op or "Equal", value, effect)
    if op == "":
        t.pop("operator")
    return t


_REQUIRED = st.lists(selector_terms(), min_size=1, max_size=3)
_PREFERRED = st.lists(st.tuples(st.integers(1, 100), selector_terms()), min_size=1, max_size=3)
_TOLERATIONS = st.lists(toleration_dicts(), max_size=3)

SHAPES = [
    [(0, 10), (100, 0)],
    [(0, 0), (100, 10)],
    [(10, 1), (90, 9)],
    [(0, 2), (40, 10), (100, 0)],
    [(0, 3), (50, 7), (75, 1), (100, 10)],
]


@st.composite
def profiles(draw, *, with_pct: bool = False) -> dict:
    strategy = draw(st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]))
    res_names = draw(
        st.lists(
            st.sampled_from(
                ["cpu", "memory", "nvidia.com/gpu", "example.com/foo", "ephemeral-storage", "hugepages-2Mi"]
            ),
            min_size=1,
            max_size=4,
            unique=True,
        )
    )
    fit_res = [(n, draw(st.integers(1, 100) if draw(st.booleans()) else st.just(1))) for n in res_names]
    shape = draw(st.sampled_from(SHAPES)) if strategy == "RequestedToCapacityRatio" else None
    ignored = draw(st.lists(st.sampled_from(["nvidia.com/gpu", "example.com/foo"]), max_size=1))
    ignored_groups = draw(st.lists(st.sampled_from(["example.com", "nvidia.com"]), max_size=1))
    fit = fit_args(strategy, fit_res, shape, ignored, ignored_groups)
    bal = [
        (n, 1)
        for n in draw(
            st.lists(
                st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "ephemeral-storage"]),
                min_size=1,
                max_size=3,
                unique=True,
            )
        )
    ]
    binpack = {
        "binpack.weight": draw(st.integers(0, 10)),
        "binpack.cpu": draw(st.integers(0, 5)),
        "binpack.memory": draw(st.integers(0, 5)),
    }
    extra = draw(st.lists(st.sampled_from(["nvidia.com/gpu", "example.com/foo"]), max_size=2, unique=True))
    if extra:
        binpack["binpack.resources"] = ",".join(extra)
        for r in extra:
            binpack[f"binpack.resources.{r}"] = draw(st.integers(0, 5))
    names = draw(
        st.lists(
            st.sampled_from(
                ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "NodeResourcesBalancedAllocation", "binpack"]
            ),
            min_size=1,
            max_size=5,
            unique=True,
        )
    )
    scores = [(n, draw(st.integers(1, 10))) for n in names]
    return make_profile(scores, fit=fit, balanced=bal, binpack=binpack, pct=100 if with_pct else None)


# ---------------------------------------------------------------------------------------------------------------
# Markers: `e2e` (a real control plane: tests/kube and tests/router's discovery) and `slow` (a minute or more), so
# `python -m pytest -m "not e2e"` runs the library layer alone and `-m "not slow"` the quick part.
# ---------------------------------------------------------------------------------------------------------------
# Modules that start a control plane (or the demo, or helm) of their own, without the `control_plane` fixture.
_E2E_MODULES = {
    "test_testenv.py",
    "test_wheel.py",
    "test_helm.py",
    "test_bench_smoke.py",
    "test_demo.py",
    "test_status_burst_e2e.py",
}
_SLOW_MODULES = {"test_wheel.py", "test_bench_smoke.py", "test_threads.py"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = item.path.name
        if "control_plane" in getattr(item, "fixturenames", ()) or module in _E2E_MODULES:
            item.add_marker(pytest.mark.e2e)
        if module in _SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


# ---------------------------------------------------------------------------------------------------------------
# The real control plane: one etcd + kube-apiserver for the whole session (built from the pinned Go module the
# first time, then reused from the cache), per-test namespaces on it. Used by tests/kube and tests/router.
# ---------------------------------------------------------------------------------------------------------------
def control_plane_unavailable() -> str | None:
    """Why the control plane cannot be had here, or None."""
    from vcore_kube.testenv import build

    try:
        build.binaries_dir(build=False)
        return None
    except build.BuildError:
        pass
    if shutil.which("go") is None:
        return "no Go toolchain to build kube-apiserver and etcd (and no cached build)"
    return None


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory):
    """etcd + kube-apiserver with vcore's CRDs and RBAC, started once for the suite."""
    from vcore_kube.testenv import ControlPlane, build

    why = control_plane_unavailable()
    if why:
        pytest.skip(why)
    # The first build takes minutes: show its progress line through pytest's output capture.
    build.binaries_dir(out=sys.__stderr__)
    plane = ControlPlane.up(tmp_path_factory.mktemp("kube-testenv"))
    try:
        yield plane
    finally:
        plane.down()


@pytest.fixture(scope="session")
def admin(control_plane):
    """The admin's raw-JSON Api (system:masters)."""
    api = control_plane.admin_api()
    yield api
    api.close()


_namespaces = itertools.count()


@pytest.fixture
def namespace(admin, request):
    """A fresh namespace per test (namespaces are never deleted: no namespace controller runs)."""
    from vcore_kube.testenv.objects import ensure_namespace

    name = f"t{next(_namespaces)}-{request.node.name.lower().replace('_', '-')}"[:63].rstrip("-")
    ensure_namespace(admin, name)
    return name


@pytest.fixture
def scheduler(control_plane, tmp_path):
    """`scheduler(name, **config)` starts a vcore-scheduler process against the control plane (tests/kube/harness.py);
    each must exit cleanly when the test ends."""
    from tests.kube.harness import SchedulerRun

    runs = []

    def start(name: str, **config) -> SchedulerRun:
        run = SchedulerRun(control_plane.scheduler_kubeconfig, tmp_path, name, **config).start()
        runs.append(run)
        return run

    yield start
    for run in runs:
        assert run.stop() == 0, run.log_tail()
