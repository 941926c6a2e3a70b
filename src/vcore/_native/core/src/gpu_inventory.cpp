// GpuInventory: construction with validation, fit rules and allocation (see vcore/gpu_inventory.h).
#include "vcore/gpu_inventory.h"

#include <algorithm>

namespace vcore {

namespace {
[[noreturn]] void bad(const std::string& msg) { throw std::invalid_argument("gpu inventory: " + msg); }
}  // namespace

GpuInventory::GpuInventory(std::vector<int64_t> cpu_milli, std::vector<int64_t> memory, std::vector<int32_t> node_model,
                           std::vector<int32_t> dev_offsets, std::vector<int32_t> dev_free_milli,
                           std::vector<int64_t> dev_memory_mib) {
  const size_t n = cpu_milli.size();
  if (memory.size() != n)
    bad("memory has " + std::to_string(memory.size()) + " entries, expected " + std::to_string(n));
  if (node_model.size() != n)
    bad("node_model has " + std::to_string(node_model.size()) + " entries, expected " + std::to_string(n));
  if (dev_offsets.size() != n + 1)
    bad("dev_offsets has " + std::to_string(dev_offsets.size()) +
        " entries, expected n_nodes+1 = " + std::to_string(n + 1));
  if (dev_offsets[0] != 0) bad("dev_offsets[0] must be 0");
  for (size_t i = 0; i < n; ++i) {
    if (cpu_milli[i] < 0) bad("cpu_milli[" + std::to_string(i) + "] is negative");
    if (memory[i] < 0) bad("memory[" + std::to_string(i) + "] is negative");
    if (node_model[i] < -1 || node_model[i] >= kMaxGpuModels)
      bad("node_model[" + std::to_string(i) + "] out of range -1..63");
    const int64_t g = int64_t(dev_offsets[i + 1]) - dev_offsets[i];
    if (g < 0) bad("dev_offsets is not non-decreasing at node " + std::to_string(i));
    if (g > kMaxGpusPerNode)
      bad("node " + std::to_string(i) + " has " + std::to_string(g) + " GPUs, at most 64 supported");
  }
  if (size_t(dev_offsets[n]) != dev_free_milli.size())
    bad("dev_free_milli has " + std::to_string(dev_free_milli.size()) + " entries, dev_offsets[-1] says " +
        std::to_string(dev_offsets[n]));
  if (dev_memory_mib.empty()) dev_memory_mib.assign(dev_free_milli.size(), 0);
  if (dev_memory_mib.size() != dev_free_milli.size())
    bad("dev_memory_mib has " + std::to_string(dev_memory_mib.size()) + " entries, expected " +
        std::to_string(dev_free_milli.size()));
  for (size_t d = 0; d < dev_free_milli.size(); ++d) {
    if (dev_free_milli[d] < 0 || dev_free_milli[d] > kGpuMilli)
      bad("dev_free_milli[" + std::to_string(d) + "] out of range 0..1000");
    if (dev_memory_mib[d] < 0) bad("dev_memory_mib[" + std::to_string(d) + "] is negative");
  }
  cpu_cap_ = cpu_milli;
  cpu_free_ = std::move(cpu_milli);
  mem_cap_ = memory;
  mem_free_ = std::move(memory);
  node_model_ = std::move(node_model);
  dev_offsets_ = std::move(dev_offsets);
  dev_free_milli_ = std::move(dev_free_milli);
  dev_mem_cap_ = dev_memory_mib;
  dev_mem_free_ = std::move(dev_memory_mib);
  node_idle_.assign(n, 0);
  node_max_free_.assign(n, 0);
  node_free_.assign(n, 0);
  for (size_t i = 0; i < n; ++i) refresh_summary(int32_t(i));
}

void GpuInventory::refresh_summary(int32_t n) {
  int32_t idle = 0, mx = 0;
  int64_t sum = 0;
  for (int32_t d = dev_offsets_[n]; d < dev_offsets_[n + 1]; ++d) {
    idle += (dev_free_milli_[d] == kGpuMilli);
    mx = std::max(mx, dev_free_milli_[d]);
    sum += dev_free_milli_[d];
  }
  node_free_[n] = sum;
  node_idle_[n] = idle;
  node_max_free_[n] = mx;
}

uint64_t GpuInventory::whole_gpu_mask(int32_t n, int32_t count) const {
  uint64_t m = 0;
  const int32_t* f = gpu_free(n);
  const int32_t g = n_gpus(n);
  for (int32_t i = 0; i < g && count > 0; ++i)
    if (f[i] == kGpuMilli) {
      m |= uint64_t(1) << i;
      --count;
    }
  return m;
}

void GpuInventory::allocate(int32_t n, const GpuRequest& r, uint64_t dev_mask) {
  cpu_free_[n] -= r.cpu_milli;
  mem_free_[n] -= r.memory;
  if (r.cpu_only()) return;
  const int32_t base = dev_offsets_[n];
  const int32_t take = r.fractional() ? r.gpu_milli : kGpuMilli;
  for (int32_t i = 0; i < n_gpus(n); ++i)
    if ((dev_mask >> i) & 1u) dev_free_milli_[base + i] -= take;
  refresh_summary(n);
}

int64_t GpuInventory::total_gpu_milli() const { return int64_t(dev_free_milli_.size()) * kGpuMilli; }

}  // namespace vcore
