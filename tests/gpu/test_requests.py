"""Pod GPU requests: every convention (NVIDIA, Volcano, KAI, MIG), model constraints and every error path."""

from __future__ import annotations

import pytest

from vcore.gpu.requests import GpuRequest, ProductTerm, model_matches, pod_gpu_request


def make_pod(limits=None, requests=None, annotations=None, spec=None, containers=None, inits=None, name="p"):
    if containers is None:
        res = {}
        if limits is not None:
            res["limits"] = limits
        if requests is not None:
            res["requests"] = requests
        containers = [{"name": "main", "image": "cuda:12", "resources": res}]
    s = {"containers": containers, **(spec or {})}
    if inits is not None:
        s["initContainers"] = inits
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "team-a", "annotations": annotations or {}},
        "spec": s,
    }


def ctr(**res):
    return {"name": "c", "resources": {"limits": res}}


# --- whole GPUs ---------------------------------------------------------------------------------------------


def test_whole_from_limits():
    r = pod_gpu_request(make_pod(limits={"nvidia.com/gpu": "2", "cpu": "4"}))
    assert r == GpuRequest("whole", count=2, source="nvidia.com/gpu")


def test_whole_request_equals_limit():
    assert pod_gpu_request(make_pod(limits={"nvidia.com/gpu": 4}, requests={"nvidia.com/gpu": "4"})).count == 4


def test_whole_sums_containers_and_takes_init_max():
    pod = make_pod(
        containers=[ctr(**{"nvidia.com/gpu": "1"}), ctr(**{"nvidia.com/gpu": "2"})],
        inits=[ctr(**{"nvidia.com/gpu": "4"})],
    )
    assert pod_gpu_request(pod).count == 4
    pod = make_pod(
        containers=[ctr(**{"nvidia.com/gpu": "3"}), ctr(**{"nvidia.com/gpu": "2"})],
        inits=[ctr(**{"nvidia.com/gpu": "1"})],
    )
    assert pod_gpu_request(pod).count == 5


def test_no_gpu():
    assert pod_gpu_request(make_pod(limits={"cpu": "1"})) == GpuRequest("none")
    assert pod_gpu_request(make_pod(limits={"nvidia.com/gpu": "0"})).kind == "none"
    assert pod_gpu_request({"metadata": {"name": "x"}}).kind == "none"


# --- Volcano ------------------------------------------------------------------------------------------------


def test_volcano_gpu_memory():
    r = pod_gpu_request(make_pod(limits={"volcano.sh/gpu-memory": "10240"}))
    assert (r.kind, r.count, r.milli, r.memory_mib, r.memory_milli) == ("shared", 1, 0, 10240, None)


def test_volcano_vgpu_full():
    r = pod_gpu_request(
        make_pod(
            limits={"volcano.sh/vgpu-number": "2", "volcano.sh/vgpu-memory": "3000", "volcano.sh/vgpu-cores": "50"}
        )
    )
    assert (r.kind, r.count, r.milli, r.memory_mib) == ("shared", 2, 500, 3000)
    assert r.milli_on(81920) == 500 and r.memory_on(81920) == 3000


def test_volcano_vgpu_number_only_takes_whole_memory():
    r = pod_gpu_request(make_pod(limits={"volcano.sh/vgpu-number": "1"}))
    assert (r.milli, r.memory_mib, r.memory_milli) == (0, None, 1000)
    assert r.memory_on(40960) == 40960


def test_volcano_gpu_memory_with_vgpu_cores():
    r = pod_gpu_request(make_pod(limits={"volcano.sh/gpu-memory": "2048", "volcano.sh/vgpu-cores": "100"}))
    assert (r.count, r.milli, r.memory_mib) == (1, 1000, 2048)


