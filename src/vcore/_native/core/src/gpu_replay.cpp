// Native one-pass trace replay and the placement policies (see vcore/gpu_replay.h).
//
// The per-node policy scores live in gpu_policy.cpp; this file owns the loop: the tie order, the seeded random
// policy, the FGD score caches and gpu-clustering's per-node class counts.
#include "vcore/gpu_replay.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>

#include "vcore/gpu_policy.h"

namespace vcore {

namespace {

// splitmix64: small, fast, identical on every platform (std distributions are implementation-defined).
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) {  // unbiased, n >= 1
    const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % n;
    uint64_t x;
    do x = next();
    while (x >= limit);
    return x % n;
  }
};

void validate_request(const GpuRequest& r, size_t i) {
  const std::string at = "pod " + std::to_string(i) + ": ";
  if (r.cpu_milli < 0) throw std::invalid_argument(at + "cpu_milli is negative");
  if (r.memory < 0) throw std::invalid_argument(at + "memory is negative");
  if (r.gpu_milli < 0 || r.gpu_milli > kGpuMilli) throw std::invalid_argument(at + "gpu_milli out of range 0..1000");
  if (r.num_gpu < 0 || r.num_gpu > kMaxGpusPerNode) throw std::invalid_argument(at + "num_gpu out of range 0..64");
  if (r.num_gpu > 1 && r.gpu_milli > 0 && r.gpu_milli < kGpuMilli)
    throw std::invalid_argument(at + "a fractional gpu_milli needs num_gpu 1");
}

struct Replayer {
  GpuInventory& inv;
  const TargetWorkload& tw;
  const ReplayOptions& opt;
  int32_t N;
  std::vector<double> fnode;
  std::vector<int32_t> node_ver;
  // FGD score cache per (node, request spec): valid while the node's version is unchanged.
  int32_t n_cached_specs = 0;
  std::vector<int32_t> cache_ver;
  std::vector<int64_t> cache_score;
  std::vector<uint64_t> cache_mask;
  // gpu-clustering: per node, number of GPU pods per class (0 = shared, k = k whole GPUs) and distinct classes
  std::vector<int32_t> tag_count;
  std::vector<int32_t> n_tags;
  Rng rng;

  VcoreKnobs knobs;

  Replayer(GpuInventory& i, const TargetWorkload& t, const ReplayOptions& o)
      : inv(i), tw(t), opt(o), N(i.n_nodes()), rng(o.seed) {
    double cpu = 0.0;
    for (int32_t n = 0; n < N; ++n) cpu += double(inv.cpu_cap_[n]);
    knobs = knobs_for_pressure({o.vcore_scale, o.vcore_pack_points, o.vcore_balance_points},
                               cpu_pressure(tw, cpu, double(inv.total_gpu_milli())));
  }

  void refresh_fragment(int32_t n) {
    fnode[n] = node_fragment(inv.cpu_free_[n], inv.node_model_[n], inv.gpu_free(n), inv.n_gpus(n), tw);
  }

  int64_t fgd_cached(int32_t n, const GpuRequest& r, int32_t spec, uint64_t* mask) {
    if (spec < n_cached_specs) {
      const size_t k = size_t(spec) * N + n;
      if (cache_ver[k] == node_ver[n]) {
        *mask = cache_mask[k];
        return cache_score[k];
      }
      const int64_t s = fgd_node_score(inv, n, r, tw, fnode[n], mask);
      cache_ver[k] = node_ver[n];
      cache_score[k] = s;
      cache_mask[k] = *mask;
      return s;
    }
    return fgd_node_score(inv, n, r, tw, fnode[n], mask);
  }

  // Score of node n under a policy without the fragment measure, and the device set it would take.
  int64_t policy_score(int32_t n, const GpuRequest& r, uint64_t* m) const {
    const int32_t tag = r.fractional() ? 0 : r.num_gpu;
    const bool same_class = !tag_count.empty() && tag_count[size_t(n) * (kMaxGpusPerNode + 1) + tag] > 0;
    return fragment_free_score(opt.policy, inventory_view(inv, n), r, inventory_options(inv, n, r), same_class,
                               n_tags.empty() ? 0 : n_tags[n], m);
  }

