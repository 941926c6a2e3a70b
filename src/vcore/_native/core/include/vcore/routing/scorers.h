// The routing scorers: one kernel per signal, each filling a score per candidate endpoint.
//
// Kthena's plugins follow its published formulas (volcano-sh/kthena, pkg/kthena-router/scheduler/plugins:
// least_request.go, gpu.go, least_latency.go, prefix_cache.go, as read for this issue): each score is 0..100 and
// truncated to an integer as Kthena's int() conversion does. vcore's own signals (prefill cost, LoRA affinity)
// and Dynamo's cost are documented at their functions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vcore/routing/endpoints.h"

namespace vcore::routing {

// Kthena least-request: base = in_flight + queue_weight * max(in_flight - running, 0) (router-tracked in-flight,
// engine-reported running); score = int((max_base - base) / max_base * 100), 100 for all when max_base == 0.
void score_least_request(const EndpointTable& t, const int32_t* cand, size_t n, double queue_weight, double* out);

// Kthena gpu-usage (KV cache): int((1 - kv_usage) * 100).
void score_kv_cache(const EndpointTable& t, const int32_t* cand, size_t n, double* out);

// Kthena least-latency: endpoints without observations (ttft or itl <= 0) get 100; the others
// int(ttft_factor * 100 * (max_ttft - ttft) / (max_ttft - min_ttft) + (1 - ttft_factor) * (same for itl)),
// each part 100 when max == min.
void score_latency(const EndpointTable& t, const int32_t* cand, size_t n, double ttft_factor, double* out);

// Kthena prefix-cache: int(match / n_blocks * 100) for the top_k endpoints with the longest non-zero matches
// (ties at the cut: lower candidate position first), 0 for the rest; top_k <= 0 keeps every endpoint.
// `match` is already capped at n_blocks; n_blocks == 0 scores 0 everywhere.
void score_prefix(const int32_t* match, size_t n, int64_t n_blocks, int32_t top_k, double* out);

// LoRA affinity: 100 when the adapter is loaded, 50 when a slot is free to load it, 0 otherwise (such endpoints
// are filtered out before scoring). No adapter requested: 100 everywhere.
void score_lora(const EndpointTable& t, const int32_t* cand, size_t n, int32_t lora, double* out);

// vcore prefill cost: the expected seconds until this request's first token on each endpoint: the wait for the
// prefills already sent there (wait_s, from the router's bookkeeping: see Router::expected_wait_s) plus this
// request's own prefill there, whose cached part is the prefix the endpoint holds: prefill_seconds(cached =
// min(match * block_tokens, prompt_tokens), new = max(prompt_tokens - match * block_tokens, 1)).
void prefill_cost_seconds(const EndpointTable& t, const int32_t* cand, size_t n, const int32_t* match,
                          int64_t prompt_tokens, int64_t block_tokens, const double* wait_s, double* out);
// Score of a cost: 100 * min_cost / cost (100 for the cheapest; 100 everywhere when every cost is 0).
void score_inverse_cost(const double* cost, size_t n, double* out);

// Dynamo's KV-router cost (ai-dynamo/dynamo docs, router design: cost = overlap_score_weight * prefill_blocks +
// decode_blocks): prefill_blocks = (pending prefill tokens + this request's uncached tokens) / block_tokens,
// decode_blocks = active blocks of in-flight requests + this request's blocks. Lower is better.
void dynamo_cost(const EndpointTable& t, const int32_t* cand, size_t n, const int32_t* match, int64_t prompt_tokens,
                 int64_t block_tokens, double overlap_weight, double* out);

}  // namespace vcore::routing
