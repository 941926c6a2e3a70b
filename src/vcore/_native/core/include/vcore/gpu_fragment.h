// FGD's fragmentation measure (Weng et al., USENIX ATC 2023) over the CSR inventory.
//
// Target workload M: specs (cpu milli, gpu milli per GPU, GPU count, model mask) with weights p_m summing to 1.
// F_n(m) = free milli of the GPUs that individually cannot host m, when m fits on n (CPU fits, model allowed,
// enough GPUs with free >= gpu_milli); otherwise all of n's free milli. A CPU-only spec counts every free milli.
// F_n = sum_m p_m F_n(m), summed in spec order (the pure-Python reference sums in the same order).
#pragma once

#include <cstdint>
#include <vector>

#include "vcore/gpu_inventory.h"

namespace vcore {

struct TargetWorkload {
  std::vector<int64_t> cpu_milli;
  std::vector<int32_t> gpu_milli;
  std::vector<int32_t> num_gpu;
  std::vector<uint64_t> model_mask;
  std::vector<double> weight;
  size_t size() const { return weight.size(); }
  void validate() const;  // throws std::invalid_argument
};

// Fragment of one node state: free CPU, GPU model id, per-GPU free milli (count g).
double node_fragment(int64_t cpu_free, int32_t node_model, const int32_t* gpu_free, int32_t g,
                     const TargetWorkload& tw);

// FGD node score for a pod: int(100 * sigmoid((F_before - F_after) / 1000)); the chosen devices go to *dev_mask.
// Fractional pods try every GPU that fits (first GPU with the best score wins); others take whole GPUs lowest-index
// first. `f_before` is the node's current fragment. Caller checks fits() first.
int64_t fgd_node_score(const GpuInventory& inv, int32_t n, const GpuRequest& r, const TargetWorkload& tw,
                       double f_before, uint64_t* dev_mask);

// Same, exposing the raw fragment delta F_after - F_before of the chosen device set (used by vcore's policy).
double fgd_best_delta(const GpuInventory& inv, int32_t n, const GpuRequest& r, const TargetWorkload& tw,
                      double f_before, uint64_t* dev_mask);

}  // namespace vcore
