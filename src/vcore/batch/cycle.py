"""run_cycle: one scheduling cycle, the configured actions in order over a fresh Session; all or nothing."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from vcore._native import _core
from vcore.batch.actions import ACTIONS
from vcore.batch.config import CycleConfig
from vcore.batch.result import CycleResult
from vcore.batch.session import Session
from vcore.batch.shares.base import SharePlugin
from vcore.cluster import Cluster


def run_cycle(cluster: Cluster, engine: _core.Engine, config: CycleConfig, share: SharePlugin[Any] | None,
              eligible: Iterable[str] | None = None, between_jobs: Callable[[], None] | None = None) -> CycleResult:
    session = Session(cluster, engine, config, share, eligible, between_jobs)
    try:
        for action in config.actions:
            session.interleave()  # opening the session and each action's set-up hold the caller too
            ACTIONS[action](session)
        return session.close()
    except BaseException:
        session.abandon()  # a cycle that fails binds and evicts nothing: its caller never sees a result
        raise
