"""Volcano v1.14 pkg/scheduler/util_test.go (TestLoadSchedulerConf), against vcore's volcano-scheduler.conf parser.

The Go test loads a conf and expects every PluginOption switch of every plugin set to true (ApplyPluginConfDefaults)
and no action configurations. The companion table writes each of the struct's yaml keys explicitly (false), as a
conf may: Volcano's loader takes every one of them."""

from __future__ import annotations

import pytest
import yaml

from vcore.batch.config import CycleConfig

from .volcano_fixtures import SWITCH_KEYS

CONFIGURATION = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""
# ApplyPluginConfDefaults defaults every switch but enableHierarchy.
DEFAULTED = [key for field, key in SWITCH_KEYS.items() if field != "EnabledHierarchy"]


def test_load_scheduler_conf():
    conf = CycleConfig.from_config(yaml.safe_load(CONFIGURATION))
    assert conf.actions == ("enqueue", "allocate", "backfill")
    assert [[p.name for p in tier] for tier in conf.tiers] == [
        ["priority", "gang", "conformance"],
        ["drf", "predicates", "proportion", "nodeorder"],
    ]
    for option in conf.plugins():
        assert all(option.enabled(key) for key in DEFAULTED), option
    assert dict(conf.action_arguments) == {}


@pytest.mark.parametrize("key", list(SWITCH_KEYS.values()))
def test_plugin_option_keys(key):
    conf = CycleConfig.from_config({"actions": "allocate", "tiers": [{"plugins": [{"name": "gang", key: False}]}]})
    assert conf.plugin("gang").enabled(key) is False
