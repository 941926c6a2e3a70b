"""The Python face of the native router core: endpoints by name, decisions with names, sessions.

Everything that loops over endpoints runs in C++ (``vcore._native._core.routing.Router``): one native call per
decision. This module keeps the name <-> slot maps, interns PD group and domain names, remembers which endpoint
served each agent session (bounded, least recently used sessions forgotten first) and validates input at the
boundary. Decisions and bookkeeping take the caller's clock ``now_s`` (``time.monotonic()`` by default; a replay
passes its virtual time): the router uses it to tell how far each endpoint's current prefill has gone.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from vcore._native import _core
from vcore.errors import VCoreError
from vcore.routing.policies import DEFAULT_POLICY, Policy, named_policy

Role = Literal["both", "prefill", "decode"]
ROLES: tuple[Role, ...] = ("both", "prefill", "decode")


class EndpointNotFoundError(VCoreError, KeyError):
    """An endpoint name the router does not have."""


@dataclass(frozen=True)
class Endpoint:
    """One inference engine the router may send requests to."""

    name: str
    role: Role = "both"
    pd_group: str | None = None  # prefill/decode pairing group
    domain: str | None = None  # network domain (node topology label or HyperNode), for PD pairing
    max_loras: int = 0  # LoRA adapter slots
    # Prefill time model: new tokens after cached ones take
    # overhead + new x (1 / tokens_per_s + attention x (cached + new / 2)) seconds (vcore.sim.llm.EngineParams).
    prefill_tokens_per_s: float = 1.0
    prefill_overhead_s: float = 0.0
    prefill_attention_s_per_token_pair: float = 0.0


@dataclass(frozen=True)
class EngineMetrics:
    """What an engine reports (scraped): queue, running batch, KV cache use, last-period latencies."""

    waiting: int = 0
    running: int = 0
    kv_usage: float = 0.0  # 0..1
    ttft_us: int = 0  # mean time to first token over the last period, 0 = no observation
    itl_us: int = 0  # mean inter-token latency over the last period, 0 = no observation


@dataclass(frozen=True)
class Decision:
    """A ranked choice of endpoints for one request (best first; the rest are fallbacks)."""

    endpoints: tuple[str, ...]
    slots: tuple[int, ...]
    matched_blocks: tuple[int, ...]  # leading prompt blocks each ranked endpoint holds
    scores: tuple[float, ...]
    n_candidates: int
    filtered: Mapping[str, int] = field(default_factory=dict)  # reason -> endpoints filtered out
    waiting_relaxed: bool = False  # every endpoint was over the waiting cap; ranked without it

    @property
    def best(self) -> str | None:
        return self.endpoints[0] if self.endpoints else None

    def message(self) -> str:
        """Why no endpoint is available, in the scheduler's words ("0/4 endpoints are available: ...")."""
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(self.filtered.items()) if n)
        available = f"{len(self.endpoints)}/{self.n_candidates} endpoints are available"
        return available + (f": {reasons}" if reasons else "")


@dataclass(frozen=True)
class PdDecision:
    """Ranked (decode, prefill) pairs; prefill None means the prompt is short enough to skip the prefill leg."""

    pairs: tuple[tuple[str, str | None], ...]
    decode_slots: tuple[int, ...]
    prefill_slots: tuple[int, ...]
    matched_blocks: tuple[int, ...]  # on the prefill endpoint (the decode one when there is no prefill leg)
    n_candidates: int
    filtered: Mapping[str, int] = field(default_factory=dict)


_REASONS = ("unhealthy", "role", "lora", "waiting")


def _now(now_s: float | None) -> float:
    return time.monotonic() if now_s is None else float(now_s)


