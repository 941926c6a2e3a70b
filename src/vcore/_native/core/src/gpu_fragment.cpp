// FGD fragmentation measure and node score (see vcore/gpu_fragment.h).
#include "vcore/gpu_fragment.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace vcore {

void TargetWorkload::validate() const {
    const size_t m = weight.size();
    if (cpu_milli.size() != m || gpu_milli.size() != m || num_gpu.size() != m || model_mask.size() != m)
        throw std::invalid_argument("target workload: spec arrays must all have " + std::to_string(m) + " entries");
    for (size_t i = 0; i < m; ++i) {
        const std::string at = "target workload spec " + std::to_string(i) + ": ";
        if (cpu_milli[i] < 0) throw std::invalid_argument(at + "cpu_milli is negative");
        if (gpu_milli[i] < 0 || gpu_milli[i] > kGpuMilli) throw std::invalid_argument(at + "gpu_milli out of range 0..1000");
        if (num_gpu[i] < 0 || num_gpu[i] > kMaxGpusPerNode) throw std::invalid_argument(at + "num_gpu out of range 0..64");
        if (num_gpu[i] > 1 && gpu_milli[i] > 0 && gpu_milli[i] < kGpuMilli)
            throw std::invalid_argument(at + "a fractional gpu_milli needs num_gpu 1");
        if (!(weight[i] >= 0.0) || !std::isfinite(weight[i])) throw std::invalid_argument(at + "weight must be finite and >= 0");
    }
}

double node_fragment(int64_t cpu_free, int32_t node_model, const int32_t* gpu_free, int32_t g,
                     const TargetWorkload& tw) {
    int64_t total = 0;
    for (int32_t i = 0; i < g; ++i) total += gpu_free[i];
    if (total == 0) return 0.0;
    double f = 0.0;
    const size_t m = tw.size();
    for (size_t s = 0; s < m; ++s) {
        const int32_t milli = tw.gpu_milli[s];
        const int32_t need = tw.num_gpu[s];
        int64_t frag = total;
        if (milli > 0 && need > 0 && cpu_free >= tw.cpu_milli[s]) {
            const uint64_t mask = tw.model_mask[s];
            if (mask == 0 || (node_model >= 0 && ((mask >> node_model) & 1u))) {
                int32_t ok = 0;
                int64_t small = 0;
                for (int32_t i = 0; i < g; ++i) {
                    if (gpu_free[i] >= milli) ++ok;
                    else small += gpu_free[i];
                }
                if (ok >= need) frag = small;
            }
        }
        f += tw.weight[s] * double(frag);
    }
    return f;
}

namespace {
inline int64_t sigmoid_score(double f_before, double f_after) {
    const double x = (f_before - f_after) / 1000.0;
    return int64_t(1.0 / (1.0 + std::exp(-x)) * 100.0);
}

// Evaluates candidate device sets; returns F_after of the chosen one (first best by `better`).
template <class Key>
double best_after(const GpuInventory& inv, int32_t n, const GpuRequest& r, const TargetWorkload& tw,
                  uint64_t* dev_mask, Key key) {
    const int32_t g = inv.n_gpus(n);
    const int32_t* f = inv.gpu_free(n);
    int32_t buf[kMaxGpusPerNode];
    for (int32_t i = 0; i < g; ++i) buf[i] = f[i];
    const int64_t cpu_after = inv.cpu_free_[n] - r.cpu_milli;
    const int32_t model = inv.node_model_[n];
    if (!r.fractional()) {
        uint64_t m = 0;
        if (!r.cpu_only()) {
            m = inv.whole_gpu_mask(n, r.num_gpu);
            for (int32_t i = 0; i < g; ++i)
                if ((m >> i) & 1u) buf[i] = 0;
        }
        *dev_mask = m;
        return node_fragment(cpu_after, model, buf, g, tw);
    }
    bool have = false;
    decltype(key(0.0)) best{};
    double best_f = 0.0;
    uint64_t best_m = 0;
    for (int32_t i = 0; i < g; ++i) {
        if (f[i] < r.gpu_milli) continue;
        bool seen = false;  // equal free milli gives the same node state: keep the first such GPU
        for (int32_t j = 0; j < i; ++j)
            if (f[j] == f[i]) { seen = true; break; }
        if (seen) continue;
        buf[i] = f[i] - r.gpu_milli;
        const double fa = node_fragment(cpu_after, model, buf, g, tw);
        buf[i] = f[i];
        const auto k = key(fa);
        if (!have || k > best) { have = true; best = k; best_f = fa; best_m = uint64_t(1) << i; }
    }
    *dev_mask = best_m;
    return best_f;
}
}  // namespace

int64_t fgd_node_score(const GpuInventory& inv, int32_t n, const GpuRequest& r, const TargetWorkload& tw,
                       double f_before, uint64_t* dev_mask) {
    const double fa = best_after(inv, n, r, tw, dev_mask, [&](double a) { return sigmoid_score(f_before, a); });
    return sigmoid_score(f_before, fa);
}

double fgd_best_delta(const GpuInventory& inv, int32_t n, const GpuRequest& r, const TargetWorkload& tw,
                      double f_before, uint64_t* dev_mask) {
    const double fa = best_after(inv, n, r, tw, dev_mask, [](double a) { return -a; });
    return fa - f_before;
}

}  // namespace vcore
