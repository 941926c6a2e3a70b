"""Kubernetes discovery without a control plane: a pod (the API server's JSON) -> an endpoint, the reflector sink's
changes for events and relists, and the workloadSelector's configuration. The list+watch against the real API
server is in test_discovery_e2e.py."""

from __future__ import annotations

import asyncio
import time

import pytest

from vcore_router.config import ConfigError, PdGroupSelector, WorkloadSelector, parse_config
from vcore_router.discovery import PodEndpoints, pod_endpoint
from vcore_router.server import make_app

SELECTOR = WorkloadSelector(
    "default", {"app": "llm"}, 8000, PdGroupSelector("pd-group", {"role": "prefill"}, {"role": "decode"}), max_loras=2
)
NAMED = WorkloadSelector("default", {"app": "llm"}, "http")


def pod(name, ip="10.0.0.5", ready="True", ports=None, deleting=False, rv="1", **labels):
    meta = {"name": name, "namespace": "default", "labels": {"app": "llm", **labels}, "resourceVersion": rv}
    if deleting:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    container = {"name": "engine", "image": "vllm"}
    if ports:
        container["ports"] = [{"name": n, "containerPort": p} for n, p in ports.items()]
    status = {"phase": "Running", "conditions": [{"type": "Ready", "status": ready}]}
    if ip:
        status["podIP"] = ip
    return {"metadata": meta, "spec": {"containers": [container]}, "status": status}


def test_pod_to_endpoint():
    ep = pod_endpoint(
        "s", pod("p1", role="prefill", **{"pd-group": "g1", "topology.kubernetes.io/zone": "z1"}), SELECTOR
    )
    assert (ep.name, ep.url, ep.role, ep.pd_group, ep.domain, ep.max_loras) == (
        "s/default/p1",
        "http://10.0.0.5:8000",
        "prefill",
        "g1",
        "z1",
        2,
    )
    assert pod_endpoint("s", pod("p2", role="decode"), SELECTOR).role == "decode"
    assert pod_endpoint("s", pod("p2", role="other"), SELECTOR).role == "both"
    assert pod_endpoint("s", pod("p6", ip="fd00::7"), SELECTOR).url == "http://[fd00::7]:8000"


@pytest.mark.parametrize(
    "p",
    [pod("p3", ready="False"), pod("p4", ip=None), pod("p5", deleting=True)],
    ids=["not-ready", "no-ip", "terminating"],
)
def test_pods_that_are_not_endpoints(p):
    assert pod_endpoint("s", p, SELECTOR) is None


def test_named_port():
    assert pod_endpoint("s", pod("a", ports={"metrics": 9000, "http": 8123}), NAMED).url == "http://10.0.0.5:8123"
    assert pod_endpoint("s", pod("b", ports={"metrics": 9000}), NAMED) is None
    assert pod_endpoint("s", pod("c"), NAMED) is None
    https = WorkloadSelector("default", {"app": "llm"}, 8443, protocol="https")
    assert pod_endpoint("s", pod("d"), https).url == "https://10.0.0.5:8443"


class Changes:
    def __init__(self):
        self.log = []

    def __call__(self, server, removed, added):
        self.log.append((server, sorted(removed), sorted(e.name for e in added)))

    def take(self):
        out, self.log = self.log, []
        return out


