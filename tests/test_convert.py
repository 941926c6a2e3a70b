"""vcore._native._convert: v1 Node / Pod objects -> the core's flat dicts.

Request cases are kube-scheduler's own (component-helpers resource/helpers_test.go: TestPodRequestsAndLimits,
TestPodResourceRequests, and the sidecar cases of TestPodResourceLimits, which hold for requests too because a
missing request defaults to the limit). A pure-Python reference of PodRequests with exact Fractions checks the
native code on random pods (hypothesis).
"""

from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from vcore._native import _convert

node_spec = _convert.node_spec
pod_spec = _convert.pod_spec
pod_specs = _convert.pod_specs

GI = 1024**3
MI = 1024**2


def container(requests=None, limits=None, name="c", restart=None):
    c = {"name": name, "image": "busybox"}
    res = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    if res:
        c["resources"] = res
    if restart is not None:
        c["restartPolicy"] = restart
    return c


def pod(containers=(), init=(), overhead=None, name="p1", namespace="default", **spec):
    s = {"containers": list(containers), **spec}
    if init:
        s["initContainers"] = list(init)
    if overhead is not None:
        s["overhead"] = overhead
    meta = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": s}


def node(name="n1", allocatable=None, labels=None, taints=None, unschedulable=None):
    n = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": {}, "status": {}}
    if labels is not None:
        n["metadata"]["labels"] = labels
    if allocatable is not None:
        n["status"]["allocatable"] = allocatable
    if taints is not None:
        n["spec"]["taints"] = taints
    if unschedulable is not None:
        n["spec"]["unschedulable"] = unschedulable
    return n


def sidecar(**kw):
    return container(restart="Always", **kw)


# ---------------------------------------------------------------------------------------------------------
# node_spec
# ---------------------------------------------------------------------------------------------------------


def test_node_spec_full():
    n = node(
        allocatable={
            "cpu": "3920m",
            "memory": "63235788Ki",
            "pods": "110",
            "ephemeral-storage": "95491281146",
            "nvidia.com/gpu": "8",
            "hugepages-2Mi": "0",
        },
        labels={"kubernetes.io/hostname": "n1", "gpu": "a100"},
        taints=[
            {"key": "dedicated", "value": "ml", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2024-01-01T00:00:00Z"},
        ],
        unschedulable=True,
    )
    assert node_spec(n) == {
        "name": "n1",
        "labels": [("kubernetes.io/hostname", "n1"), ("gpu", "a100")],
        "allocatable": {
            "cpu": 3920,
            "memory": 63235788 * 1024,
            "pods": 110,
            "ephemeral-storage": 95491281146,
            "nvidia.com/gpu": 8,
            "hugepages-2Mi": 0,
        },
        "taints": [("dedicated", "ml", "NoSchedule"), ("node.kubernetes.io/unreachable", "", "NoExecute")],
        "unschedulable": True,
        "may_have_gpus": True,  # nvidia.com/gpu allocatable: vcore.gpu parses its devices
    }


def test_node_spec_minimal():
    assert node_spec({"metadata": {"name": "n"}}) == {
        "name": "n",
        "labels": [],
        "allocatable": {},
        "taints": [],
        "unschedulable": False,
    }


def test_node_allocatable_rounds_up():
    assert node_spec(node(allocatable={"cpu": "0.0001", "memory": "1.5"}))["allocatable"] == {"cpu": 1, "memory": 2}


NODE_ERRORS = [
    ({"metadata": {}}, ValueError, r"^node <unnamed>: metadata\.name: required"),
    ({}, ValueError, r"^node <unnamed>: metadata\.name: required"),
    ({"metadata": {"name": 5}}, TypeError, r"^node <unnamed>: metadata\.name: expected a string"),
    (
        node(taints=[{"key": "k", "effect": "Sometimes"}]),
        ValueError,
        r"^node n1: spec\.taints\[0\]\.effect: unsupported effect 'Sometimes'",
    ),
    (node(taints=[{"key": "k"}]), ValueError, r"^node n1: spec\.taints\[0\]\.effect: unsupported effect ''"),
    (
        node(taints=[{"key": "k", "effect": "NoSchedule"}, {"value": "v", "effect": "NoSchedule"}]),
        ValueError,
        r"^node n1: spec\.taints\[1\]\.key: required",
    ),
    (node(taints=[None]), TypeError, r"^node n1: spec\.taints\[0\]: expected an object"),
    (node(taints={"key": "k"}), TypeError, r"^node n1: spec\.taints: expected a list"),
    (
        node(allocatable={"cpu": "4", "memory": "1x"}),
        ValueError,
        r"^node n1: status\.allocatable\.memory: invalid quantity '1x'",
    ),
    (node(allocatable={"cpu": "-1"}), ValueError, r"^node n1: status\.allocatable\.cpu: quantity '-1' must not be"),
    (node(allocatable={"memory": "9Ei"}), ValueError, r"^node n1: status\.allocatable\.memory: quantity '9Ei' is too"),
    (node(allocatable={"cpu": None}), ValueError, r"^node n1: status\.allocatable\.cpu: invalid quantity None"),
    (node(allocatable=["cpu"]), TypeError, r"^node n1: status\.allocatable: expected an object"),
    (node(labels=["a"]), TypeError, r"^node n1: metadata\.labels: expected an object"),
    (node(labels={"a": 1}), TypeError, r"^node n1: metadata\.labels\.a: expected a string"),
    (node(unschedulable="yes"), TypeError, r"^node n1: spec\.unschedulable: expected a bool"),
    (42, TypeError, r"^node: expected a dict in API shape or a kubernetes V1Node, got int"),
    ("n1", TypeError, r"^node: expected a dict .* got str"),
]


@pytest.mark.parametrize(
    "obj,exc,match",
    NODE_ERRORS,
    ids=[
        "no-name",
        "empty",
        "name-not-str",
        "bad-effect",
        "missing-effect",
        "taint-without-key",
        "taint-none",
        "taints-not-list",
        "bad-quantity",
        "negative-quantity",
        "too-large",
        "null-quantity",
        "allocatable-not-dict",
        "labels-not-dict",
        "label-value-not-str",
        "unschedulable-not-bool",
        "int",
        "str",
    ],
)
def test_node_errors(obj, exc, match):
    with pytest.raises(exc, match=match):
        node_spec(obj)


# Kubernetes' ValidateNodeName (IsDNS1123Subdomain): at most 253 characters, '.'-separated parts of [a-z0-9-] that
# start and end with a letter or digit.
GOOD_NODE_NAMES = ["n", "0", "node-1", "gpu-a100-07.rack-3.example.com", "1.2.3", "a" * 253, "a-b-c", "x--y"]
BAD_NODE_NAMES = [
    "Node-1",
    "node_1",
    "-node",
    "node-",
    "node.",
    ".node",
    "a..b",
    "a.-b",
    "a-.b",
    "nöde",
    "node 1",
    "node/1",
    "a" * 254,
    "\ud800",
]


@pytest.mark.parametrize("name", GOOD_NODE_NAMES)
def test_node_name_is_a_dns_subdomain(name):
    assert node_spec({"metadata": {"name": name}})["name"] == name


@pytest.mark.parametrize("name", BAD_NODE_NAMES)
def test_node_name_that_kubernetes_refuses_is_refused(name):
    with pytest.raises(ValueError) as info:
        node_spec({"metadata": {"name": name}})
    message = str(info.value)
    if len(name) > 253:
        assert message == f"node {'a' * 60}... (254 characters): metadata.name: must be at most 253 characters, got 254"
    else:
        assert message.startswith(f"node {name}: metadata.name: {name!r} is not a DNS-1123 subdomain")


def test_a_huge_node_name_is_refused_without_echoing_it():
    with pytest.raises(ValueError) as info:
        node_spec({"metadata": {"name": "a" * 12000}})
    assert len(str(info.value)) < 200 and "12000 characters" in str(info.value)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.text(alphabet="ab9-.A_é", max_size=12) | st.text(alphabet="a-.", min_size=250, max_size=256))
