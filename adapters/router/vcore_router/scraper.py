"""Scraping engines' Prometheus metrics into the router core (vLLM and SGLang metric names).

Per endpoint and interval: running and waiting requests, KV cache use, the last period's mean TTFT and
inter-token latency (from the histograms' _sum/_count deltas; a period without observations keeps the previous
mean), and the LoRA adapters loaded (vLLM's ``vllm:lora_requests_info``). A failed scrape counts towards
marking the endpoint unhealthy; a successful one heals it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from prometheus_client.parser import text_string_to_metric_families

from vcore.routing import EngineMetrics

NAMES = {
    "vllm": {"running": ("vllm:num_requests_running",), "waiting": ("vllm:num_requests_waiting",),
             "kv": ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
             "ttft": ("vllm:time_to_first_token_seconds",),
             "itl": ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
             "lora": "vllm:lora_requests_info"},
    "sglang": {"running": ("sglang:num_running_reqs",), "waiting": ("sglang:num_queue_reqs",),
               "kv": ("sglang:token_usage",), "ttft": ("sglang:time_to_first_token_seconds",),
               "itl": ("sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"),
               "lora": None},
}


@dataclass
class ScrapeState:
    """Histogram totals of the previous scrape and the last means, per endpoint."""

    sums: dict[str, tuple[float, float]] = field(default_factory=dict)
    ttft_us: int = 0
    itl_us: int = 0
    failures: int = 0


def parse_engine_metrics(text: str, engine: str, state: ScrapeState) -> tuple[EngineMetrics, list[str] | None]:
    """(metrics, loaded LoRA adapters or None when the engine does not say) from one scrape."""
    names = NAMES[engine]
    gauges: dict[str, float] = {}
    hist: dict[str, list[float]] = {}
    lora: list[str] | None = None
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == names["lora"]:
                running = sample.labels.get("running_lora_adapters", "")
                waiting = sample.labels.get("waiting_lora_adapters", "")
                lora = sorted({a for a in (running + "," + waiting).split(",") if a})
            elif sample.name.endswith("_sum") or sample.name.endswith("_count"):
                base, kind = sample.name.rsplit("_", 1)
                hist.setdefault(base, [0.0, 0.0])[0 if kind == "sum" else 1] += sample.value
            else:
                gauges[sample.name] = gauges.get(sample.name, 0.0) + sample.value

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
    return EngineMetrics(int(first(names["waiting"])), int(first(names["running"])), kv, state.ttft_us,
                         state.itl_us), lora
