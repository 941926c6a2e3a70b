"""Prometheus metrics (prometheus_client, one registry per scheduler) and the HTTP endpoint serving them with
/healthz (the scheduling loop is alive), /readyz (every cache has synced) and /debug/samples (the latest exact
latency samples of the fast path and warm pools, in milliseconds, for benchmarks that need exact percentiles)."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Protocol

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
FAST_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5)
SAMPLES = 100_000  # exact samples kept per series (the latest)


class Metrics:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.attempts = Counter(
            "vcore_scheduler_schedule_attempts",
            "Scheduling attempts by result (scheduled, unschedulable, error)",
            ["result"],
            registry=r,
        )
        self.cycle_duration = Histogram(
            "vcore_scheduler_cycle_duration_seconds",
            "Duration of one scheduling cycle (the vcore call)",
            registry=r,
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
        )
        self.creation_to_bind = Histogram(
            "vcore_scheduler_creation_to_bind_seconds",
            "From a pod's creationTimestamp (1 s resolution) to its successful binding",
            registry=r,
            buckets=LATENCY_BUCKETS,
        )
        self.queue_to_bind = Histogram(
            "vcore_scheduler_queue_to_bind_seconds",
            "From the pod's arrival in the scheduler's queue to its successful binding",
            registry=r,
            buckets=LATENCY_BUCKETS,
        )
        self.pending = Gauge(
            "vcore_scheduler_pending_pods", "Pods waiting for a node, by Volcano queue", ["queue"], registry=r
        )
        self.bind_errors = Counter(
            "vcore_scheduler_bind_errors",
            "Failed bindings by reason (conflict, not_found, server_error, timeout, ...)",
            ["reason"],
            registry=r,
        )
        self.relists = Counter(
            "vcore_scheduler_relists",
            "Full lists of a resource by reason (start, expired = 410 Gone, not-served)",
            ["kind", "reason"],
            registry=r,
        )
        self.watch_events = Counter("vcore_scheduler_watch_events", "Watch events received", ["kind"], registry=r)
        self.evictions = Counter(
            "vcore_scheduler_evictions",
            "Pods evicted to make room, by reason (preempt, reclaim)",
            ["reason"],
            registry=r,
        )
        self.leader = Gauge("vcore_scheduler_is_leader", "1 while this replica holds the Lease", registry=r)
        self.api_writes_dropped = Counter(
            "vcore_scheduler_api_writes_dropped",
            "Events, pod conditions and nominations dropped because the event writer's queue was full",
            registry=r,
        )
        self.status_writes = Counter(
            "vcore_scheduler_status_writes",
            "Status writes by kind (PodGroup, Queue) and result (ok, conflict, not_found, error)",
            ["kind", "result"],
            registry=r,
        )
        self.status_writes_pending = Gauge(
            "vcore_scheduler_status_writes_pending",
            "Objects whose status is still to be written (queued, backing off or in flight), by kind",
            ["kind"],
            registry=r,
        )
        # The agent fast path, warm pools and sharding.
        self.fast_batch = Histogram(
            "vcore_scheduler_fast_path_batch_pods",
            "Pods per fast-path micro-batch",
            registry=r,
            buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 1024),
        )
        self.fast_event_to_bind = Histogram(
            "vcore_scheduler_fast_path_event_to_bind_request_seconds",
            "From a fast-path pod's watch event to its binding request",
            registry=r,
            buckets=FAST_BUCKETS,
        )
        self.warm_size = Gauge("vcore_scheduler_warm_pool_size", "Placeholders a warm pool keeps", ["pool"], registry=r)
        self.warm_ready = Gauge(
            "vcore_scheduler_warm_pool_ready", "Placeholders bound, per warm pool", ["pool"], registry=r
        )
        self.warm_hits = Counter(
            "vcore_scheduler_warm_pool_hits", "Session pods placed onto a placeholder's node", ["pool"], registry=r
        )
        self.warm_misses = Counter(
            "vcore_scheduler_warm_pool_misses",
            "Session pods no placeholder node could take (placed by the fast path)",
            ["pool"],
            registry=r,
        )
        self.warm_refill = Histogram(
            "vcore_scheduler_warm_pool_refill_seconds",
            "From a placeholder's departure to a replacement bound",
            registry=r,
            buckets=LATENCY_BUCKETS,
        )
        self.shard_nodes = Gauge(
            "vcore_scheduler_shard_nodes",
            "Nodes of this instance's NodeShard by state (usable, in_use, to_add, to_remove)",
            ["state"],
            registry=r,
        )
        self.shard_handovers = Counter(
            "vcore_scheduler_shard_handovers", "Nodes gained or released", ["direction"], registry=r
        )
        self.samples: dict[str, deque] = {}

    def sample(self, series: str, seconds: float) -> None:
        """Keep an exact sample (served in ms at /debug/samples)."""
        kept = self.samples.get(series)
        if kept is None:
            kept = self.samples[series] = deque(maxlen=SAMPLES)
        kept.append(seconds * 1000.0)

    def samples_json(self) -> bytes:
        return json.dumps({k: list(v) for k, v in list(self.samples.items())}).encode()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class Exposition(Protocol):
    """What HealthServer serves at /metrics (a process's metrics: Metrics, the sharder's own)."""

    def exposition(self) -> bytes: ...


class HealthServer:
    """GET /metrics, /healthz, /readyz (and /debug/samples) on one address, in a daemon thread."""

    def __init__(
        self, address: str, metrics: Exposition, healthy: Callable[[], bool], ready: Callable[[], bool]
    ) -> None:
        host, _, port = address.rpartition(":")
        routes = {
            "/metrics": lambda: (200, CONTENT_TYPE_LATEST, metrics.exposition()),
            "/healthz": lambda: (200, "text/plain", b"ok") if healthy() else (500, "text/plain", b"unhealthy"),
            "/readyz": lambda: (200, "text/plain", b"ok") if ready() else (503, "text/plain", b"not ready"),
        }
        if hasattr(metrics, "samples_json"):
            routes["/debug/samples"] = lambda: (200, "application/json", metrics.samples_json())

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                route = routes.get(self.path.split("?")[0])
                status, kind, body = route() if route else (404, "text/plain", b"not found")
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:  # probes every few seconds: not worth a log line each
                pass

        try:
            self.server = ThreadingHTTPServer((host or "0.0.0.0", int(port)), Handler)
        except OSError as e:  # taken, not this machine's, or a host name that does not resolve
            raise OSError(e.errno, f"cannot serve on {address}: {e.strerror or e}") from None
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="health-server", daemon=True)

    @property
    def address(self) -> str:
        host, port = self.server.server_address[:2]
        assert isinstance(host, str), "a TCP server's address"
        return f"{host}:{port}"

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