def test_node_name_check_equals_the_shared_dns_subdomain_constraint(name):
    from vcore.validation import DNS1123_SUBDOMAIN

    try:
        DNS1123_SUBDOMAIN(name, "metadata.name")
        valid = True
    except ValueError:
        valid = False
    try:
        node_spec({"metadata": {"name": name}})
        converted = True
    except ValueError:
        converted = False
    assert converted == valid


# ---------------------------------------------------------------------------------------------------------
# pod_spec: requests
# ---------------------------------------------------------------------------------------------------------


def cpu_mem(cpu=None, mem=None):
    d = {}
    if cpu is not None:
        d["cpu"] = cpu
    if mem is not None:
        d["memory"] = mem
    return d


# (id, pod, expected requests)
K8S_REQUEST_CASES = [
    # TestPodRequestsAndLimits
    ("just-limit-no-overhead", pod([container(limits={"cpu": "9"})]), {"cpu": 9000}),
    ("just-overhead", pod([container()], overhead={"cpu": "5", "memory": "5"}), {"cpu": 5000, "memory": 5}),
    (
        "req-and-overhead",
        pod([container(requests={"cpu": "1", "memory": "10"})], overhead={"cpu": "5", "memory": "5"}),
        {"cpu": 6000, "memory": 15},
    ),
    (
        "all-req-lim-and-overhead",
        pod(
            [container(requests={"cpu": "1", "memory": "10"}, limits={"cpu": "2", "memory": "12"})],
            overhead={"cpu": "5", "memory": "5"},
        ),
        {"cpu": 6000, "memory": 15},
    ),
    (
        "req-some-lim-and-overhead",
        pod(
            [container(requests={"cpu": "1", "memory": "10"}, limits={"cpu": "2"})],
            overhead={"cpu": "5", "memory": "5"},
        ),
        {"cpu": 6000, "memory": 15},
    ),
    # TestPodRequestsAndLimitsWithoutOverhead (with the overhead the scheduler does count)
    (
        "two-containers-sum",
        pod(
            [
                container(requests={"cpu": "1", "memory": "5"}, limits={"cpu": "2", "memory": "10"}),
                container(requests={"cpu": "4", "memory": "12"}, limits={"cpu": "8", "memory": "24"}),
            ]
        ),
        {"cpu": 5000, "memory": 17},
    ),
    (
        "two-containers-overhead",
        pod(
            [container(requests={"cpu": "1", "memory": "5"}), container(requests={"cpu": "4", "memory": "12"})],
            overhead={"cpu": "3", "memory": "8"},
        ),
        {"cpu": 8000, "memory": 25},
    ),
    (
        "massive-init-plus-overhead",
        pod(
            [container(requests={"cpu": "1", "memory": "5"}), container(requests={"cpu": "4", "memory": "12"})],
            init=[container(requests={"cpu": "1", "memory": "5"}), container(requests={"cpu": "40", "memory": "120"})],
            overhead={"cpu": "3", "memory": "8"},
        ),
        {"cpu": 43000, "memory": 128},
    ),
    # TestPodResourceRequests
    (
        "larger-init-container",
        pod([container(requests={"cpu": "1"})], init=[container(requests={"cpu": "4"})]),
        {"cpu": 4000},
    ),
    (
        "larger-containers",
        pod(
            [container(requests={"cpu": "2"}), container(requests={"cpu": "3"})],
            init=[container(requests={"cpu": "2"})],
        ),
        {"cpu": 5000},
    ),
    (
        "pod-overhead-included",
        pod(
            [container(requests={"cpu": "2"}), container(requests={"cpu": "3"})],
            init=[container(requests={"cpu": "2"}, limits={"cpu": "2"})],
            overhead={"cpu": "1", "memory": "1Gi"},
        ),
        {"cpu": 6000, "memory": GI},
    ),
    (
        "restartable-init-container",
        pod([container(requests={"cpu": "1"})], init=[sidecar(requests={"cpu": "1"})]),
        {"cpu": 2000},
    ),
    (
        "multiple-restartable-init-containers",  # max(5, sidecars 1+2+3 + regular 1) = 7
        pod(
            [container(requests={"cpu": "1"})],
            init=[
                container(requests={"cpu": "5"}),
                sidecar(requests={"cpu": "1"}),
                sidecar(requests={"cpu": "2"}),
                sidecar(requests={"cpu": "3"}),
            ],
        ),
        {"cpu": 7000},
    ),
    (
        "multiple-restartable-and-regular-init-containers",  # init-2 needs 5 + sidecars started before it (1+2) = 8
        pod(
            [container(requests={"cpu": "1"})],
            init=[
                container(requests={"cpu": "5"}),
                sidecar(requests={"cpu": "1"}),
                sidecar(requests={"cpu": "2"}),
                container(requests={"cpu": "5"}),
                sidecar(requests={"cpu": "3"}),
            ],
        ),
        {"cpu": 8000},
    ),
    (
        "restartable-init-init-and-regular",  # max(10 + 100, 10 + 200) = 210
        pod(
            [container(requests={"cpu": "100"})],
            init=[sidecar(requests={"cpu": "10"}), container(requests={"cpu": "200"})],
        ),
        {"cpu": 210000},
    ),
    # TestPodResourceLimits sidecar cases, through request := limit defaulting
    (
        "limits-restartable-init-container",
        pod([container(limits={"cpu": "1"})], init=[sidecar(limits={"cpu": "1"})]),
        {"cpu": 2000},
    ),
    (
        "limits-multiple-restartable-and-regular",
        pod(
            [container(limits={"cpu": "1"})],
            init=[
                container(limits={"cpu": "5"}),
                sidecar(limits={"cpu": "1"}),
                sidecar(limits={"cpu": "2"}),
                container(limits={"cpu": "5"}),
                sidecar(limits={"cpu": "3"}),
            ],
        ),
        {"cpu": 8000},
    ),
    (
        "limited-and-unlimited-container",
        pod([container(limits={"cpu": "2", "memory": "2Gi"}), container()]),
        {"cpu": 2000, "memory": 2 * GI},
    ),
    ("no-containers", pod([]), {}),
    # vcore's own
    (
        "extended-and-hugepages",
        pod(
            [
                container(
                    requests={"cpu": "500m", "hugepages-2Mi": "64Mi"},
                    limits={"nvidia.com/gpu": "2", "hugepages-2Mi": "64Mi"},
                )
            ]
        ),
        {"cpu": 500, "hugepages-2Mi": 64 * MI, "nvidia.com/gpu": 2},
    ),
    ("zero-requests-dropped", pod([container(requests={"cpu": "0", "memory": "0", "nvidia.com/gpu": "0"})]), {}),
    ("request-wins-over-limit", pod([container(requests={"cpu": "250m"}, limits={"cpu": "4"})]), {"cpu": 250}),
    (
        "sidecar-memory-not-in-init-max",
        pod(
            [container(requests={"memory": "1Gi"})],
            init=[sidecar(requests={"memory": "1Gi"}), container(requests={"memory": "1Gi"})],
        ),
        {"memory": 2 * GI},
    ),
    # Kubernetes sums exact quantities and rounds the pod total once (MilliValue of the sum)
    (
        "sub-milli-cpu-summed-before-rounding",
        pod([container(requests={"cpu": "0.5m"}), container(requests={"cpu": "0.5m"})]),
        {"cpu": 1},
    ),
    (
        "milli-bytes-summed-before-rounding",
        pod(
            [
                container(requests={"memory": "400m"}),
                container(requests={"memory": "400m"}),
                container(requests={"memory": "200m"}),
            ]
        ),
        {"memory": 1},
    ),
    (
        "sub-milli-max-then-overhead",
        pod(
            [container(requests={"cpu": "0.4m"})], init=[container(requests={"cpu": "0.6m"})], overhead={"cpu": "0.4m"}
        ),
        {"cpu": 1},
    ),
]


