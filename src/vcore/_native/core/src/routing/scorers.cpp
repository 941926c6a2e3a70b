// Scorer kernels (see scorers.h for the formulas and their sources).
#include "vcore/routing/scorers.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

namespace vcore::routing {

void score_least_request(const EndpointTable& t, const int32_t* cand, size_t n, double queue_weight, double* out) {
  double max_base = 0;
  for (size_t j = 0; j < n; ++j) {
    const int32_t s = cand[j];
    const double in_flight = t.in_flight_[s];
    out[j] = in_flight + queue_weight * std::max(in_flight - static_cast<double>(t.running_[s]), 0.0);
    max_base = std::max(max_base, out[j]);
  }
  for (size_t j = 0; j < n; ++j)
    out[j] = max_base > 0 ? static_cast<double>(static_cast<int64_t>((max_base - out[j]) / max_base * 100.0)) : 100.0;
}

void score_kv_cache(const EndpointTable& t, const int32_t* cand, size_t n, double* out) {
  for (size_t j = 0; j < n; ++j)
    out[j] = static_cast<double>(static_cast<int64_t>((1.0 - t.kv_usage_[cand[j]]) * 100.0));
}

void score_latency(const EndpointTable& t, const int32_t* cand, size_t n, double ttft_factor, double* out) {
  double min_ttft = std::numeric_limits<double>::max(), max_ttft = 0;
  double min_itl = std::numeric_limits<double>::max(), max_itl = 0;
  for (size_t j = 0; j < n; ++j) {
    const double ttft = static_cast<double>(t.ttft_us_[cand[j]]), itl = static_cast<double>(t.itl_us_[cand[j]]);
    if (ttft <= 0 || itl <= 0) continue;
    min_ttft = std::min(min_ttft, ttft);
    max_ttft = std::max(max_ttft, ttft);
    min_itl = std::min(min_itl, itl);
    max_itl = std::max(max_itl, itl);
  }
  for (size_t j = 0; j < n; ++j) {
    const double ttft = static_cast<double>(t.ttft_us_[cand[j]]), itl = static_cast<double>(t.itl_us_[cand[j]]);
    if (ttft <= 0 || itl <= 0) {
      out[j] = 100.0;
      continue;
    }
    const double s_ttft = max_ttft > min_ttft ? 100.0 * (max_ttft - ttft) / (max_ttft - min_ttft) : 100.0;
    const double s_itl = max_itl > min_itl ? 100.0 * (max_itl - itl) / (max_itl - min_itl) : 100.0;
    out[j] = static_cast<double>(static_cast<int64_t>(s_ttft * ttft_factor + s_itl * (1.0 - ttft_factor)));
  }
}

void score_prefix(const int32_t* match, size_t n, int64_t n_blocks, int32_t top_k, double* out) {
  std::fill(out, out + n, 0.0);
  if (n_blocks <= 0) return;
  std::vector<int32_t> order;
  order.reserve(n);
  for (size_t j = 0; j < n; ++j)
    if (match[j] > 0) order.push_back(static_cast<int32_t>(j));
  if (top_k > 0 && order.size() > static_cast<size_t>(top_k)) {
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return match[a] > match[b]; });
    order.resize(static_cast<size_t>(top_k));
  }
  for (int32_t j : order)
    out[j] = static_cast<double>(
        static_cast<int64_t>(static_cast<double>(match[j]) / static_cast<double>(n_blocks) * 100.0));
}

void score_lora(const EndpointTable& t, const int32_t* cand, size_t n, int32_t lora, double* out) {
  for (size_t j = 0; j < n; ++j) {
    if (lora < 0) {
      out[j] = 100.0;
      continue;
    }
    const auto& loaded = t.loras_[cand[j]];
    if (std::binary_search(loaded.begin(), loaded.end(), lora))
      out[j] = 100.0;
    else if (static_cast<int32_t>(loaded.size()) < t.max_loras_[cand[j]])
      out[j] = 50.0;
    else
      out[j] = 0.0;
  }
}

void prefill_cost_seconds(const EndpointTable& t, const int32_t* cand, size_t n, const int32_t* match,
                          int64_t prompt_tokens, int64_t block_tokens, const double* wait_s, double* out) {
  for (size_t j = 0; j < n; ++j) {
    const int64_t held = static_cast<int64_t>(match[j]) * block_tokens;
    const int64_t uncached = std::max<int64_t>(prompt_tokens - held, 1);
    out[j] = wait_s[j] + prefill_seconds(t, cand[j], std::min(held, prompt_tokens), uncached);
  }
}

void score_inverse_cost(const double* cost, size_t n, double* out) {
  double lo = std::numeric_limits<double>::max();
  for (size_t j = 0; j < n; ++j) lo = std::min(lo, cost[j]);
  for (size_t j = 0; j < n; ++j) out[j] = cost[j] > 0 ? 100.0 * lo / cost[j] : 100.0;
}

void dynamo_cost(const EndpointTable& t, const int32_t* cand, size_t n, const int32_t* match, int64_t prompt_tokens,
                 int64_t block_tokens, double overlap_weight, double* out) {
  const double bt = static_cast<double>(block_tokens);
  const double request_blocks = static_cast<double>((prompt_tokens + block_tokens - 1) / block_tokens);
  for (size_t j = 0; j < n; ++j) {
    const int32_t s = cand[j];
    const int64_t uncached = std::max<int64_t>(prompt_tokens - static_cast<int64_t>(match[j]) * block_tokens, 0);
    const double prefill_blocks = static_cast<double>(t.pending_prefill_tokens_[s] + uncached) / bt;
    const double decode_blocks = static_cast<double>(t.active_blocks_[s]) + request_blocks;
    out[j] = overlap_weight * prefill_blocks + decode_blocks;
  }
}

}  // namespace vcore::routing
