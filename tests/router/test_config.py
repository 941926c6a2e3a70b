"""Router configuration: the ModelServer's prefill time model reaches the routing core; a malformed configuration
is a ConfigError naming the field path, and vcore-router says so in one line instead of starting."""

from __future__ import annotations

import math
import re

import pytest
import yaml

from vcore_router.config import ConfigError, StaticEndpoint, parse_config
from vcore_router.server import RouterApp


def config(**server) -> dict:
    return {
        "modelServers": [
            {"name": "p", "model": "sim-model", "endpoints": [{"name": "e0", "url": "http://127.0.0.1:1"}], **server}
        ],
        "modelRoutes": [{"modelName": "m", "rules": [{"targetModels": [{"modelServerName": "p"}]}]}],
    }


def test_prefill_time_model_prices_the_wait_in_seconds():
    cfg = parse_config(config(prefillTokensPerSecond=10000, prefillOverheadSeconds=0.01))
    assert (cfg.servers["p"].prefill_tokens_per_s, cfg.servers["p"].prefill_overhead_s) == (10000.0, 0.01)
    router = RouterApp(cfg).router
    router.dispatch(1, "e0", [], 10000, 0, now_s=0.0)  # 1.01 s of prefill
    assert router.state()["prefill_busy_until_s"][0] == pytest.approx(1.01)
    unset = parse_config(config()).servers["p"]
    assert (unset.prefill_tokens_per_s, unset.prefill_overhead_s) == (1.0, 0.0)  # ranked by tokens


@pytest.mark.parametrize(
    "key, value", [("prefillTokensPerSecond", 0), ("prefillTokensPerSecond", "fast"), ("prefillOverheadSeconds", -1)]
)
def test_bad_prefill_time_model(key, value):
    with pytest.raises(ConfigError, match=rf"modelServers\[0\]\.{key}"):
        parse_config(config(**{key: value}))


def two_servers() -> dict:
    return {
        "router": {},
        "redis": {"url": "redis://127.0.0.1:6379/0"},
        "modelServers": [
            {"name": "p", "model": "m", "endpoints": [{"name": "e0", "url": "http://127.0.0.1:8001"}]},
            {"name": "q", "model": "m", "endpoints": [{"name": "e1", "url": "http://127.0.0.1:8002"}]},
        ],
        "modelRoutes": [{"modelName": "m", "rules": [{"targetModels": [{"modelServerName": "p"}]}]}],
    }


def server(raw: dict, i: int = 0) -> dict:
    return raw["modelServers"][i]


