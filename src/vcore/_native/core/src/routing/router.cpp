// Router: filters, ranking by policy, PD pairing and request bookkeeping (see router.h).
#include "vcore/routing/router.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "vcore/errors.h"
#include "vcore/routing/scorers.h"

namespace vcore::routing {
namespace {

inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

void check_weight(double w, const char* name) {
  if (!(w >= 0) || !std::isfinite(w)) throw Invalid(std::string("policy.") + name + ": must be a finite number >= 0");
}

}  // namespace

PolicyKind parse_policy_kind(const std::string& name) {
  if (name == "scored") return PolicyKind::kScored;
  if (name == "random") return PolicyKind::kRandom;
  if (name == "round-robin") return PolicyKind::kRoundRobin;
  if (name == "dynamo") return PolicyKind::kDynamo;
  throw Invalid("policy.kind: expected 'scored', 'random', 'round-robin' or 'dynamo', got '" + name + "'");
}

void RoutingPolicy::validate() const {
  if (max_waiting < 0) throw Invalid("policy.max_waiting: must be >= 0");
  check_weight(w_prefix, "w_prefix");
  check_weight(w_least_request, "w_least_request");
  check_weight(w_kv_cache, "w_kv_cache");
  check_weight(w_latency, "w_latency");
  check_weight(w_lora, "w_lora");
  check_weight(w_prefill_cost, "w_prefill_cost");
  check_weight(queue_weight, "queue_weight");
  check_weight(overlap_weight, "overlap_weight");
  if (prefix_max_blocks < 0) throw Invalid("policy.prefix_max_blocks: must be >= 0");
  if (prefix_top_k < 0) throw Invalid("policy.prefix_top_k: must be >= 0");
  if (!(latency_ttft_factor >= 0 && latency_ttft_factor <= 1))
    throw Invalid("policy.latency_ttft_factor: must be between 0 and 1");
  if (top_n < 1) throw Invalid("policy.top_n: must be >= 1");
  if (pd_min_prompt_tokens < 0) throw Invalid("policy.pd_min_prompt_tokens: must be >= 0");
}

Router::Router(const RouterOptions& opt) : opt_(opt), index_(opt.prefix_capacity_blocks) {
  if (opt.block_tokens < 1) throw Invalid("block_tokens: must be >= 1");
}

int32_t Router::add_endpoint(const EndpointSpec& spec) {
  const int32_t slot = table_.add(spec);
  index_.reserve_endpoint(slot);
  index_.clear_endpoint(slot);
  if (prefill_queue_.size() < static_cast<size_t>(table_.n_slots())) prefill_queue_.resize(table_.n_slots());
  prefill_queue_[slot].clear();
  return slot;
}

void Router::remove_endpoint(int32_t slot) {
  table_.check(slot);
  for (auto it = requests_.begin(); it != requests_.end();) {
    if (it->second.slot == slot)
      it = requests_.erase(it);
    else
      ++it;
  }
  index_.clear_endpoint(slot);
  prefill_queue_[slot].clear();
  table_.remove(slot);
}

int32_t Router::lora_id(const std::string& name) {
  if (name.empty()) throw Invalid("lora adapter name: must not be empty");
  auto it = lora_ids_.find(name);
  if (it != lora_ids_.end()) return it->second;
  const int32_t id = static_cast<int32_t>(lora_ids_.size());
  lora_ids_.emplace(name, id);
  return id;
}

void Router::set_loras(int32_t slot, const std::vector<std::string>& names) {
  table_.check(slot);
  std::vector<int32_t> ids;
  for (const auto& n : names) ids.push_back(lora_id(n));
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  table_.loras_[slot] = std::move(ids);
}

std::vector<int32_t> Router::filter(const RoutingPolicy& p, const RouteRequest& r, Role wanted, bool pd,
                                    FilterCounts* counts, bool* relaxed) const {
  std::vector<int32_t> pool;
  if (r.candidates) {
    pool.assign(r.candidates, r.candidates + r.n_candidates);
    for (int32_t s : pool) table_.check(s);
    std::vector<int32_t> sorted = pool;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      throw Invalid("candidates: an endpoint slot appears twice");
  } else {
    for (int32_t s = 0; s < table_.n_slots(); ++s)
      if (table_.live(s)) pool.push_back(s);
  }
  if (r.session_slot != -1) table_.check(r.session_slot);
  if (r.lora < -1 || r.lora >= static_cast<int32_t>(lora_ids_.size()))
    throw Invalid("lora: unknown adapter id " + std::to_string(r.lora));
  std::vector<int32_t> out, over_waiting;
  for (int32_t s : pool) {
    if (!table_.healthy_[s]) {
      ++counts->unhealthy;
      continue;
    }
    const Role role = table_.role_[s];
    if (pd ? role != wanted : role != Role::kBoth) {
      ++counts->role;
      continue;
    }
    if (r.lora >= 0) {
      const auto& loaded = table_.loras_[s];
      if (!std::binary_search(loaded.begin(), loaded.end(), r.lora) &&
          static_cast<int32_t>(loaded.size()) >= table_.max_loras_[s]) {
        ++counts->lora;
        continue;
      }
    }
    if (p.max_waiting > 0 && table_.waiting_[s] >= p.max_waiting) {
      over_waiting.push_back(s);
      continue;
    }
    out.push_back(s);
  }
  counts->waiting += static_cast<int32_t>(over_waiting.size());
  if (out.empty() && !over_waiting.empty()) {
    // Kthena answers an error here; the router keeps serving and ranks the overloaded endpoints instead.
    *relaxed = true;
    return over_waiting;
  }
  return out;
}

std::vector<int32_t> Router::rank(const RoutingPolicy& p, const RouteRequest& r, const std::vector<int32_t>& cand,
                                  std::vector<int32_t>* match, std::vector<double>* total, uint64_t decision) {
  const size_t n = cand.size();
  match->assign(n, 0);
  total->assign(n, 0.0);
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (n == 0) return order;
  index_.match(r.hashes, r.n_hashes, cand.data(), n, match->data());
  std::vector<uint64_t> key(n);
  for (size_t j = 0; j < n; ++j) key[j] = mix64(opt_.seed ^ mix64(decision) ^ static_cast<uint64_t>(cand[j]));
  std::vector<double> part(n);
  switch (p.kind) {
    case PolicyKind::kRandom:
      std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return key[a] < key[b]; });
      break;
    case PolicyKind::kRoundRobin: {
      std::vector<int32_t> by_slot = order;
      std::sort(by_slot.begin(), by_slot.end(), [&](int32_t a, int32_t b) { return cand[a] < cand[b]; });
      const size_t start = static_cast<size_t>(round_robin_++ % n);
      for (size_t k = 0; k < n; ++k) order[k] = by_slot[(start + k) % n];
      break;
    }
    case PolicyKind::kDynamo:
      dynamo_cost(table_, cand.data(), n, match->data(), r.prompt_tokens, opt_.block_tokens, p.overlap_weight,
                  part.data());
      for (size_t j = 0; j < n; ++j) (*total)[j] = -part[j];
      std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
        return (*total)[a] != (*total)[b] ? (*total)[a] > (*total)[b] : key[a] < key[b];
      });
      break;
    case PolicyKind::kScored: {
      auto add = [&](double w) {
        for (size_t j = 0; j < n; ++j) (*total)[j] += w * part[j];
      };
      if (p.w_prefix > 0) {
        const int64_t considered = p.prefix_max_blocks > 0
                                       ? std::min<int64_t>(static_cast<int64_t>(r.n_hashes), p.prefix_max_blocks)
                                       : static_cast<int64_t>(r.n_hashes);
        std::vector<int32_t> capped(n);
        for (size_t j = 0; j < n; ++j) capped[j] = static_cast<int32_t>(std::min<int64_t>((*match)[j], considered));
        score_prefix(capped.data(), n, considered, p.prefix_top_k, part.data());
        add(p.w_prefix);
      }
      if (p.w_least_request > 0) {
        score_least_request(table_, cand.data(), n, p.queue_weight, part.data());
        add(p.w_least_request);
      }
      if (p.w_kv_cache > 0) {
        score_kv_cache(table_, cand.data(), n, part.data());
        add(p.w_kv_cache);
      }
      if (p.w_latency > 0) {
        score_latency(table_, cand.data(), n, p.latency_ttft_factor, part.data());
        add(p.w_latency);
      }
      if (p.w_lora > 0) {
        score_lora(table_, cand.data(), n, r.lora, part.data());
        add(p.w_lora);
      }
      if (p.w_prefill_cost > 0) {
        std::vector<double> wait(n), cost(n);
        for (size_t j = 0; j < n; ++j) wait[j] = expected_wait_s(cand[j], r.now_s);
        prefill_cost_seconds(table_, cand.data(), n, match->data(), r.prompt_tokens, opt_.block_tokens, wait.data(),
                             cost.data());
        score_inverse_cost(cost.data(), n, part.data());
        add(p.w_prefill_cost);
      }
      std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
        return (*total)[a] != (*total)[b] ? (*total)[a] > (*total)[b] : key[a] < key[b];
      });
      break;
    }
  }
  if (p.session_affinity && r.session_slot >= 0) {
    auto it = std::find_if(order.begin(), order.end(), [&](int32_t j) { return cand[j] == r.session_slot; });
    if (it != order.end()) std::rotate(order.begin(), it, it + 1);
  }
  return order;
}

