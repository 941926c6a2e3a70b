"""Random configurations for vcore-scheduler and its sharding controller: valid ones mutated (values replaced by
any JSON value or a near miss, keys dropped, added or misspelt, the inner YAML of a Volcano ConfigMap cut short) are
either loaded into a configuration whose numbers are finite and in range, or refused with a ConfigError; through the
command line, always one line and exit status 2, never a traceback."""

from __future__ import annotations

import contextlib
import copy
import io
import math
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from vcore_kube.cli import main
from vcore_kube.config import Config, ConfigError, load_config
from vcore_kube.shardplan import load_sharding_config

CYCLE_CONF = """actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
    arguments: {leastrequested.weight: 1, balancedresource.weight: 1}
"""

VALID = [
    {},
    {  # the README's example
        "schedulerName": "vcore",
        "profile": {},
        "cyclePeriod": "100ms",
        "bindConcurrency": 16,
        "podInitialBackoffSeconds": 1,
        "podMaxBackoffSeconds": 10,
        "podMaxInUnschedulableSeconds": 300,
        "emitEvents": True,
        "metricsAddress": "0.0.0.0:10261",
        "seed": 7,
        "leaderElection": {
            "leaderElect": True,
            "leaseDuration": "15s",
            "renewDeadline": "10s",
            "retryPeriod": "2s",
            "resourceNamespace": "vcore-system",
            "resourceName": "vcore-scheduler",
        },
        "cycle": {
            "actions": "enqueue, allocate, backfill",
            "tiers": [
                {"plugins": [{"name": "priority"}, {"name": "gang"}]},
                {"plugins": [{"name": "drf"}, {"name": "predicates"}, {"name": "proportion"}]},
            ],
        },
    },
    {  # agents: the fast path with its own profile, sharding, warm pools
        "schedulerName": "vcore",
        "metricsAddress": "127.0.0.1:0",
        "profile": {
            "percentageOfNodesToScore": 50,
            "plugins": {
                "score": {
                    "enabled": [{"name": "NodeResourcesFit", "weight": 2}, {"name": "TaintToleration", "weight": 1}]
                }
            },
        },
        "fastPath": {
            "enabled": True,
            "schedulerName": "vcore-agent",
            "priorityClassNames": ["agent"],
            "window": "1ms",
            "maxBatch": 256,
            "bindConcurrency": 32,
            "profile": {
                "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]
            },
        },
        "sharding": {"mode": "hard", "shard": "batch-a"},
        "warmPools": {
            "enabled": True,
            "placeholderPriorityClass": "vcore-warm-placeholder",
            "placeholderImage": "registry.k8s.io/pause:3.10",
        },
    },
    {  # Volcano's ConfigMap as the cycle
        "cyclePeriod": 0.5,
        "leaderElection": {"leaderElect": False},
        "cycle": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "volcano-scheduler-configmap"},
            "data": {"volcano-scheduler.conf": CYCLE_CONF},
        },
    },
]


def _all_keys(value, out: set[str]) -> set[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(k)
            _all_keys(v, out)
    elif isinstance(value, list):
        for v in value:
            _all_keys(v, out)
    return out


VALID_SHARDING = [
    {"schedulerConfigs": [{"name": "vcore"}]},
    {  # the example of vcore_kube/shardplan.py
        "schedulerConfigs": [
            {
                "name": "agent",
                "type": "agent",
                "strategy": "utilization",
                "cpuUtilizationMin": 0.7,
                "cpuUtilizationMax": 1.0,
                "preferWarmupNodes": True,
                "minNodes": 1,
                "maxNodes": 100,
                "nodeSelector": {"pool": "agent"},
            },
            {"name": "batch", "strategy": "capacity", "weight": 2},
        ],
        "shardSyncPeriod": "60s",
        "enableNodeEventTrigger": True,
        "significantChange": 0.1,
        "hysteresis": 0.05,
        "balanceTolerance": 0.1,
        "minMoveInterval": "30s",
        "warmupLabel": "node.volcano.sh/warmup",
        "warmupLabelValue": "true",
        "leaderElect": True,
        "metricsAddress": "0.0.0.0:10262",
    },
]

# Keys the valid configurations use (at any depth): a mutation often puts a wrong value under a right key.
KEYS = sorted(_all_keys([VALID, VALID_SHARDING], set()))
NEAR_MISSES = [
    "",
    " ",
    "0",
    "-1",
    "0s",
    "-1s",
    "1e3",
    "1h1h",
    "10ms",
    "5m",
    ".inf",
    "1.5",
    "µs",
    "100ms ",
    "vcore",
    "Bad Name",
    "a" * 300,
    "127.0.0.1:0",
    ":99999",
    "host:port",
    "[::1]:80",
    "null",
    "{",
    "kind",
    "ConfigMap",
    "hard",
    "none",
    "LeastAllocated",
    "*",
    "\u0661\u0660",
]
# Numbers at and past the edges: YAML's .inf and .nan, integers beyond int64 and beyond a float, ports, limits.
NUMBERS = st.sampled_from(
    [
        math.inf,
        -math.inf,
        math.nan,
        0,
        -1,
        0.0,
        -0.0,
        1e-12,
        1.5,
        1e308,
        1,
        1024,
        1025,
        65535,
        65536,
        2**63,
        2**64,
        10**30,
        10**400,
        -(10**400),
    ]
)
EDGES = st.one_of(
    NUMBERS, st.sampled_from([True, False, None, *NEAR_MISSES]), st.builds(list), st.builds(dict)
)  # fresh containers: a later mutation may fill them
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(st.characters(exclude_categories=["Cs"]), max_size=12),
    EDGES,
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=8)), inner, max_size=3),
    ),
    max_leaves=6,
)