  // vcore: cached exact fragment delta of the best device set per (node, request spec).
  std::vector<double> cache_delta;
  double vcore_delta(int32_t n, const GpuRequest& r, int32_t spec, uint64_t* mask) {
    if (spec < n_cached_specs) {
      const size_t k = size_t(spec) * N + n;
      if (cache_ver[k] == node_ver[n]) {
        *mask = cache_mask[k];
        return cache_delta[k];
      }
      const double d = fgd_best_delta(inv, n, r, tw, fnode[n], mask);
      cache_ver[k] = node_ver[n];
      cache_delta[k] = d;
      cache_mask[k] = *mask;
      return d;
    }
    return fgd_best_delta(inv, n, r, tw, fnode[n], mask);
  }
  ReplayResult run(const std::vector<GpuRequest>& pods, const std::vector<int32_t>& order) {
    const size_t P = pods.size();
    ReplayResult out;
    out.node_idx.assign(P, -1);
    out.dev_mask.assign(P, 0);
    out.frag_after.assign(P, 0.0);
    out.free_after.assign(P, 0);
    fnode.assign(N, 0.0);
    node_ver.assign(N, 0);
    double frag_total = 0.0;
    int64_t free_total = 0;
    for (int32_t n = 0; n < N; ++n) {
      refresh_fragment(n);
      frag_total += fnode[n];
      free_total += inv.free_gpu_milli(n);
    }
    const bool fgd_like = opt.policy == GpuPolicy::kFgd || opt.policy == GpuPolicy::kVcore;
    std::vector<int32_t> spec_of(P, 0);
    if (fgd_like) {
      std::map<std::tuple<int64_t, int32_t, int32_t, uint64_t>, int32_t> ids;
      for (size_t p = 0; p < P; ++p) {
        const auto& r = pods[p];
        auto key = std::make_tuple(r.cpu_milli, r.num_gpu, r.gpu_milli, r.model_mask);
        auto it = ids.emplace(key, int32_t(ids.size())).first;
        spec_of[p] = it->second;
      }
      const size_t budget = size_t(1) << 23;  // cache entries (about 170 MB worst case at 20 B each)
      n_cached_specs = N ? int32_t(std::min<size_t>(ids.size(), budget / size_t(N))) : 0;
      cache_ver.assign(size_t(n_cached_specs) * N, -1);
      cache_score.assign(size_t(n_cached_specs) * N, 0);
      cache_mask.assign(size_t(n_cached_specs) * N, 0);
      if (opt.policy == GpuPolicy::kVcore) cache_delta.assign(size_t(n_cached_specs) * N, 0.0);
    }
    if (opt.policy == GpuPolicy::kGpuClustering) {
      tag_count.assign(size_t(N) * (kMaxGpusPerNode + 1), 0);
      n_tags.assign(N, 0);
    }
    std::vector<int32_t> feasible;
    feasible.reserve(N);
    for (size_t p = 0; p < P; ++p) {
      const GpuRequest& r = pods[p];
      int32_t best = -1;
      uint64_t best_mask = 0;
      if (opt.policy == GpuPolicy::kRandom) {
        feasible.clear();
        for (int32_t k = 0; k < N; ++k)
          if (inv.fits(order[k], r)) feasible.push_back(order[k]);
        if (!feasible.empty()) {
          best = feasible[rng.below(feasible.size())];
          if (r.fractional()) {
            const int32_t* f = inv.gpu_free(best);
            int32_t cnt = 0, pick = -1;
            for (int32_t i = 0; i < inv.n_gpus(best); ++i)
              if (f[i] >= r.gpu_milli && rng.below(uint64_t(++cnt)) == 0) pick = i;
            best_mask = uint64_t(1) << pick;
          } else if (!r.cpu_only()) {
            best_mask = inv.whole_gpu_mask(best, r.num_gpu);
          }
        }
      } else if (opt.policy == GpuPolicy::kVcore) {
        int64_t bs = std::numeric_limits<int64_t>::min();
        for (int32_t k = 0; k < N; ++k) {
          const int32_t n = order[k];
          if (!inv.fits(n, r)) continue;
          uint64_t m = 0;
          const double d = vcore_delta(n, r, spec_of[p], &m);
          const int64_t s = vcore_score(inventory_view(inv, n), r, d, knobs);
          if (s > bs) {
            bs = s;
            best = n;
            best_mask = m;
          }
        }
      } else {
        int64_t best_score = std::numeric_limits<int64_t>::min();
        for (int32_t k = 0; k < N; ++k) {
          const int32_t n = order[k];
          if (!inv.fits(n, r)) continue;
          uint64_t m = 0;
          const int64_t s = opt.policy == GpuPolicy::kFgd ? fgd_cached(n, r, spec_of[p], &m) : policy_score(n, r, &m);
          if (s > best_score) {
            best_score = s;
            best = n;
            best_mask = m;
          }
          if (opt.policy == GpuPolicy::kFirstFit) break;
        }
      }
      if (best >= 0) {
        free_total -= inv.free_gpu_milli(best);
        inv.allocate(best, r, best_mask);
        free_total += inv.free_gpu_milli(best);
        ++node_ver[best];
        frag_total -= fnode[best];
        refresh_fragment(best);
        frag_total += fnode[best];
        if (!tag_count.empty() && !r.cpu_only()) {
          int32_t& c = tag_count[size_t(best) * (kMaxGpusPerNode + 1) + (r.fractional() ? 0 : r.num_gpu)];
          if (c++ == 0) ++n_tags[best];
        }
      }
      out.node_idx[p] = best;
      out.dev_mask[p] = best_mask;
      out.frag_after[p] = frag_total;
      out.free_after[p] = free_total;
    }
    return out;
  }
};