@pytest.mark.parametrize("p,want", [c[1:] for c in K8S_REQUEST_CASES], ids=[c[0] for c in K8S_REQUEST_CASES])
def test_pod_requests(p, want):
    got = pod_spec(p)["requests"]
    assert got == want
    assert all(type(v) is int for v in got.values())


# (id, pod, nonzero cpu milli, nonzero memory bytes)
NONZERO_CASES = [
    ("no-requests", pod([container()]), 100, 209715200),
    ("two-empty-containers", pod([container(), container()]), 200, 2 * 209715200),
    ("explicit-zero-stays-zero", pod([container(requests={"cpu": "0", "memory": "0"})]), 0, 0),
    ("cpu-only", pod([container(requests={"cpu": "250m"})]), 250, 209715200),
    ("limit-counts-as-request", pod([container(limits={"memory": "1Gi"})]), 100, GI),
    (
        "init-default-wins",
        pod([container(requests={"cpu": "10m", "memory": "1Mi"})], init=[container()]),
        100,
        209715200,
    ),
    (
        "sidecar-defaults-add",
        pod([container(requests={"cpu": "10m", "memory": "1Mi"})], init=[sidecar()]),
        110,
        MI + 209715200,
    ),
    (
        "init-after-defaulted-sidecar",
        pod(
            [container(requests={"cpu": "1", "memory": "1Gi"})],
            init=[sidecar(), container(requests={"cpu": "2", "memory": "0"})],
        ),
        2100,
        GI + 209715200,
    ),
    ("overhead-added", pod([container()], overhead={"cpu": "50m", "memory": "10Mi"}), 150, 209715200 + 10 * MI),
    ("no-containers", pod([]), 0, 0),
]


@pytest.mark.parametrize("p,cpu,mem", [c[1:] for c in NONZERO_CASES], ids=[c[0] for c in NONZERO_CASES])
def test_nonzero_requests(p, cpu, mem):
    s = pod_spec(p)
    assert (s["nonzero_cpu_milli"], s["nonzero_mem_bytes"]) == (cpu, mem)


def test_nonzero_does_not_leak_into_requests():
    assert pod_spec(pod([container()]))["requests"] == {}


