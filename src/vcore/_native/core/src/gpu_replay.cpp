// Native one-pass trace replay and the placement policies (see vcore/gpu_replay.h).
//
// Policy definitions follow the FGD paper's simulator (Weng et al., ATC'23) and Volcano's card orders:
//   first-fit      score 0 everywhere (first feasible node in tie order), first GPU that fits
//   best-fit       int(100 * (1 - 0.5 (cpu_free-cpu)/128000 - 0.5 (gpu_free-gpu)/8000)), tightest GPU
//   random         uniform over feasible nodes (seeded), uniform over the GPUs that fit
//   fgd            int(100 * sigmoid((F_before - F_after)/1000)), device set of the best F_after
//   dot-product    Tetris: 1 - <node_free, request>/2 on (cpu/128000, gpu/8000), per candidate GPU group
//   gpu-packing    shared GPUs > idle GPUs of used nodes > idle nodes
//   gpu-clustering prefer nodes already running pods of the same GPU-count class
//   binpack/spread Volcano-style most/least allocated over cpu, memory, GPU; tightest/emptiest card
//   vcore          FGD's integer score on a blended target workload + GPU-packing + CPU/GPU balance (vcore_score)
#include "vcore/gpu_replay.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>

namespace vcore {

GpuPolicy parse_gpu_policy(const std::string& name) {
    static const std::map<std::string, GpuPolicy> names = {
        {"first-fit", GpuPolicy::kFirstFit},       {"best-fit", GpuPolicy::kBestFit},
        {"random", GpuPolicy::kRandom},            {"fgd", GpuPolicy::kFgd},
        {"dot-product", GpuPolicy::kDotProduct},   {"gpu-packing", GpuPolicy::kGpuPacking},
        {"gpu-clustering", GpuPolicy::kGpuClustering}, {"binpack", GpuPolicy::kBinpack},
        {"spread", GpuPolicy::kSpread},            {"vcore", GpuPolicy::kVcore},
    };
    auto it = names.find(name);
    if (it == names.end()) throw std::invalid_argument("unknown GPU policy '" + name + "'");
    return it->second;
}

namespace {

constexpr double kMaxSpecCpu = 128000.0;
constexpr double kMaxSpecGpu = 8000.0;

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
        do x = next(); while (x >= limit);
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

int32_t first_fit_gpu(const int32_t* f, int32_t g, int32_t milli) {
    for (int32_t i = 0; i < g; ++i)
        if (f[i] >= milli) return i;
    return -1;
}
int32_t tightest_gpu(const int32_t* f, int32_t g, int32_t milli) {
    int32_t b = -1;
    for (int32_t i = 0; i < g; ++i)
        if (f[i] >= milli && (b < 0 || f[i] < f[b])) b = i;
    return b;
}
int32_t emptiest_gpu(const int32_t* f, int32_t g, int32_t milli) {
    int32_t b = -1;
    for (int32_t i = 0; i < g; ++i)
        if (f[i] >= milli && (b < 0 || f[i] > f[b])) b = i;
    return b;
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

    Replayer(GpuInventory& i, const TargetWorkload& t, const ReplayOptions& o)
        : inv(i), tw(t), opt(o), N(i.n_nodes()), rng(o.seed) {}

    void refresh_fragment(int32_t n) {
        fnode[n] = node_fragment(inv.cpu_free_[n], inv.node_model_[n], inv.gpu_free(n), inv.n_gpus(n), tw);
    }

    uint64_t default_mask(int32_t n, const GpuRequest& r, int32_t (*pick)(const int32_t*, int32_t, int32_t)) const {
        if (r.cpu_only()) return 0;
        if (r.fractional()) return uint64_t(1) << pick(inv.gpu_free(n), inv.n_gpus(n), r.gpu_milli);
        return inv.whole_gpu_mask(n, r.num_gpu);
    }

    int64_t fgd_cached(int32_t n, const GpuRequest& r, int32_t spec, uint64_t* mask) {
        if (spec < n_cached_specs) {
            const size_t k = size_t(spec) * N + n;
            if (cache_ver[k] == node_ver[n]) { *mask = cache_mask[k]; return cache_score[k]; }
            const int64_t s = fgd_node_score(inv, n, r, tw, fnode[n], mask);
            cache_ver[k] = node_ver[n]; cache_score[k] = s; cache_mask[k] = *mask;
            return s;
        }
        return fgd_node_score(inv, n, r, tw, fnode[n], mask);
    }

    int64_t best_fit(int32_t n, const GpuRequest& r, uint64_t* mask) const {
        double s = 0.0;
        s += (double(inv.cpu_free_[n]) - double(r.cpu_milli)) / kMaxSpecCpu * 0.5;
        s += (double(inv.free_gpu_milli(n)) - double(r.total_gpu_milli())) / kMaxSpecGpu * 0.5;
        *mask = default_mask(n, r, tightest_gpu);
        return int64_t((1.0 - s) * 100.0);
    }

    int64_t dot_product(int32_t n, const GpuRequest& r, uint64_t* mask) const {
        const int32_t g = inv.n_gpus(n);
        const int32_t* f = inv.gpu_free(n);
        const double pc = double(r.cpu_milli) / kMaxSpecCpu;
        const int64_t pg_milli = r.total_gpu_milli();
        const double pg = double(pg_milli) / kMaxSpecGpu;
        const double nc = double(inv.cpu_free_[n]) / kMaxSpecCpu;
        double best = -1.0;
        uint64_t best_m = 0;
        if (pg_milli < kGpuMilli) {  // shared candidates: each partly used GPU that fits
            for (int32_t i = 0; i < g; ++i) {
                if (f[i] >= kGpuMilli || f[i] < pg_milli) continue;
                const double cur = 1.0 - (nc * pc + double(f[i]) / kMaxSpecGpu * pg) / 2.0;
                if (cur > best) { best = cur; best_m = r.cpu_only() ? 0 : uint64_t(1) << i; }
            }
        }
        int32_t idle = 0;
        for (int32_t i = 0; i < g; ++i) idle += (f[i] == kGpuMilli);
        if (pg_milli <= int64_t(idle) * kGpuMilli) {
            const double cur = 1.0 - (nc * pc + double(idle) * kGpuMilli / kMaxSpecGpu * pg) / 2.0;
            if (cur > best) {
                best = cur;
                best_m = r.cpu_only() ? 0 : inv.whole_gpu_mask(n, r.fractional() ? 1 : r.num_gpu);
            }
        }
        *mask = best_m;
        return best < 0 ? 0 : int64_t(100.0 * best);
    }

    int64_t gpu_packing(int32_t n, const GpuRequest& r, uint64_t* mask) const {
        *mask = default_mask(n, r, tightest_gpu);
        if (r.cpu_only()) return 0;
        const int32_t g = inv.n_gpus(n);
        const int32_t* f = inv.gpu_free(n);
        int32_t idle = 0;
        for (int32_t i = 0; i < g; ++i) idle += (f[i] == kGpuMilli);
        if (idle == g) return std::max<int64_t>(100 / 3 - idle, idle);
        // GPUs the request would use, smallest free first (stable)
        int32_t idx[kMaxGpusPerNode];
        for (int32_t i = 0; i < g; ++i) idx[i] = i;
        std::stable_sort(idx, idx + g, [&](int32_t a, int32_t b) { return f[a] < f[b]; });
        int32_t need = r.fractional() ? 1 : r.num_gpu;
        int32_t idle_used = 0;
        int64_t free_ratio = 0;
        for (int32_t k = 0; k < g && need > 0; ++k) {
            const int32_t i = idx[k];
            if (f[i] >= r.gpu_milli) {
                --need;
                if (f[i] == kGpuMilli) ++idle_used;
                free_ratio += int64_t(f[i]) * 100 / kGpuMilli;
            }
        }
        if (idle_used > 0) return std::max<int64_t>(100 / 2 - idle_used, 100 / 3);
        return std::max<int64_t>(100 - free_ratio / 10, 100 / 2);
    }

    int64_t gpu_clustering(int32_t n, const GpuRequest& r, uint64_t* mask) const {
        *mask = default_mask(n, r, tightest_gpu);
        if (r.cpu_only()) return 0;
        const int32_t tag = r.fractional() ? 0 : r.num_gpu;
        const int64_t left = inv.free_gpu_milli(n);
        const int64_t base = 25 * (int64_t(kMaxSpecGpu) - left) / int64_t(kMaxSpecGpu);
        if (tag_count[size_t(n) * (kMaxGpusPerNode + 1) + tag] > 0) return base + (n_tags[n] == 1 ? 75 : 50);
        return base + (n_tags[n] == 0 ? 25 : 0);
    }

    double used_fraction(int32_t n, const GpuRequest& r, bool after) const {
        double s = 0.0;
        int k = 0;
        auto add = [&](double cap, double used, double req) {
            if (cap <= 0) return;
            s += (used + (after ? req : 0.0)) / cap;
            ++k;
        };
        add(double(inv.cpu_cap_[n]), double(inv.cpu_cap_[n] - inv.cpu_free_[n]), double(r.cpu_milli));
        add(double(inv.mem_cap_[n]), double(inv.mem_cap_[n] - inv.mem_free_[n]), double(r.memory));
        const double gcap = double(inv.n_gpus(n)) * kGpuMilli;
        add(gcap, gcap - double(inv.free_gpu_milli(n)), double(r.total_gpu_milli()));
        return k ? s / k : 0.0;
    }

    // vcore: FGD's integer score (in tenths of a point) on vcore's blended target workload, plus
    //   a packing bonus of up to `vcore_pack_points` points for the share of the node's GPU milli already
    //   allocated (FGD's coarse score + a fixed node order packs; this makes packing explicit), and
    //   a balance bonus of up to `vcore_balance_points` points for leaving the node's CPU and GPU allocated in
    //   the same proportion (kube-scheduler's BalancedAllocation idea on the CPU/GPU pair): CPU is spent where
    //   the GPUs are already taken, so idle GPUs keep the CPU they need and do not get stranded.
    // Ties go to the first node in tie order; the device set is the one with the smallest exact F_after.
    int64_t vcore_score(int32_t n, const GpuRequest& r, double delta) const {
        const int64_t fgd = int64_t(1.0 / (1.0 + std::exp(delta / opt.vcore_scale)) * 100.0);
        const int32_t g = inv.n_gpus(n);
        const double gcap = double(g) * kGpuMilli;
        const double allocated = g ? 1.0 - double(inv.free_gpu_milli(n)) / gcap : 0.0;
        int64_t s = fgd * 10 + int64_t(10.0 * opt.vcore_pack_points * allocated);
        if (opt.vcore_balance_points > 0 && g && inv.cpu_cap_[n] > 0) {
            const double gpu_after = allocated + double(r.total_gpu_milli()) / gcap;
            const double cpu_after = double(inv.cpu_cap_[n] - inv.cpu_free_[n] + r.cpu_milli) / double(inv.cpu_cap_[n]);
            s += int64_t(10.0 * opt.vcore_balance_points * (1.0 - std::fabs(cpu_after - gpu_after)));
        }
        return s;
    }

    // vcore: cached exact fragment delta of the best device set per (node, request spec).
    std::vector<double> cache_delta;
    double vcore_delta(int32_t n, const GpuRequest& r, int32_t spec, uint64_t* mask) {
        if (spec < n_cached_specs) {
            const size_t k = size_t(spec) * N + n;
            if (cache_ver[k] == node_ver[n]) { *mask = cache_mask[k]; return cache_delta[k]; }
            const double d = fgd_best_delta(inv, n, r, tw, fnode[n], mask);
            cache_ver[k] = node_ver[n]; cache_delta[k] = d; cache_mask[k] = *mask;
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
                    const int64_t s = vcore_score(n, r, d);
                    if (s > bs) { bs = s; best = n; best_mask = m; }
                }
            } else {
                int64_t best_score = std::numeric_limits<int64_t>::min();
                for (int32_t k = 0; k < N; ++k) {
                    const int32_t n = order[k];
                    if (!inv.fits(n, r)) continue;
                    uint64_t m = 0;
                    int64_t s = 0;
                    switch (opt.policy) {
                        case GpuPolicy::kFirstFit: s = 0; m = default_mask(n, r, first_fit_gpu); break;
                        case GpuPolicy::kBestFit: s = best_fit(n, r, &m); break;
                        case GpuPolicy::kFgd: s = fgd_cached(n, r, spec_of[p], &m); break;
                        case GpuPolicy::kDotProduct: s = dot_product(n, r, &m); break;
                        case GpuPolicy::kGpuPacking: s = gpu_packing(n, r, &m); break;
                        case GpuPolicy::kGpuClustering: s = gpu_clustering(n, r, &m); break;
                        case GpuPolicy::kBinpack:
                            s = int64_t(100.0 * used_fraction(n, r, true));
                            m = default_mask(n, r, tightest_gpu);
                            break;
                        case GpuPolicy::kSpread:
                            s = int64_t(100.0 * (1.0 - used_fraction(n, r, true)));
                            m = default_mask(n, r, emptiest_gpu);
                            break;
                        default: break;
                    }
                    if (s > best_score) { best_score = s; best = n; best_mask = m; }
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
        throw std::invalid_argument("order has " + std::to_string(order.size()) + " entries, expected n_nodes = " + std::to_string(N));
    std::vector<char> seen(N, 0);
    for (size_t k = 0; k < order.size(); ++k) {
        const int32_t n = order[k];
        if (n < 0 || n >= N || seen[n]) throw std::invalid_argument("order is not a permutation of node indices (entry " + std::to_string(k) + ")");
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
