"""run_cycle and the garbage collector: the cycle's results go straight to the oldest generation, the collector is
left as the caller had it, and a process that froze objects itself keeps them frozen."""

from __future__ import annotations

import gc

import vcore

from .builders import build, gang, node


def _cycle_of_two_gangs() -> vcore.Scheduler:
    return vcore.Scheduler(build(*[node(f"n{i}", "8") for i in range(4)], *gang("a", 4), *gang("b", 4)))


def test_results_land_in_the_oldest_generation_and_the_collector_is_restored():
    gc.unfreeze()  # a process with nothing frozen (a scheduling loop run earlier in this process freezes its heap)
    scheduler = _cycle_of_two_gangs()
    assert gc.isenabled()
    result = scheduler.run_cycle()
    assert gc.isenabled() and len(result.bindings) == 8
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(result.bindings[0]) in oldest and id(result) in oldest


def test_a_disabled_collector_stays_disabled():
    scheduler = _cycle_of_two_gangs()
    gc.disable()
    try:
        scheduler.run_cycle()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_process_freeze_is_not_undone():
    scheduler = _cycle_of_two_gangs()
    kept = [object() for _ in range(3)], {"frozen": [1, 2]}
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        result = scheduler.run_cycle()
        # Still frozen (a few frozen temporaries may have been freed meanwhile), and nothing of the cycle's added.
        assert frozen - 50 <= gc.get_freeze_count() <= frozen
        assert len(result.bindings) == 8 and kept
    finally:
        gc.unfreeze()