Decision Router::route(const RoutingPolicy& p, const RouteRequest& r) {
  Decision d;
  const uint64_t decision = decisions_++;
  std::vector<int32_t> cand = filter(p, r, Role::kBoth, false, &d.filtered, &d.waiting_filter_relaxed);
  d.n_candidates = static_cast<int32_t>(r.candidates ? r.n_candidates : static_cast<size_t>(table_.n_live()));
  std::vector<int32_t> match;
  std::vector<double> total;
  std::vector<int32_t> order = rank(p, r, cand, &match, &total, decision);
  const size_t k = std::min(order.size(), static_cast<size_t>(p.top_n));
  for (size_t i = 0; i < k; ++i) {
    d.slots.push_back(cand[order[i]]);
    d.match.push_back(match[order[i]]);
    d.score.push_back(total[order[i]]);
  }
  return d;
}

PdDecision Router::route_pd(const RoutingPolicy& p, const RouteRequest& r) {
  PdDecision d;
  const uint64_t decision = decisions_++;
  bool relaxed = false;
  std::vector<int32_t> decode = filter(p, r, Role::kDecode, true, &d.filtered, &relaxed);
  d.n_candidates = static_cast<int32_t>(r.candidates ? r.n_candidates : static_cast<size_t>(table_.n_live()));
  std::vector<int32_t> match;
  std::vector<double> total;
  std::vector<int32_t> order = rank(p, r, decode, &match, &total, decision);
  const bool skip_prefill = r.prompt_tokens < p.pd_min_prompt_tokens;
  // Prefill endpoints of the same candidate pool (or every live endpoint), ranked once, then picked per group.
  std::vector<int32_t> prefill, pmatch, porder;
  std::vector<double> ptotal;
  if (!skip_prefill) {
    FilterCounts ignored;
    bool prelaxed = false;
    prefill = filter(p, r, Role::kPrefill, true, &ignored, &prelaxed);
    RouteRequest no_session = r;
    no_session.session_slot = -1;
    porder = rank(p, no_session, prefill, &pmatch, &ptotal, decision ^ 0x5044ULL);
  }
  for (int32_t j : order) {
    if (d.decode.size() >= static_cast<size_t>(p.top_n)) break;
    const int32_t dslot = decode[j];
    if (skip_prefill) {
      d.decode.push_back(dslot);
      d.prefill.push_back(-1);
      d.prefill_match.push_back(match[j]);
      continue;
    }
    const int32_t group = table_.pd_group_[dslot], domain = table_.domain_[dslot];
    if (group < 0) continue;
    int32_t best = -1, best_same_domain = -1;
    for (int32_t q : porder) {  // porder is best first
      const int32_t ps = prefill[q];
      if (table_.pd_group_[ps] != group) continue;
      if (best < 0) best = q;
      if (domain >= 0 && table_.domain_[ps] == domain) {
        best_same_domain = q;
        break;
      }
    }
    const int32_t chosen = best_same_domain >= 0 ? best_same_domain : best;
    if (chosen < 0) continue;
    d.decode.push_back(dslot);
    d.prefill.push_back(prefill[chosen]);
    d.prefill_match.push_back(pmatch[chosen]);
  }
  return d;
}

