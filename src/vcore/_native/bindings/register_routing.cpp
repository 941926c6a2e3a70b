// Routing bindings: submodule `routing` of vcore._native._core.
//
// The router core owns its arrays; Python passes block hashes as integer arrays (copied before the GIL is
// released) and gets decisions back as small lists. Every entry point that touches the router takes its mutex
// with the GIL released, so a proxy's other threads keep running while a decision is computed.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <string>
#include <vector>

#include "registry.h"
#include "vcore/errors.h"
#include "vcore/routing/block_hash.h"
#include "vcore/routing/router.h"

namespace py = pybind11;
namespace vr = vcore::routing;

namespace vcore_bindings {
namespace {

template <class T>
std::vector<T> int_vector(const py::handle& obj, const char* name, bool none_is_empty = false) {
  if (obj.is_none()) {
    if (none_is_empty) return {};
    throw py::type_error(std::string(name) + ": expected an array-like of integers, got None");
  }
  py::array arr = py::array::ensure(obj);
  if (!arr) throw py::type_error(std::string(name) + ": expected an array-like of integers");
  if (arr.ndim() != 1) throw py::value_error(std::string(name) + ": expected a 1-d array");
  if (arr.size() == 0) return {};
  const char kind = arr.dtype().kind();
  if (kind != 'i' && kind != 'u')
    throw py::type_error(std::string(name) + ": expected integers, got dtype " + std::string(py::str(arr.dtype())));
  auto typed = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(arr);
  if (!typed) throw py::type_error(std::string(name) + ": cannot convert to the required integer dtype");
  return std::vector<T>(typed.data(), typed.data() + typed.size());
}

std::vector<double> float_vector(const py::handle& obj, const char* name) {
  py::array arr = py::array::ensure(obj);
  if (!arr || arr.ndim() != 1) throw py::type_error(std::string(name) + ": expected a 1-d array of numbers");
  auto typed = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(arr);
  if (!typed) throw py::type_error(std::string(name) + ": cannot convert to float64");
  return std::vector<double>(typed.data(), typed.data() + typed.size());
}

template <class T>
py::array_t<T> to_array(const std::vector<T>& v) {
  py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
  if (!v.empty()) std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

py::tuple counts_tuple(const vr::FilterCounts& c) { return py::make_tuple(c.unhealthy, c.role, c.lora, c.waiting); }

vr::RouteRequest make_request(const std::vector<uint64_t>& hashes, int64_t prompt_tokens, int32_t lora,
                              int32_t session_slot, const std::vector<int32_t>& cand, bool has_cand, double now_s) {
  if (prompt_tokens < 0) throw py::value_error("prompt_tokens: must be >= 0");
  if (!std::isfinite(now_s)) throw py::value_error("now_s: must be a finite number");
  vr::RouteRequest r;
  r.hashes = hashes.data();
  r.n_hashes = hashes.size();
  r.prompt_tokens = prompt_tokens;
  r.lora = lora;
  r.session_slot = session_slot;
  r.now_s = now_s;
  if (has_cand) {
    r.candidates = cand.data();
    r.n_candidates = cand.size();
  }
  return r;
}

}  // namespace

void register_routing(py::module_& m) {
  py::module_ g = m.def_submodule("routing", "LLM request routing: endpoints, prefix index, scorers, policies");

  g.def(
      "hash_blocks",
      [](const std::string& text, int64_t block_bytes, int64_t max_blocks, const std::string& salt) {
        std::vector<uint64_t> out;
        {
          py::gil_scoped_release nogil;  // works on its own copies of text and salt
          out = vr::hash_blocks(text, block_bytes, max_blocks, salt);
        }
        return to_array(out);
      },
      py::arg("text"), py::arg("block_bytes"), py::arg("max_blocks") = 0, py::arg("salt") = "",
      "Chained 64-bit hashes of the UTF-8 text in blocks of block_bytes (uint64[n_blocks]).");

  py::class_<vr::RoutingPolicy>(g, "Policy", "A routing policy: kind, filters, scorer weights and their arguments.")
      .def(py::init([](const std::string& kind, int32_t max_waiting, double w_prefix, double w_least_request,
                       double w_kv_cache, double w_latency, double w_lora, double w_prefill_cost,
                       int32_t prefix_max_blocks, int32_t prefix_top_k, double latency_ttft_factor, double queue_weight,
                       double overlap_weight, int32_t top_n, bool session_affinity, int64_t pd_min_prompt_tokens) {
             vr::RoutingPolicy p;
             p.kind = vr::parse_policy_kind(kind);
             p.max_waiting = max_waiting;
             p.w_prefix = w_prefix;
             p.w_least_request = w_least_request;
             p.w_kv_cache = w_kv_cache;
             p.w_latency = w_latency;
             p.w_lora = w_lora;
             p.w_prefill_cost = w_prefill_cost;
             p.prefix_max_blocks = prefix_max_blocks;
             p.prefix_top_k = prefix_top_k;
             p.latency_ttft_factor = latency_ttft_factor;
             p.queue_weight = queue_weight;
             p.overlap_weight = overlap_weight;
             p.top_n = top_n;
             p.session_affinity = session_affinity;
             p.pd_min_prompt_tokens = pd_min_prompt_tokens;
             p.validate();
             return p;
           }),
           py::arg("kind") = "scored", py::arg("max_waiting") = 0, py::arg("w_prefix") = 0.0,
           py::arg("w_least_request") = 0.0, py::arg("w_kv_cache") = 0.0, py::arg("w_latency") = 0.0,
           py::arg("w_lora") = 0.0, py::arg("w_prefill_cost") = 0.0, py::arg("prefix_max_blocks") = 0,
           py::arg("prefix_top_k") = 0, py::arg("latency_ttft_factor") = 0.5, py::arg("queue_weight") = 100.0,
           py::arg("overlap_weight") = 1.0, py::arg("top_n") = 5, py::arg("session_affinity") = true,
           py::arg("pd_min_prompt_tokens") = 0)
      .def_property_readonly("kind",
                             [](const vr::RoutingPolicy& p) {
                               switch (p.kind) {
                                 case vr::PolicyKind::kRandom:
                                   return std::string("random");
                                 case vr::PolicyKind::kRoundRobin:
                                   return std::string("round-robin");
                                 case vr::PolicyKind::kDynamo:
                                   return std::string("dynamo");
                                 default:
                                   return std::string("scored");
                               }
                             })
      .def_readonly("max_waiting", &vr::RoutingPolicy::max_waiting)
      .def_readonly("w_prefix", &vr::RoutingPolicy::w_prefix)
      .def_readonly("w_least_request", &vr::RoutingPolicy::w_least_request)
      .def_readonly("w_kv_cache", &vr::RoutingPolicy::w_kv_cache)
      .def_readonly("w_latency", &vr::RoutingPolicy::w_latency)
      .def_readonly("w_lora", &vr::RoutingPolicy::w_lora)
      .def_readonly("w_prefill_cost", &vr::RoutingPolicy::w_prefill_cost)
      .def_readonly("prefix_max_blocks", &vr::RoutingPolicy::prefix_max_blocks)
      .def_readonly("prefix_top_k", &vr::RoutingPolicy::prefix_top_k)
      .def_readonly("latency_ttft_factor", &vr::RoutingPolicy::latency_ttft_factor)
      .def_readonly("queue_weight", &vr::RoutingPolicy::queue_weight)
      .def_readonly("overlap_weight", &vr::RoutingPolicy::overlap_weight)
      .def_readonly("top_n", &vr::RoutingPolicy::top_n)
      .def_readonly("session_affinity", &vr::RoutingPolicy::session_affinity)
      .def_readonly("pd_min_prompt_tokens", &vr::RoutingPolicy::pd_min_prompt_tokens);

  py::class_<vr::Router>(g, "Router", "Endpoints, prefix index and request bookkeeping of one router.")
      .def(py::init([](int64_t block_tokens, int64_t prefix_capacity_blocks, uint64_t seed) {
             vr::RouterOptions o;
             o.block_tokens = block_tokens;
             o.prefix_capacity_blocks = prefix_capacity_blocks;
             o.seed = seed;
             return std::make_unique<vr::Router>(o);
           }),
           py::arg("block_tokens") = 16, py::arg("prefix_capacity_blocks") = 50000, py::arg("seed") = 0)
      .def_property_readonly("block_tokens", [](const vr::Router& r) { return r.options().block_tokens; })
      .def_property_readonly("prefix_capacity_blocks",
                             [](const vr::Router& r) { return r.options().prefix_capacity_blocks; })
      .def_property_readonly("n_slots", [](const vr::Router& r) { return r.table().n_slots(); })
      .def_property_readonly("n_live", [](const vr::Router& r) { return r.table().n_live(); })
      .def_property_readonly("n_in_flight", [](const vr::Router& r) { return r.n_in_flight(); })
      .def_property_readonly("decisions", [](const vr::Router& r) { return r.decisions(); })
      .def(
          "add_endpoint",
          [](vr::Router& r, const std::string& name, const std::string& role, int32_t pd_group, int32_t domain,
             int32_t max_loras, double prefill_tokens_per_s, double prefill_overhead_s,
             double prefill_attention_s_per_token_pair) {
            vr::EndpointSpec s{name,      vr::parse_role(role), pd_group,           domain,
                               max_loras, prefill_tokens_per_s, prefill_overhead_s, prefill_attention_s_per_token_pair};
            std::lock_guard<std::mutex> lock(r.mutex());
            return r.add_endpoint(s);
          },
          py::arg("name"), py::arg("role") = "both", py::arg("pd_group") = -1, py::arg("domain") = -1,
          py::arg("max_loras") = 0, py::arg("prefill_tokens_per_s") = 1.0, py::arg("prefill_overhead_s") = 0.0,
          py::arg("prefill_attention_s_per_token_pair") = 0.0)
      .def(
          "remove_endpoint",
          [](vr::Router& r, int32_t slot) {
            std::lock_guard<std::mutex> lock(r.mutex());
            r.remove_endpoint(slot);
          },
          py::arg("slot"))
      .def(
          "slot_of",
          [](const vr::Router& r, const std::string& name) {
            std::lock_guard<std::mutex> lock(r.mutex());
            return r.table().slot_of(name);
          },
          py::arg("name"))
      .def(
          "names",
          [](const vr::Router& r) {
            std::lock_guard<std::mutex> lock(r.mutex());
            return r.table().name_;
          },
          "Endpoint name per slot ('' for a free slot).")
      .def(
          "set_health",
          [](vr::Router& r, int32_t slot, bool healthy) {
            std::lock_guard<std::mutex> lock(r.mutex());
            r.table().check(slot);
            r.table().healthy_[slot] = healthy ? 1 : 0;
          },
          py::arg("slot"), py::arg("healthy"))
      .def(
          "set_loras",
          [](vr::Router& r, int32_t slot, const std::vector<std::string>& names) {
            std::lock_guard<std::mutex> lock(r.mutex());
            r.set_loras(slot, names);
          },
          py::arg("slot"), py::arg("names"))
      .def(
          "lora_id",
          [](vr::Router& r, const std::string& name) {
            std::lock_guard<std::mutex> lock(r.mutex());
            return r.lora_id(name);
          },
          py::arg("name"))
      .def(
          "update_metrics",
          [](vr::Router& r, py::handle slots, py::handle waiting, py::handle running, py::handle kv_usage,
             py::handle ttft_us, py::handle itl_us) {
            auto s = int_vector<int32_t>(slots, "slots");
            auto w = int_vector<int32_t>(waiting, "waiting");
            auto ru = int_vector<int32_t>(running, "running");
            auto kv = float_vector(kv_usage, "kv_usage");
            auto tt = int_vector<int64_t>(ttft_us, "ttft_us");
            auto it = int_vector<int64_t>(itl_us, "itl_us");
            const size_t n = s.size();
            if (w.size() != n || ru.size() != n || kv.size() != n || tt.size() != n || it.size() != n)
              throw py::value_error(
                  "update_metrics: slots, waiting, running, kv_usage, ttft_us and itl_us "
                  "must have equal lengths");
            for (size_t i = 0; i < n; ++i) {
              if (w[i] < 0 || ru[i] < 0 || tt[i] < 0 || it[i] < 0)
                throw py::value_error("update_metrics: waiting, running, ttft_us and itl_us must be >= 0");
              if (!(kv[i] >= 0 && kv[i] <= 1)) throw py::value_error("update_metrics: kv_usage must be in [0, 1]");
            }
            std::lock_guard<std::mutex> lock(r.mutex());
            auto& t = r.table();
            for (int32_t slot : s) t.check(slot);  // validate all before changing any
            for (size_t i = 0; i < n; ++i) {
              t.waiting_[s[i]] = w[i];
              t.running_[s[i]] = ru[i];
              t.kv_usage_[s[i]] = kv[i];
              t.ttft_us_[s[i]] = tt[i];
              t.itl_us_[s[i]] = it[i];
            }
          },
          py::arg("slots"), py::arg("waiting"), py::arg("running"), py::arg("kv_usage"), py::arg("ttft_us"),
          py::arg("itl_us"), "Engine-reported metrics of several endpoints at once (all validated first).")
      .def(
          "route",
          [](vr::Router& r, const vr::RoutingPolicy& p, py::handle hashes, int64_t prompt_tokens, int32_t lora,
             int32_t session_slot, py::handle candidates, double now_s) {
            auto h = int_vector<uint64_t>(hashes, "hashes");
            auto c = int_vector<int32_t>(candidates, "candidates", true);
            auto req = make_request(h, prompt_tokens, lora, session_slot, c, !candidates.is_none(), now_s);
            vr::Decision d;
            {
              py::gil_scoped_release nogil;  // the router's own arrays under its mutex; inputs are copies
              std::lock_guard<std::mutex> lock(r.mutex());
              d = r.route(p, req);
            }
            return py::make_tuple(d.slots, d.match, d.score, d.n_candidates, counts_tuple(d.filtered),
                                  d.waiting_filter_relaxed);
          },
          py::arg("policy"), py::arg("hashes"), py::arg("prompt_tokens"), py::arg("lora") = -1,
          py::arg("session_slot") = -1, py::arg("candidates") = py::none(), py::arg("now_s") = 0.0,
          "(slots, matched_blocks, scores, n_candidates, (unhealthy, role, lora, waiting), waiting_relaxed)")
      .def(
          "route_pd",
          [](vr::Router& r, const vr::RoutingPolicy& p, py::handle hashes, int64_t prompt_tokens, int32_t lora,
             int32_t session_slot, py::handle candidates, double now_s) {
            auto h = int_vector<uint64_t>(hashes, "hashes");
            auto c = int_vector<int32_t>(candidates, "candidates", true);
            auto req = make_request(h, prompt_tokens, lora, session_slot, c, !candidates.is_none(), now_s);
            vr::PdDecision d;
            {
              py::gil_scoped_release nogil;  // as route()
              std::lock_guard<std::mutex> lock(r.mutex());
              d = r.route_pd(p, req);
            }
            return py::make_tuple(d.decode, d.prefill, d.prefill_match, d.n_candidates, counts_tuple(d.filtered));
          },
          py::arg("policy"), py::arg("hashes"), py::arg("prompt_tokens"), py::arg("lora") = -1,
          py::arg("session_slot") = -1, py::arg("candidates") = py::none(), py::arg("now_s") = 0.0,
          "(decode_slots, prefill_slots (-1 = no prefill leg), prefill_matched_blocks, n_candidates, counts)")
      .def(
          "match",
          [](vr::Router& r, py::handle hashes, py::handle candidates) {
            auto h = int_vector<uint64_t>(hashes, "hashes");
            auto c = int_vector<int32_t>(candidates, "candidates", true);
            std::vector<int32_t> out;
            {
              py::gil_scoped_release nogil;  // as route()
              std::lock_guard<std::mutex> lock(r.mutex());
              if (candidates.is_none())
                for (int32_t s = 0; s < r.table().n_slots(); ++s)
                  if (r.table().live(s)) c.push_back(s);
              for (int32_t s : c) r.table().check(s);
              std::vector<int32_t> sorted = c;
              std::sort(sorted.begin(), sorted.end());
              if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
                throw vcore::Invalid("candidates: an endpoint slot appears twice");
              out.resize(c.size());
              r.index().match(h.data(), h.size(), c.data(), c.size(), out.data());
            }
            return to_array(out);
          },
          py::arg("hashes"), py::arg("candidates") = py::none(),
          "Leading blocks of `hashes` each candidate holds (int32, candidate order; all live slots by default).")
      .def(
          "dispatch",
          [](vr::Router& r, uint64_t request_id, int32_t slot, py::handle hashes, int64_t prompt_tokens,
             int32_t matched_blocks, int64_t output_tokens, bool record_prefix, double now_s) {
            auto h = int_vector<uint64_t>(hashes, "hashes");
            py::gil_scoped_release nogil;  // as route()
            std::lock_guard<std::mutex> lock(r.mutex());
            r.dispatch(request_id, slot, h.data(), h.size(), prompt_tokens, matched_blocks, output_tokens,
                       record_prefix, now_s);
          },
          py::arg("request_id"), py::arg("slot"), py::arg("hashes"), py::arg("prompt_tokens"),
          py::arg("matched_blocks"), py::arg("output_tokens") = 0, py::arg("record_prefix") = true,
          py::arg("now_s") = 0.0)
      .def(
          "first_token",
          [](vr::Router& r, uint64_t request_id, double now_s) {
            std::lock_guard<std::mutex> lock(r.mutex());
            r.first_token(request_id, now_s);
          },
          py::arg("request_id"), py::arg("now_s") = 0.0)
      .def(
          "finish",
          [](vr::Router& r, uint64_t request_id, double now_s) {
            std::lock_guard<std::mutex> lock(r.mutex());
            r.finish(request_id, now_s);
          },
          py::arg("request_id"), py::arg("now_s") = 0.0)
      .def(
          "record_blocks",
          [](vr::Router& r, int32_t slot, py::handle hashes) {
            auto h = int_vector<uint64_t>(hashes, "hashes");
            std::lock_guard<std::mutex> lock(r.mutex());
            r.table().check(slot);
            r.index().insert(slot, h.data(), h.size());
          },
          py::arg("slot"), py::arg("hashes"), "KV event: the endpoint stored these blocks.")
      .def(
          "remove_blocks",
          [](vr::Router& r, int32_t slot, py::handle hashes) {
            auto h = int_vector<uint64_t>(hashes, "hashes");
            std::lock_guard<std::mutex> lock(r.mutex());
            r.table().check(slot);
            r.index().remove(slot, h.data(), h.size());
          },
          py::arg("slot"), py::arg("hashes"), "KV event: the endpoint evicted these blocks.")
      .def(
          "clear_blocks",
          [](vr::Router& r, int32_t slot) {
            std::lock_guard<std::mutex> lock(r.mutex());
            r.table().check(slot);
            r.index().clear_endpoint(slot);
          },
          py::arg("slot"), "KV event: the endpoint dropped its whole cache.")
      .def(
          "endpoint_blocks",
          [](const vr::Router& r, int32_t slot) {
            std::lock_guard<std::mutex> lock(r.mutex());
            r.table().check(slot);
            return to_array(r.index().endpoint_blocks(slot));
          },
          py::arg("slot"), "The endpoint's recorded block hashes, most recently used first.")
      .def(
          "state",
          [](const vr::Router& r) {
            std::lock_guard<std::mutex> lock(r.mutex());
            const auto& t = r.table();
            std::vector<int8_t> role(t.role_.size());
            for (size_t i = 0; i < role.size(); ++i) role[i] = static_cast<int8_t>(t.role_[i]);
            std::vector<int64_t> blocks(t.live_.size());
            for (size_t i = 0; i < blocks.size(); ++i) blocks[i] = r.index().endpoint_size(static_cast<int32_t>(i));
            py::dict d;
            d["live"] = to_array(t.live_);
            d["healthy"] = to_array(t.healthy_);
            d["role"] = to_array(role);
            d["pd_group"] = to_array(t.pd_group_);
            d["domain"] = to_array(t.domain_);
            d["max_loras"] = to_array(t.max_loras_);
            d["waiting"] = to_array(t.waiting_);
            d["running"] = to_array(t.running_);
            d["kv_usage"] = to_array(t.kv_usage_);
            d["ttft_us"] = to_array(t.ttft_us_);
            d["itl_us"] = to_array(t.itl_us_);
            d["in_flight"] = to_array(t.in_flight_);
            d["pending_prefill_tokens"] = to_array(t.pending_prefill_tokens_);
            d["active_blocks"] = to_array(t.active_blocks_);
            d["prefill_backlog_s"] = to_array(t.prefill_backlog_s_);
            d["prefill_busy_until_s"] = to_array(t.prefill_busy_until_s_);
            d["prefix_blocks"] = to_array(blocks);
            return d;
          },
          "Copies of the per-slot arrays (a snapshot; free slots included, see 'live').");
}

}  // namespace vcore_bindings
