"""Latency and memory parameters of an LLM inference engine, derived from the model and GPU, with sources.

The model is the usual roofline one of serving simulators (Vidur, DistServe, Splitwise): prefill is compute
bound (linear GEMM work per token plus causal attention that grows with the context), a decode step is memory
bound (read the weights once, plus every running sequence's KV cache), and chunked prefill mixes a budget of
prefill tokens into the decode steps. Constants come from the model card (parameters, layers, hidden size, KV
heads), the GPU datasheet (dense BF16 FLOP/s, HBM bandwidth, memory) and the utilisation that published vLLM
measurements reach on such GPUs (about 50 % MFU in long prefill, about 80 % of HBM bandwidth in decode); none of
them was fitted to a trace or to a routing policy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class EngineParams:
    """Time and memory constants of one engine (one model replica)."""

    name: str
    prefill_s_per_token: float  # linear (GEMM) prefill work per token
    attention_s_per_token_pair: float  # causal attention work per (new token, context token) pair
    prefill_overhead_s: float  # fixed cost of a prefill job (scheduling, one extra forward step, sampling)
    decode_base_s: float  # one decode step with an empty batch: reading the weights
    decode_s_per_seq: float  # per running sequence per step (sampling, bookkeeping)
    decode_s_per_kv_token: float  # per cached context token read per step
    chunk_tokens: int  # chunked-prefill token budget of one step (vLLM max_num_batched_tokens)
    kv_capacity_tokens: int  # KV cache size in tokens
    max_num_seqs: int = 256  # running sequences at most (vLLM max_num_seqs)

    def __post_init__(self) -> None:
        for field_name in (
            "prefill_s_per_token",
            "attention_s_per_token_pair",
            "prefill_overhead_s",
            "decode_base_s",
            "decode_s_per_seq",
            "decode_s_per_kv_token",
        ):
            value = getattr(self, field_name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"EngineParams {self.name!r}: {field_name} must be a finite number >= 0")
        for field_name in ("chunk_tokens", "kv_capacity_tokens", "max_num_seqs"):
            value = getattr(self, field_name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"EngineParams {self.name!r}: {field_name} must be an integer >= 1")

    def prefill_seconds_per_token(self, cached_tokens: int, new_tokens: int) -> float:
        """Mean compute time per new token of a prefill that extends ``cached_tokens`` by ``new_tokens``:
        linear work plus attention over the average context (cached + half of the new tokens)."""
        return self.prefill_s_per_token + self.attention_s_per_token_pair * (cached_tokens + new_tokens / 2)

    def prefill_seconds(self, cached_tokens: int, new_tokens: int) -> float:
        """A prefill alone on the GPU (no decode batch): overhead + new tokens x per-token time."""
        return self.prefill_overhead_s + new_tokens * self.prefill_seconds_per_token(cached_tokens, new_tokens)

    def decode_step_seconds(self, batch: int, kv_tokens: int) -> float:
        """One decode step of ``batch`` sequences holding ``kv_tokens`` context tokens in total."""
        return self.decode_base_s + self.decode_s_per_seq * batch + self.decode_s_per_kv_token * kv_tokens

    def prefill_tokens_per_s(self) -> float:
        """Nominal prefill speed (short context), what a router can assume per endpoint."""
        return 1.0 / self.prefill_s_per_token


def _derive(
    name: str,
    params_b: float,
    layers: int,
    d_model: int,
    kv_heads: int,
    head_dim: int,
    gpus: int,
    flops_per_gpu: float,
    hbm_bytes_per_s: float,
    gpu_mem_bytes: float,
    mfu: float,
    hbm_eff: float,
    activation_reserve_bytes: float,
    extra_step_s: float,
    chunk_tokens: int,
) -> EngineParams:
    flops = gpus * flops_per_gpu * mfu  # sustained FLOP/s in prefill
    bandwidth = gpus * hbm_bytes_per_s * hbm_eff  # sustained bytes/s in decode
    weight_bytes = params_b * 1e9 * 2  # bf16
    kv_bytes_per_token = 2 * kv_heads * head_dim * layers * 2  # K and V, bf16
    kv_bytes = gpus * gpu_mem_bytes * 0.9 - weight_bytes - activation_reserve_bytes  # gpu_memory_utilization 0.9
    decode_base = weight_bytes / bandwidth + extra_step_s
    return EngineParams(
        name=name,
        prefill_s_per_token=2 * params_b * 1e9 / flops,  # 2 FLOP per parameter per token
        attention_s_per_token_pair=4 * d_model * layers / flops,  # QK^T and PV: 2 x 2 FLOP per d_model per layer
        prefill_overhead_s=decode_base,  # a prefill job costs at least one pass over the weights
        decode_base_s=decode_base,
        decode_s_per_seq=5e-5,  # sampling and scheduling per sequence (vLLM CPU overhead, ~50 us)
        decode_s_per_kv_token=kv_bytes_per_token / bandwidth,
        chunk_tokens=chunk_tokens,
        kv_capacity_tokens=int(kv_bytes // kv_bytes_per_token),
    )


# Llama-3.1-8B (8.03 B parameters, 32 layers, d_model 4096, 8 KV heads x 128) on one A100-SXM4-80GB
# (312 TFLOP/s dense BF16, 2.039 TB/s HBM2e): ~93 us per prefill token (~10.7 k tokens/s), ~10 ms decode steps,
# ~396 k tokens of KV cache. vLLM reports 8B-class prefill of roughly 10-12 k tokens/s on an A100.
LLAMA3_8B_A100 = _derive("llama3-8b-a100", 8.03, 32, 4096, 8, 128, 1, 312e12, 2.039e12, 80e9, 0.55, 0.8, 4e9, 0.0, 8192)

# Llama-3.1-70B (70.6 B, 80 layers, d_model 8192, 8 KV heads x 128) on 8 x H100-SXM-80GB with tensor parallelism
# (989 TFLOP/s dense BF16 and 3.35 TB/s per GPU; 45 % MFU and 75 % bandwidth under TP-8, +3 ms all-reduce per step).
LLAMA3_70B_H100X8 = _derive(
    "llama3-70b-h100x8", 70.6, 80, 8192, 8, 128, 8, 989e12, 3.35e12, 80e9, 0.45, 0.75, 30e9, 3e-3, 8192
)

# LLaMA2-70B (69 B, 80 layers, d_model 8192, 8 KV heads x 128) on one node of 8 x A800-SXM4-80GB (A100 compute and
# HBM: 312 TFLOP/s, 2.039 TB/s) with tensor parallelism: the setting of the Mooncake paper's trace experiments
# (Qin et al., FAST'25), hence the default of the Mooncake trace replay. ~112 us per prefill token per node.
LLAMA2_70B_A800X8 = _derive(
    "llama2-70b-a800x8", 69.0, 80, 8192, 8, 128, 8, 312e12, 2.039e12, 80e9, 0.45, 0.75, 30e9, 3e-3, 8192
)

PRESETS = {p.name: p for p in (LLAMA3_8B_A100, LLAMA3_70B_H100X8, LLAMA2_70B_A800X8)}
TRACE_PRESET = LLAMA2_70B_A800X8.name
DEFAULT_PRESET = LLAMA3_8B_A100.name
