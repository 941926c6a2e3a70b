"""Endpoint health: what the end of a request to an engine, or a scrape of its metrics, says about the engine.

The one rule, for every caller: an engine that answered (a whole answer or stream, whatever its status below
500) is well; a refused or dropped connection, a timeout, a 5xx, an answer or stream cut short, a failed scrape is
the engine's failure; a client that goes away (closes its connection, is cancelled) says nothing about the engine
-- a client must not be able to take a model down. ``threshold`` consecutive failures mark the endpoint unhealthy
(the routing core no longer chooses it); its next answer or successful scrape heals it.

Every request outcome is also counted in ``vcore_router_upstream_requests_total{endpoint, outcome}``.
"""

from __future__ import annotations

from vcore.routing import Router
from vcore_router.metrics import RouterMetrics

OK = "ok"  # the engine answered
REFUSED = "refused"  # no connection, or no response head
FAILED = "failed"  # the answer broke off or was empty before anything reached the client
FAILED_MID_STREAM = "failed_mid_stream"  # the stream broke off or ended without [DONE] after the client got a part
CLIENT_DISCONNECTED = "client_disconnected"  # the client went away while the engine answered


def http_error(status: int) -> str:
    """The outcome of an engine's 5xx answer."""
    return f"http_{status}"


def engine_ok(outcome: str) -> bool | None:
    """What an outcome says about the engine: True it answered, False it failed, None nothing."""
    if outcome == CLIENT_DISCONNECTED:
        return None
    return outcome == OK


class EndpointHealth:
    """Consecutive failures per endpoint and the health they give it, in the routing core and the
    ``vcore_router_endpoint_healthy`` gauge (on the event loop only)."""

    def __init__(self, router: Router, metrics: RouterMetrics, threshold: int) -> None:
        self.router, self.metrics, self.threshold = router, metrics, threshold
        self._failures: dict[str, int] = {}

    def add(self, name: str) -> None:
        self._failures[name] = 0
        self.metrics.healthy.labels(name).set(1)

    def remove(self, name: str) -> None:
        self._failures.pop(name, None)
        self.metrics.healthy.remove(name)

    def failures(self, name: str) -> int:
        return self._failures[name]

    def request_ended(self, name: str, outcome: str) -> None:
        """A request to ``name`` ended with ``outcome`` (one of this module's, or http_error(status))."""
        self.metrics.upstream.labels(name, outcome).inc()
        self._observe(name, engine_ok(outcome))

    def scraped(self, name: str, ok: bool) -> None:
        """A scrape of ``name``'s metrics succeeded or failed."""
        self._observe(name, ok)

    def _observe(self, name: str, ok: bool | None) -> None:
        failures = self._failures.get(name)
        if ok is None or failures is None:  # nothing said, or the endpoint left the table meanwhile
            return
        if ok:
            if failures:
                self._failures[name] = 0
                self.router.set_health(name, True)
                self.metrics.healthy.labels(name).set(1)
            return
        self._failures[name] = failures + 1
        if failures + 1 >= self.threshold:
            self.router.set_health(name, False)
            self.metrics.healthy.labels(name).set(0)
