"""Per-model token rate limits: input and output token buckets, local or shared through Redis.

A bucket holds up to ``tokens_per_unit`` tokens and refills at ``tokens_per_unit / unit`` per second. A request
is admitted when the input bucket covers its estimated prompt tokens (which are then taken) and the output bucket
is not in debt; its output tokens are charged when it ends (the bucket may go negative, which holds back the
next requests). Over the limit: the caller answers 429 with Retry-After = the seconds until the bucket covers it.

Shared mode keeps the buckets in Redis (one hash per model and direction, updated by one Lua script with the
Redis server's clock, so every router replica sees the same buckets). When Redis cannot be reached the limiter
falls back to its local buckets -- never admitting everything -- sets the ``fallback`` flag (exported as a
metric) and tries Redis again after ``retry_s``.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from vcore_router.config import RateLimit

log = logging.getLogger("vcore_router.ratelimit")

# KEYS[1]: bucket; ARGV: capacity, refill per second, cost, mode (1 = take if covered, 0 = charge, may go negative)
_LUA = """
local cap = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local mode = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil then tokens = cap; ts = now end
tokens = math.min(cap, tokens + math.max(0, now - ts) * rate)
local allowed = 1
local wait = 0
if mode == 1 then
  if tokens >= cost and tokens > 0 then
    tokens = tokens - cost
  else
    allowed = 0; wait = (math.max(cost, 1) - tokens) / rate
  end
else
  tokens = tokens - cost
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('EXPIRE', KEYS[1], math.ceil(cap / rate) * 2 + 60)
return {allowed, tostring(wait)}
"""


class LocalBucket:
    def __init__(self, capacity: float, rate: float):
        self.capacity, self.rate = capacity, rate
        self.tokens, self.ts = capacity, time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.ts) * self.rate)
        self.ts = now

    def take(self, cost: float) -> float:
        """0.0 when admitted (cost taken), else the seconds to wait."""
        self._refill()
        if self.tokens >= cost and self.tokens > 0:
            self.tokens -= cost
            return 0.0
        return (max(cost, 1) - self.tokens) / self.rate

    def charge(self, cost: float) -> None:
        self._refill()
        self.tokens -= cost


@dataclass
class Verdict:
    allowed: bool
    retry_after_s: float = 0.0
    reason: str = ""


class RateLimiter:
    """Input/output token buckets per model; ``redis`` is a redis.asyncio client or None (local only)."""

    def __init__(
        self, redis: Redis | None = None, prefix: str = "vcore-router:ratelimit", retry_s: float = 5.0
    ) -> None:
        self.redis = redis
        self.prefix = prefix
        self.retry_s = retry_s
        self.fallback = False
        self._down_until = 0.0
        self._local: dict[tuple[str, str], LocalBucket] = {}
        self._script = redis.register_script(_LUA) if redis is not None else None

    def _bucket(self, model: str, kind: str, per_unit: int, unit_s: float) -> LocalBucket:
        key = (model, kind)
        b = self._local.get(key)
        if b is None or b.capacity != per_unit:
            b = self._local[key] = LocalBucket(float(per_unit), per_unit / unit_s)
        return b

    async def _shared(
        self, model: str, kind: str, per_unit: int, unit_s: float, cost: float, mode: int
    ) -> tuple[bool, float] | None:
        """(allowed, wait) from Redis, or None when Redis is down (then the local bucket decides)."""
        if self._script is None or time.monotonic() < self._down_until:
            return None
        try:
            allowed, wait = await self._script(
                keys=[f"{self.prefix}:{model}:{kind}"], args=[per_unit, per_unit / unit_s, cost, mode]
            )
        except Exception as e:  # connection refused, timeout, server gone: fall back, say so
            if not self.fallback:
                log.warning("rate limit: Redis unreachable (%s); using local buckets", e)
            self.fallback = True
            self._down_until = time.monotonic() + self.retry_s
            return None
        if self.fallback:
            log.warning("rate limit: Redis reachable again; shared buckets in use")
        self.fallback = False
        return bool(int(allowed)), float(wait)

    async def admit(self, model: str, limit: RateLimit | None, input_tokens: int) -> Verdict:
        """Check both buckets for a request of ``input_tokens`` estimated prompt tokens (limit: config.RateLimit)."""
        if limit is None:
            return Verdict(True)
        if limit.input_tokens_per_unit:
            if input_tokens > limit.input_tokens_per_unit:
                return Verdict(False, math.inf, "prompt larger than the input token limit per unit")
            shared = await self._shared(
                model, "input", limit.input_tokens_per_unit, limit.unit_seconds, input_tokens, 1
            )
            if shared is None:
                wait = self._bucket(model, "input", limit.input_tokens_per_unit, limit.unit_seconds).take(input_tokens)
                shared = (wait == 0.0, wait)
            if not shared[0]:
                return Verdict(False, shared[1], "input token rate limit")
        if limit.output_tokens_per_unit:
            shared = await self._shared(model, "output", limit.output_tokens_per_unit, limit.unit_seconds, 0, 1)
            if shared is None:
                wait = self._bucket(model, "output", limit.output_tokens_per_unit, limit.unit_seconds).take(0)
                shared = (wait == 0.0, wait)
            if not shared[0]:
                return Verdict(False, shared[1], "output token rate limit")
        return Verdict(True)

    async def charge_output(self, model: str, limit: RateLimit | None, output_tokens: int) -> None:
        if limit is None or not limit.output_tokens_per_unit or output_tokens <= 0:
            return
        shared = await self._shared(model, "output", limit.output_tokens_per_unit, limit.unit_seconds, output_tokens, 0)
        if shared is None:
            self._bucket(model, "output", limit.output_tokens_per_unit, limit.unit_seconds).charge(output_tokens)