# --- KAI ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value,milli",
    [("0.5", 500), ("0.25", 250), ("0.1", 100), ("0.3333", 334), ("0.0001", 1), (".75", 750), (" 0.2 ", 200)],
)
def test_kai_fraction(value, milli):
    r = pod_gpu_request(make_pod(annotations={"gpu-fraction": value}))
    assert (r.kind, r.count, r.milli, r.memory_milli, r.memory_mib) == ("shared", 1, milli, milli, None)


def test_kai_fraction_memory_follows_share():
    r = pod_gpu_request(make_pod(annotations={"gpu-fraction": "0.5"}))
    assert r.memory_on(81920) == 40960 and r.memory_on(15) == 8  # rounded up


def test_kai_fraction_one_is_a_whole_gpu():
    assert pod_gpu_request(make_pod(annotations={"gpu-fraction": "1"})) == GpuRequest(
        "whole", count=1, source="gpu-fraction"
    )
    assert pod_gpu_request(make_pod(annotations={"gpu-fraction": "1.0", "gpu-fraction-num-devices": "3"})).count == 3


def test_kai_fraction_num_devices():
    r = pod_gpu_request(make_pod(annotations={"gpu-fraction": "0.5", "gpu-fraction-num-devices": "2"}))
    assert (r.kind, r.count, r.milli) == ("shared", 2, 500)


def test_kai_gpu_memory():
    r = pod_gpu_request(make_pod(annotations={"gpu-memory": "4096"}))
    assert (r.kind, r.count, r.milli, r.memory_mib) == ("shared", 1, None, 4096)
    assert r.milli_on(40960) == 100 and r.milli_on(81920) == 50 and r.milli_on(30000) == 137  # ceil
    assert r.milli_on(0) > 1000  # unknown device memory: never fits


# --- MIG ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "profile",
    [
        "1g.10gb",
        "2g.20gb",
        "3g.40gb",
        "4g.40gb",
        "7g.80gb",
        "1g.5gb",
        "2g.10gb",
        "3g.20gb",
        "4g.20gb",
        "7g.40gb",
        "1g.20gb",
    ],
)
def test_mig_profiles(profile):
    r = pod_gpu_request(make_pod(limits={f"nvidia.com/mig-{profile}": "1"}))
    assert (r.kind, r.count, r.mig_profile) == ("mig", 1, profile)


def test_mig_counts_add_across_containers():
    pod = make_pod(containers=[ctr(**{"nvidia.com/mig-1g.10gb": "1"}), ctr(**{"nvidia.com/mig-1g.10gb": "2"})])
    assert pod_gpu_request(pod).count == 3


# --- model constraints ------------------------------------------------------------------------------------


def test_models_annotation():
    r = pod_gpu_request(make_pod(limits={"nvidia.com/gpu": "1"}, annotations={"vcore.io/gpu-models": "A100, H100"}))
    assert r.models == ("A100", "H100")
    assert r.allows("NVIDIA-A100-SXM4-80GB") and r.allows("NVIDIA-H100-80GB-HBM3")
    assert not r.allows("Tesla-V100-SXM2-16GB") and not r.allows("")


@pytest.mark.parametrize(
    "allowed,product,ok",
    [
        ("A100", "NVIDIA-A100-SXM4-80GB", True),
        ("a100-80gb", "NVIDIA-A100-SXM4-80GB", True),
        ("A100-40GB", "NVIDIA-A100-SXM4-80GB", False),
        ("A10", "NVIDIA-A100-SXM4-80GB", False),  # tokens, not substrings
        ("NVIDIA-A100-SXM4-80GB", "NVIDIA-A100-SXM4-80GB", True),
        ("V100M16", "V100M16", True),  # openb trace model names
        ("", "NVIDIA-A100-SXM4-80GB", False),
    ],
)
def test_model_matches(allowed, product, ok):
    assert model_matches(allowed, product) is ok


def affinity(*terms):
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": list(t)} for t in terms]
                }
            }
        }
    }


def expr(op, *values, key="nvidia.com/gpu.product"):
    e = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


