// GPU device inventory in CSR form and the device-level fit rules.
//
// Nodes are rows; the GPUs of node n are devices dev_offsets[n] .. dev_offsets[n+1]-1. Per node: CPU milli-cores
// and memory (capacity and free), and a GPU model id (-1: no GPU / unknown). Per device: free share in milli
// (1000 = a whole idle GPU), memory MiB (capacity and free; 0 capacity = not tracked) and model id. The same
// arrays back the trace replay and, later, the live cluster's device model. No Python headers here.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace vcore {

constexpr int32_t kGpuMilli = 1000;      // one whole GPU
constexpr int32_t kMaxGpusPerNode = 64;  // device sets are uint64 bit masks of node-local indices
constexpr int32_t kMaxGpuModels = 64;    // model constraints are uint64 bit masks of model ids
constexpr int32_t kMaxNumaNodes = 16;    // NUMA node sets are bit masks; a node's NUMA ids are few

// One pod's request as the GPU kernels see it. model_mask: bit m set = GPU model id m allowed; 0 = any model.
struct GpuRequest {
  int64_t cpu_milli = 0;
  int64_t memory = 0;
  int32_t num_gpu = 0;    // 0: CPU only; 1 with gpu_milli < 1000: fractional; n: n whole GPUs
  int32_t gpu_milli = 0;  // share of each GPU, 0..1000
  uint64_t model_mask = 0;

  bool cpu_only() const { return num_gpu == 0 || gpu_milli == 0; }
  bool fractional() const { return num_gpu == 1 && gpu_milli > 0 && gpu_milli < kGpuMilli; }
  int64_t total_gpu_milli() const { return cpu_only() ? 0 : int64_t(num_gpu) * gpu_milli; }
};

class GpuInventory {
 public:
  GpuInventory() = default;
  // Throws std::invalid_argument naming the array and the index on inconsistent input.
  GpuInventory(std::vector<int64_t> cpu_milli, std::vector<int64_t> memory, std::vector<int32_t> node_model,
               std::vector<int32_t> dev_offsets, std::vector<int32_t> dev_free_milli,
               std::vector<int64_t> dev_memory_mib);

  int32_t n_nodes() const { return int32_t(cpu_cap_.size()); }
  int32_t n_devices() const { return int32_t(dev_free_milli_.size()); }
  int32_t n_gpus(int32_t n) const { return dev_offsets_[n + 1] - dev_offsets_[n]; }
  const int32_t* gpu_free(int32_t n) const { return dev_free_milli_.data() + dev_offsets_[n]; }

  bool model_allowed(int32_t n, uint64_t mask) const {
    return mask == 0 || (node_model_[n] >= 0 && ((mask >> node_model_[n]) & 1u));
  }
  // Filters of the published protocol: CPU and memory fit, model allowed, fractional -> one GPU with enough free
  // milli, n whole GPUs -> n wholly free GPUs.
  bool fits(int32_t n, const GpuRequest& r) const {
    if (cpu_free_[n] < r.cpu_milli || mem_free_[n] < r.memory) return false;
    if (r.cpu_only()) return true;
    if (!model_allowed(n, r.model_mask)) return false;
    if (r.fractional()) return node_max_free_[n] >= r.gpu_milli;
    return node_idle_[n] >= r.num_gpu;
  }
  // Device set chosen by the default rules: whole GPUs = lowest-indexed wholly free; fractional = `dev` given.
  uint64_t whole_gpu_mask(int32_t n, int32_t count) const;
  // Apply an allocation (no checks beyond asserts in debug; callers check fits() first).
  void allocate(int32_t n, const GpuRequest& r, uint64_t dev_mask);

  int64_t free_gpu_milli(int32_t n) const { return node_free_[n]; }
  void refresh_summary(int32_t n);
  int64_t total_gpu_milli() const;

  std::vector<int64_t> cpu_cap_, cpu_free_, mem_cap_, mem_free_;
  std::vector<int32_t> node_model_;
  std::vector<int32_t> dev_offsets_;
  // per-node summaries kept in step with dev_free_milli_ so the fit check is O(1)
  std::vector<int32_t> node_idle_;      // wholly free GPUs
  std::vector<int32_t> node_max_free_;  // largest free milli of one GPU
  std::vector<int64_t> node_free_;      // free milli summed over the node's GPUs
  std::vector<int32_t> dev_free_milli_;
  std::vector<int64_t> dev_mem_cap_, dev_mem_free_;
};

}  // namespace vcore
