"""The router's own Prometheus metrics (its registry, served at /metrics), including the autoscaling signal.

Autoscaling, per model: input and output tokens per second over the last window, queue depth (the model's
requests this router has sent to an engine and not yet seen answered: running or waiting there; summed over router
replicas, the model's outstanding requests) and a recommended replica count = ceil(token throughput / the
ModelServer's configured per-replica throughput), for an HPA (external metric) or KEDA to act on. The gauges that
describe the present are computed from the router's own bookkeeping when /metrics is read, so that they are back at
their idle values as soon as the requests have ended (an engine's own queue, as its last scrape said, is the
engine's metric ``vllm:num_requests_waiting``; counting it here would count this router's requests twice and keep a
scrape's stale number after they ended).
"""

from __future__ import annotations

import math
import time
from collections import deque

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class _TokenWindow:
    """Requests' (time, input tokens, output tokens) with running totals: a scrape costs what expired since the
    last one, not the whole window (15,000 requests at 500 per second over 30 s)."""

    def __init__(self) -> None:
        self.entries: deque[tuple[float, int, int]] = deque()
        self.input_tokens = 0
        self.output_tokens = 0

    def add(self, t: float, input_tokens: int, output_tokens: int) -> None:
        self.entries.append((t, input_tokens, output_tokens))
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens

    def totals(self, since: float) -> tuple[int, int]:
        q = self.entries
        while q and q[0][0] < since:
            _, tin, tout = q.popleft()
            self.input_tokens -= tin
            self.output_tokens -= tout
        return self.input_tokens, self.output_tokens


class RouterMetrics:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.requests = Counter(
            "vcore_router_requests",
            "Requests answered, by model and HTTP status (499: the client went away first).",
            ["model", "status"],
            registry=r,
        )
        self.in_flight = Gauge("vcore_router_requests_in_flight", "Requests received and not yet answered.", registry=r)
        self.upstream = Counter(
            "vcore_router_upstream_requests",
            "Requests sent to endpoints, by outcome.",
            ["endpoint", "outcome"],
            registry=r,
        )
        self.retries = Counter("vcore_router_retries", "Requests retried on the next candidate.", ["model"], registry=r)
        self.rate_limited = Counter("vcore_router_rate_limited", "Requests refused with 429.", ["model"], registry=r)
        self.redis_fallback = Gauge(
            "vcore_router_ratelimit_redis_fallback",
            "1 while Redis is unreachable and rate limits are enforced locally.",
            registry=r,
        )
        self.decision = Histogram(
            "vcore_router_decision_seconds",
            "Time of one routing decision.",
            buckets=(1e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 5e-4, 1e-3, 1e-2),
            registry=r,
        )
        self.ttft = Histogram(
            "vcore_router_time_to_first_byte_seconds",
            "Request received to first upstream byte.",
            ["model"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.healthy = Gauge(
            "vcore_router_endpoint_healthy", "1 when the endpoint is healthy.", ["endpoint"], registry=r
        )
        self.discovered = Gauge(
            "vcore_router_discovered_endpoints",
            "Ready pods of a ModelServer's workloadSelector in the endpoint table.",
            ["server"],
            registry=r,
        )
        self.discovery_relists = Counter(
            "vcore_router_discovery_relists",
            "Pod lists of Kubernetes discovery, by ModelServer and reason (start; expired: after 410 Gone).",
            ["server", "reason"],
            registry=r,
        )
        self.prefix_hit = Histogram(
            "vcore_router_prefix_match_ratio",
            "Share of the prompt's blocks the chosen endpoint is believed to hold.",
            buckets=(0, 0.1, 0.25, 0.5, 0.75, 0.9, 1),
            registry=r,
        )
        self.in_tps = Gauge(
            "vcore_router_input_tokens_per_second", "Prompt tokens per second (autoscaling).", ["model"], registry=r
        )
        self.out_tps = Gauge(
            "vcore_router_output_tokens_per_second", "Output tokens per second (autoscaling).", ["model"], registry=r
        )
        self.queue = Gauge(
            "vcore_router_queue_depth",
            "Requests sent to an engine and not yet answered (running or waiting there).",
            ["model"],
            registry=r,
        )
        self.replicas = Gauge(
            "vcore_router_recommended_replicas",
            "ceil(token throughput / configured per-replica throughput).",
            ["model_server"],
            registry=r,
        )
        self._tokens: dict[str, _TokenWindow] = {}

    def record_tokens(self, model: str, input_tokens: int, output_tokens: int) -> None:
        window = self._tokens.get(model)
        if window is None:
            window = self._tokens[model] = _TokenWindow()
        window.add(time.monotonic(), input_tokens, output_tokens)

    def throughput(self, model: str, window_s: float = 30.0) -> tuple[float, float]:
        window = self._tokens.get(model)
        if window is None:
            return 0.0, 0.0
        tin, tout = window.totals(time.monotonic() - window_s)
        return tin / window_s, tout / window_s

    def update_autoscaling(self, model: str, queue_depth: int, servers: list[tuple[str, float, float]]) -> None:
        """servers: (name, share of the model's traffic, tokens per second per replica)."""
        tin, tout = self.throughput(model)
        self.in_tps.labels(model).set(tin)
        self.out_tps.labels(model).set(tout)
        self.queue.labels(model).set(queue_depth)
        for name, share, per_replica in servers:
            if per_replica > 0:
                self.replicas.labels(name).set(max(1, math.ceil((tin + tout) * share / per_replica)))
