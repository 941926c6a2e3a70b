// The endpoints a router chooses from, as struct-of-arrays indexed by a stable slot.
//
// Two kinds of state per endpoint: what the engine reports (scraped metrics: waiting and running requests, KV
// cache use, last-period TTFT and inter-token latency) and what the router itself tracks as it dispatches
// (in-flight requests, prefill tokens and estimated prefill seconds sent but not yet answered with a first token,
// when the endpoint is expected to have finished those prefills, KV blocks of in-flight requests). Plus the static
// description: role (prefill, decode, both), PD group, network domain, LoRA slots and loaded adapters, and the
// prefill time model. Slots of removed endpoints are reused (free list).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace vcore::routing {

enum class Role : int8_t { kBoth = 0, kPrefill = 1, kDecode = 2 };

Role parse_role(const std::string& name);
const char* role_name(Role role);

struct EndpointSpec {
  std::string name;
  Role role = Role::kBoth;
  int32_t pd_group = -1;  // -1: not in a PD group
  int32_t domain = -1;    // network domain id (node topology / HyperNode), -1: unknown
  int32_t max_loras = 0;  // LoRA adapter slots
  // Prefill time model (the roofline one of vcore.sim.llm.EngineParams): a prefill of `new` tokens after
  // `cached` ones takes overhead + new * (1 / tokens_per_s + attention * (cached + new / 2)) seconds. The
  // defaults (1 token/s, no overhead, no attention) rank by tokens, in relative units.
  double prefill_tokens_per_s = 1.0;
  double prefill_overhead_s = 0.0;
  double prefill_attention_s_per_token_pair = 0.0;
};

class EndpointTable {
 public:
  int32_t add(const EndpointSpec& spec);           // Invalid on a duplicate name or bad field
  void remove(int32_t slot);                       // NotFound on a free slot
  int32_t slot_of(const std::string& name) const;  // NotFound when absent
  bool live(int32_t slot) const { return slot >= 0 && slot < n_slots() && live_[slot]; }
  void check(int32_t slot) const;  // NotFound unless live
  int32_t n_slots() const { return static_cast<int32_t>(live_.size()); }
  int32_t n_live() const { return n_live_; }

  // static description
  std::vector<std::string> name_;
  std::vector<uint8_t> live_;
  std::vector<Role> role_;
  std::vector<int32_t> pd_group_, domain_, max_loras_;
  std::vector<double> prefill_rate_, prefill_overhead_s_, prefill_attention_;
  std::vector<std::vector<int32_t>> loras_;  // loaded adapter ids per slot (sorted)
  // engine-reported (scraped)
  std::vector<uint8_t> healthy_;
  std::vector<int32_t> waiting_, running_;
  std::vector<double> kv_usage_;  // fraction 0..1
  std::vector<int64_t> ttft_us_, itl_us_;
  // router-tracked
  std::vector<int32_t> in_flight_;
  std::vector<int64_t> pending_prefill_tokens_, active_blocks_;
  std::vector<double> prefill_backlog_s_;     // estimated seconds of the prefills sent and not yet answered
  std::vector<double> prefill_busy_until_s_;  // when those prefills should be done (the router's clock)

 private:
  std::unordered_map<std::string, int32_t> by_name_;
  std::vector<int32_t> free_;
  int32_t n_live_ = 0;
};

// Seconds a prefill of `new_tokens` after `cached_tokens` takes on `slot` (EndpointSpec's time model).
double prefill_seconds(const EndpointTable& t, int32_t slot, int64_t cached_tokens, int64_t new_tokens);

}  // namespace vcore::routing
