"""Router configuration: the ModelServer's prefill time model reaches the routing core; bad values name the path."""
from __future__ import annotations

import pytest

from vcore_router.config import ConfigError, parse_config
from vcore_router.server import RouterApp


def config(**server) -> dict:
    return {"modelServers": [{"name": "p", "model": "sim-model", "endpoints": [{"name": "e0", "url": "http://127.0.0.1:1"}],
                              **server}],
            "modelRoutes": [{"modelName": "m", "rules": [{"targetModels": [{"modelServerName": "p"}]}]}]}


def test_prefill_time_model_prices_the_wait_in_seconds():
    cfg = parse_config(config(prefillTokensPerSecond=10000, prefillOverheadSeconds=0.01))
    assert (cfg.servers["p"].prefill_tokens_per_s, cfg.servers["p"].prefill_overhead_s) == (10000.0, 0.01)
    router = RouterApp(cfg).router
    router.dispatch(1, "e0", [], 10000, 0, now_s=0.0)  # 1.01 s of prefill
    assert router.state()["prefill_busy_until_s"][0] == pytest.approx(1.01)
    unset = parse_config(config()).servers["p"]
    assert (unset.prefill_tokens_per_s, unset.prefill_overhead_s) == (1.0, 0.0)  # ranked by tokens


@pytest.mark.parametrize("key, value", [("prefillTokensPerSecond", 0), ("prefillTokensPerSecond", "fast"),
                                        ("prefillOverheadSeconds", -1)])
def test_bad_prefill_time_model(key, value):
    with pytest.raises(ConfigError, match=rf"modelServers\[0\]\.{key}"):
        parse_config(config(**{key: value}))
