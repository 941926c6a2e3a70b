// GPU placement policies over one node's GPU state (see vcore/gpu_policy.h).
//
//   best-fit       int(100 * (1 - 0.5 (cpu_free-cpu)/128000 - 0.5 (gpu_free-gpu)/8000)), tightest GPU
//   dot-product    Tetris: 1 - <node_free, request>/2 on (cpu/128000, gpu/8000), per candidate GPU group
//   gpu-packing    shared GPUs > idle GPUs of used nodes > idle nodes
//   gpu-clustering prefer nodes already running pods of the same GPU-count class
//   binpack/spread Volcano-style most/least allocated over cpu, memory, GPU; tightest/emptiest card
//   fgd            int(100 * sigmoid((F_before - F_after)/1000)), device set of the best F_after
//   vcore          FGD's score on a blended target workload + GPU packing + CPU/GPU balance
#include "vcore/gpu_policy.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace vcore {
namespace {

constexpr double kMaxSpecCpu = 128000.0;
constexpr double kMaxSpecGpu = 8000.0;

inline bool has(uint64_t mask, int32_t i) { return (mask >> i) & 1u; }

}  // namespace

GpuPolicy parse_gpu_policy(const std::string& name) {
  static const std::map<std::string, GpuPolicy> names = {
      {"first-fit", GpuPolicy::kFirstFit},
      {"best-fit", GpuPolicy::kBestFit},
      {"random", GpuPolicy::kRandom},
      {"fgd", GpuPolicy::kFgd},
      {"dot-product", GpuPolicy::kDotProduct},
      {"gpu-packing", GpuPolicy::kGpuPacking},
      {"gpu-clustering", GpuPolicy::kGpuClustering},
      {"binpack", GpuPolicy::kBinpack},
      {"spread", GpuPolicy::kSpread},
      {"vcore", GpuPolicy::kVcore},
  };
  auto it = names.find(name);
  if (it == names.end()) throw std::invalid_argument("unknown GPU policy '" + name + "'");
  return it->second;
}

GpuNodeView inventory_view(const GpuInventory& inv, int32_t n) {
  GpuNodeView v;
  v.cpu_cap = inv.cpu_cap_[n];
  v.cpu_free = inv.cpu_free_[n];
  v.mem_cap = inv.mem_cap_[n];
  v.mem_free = inv.mem_free_[n];
  v.model = inv.node_model_[n];
  v.g = inv.n_gpus(n);
  v.free = inv.gpu_free(n);
  v.idle = inv.node_idle_[n];
  v.free_total = inv.free_gpu_milli(n);
  return v;
}

GpuOptions inventory_options(const GpuInventory& inv, int32_t n, const GpuRequest& r) {
  GpuOptions o;
  if (r.cpu_only()) return o;
  if (r.fractional()) {
    const int32_t* f = inv.gpu_free(n);
    for (int32_t i = 0; i < inv.n_gpus(n); ++i)
      if (f[i] >= r.gpu_milli) o.candidates |= uint64_t(1) << i;
  } else {
    o.whole = inv.whole_gpu_mask(n, r.num_gpu);
  }
  return o;
}

uint64_t pick_devices(const GpuNodeView& v, const GpuRequest& r, const GpuOptions& o, CardOrder order) {
  if (r.cpu_only()) return 0;
  if (!r.fractional()) return o.whole;
  int32_t best = -1;
  for (int32_t i = 0; i < v.g; ++i) {
    if (!has(o.candidates, i)) continue;
    if (best < 0) best = i;
    if (order == CardOrder::kFirst) break;
    if ((order == CardOrder::kTightest && v.free[i] < v.free[best]) ||
        (order == CardOrder::kEmptiest && v.free[i] > v.free[best]))
      best = i;
  }
  return best < 0 ? 0 : uint64_t(1) << best;
}

int64_t best_fit_score(const GpuNodeView& v, const GpuRequest& r) {
  double s = 0.0;
  s += (double(v.cpu_free) - double(r.cpu_milli)) / kMaxSpecCpu * 0.5;
  s += (double(v.free_total) - double(r.total_gpu_milli())) / kMaxSpecGpu * 0.5;
  return int64_t((1.0 - s) * 100.0);
}

