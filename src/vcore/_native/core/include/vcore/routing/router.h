// The routing core: endpoints, prefix index, policies and the request bookkeeping behind one object.
//
// One route() call filters the candidate endpoints (health, role, LoRA room, Kthena's waiting-queue cap),
// computes every enabled score for all of them in one pass each, and returns the best top_n (the fallbacks a
// proxy retries in order). route_pd() pairs a decode endpoint with the best prefill endpoint of its PD group.
// dispatch / first_token / finish keep the router-tracked load and the prefix index in step with what was sent.
// Times (now_s) are the caller's clock in seconds (monotonic; virtual time in a replay): with them the router
// knows how far the prefill at the head of each endpoint's queue has gone (see expected_wait_s).
// Ties are broken by a seeded per-decision key, so equal inputs give equal decisions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "vcore/routing/endpoints.h"
#include "vcore/routing/prefix_index.h"

namespace vcore::routing {

enum class PolicyKind : int8_t { kScored = 0, kRandom = 1, kRoundRobin = 2, kDynamo = 3 };

PolicyKind parse_policy_kind(const std::string& name);

struct RoutingPolicy {
  PolicyKind kind = PolicyKind::kScored;
  int32_t max_waiting = 0;  // filter: waiting >= max_waiting is out (Kthena: 10); 0 = off
  // score weights (0 = scorer off)
  double w_prefix = 0, w_least_request = 0, w_kv_cache = 0, w_latency = 0, w_lora = 0, w_prefill_cost = 0;
  int32_t prefix_max_blocks = 0;     // blocks of the prompt the prefix scorer looks at (Kthena: 128); 0 = all
  int32_t prefix_top_k = 0;          // only the k longest matches score (Kthena: 5); 0 = all
  double latency_ttft_factor = 0.5;  // Kthena TTFTTPOTWeightFactor
  double queue_weight = 100.0;       // Kthena least-request weight of max(in_flight - running, 0)
  double overlap_weight = 1.0;       // Dynamo overlap_score_weight
  int32_t top_n = 5;                 // ranked endpoints returned (fallbacks)
  bool session_affinity = true;      // a healthy session endpoint that passes the filters goes first
  int64_t pd_min_prompt_tokens = 0;  // PD: shorter prompts skip the prefill leg
  void validate() const;             // Invalid on a bad value
};

struct FilterCounts {
  int32_t unhealthy = 0, role = 0, lora = 0, waiting = 0;
};

struct Decision {
  std::vector<int32_t> slots;  // ranked, best first
  std::vector<int32_t> match;  // matched prefix blocks per ranked slot (uncapped)
  std::vector<double> score;   // total score (kScored), -cost (kDynamo), 0 (random, round-robin)
  int32_t n_candidates = 0;
  FilterCounts filtered;
  bool waiting_filter_relaxed = false;  // every endpoint was over max_waiting: ranked without that filter
};

struct PdDecision {
  std::vector<int32_t> decode, prefill;  // pairs, best first; prefill -1 = no prefill leg (short prompt)
  std::vector<int32_t> prefill_match;    // matched blocks on the prefill endpoint (on decode when prefill -1)
  int32_t n_candidates = 0;
  FilterCounts filtered;
};

struct RouteRequest {
  const uint64_t* hashes = nullptr;
  size_t n_hashes = 0;
  int64_t prompt_tokens = 0;
  int32_t lora = -1;                    // interned adapter id, -1 = base model
  int32_t session_slot = -1;            // endpoint that served this session before, -1 = none
  const int32_t* candidates = nullptr;  // nullptr: every live endpoint
  size_t n_candidates = 0;
  double now_s = 0;  // the caller's clock
};

struct RouterOptions {
  int64_t block_tokens = 16;               // tokens per hashed block (to turn matched blocks into tokens)
  int64_t prefix_capacity_blocks = 50000;  // per endpoint (Kthena's maxHashCacheSize default)
  uint64_t seed = 0;
};

class Router {
 public:
  explicit Router(const RouterOptions& opt);

  const RouterOptions& options() const { return opt_; }
  EndpointTable& table() { return table_; }
  const EndpointTable& table() const { return table_; }
  PrefixIndex& index() { return index_; }
  const PrefixIndex& index() const { return index_; }
  std::mutex& mutex() const { return mutex_; }

  int32_t add_endpoint(const EndpointSpec& spec);
  void remove_endpoint(int32_t slot);        // also forgets its prefix record and in-flight requests
  int32_t lora_id(const std::string& name);  // interns
  void set_loras(int32_t slot, const std::vector<std::string>& names);

  Decision route(const RoutingPolicy& p, const RouteRequest& r);
  PdDecision route_pd(const RoutingPolicy& p, const RouteRequest& r);

  // Request bookkeeping (request ids are the caller's, unique while in flight).
  void dispatch(uint64_t request_id, int32_t slot, const uint64_t* hashes, size_t n_hashes, int64_t prompt_tokens,
                int32_t matched_blocks, int64_t output_tokens, bool record_prefix, double now_s);
  void first_token(uint64_t request_id, double now_s);  // idempotent
  void finish(uint64_t request_id, double now_s);       // NotFound for an unknown id

  // Expected seconds from now_s until `slot` starts a new request's prefill: its prefills sent and not yet
  // answered, as estimated at dispatch, less the progress of the one at the head of its queue (engines prefill
  // first come, first served). The head's progress is now_s - when it started (its dispatch on an idle endpoint,
  // or the previous first token), at most its estimate: an overdue head leaves the others' work in full.
  double expected_wait_s(int32_t slot, double now_s) const;
  int64_t n_in_flight() const { return static_cast<int64_t>(requests_.size()); }
  uint64_t decisions() const { return decisions_; }

 private:
  struct InFlight {
    int32_t slot;
    int64_t uncached_tokens;
    int64_t blocks;
    double prefill_s;  // estimated at dispatch
    uint64_t seq;      // dispatch sequence number (request ids may be reused once finished)
    bool prefill_pending;
  };
  // The prefill of `f` is answered (first token) or abandoned (finished before it): update the backlog.
  void settle_prefill(InFlight& f, double now_s);
  // Candidate slots after the filters; fills counts. waiting filter relaxed when it alone empties the set.
  std::vector<int32_t> filter(const RoutingPolicy& p, const RouteRequest& r, Role wanted, bool pd, FilterCounts* counts,
                              bool* relaxed) const;
  // Ranks `cand` by the policy; returns ranked positions into cand and fills score/match per position.
  std::vector<int32_t> rank(const RoutingPolicy& p, const RouteRequest& r, const std::vector<int32_t>& cand,
                            std::vector<int32_t>* match, std::vector<double>* total, uint64_t decision);

  RouterOptions opt_;
  EndpointTable table_;
  PrefixIndex index_;
  std::unordered_map<std::string, int32_t> lora_ids_;
  std::unordered_map<uint64_t, InFlight> requests_;
  std::vector<std::deque<std::pair<uint64_t, uint64_t>>> prefill_queue_;  // per slot: (request id, seq), FIFO
  uint64_t dispatches_ = 0;
  uint64_t decisions_ = 0;
  uint64_t round_robin_ = 0;
  mutable std::mutex mutex_;
};

}  // namespace vcore::routing
