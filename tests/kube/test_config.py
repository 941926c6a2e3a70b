"""vcore-scheduler's configuration: defaults and camelCase keys, every malformed value a ConfigError naming its
path ("<path>: <problem>", vcore.validation's format), finite and bounded numbers, the profile and the cycle checked
by vcore at load time (a Volcano ConfigMap holding the cycle included), and one line from the command line,
never a traceback."""

from __future__ import annotations

import pytest

from vcore_kube.cli import main
from vcore_kube.config import ConfigError, load_config
from vcore_kube.shardplan import load_sharding_config


def test_defaults_and_camel_case_keys(tmp_path):
    config = load_config(None)
    assert config.scheduler_name == "vcore" and config.cycle_period == 0.1 and config.leader_election.leader_elect
    path = tmp_path / "c.yaml"
    path.write_text(
        "schedulerName: volcano\ncyclePeriod: 1m30s\nbindConcurrency: 4\n"
        "leaderElection: {leaseDuration: 20s, resourceName: x}\nprofile: {percentageOfNodesToScore: 50}\n"
    )
    config = load_config(path)
    assert (config.scheduler_name, config.cycle_period, config.bind_concurrency) == ("volcano", 90.0, 4)
    assert config.leader_election.lease_duration == 20.0 and config.leader_election.resource_name == "x"
    assert config.profile == {"percentageOfNodesToScore": 50}


