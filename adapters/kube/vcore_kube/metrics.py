"""Prometheus metrics (prometheus_client, one registry per scheduler) and the HTTP endpoint serving them with
/healthz (the scheduling loop is alive) and /readyz (every cache has synced)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


class Metrics:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.attempts = Counter("vcore_scheduler_schedule_attempts", "Scheduling attempts by result "
                                "(scheduled, unschedulable, error)", ["result"], registry=r)
        self.cycle_duration = Histogram("vcore_scheduler_cycle_duration_seconds",
                                        "Duration of one scheduling cycle (the vcore call)", registry=r,
                                        buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                                 2.5))
        self.creation_to_bind = Histogram("vcore_scheduler_creation_to_bind_seconds", "From a pod's "
                                          "creationTimestamp (1 s resolution) to its successful binding",
                                          registry=r, buckets=LATENCY_BUCKETS)
        self.queue_to_bind = Histogram("vcore_scheduler_queue_to_bind_seconds", "From the pod's arrival in the "
                                       "scheduler's queue to its successful binding", registry=r,
                                       buckets=LATENCY_BUCKETS)
        self.pending = Gauge("vcore_scheduler_pending_pods", "Pods waiting for a node, by Volcano queue",
                             ["queue"], registry=r)
        self.bind_errors = Counter("vcore_scheduler_bind_errors", "Failed bindings by reason (conflict, "
                                   "not_found, server_error, timeout, ...)", ["reason"], registry=r)
        self.relists = Counter("vcore_scheduler_relists", "Full lists of a resource by reason (start, expired "
                               "= 410 Gone, not-served)", ["kind", "reason"], registry=r)
        self.watch_events = Counter("vcore_scheduler_watch_events", "Watch events received", ["kind"], registry=r)
        self.evictions = Counter("vcore_scheduler_evictions", "Pods evicted to make room, by reason (preempt, "
                                 "reclaim)", ["reason"], registry=r)
        self.leader = Gauge("vcore_scheduler_is_leader", "1 while this replica holds the Lease", registry=r)
        self.api_writes_dropped = Counter("vcore_scheduler_api_writes_dropped", "Events and pod conditions "
                                          "dropped because the writer queue was full", registry=r)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class HealthServer:
    """GET /metrics, /healthz, /readyz on one address, in a daemon thread."""

    def __init__(self, address: str, metrics: Metrics, healthy: Callable[[], bool], ready: Callable[[], bool]):
        host, _, port = address.rpartition(":")
        routes = {"/metrics": lambda: (200, CONTENT_TYPE_LATEST, metrics.exposition()),
                  "/healthz": lambda: (200, "text/plain", b"ok") if healthy() else (500, "text/plain", b"unhealthy"),
                  "/readyz": lambda: (200, "text/plain", b"ok") if ready() else (503, "text/plain", b"not ready")}

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                route = routes.get(self.path.split("?")[0])
                status, kind, body = route() if route else (404, "text/plain", b"not found")
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:  # probes every few seconds: not worth a log line each
                pass

        self.server = ThreadingHTTPServer((host or "0.0.0.0", int(port)), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="health-server", daemon=True)

    @property
    def address(self) -> str:
        host, port = self.server.server_address[:2]
        return f"{host}:{port}"

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
