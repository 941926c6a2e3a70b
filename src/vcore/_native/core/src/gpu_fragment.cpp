// FGD fragmentation measure and node score (see vcore/gpu_fragment.h).
#include "vcore/gpu_fragment.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "vcore/gpu_policy.h"

namespace vcore {

void TargetWorkload::validate() const {
  const size_t m = weight.size();
  if (cpu_milli.size() != m || gpu_milli.size() != m || num_gpu.size() != m || model_mask.size() != m)
    throw std::invalid_argument("target workload: spec arrays must all have " + std::to_string(m) + " entries");
  for (size_t i = 0; i < m; ++i) {
    const std::string at = "target workload spec " + std::to_string(i) + ": ";
    if (cpu_milli[i] < 0) throw std::invalid_argument(at + "cpu_milli is negative");
    if (gpu_milli[i] < 0 || gpu_milli[i] > kGpuMilli)
      throw std::invalid_argument(at + "gpu_milli out of range 0..1000");
    if (num_gpu[i] < 0 || num_gpu[i] > kMaxGpusPerNode) throw std::invalid_argument(at + "num_gpu out of range 0..64");
    if (num_gpu[i] > 1 && gpu_milli[i] > 0 && gpu_milli[i] < kGpuMilli)
      throw std::invalid_argument(at + "a fractional gpu_milli needs num_gpu 1");
    if (!(weight[i] >= 0.0) || !std::isfinite(weight[i]))
      throw std::invalid_argument(at + "weight must be finite and >= 0");
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
          if (gpu_free[i] >= milli)
            ++ok;
          else
            small += gpu_free[i];
        }
        if (ok >= need) frag = small;
      }
    }
    f += tw.weight[s] * double(frag);
  }
  return f;
}

int64_t fgd_node_score(const GpuInventory& inv, int32_t n, const GpuRequest& r, const TargetWorkload& tw,
                       double f_before, uint64_t* dev_mask) {
  const double fa = fgd_after(inventory_view(inv, n), r, inventory_options(inv, n, r), tw, f_before, true, dev_mask);
  return fgd_score(f_before, fa);
}

double fgd_best_delta(const GpuInventory& inv, int32_t n, const GpuRequest& r, const TargetWorkload& tw,
                      double f_before, uint64_t* dev_mask) {
  return fgd_after(inventory_view(inv, n), r, inventory_options(inv, n, r), tw, f_before, false, dev_mask) - f_before;
}

}  // namespace vcore
