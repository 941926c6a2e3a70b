"""Discrete-event replay of an LLM request trace through vcore's router core and the engine model, no HTTP.

Each request arrives at its timestamp, is routed by ``vcore.routing.Router`` (the same native core the HTTP
router uses) and queued on the chosen engine model. The router sees what a live router sees: its own dispatch,
first-token and finish bookkeeping at once, and the engines' metrics (waiting, running, KV cache use,
last-period TTFT and inter-token latency) only as scraped every ``metrics_interval_s``. With ``kv_events`` the
engines' block stored/evicted events keep the router's prefix record exact; without, the record is the router's
own guess from what it sent (Kthena's and vcore's default).

The prefix record's size per endpoint: Kthena's default 50,000 hashes of 64-byte blocks (800 k tokens) for the
kthena policy; the engine's KV capacity for the others (what an operator sets it to).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from vcore.routing import Endpoint, EngineMetrics, Policy, Router, named_policy
from vcore.routing.hashing import BYTES_PER_TOKEN
from vcore.routing.policies import KTHENA_BLOCK_BYTES
from vcore.sim.llm.engine import FIRST_TOKEN, EngineEvent, SimRequest, SimulatedEngine
from vcore.sim.llm.params import PRESETS, TRACE_PRESET, EngineParams
from vcore.sim.llm.trace import TRACE_BLOCK_TOKENS, TraceRequest

KTHENA_RECORD_HASHES = 50_000


@dataclass(frozen=True)
class ReplayResult:
    policy: str
    engines: int
    requests: int
    mean_ttft_s: float
    p50_ttft_s: float
    p90_ttft_s: float
    p99_ttft_s: float
    hit_rate: float  # share of prompt blocks served from an engine's cache
    mean_queue_s: float  # arrival -> prefill start
    mean_itl_s: float  # mean over requests of (finish - first token) / (output - 1)
    mean_e2e_s: float
    waiting_filter_relaxed: int  # decisions where every endpoint was over the waiting cap
    makespan_s: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def router_record_blocks(policy_name: str, block_tokens: int, engine_blocks: int) -> int:
    if policy_name == "kthena":
        return max(1, KTHENA_RECORD_HASHES * (KTHENA_BLOCK_BYTES // BYTES_PER_TOKEN) // block_tokens)
    return engine_blocks


def _percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(values, q)) if len(values) else math.nan


def replay(
    trace: Sequence[TraceRequest],
    policy: str | Policy,
    *,
    engines: int = 8,
    params: EngineParams | str = TRACE_PRESET,
    metrics_interval_s: float = 0.5,
    kv_events: bool = False,
    seed: int = 0,
    policy_name: str | None = None,
) -> ReplayResult:
    """Replay ``trace`` on ``engines`` engine models with the given policy (a name or a Policy)."""
    if isinstance(params, str):
        if params not in PRESETS:
            raise ValueError(f"params: unknown preset {params!r}; expected one of {', '.join(PRESETS)}")
        params = PRESETS[params]
    if engines < 1:
        raise ValueError(f"engines: expected >= 1, got {engines}")
    if not metrics_interval_s > 0:
        raise ValueError("metrics_interval_s: must be > 0")
    name = policy_name or (policy if isinstance(policy, str) else "custom")
    bt = TRACE_BLOCK_TOKENS
    pol = named_policy(policy, bt) if isinstance(policy, str) else policy
    sims = [SimulatedEngine(params, bt, f"engine-{k}", kv_events=kv_events) for k in range(engines)]
    router = Router(
        pol,
        block_tokens=bt,
        seed=seed,
        prefix_capacity_blocks=router_record_blocks(name, bt, sims[0].kv.capacity_blocks),
    )
    for e in sims:
        router.add_endpoint(
            Endpoint(
                e.name,
                prefill_tokens_per_s=params.prefill_tokens_per_s(),
                prefill_overhead_s=params.prefill_overhead_s,
                prefill_attention_s_per_token_pair=params.attention_s_per_token_pair,
            )
        )
    names = [e.name for e in sims]
    period_ttft: list[list[float]] = [[] for _ in sims]
    period_itl: list[list[float]] = [[] for _ in sims]
    last_ttft = [0] * engines
    last_itl = [0] * engines

    def handle(k: int, events: list[EngineEvent]) -> None:
        for ev in events:
            r = ev.request
            if ev.kind == FIRST_TOKEN:
                router.first_token(r.rid, ev.time)
                period_ttft[k].append(r.ttft)
            else:
                router.finish(r.rid, ev.time)
                if r.output_tokens > 1:
                    period_itl[k].append((r.finished - r.first_token) / (r.output_tokens - 1))
        if kv_events:
            e = sims[k]
            if e.evicted:
                router.remove_blocks(names[k], e.evicted)
                e.evicted.clear()
            if e.stored:
                router.record_blocks(names[k], e.stored)
                e.stored.clear()

    def scrape(now: float) -> None:
        metrics = {}
        for k, e in enumerate(sims):
            handle(k, e.advance(now))
            if period_ttft[k]:
                last_ttft[k] = int(statistics.fmean(period_ttft[k]) * 1e6)
            if period_itl[k]:
                last_itl[k] = int(statistics.fmean(period_itl[k]) * 1e6)
            period_ttft[k].clear()
            period_itl[k].clear()
            metrics[names[k]] = EngineMetrics(e.n_waiting, e.n_running, min(e.kv.usage, 1.0), last_ttft[k], last_itl[k])
        router.update_metrics(metrics)

    arrivals = [(r.timestamp_ms / 1000.0, r) for r in trace]
    hashes = [np.asarray(r.hash_ids, dtype=np.uint64) for r in trace]
    requests: list[SimRequest] = []
    relaxed = 0
    next_scrape = 0.0
    i = 0
    n = len(arrivals)
    while True:
        t_engine, k = min((e.next_event_time(), k) for k, e in enumerate(sims))
        t_arrival = arrivals[i][0] if i < n else math.inf
        if i >= n and t_engine == math.inf and not any(e.waiting for e in sims):
            break
        t = min(t_engine, t_arrival, next_scrape)
        if t_engine == t:
            handle(k, sims[k].advance(t))
        elif next_scrape == t:
            scrape(t)
            next_scrape += metrics_interval_s
        else:
            tr = arrivals[i][1]
            d = router.route(hashes[i], tr.input_length, now_s=t)
            relaxed += d.waiting_relaxed
            best = d.best
            if best is None:  # every engine of the replay takes requests: a decision without one is a bug
                raise RuntimeError(f"request {i}: the router chose no endpoint ({d.message()})")
            k = router.slot(best)
            router.dispatch(i, best, hashes[i], tr.input_length, d.matched_blocks[0], tr.output_length, now_s=t)
            req = SimRequest(i, t, tr.input_length, tr.output_length, tr.hash_ids)
            requests.append(req)
            handle(k, sims[k].submit(req, t))
            i += 1
    ttft = [r.ttft for r in requests]
    blocks = sum(len(r.hashes) for r in requests)
    cached_blocks = sum(min(-(-r.cached_tokens // bt), len(r.hashes)) for r in requests)
    itl = [(r.finished - r.first_token) / (r.output_tokens - 1) for r in requests if r.output_tokens > 1]
    return ReplayResult(
        policy=name,
        engines=engines,
        requests=len(requests),
        mean_ttft_s=statistics.fmean(ttft),
        p50_ttft_s=_percentile(ttft, 50),
        p90_ttft_s=_percentile(ttft, 90),
        p99_ttft_s=_percentile(ttft, 99),
        hit_rate=cached_blocks / blocks if blocks else 0.0,
        mean_queue_s=statistics.fmean(r.admitted - r.arrival for r in requests),
        mean_itl_s=statistics.fmean(itl) if itl else 0.0,
        mean_e2e_s=statistics.fmean(r.finished - r.arrival for r in requests),
        waiting_filter_relaxed=relaxed,
        makespan_s=max(r.finished for r in requests) if requests else 0.0,
    )


def ttft_lower_bound(trace: Sequence[TraceRequest], params: EngineParams | str = TRACE_PRESET) -> float:
    """The mean TTFT no router can beat on ``trace``: every request served at once (no queueing, no decode batch)
    by an engine that holds every block any earlier request had (an unbounded cache shared by all engines), so
    only its prompt's never-seen part is prefilled. How far a policy is from it shows how much is left to gain."""
    if isinstance(params, str):
        params = PRESETS[params]
    seen: set[int] = set()
    total = 0.0
    for r in trace:
        held = 0
        for h in r.hash_ids:
            if h not in seen:
                break
            held += 1
        cached = min(held * TRACE_BLOCK_TOKENS, r.input_length)
        total += params.prefill_seconds(cached, max(r.input_length - cached, 1))
        seen.update(r.hash_ids)
    return total / len(trace) if trace else math.nan


def prompt_load(trace: Sequence[TraceRequest], engines: int) -> float:
    """Prompt tokens per second per engine over the trace's span (the load that decides how much queueing there
    is to avoid)."""
    span_s = (trace[-1].timestamp_ms - trace[0].timestamp_ms) / 1000.0 if len(trace) > 1 else 0.0
    return sum(r.input_length for r in trace) / span_s / engines if span_s > 0 else math.nan


def format_table(results: Sequence[ReplayResult]) -> str:
    head = (
        f"{'policy':<14} {'mean TTFT':>10} {'p50 TTFT':>9} {'p90 TTFT':>9} {'p99 TTFT':>9} {'hit rate':>8} "
        f"{'queueing':>9} {'ITL':>7}"
    )
    rows = [head]
    for r in results:
        rows.append(
            f"{r.policy:<14} {r.mean_ttft_s:>9.3f}s {r.p50_ttft_s:>8.3f}s {r.p90_ttft_s:>8.3f}s "
            f"{r.p99_ttft_s:>8.3f}s {r.hit_rate:>7.1%} {r.mean_queue_s:>8.3f}s {r.mean_itl_s * 1e3:>5.1f}ms"
        )
    return "\n".join(rows)
