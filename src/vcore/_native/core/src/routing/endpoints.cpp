// Endpoint table: slots, names and validation (see endpoints.h).
#include "vcore/routing/endpoints.h"

#include <cmath>

#include "vcore/errors.h"

namespace vcore::routing {

Role parse_role(const std::string& name) {
  if (name == "both") return Role::kBoth;
  if (name == "prefill") return Role::kPrefill;
  if (name == "decode") return Role::kDecode;
  throw Invalid("role: expected 'both', 'prefill' or 'decode', got '" + name + "'");
}

const char* role_name(Role role) {
  switch (role) {
    case Role::kPrefill:
      return "prefill";
    case Role::kDecode:
      return "decode";
    default:
      return "both";
  }
}

int32_t EndpointTable::add(const EndpointSpec& spec) {
  if (spec.name.empty()) throw Invalid("endpoint name: must not be empty");
  if (by_name_.count(spec.name)) throw Invalid("endpoint '" + spec.name + "': already exists");
  if (spec.max_loras < 0) throw Invalid("endpoint '" + spec.name + "': max_loras must be >= 0");
  if (!(spec.prefill_tokens_per_s > 0) || !std::isfinite(spec.prefill_tokens_per_s))
    throw Invalid("endpoint '" + spec.name + "': prefill_tokens_per_s must be a finite number > 0");
  if (!(spec.prefill_overhead_s >= 0) || !std::isfinite(spec.prefill_overhead_s))
    throw Invalid("endpoint '" + spec.name + "': prefill_overhead_s must be a finite number >= 0");
  if (!(spec.prefill_attention_s_per_token_pair >= 0) || !std::isfinite(spec.prefill_attention_s_per_token_pair))
    throw Invalid("endpoint '" + spec.name + "': prefill_attention_s_per_token_pair must be a finite number >= 0");
  if (spec.pd_group < -1 || spec.domain < -1)
    throw Invalid("endpoint '" + spec.name + "': pd_group and domain must be >= -1");
  int32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = n_slots();
    for (auto* v : {&live_, &healthy_}) v->push_back(0);
    name_.emplace_back();
    role_.push_back(Role::kBoth);
    for (auto* v : {&pd_group_, &domain_, &max_loras_, &waiting_, &running_, &in_flight_}) v->push_back(0);
    for (auto* v : {&prefill_rate_, &prefill_overhead_s_, &prefill_attention_, &kv_usage_, &prefill_backlog_s_,
                    &prefill_busy_until_s_})
      v->push_back(0);
    for (auto* v : {&ttft_us_, &itl_us_, &pending_prefill_tokens_, &active_blocks_}) v->push_back(0);
    loras_.emplace_back();
  }
  name_[slot] = spec.name;
  live_[slot] = 1;
  healthy_[slot] = 1;
  role_[slot] = spec.role;
  pd_group_[slot] = spec.pd_group;
  domain_[slot] = spec.domain;
  max_loras_[slot] = spec.max_loras;
  prefill_rate_[slot] = spec.prefill_tokens_per_s;
  prefill_overhead_s_[slot] = spec.prefill_overhead_s;
  prefill_attention_[slot] = spec.prefill_attention_s_per_token_pair;
  prefill_backlog_s_[slot] = prefill_busy_until_s_[slot] = 0;
  loras_[slot].clear();
  waiting_[slot] = running_[slot] = in_flight_[slot] = 0;
  kv_usage_[slot] = 0;
  ttft_us_[slot] = itl_us_[slot] = pending_prefill_tokens_[slot] = active_blocks_[slot] = 0;
  by_name_[spec.name] = slot;
  ++n_live_;
  return slot;
}

double prefill_seconds(const EndpointTable& t, int32_t slot, int64_t cached_tokens, int64_t new_tokens) {
  const double cached = static_cast<double>(cached_tokens), fresh = static_cast<double>(new_tokens);
  return t.prefill_overhead_s_[slot] +
         fresh * (1.0 / t.prefill_rate_[slot] + t.prefill_attention_[slot] * (cached + fresh / 2.0));
}

void EndpointTable::check(int32_t slot) const {
  if (!live(slot)) throw NotFound("endpoint slot " + std::to_string(slot) + ": no such endpoint");
}

void EndpointTable::remove(int32_t slot) {
  check(slot);
  by_name_.erase(name_[slot]);
  name_[slot].clear();
  live_[slot] = 0;
  healthy_[slot] = 0;
  loras_[slot].clear();
  free_.push_back(slot);
  --n_live_;
}

int32_t EndpointTable::slot_of(const std::string& name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) throw NotFound("endpoint '" + name + "': no such endpoint");
  return it->second;
}

}  // namespace vcore::routing