A80, H80, V100 = "NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "Tesla-V100-SXM2-16GB"


def test_affinity_in():
    r = pod_gpu_request(make_pod(limits={"nvidia.com/gpu": "1"}, spec=affinity([expr("In", A80, H80)])))
    assert r.product_terms == (ProductTerm((A80, H80)),)
    assert r.allows(A80) and r.allows(H80) and not r.allows(V100)
    assert not r.allows("A100")  # affinity is exact, as Kubernetes evaluates labels


def test_affinity_terms_are_ored_and_expressions_anded():
    spec = affinity([expr("In", A80, H80), expr("NotIn", H80)], [expr("In", V100)])
    r = pod_gpu_request(make_pod(limits={"nvidia.com/gpu": "1"}, spec=spec))
    assert r.allows(A80) and r.allows(V100) and not r.allows(H80)


def test_affinity_term_without_product_allows_any():
    spec = affinity([expr("In", A80)], [expr("In", "zone-a", key="topology.kubernetes.io/zone")])
    assert pod_gpu_request(make_pod(limits={"nvidia.com/gpu": "1"}, spec=spec)).product_terms == ()


@pytest.mark.parametrize("op", ["DoesNotExist", "Gt", "Lt"])
def test_affinity_never_matching_term(op):
    values = () if op == "DoesNotExist" else ("5",)
    r = pod_gpu_request(make_pod(limits={"nvidia.com/gpu": "1"}, spec=affinity([expr(op, *values)])))
    assert not r.allows(A80)


def test_affinity_exists_and_empty_intersection():
    r = pod_gpu_request(make_pod(limits={"nvidia.com/gpu": "1"}, spec=affinity([expr("Exists"), expr("NotIn", V100)])))
    assert r.allows(A80) and not r.allows(V100)
    r = pod_gpu_request(make_pod(limits={"nvidia.com/gpu": "1"}, spec=affinity([expr("In", A80), expr("In", H80)])))
    assert not r.allows(A80) and not r.allows(H80)


def test_node_selector_product_and_with_affinity():
    pinned = {"nodeSelector": {"nvidia.com/gpu.product": A80}}
    r = pod_gpu_request(make_pod(limits={"nvidia.com/gpu": "1"}, spec=pinned))
    assert r.allows(A80) and not r.allows(H80)
    spec = {"nodeSelector": {"nvidia.com/gpu.product": A80}, **affinity([expr("In", H80)], [expr("In", A80, H80)])}
    r = pod_gpu_request(make_pod(limits={"nvidia.com/gpu": "1"}, spec=spec))
    assert r.allows(A80) and not r.allows(H80)


def test_annotation_and_affinity_both_apply():
    r = pod_gpu_request(
        make_pod(
            limits={"nvidia.com/gpu": "1"},
            annotations={"vcore.io/gpu-models": "H100"},
            spec=affinity([expr("In", A80, H80)]),
        )
    )
    assert r.allows(H80) and not r.allows(A80)


def test_frozen_and_kubernetes_client_object():
    from kubernetes.client import V1Container, V1ObjectMeta, V1Pod, V1PodSpec, V1ResourceRequirements

    pod = V1Pod(
        metadata=V1ObjectMeta(name="k", namespace="ns", annotations={"gpu-fraction": "0.5"}),
        spec=V1PodSpec(containers=[V1Container(name="c", resources=V1ResourceRequirements())]),
    )
    r = pod_gpu_request(pod)
    assert r.milli == 500
    with pytest.raises(AttributeError):
        r.milli = 1  # type: ignore[misc]


# --- errors -------------------------------------------------------------------------------------------------