double Router::expected_wait_s(int32_t slot, double now_s) const {
  const auto& queue = prefill_queue_[slot];
  if (queue.empty()) return 0.0;
  const double head = requests_.at(queue.front().first).prefill_s;  // the front is always pending
  const double backlog = table_.prefill_backlog_s_[slot];
  return std::max({table_.prefill_busy_until_s_[slot] - now_s, backlog - head, 0.0});
}

void Router::dispatch(uint64_t request_id, int32_t slot, const uint64_t* hashes, size_t n_hashes, int64_t prompt_tokens,
                      int32_t matched_blocks, int64_t output_tokens, bool record_prefix, double now_s) {
  table_.check(slot);
  if (prompt_tokens < 0 || output_tokens < 0 || matched_blocks < 0)
    throw Invalid("dispatch: prompt_tokens, output_tokens and matched_blocks must be >= 0");
  if (!std::isfinite(now_s)) throw Invalid("dispatch: now_s must be a finite number");
  if (requests_.count(request_id))
    throw Invalid("dispatch: request id " + std::to_string(request_id) + " is already in flight");
  const int64_t bt = opt_.block_tokens;
  const int64_t held = static_cast<int64_t>(matched_blocks) * bt;
  InFlight f;
  f.slot = slot;
  f.uncached_tokens = std::max<int64_t>(prompt_tokens - held, 1);
  f.blocks = (prompt_tokens + output_tokens + bt - 1) / bt;
  f.prefill_s = prefill_seconds(table_, slot, std::min(held, prompt_tokens), f.uncached_tokens);
  f.seq = dispatches_++;
  f.prefill_pending = true;
  requests_.emplace(request_id, f);
  prefill_queue_[slot].emplace_back(request_id, f.seq);
  table_.in_flight_[slot] += 1;
  table_.pending_prefill_tokens_[slot] += f.uncached_tokens;
  table_.active_blocks_[slot] += f.blocks;
  table_.prefill_backlog_s_[slot] += f.prefill_s;
  table_.prefill_busy_until_s_[slot] = std::max(table_.prefill_busy_until_s_[slot], now_s) + f.prefill_s;
  if (record_prefix) index_.insert(slot, hashes, n_hashes);
}

