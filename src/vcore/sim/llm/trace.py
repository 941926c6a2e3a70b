"""Mooncake-format LLM request traces: loading, validation, and a seeded synthetic generator.

One JSON object per line: ``timestamp`` (ms since the start), ``input_length`` and ``output_length`` (tokens),
``hash_ids`` (ids of the prompt's 512-token blocks; equal ids = equal prefix up to that block), as in the
FAST'25 Mooncake traces (kvcache-ai/Mooncake, FAST25-release/traces).

The generator draws the shapes those traces show: Poisson (or bursty) arrivals, long prompts (lognormal, tens of
blocks), short outputs, a Zipf-popular set of shared prefixes (system prompts, documents) and multi-turn
conversations whose next prompt extends the previous one. Every knob is an argument; the same seed gives the
same trace.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

TRACE_BLOCK_TOKENS = 512


@dataclass(frozen=True)
class TraceRequest:
    timestamp_ms: float
    input_length: int
    output_length: int
    hash_ids: tuple[int, ...]


def parse_trace(lines: Iterable[str], source: str = "trace") -> list[TraceRequest]:
    out: list[TraceRequest] = []
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{source}:{lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{where}: not JSON ({e.msg})") from None
        if not isinstance(obj, dict):
            raise ValueError(f"{where}: expected a JSON object")
        for key in ("timestamp", "input_length", "output_length", "hash_ids"):
            if key not in obj:
                raise ValueError(f"{where}: missing field {key!r}")
        ts, n_in, n_out, ids = obj["timestamp"], obj["input_length"], obj["output_length"], obj["hash_ids"]
        if isinstance(ts, bool) or not isinstance(ts, (int, float)) or not math.isfinite(ts) or ts < 0:
            raise ValueError(f"{where}: timestamp must be a number of ms >= 0, got {ts!r}")
        for key, value in (("input_length", n_in), ("output_length", n_out)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{where}: {key} must be an integer >= 1, got {value!r}")
        if not isinstance(ids, list) or not all(
            isinstance(h, int) and not isinstance(h, bool) and 0 <= h < 2**63 for h in ids
        ):
            raise ValueError(f"{where}: hash_ids must be a list of integers in [0, 2**63)")
        if len(ids) != -(-n_in // TRACE_BLOCK_TOKENS):
            raise ValueError(
                f"{where}: hash_ids has {len(ids)} blocks, input_length {n_in} needs "
                f"{-(-n_in // TRACE_BLOCK_TOKENS)} of {TRACE_BLOCK_TOKENS} tokens"
            )
        out.append(TraceRequest(float(ts), n_in, n_out, tuple(ids)))
    out.sort(key=lambda r: r.timestamp_ms)  # stable: equal timestamps keep file order
    return out


def load_trace(path: str | Path) -> list[TraceRequest]:
    path = Path(path)
    with path.open(encoding="utf-8") as f:
        return parse_trace(f, str(path))


def write_trace(path: str | Path, requests: Sequence[TraceRequest]) -> None:
    with Path(path).open("w", encoding="utf-8") as f:
        for r in requests:
            ts = int(r.timestamp_ms) if float(r.timestamp_ms).is_integer() else r.timestamp_ms
            f.write(
                json.dumps(
                    {
                        "timestamp": ts,
                        "input_length": r.input_length,
                        "output_length": r.output_length,
                        "hash_ids": list(r.hash_ids),
                    }
                )
                + "\n"
            )


def synthetic_trace(
    n_requests: int = 2000,
    rate_per_s: float = 4.0,
    seed: int = 0,
    *,
    n_prefixes: int = 200,
    prefix_share: float = 0.6,
    zipf_s: float = 1.1,
    prefix_blocks_median: float = 16.0,
    suffix_blocks_median: float = 6.0,
    multi_turn: float = 0.3,
    output_median: float = 70.0,
    burstiness: float = 1.0,
    max_blocks: int = 256,
) -> list[TraceRequest]:
    """A Mooncake-format trace. ``prefix_share``: probability that a request starts with one of ``n_prefixes``
    shared prefixes (Zipf ``zipf_s`` popularity); ``multi_turn``: probability that it continues an earlier
    conversation (its prompt = that prompt + new blocks); ``burstiness``: coefficient of variation of the
    inter-arrival times (1 = Poisson, > 1 = bursty, gamma-distributed)."""
    if n_requests < 1 or rate_per_s <= 0 or not 0 <= prefix_share <= 1 or not 0 <= multi_turn <= 1 or burstiness <= 0:
        raise ValueError(
            "synthetic_trace: need n_requests >= 1, rate_per_s > 0, prefix_share and multi_turn in "
            "[0, 1], burstiness > 0"
        )
    rng = random.Random(seed)
    next_id = 0

    def fresh(n: int) -> list[int]:
        nonlocal next_id
        ids = list(range(next_id, next_id + n))
        next_id += n
        return ids

    def lognormal_blocks(median: float) -> int:
        return max(1, int(round(rng.lognormvariate(math.log(median), 0.8))))

    prefixes = [fresh(min(max_blocks // 2, lognormal_blocks(prefix_blocks_median))) for _ in range(n_prefixes)]
    weights = [1.0 / (k + 1) ** zipf_s for k in range(n_prefixes)]
    conversations: list[list[int]] = []
    shape = 1.0 / burstiness**2  # gamma inter-arrivals with the requested coefficient of variation
    t_ms = 0.0
    out: list[TraceRequest] = []
    for _ in range(n_requests):
        if rng.random() < multi_turn and conversations:
            base = conversations[rng.randrange(len(conversations))]
        elif rng.random() < prefix_share:
            base = prefixes[rng.choices(range(n_prefixes), weights)[0]]
        else:
            base = []
        ids = (base + fresh(lognormal_blocks(suffix_blocks_median)))[:max_blocks]
        conversations.append(ids)
        if len(conversations) > 500:
            conversations.pop(0)
        n_in = len(ids) * TRACE_BLOCK_TOKENS - rng.randrange(TRACE_BLOCK_TOKENS)
        n_out = max(1, min(2000, int(rng.lognormvariate(math.log(output_median), 1.0))))
        out.append(TraceRequest(round(t_ms), n_in, n_out, tuple(ids)))
        t_ms += rng.gammavariate(shape, 1000.0 / rate_per_s / shape)
    return out
