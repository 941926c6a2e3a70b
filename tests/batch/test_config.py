"""The cycle configuration in Volcano's volcano-scheduler.conf shape: parsing, defaults, errors, node profile."""

from __future__ import annotations

import warnings

import pytest
import yaml

import vcore
from vcore.batch.config import DEFAULT_CONF, CycleConfig

from .builders import build, gang, node

VOLCANO_TYPICAL = """
actions: "enqueue, allocate, backfill, preempt, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
    arguments:
      overcommit-factor: 1.5
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
    arguments:
      binpack.weight: 10
      binpack.cpu: 2
"""


def test_default_is_volcanos_default_configuration():
    config = CycleConfig.default()
    assert config.actions == ("enqueue", "allocate", "backfill")
    assert [[p.name for p in tier] for tier in config.tiers] == [
        ["priority", "gang", "conformance"],
        ["overcommit", "drf", "predicates", "proportion", "nodeorder"],
    ]
    assert config.overcommit_factor == 1.2
    assert CycleConfig.from_config(None) == config == CycleConfig.from_config(DEFAULT_CONF)


def test_typical_volcano_configuration_loads(tmp_path):
    path = tmp_path / "volcano-scheduler.conf"
    path.write_text(VOLCANO_TYPICAL)
    config = CycleConfig.from_config(str(path))
    assert config.actions == ("enqueue", "allocate", "backfill", "preempt", "reclaim")
    assert config.overcommit_factor == 1.5
    assert not config.plugin("gang").enabled("enablePreemptable")
    assert config.plugin("gang").enabled("enableJobOrder")
    profile = vcore.Profile.from_config(config.node_profile())
    assert dict(profile.scores) == {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "NodeResourcesBalancedAllocation": 1,
        "InterPodAffinity": 2,
        "PodTopologySpread": 2,
        "ImageLocality": 1,
        "binpack": 1,
    }
    assert profile.args["binpack"].weight == 10
    assert profile.filters == (
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "GPUDeviceFit",
    )


def test_configmap_wrapping_loads(tmp_path):
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "volcano-scheduler-configmap"},
        "data": {"volcano-scheduler.conf": VOLCANO_TYPICAL},
    }
    path = tmp_path / "cm.yaml"
    path.write_text(yaml.safe_dump(cm))
    assert CycleConfig.from_config(str(path)).actions[-1] == "reclaim"


def test_nodeorder_weights_become_the_profile():
    conf = {
        "actions": "allocate",
        "tiers": [
            {
                "plugins": [
                    {
                        "name": "predicates",
                        "arguments": {"predicate.TaintTolerationEnable": False, "predicate.PodAffinityEnable": False},
                    },
                    {
                        "name": "nodeorder",
                        "arguments": {
                            "leastrequested.weight": 0,
                            "mostrequested.weight": 3,
                            "nodeaffinity.weight": 5,
                            "tainttoleration.weight": 0,
                            "podaffinity.weight": 4,
                            "imagelocality.weight": 0,
                        },
                    },
                ]
            }
        ],
    }
    profile = vcore.Profile.from_config(CycleConfig.from_config(conf).node_profile())
    assert dict(profile.scores) == {
        "NodeAffinity": 5,
        "NodeResourcesFit": 3,
        "NodeResourcesBalancedAllocation": 1,
        "InterPodAffinity": 4,
        "PodTopologySpread": 2,
    }
    assert profile.args["NodeResourcesFit"].strategy == "MostAllocated"
    assert "TaintToleration" not in profile.filters and "InterPodAffinity" not in profile.filters
    assert "PodTopologySpread" in profile.filters and "NodePorts" in profile.filters


def test_without_predicates_only_resources_filter():
    conf = {"actions": "allocate", "tiers": [{"plugins": [{"name": "gang"}]}]}
    profile = vcore.Profile.from_config(CycleConfig.from_config(conf).node_profile())
    assert profile.filters == ("NodeResourcesFit", "GPUDeviceFit") and profile.scores == ()


ZONE = "topology.kubernetes.io/zone"