@pytest.mark.parametrize(
    "data, message",
    [
        ({"schedulerNmae": "x"}, "schedulerNmae: unknown key"),
        ({"leaderElection": {"lease": 1}}, "leaderElection.lease: unknown key"),
        ({"cyclePeriod": "fast"}, "cyclePeriod: must be a duration like '100ms' or '15s', got a string 'fast'"),
        ({"cyclePeriod": 0}, "cyclePeriod: must be > 0"),
        ({"bindConcurrency": "8"}, "bindConcurrency: must be an integer, got a string '8'"),
        ({"bindConcurrency": 0}, "bindConcurrency: must be in [1, 1024]"),
        ({"emitEvents": "yes"}, "emitEvents: must be true or false, got a string 'yes'"),
        ({"profile": [1]}, "profile: must be a mapping, got a list"),
        ({"schedulerName": "Not Valid"}, "schedulerName: 'Not Valid' is not a DNS-1123 subdomain"),
        ({"metricsAddress": "nohost"}, "metricsAddress: must be host:port"),
        ({"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 1}, "podMaxBackoffSeconds: must be >="),
        ({"leaderElection": {"leaseDuration": "5s", "renewDeadline": "10s"}}, "leaseDuration > renewDeadline"),
    ],
    ids=[
        "typo",
        "nested-typo",
        "bad-duration",
        "zero-duration",
        "string-int",
        "zero-concurrency",
        "string-bool",
        "profile-list",
        "bad-name",
        "bad-address",
        "backoff-order",
        "lease-order",
    ],
)
def test_bad_configuration_names_the_key(data, message):
    with pytest.raises(ConfigError) as err:
        load_config(data)
    assert message in str(err.value)


def test_bad_yaml_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("a: [")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(path)
    with pytest.raises(ConfigError, match="No such file"):
        load_config(tmp_path / "missing.yaml")


@pytest.mark.parametrize(
    "text, seconds",
    [("100ms", 0.1), ("15s", 15.0), ("1m30s", 90.0), ("1h", 3600.0), ("1.5s", 1.5), (2, 2.0), (0.25, 0.25)],
)
def test_durations(text, seconds):
    assert load_config({"cyclePeriod": text}).cycle_period == pytest.approx(seconds)


def test_command_line_rejects_a_bad_configuration(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text("bindConcurency: 3\n")
    assert main(["--config", str(path)]) == 2
    assert "bindConcurency: unknown key" in capsys.readouterr().err
    path.write_text("profile: {plugins: {score: {enabled: [{name: NoSuchPlugin}]}}}\n")
    assert main(["--config", str(path), "--kubeconfig", str(tmp_path / "none")]) == 2
    assert "NoSuchPlugin" in capsys.readouterr().err


@pytest.mark.parametrize(
    "data, message",
    [
        ({"cyclePeriod": float("inf")}, "cyclePeriod: must be a finite duration, got inf"),
        ({"cyclePeriod": float("nan")}, "cyclePeriod: must be a finite duration, got nan"),
        (
            {"podMaxInUnschedulableSeconds": 10**400},
            "podMaxInUnschedulableSeconds: must be at most 31536000 s, got 100000",
        ),
        ({"cyclePeriod": -(10**400)}, "cyclePeriod: must be > 0, got -10000... (402 digits)"),
        (
            {"leaderElection": {"leaseDuration": float("inf")}},
            "leaderElection.leaseDuration: must be a finite duration",
        ),
        ({"fastPath": {"window": "1000000h"}}, "fastPath.window: must be at most 31536000 s"),
        ({"cyclePeriod": "-5s"}, "cyclePeriod: must be a duration like '100ms' or '15s'"),
        ({"bindConcurrency": 1.5}, "bindConcurrency: must be an integer, got a number 1.5"),
        ({"seed": 2**64}, "seed: must be in [0, 18446744073709551615]"),
        ({"seed": True}, "seed: must be an integer, got a boolean True"),
        ({"metricsAddress": ":65536"}, "metricsAddress: must be in [0, 65535], got 65536"),
        ({"metricsAddress": "127.0.0.1:\u0661\u0660"}, "metricsAddress: must be host:port"),  # Arabic-Indic digits
        ({"metricsAddress": "0.0.0.0"}, "metricsAddress: must be host:port"),
        ({"metricsAddress": "no host:80"}, "metricsAddress: host 'no host' is not an IPv4 address or a host name"),
        (
            {"leaderElection": {"resourceNamespace": "Vcore_System"}},
            "leaderElection.resourceNamespace: 'Vcore_System' is not a DNS-1123 label",
        ),
        ({"leaderElection": {"resourceName": ""}}, "leaderElection.resourceName: must not be empty"),
        ({"fastPath": {"priorityClassNames": ["agent", 7]}}, "fastPath.priorityClassNames[1]: must be a string"),
        (
            {"sharding": {"mode": "hrad"}},
            "sharding.mode: must be one of none, soft, hard; got 'hrad' (did you mean 'hard'?)",
        ),
        ({"sharding": {"mode": "hard", "shard": "Batch A"}}, "sharding.shard: 'Batch A' is not a DNS-1123 subdomain"),
        ({"warmPools": {"placeholderImage": ""}}, "warmPools.placeholderImage: must not be empty"),
        ({"leaderElection": []}, "leaderElection: must be a mapping, got a list"),
        (
            {"profile": {"plugins": {"score": {"enabled": [{"name": "NoSuchPlugin"}]}}}},
            "profile: plugins.score.enabled[0].name: unknown plugin 'NoSuchPlugin'",
        ),
        ({"fastPath": {"profile": {"percentageOfNodesToScore": 500}}}, "fastPath.profile: percentageOfNodesToScore"),
        ({"cycle": {"actions": "allocate", "tiers": [{"plugins": [{"name": "nosuch"}]}]}}, "cycle: "),
        (
            {"cycle": {"kind": "ConfigMap", "data": ["volcano-scheduler.conf"]}},
            "cycle.data: must be a mapping, got a list",
        ),
        ({"cycle": {"kind": "ConfigMap", "data": {}}}, "cycle.data.volcano-scheduler.conf: required"),
        (
            {"cycle": {"kind": "ConfigMap", "data": {"volcano-scheduler.conf": "actions: [allocate\n"}}},
            "cycle.data.volcano-scheduler.conf: not valid YAML: line 2, column 1: expected ',' or ']'",
        ),
    ],
    ids=[
        "inf-duration",
        "nan-duration",
        "huge-integer-duration",
        "huge-negative-duration",
        "inf-lease",
        "duration-above-a-year",
        "negative-duration",
        "float-integer",
        "seed-above-u64",
        "bool-integer",
        "port-above-range",
        "unicode-digits-port",
        "no-port",
        "bad-host",
        "bad-namespace",
        "empty-lease-name",
        "class-name-not-string",
        "mode-typo",
        "bad-shard-name",
        "empty-image",
        "section-not-mapping",
        "unknown-plugin",
        "fast-path-profile",
        "unknown-cycle-plugin",
        "configmap-data-list",
        "configmap-without-conf",
        "configmap-invalid-yaml",
    ],
)
def test_malformed_values_are_config_errors_naming_the_field(data, message):
    with pytest.raises(ConfigError) as err:
        load_config(data)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_metrics_address_may_take_any_free_port_or_be_off():
    assert load_config({"metricsAddress": "127.0.0.1:0"}).metrics_address == "127.0.0.1:0"
    assert load_config({"metricsAddress": ":10261"}).metrics_address == ":10261"
    assert load_config({"metricsAddress": "localhost:10261"}).metrics_address == "localhost:10261"
    assert load_config({"metricsAddress": ""}).metrics_address == ""


VOLCANO_CONFIGMAP = """
cycle:
  apiVersion: v1
  kind: ConfigMap
  metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}
  data:
    volcano-scheduler.conf: |
      actions: "enqueue, allocate, backfill"
      tiers:
      - plugins:
        - name: priority
        - name: gang
      - plugins:
        - name: drf
        - name: predicates
        - name: proportion
        - name: nodeorder
"""


def test_a_volcano_configmap_gives_the_cycle_it_holds(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(VOLCANO_CONFIGMAP)
    config = load_config(path)
    assert config.cycle["actions"] == "enqueue, allocate, backfill"
    assert [p["name"] for p in config.cycle["tiers"][1]["plugins"]] == ["drf", "predicates", "proportion", "nodeorder"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("cyclePeriod: .inf\n", "cyclePeriod: must be a finite duration, got inf"),
        ("cyclePeriod: .nan\n", "cyclePeriod: must be a finite duration, got nan"),
        (
            "bindConcurrency: 100000000000000000000000000000000000000000000000000\n",
            "bindConcurrency: must be in [1, 1024]",
        ),
        ("metricsAddress: 0.0.0.0:99999\n", "metricsAddress: must be in [0, 65535], got 99999"),
        (
            VOLCANO_CONFIGMAP.replace('actions: "enqueue, allocate, backfill"', "actions: [enqueue, allocate"),
            "cycle.data.volcano-scheduler.conf: not valid YAML: line",
        ),
        (VOLCANO_CONFIGMAP.replace("name: gang", "name: gnag"), "cycle: "),
        ("profile: {plugins: {score: {enabled: [{name: NoSuchPlugin}]}}}\n", "profile: plugins.score.enabled[0].name"),
        ("leaderElection: {leaseDuration: 1s}\n", "leaderElection: needs leaseDuration > renewDeadline > retryPeriod"),
        ("a: [\n", "not valid YAML: line 2, column 1"),
        ("- schedulerName\n", "must be a mapping, got a list"),
        ('schedulerName: "\\xff"\nseed: \x00\n', "not valid YAML"),
    ],
    ids=[
        "inf",
        "nan",
        "huge-int",
        "port",
        "configmap-invalid-yaml",
        "configmap-unknown-plugin",
        "unknown-plugin",
        "lease-order",
        "invalid-yaml",
        "not-a-mapping",
        "control-character",
    ],
)
def test_command_line_reports_a_malformed_configuration_in_one_line(tmp_path, capsys, text, message):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    assert main(["--config", str(path), "--kubeconfig", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"vcore-scheduler: {path}: ") and message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_command_line_checks_the_shard_flags(tmp_path, capsys):
    assert main(["--shard", "Not A Name", "--kubeconfig", str(tmp_path / "none")]) == 2
    assert (
        capsys.readouterr().err == "vcore-scheduler: --shard: 'Not A Name' is not a DNS-1123 subdomain "
        "(lowercase letters, digits, '-' and '.')\n"
    )
    assert main(["--sharding-mode", "hard", "--kubeconfig", str(tmp_path / "none")]) == 2
    assert "sharding.shard: required with sharding.mode soft or hard" in capsys.readouterr().err


@pytest.mark.parametrize(
    "kubeconfig, message",
    [
        (None, "no such file"),
        ("a: [", "not valid YAML"),
        ("- 1\n", "not a valid kubeconfig"),
        ("apiVersion: v1\nkind: Config\n", "Invalid kube-config file"),
    ],
    ids=["missing", "invalid-yaml", "list", "no-context"],
)
def test_command_line_reports_a_malformed_kubeconfig_in_one_line(tmp_path, capsys, kubeconfig, message):
    path = tmp_path / "kubeconfig"
    if kubeconfig is not None:
        path.write_text(kubeconfig)
    assert main(["--kubeconfig", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"vcore-scheduler: --kubeconfig {path}: ") and message in err, err
    assert err.count("\n") == 1


def test_sharding_configuration_uses_the_same_checks(tmp_path):
    with pytest.raises(ConfigError, match=r"^shardSyncPeriod: must be a finite duration, got inf$"):
        load_sharding_config({"schedulerConfigs": [{"name": "a"}], "shardSyncPeriod": float("inf")})
    with pytest.raises(ConfigError, match=r"^hysteresis: must be in \[0, 1\], got 100000\.\.\. \(401 digits\)$"):
        load_sharding_config({"schedulerConfigs": [{"name": "a"}], "hysteresis": 10**400})
    with pytest.raises(ConfigError, match=r"^metricsAddress: must be in \[0, 65535\], got 70000$"):
        load_sharding_config({"schedulerConfigs": [{"name": "a"}], "metricsAddress": ":70000"})
    with pytest.raises(ConfigError, match=r"^schedulerConfigs\[0\]\.nodeSelector\.pool: 'a b' is not a valid label"):
        load_sharding_config({"schedulerConfigs": [{"name": "a", "nodeSelector": {"pool": "a b"}}]})
    path = tmp_path / "s.yaml"
    path.write_text("schedulerConfigs: [{name: a}]\nhysteresis: .nan\n")
    with pytest.raises(ConfigError, match=rf"^{path}: hysteresis: must be a finite number, got nan$"):
        load_sharding_config(path)


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "schedulerConfigs: [{name: a}]\nshardSyncPeriod: .inf\n",
            "shardSyncPeriod: must be a finite duration, got inf",
        ),
        ('schedulerConfigs: [{name: a, "bad\\nkey": 1}]\n', "schedulerConfigs[0].bad\\nkey: unknown key"),  # a newline
        ("schedulerConfigs: [\n", "not valid YAML"),
    ],
    ids=["inf", "newline-in-key", "invalid-yaml"],
)
def test_sharder_command_line_reports_a_malformed_configuration_in_one_line(tmp_path, capsys, text, message):
    path = tmp_path / "sharding.yaml"
    path.write_text(text)
    assert main(["--role", "sharder", "--sharding-config", str(path), "--kubeconfig", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"vcore-scheduler --role sharder: {path}: ") and message in err, err
    assert err.count("\n") == 1
