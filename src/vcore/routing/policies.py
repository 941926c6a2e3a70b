"""Named routing policies and their validation.

A policy is a native ``Policy``: a kind (scored, random, round-robin, dynamo), filters, and weights of the
scorers (see the C++ header ``vcore/routing/scorers.h`` for every formula). The named ones:

- ``random``, ``round-robin``: the classic baselines.
- ``least-request``: Kthena's least-request scorer alone (router-tracked in-flight requests, queued ones x100).
- ``kthena``: Kthena's default plugin set as shipped (volcano-sh/kthena, pkg/kthena-router/scheduler: the
  router ConfigMap and scheduler defaults): filter least-request with maxWaitingRequests 10; scores
  least-request, gpu-usage (KV cache), least-latency (TTFTTPOTWeightFactor 0.5) and prefix-cache
  (blockSizeToHash 64 bytes, maxBlocksToMatch 128, topKMatches 5), weight 1 each; best total wins, top 5 kept.
- ``dynamo``: NVIDIA Dynamo's KV-router cost, overlap_score_weight x prefill blocks + decode blocks (its router
  docs), lowest cost wins.
- ``vcore``: vcore's default: the expected time to this request's first token on each endpoint: the prefills
  already sent there and not yet answered (estimated at dispatch), less the progress of the one at the head of
  its queue (the router's clock), plus this request's own prefill there, of what the endpoint does not hold, by
  the endpoint's prefill time model (overhead, per-token time, attention over the context); with LoRA affinity
  and session stickiness.
  Why this beats a sum of normalised signals: a sum of 0..100 scores cannot trade "4 more cached blocks" against
  "2 more queued requests" in the one unit that matters, seconds of prefill, and Kthena's prefix score sees only
  the first 8 KiB of a prompt and saturates there.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from vcore._native import _core
from vcore.errors import VCoreError
from vcore.routing.hashing import BYTES_PER_TOKEN

Policy = _core.routing.Policy

POLICY_NAMES = ("vcore", "kthena", "dynamo", "least-request", "round-robin", "random")
DEFAULT_POLICY = "vcore"

# Kthena's prefix-cache defaults: 64-byte blocks, 128 of them at most (the first 8 KiB of the prompt).
KTHENA_BLOCK_BYTES = 64
KTHENA_MAX_BLOCKS = 128
KTHENA_TOP_K = 5
KTHENA_MAX_WAITING = 10

_FIELDS = (
    "kind",
    "max_waiting",
    "w_prefix",
    "w_least_request",
    "w_kv_cache",
    "w_latency",
    "w_lora",
    "w_prefill_cost",
    "prefix_max_blocks",
    "prefix_top_k",
    "latency_ttft_factor",
    "queue_weight",
    "overlap_weight",
    "top_n",
    "session_affinity",
    "pd_min_prompt_tokens",
)


class PolicyError(VCoreError, ValueError):
    """A routing policy is malformed: unknown name or field, out-of-range value."""


def kthena_prefix_blocks(block_tokens: int) -> int:
    """How many of the router's blocks cover Kthena's 128 x 64 bytes (8 KiB, about 2048 tokens) of prompt.

    Live routing hashes 64-byte blocks, so this is 128; a trace of 512-token blocks (about 2 KiB of text each)
    gives 4: Kthena cannot tell prompts apart beyond their first 8 KiB, and neither does its replica here.
    """
    tokens = KTHENA_BLOCK_BYTES * KTHENA_MAX_BLOCKS / BYTES_PER_TOKEN
    return max(1, math.ceil(tokens / block_tokens))


def named_policy(name: str, block_tokens: int = KTHENA_BLOCK_BYTES // BYTES_PER_TOKEN, **overrides: Any) -> Policy:
    """The named policy for a router whose blocks hold ``block_tokens`` tokens, with field overrides."""
    base: dict[str, Any]
    if name == "random":
        base = {"kind": "random"}
    elif name == "round-robin":
        base = {"kind": "round-robin"}
    elif name == "least-request":
        base = {"w_least_request": 1.0}
    elif name == "kthena":
        base = {
            "max_waiting": KTHENA_MAX_WAITING,
            "w_least_request": 1.0,
            "w_kv_cache": 1.0,
            "w_latency": 1.0,
            "w_prefix": 1.0,
            "prefix_max_blocks": kthena_prefix_blocks(block_tokens),
            "prefix_top_k": KTHENA_TOP_K,
            "latency_ttft_factor": 0.5,
            "queue_weight": 100.0,
        }
    elif name == "dynamo":
        base = {"kind": "dynamo", "overlap_weight": 1.0}
    elif name == "vcore":
        base = {"w_prefill_cost": 1.0, "w_lora": 0.1}
    else:
        raise PolicyError(f"policy: unknown name {name!r}; expected one of {', '.join(POLICY_NAMES)}")
    base.update(overrides)
    return make_policy(base)


def make_policy(fields: Mapping[str, Any]) -> Policy:
    """A native Policy from a mapping of its fields (unknown keys and bad values raise PolicyError)."""
    unknown = sorted(set(fields) - set(_FIELDS))
    if unknown:
        raise PolicyError(f"policy: unknown field(s) {', '.join(unknown)}; expected some of {', '.join(_FIELDS)}")
    try:
        return Policy(**dict(fields))
    except (TypeError, ValueError) as e:
        raise PolicyError(f"policy: {e}") from None


def policy_fields(policy: Policy) -> dict[str, Any]:
    """The fields of a policy as a plain dict (for configs and reports)."""
    return {f: getattr(policy, f) for f in _FIELDS}