POD_LEVEL_CASES = [
    (
        "pod-level-requests-override",
        pod([container(requests={"cpu": "1", "memory": "1Gi"})], resources={"requests": {"cpu": "3", "memory": "2Gi"}}),
        {"cpu": 3000, "memory": 2 * GI},
        3000,
        2 * GI,
    ),
    (
        "pod-level-cpu-only",
        pod([container(requests={"cpu": "1", "memory": "1Gi"})], resources={"requests": {"cpu": "3"}}),
        {"cpu": 3000, "memory": GI},
        3000,
        GI,
    ),
    (
        "pod-level-limit-defaults-request-when-containers-have-none",
        pod([container()], resources={"limits": {"memory": "4Gi"}}),
        {"memory": 4 * GI},
        100,
        4 * GI,
    ),
    (
        "pod-level-limit-keeps-container-aggregate",
        pod([container(requests={"memory": "1Gi"}), container()], resources={"limits": {"memory": "4Gi"}}),
        {"memory": GI},
        200,
        GI,
    ),
    (
        "pod-level-unsupported-resource-ignored",
        pod([container(requests={"cpu": "1"})], resources={"requests": {"ephemeral-storage": "1Gi"}}),
        {"cpu": 1000},
        1000,
        209715200,
    ),
    (
        "pod-level-plus-overhead",
        pod([container()], resources={"requests": {"cpu": "2"}}, overhead={"cpu": "100m"}),
        {"cpu": 2100},
        2100,
        209715200,
    ),
]


@pytest.mark.parametrize("p,reqs,cpu,mem", [c[1:] for c in POD_LEVEL_CASES], ids=[c[0] for c in POD_LEVEL_CASES])
def test_pod_level_resources(p, reqs, cpu, mem):
    s = pod_spec(p)
    assert (s["requests"], s["nonzero_cpu_milli"], s["nonzero_mem_bytes"]) == (reqs, cpu, mem)


# kube-scheduler v1.34's two readings of a pod with pod-level requests. Bound (PodInfo.CalculateResource): the
# non-zero default only for a resource the pod asks for nowhere. Scored as the pod being placed (NodeResourcesFit's
# resourceAllocationScorer, without pod-level resources): the containers with their defaults, plus overhead.
# (id, pod, nonzero (cpu, mem), score (cpu, mem))
POD_LEVEL_NONZERO_CASES = [
    (
        "cpu-asked-by-one-container-no-default-for-the-other",
        pod([container(requests={"cpu": "500m"}), container()], resources={"requests": {"memory": "2Gi"}}),
        (500, 2 * GI),
        (600, 2 * 209715200),
    ),
    (
        "nothing-asks-cpu-every-container-defaults",
        pod([container(), container()], resources={"requests": {"memory": "2Gi"}}),
        (200, 2 * GI),
        (200, 2 * 209715200),
    ),
    (
        "explicit-zero-is-asked",
        pod([container(requests={"cpu": "0"}), container()], resources={"requests": {"memory": "1Gi"}}),
        (0, GI),
        (100, 2 * 209715200),
    ),
    (
        "pod-level-cpu-scored-from-containers",
        pod([container(requests={"cpu": "1", "memory": "1Gi"})], resources={"requests": {"cpu": "3", "memory": "2Gi"}}),
        (3000, 2 * GI),
        (1000, GI),
    ),
    (
        "overhead-on-both",
        pod([container()], resources={"requests": {"cpu": "2"}}, overhead={"cpu": "100m", "memory": "10Mi"}),
        (2100, 10 * MI),
        (200, 209715200 + 10 * MI),
    ),
    (
        "hugepages-at-pod-level-count-as-pod-level",
        pod([container(requests={"cpu": "500m"}), container()], resources={"requests": {"hugepages-2Mi": "4Mi"}}),
        (500, 2 * 209715200),
        (600, 2 * 209715200),
    ),
]


@pytest.mark.parametrize(
    "p,nonzero,score", [c[1:] for c in POD_LEVEL_NONZERO_CASES], ids=[c[0] for c in POD_LEVEL_NONZERO_CASES]
)
def test_pod_level_non_zero_readings(p, nonzero, score):
    s = pod_spec(p)
    assert (s["nonzero_cpu_milli"], s["nonzero_mem_bytes"]) == nonzero
    # Present only where the readings differ: the pod being placed reads like a bound one otherwise.
    assert (s.get("score_cpu_milli", s["nonzero_cpu_milli"]), s.get("score_mem_bytes", s["nonzero_mem_bytes"])) == score
    assert ("score_cpu_milli" in s) == (score != nonzero)


def test_pods_without_pod_level_requests_read_alike():
    s = pod_spec(pod([container(requests={"cpu": "500m"}), container()], init=[container(requests={"memory": "1Gi"})]))
    assert "score_cpu_milli" not in s and "score_mem_bytes" not in s


@pytest.mark.parametrize(
    "policy,out", [("Never", {"preemption_policy": "Never"}), ("PreemptLowerPriority", {}), (None, {})]
)
def test_preemption_policy(policy, out):
    p = pod([container()])
    if policy is not None:
        p["spec"]["preemptionPolicy"] = policy
    assert {k: v for k, v in pod_spec(p).items() if k == "preemption_policy"} == out


def test_unknown_preemption_policy_is_refused():
    p = pod([container()])
    p["spec"]["preemptionPolicy"] = "Sometimes"
    with pytest.raises(ValueError, match=r"^pod default/p1: spec\.preemptionPolicy: unsupported value 'Sometimes'"):
        pod_spec(p)


# ---------------------------------------------------------------------------------------------------------
# pod_spec: everything else
# ---------------------------------------------------------------------------------------------------------


def test_pod_spec_defaults():
    assert pod_spec({"metadata": {"name": "p"}}) == {
        "key": "default/p",
        "requests": {},
        "nonzero_cpu_milli": 0,
        "nonzero_mem_bytes": 0,
        "node_selector": [],
        "required_terms": None,
        "preferred_terms": [],
        "tolerations": [],
        "priority": 0,
    }


