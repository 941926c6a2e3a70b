"""run_cycle: one scheduling cycle, the configured actions in order over a fresh Session; all or nothing."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

from vcore._native import _core
from vcore.batch.actions import ACTIONS
from vcore.batch.config import CycleConfig
from vcore.batch.plugins import Framework
from vcore.batch.result import CycleResult
from vcore.batch.session import Session
from vcore.cluster import Cluster


def run_cycle(
    cluster: Cluster,
    engine: _core.Engine,
    config: CycleConfig,
    framework: Framework,
    eligible: Iterable[str] | None = None,
    between_jobs: Callable[[], None] | None = None,
    *,
    scope: tuple[frozenset[str], bool, frozenset[str]] | None = None,
    victim_engines: tuple[_core.Engine, _core.Engine] | None = None,
    affinity_engine: _core.Engine | None = None,
    rng: random.Random | None = None,
) -> CycleResult:
    """``framework``: the configured job plugins (opened by the session); ``scope``: the scheduler's node scope
    (nodes, soft, avoid); ``victim_engines``: the profile without its resource filters, without and with those about
    other pods (preempt's and reclaim's candidate nodes, and their check once victims are gone);
    ``affinity_engine``: InterPodAffinity alone, when topology-aware preemption judges it as if no victim left."""
    session = Session(
        cluster,
        engine,
        config,
        framework,
        eligible,
        between_jobs,
        scope=scope,
        victim_engines=victim_engines,
        affinity_engine=affinity_engine,
        rng=rng,
    )
    try:
        for action in config.actions:
            session.interleave()  # opening the session and each action's set-up hold the caller too
            ACTIONS[action](session)
        return session.close()
    except BaseException:
        session.abandon()  # a cycle that fails binds and evicts nothing: its caller never sees a result
        raise
