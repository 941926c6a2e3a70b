"""The adapter's pieces that need no API server: the cache's deltas, the watch backoff, the fault proxy's rules,
an event note's truncation, and the rule that only the conversion seam talks to vcore (the configuration:
test_config.py)."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

from vcore_kube.cache import Cache
from vcore_kube.events import NOTE_LIMIT, truncated_note
from vcore_kube.reflector import Backoff
from vcore_kube.testenv.faultproxy import Fault

PACKAGE = Path(__file__).resolve().parents[2] / "adapters" / "kube" / "vcore_kube"


def _pod(name, rv, group=None):
    meta = {"name": name, "namespace": "ns", "resourceVersion": rv}
    if group:
        meta["annotations"] = {"scheduling.k8s.io/group-name": group}
    return {"metadata": meta}


def test_cache_events_and_relist_deltas():
    cache = Cache()
    assert cache.apply("Pod", "ADDED", _pod("a", "1", "g")).old is None
    cache.apply("Pod", "ADDED", _pod("b", "2"))
    assert cache.pods_of_group("ns/g") == {"ns/a"}
    # A relist: a deleted meanwhile, b unchanged, c new.
    deltas = cache.replace("Pod", [_pod("b", "2"), _pod("c", "3", "g")])
    assert {(d.key, d.old is None, d.new is None) for d in deltas} == {("ns/a", False, True), ("ns/c", True, False)}
    assert cache.pods_of_group("ns/g") == {"ns/c"} and cache.count("Pod") == 2
    assert cache.apply("Pod", "DELETED", _pod("zzz", "4")) is None
    assert cache.apply("Node", "ADDED", {"metadata": {"name": "n1"}}).key == "n1"


def test_a_long_note_is_cut_as_kube_scheduler_cuts_it():
    assert truncated_note("x" * NOTE_LIMIT) == "x" * NOTE_LIMIT
    cut = truncated_note("0/9 nodes are available: " + "y" * 2000)
    assert len(cut) == NOTE_LIMIT and cut.startswith("0/9 nodes are available: yyy") and cut.endswith("y ...")


def test_backoff_is_capped_exponential_with_jitter():
    backoff = Backoff(initial=0.25, cap=4.0, rng=random.Random(1))
    delays = [backoff.next() for _ in range(8)]
    for i, d in enumerate(delays):
        ceiling = min(4.0, 0.25 * 2**i)
        assert ceiling / 2 <= d <= ceiling
    backoff.reset()
    assert backoff.next() <= 0.25


def test_fault_rules_match_method_path_share_and_count():
    rng = random.Random(0)
    once = Fault("error", path=r"/binding$", method="POST", times=1)
    assert not once.matches("GET", "/api/v1/namespaces/a/pods/p/binding", rng)
    assert once.matches("POST", "/api/v1/namespaces/a/pods/p/binding", rng)
    assert not once.matches("POST", "/api/v1/namespaces/a/pods/p/binding", rng)  # used up
    half = Fault("delay", probability=0.5)
    hits = sum(half.matches("GET", "/x", rng) for _ in range(1000))
    assert 400 < hits < 600


def _vcore_importers(allowed: str = "vcore.validation") -> set[str]:
    """The modules importing vcore, other than its `allowed` module."""
    out = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            if any((n == "vcore" or n.startswith("vcore.")) and n != allowed for n in names):
                out.add(str(path.relative_to(PACKAGE)))
    return out


def test_only_the_conversion_seam_imports_vcore():
    # The conversion, and the decision seams: the batch cycle, the fast path, the warm pools' hits and refills;
    # the configuration, which has vcore check the profiles and the cycle it will run; and the way back, a cycle's
    # statuses as Volcano's status shapes. Any module may check user input with vcore.validation.
    assert _vcore_importers() == {
        "config.py",
        "convert.py",
        "batchcycle.py",
        "fastpath.py",
        "warmpool.py",
        "volcanostatus.py",
    }


class _Closing:
    """A loopback HTTP/1.1 server that answers, then closes the kept-alive connection without saying so (as an
    API server does to an idle connection)."""

    def __init__(self, close_after_each: bool) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802
                outer.requests += 1
                self.rfile.read(int(self.headers["Content-Length"]))
                body = b'{"ok": true}'
                self.send_response(201)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                if close_after_each:
                    self.close_connection = True

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("close_after_each", [False, True], ids=["kept-alive", "closed-by-server"])
def test_direct_requests_reuse_connections_and_resend_once_on_a_stale_one(close_after_each):
    from kubernetes import client

    from vcore_kube.kubeclient import Api

    server = _Closing(close_after_each)
    try:
        configuration = client.Configuration()
        configuration.host = server.url
        api = Api(client.ApiClient(configuration))
        for _ in range(3):
            assert api.create("/x", {"a": 1}) == {"ok": True}
        assert server.requests == 3  # one request each: a stale connection was replaced, nothing sent twice
        api.close()
    finally:
        server.stop()