def test_pod_spec_full():
    p = pod(
        [container(requests={"cpu": "100m", "memory": "128Mi"}, limits={"cpu": "1", "memory": "256Mi"})],
        namespace="team-a",
        name="train-0",
        nodeSelector={"kubernetes.io/os": "linux", "gpu": "a100"},
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "zone", "operator": "In", "values": ["z1", "z2"]},
                                {"key": "spot", "operator": "DoesNotExist"},
                                {"key": "gen", "operator": "Gt", "values": ["3"]},
                            ]
                        },
                        {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n9"]}]},
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}},
                    {
                        "weight": 100,
                        "preference": {
                            "matchExpressions": [{"key": "mem", "operator": "Lt", "values": ["-5"]}],
                            "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}],
                        },
                    },
                ],
            },
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []},
        },
        tolerations=[
            {"operator": "Exists"},
            {"key": "dedicated", "value": "ml", "effect": "NoSchedule"},
            {"key": "gpu", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},
            {"key": "a", "operator": "", "value": "b"},
        ],
        priority=1000,
    )
    assert pod_spec(p) == {
        "key": "team-a/train-0",
        "requests": {"cpu": 100, "memory": 128 * MI},
        "nonzero_cpu_milli": 100,
        "nonzero_mem_bytes": 128 * MI,
        "node_selector": [("kubernetes.io/os", "linux"), ("gpu", "a100")],
        "required_terms": [
            {
                "expressions": [("zone", "In", ["z1", "z2"]), ("spot", "DoesNotExist", []), ("gen", "Gt", ["3"])],
                "fields": [],
            },
            {"expressions": [], "fields": [("metadata.name", "NotIn", ["n9"])]},
        ],
        "preferred_terms": [
            (10, {"expressions": [("disk", "Exists", [])], "fields": []}),
            (100, {"expressions": [("mem", "Lt", ["-5"])], "fields": [("metadata.name", "In", ["n1"])]}),
        ],
        "tolerations": [
            ("", "Exists", "", ""),
            ("dedicated", "Equal", "ml", "NoSchedule"),
            ("gpu", "Exists", "", "NoExecute"),
            ("a", "Equal", "b", ""),
        ],
        "priority": 1000,
        "images": ["busybox:latest"],
        "n_containers": 1,
    }


def test_namespace_defaults_to_default():
    assert pod_spec(pod(namespace=None))["key"] == "default/p1"
    assert pod_spec(pod(namespace=""))["key"] == "default/p1"


def test_input_is_not_mutated():
    import copy

    p = pod(
        [container(limits={"cpu": "1"})],
        init=[sidecar(requests={"cpu": "1"})],
        overhead={"cpu": "1"},
        tolerations=[{"operator": "Exists"}],
    )
    before = copy.deepcopy(p)
    pod_spec(p)
    assert p == before