def _leaves(value):
    """(container, key) of every value inside value that is not itself a container."""
    if isinstance(value, (dict, list)):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for k, v in items:
            if isinstance(v, (dict, list)):
                yield from _leaves(v)
            else:
                yield value, k


def _containers(value, path=()):
    """(path, container) for every dict and list inside value, value included."""
    if isinstance(value, (dict, list)):
        yield path, value
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for k, v in items:
            yield from _containers(v, (*path, k))


@st.composite
def mutated_configs(draw, bases: list[dict] = VALID) -> dict:
    config = copy.deepcopy(draw(st.sampled_from(bases)))
    for _ in range(draw(st.integers(1, 3))):
        leaves = list(_leaves(config))
        if leaves and draw(st.integers(0, 3)) == 0:  # a right key with a number at or past its edge
            box, key = draw(st.sampled_from(leaves))
            box[key] = draw(NUMBERS)
            continue
        _, box = draw(st.sampled_from(list(_containers(config))))
        keys = list(box) if isinstance(box, dict) else list(range(len(box)))
        op = draw(st.sampled_from(["replace", "drop", "add", "rename", "cut"] if keys else ["add"]))
        if op == "add":
            value = draw(JSON)
            if isinstance(box, dict):
                box[draw(st.one_of(st.sampled_from(KEYS), st.text(max_size=8)))] = value
            else:
                box.append(value)
            continue
        key = draw(st.sampled_from(keys))
        if op == "replace":
            box[key] = draw(st.one_of(EDGES, JSON))
        elif op == "drop":
            del box[key]
        elif op == "rename" and isinstance(box, dict):
            box[key[:-1] + key[-1:].upper() if key else "x"] = box.pop(key)
        elif op == "cut" and isinstance(box[key], str):  # e.g. the ConfigMap's YAML, a duration, a name
            box[key] = box[key][: draw(st.integers(0, len(box[key])))]
    return config


def _check_loaded(config: Config) -> None:
    """What a loaded configuration guarantees the process."""
    durations = [
        config.cycle_period,
        config.pod_initial_backoff_seconds,
        config.pod_max_backoff_seconds,
        config.pod_max_in_unschedulable_seconds,
        config.fast_path.window,
        config.leader_election.lease_duration,
        config.leader_election.renew_deadline,
        config.leader_election.retry_period,
    ]
    assert all(isinstance(d, float) and math.isfinite(d) and 0 < d <= 365 * 24 * 3600 for d in durations), durations
    assert 1 <= config.bind_concurrency <= 1024 and 1 <= config.fast_path.bind_concurrency <= 1024
    assert 1 <= config.fast_path.max_batch <= 100_000 and 0 <= config.seed < 2**64
    if config.metrics_address:
        assert 0 <= int(config.metrics_address.rpartition(":")[2]) <= 65535
    assert config.cycle is None or config.cycle.get("kind") != "ConfigMap"  # unwrapped for vcore


@settings(max_examples=1000, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated_configs())
def test_load_config_loads_or_raises_config_error(data):
    try:
        config = load_config(data)
    except ConfigError as e:
        assert str(e), "an error says what is wrong"
        return
    _check_loaded(config)


def test_valid_bases_load():
    for data in VALID:
        _check_loaded(load_config(data))
    for data in VALID_SHARDING:
        load_sharding_config(data)


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated_configs(VALID_SHARDING))
def test_load_sharding_config_loads_or_raises_config_error(data):
    """The sharding controller's configuration, on the same constraints."""
    try:
        config = load_sharding_config(data)
    except ConfigError as e:
        assert str(e), "an error says what is wrong"
        return
    ranges = [(spec.cpu_utilization_min, spec.cpu_utilization_max) for spec in config.scheduler_configs]
    fractions = [config.significant_change, config.hysteresis, config.balance_tolerance, *sum(ranges, ())]
    assert all(0.0 <= f <= 1.0 for f in fractions), fractions
    assert all(math.isfinite(d) and d > 0 for d in (config.shard_sync_period, config.min_move_interval))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=mutated_configs(), cut=st.one_of(st.none(), st.floats(0, 1)))
def test_command_line_answers_in_one_line(tmp_path_factory, data, cut):
    folder = tmp_path_factory.mktemp("fuzz", numbered=True)
    text = yaml.safe_dump(data, allow_unicode=True)
    if cut is not None:  # the file itself cut short: often not YAML any more
        text = text[: int(len(text) * cut)]
    path = Path(folder) / "config.yaml"
    path.write_text(text)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        # No kubeconfig: a configuration that loads stops there, with its own one-line error.
        status = main(["--config", str(path), "--kubeconfig", str(folder / "no-kubeconfig")])
    message = err.getvalue()
    assert status == 2, message
    assert message.startswith("vcore-scheduler: ") and message.count("\n") == 1, message