void Router::settle_prefill(InFlight& f, double now_s) {
  f.prefill_pending = false;
  table_.pending_prefill_tokens_[f.slot] -= f.uncached_tokens;
  auto& queue = prefill_queue_[f.slot];
  const bool was_head = queue.front().second == f.seq;
  // Drop the settled entries at the front (those behind the head are dropped when they reach it).
  auto pending = [&](const std::pair<uint64_t, uint64_t>& e) {
    auto it = requests_.find(e.first);
    return it != requests_.end() && it->second.seq == e.second && it->second.prefill_pending;
  };
  while (!queue.empty() && !pending(queue.front())) queue.pop_front();
  double& backlog = table_.prefill_backlog_s_[f.slot];
  double& busy_until = table_.prefill_busy_until_s_[f.slot];
  backlog = queue.empty() ? 0.0 : std::max(backlog - f.prefill_s, 0.0);  // no float drift on an idle endpoint
  // The next request starts now when the head is answered; another one answered early just takes its work away.
  busy_until = was_head ? now_s + backlog : busy_until - f.prefill_s;
}

void Router::first_token(uint64_t request_id, double now_s) {
  auto it = requests_.find(request_id);
  if (it == requests_.end() || !it->second.prefill_pending) return;
  settle_prefill(it->second, now_s);
}

void Router::finish(uint64_t request_id, double now_s) {
  auto it = requests_.find(request_id);
  if (it == requests_.end()) throw NotFound("finish: request id " + std::to_string(request_id) + " is not in flight");
  if (it->second.prefill_pending) settle_prefill(it->second, now_s);
  const InFlight& f = it->second;
  table_.in_flight_[f.slot] -= 1;
  table_.active_blocks_[f.slot] -= f.blocks;
  requests_.erase(it);
}

}  // namespace vcore::routing