P = r"pod team-a/p: "
BAD = [
    (
        "fraction>1",
        dict(annotations={"gpu-fraction": "1.5"}),
        ValueError,
        P + r"metadata.annotations\[gpu-fraction\]: must be in \(0, 1\], got 1.5",
    ),
    ("fraction=0", dict(annotations={"gpu-fraction": "0"}), ValueError, r"must be in \(0, 1\], got 0"),
    ("fraction<0", dict(annotations={"gpu-fraction": "-0.5"}), ValueError, r"must be in \(0, 1\], got -0.5"),
    ("fraction-nan", dict(annotations={"gpu-fraction": "NaN"}), ValueError, r"must be in \(0, 1\]"),
    ("fraction-inf", dict(annotations={"gpu-fraction": "Infinity"}), ValueError, r"must be in \(0, 1\]"),
    (
        "fraction-text",
        dict(annotations={"gpu-fraction": "half"}),
        ValueError,
        r"gpu-fraction\]: expected a number in \(0, 1\], got 'half'",
    ),
    (
        "fraction-type",
        dict(annotations={"gpu-fraction": 0.5}),
        TypeError,
        P + r"metadata.annotations\[gpu-fraction\]: must be a string, got a number 0.5",
    ),
    (
        "kai-memory<0",
        dict(annotations={"gpu-memory": "-1024"}),
        ValueError,
        P + r"metadata.annotations\[gpu-memory\]: must be a positive number of MiB, got -1024",
    ),
    ("kai-memory=0", dict(annotations={"gpu-memory": "0"}), ValueError, "must be a positive number of MiB"),
    (
        "kai-memory-text",
        dict(annotations={"gpu-memory": "4Gi"}),
        ValueError,
        r"expected an integer number of MiB, got '4Gi'",
    ),
    (
        "kai-both",
        dict(annotations={"gpu-memory": "1024", "gpu-fraction": "0.5"}),
        ValueError,
        "give gpu-fraction or gpu-memory, not both",
    ),
    (
        "kai-devices-alone",
        dict(annotations={"gpu-fraction-num-devices": "2"}),
        ValueError,
        r"gpu-fraction-num-devices\]: needs gpu-fraction or gpu-memory",
    ),
    (
        "kai-devices-0",
        dict(annotations={"gpu-fraction": "0.5", "gpu-fraction-num-devices": "0"}),
        ValueError,
        "must be positive",
    ),
    (
        "kai-devices-text",
        dict(annotations={"gpu-fraction": "0.5", "gpu-fraction-num-devices": "two"}),
        ValueError,
        "expected an integer",
    ),
    (
        "volcano-memory<0",
        dict(limits={"volcano.sh/gpu-memory": "-1"}),
        ValueError,
        P + r"spec.containers\[0\].resources.limits\[volcano.sh/gpu-memory\]: quantity '-1' must not be negative",
    ),
    ("vgpu-memory<0", dict(limits={"volcano.sh/vgpu-memory": "-5"}), ValueError, "must not be negative"),
    (
        "vgpu-cores>100",
        dict(limits={"volcano.sh/vgpu-cores": "150"}),
        ValueError,
        r"limits\[volcano.sh/vgpu-cores\]: must be a percentage 0-100, got 150",
    ),
    (
        "volcano-two-memories",
        dict(limits={"volcano.sh/gpu-memory": "1", "volcano.sh/vgpu-memory": "1"}),
        ValueError,
        "give volcano.sh/gpu-memory or volcano.sh/vgpu-memory, not both",
    ),
    ("gpu<0", dict(limits={"nvidia.com/gpu": "-1"}), ValueError, "must not be negative"),
    (
        "gpu-fractional",
        dict(limits={"nvidia.com/gpu": "0.5"}),
        ValueError,
        r"limits\[nvidia.com/gpu\]: must be a whole number, got '0.5'",
    ),
    ("gpu-malformed", dict(limits={"nvidia.com/gpu": "two"}), ValueError, r"limits\[nvidia.com/gpu\]"),
    (
        "request!=limit",
        dict(limits={"nvidia.com/gpu": "2"}, requests={"nvidia.com/gpu": "1"}),
        ValueError,
        r"requests\[nvidia.com/gpu\]: must equal the limit for an extended resource \(1 != 2\)",
    ),
    (
        "mig-unknown",
        dict(limits={"nvidia.com/mig-2g.15gb": "1"}),
        ValueError,
        P + r"spec.containers\[0\].resources.limits\[nvidia.com/mig-2g.15gb\]: unknown MIG profile '2g.15gb'",
    ),
    (
        "mig-two-profiles",
        dict(limits={"nvidia.com/mig-1g.10gb": "1", "nvidia.com/mig-2g.20gb": "1"}),
        ValueError,
        "more than one MIG profile",
    ),
    (
        "mix-whole-kai",
        dict(limits={"nvidia.com/gpu": "1"}, annotations={"gpu-fraction": "0.5"}),
        ValueError,
        P + r"spec: a pod asks for GPUs in exactly one way, got whole GPUs \(nvidia.com/gpu\) and KAI GPU sharing",
    ),
    (
        "mix-whole-mig",
        dict(limits={"nvidia.com/gpu": "1", "nvidia.com/mig-1g.10gb": "1"}),
        ValueError,
        r"whole GPUs \(nvidia.com/gpu\) and MIG \(nvidia.com/mig-1g.10gb\)",
    ),
    (
        "mix-volcano-kai",
        dict(limits={"volcano.sh/gpu-memory": "1024"}, annotations={"gpu-memory": "1024"}),
        ValueError,
        "Volcano GPU sharing .* and KAI GPU sharing",
    ),
    (
        "mix-mig-volcano",
        dict(limits={"nvidia.com/mig-1g.10gb": "1", "volcano.sh/vgpu-number": "1"}),
        ValueError,
        "exactly one way",
    ),
    (
        "models-empty",
        dict(annotations={"vcore.io/gpu-models": ""}),
        ValueError,
        r"vcore.io/gpu-models\]: expected a comma-separated list",
    ),
    ("models-hole", dict(annotations={"vcore.io/gpu-models": "A100,,H100"}), ValueError, "comma-separated"),
    (
        "affinity-op",
        dict(spec=affinity([expr("Near", "x")])),
        ValueError,
        r"nodeSelectorTerms\[0\].matchExpressions\[0\].operator: must be one of In, NotIn",
    ),
    (
        "affinity-values",
        dict(spec=affinity([expr("In", 5)])),
        TypeError,
        r"matchExpressions\[0\].values\[0\]: must be a string, got an integer 5",
    ),
    (
        "selector-type",
        dict(spec={"nodeSelector": {"nvidia.com/gpu.product": 1}}),
        TypeError,
        r"spec.nodeSelector\[nvidia.com/gpu.product\]",
    ),
    (
        "resources-type",
        dict(containers=[{"name": "c", "resources": {"limits": ["nvidia.com/gpu"]}}]),
        TypeError,
        r"spec.containers\[0\].resources.limits: must be a mapping, got a list",
    ),
    ("containers-type", dict(containers={"name": "c"}), TypeError, "spec.containers: must be a list, got a mapping"),
    (
        "volcano-two-containers",
        dict(containers=[ctr(**{"volcano.sh/gpu-memory": "1"}), ctr(**{"volcano.sh/gpu-memory": "1"})]),
        ValueError,
        "Volcano GPU sharing resources in more than one container",
    ),
]


@pytest.mark.parametrize("kw,exc,match", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_pods(kw, exc, match):
    with pytest.raises(exc, match=match):
        pod_gpu_request(make_pod(**kw))


def test_not_a_pod():
    with pytest.raises(TypeError, match="pod: expected a dict in API shape or a kubernetes V1Pod, got str"):
        pod_gpu_request("pod")


def test_default_namespace_in_errors():
    with pytest.raises(ValueError, match=r"^pod default/q: metadata.annotations\[gpu-fraction\]"):
        pod_gpu_request({"metadata": {"name": "q", "annotations": {"gpu-fraction": "2"}}})