int64_t dot_product_score(const GpuNodeView& v, const GpuRequest& r, const GpuOptions& o, uint64_t* mask) {
  const double pc = double(r.cpu_milli) / kMaxSpecCpu;
  const int64_t pg_milli = r.total_gpu_milli();
  const double pg = double(pg_milli) / kMaxSpecGpu;
  const double nc = double(v.cpu_free) / kMaxSpecCpu;
  double best = -1.0;
  uint64_t best_m = 0;
  if (pg_milli < kGpuMilli) {  // shared candidates: each partly used GPU that can host the slice
    for (int32_t i = 0; i < v.g; ++i) {
      if (v.free[i] >= kGpuMilli || (r.cpu_only() ? false : !has(o.candidates, i))) continue;
      const double cur = 1.0 - (nc * pc + double(v.free[i]) / kMaxSpecGpu * pg) / 2.0;
      if (cur > best) {
        best = cur;
        best_m = r.cpu_only() ? 0 : uint64_t(1) << i;
      }
    }
  }
  // the idle-GPU group: a fractional slice goes to the lowest idle candidate, whole GPUs to the fit rule's set
  uint64_t idle_m = 0;
  bool idle_ok = pg_milli <= int64_t(v.idle) * kGpuMilli;
  if (r.fractional()) {
    for (int32_t i = 0; i < v.g && !idle_m; ++i)
      if (v.free[i] == kGpuMilli && has(o.candidates, i)) idle_m = uint64_t(1) << i;
    idle_ok = idle_ok && idle_m != 0;
  } else if (!r.cpu_only()) {
    idle_m = o.whole;
  }
  if (idle_ok) {
    const double cur = 1.0 - (nc * pc + double(v.idle) * kGpuMilli / kMaxSpecGpu * pg) / 2.0;
    if (cur > best) {
      best = cur;
      best_m = idle_m;
    }
  }
  *mask = best_m;
  return best < 0 ? 0 : int64_t(100.0 * best);
}

int64_t gpu_packing_score(const GpuNodeView& v, const GpuRequest& r) {
  if (r.cpu_only()) return 0;
  if (v.idle == v.g) return std::max<int64_t>(100 / 3 - v.idle, v.idle);
  int32_t idx[kMaxGpusPerNode];  // GPUs the request would use, smallest free first (stable)
  for (int32_t i = 0; i < v.g; ++i) idx[i] = i;
  std::stable_sort(idx, idx + v.g, [&](int32_t a, int32_t b) { return v.free[a] < v.free[b]; });
  int32_t need = r.fractional() ? 1 : r.num_gpu;
  int32_t idle_used = 0;
  int64_t free_ratio = 0;
  for (int32_t k = 0; k < v.g && need > 0; ++k) {
    const int32_t i = idx[k];
    if (v.free[i] >= r.gpu_milli) {
      --need;
      if (v.free[i] == kGpuMilli) ++idle_used;
      free_ratio += int64_t(v.free[i]) * 100 / kGpuMilli;
    }
  }
  if (idle_used > 0) return std::max<int64_t>(100 / 2 - idle_used, 100 / 3);
  return std::max<int64_t>(100 - free_ratio / 10, 100 / 2);
}

int64_t gpu_clustering_score(const GpuNodeView& v, const GpuRequest& r, bool same_class, int32_t n_classes) {
  if (r.cpu_only()) return 0;
  const int64_t base = 25 * (int64_t(kMaxSpecGpu) - v.free_total) / int64_t(kMaxSpecGpu);
  if (same_class) return base + (n_classes == 1 ? 75 : 50);
  return base + (n_classes == 0 ? 25 : 0);
}

int64_t fragment_free_score(GpuPolicy policy, const GpuNodeView& v, const GpuRequest& r, const GpuOptions& o,
                            bool same_class, int32_t n_classes, uint64_t* mask) {
  switch (policy) {
    case GpuPolicy::kBestFit:
      *mask = pick_devices(v, r, o, CardOrder::kTightest);
      return best_fit_score(v, r);
    case GpuPolicy::kDotProduct:
      return dot_product_score(v, r, o, mask);
    case GpuPolicy::kGpuPacking:
      *mask = pick_devices(v, r, o, CardOrder::kTightest);
      return gpu_packing_score(v, r);
    case GpuPolicy::kGpuClustering:
      *mask = pick_devices(v, r, o, CardOrder::kTightest);
      return gpu_clustering_score(v, r, same_class, n_classes);
    case GpuPolicy::kBinpack:
      *mask = pick_devices(v, r, o, CardOrder::kTightest);
      return int64_t(100.0 * allocated_after(v, r));
    case GpuPolicy::kSpread:
      *mask = pick_devices(v, r, o, CardOrder::kEmptiest);
      return int64_t(100.0 * (1.0 - allocated_after(v, r)));
    default:  // first-fit, random
      *mask = pick_devices(v, r, o, CardOrder::kFirst);
      return 0;
  }
}

