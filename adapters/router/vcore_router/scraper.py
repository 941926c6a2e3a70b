"""Scraping engines' Prometheus metrics into the router core (vLLM and SGLang metric names).

Per endpoint and interval: running and waiting requests, KV cache use, the last period's mean TTFT and
inter-token latency (from the histograms' _sum/_count deltas; a period without observations keeps the previous
mean), and the LoRA adapters loaded (vLLM's ``vllm:lora_requests_info``). What a failed or successful scrape does
to the endpoint's health is vcore_router.health's.

The parser reads only the samples it needs from the Prometheus text format, line by line: a vLLM server exposes
hundreds of histogram buckets, and a general parser (prometheus_client's) spends milliseconds per endpoint on them
on the router's event loop, in front of every request waiting there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypedDict

from vcore.routing import EngineMetrics


class EngineNames(TypedDict):
    """The metric names an engine exports: per quantity the names to read, first present wins."""

    running: tuple[str, ...]
    waiting: tuple[str, ...]
    kv: tuple[str, ...]
    ttft: tuple[str, ...]  # histograms (their _sum and _count samples)
    itl: tuple[str, ...]
    lora: str | None  # the LoRA info gauge, None when the engine has none


NAMES: dict[str, EngineNames] = {
    "vllm": {
        "running": ("vllm:num_requests_running",),
        "waiting": ("vllm:num_requests_waiting",),
        "kv": ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
        "ttft": ("vllm:time_to_first_token_seconds",),
        "itl": ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
        "lora": "vllm:lora_requests_info",
    },
    "sglang": {
        "running": ("sglang:num_running_reqs",),
        "waiting": ("sglang:num_queue_reqs",),
        "kv": ("sglang:token_usage",),
        "ttft": ("sglang:time_to_first_token_seconds",),
        "itl": ("sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"),
        "lora": None,
    },
}


@dataclass
class ScrapeState:
    """Histogram totals of the previous scrape and the last means, per endpoint."""

    sums: dict[str, tuple[float, float]] = field(default_factory=dict)
    ttft_us: int = 0
    itl_us: int = 0


_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"')
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


_NAME_END = re.compile(r"[{\s]")


def _sample(line: str, wanted: frozenset[str]) -> tuple[str, str, float] | None:
    """(name, label text, value) of a sample line whose name is wanted, else None."""
    m = _NAME_END.search(line)
    end = m.start() if m else len(line)
    name = line[:end]
    if name not in wanted:
        return None
    labels = ""
    rest = line[end:]
    if rest.startswith("{"):
        close = _labels_end(rest)
        labels, rest = rest[1:close], rest[close + 1 :]
    fields = rest.split()
    if not fields:
        raise ValueError(f"sample {name}: no value")
    return name, labels, float(fields[0])


def _labels_end(text: str) -> int:
    """Index of the '}' closing the label set that ``text`` starts with (quotes and escapes respected)."""
    quoted = escaped = False
    for i in range(1, len(text)):
        ch = text[i]
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = quoted
        elif ch == '"':
            quoted = not quoted
        elif ch == "}" and not quoted:
            return i
    raise ValueError("label set not closed")


def _label_values(labels: str) -> dict[str, str]:
    return {k: re.sub(r'\\[\\"n]', lambda m: _UNESCAPE[m.group(0)], v) for k, v in _LABEL.findall(labels)}


def _wanted(names: EngineNames) -> frozenset[str]:
    out = {n for key in ("running", "waiting", "kv") for n in names[key]}
    out |= {n + suffix for key in ("ttft", "itl") for n in names[key] for suffix in ("_sum", "_count")}
    if names["lora"]:
        out.add(names["lora"])
    return frozenset(out)


_WANTED = {engine: _wanted(names) for engine, names in NAMES.items()}
_PREFIXES = {engine: tuple(sorted(wanted)) for engine, wanted in _WANTED.items()}


def parse_engine_metrics(text: str, engine: str, state: ScrapeState) -> tuple[EngineMetrics, list[str] | None]:
    """(metrics, loaded LoRA adapters or None when the engine does not say) from one scrape; ValueError on a
    malformed sample of a metric it reads. Samples of one name with several label sets are summed."""
    names = NAMES[engine]
    wanted, prefixes = _WANTED[engine], _PREFIXES[engine]
    gauges: dict[str, float] = {}
    hist: dict[str, list[float]] = {}
    lora: list[str] | None = None
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith(prefixes):  # comments and the samples it does not read
            continue
        sample = _sample(line, wanted)
        if sample is None:
            continue
        name, labels, value = sample
        if name == names["lora"]:
            values = _label_values(labels)
            running = values.get("running_lora_adapters", "")
            waiting = values.get("waiting_lora_adapters", "")
            lora = sorted({a for a in (running + "," + waiting).split(",") if a})
        elif name.endswith("_sum") or name.endswith("_count"):
            base, kind = name.rsplit("_", 1)
            hist.setdefault(base, [0.0, 0.0])[0 if kind == "sum" else 1] += value
        else:
            gauges[name] = gauges.get(name, 0.0) + value

    def first(keys: tuple[str, ...]) -> float:
        return next((gauges[k] for k in keys if k in gauges), 0.0)

    def mean_us(keys: tuple[str, ...], previous: int) -> int:
        for k in keys:
            if k in hist:
                total, count = hist[k]
                old_total, old_count = state.sums.get(k, (0.0, 0.0))
                state.sums[k] = (total, count)
                if count > old_count:
                    return int((total - old_total) / (count - old_count) * 1e6)
                return previous
        return previous

    state.ttft_us = mean_us(names["ttft"], state.ttft_us)
    state.itl_us = mean_us(names["itl"], state.itl_us)
    kv = min(max(first(names["kv"]), 0.0), 1.0)
    return EngineMetrics(
        int(first(names["waiting"])), int(first(names["running"])), kv, state.ttft_us, state.itl_us
    ), lora