# Each refused with a ConfigError "<path>: <problem>": six used to end in a traceback, three to start anyway.
MALFORMED = [
    (
        "endpoint-name-twice",
        lambda c: server(c, 1)["endpoints"][0].update(name="e0"),
        r"modelServers\[1\]\.endpoints\[0\]\.name: duplicate endpoint 'e0' \(also modelServers\[0\]\.endpoints\[0\]\)",
    ),
    ("modelServers-not-a-list", lambda c: c.update(modelServers=5), r"modelServers: must be a list, got an integer"),
    (
        "targetModels-not-a-list",
        lambda c: c["modelRoutes"][0]["rules"][0].update(targetModels=7),
        r"modelRoutes\[0\]\.rules\[0\]\.targetModels: must be a list",
    ),
    ("redis-url-no-scheme", lambda c: c["redis"].update(url="localhost:6379"), r"redis\.url: 'localhost:6379': "),
    (
        "prefill-speed-nan",
        lambda c: server(c).update(prefillTokensPerSecond=math.nan),
        r"modelServers\[0\]\.prefillTokensPerSecond: must be a finite number, got nan",
    ),
    (
        "pdGroup-a-list",
        lambda c: server(c)["endpoints"][0].update(pdGroup=["g"]),
        r"modelServers\[0\]\.endpoints\[0\]\.pdGroup: must be a string, got a list",
    ),
    (
        "url-port-99999",
        lambda c: server(c)["endpoints"][0].update(url="http://127.0.0.1:99999"),
        r"modelServers\[0\]\.endpoints\[0\]\.url: 'http://127.0.0.1:99999' is not a valid URL",
    ),
    (
        "scrape-interval-nan",
        lambda c: c["router"].update(scrapeIntervalSeconds=math.nan),
        r"router\.scrapeIntervalSeconds: must be a finite duration, got nan",
    ),
    (
        "request-timeout-inf",
        lambda c: c["router"].update(requestTimeoutSeconds=math.inf),
        r"router\.requestTimeoutSeconds: must be a finite duration, got inf",
    ),
    (
        "url-port-0",
        lambda c: server(c)["endpoints"][0].update(url="http://127.0.0.1:0"),
        r"modelServers\[0\]\.endpoints\[0\]\.url\.port: must be in \[1, 65535\], got 0",
    ),
    (
        "redis-port-0",
        lambda c: c["redis"].update(url="redis://127.0.0.1:0/0"),
        r"redis\.url\.port: must be in \[1, 65535\], got 0",
    ),
    (
        "redis-db-name",
        lambda c: c["redis"].update(url="redis://127.0.0.1:6379/cache"),
        r"redis\.url: 'redis://127.0.0.1:6379/cache': the database 'cache' is not a number",
    ),
    (
        "redis-unknown-option",
        lambda c: c["redis"].update(url="redis://127.0.0.1:6379/0?colour=red"),
        r"redis\.url: .*colour",
    ),
    (
        "scrape-interval-a-day",
        lambda c: c["router"].update(scrapeIntervalSeconds=86400),
        r"router\.scrapeIntervalSeconds: must be at most 3600 s",
    ),
    ("retries-huge", lambda c: c["router"].update(retries=10**12), r"router\.retries: must be in \[1, 100\]"),
    ("seed-negative", lambda c: c["router"].update(seed=-1), r"router\.seed: must be in \[0, "),
    (
        "maxLoras-beyond-int32",
        lambda c: server(c)["endpoints"][0].update(maxLoras=2**31),
        r"modelServers\[0\]\.endpoints\[0\]\.maxLoras: must be in \[0, 2147483647\]",
    ),
    (
        "endpoint-name-with-slash",
        lambda c: server(c)["endpoints"][0].update(name="p/default/pod"),
        r"modelServers\[0\]\.endpoints\[0\]\.name: 'p/default/pod' is not a static endpoint name",
    ),
    (
        "lora-named-as-a-model",
        lambda c: c["modelRoutes"].append(
            {"modelName": "n", "loraAdapters": ["m"], "rules": [{"targetModels": [{"modelServerName": "q"}]}]}
        ),
        r"modelRoutes\[1\]\.loraAdapters\[0\]: 'm' is already served by modelRoutes\[0\]\.modelName",
    ),
    (
        "unknown-key-hint",
        lambda c: c["router"].update(scrapeIntervalSecond=1),
        r"router\.scrapeIntervalSecond: unknown key \(did you mean 'scrapeIntervalSeconds'\?\)",
    ),
    (
        "document-spec-path",
        lambda c: c["modelServers"].__setitem__(
            0,
            {
                "apiVersion": "networking.serving.volcano.sh/v1alpha1",
                "kind": "ModelServer",
                "metadata": {"name": "p"},
                "spec": {"model": "m", "endpoints": [{"name": "e0", "url": "ftp://h"}]},
            },
        ),
        r"modelServers\[0\]\.spec\.endpoints\[0\]\.url: must be http\(s\)://host\[:port\], got 'ftp://h'",
    ),
]


@pytest.mark.parametrize("mutate, message", [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_config_is_a_config_error_naming_the_field(mutate, message):
    raw = two_servers()
    mutate(raw)
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    assert re.match(message, str(info.value)), str(info.value)


def test_optional_keys_may_be_null_and_durations_may_be_go_strings():
    raw = two_servers()
    raw["router"] = {"scrapeIntervalSeconds": "250ms", "requestTimeoutSeconds": "2m", "policy": None}
    raw["redis"] = None
    server(raw)["endpoints"][0].update(pdGroup=None, maxLoras=None)
    cfg = parse_config(raw)
    assert (cfg.scrape_interval_s, cfg.request_timeout_s, cfg.redis_url) == (0.25, 120.0, None)
    assert cfg.servers["p"].endpoints[0] == StaticEndpoint("e0", "http://127.0.0.1:8001")


@pytest.mark.parametrize("mutate, message", [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_cli_prints_one_line_and_exits_non_zero(mutate, message, tmp_path, monkeypatch, capsys):
    from aiohttp import web

    from vcore_router.cli import main

    def started(*args, **kwargs):
        raise AssertionError("vcore-router started with a malformed configuration")

    monkeypatch.setattr(web, "run_app", started)
    raw = two_servers()
    mutate(raw)
    path = tmp_path / "router.yaml"
    path.write_text(yaml.safe_dump(raw))  # NaN and infinity as YAML's .nan and .inf
    assert main(["--config", str(path)]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert re.match(rf"vcore-router: {re.escape(str(path))}: {message}", err), err


@pytest.mark.parametrize("port", ["0", "99999", "http"])
def test_cli_refuses_a_bad_listen_port(port, capsys):
    from vcore_router.cli import main

    with pytest.raises(SystemExit) as info:
        main(["--config", "unused.yaml", "--port", port])
    assert info.value.code == 2
    assert "argument --port: must be" in capsys.readouterr().err