def zone_bound_claim_cluster() -> vcore.Cluster:
    """Nodes in zones a and b; a claim bound to a volume that only zone b's nodes reach; a pending pod using it."""
    cluster = vcore.Cluster()
    for name, zone in (("a1", "a"), ("b1", "b")):
        cluster.add_node(
            {"metadata": {"name": name, "labels": {ZONE: zone}}, "status": {"allocatable": {"cpu": "4", "pods": "10"}}}
        )
    in_zone_b = {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["b"]}]}
    cluster.add_persistent_volume(
        {
            "metadata": {"name": "pv1"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "claimRef": {"namespace": "ns", "name": "data"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [in_zone_b]}},
            },
            "status": {"phase": "Bound"},
        }
    )
    cluster.add_persistent_volume_claim(
        {
            "metadata": {"name": "data", "namespace": "ns", "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
            "spec": {"volumeName": "pv1", "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": "Bound"},
        }
    )
    cluster.add_pod(
        {
            "metadata": {"name": "p", "namespace": "ns"},
            "spec": {
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}],
            },
        }
    )
    return cluster


def test_volcano_predicates_honor_volumes():
    """Volcano's predicates run NodeVolumeLimits, VolumeZone and VolumeBinding unless switched off: under Volcano's
    default configuration the pod goes where its volume is (before, vcore's Volcano profile had no volume filter and
    placed it in zone a)."""
    result = vcore.Scheduler(zone_bound_claim_cluster(), cycle=DEFAULT_CONF).run_cycle()
    assert [(b.pod, b.node) for b in result.bindings] == [("ns/p", "b1")]


def test_volcano_predicates_volume_switches():
    conf = {"actions": "allocate", "tiers": [{"plugins": [{"name": "predicates", "arguments": {}}]}]}
    switches = ("predicate.NodeVolumeLimitsEnable", "predicate.VolumeZoneEnable", "predicate.VolumeBindingEnable")
    conf["tiers"][0]["plugins"][0]["arguments"] = dict.fromkeys(switches, False)
    profile = vcore.Profile.from_config(CycleConfig.from_config(conf).node_profile())
    assert not {"NodeVolumeLimits", "VolumeZone", "VolumeBinding"} & set(profile.filters)
    assert "VolumeRestrictions" in profile.filters  # not a Volcano predicate; vcore keeps it (see config.py)


# The volcano-scheduler.conf files of Volcano v1.14's helm chart (installer/helm/chart/volcano/config).
HELM_CONFS = {
    "volcano-scheduler.conf": """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
""",
    "volcano-scheduler-ci.conf": """
actions: "enqueue, allocate, backfill, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
  - name: sla
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
    arguments:
      predicate.DynamicResourceAllocationEnable: true
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
""",
}