void check_inputs(const GpuInventory& inv, const std::vector<GpuRequest>& pods, const std::vector<int32_t>& order,
                  const TargetWorkload& tw) {
  tw.validate();
  const int32_t N = inv.n_nodes();
  if (order.size() != size_t(N))
    throw std::invalid_argument("order has " + std::to_string(order.size()) +
                                " entries, expected n_nodes = " + std::to_string(N));
  std::vector<char> seen(N, 0);
  for (size_t k = 0; k < order.size(); ++k) {
    const int32_t n = order[k];
    if (n < 0 || n >= N || seen[n])
      throw std::invalid_argument("order is not a permutation of node indices (entry " + std::to_string(k) + ")");
    seen[n] = 1;
  }
  for (size_t i = 0; i < pods.size(); ++i) validate_request(pods[i], i);
}

}  // namespace

ReplayResult replay_trace(GpuInventory inv, const std::vector<GpuRequest>& pods, const std::vector<int32_t>& order,
                          const TargetWorkload& tw, const ReplayOptions& opt) {
  check_inputs(inv, pods, order, tw);
  Replayer rp(inv, tw, opt);
  return rp.run(pods, order);
}

void fgd_scores(const GpuInventory& inv, const GpuRequest& r, const TargetWorkload& tw, std::vector<int64_t>* score,
                std::vector<uint64_t>* dev_mask) {
  tw.validate();
  validate_request(r, 0);
  const int32_t N = inv.n_nodes();
  score->assign(N, -1);
  dev_mask->assign(N, 0);
  for (int32_t n = 0; n < N; ++n) {
    if (!inv.fits(n, r)) continue;
    const double fb = node_fragment(inv.cpu_free_[n], inv.node_model_[n], inv.gpu_free(n), inv.n_gpus(n), tw);
    (*score)[n] = fgd_node_score(inv, n, r, tw, fb, &(*dev_mask)[n]);
  }
}

}  // namespace vcore
