"""Volcano's cdp plugin (plugins/cdp/cdp.go, cooldown protection): a pod that has run for less than its
``volcano.sh/cooldown-time`` is no victim of preempt or reclaim.

The time is the pod's label, else its annotation, a Go duration string ("600s", "10m"); a value that is not one
leaves the pod unprotected, as Volcano does (it logs a warning). The pod runs since its PodScheduled condition
turned True (its lastTransitionTime); only a Running pod with that condition is protected. The plugin never vetoes
a victim it does not protect, so with others in its tier it only narrows their choice.
"""

from __future__ import annotations

from collections.abc import Sequence

from vcore.batch.config import epoch_seconds, go_duration
from vcore.batch.plugins.base import Candidate, JobPlugin, PluginSession, Preemptor


class CooldownProtectionPlugin(JobPlugin):
    name = "cdp"
    parts = frozenset({"preemptable", "reclaimable"})

    def open(self, ssn: PluginSession) -> None:
        super().open(ssn)
        self.now = ssn.wall_clock
        self._until: dict[tuple[str, str], float | None] = {}  # (cooldown, since) -> protected until (epoch s)

    def protected_until(self, cooldown: tuple[str, str]) -> float | None:
        """Epoch seconds until which a pod with this PodInfo.cooldown is protected (None: it is not)."""
        if cooldown not in self._until:
            seconds, since = go_duration(cooldown[0]), epoch_seconds(cooldown[1])
            self._until[cooldown] = None if seconds is None or since is None else since + seconds
        return self._until[cooldown]

    def preemptable(self, preemptor: Preemptor, candidates: Sequence[Candidate]) -> list[Candidate]:
        out = []
        for c in candidates:
            until = None if c.info.cooldown is None else self.protected_until(c.info.cooldown)
            if until is None or until <= self.now:  # Volcano: protected while since + cooldown is after now
                out.append(c)
        return out

    def reclaimable(self, preemptor: Preemptor, candidates: Sequence[Candidate]) -> list[Candidate]:
        return self.preemptable(preemptor, candidates)