@pytest.mark.parametrize("name", list(HELM_CONFS))
def test_volcanos_own_configurations_load(name):
    """Volcano's shipped configurations run as they are. Its CI one turns DRA on, which vcore lacks: a warning says
    that pods with resourceClaims stay pending (vcore never places them), and the rest of the configuration holds."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scheduler = vcore.Scheduler(vcore.Cluster(), cycle=yaml.safe_load(HELM_CONFS[name]))
    notes = [str(w.message) for w in caught if issubclass(w.category, vcore.ProfileWarning)]
    dra = "predicate.DynamicResourceAllocationEnable" in HELM_CONFS[name]
    assert notes == (
        [
            "tiers[1].plugins[2].arguments.predicate.DynamicResourceAllocationEnable: vcore has no Dynamic Resource "
            "Allocation; a pod with resourceClaims stays pending (Volcano's DRA filter would place it)"
        ]
        if dra
        else []
    )
    assert "VolumeBinding" in scheduler.profile.filters and "binpack" in dict(scheduler.profile.scores)


# Volcano v1.14's GPU-sharing guide (docs/user-guide/how_to_use_gpu_sharing.md): deviceshare turns sharing on.
GPU_SHARING_CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: deviceshare
    arguments:
      deviceshare.GPUSharingEnable: true
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""


def test_deviceshare_gpu_sharing_places_a_share_on_one_device():
    """deviceshare's GPU sharing is vcore's GPUDeviceFit: a 30 GiB share goes on one GPU of a node that has room on
    one, not on a node whose 2 x 20 GiB free add up to it but fit it on neither."""
    cluster = vcore.Cluster()
    for name, used in (("split", 20480), ("whole", 0)):
        cluster.add_node(
            {
                "metadata": {"name": name},
                # two 40 GiB GPUs, as Volcano's GPU-share device plugin advertises them
                "status": {
                    "allocatable": {
                        "cpu": "8",
                        "pods": "10",
                        "volcano.sh/gpu-number": "2",
                        "volcano.sh/gpu-memory": "81920",
                    }
                },
            }
        )
        for gpu in (0, 1) if used else ():
            cluster.add_pod(
                {
                    "metadata": {
                        "name": f"{name}-{gpu}",
                        "namespace": "ns",
                        "annotations": {"volcano.sh/gpu-index": str(gpu)},
                    },
                    "spec": {
                        "nodeName": name,
                        "containers": [{"name": "c", "resources": {"limits": {"volcano.sh/gpu-memory": str(used)}}}],
                    },
                    "status": {"phase": "Running"},
                }
            )
    share = {"limits": {"volcano.sh/gpu-memory": "30720"}}
    cluster.add_pod(
        {"metadata": {"name": "share", "namespace": "ns"}, "spec": {"containers": [{"name": "c", "resources": share}]}}
    )
    scheduler = vcore.Scheduler(cluster, cycle=yaml.safe_load(GPU_SHARING_CONF))
    probe = {
        "metadata": {"name": "probe", "namespace": "ns"},
        "spec": {"containers": [{"name": "c", "resources": share}]},
    }
    assert scheduler.filter(probe).feasible == ["whole"]
    [binding] = scheduler.run_cycle().bindings
    assert binding.node == "whole" and len(binding.gpus.indices) == 1


@pytest.mark.parametrize(
    "switch", ["GPUNumberEnable", "VGPUEnable", "AscendMindClusterVNPUEnable", "AscendHAMiVNPUEnable"]
)
def test_deviceshare_protocols_vcore_lacks_are_refused(switch):
    conf = yaml.safe_load(GPU_SHARING_CONF)
    conf["tiers"][1]["plugins"][1]["arguments"] = {f"deviceshare.{switch}": True}
    with pytest.raises(vcore.ProfileError, match=rf"tiers\[1\]\.plugins\[1\]\.arguments\.deviceshare\.{switch}: "):
        CycleConfig.from_config(conf)
    conf["tiers"][1]["plugins"][1]["arguments"] = {f"deviceshare.{switch}": False}
    CycleConfig.from_config(conf)


def test_deviceshare_node_lock_is_a_warning():
    conf = yaml.safe_load(GPU_SHARING_CONF)
    conf["tiers"][1]["plugins"][1]["arguments"].update(
        {"deviceshare.NodeLockEnable": True, "deviceshare.SchedulePolicy": "binpack", "deviceshare.ScheduleWeight": 10}
    )
    with pytest.warns(vcore.ProfileWarning, match=r"deviceshare\.NodeLockEnable: vcore-scheduler takes no node lock"):
        CycleConfig.from_config(conf)


def test_a_pod_with_resource_claims_stays_pending_with_dra_on():
    conf = yaml.safe_load(HELM_CONFS["volcano-scheduler-ci.conf"])
    cluster = build(node("n1", "4"))
    cluster.add_pod(
        {
            "metadata": {"name": "claims", "namespace": "ns"},
            "spec": {
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"}],
            },
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vcore.ProfileWarning)
        result = vcore.Scheduler(cluster, cycle=conf).run_cycle()
    assert not result.bindings and "ns/claims" in result.unschedulable


def test_scheduler_takes_the_cycle_and_runs_it():
    cluster = build(node("n1", "4"), *gang("job", 2))
    scheduler = vcore.Scheduler(cluster, cycle=yaml.safe_load(VOLCANO_TYPICAL))
    assert scheduler.cycle.actions[0] == "enqueue"
    assert len(scheduler.run_cycle().bindings) == 2


def test_node_settings_in_both_places_are_refused():
    conf = yaml.safe_load(VOLCANO_TYPICAL)
    with pytest.raises(vcore.ProfileError, match="give one of them"):
        vcore.Scheduler(vcore.Cluster(), profile={}, cycle=conf)


BAD = {
    "unknown-action": ({"actions": "enqueue, shuffle", "tiers": []}, r"actions: unknown action 'shuffle'"),
    "no-actions": ({"tiers": []}, r"actions: expected a comma-separated string"),
    "action-twice": ({"actions": "allocate, allocate", "tiers": []}, r"listed twice"),
    "unknown-key": ({"actions": "allocate", "tiers": [], "metrics": {}}, r"metrics: unknown key"),
    "unknown-plugin": (
        {"actions": "allocate", "tiers": [{"plugins": [{"name": "gang"}, {"name": "tdm"}]}]},
        r"tiers\[0\]\.plugins\[1\]\.name: unknown plugin 'tdm'",
    ),
    "plugin-twice": (
        {"actions": "allocate", "tiers": [{"plugins": [{"name": "gang"}]}, {"plugins": [{"name": "gang"}]}]},
        r"tiers\[1\]\.plugins\[0\]\.name: gang is configured twice",
    ),
    "hdrf-beside-proportion": (
        {
            "actions": "allocate",
            "tiers": [{"plugins": [{"name": "drf", "enableHierarchy": True}, {"name": "proportion"}]}],
        },
        r"tiers\[0\]\.plugins\[0\]\.enableHierarchy: proportion and drf with hierarchy enabled conflict",
    ),
    "unknown-option": (
        {"actions": "allocate", "tiers": [{"plugins": [{"name": "gang", "enableSomething": True}]}]},
        r"tiers\[0\]\.plugins\[0\]\.enableSomething: unknown plugin option",
    ),
    "misspelt-option": (
        {"actions": "allocate", "tiers": [{"plugins": [{"name": "gang", "enableVictim": True}]}]},
        r"enableVictim: unknown plugin option \(did you mean 'enabledVictim'\?\)",
    ),
    "option-not-bool": (
        {"actions": "allocate", "tiers": [{"plugins": [{"name": "gang", "enableJobOrder": "yes"}]}]},
        r"enableJobOrder: must be true or false",
    ),
    "overcommit-not-a-number": (
        {
            "actions": "enqueue",
            "tiers": [{"plugins": [{"name": "overcommit", "arguments": {"overcommit-factor": "x"}}]}],
        },
        r"overcommit-factor: ",
    ),
    "gang-argument": (
        {"actions": "allocate", "tiers": [{"plugins": [{"name": "gang", "arguments": {"x": 1}}]}]},
        r"tiers\[0\]\.plugins\[0\]\.arguments\.x: unknown argument of gang",
    ),
    "nodeorder-both-strategies": (
        {
            "actions": "allocate",
            "tiers": [{"plugins": [{"name": "nodeorder", "arguments": {"mostrequested.weight": 1}}]}],
        },
        r"both set",
    ),
    "share-argument": (
        {"actions": "allocate", "tiers": [{"plugins": [{"name": "proportion", "arguments": {"nope": 1}}]}]},
        r"proportion: arguments\.nope: unknown argument",
    ),
    "configurations": (
        {"actions": "allocate", "tiers": [], "configurations": [{"name": "allocate", "arguments": {"a": 1}}]},
        r"configurations\[0\]\.arguments\.a: unknown argument of the allocate action",
    ),
    "action-argument-type": (
        {
            "actions": "preempt",
            "tiers": [],
            "configurations": [{"name": "preempt", "arguments": {"enableTopologyAwarePreemption": "yes"}}],
        },
        r"configurations\[0\]\.arguments\.enableTopologyAwarePreemption: ",
    ),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_configuration_names_the_field(name):
    conf, pattern = BAD[name]
    with pytest.raises(vcore.ProfileError, match=pattern):
        vcore.Scheduler(vcore.Cluster(), cycle=conf)


def test_bad_yaml_file(tmp_path):
    path = tmp_path / "bad.conf"
    path.write_text("actions: [unclosed")
    with pytest.raises(vcore.ProfileError, match="invalid YAML"):
        CycleConfig.from_config(str(path))