def test_sink_events_and_relist():
    changes = Changes()
    sink = PodEndpoints("s", NAMED, changes)
    sink.replace("Pod", [pod("a", ports={"http": 1}), pod("b", ready="False", ports={"http": 2})], "10")
    assert changes.take() == [("s", [], ["s/default/a"])]
    sink.event("Pod", "MODIFIED", pod("a", ports={"http": 1}, rv="11"))  # nothing routing reads changed
    sink.event("Pod", "MODIFIED", pod("b", ready="False", ports={"http": 2}, rv="12"))  # still not ready
    assert changes.take() == []
    sink.event("Pod", "MODIFIED", pod("b", ports={"http": 2}, rv="13"))  # becomes ready
    sink.event("Pod", "MODIFIED", pod("a", ports={"http": 5}, rv="14"))  # a new port: out, and in again
    sink.event("Pod", "MODIFIED", pod("b", ports={"http": 2}, deleting=True, rv="15"))  # terminating
    sink.event("Pod", "DELETED", pod("b", ports={"http": 2}, deleting=True, rv="16"))
    assert changes.take() == [
        ("s", [], ["s/default/b"]),
        ("s", ["s/default/a"], ["s/default/a"]),
        ("s", ["s/default/b"], []),
    ]
    assert sink.endpoints["s/default/a"].url == "http://10.0.0.5:5"
    # A relist (after 410): a was deleted meanwhile, c created, d created not ready: one change.
    sink.replace("Pod", [pod("c", ports={"http": 3}), pod("d", ready="False", ports={"http": 4})], "40")
    assert changes.take() == [("s", ["s/default/a"], ["s/default/c"])]
    assert set(sink.endpoints) == {"s/default/c"}


def test_sink_says_once_that_a_ready_pod_lacks_the_named_port(caplog):
    sink = PodEndpoints("s", NAMED, Changes())
    for rv in ("1", "2", "3"):
        sink.event("Pod", "MODIFIED", pod("a", ports={"grpc": 1}, rv=rv))
    assert sum("no container port named 'http'" in r.getMessage() for r in caplog.records) == 1
    assert not sink.endpoints


def selector_config(**selector):
    workload = {"matchLabels": {"app": "llm"}, **selector.pop("workload", {})}
    return {
        "modelServers": [{"name": "p", "model": "m", "workloadSelector": workload, **selector}],
        "modelRoutes": [{"modelName": "m", "rules": [{"targetModels": [{"modelServerName": "p"}]}]}],
    }


def test_selector_config():
    s = parse_config(
        selector_config(
            workload={"namespace": "llm", "port": "http", "matchLabels": {"app": "llm", "example.com/tier": "a"}}
        )
    ).servers["p"]
    assert (s.selector.namespace, s.selector.port, s.selector.label_selector) == (
        "llm",
        "http",
        "app=llm,example.com/tier=a",
    )
    kthena = parse_config(selector_config(workloadPort={"port": 8100, "protocol": "https"})).servers["p"].selector
    assert (kthena.port, kthena.protocol) == (8100, "https")
    assert parse_config(selector_config()).servers["p"].selector.port == 8000


@pytest.mark.parametrize(
    "selector, field",
    [
        ({"workload": {"port": 0}}, r"workloadSelector\.port"),
        ({"workload": {"port": 70000}}, r"workloadSelector\.port"),
        ({"workload": {"port": "HTTP"}}, r"workloadSelector\.port"),
        ({"workload": {"port": "a-very-long-port-name"}}, r"workloadSelector\.port"),
        ({"workload": {"port": 8000}, "workloadPort": {"port": 8001}}, r"workloadSelector\.port.*give it once"),
        ({"workloadPort": {"port": 8000, "protocol": "grpc"}}, r"workloadPort\.protocol"),
        ({"workloadPort": {"port": 8000, "path": "/v1"}}, r"workloadPort\.path: unknown key"),
        ({"workload": {"matchLabels": {"app": "a,b"}}}, r"workloadSelector\.matchLabels\.app"),
        (
            {"workload": {"matchLabels": {"bad key": "x"}}},
            r"workloadSelector\.matchLabels\.bad key: 'bad key' is not a valid label key",
        ),
        ({"workload": {"namespace": "Not_A_Namespace"}}, r"workloadSelector\.namespace"),
    ],
    ids=[
        "port-0",
        "port-too-big",
        "port-name-case",
        "port-name-long",
        "port-twice",
        "protocol",
        "workloadPort-key",
        "label-value",
        "label-key",
        "namespace",
    ],
)
def test_bad_selector_config(selector, field):
    with pytest.raises(ConfigError, match=rf"modelServers\[0\]\.{field}"):
        parse_config(selector_config(**selector))