double allocated_after(const GpuNodeView& v, const GpuRequest& r) {
  double s = 0.0;
  int k = 0;
  auto add = [&](double cap, double used, double req) {
    if (cap <= 0) return;
    s += (used + req) / cap;
    ++k;
  };
  add(double(v.cpu_cap), double(v.cpu_cap - v.cpu_free), double(r.cpu_milli));
  add(double(v.mem_cap), double(v.mem_cap - v.mem_free), double(r.memory));
  const double gcap = double(v.g) * kGpuMilli;
  add(gcap, gcap - double(v.free_total), double(r.total_gpu_milli()));
  return k ? s / k : 0.0;
}

int64_t fgd_score(double f_before, double f_after) {
  const double x = (f_before - f_after) / 1000.0;
  return int64_t(1.0 / (1.0 + std::exp(-x)) * 100.0);
}

double fgd_after(const GpuNodeView& v, const GpuRequest& r, const GpuOptions& o, const TargetWorkload& tw,
                 double f_before, bool by_score, uint64_t* mask) {
  int32_t buf[kMaxGpusPerNode];
  std::copy(v.free, v.free + v.g, buf);
  const int64_t cpu_after = v.cpu_free - r.cpu_milli;
  if (!r.fractional()) {
    const uint64_t m = r.cpu_only() ? 0 : o.whole;
    for (int32_t i = 0; i < v.g; ++i)
      if (has(m, i)) buf[i] = 0;
    *mask = m;
    return node_fragment(cpu_after, v.model, buf, v.g, tw);
  }
  bool have = false;
  double best_key = 0.0, best_f = 0.0;
  uint64_t best_m = 0;
  for (int32_t i = 0; i < v.g; ++i) {
    if (!has(o.candidates, i)) continue;
    bool seen = false;  // equal free milli gives the same node state: keep the first such GPU
    for (int32_t j = 0; j < i && !seen; ++j) seen = has(o.candidates, j) && v.free[j] == v.free[i];
    if (seen) continue;
    buf[i] = v.free[i] - r.gpu_milli;
    const double fa = node_fragment(cpu_after, v.model, buf, v.g, tw);
    buf[i] = v.free[i];
    const double key = by_score ? double(fgd_score(f_before, fa)) : -fa;
    if (!have || key > best_key) {
      have = true;
      best_key = key;
      best_f = fa;
      best_m = uint64_t(1) << i;
    }
  }
  *mask = best_m;
  return best_f;
}

// vcore: FGD's integer score (in tenths of a point) on vcore's blended target workload, plus
//   a packing bonus of up to `pack_points` points for the share of the node's GPU milli already allocated (FGD's
//   coarse score + a fixed node order packs; this makes packing explicit), and
//   a balance bonus of up to `balance_points` points for leaving the node's CPU and GPU allocated in the same
//   proportion (kube-scheduler's BalancedAllocation idea on the CPU/GPU pair): CPU is spent where the GPUs are
//   already taken, so idle GPUs keep the CPU they need and do not get stranded.
double cpu_pressure(const TargetWorkload& tw, double cluster_cpu_milli, double cluster_gpu_milli) {
  double cpu = 0.0, gpu = 0.0;
  for (size_t s = 0; s < tw.size(); ++s) {
    cpu += tw.weight[s] * double(tw.cpu_milli[s]);
    gpu += tw.weight[s] * double(tw.num_gpu[s]) * double(tw.gpu_milli[s]);
  }
  if (gpu <= 0 || cluster_gpu_milli <= 0 || cluster_cpu_milli <= 0) return 1.0;
  return (cpu / gpu) / (cluster_cpu_milli / cluster_gpu_milli);
}

VcoreKnobs knobs_for_pressure(const VcoreKnobs& k, double pressure) {
  constexpr double kNone = 0.5, kFull = 0.8;
  VcoreKnobs out = k;
  out.balance_points = k.balance_points * std::clamp((pressure - kNone) / (kFull - kNone), 0.0, 1.0);
  return out;
}

int64_t vcore_score(const GpuNodeView& v, const GpuRequest& r, double delta, const VcoreKnobs& k) {
  const int64_t fgd = int64_t(1.0 / (1.0 + std::exp(delta / k.scale)) * 100.0);
  const double gcap = double(v.g) * kGpuMilli;
  const double allocated = v.g ? 1.0 - double(v.free_total) / gcap : 0.0;
  int64_t s = fgd * 10 + int64_t(10.0 * k.pack_points * allocated);
  if (k.balance_points > 0 && v.g && v.cpu_cap > 0) {
    const double gpu_after = allocated + double(r.total_gpu_milli()) / gcap;
    const double cpu_after = double(v.cpu_cap - v.cpu_free + r.cpu_milli) / double(v.cpu_cap);
    s += int64_t(10.0 * k.balance_points * (1.0 - std::fabs(cpu_after - gpu_after)));
  }
  return s;
}

}  // namespace vcore