class Router:
    """Endpoints, prefix index, policy and request bookkeeping of one router.

    ``block_tokens`` is how many tokens one hashed block stands for (16 for 64-byte text blocks, 512 for a
    Mooncake trace's hash ids). ``prefix_capacity_blocks`` bounds the prefix record per endpoint (LRU).
    """

    def __init__(
        self,
        policy: str | Policy = DEFAULT_POLICY,
        *,
        block_tokens: int = 16,
        prefix_capacity_blocks: int = 50_000,
        seed: int = 0,
        session_capacity: int = 100_000,
    ):
        for name, value in (
            ("block_tokens", block_tokens),
            ("prefix_capacity_blocks", prefix_capacity_blocks),
            ("session_capacity", session_capacity),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Router.{name}: expected an integer >= 1, got {value!r}")
        self._native = _core.routing.Router(block_tokens, prefix_capacity_blocks, seed)
        self.block_tokens = block_tokens
        self.policy = named_policy(policy, block_tokens) if isinstance(policy, str) else policy
        if not isinstance(self.policy, Policy):
            raise TypeError(f"Router.policy: expected a policy name or Policy, got {type(policy).__name__}")
        self._slots: dict[str, int] = {}
        self._names: dict[int, str] = {}
        self._groups: dict[str, int] = {}
        self._domains: dict[str, int] = {}
        self._sessions: OrderedDict[str, str] = OrderedDict()
        self._session_capacity = session_capacity

    # ---------------------------------------------------------------------------------------------- endpoints
    def add_endpoint(self, endpoint: Endpoint) -> int:
        if not isinstance(endpoint, Endpoint):
            raise TypeError(f"add_endpoint: expected an Endpoint, got {type(endpoint).__name__}")
        if endpoint.role not in ROLES:
            raise ValueError(
                f"endpoint {endpoint.name!r}: role must be one of {', '.join(ROLES)}, got {endpoint.role!r}"
            )
        group = -1 if endpoint.pd_group is None else self._groups.setdefault(endpoint.pd_group, len(self._groups))
        domain = -1 if endpoint.domain is None else self._domains.setdefault(endpoint.domain, len(self._domains))
        slot = self._native.add_endpoint(
            endpoint.name,
            endpoint.role,
            group,
            domain,
            endpoint.max_loras,
            float(endpoint.prefill_tokens_per_s),
            float(endpoint.prefill_overhead_s),
            float(endpoint.prefill_attention_s_per_token_pair),
        )
        self._slots[endpoint.name] = slot
        self._names[slot] = endpoint.name
        return slot

    def remove_endpoint(self, name: str) -> None:
        slot = self.slot(name)
        self._native.remove_endpoint(slot)
        del self._slots[name], self._names[slot]
        for session in [s for s, e in self._sessions.items() if e == name]:
            del self._sessions[session]

    def slot(self, name: str) -> int:
        try:
            return self._slots[name]
        except KeyError:
            raise EndpointNotFoundError(f"endpoint {name!r}: no such endpoint") from None

    def name(self, slot: int) -> str:
        return self._names[slot]

    @property
    def endpoints(self) -> list[str]:
        return list(self._slots)

    def slots(self, names: Iterable[str]) -> np.ndarray:
        """int32 slots of the named endpoints (a candidate pool)."""
        return np.array([self.slot(n) for n in names], dtype=np.int32)

    def set_health(self, name: str, healthy: bool) -> None:
        self._native.set_health(self.slot(name), bool(healthy))

    def set_loras(self, name: str, adapters: Sequence[str]) -> None:
        self._native.set_loras(self.slot(name), list(adapters))

    def update_metrics(self, metrics: Mapping[str, EngineMetrics]) -> None:
        """Engine-reported metrics of several endpoints (validated together; nothing changes on an error)."""
        names = list(metrics)
        rows = [metrics[n] for n in names]
        self._native.update_metrics(
            self.slots(names),
            np.array([m.waiting for m in rows], dtype=np.int64),
            np.array([m.running for m in rows], dtype=np.int64),
            np.array([m.kv_usage for m in rows], dtype=np.float64),
            np.array([m.ttft_us for m in rows], dtype=np.int64),
            np.array([m.itl_us for m in rows], dtype=np.int64),
        )

    # ---------------------------------------------------------------------------------------------- decisions
    def _lora(self, lora: str | None) -> int:
        return -1 if lora is None else self._native.lora_id(lora)

    def _session_slot(self, session: str | None) -> int:
        if session is None:
            return -1
        name = self._sessions.get(session)
        return -1 if name is None else self._slots.get(name, -1)

    def route(
        self,
        hashes: np.ndarray | Sequence[int],
        prompt_tokens: int,
        *,
        lora: str | None = None,
        session: str | None = None,
        candidates: np.ndarray | None = None,
        policy: Policy | None = None,
        now_s: float | None = None,
    ) -> Decision:
        """Rank the candidate endpoints (every endpoint by default) for one request."""
        slots, match, scores, n, counts, relaxed = self._native.route(
            policy or self.policy,
            hashes,
            prompt_tokens,
            self._lora(lora),
            self._session_slot(session),
            candidates,
            _now(now_s),
        )
        return Decision(
            tuple(self._names[s] for s in slots),
            tuple(slots),
            tuple(match),
            tuple(scores),
            n,
            dict(zip(_REASONS, counts)),
            relaxed,
        )

    def route_pd(
        self,
        hashes: np.ndarray | Sequence[int],
        prompt_tokens: int,
        *,
        lora: str | None = None,
        session: str | None = None,
        candidates: np.ndarray | None = None,
        policy: Policy | None = None,
        now_s: float | None = None,
    ) -> PdDecision:
        """Rank (decode, prefill) pairs: decode endpoints by the policy, then per decode endpoint the best
        prefill endpoint of its PD group, preferring one in the same network domain."""
        decode, prefill, match, n, counts = self._native.route_pd(
            policy or self.policy,
            hashes,
            prompt_tokens,
            self._lora(lora),
            self._session_slot(session),
            candidates,
            _now(now_s),
        )
        pairs = tuple((self._names[d], None if p < 0 else self._names[p]) for d, p in zip(decode, prefill))
        return PdDecision(pairs, tuple(decode), tuple(prefill), tuple(match), n, dict(zip(_REASONS, counts)))

    def match(self, hashes: np.ndarray | Sequence[int], candidates: np.ndarray | None = None) -> np.ndarray:
        """Leading blocks of ``hashes`` each candidate endpoint holds (all endpoints, in slot order, by default)."""
        return self._native.match(hashes, candidates)

    # ------------------------------------------------------------------------------------------- bookkeeping
    def dispatch(
        self,
        request_id: int,
        endpoint: str,
        hashes: np.ndarray | Sequence[int],
        prompt_tokens: int,
        matched_blocks: int,
        output_tokens: int = 0,
        *,
        session: str | None = None,
        record_prefix: bool = True,
        now_s: float | None = None,
    ) -> None:
        """A request was sent to ``endpoint``: count it in flight, record its prefix there, pin its session."""
        self._native.dispatch(
            request_id,
            self.slot(endpoint),
            hashes,
            prompt_tokens,
            matched_blocks,
            output_tokens,
            record_prefix,
            _now(now_s),
        )
        if session is not None:
            self._sessions[session] = endpoint
            self._sessions.move_to_end(session)
            while len(self._sessions) > self._session_capacity:
                self._sessions.popitem(last=False)

    def first_token(self, request_id: int, now_s: float | None = None) -> None:
        self._native.first_token(request_id, _now(now_s))

    def finish(self, request_id: int, now_s: float | None = None) -> None:
        self._native.finish(request_id, _now(now_s))

    def session_endpoint(self, session: str) -> str | None:
        return self._sessions.get(session)

    # KV events published by an engine keep the prefix record exact.
    def record_blocks(self, endpoint: str, hashes: np.ndarray | Sequence[int]) -> None:
        self._native.record_blocks(self.slot(endpoint), hashes)

    def remove_blocks(self, endpoint: str, hashes: np.ndarray | Sequence[int]) -> None:
        self._native.remove_blocks(self.slot(endpoint), hashes)

    def clear_blocks(self, endpoint: str) -> None:
        self._native.clear_blocks(self.slot(endpoint))

    def endpoint_blocks(self, endpoint: str) -> np.ndarray:
        return self._native.endpoint_blocks(self.slot(endpoint))

    def state(self) -> dict[str, np.ndarray]:
        """Copies of the per-slot arrays (engine-reported and router-tracked)."""
        return self._native.state()

    @property
    def n_in_flight(self) -> int:
        return self._native.n_in_flight