def test_missing_credentials_are_a_config_error(tmp_path, monkeypatch):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)  # as if outside a pod, wherever the tests run
    config = parse_config(selector_config())
    with pytest.raises(ConfigError, match=r"modelServers p: workloadSelector needs Kubernetes credentials"):
        make_app(config, kubeconfig=str(tmp_path / "missing.kubeconfig"))
    with pytest.raises(ConfigError, match="in-cluster service account"):
        make_app(config)  # not in a pod: no service account token


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_an_endpoint_that_leaves_mid_request_finishes_it(engines, loop, stream):
    """Discovery may remove an endpoint while a request to it is answered: the answer arrives whole (the pod's
    engine still serves it), the request is no longer counted, and the next one goes to the endpoint that joined."""
    import concurrent.futures

    import openai

    from vcore_router.config import StaticEndpoint

    leaving = engines.start(f"leaving-{stream}", time_scale=1.0)  # real-time decoding: the answer takes a while
    joining = engines.start(f"joining-{stream}")
    url, core = loop.start_router(
        {
            "router": {"scrapeIntervalSeconds": 0.1},
            "modelServers": [
                {"name": "pool", "model": "sim-model", "endpoints": [{"name": "leaving", "url": leaving}]}
            ],
            "modelRoutes": [{"modelName": "llama", "rules": [{"targetModels": [{"modelServerName": "pool"}]}]}],
        }
    )
    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)

    def tokens() -> int:
        answer = client.completions.create(model="llama", prompt="a long answer", max_tokens=40, stream=stream)
        if not stream:
            return answer.usage.completion_tokens
        return sum(1 for c in answer if c.choices and c.choices[0].text)

    async def in_flight():
        return core.router.n_in_flight

    async def swap():
        core.apply_discovered("pool", ["leaving"], [StaticEndpoint("joining", joining)])

    try:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            answer = pool.submit(tokens)
            deadline = time.monotonic() + 10
            while loop.run(in_flight()) == 0:
                assert time.monotonic() < deadline and not answer.done(), "the request never went out"
                time.sleep(0.01)
            loop.run(swap())
            assert not answer.done()  # still being answered when its endpoint left
            assert answer.result(30) == 40
        assert loop.run(in_flight()) == 0
        assert client.completions.create(model="llama", prompt="next", max_tokens=2).usage.completion_tokens == 2
        assert set(core.upstreams) == {"joining"}
    finally:
        loop.stop_router(url)


@pytest.mark.parametrize("delay", [0, 0.001], ids=["before-its-scrape", "during-its-scrape"])
def test_an_endpoint_that_leaves_mid_scrape(engines, loop, delay):
    """Discovery may remove an endpoint while a scrape round runs: the round completes for the others."""
    urls = [engines.start(f"scraped-{delay}-{i}") for i in range(2)]
    url, core = loop.start_router(
        {
            "router": {"scrapeIntervalSeconds": 60},  # only the rounds this test runs
            "modelServers": [
                {
                    "name": "pool",
                    "model": "sim-model",
                    "endpoints": [{"name": f"s{i}", "url": u} for i, u in enumerate(urls)],
                }
            ],
            "modelRoutes": [{"modelName": "llama", "rules": [{"targetModels": [{"modelServerName": "pool"}]}]}],
        }
    )

    async def race():
        round_ = asyncio.ensure_future(core.scrape_once())
        await asyncio.sleep(delay)  # 0: the round has begun, its scrapes not yet; 1 ms: they are on the wire
        core.apply_discovered("pool", ["s0"], [])
        await round_
        return core.health.failures("s1"), core.router.endpoints

    try:
        assert loop.run(race()) == (0, ["s1"])
    finally:
        loop.stop_router(url)


def test_cli_refuses_a_selector_without_credentials(tmp_path, capsys):
    import yaml

    from vcore_router.cli import main

    path = tmp_path / "router.yaml"
    path.write_text(yaml.safe_dump(selector_config()))
    assert main(["--config", str(path), "--kubeconfig", str(tmp_path / "missing")]) == 2
    assert "modelServers p: workloadSelector needs Kubernetes credentials" in capsys.readouterr().err