def _aff(required=None, preferred=None):
    na = {}
    if required is not None:
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required}
    if preferred is not None:
        na["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    return {"nodeAffinity": na}


def _expr(key="k", op="In", values=None):
    e = {"key": key, "operator": op}
    if values is not None:
        e["values"] = values
    return e


REQ = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
PREF = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"

POD_ERRORS = [
    ("no-name", {"metadata": {"namespace": "ns"}}, ValueError, r"^pod ns/<unnamed>: metadata\.name: required"),
    ("no-metadata", {"spec": {}}, ValueError, r"^pod default/<unnamed>: metadata\.name: required"),
    ("name-not-str", {"metadata": {"name": 3}}, TypeError, r"^pod default/<unnamed>: metadata\.name: expected a str"),
    ("not-a-pod", 3.5, TypeError, r"^pod: expected a dict in API shape or a kubernetes V1Pod, got float"),
    (
        "bad-request",
        pod([container(), container(requests={"cpu": "1x"})]),
        ValueError,
        r"^pod default/p1: spec\.containers\[1\]\.resources\.requests\.cpu: invalid quantity '1x'$",
    ),
    (
        "bad-limit",
        pod([container(limits={"memory": "-1Gi"})]),
        ValueError,
        r"^pod default/p1: spec\.containers\[0\]\.resources\.limits\.memory: quantity '-1Gi' must not be negative",
    ),
    (
        "bad-init",
        pod([], init=[container(requests={"cpu": None})]),
        ValueError,
        r"^pod default/p1: spec\.initContainers\[0\]\.resources\.requests\.cpu: invalid quantity None",
    ),
    (
        "bad-overhead",
        pod([], overhead={"memory": "lots"}),
        ValueError,
        r"^pod default/p1: spec\.overhead\.memory: invalid quantity 'lots'",
    ),
    (
        "bad-pod-level",
        pod([], resources={"limits": {"cpu": "1.2.3"}}),
        ValueError,
        r"^pod default/p1: spec\.resources\.limits\.cpu: invalid quantity",
    ),
    (
        "quantity-too-large",
        pod([container(requests={"cpu": "9223372036854775807"})]),
        ValueError,
        r"^pod default/p1: spec\.containers\[0\]\.resources\.requests\.cpu: quantity .* is too large",
    ),
    (
        "sum-too-large",
        pod([container(requests={"memory": "7Ei"}), container(requests={"memory": "7Ei"})]),
        ValueError,
        r"^pod default/p1: spec: effective request of 'memory' exceeds",
    ),
    (
        "resources-not-dict",
        pod([{"name": "c", "resources": "big"}]),
        TypeError,
        r"^pod default/p1: spec\.containers\[0\]\.resources: expected an object, got str",
    ),
    (
        "requests-not-dict",
        pod([{"name": "c", "resources": {"requests": ["cpu"]}}]),
        TypeError,
        r"^pod default/p1: spec\.containers\[0\]\.resources\.requests: expected an object",
    ),
    (
        "resource-name-not-str",
        pod([container(requests={1: "1"})]),
        TypeError,
        r"^pod default/p1: spec\.containers\[0\]\.resources\.requests: resource name 1 is not a string",
    ),
    ("container-none", pod([None]), TypeError, r"^pod default/p1: spec\.containers\[0\]: expected an object"),
    (
        "containers-not-list",
        {"metadata": {"name": "p1"}, "spec": {"containers": {"name": "c"}}},
        TypeError,
        r"^pod default/p1: spec\.containers: expected a list",
    ),
    (
        "restart-policy-not-str",
        pod([], init=[container(restart=1)]),
        TypeError,
        r"^pod default/p1: spec\.initContainers\[0\]\.restartPolicy: expected a string",
    ),
    ("node-selector-not-dict", pod(nodeSelector=["a"]), TypeError, r"^pod default/p1: spec\.nodeSelector: expected an"),
    (
        "node-selector-value",
        pod(nodeSelector={"a": 1}),
        TypeError,
        r"^pod default/p1: spec\.nodeSelector\.a: expected a string",
    ),
    ("priority-not-int", pod(priority="high"), TypeError, r"^pod default/p1: spec\.priority: expected an integer"),
    ("priority-bool", pod(priority=True), TypeError, r"^pod default/p1: spec\.priority: expected an integer"),
    ("priority-out-of-int32", pod(priority=2**31), ValueError, r"^pod default/p1: spec\.priority: must fit in int32"),
    # node affinity, as the API server validates it
    (
        "no-terms",
        pod(affinity=_aff(required=[])),
        ValueError,
        rf"^pod default/p1: {REQ}: must have at least one node selector term",
    ),
    (
        "in-without-values",
        pod(affinity=_aff(required=[{"matchExpressions": [_expr(op="In", values=[])]}])),
        ValueError,
        rf"^pod default/p1: {REQ}\[0\]\.matchExpressions\[0\]\.values: must be specified when `operator` is 'In'",
    ),
    (
        "notin-without-values",
        pod(affinity=_aff(required=[{"matchExpressions": [_expr(op="NotIn")]}])),
        ValueError,
        rf"^pod default/p1: {REQ}\[0\]\.matchExpressions\[0\]\.values: must be specified",
    ),
    (
        "exists-with-values",
        pod(affinity=_aff(required=[{"matchExpressions": [_expr(values=["a"]), _expr(op="Exists", values=["x"])]}])),
        ValueError,
        rf"^pod default/p1: {REQ}\[0\]\.matchExpressions\[1\]\.values: may not be specified",
    ),
    (
        "doesnotexist-with-values",
        pod(affinity=_aff(required=[{"matchExpressions": [_expr(op="DoesNotExist", values=["x"])]}])),
        ValueError,
        rf"{REQ}\[0\]\.matchExpressions\[0\]\.values: may not be specified",
    ),
    (
        "gt-two-values",
        pod(affinity=_aff(required=[{"matchExpressions": [_expr(op="Gt", values=["1", "2"])]}])),
        ValueError,
        rf"{REQ}\[0\]\.matchExpressions\[0\]\.values: must be specified single value",
    ),
    (
        "lt-not-int",
        pod(affinity=_aff(required=[{"matchExpressions": [_expr(op="Lt", values=["1.5"])]}])),
        ValueError,
        rf"{REQ}\[0\]\.matchExpressions\[0\]\.values\[0\]: must be an integer, got '1.5'",
    ),
    (
        "gt-beyond-int64",
        pod(affinity=_aff(required=[{"matchExpressions": [_expr(op="Gt", values=["9223372036854775808"])]}])),
        ValueError,
        r"must be an integer",
    ),
    (
        "gt-with-space",
        pod(affinity=_aff(required=[{"matchExpressions": [_expr(op="Gt", values=[" 1"])]}])),
        ValueError,
        r"must be an integer",
    ),
    (
        "unknown-operator",
        pod(affinity=_aff(required=[{"matchExpressions": [_expr(op="Near", values=["x"])]}])),
        ValueError,
        rf"{REQ}\[0\]\.matchExpressions\[0\]\.operator: not a valid selector operator: 'Near'",
    ),
    (
        "lowercase-operator",
        pod(affinity=_aff(required=[{"matchExpressions": [_expr(op="in", values=["x"])]}])),
        ValueError,
        r"not a valid selector operator: 'in'",
    ),
    (
        "expression-without-key",
        pod(affinity=_aff(required=[{"matchExpressions": [_expr(key="", values=["x"])]}])),
        ValueError,
        rf"{REQ}\[0\]\.matchExpressions\[0\]\.key: required",
    ),
    (
        "value-not-str",
        pod(affinity=_aff(required=[{"matchExpressions": [_expr(values=[1])]}])),
        TypeError,
        rf"{REQ}\[0\]\.matchExpressions\[0\]\.values\[0\]: expected a string",
    ),
    (
        "field-bad-key",
        pod(affinity=_aff(required=[{"matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["u"]}]}])),
        ValueError,
        rf"{REQ}\[0\]\.matchFields\[0\]\.key: not a valid field selector key",
    ),
    (
        "field-exists",
        pod(affinity=_aff(required=[{"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}])),
        ValueError,
        rf"{REQ}\[0\]\.matchFields\[0\]\.operator: not a valid selector operator",
    ),
    (
        "field-two-values",
        pod(
            affinity=_aff(
                required=[{}, {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}]
            )
        ),
        ValueError,
        rf"{REQ}\[1\]\.matchFields\[0\]\.values: must be only one value",
    ),
    (
        "weight-zero",
        pod(affinity=_aff(preferred=[{"weight": 0, "preference": {}}])),
        ValueError,
        rf"^pod default/p1: {PREF}\[0\]\.weight: must be in the range 1-100, got 0",
    ),
    (
        "weight-101",
        pod(affinity=_aff(preferred=[{"weight": 1, "preference": {}}, {"weight": 101, "preference": {}}])),
        ValueError,
        rf"{PREF}\[1\]\.weight: must be in the range 1-100, got 101",
    ),
    (
        "weight-not-int",
        pod(affinity=_aff(preferred=[{"weight": "5", "preference": {}}])),
        TypeError,
        rf"{PREF}\[0\]\.weight: expected an integer",
    ),
    (
        "preference-missing",
        pod(affinity=_aff(preferred=[{"weight": 5}])),
        ValueError,
        rf"{PREF}\[0\]\.preference: required",
    ),
    (
        "preference-bad-expression",
        pod(
            affinity=_aff(preferred=[{"weight": 5, "preference": {"matchExpressions": [_expr(op="Gt", values=["x"])]}}])
        ),
        ValueError,
        rf"{PREF}\[0\]\.preference\.matchExpressions\[0\]\.values\[0\]: must be an integer",
    ),
    ("affinity-not-dict", pod(affinity="any"), TypeError, r"^pod default/p1: spec\.affinity: expected an object"),
    # tolerations
    (
        "toleration-bad-operator",
        pod(tolerations=[{"key": "k", "operator": "Has"}]),
        ValueError,
        r"^pod default/p1: spec\.tolerations\[0\]\.operator: unsupported operator 'Has'",
    ),
    (
        "toleration-exists-with-value",
        pod(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}]),
        ValueError,
        r"^pod default/p1: spec\.tolerations\[0\]\.value: must be empty when `operator` is 'Exists'",
    ),
    (
        "toleration-empty-key-equal",
        pod(tolerations=[{"operator": "Exists"}, {"value": "v"}]),
        ValueError,
        r"^pod default/p1: spec\.tolerations\[1\]\.operator: must be Exists when `key` is empty",
    ),
    (
        "toleration-bad-effect",
        pod(tolerations=[{"key": "k", "effect": "noschedule"}]),
        ValueError,
        r"^pod default/p1: spec\.tolerations\[0\]\.effect: unsupported effect 'noschedule'",
    ),
    (
        "toleration-seconds-without-noexecute",
        pod(tolerations=[{"key": "k", "effect": "NoSchedule", "tolerationSeconds": 5}]),
        ValueError,
        r"^pod default/p1: spec\.tolerations\[0\]\.effect: must be 'NoExecute' when `tolerationSeconds` is set",
    ),
    ("toleration-not-dict", pod(tolerations=["k"]), TypeError, r"^pod default/p1: spec\.tolerations\[0\]: expected an"),
    (
        "toleration-key-not-str",
        pod(tolerations=[{"key": 1}]),
        TypeError,
        r"^pod default/p1: spec\.tolerations\[0\]\.key: expected a string",
    ),
]


@pytest.mark.parametrize("obj,exc,match", [c[1:] for c in POD_ERRORS], ids=[c[0] for c in POD_ERRORS])
def test_pod_errors(obj, exc, match):
    with pytest.raises(exc, match=match):
        pod_spec(obj)


def test_pod_specs_batch_and_error_index():
    pods = [pod(name=f"p{i}", containers=[container(requests={"cpu": f"{i + 1}00m"})]) for i in range(5)]
    out = pod_specs(pods)
    assert [s["key"] for s in out] == [f"default/p{i}" for i in range(5)]
    assert [s["requests"]["cpu"] for s in out] == [100, 200, 300, 400, 500]
    assert pod_specs([]) == []
    assert pod_specs(iter(pods[:2])) == out[:2]
    pods[3]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1x"
    with pytest.raises(
        ValueError, match=r"^pods\[3\]: pod default/p3: spec\.containers\[0\]\.resources\.requests\.cpu: invalid"
    ):
        pod_specs(pods)
    pods[3] = "not a pod"
    with pytest.raises(TypeError, match=r"^pods\[3\]: pod: expected a dict"):
        pod_specs(pods)


# ---------------------------------------------------------------------------------------------------------
# kubernetes client models give the same result as dicts
# ---------------------------------------------------------------------------------------------------------

k8s = pytest.importorskip("kubernetes.client")


def test_v1_node_model_matches_dict():
    model = k8s.V1Node(
        metadata=k8s.V1ObjectMeta(name="gpu-1", labels={"gpu": "h100", "zone": "z1"}),
        spec=k8s.V1NodeSpec(
            taints=[k8s.V1Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")], unschedulable=False
        ),
        status=k8s.V1NodeStatus(allocatable={"cpu": "95", "memory": "1Ti", "nvidia.com/gpu": "8", "pods": "110"}),
    )
    as_dict = node(
        name="gpu-1",
        labels={"gpu": "h100", "zone": "z1"},
        allocatable={"cpu": "95", "memory": "1Ti", "nvidia.com/gpu": "8", "pods": "110"},
        taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
        unschedulable=False,
    )
    assert node_spec(model) == node_spec(as_dict)
    assert node_spec(model)["allocatable"] == {"cpu": 95000, "memory": 1024**4, "nvidia.com/gpu": 8, "pods": 110}


def test_v1_pod_model_matches_dict():
    def res(req=None, lim=None):
        return k8s.V1ResourceRequirements(requests=req, limits=lim)

    model = k8s.V1Pod(
        metadata=k8s.V1ObjectMeta(name="w-0", namespace="ml"),
        spec=k8s.V1PodSpec(
            containers=[
                k8s.V1Container(
                    name="main", image="busybox", resources=res({"cpu": "2", "memory": "8Gi"}, {"nvidia.com/gpu": "1"})
                ),
                k8s.V1Container(name="helper", image="busybox"),
            ],
            init_containers=[
                k8s.V1Container(name="prep", image="busybox", resources=res({"cpu": "4"})),
                k8s.V1Container(name="proxy", image="busybox", restart_policy="Always", resources=res({"cpu": "100m"})),
            ],
            overhead={"cpu": "250m"},
            node_selector={"pool": "gpu"},
            affinity=k8s.V1Affinity(
                node_affinity=k8s.V1NodeAffinity(
                    required_during_scheduling_ignored_during_execution=k8s.V1NodeSelector(
                        node_selector_terms=[
                            k8s.V1NodeSelectorTerm(
                                match_expressions=[
                                    k8s.V1NodeSelectorRequirement(key="gpu", operator="In", values=["h100"])
                                ]
                            )
                        ]
                    ),
                    preferred_during_scheduling_ignored_during_execution=[
                        k8s.V1PreferredSchedulingTerm(
                            weight=7,
                            preference=k8s.V1NodeSelectorTerm(
                                match_fields=[
                                    k8s.V1NodeSelectorRequirement(key="metadata.name", operator="In", values=["n1"])
                                ]
                            ),
                        )
                    ],
                )
            ),
            tolerations=[k8s.V1Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")],
            priority=50,
        ),
    )
    as_dict = pod(
        [
            container(name="main", requests={"cpu": "2", "memory": "8Gi"}, limits={"nvidia.com/gpu": "1"}),
            container(name="helper"),
        ],
        init=[container(name="prep", requests={"cpu": "4"}), sidecar(name="proxy", requests={"cpu": "100m"})],
        overhead={"cpu": "250m"},
        name="w-0",
        namespace="ml",
        nodeSelector={"pool": "gpu"},
        affinity=_aff(
            required=[{"matchExpressions": [_expr("gpu", "In", ["h100"])]}],
            preferred=[
                {
                    "weight": 7,
                    "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
                }
            ],
        ),
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        priority=50,
    )
    got = pod_spec(model)
    assert got == pod_spec(as_dict)
    # containers 2 + 0 + sidecar 0.1 = 2.1 vs init 4 -> 4 cores, + 250m overhead
    assert got["requests"] == {"cpu": 4250, "memory": 8 * GI, "nvidia.com/gpu": 1}
    # nonzero: helper counts 100m/200Mi and the sidecar 200Mi; cpu: max(2 + 0.1 + 0.1, 4) + 0.25
    assert got["nonzero_cpu_milli"] == 4250
    assert got["nonzero_mem_bytes"] == 8 * GI + 2 * 209715200
    assert pod_specs([model, as_dict]) == [got, got]


def test_model_errors_name_the_object():
    model = k8s.V1Pod(
        metadata=k8s.V1ObjectMeta(name="bad"),
        spec=k8s.V1PodSpec(
            containers=[k8s.V1Container(name="c", resources=k8s.V1ResourceRequirements(requests={"cpu": "one"}))]
        ),
    )
    with pytest.raises(ValueError, match=r"^pod default/bad: spec\.containers\[0\]\.resources\.requests\.cpu: invalid"):
        pod_spec(model)


# ---------------------------------------------------------------------------------------------------------
# Property: native PodRequests == a pure-Python reference with exact Fractions
# ---------------------------------------------------------------------------------------------------------

_UNITS = {"": 1, "m": Fraction(1, 1000), "n": Fraction(1, 10**9), "Ki": 1024, "Mi": 1024**2, "k": 1000}


def _q(s):
    for suf in ("Ki", "Mi", "m", "n", "k"):
        if s.endswith(suf):
            return Fraction(s[: -len(suf)]) * _UNITS[suf]
    return Fraction(s)


def _ceil(x):
    return -((-x.numerator) // x.denominator)


def reference_pod(p):
    """resourcehelper.PodRequests (+ NonMissingContainerRequests for the nonzero pair), in exact rationals."""
    spec = p["spec"]

    def eff(c):
        r = dict((c.get("resources") or {}).get("limits") or {})
        r.update((c.get("resources") or {}).get("requests") or {})
        return {k: _q(v) for k, v in r.items()}

    def aggregate(nonmissing):
        def reqs(c):
            d = eff(c)
            for k, v in nonmissing.items():
                d.setdefault(k, v)
            return d

        total, side, imax = {}, {}, {}
        for c in spec.get("containers") or []:
            for k, v in reqs(c).items():
                total[k] = total.get(k, 0) + v
        for c in spec.get("initContainers") or []:
            d = reqs(c)
            if c.get("restartPolicy") == "Always":
                for k, v in d.items():
                    total[k] = total.get(k, 0) + v
                    side[k] = side.get(k, 0) + v
                view = side
            else:
                view = dict(d)
                for k, v in side.items():
                    view[k] = view.get(k, 0) + v
            for k, v in view.items():
                imax[k] = max(imax.get(k, 0), v)
        for k, v in imax.items():
            total[k] = max(total.get(k, 0), v)
        for k, v in (spec.get("overhead") or {}).items():
            total[k] = total.get(k, 0) + _q(v)
        return total

    total = aggregate({})
    requests = {}
    for k, v in total.items():
        c = _ceil(v * 1000) if k == "cpu" else _ceil(v)
        if c:
            requests[k] = c
    nz = aggregate({"cpu": Fraction(1, 10), "memory": 209715200})
    return requests, _ceil(nz.get("cpu", 0) * 1000), _ceil(nz.get("memory", 0))


quantities = st.sampled_from(
    ["0", "1", "2", "100m", "250m", "0.5m", "1.5", "3n", "128Mi", "1Mi", "1Ki", "1500m", "7", "0.1", "2k"]
)
resource_lists = st.dictionaries(
    st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "ephemeral-storage"]), quantities, max_size=3
)
containers = st.builds(
    lambda req, lim, side: container(req or None, lim or None, restart="Always" if side else None),
    resource_lists,
    resource_lists,
    st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(containers.map(lambda c: {k: v for k, v in c.items() if k != "restartPolicy"}), max_size=4),
    st.lists(containers, max_size=4),
    st.one_of(st.none(), resource_lists),
)
def test_pod_requests_match_reference(conts, inits, overhead):
    p = pod(conts, init=inits, overhead=overhead)
    s = pod_spec(p)
    assert (s["requests"], s["nonzero_cpu_milli"], s["nonzero_mem_bytes"]) == reference_pod(p)


# ---------------------------------------------------------------------------------------------------------
# The hand-written stub matches the compiled module
# ---------------------------------------------------------------------------------------------------------


def test_stub_matches_module():
    import ast
    import inspect
    import pathlib

    stub = pathlib.Path(_convert.__file__).with_name("_convert.pyi")
    if not stub.exists():  # an installed copy without stubs: nothing to compare
        pytest.skip("no _convert.pyi next to the module")
    tree = ast.parse(stub.read_text())
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert set(funcs) == set(_convert.__all__)
    for name, fn in funcs.items():
        sig = inspect.signature(getattr(_convert, name))
        stub_params = [a.arg for a in fn.args.args] + [a.arg for a in fn.args.kwonlyargs]
        assert stub_params == list(sig.parameters), name
        kwonly = [p for p, v in sig.parameters.items() if v.kind is inspect.Parameter.KEYWORD_ONLY]
        assert [a.arg for a in fn.args.kwonlyargs] == kwonly, name
