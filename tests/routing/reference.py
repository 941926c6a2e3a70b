"""Pure-Python reference of the native router core (prefix index, scorers, ranking), for property tests.

Written from the formulas in vcore/routing/scorers.h and router.h, not from the C++: per-endpoint LRU as an
OrderedDict, longest prefix match block by block, Kthena's scorers with int() truncation, the prefill-cost (with the
router's prefill backlog and the progress of the head of each endpoint's queue) and Dynamo costs, the seeded tie key.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

M64 = (1 << 64) - 1


def mix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


class RefPrefixIndex:
    def __init__(self, capacity: int):
        self.capacity = capacity
        self.lru: dict[int, OrderedDict[int, None]] = {}  # endpoint -> hashes, most recent LAST

    def insert(self, endpoint: int, hashes: list[int]) -> None:
        lru = self.lru.setdefault(endpoint, OrderedDict())
        for h in reversed(hashes):
            if h in lru:
                lru.move_to_end(h)
                continue
            if len(lru) >= self.capacity:
                lru.popitem(last=False)
            lru[h] = None

    def remove(self, endpoint: int, hashes: list[int]) -> None:
        for h in hashes:
            self.lru.get(endpoint, OrderedDict()).pop(h, None)

    def clear(self, endpoint: int) -> None:
        self.lru.pop(endpoint, None)

    def blocks(self, endpoint: int) -> list[int]:
        return list(reversed(self.lru.get(endpoint, OrderedDict())))

    def match(self, hashes: list[int], candidates: list[int]) -> list[int]:
        out = []
        for e in candidates:
            held = self.lru.get(e, {})
            k = 0
            while k < len(hashes) and hashes[k] in held:
                k += 1
            out.append(k)
        return out


@dataclass
class RefEndpoint:
    healthy: bool = True
    role: str = "both"
    waiting: int = 0
    running: int = 0
    kv_usage: float = 0.0
    ttft_us: int = 0
    itl_us: int = 0
    in_flight: int = 0
    pending_prefill_tokens: int = 0
    active_blocks: int = 0
    rate: float = 1.0
    overhead_s: float = 0.0
    attention: float = 0.0
    max_loras: int = 0
    loras: set = field(default_factory=set)
    queue: list = field(default_factory=list)  # (request id, estimated prefill seconds) not yet answered, FIFO
    backlog_s: float = 0.0
    busy_until_s: float = 0.0

    def prefill_seconds(self, cached: int, new: int) -> float:
        return self.overhead_s + new * (1.0 / self.rate + self.attention * (cached + new / 2.0))

    def dispatch(self, rid: int, est: float, now: float) -> None:
        self.queue.append((rid, est))
        self.backlog_s += est
        self.busy_until_s = max(self.busy_until_s, now) + est

    def settle(self, rid: int, now: float) -> None:
        """The prefill of ``rid`` is answered (or abandoned) at ``now``."""
        was_head = self.queue[0][0] == rid
        est = dict(self.queue)[rid]
        self.queue = [q for q in self.queue if q[0] != rid]
        self.backlog_s = max(self.backlog_s - est, 0.0) if self.queue else 0.0
        self.busy_until_s = now + self.backlog_s if was_head else self.busy_until_s - est

    def expected_wait(self, now: float) -> float:
        if not self.queue:
            return 0.0
        return max(self.busy_until_s - now, self.backlog_s - self.queue[0][1], 0.0)


def least_request(eps: list[RefEndpoint], queue_weight: float) -> list[float]:
    base = [e.in_flight + queue_weight * max(e.in_flight - e.running, 0) for e in eps]
    hi = max(base, default=0)
    return [float(int((hi - b) / hi * 100)) if hi > 0 else 100.0 for b in base]


def kv_cache(eps: list[RefEndpoint]) -> list[float]:
    return [float(int((1.0 - e.kv_usage) * 100)) for e in eps]


def latency(eps: list[RefEndpoint], factor: float) -> list[float]:
    seen = [e for e in eps if e.ttft_us > 0 and e.itl_us > 0]
    out = []
    for e in eps:
        if e.ttft_us <= 0 or e.itl_us <= 0:
            out.append(100.0)
            continue
        lo_t, hi_t = min(x.ttft_us for x in seen), max(x.ttft_us for x in seen)
        lo_i, hi_i = min(x.itl_us for x in seen), max(x.itl_us for x in seen)
        s_t = 100.0 * (hi_t - e.ttft_us) / (hi_t - lo_t) if hi_t > lo_t else 100.0
        s_i = 100.0 * (hi_i - e.itl_us) / (hi_i - lo_i) if hi_i > lo_i else 100.0
        out.append(float(int(s_t * factor + s_i * (1 - factor))))
    return out


def prefix(match: list[int], n_blocks: int, top_k: int) -> list[float]:
    out = [0.0] * len(match)
    if n_blocks <= 0:
        return out
    keep = [j for j in range(len(match)) if match[j] > 0]
    if top_k > 0 and len(keep) > top_k:
        keep = sorted(keep, key=lambda j: -match[j])[:top_k]  # stable: lower position first on ties
    for j in keep:
        out[j] = float(int(match[j] / n_blocks * 100))
    return out


def lora_score(eps: list[RefEndpoint], lora: int) -> list[float]:
    if lora < 0:
        return [100.0] * len(eps)
    return [100.0 if lora in e.loras else 50.0 if len(e.loras) < e.max_loras else 0.0 for e in eps]


def prefill_cost(eps, match, prompt_tokens, block_tokens, now) -> list[float]:
    return [
        e.expected_wait(now)
        + e.prefill_seconds(min(m * block_tokens, prompt_tokens), max(prompt_tokens - m * block_tokens, 1))
        for e, m in zip(eps, match)
    ]


def inverse(cost: list[float]) -> list[float]:
    lo = min(cost)
    return [100.0 * lo / c if c > 0 else 100.0 for c in cost]


def dynamo(eps, match, prompt_tokens, block_tokens, w) -> list[float]:
    req_blocks = -(-prompt_tokens // block_tokens)
    return [
        w * ((e.pending_prefill_tokens + max(prompt_tokens - m * block_tokens, 0)) / block_tokens)
        + (e.active_blocks + req_blocks)
        for e, m in zip(eps, match)
    ]


def rank(
    policy: dict,
    eps: dict[int, RefEndpoint],
    index: RefPrefixIndex,
    hashes: list[int],
    prompt_tokens: int,
    block_tokens: int,
    seed: int,
    decision: int,
    lora: int = -1,
    now: float = 0.0,
) -> tuple[list[int], list[int], list[float]]:
    """(ranked slots, their matches, their totals) for the scored and dynamo kinds of a non-PD route."""
    cand, over = [], []
    for s in sorted(eps):
        e = eps[s]
        if not e.healthy or e.role != "both":
            continue
        if lora >= 0 and lora not in e.loras and len(e.loras) >= e.max_loras:
            continue
        if policy.get("max_waiting", 0) > 0 and e.waiting >= policy["max_waiting"]:
            over.append(s)
            continue
        cand.append(s)
    if not cand:
        cand = over
    sub = [eps[s] for s in cand]
    match = index.match(hashes, cand)
    total = [0.0] * len(cand)

    def add(w, part):
        for j in range(len(cand)):
            total[j] += w * part[j]

    if policy.get("kind", "scored") == "dynamo":
        total = [-c for c in dynamo(sub, match, prompt_tokens, block_tokens, policy.get("overlap_weight", 1.0))]
    else:
        if policy.get("w_prefix", 0) > 0:
            mb = policy.get("prefix_max_blocks", 0)
            considered = min(len(hashes), mb) if mb > 0 else len(hashes)
            add(
                policy["w_prefix"],
                prefix([min(m, considered) for m in match], considered, policy.get("prefix_top_k", 0)),
            )
        if policy.get("w_least_request", 0) > 0:
            add(policy["w_least_request"], least_request(sub, policy.get("queue_weight", 100.0)))
        if policy.get("w_kv_cache", 0) > 0:
            add(policy["w_kv_cache"], kv_cache(sub))
        if policy.get("w_latency", 0) > 0:
            add(policy["w_latency"], latency(sub, policy.get("latency_ttft_factor", 0.5)))
        if policy.get("w_lora", 0) > 0:
            add(policy["w_lora"], lora_score(sub, lora))
        if policy.get("w_prefill_cost", 0) > 0 and cand:
            add(policy["w_prefill_cost"], inverse(prefill_cost(sub, match, prompt_tokens, block_tokens, now)))
    key = [mix64(seed ^ mix64(decision) ^ s) for s in cand]
    order = sorted(range(len(cand)), key=lambda j: (-total[j], key[j]))
    top = order[: policy.get("top_n", 5)]
    return [cand[j] for j in top], [match[j] for j in top], [total[j] for j in top]
