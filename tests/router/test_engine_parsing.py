"""What the router reads from engines: the metrics scraper's line parser against prometheus_client's own parser
(the reference) on exposition text that prometheus_client writes (several label sets, escaped label values,
histograms, LoRA info, both engines' names), and the output tokens of an answer; and the router's token window
against a plain recount."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from vcore_router.metrics import _TokenWindow
from vcore_router.scraper import NAMES, ScrapeState, parse_engine_metrics
from vcore_router.server import completion_tokens


def reference(text: str, engine: str) -> tuple[dict, dict, list[str] | None]:
    """(gauges, histogram [sum, count], LoRA adapters) as prometheus_client's parser reads them."""
    names = NAMES[engine]
    gauges, hist, lora = {}, {}, None
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == names["lora"]:
                both = (
                    sample.labels.get("running_lora_adapters", "")
                    + ","
                    + sample.labels.get("waiting_lora_adapters", "")
                )
                lora = sorted({a for a in both.split(",") if a})
            elif sample.name.endswith("_sum") or sample.name.endswith("_count"):
                base, kind = sample.name.rsplit("_", 1)
                hist.setdefault(base, [0.0, 0.0])[0 if kind == "sum" else 1] += sample.value
            else:
                gauges[sample.name] = gauges.get(sample.name, 0.0) + sample.value
    return gauges, hist, lora


label_text = st.text(alphabet=st.sampled_from('ab,{}"\\\n =x'), max_size=8)
values = st.floats(0, 1e6, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["vllm", "sglang"]),
    st.lists(st.tuples(label_text, values, values, values), min_size=1, max_size=3, unique_by=lambda t: t[0]),
    st.lists(st.floats(0, 50), max_size=6),
    st.lists(label_text, max_size=3),
)
def test_parser_reads_what_prometheus_client_reads(engine, models, latencies, adapters):
    names = NAMES[engine]
    reg = CollectorRegistry()
    running = Gauge(names["running"][0], "r", ["model_name"], registry=reg)
    waiting = Gauge(names["waiting"][0], "w", ["model_name"], registry=reg)
    kv = Gauge(names["kv"][0], "kv", ["model_name"], registry=reg)
    ttft = Histogram(names["ttft"][0], "t", ["model_name"], registry=reg)
    itl = Histogram(names["itl"][0], "i", ["model_name"], registry=reg)
    Counter("unrelated_requests", "noise", ["model_name"], registry=reg).labels("x").inc()
    for model, r, w, k in models:
        running.labels(model).set(r)
        waiting.labels(model).set(w)
        kv.labels(model).set(k / 1e6)
        for x in latencies:
            ttft.labels(model).observe(x)
            itl.labels(model).observe(x / 10)
    if names["lora"]:
        info = Gauge(
            names["lora"], "lora", ["running_lora_adapters", "max_lora", "waiting_lora_adapters"], registry=reg
        )
        info.labels(",".join(adapters), "4", "").set(1.0)
    text = generate_latest(reg).decode()
    gauges, hist, lora = reference(text, engine)
    state = ScrapeState()
    metrics, got_lora = parse_engine_metrics(text, engine, state)
    assert metrics.running == int(gauges[names["running"][0]]) and metrics.waiting == int(gauges[names["waiting"][0]])
    assert math.isclose(metrics.kv_usage, min(max(gauges[names["kv"][0]], 0.0), 1.0))
    for key in ("ttft", "itl"):
        total, count = hist.get(names[key][0], (0.0, 0.0))
        assert state.sums.get(names[key][0], (0.0, 0.0)) == (total, count)
        want = int(total / count * 1e6) if count else 0
        assert (metrics.ttft_us if key == "ttft" else metrics.itl_us) == want
    assert got_lora == lora


def test_parser_skips_comments_and_timestamps_and_rejects_a_broken_sample():
    text = (
        "# HELP vllm:num_requests_running x\n# TYPE vllm:num_requests_running gauge\n"
        'vllm:num_requests_running{model_name="a{b}"} 3 1700000000000\n'
        "vllm:num_requests_waiting 2\n"
    )
    metrics, lora = parse_engine_metrics(text, "vllm", ScrapeState())
    assert (metrics.running, metrics.waiting, lora) == (3, 2, None)
    try:
        parse_engine_metrics('vllm:num_requests_waiting{model_name="a"}\n', "vllm", ScrapeState())
    except ValueError as e:
        assert "no value" in str(e)
    else:
        raise AssertionError("a sample without a value must raise")


@given(
    st.lists(st.tuples(st.floats(0, 100), st.integers(0, 1000), st.integers(0, 1000)), max_size=40), st.floats(0, 100)
)
def test_token_window_totals(entries, since):
    window = _TokenWindow()
    for t, tin, tout in sorted(entries):
        window.add(t, tin, tout)
    kept = [(tin, tout) for t, tin, tout in sorted(entries) if t >= since]
    assert window.totals(since) == (sum(x[0] for x in kept), sum(x[1] for x in kept))


@pytest.mark.parametrize(
    "body, want",
    [
        (
            b'{"choices": [{"text": "x"}], "usage": {"prompt_tokens": 3, "completion_tokens": 17, "total_tokens": 20}}',
            17,
        ),
        (b'{"choices": [{"text": "\\"completion_tokens\\": 99"}], "usage": {"completion_tokens":5}}', 5),
        (
            b'{"choices": [{"text": "completion_tokens"}], "usage": {"completion_tokens": 2}, '
            b'"x": "completion_tokens"}',
            2,
        ),
        (b'{"choices": []}', 0),
        (b'not json "completion_tokens"', 0),
    ],
    ids=["usage", "quoted-in-text", "key-as-a-value-after-usage", "no-usage", "garbage"],
)
def test_completion_tokens(body, want):
    assert completion_tokens(body) == want
