// The live GPU devices of a ClusterState: inventory, what bound pods hold, and the device-level fit.
//
// Per node slot a CSR range of devices (dev_begin/dev_count into flat per-device arrays), so a node's GPUs are
// contiguous. Per device: model id (interned product), memory MiB, NUMA node and NVLink domain (-1 unknown), MIG
// mode and geometry, the configured MIG layout (packed), and usage: compute share held by shared pods (milli),
// device memory they hold, how many shared pods hold it, whether a whole-GPU pod holds it, and the MIG compute and
// memory slices in use. Ranges are rewritten in place when a node keeps its GPU count; otherwise the node gets a
// new range at the end and the table compacts once garbage outweighs live devices.
//
// The fit rules are those of the pure-Python reference tests/gpu/fit_reference.py (tested against it by hypothesis):
// whole GPUs need wholly free non-MIG GPUs; shared slices need free compute and memory on GPUs no pod holds
// exclusively; either picks the preferred set (one NVLink domain, then one NUMA node, then lowest indices). MIG
// instances go to the lowest GPU index, then the lowest start. Model constraints apply to every kind.
// NUMA alignment (a pod with a Topology Manager policy, on a node that describes its NUMA nodes) first chooses the
// set of NUMA nodes (see vcore.gpu.numa for the model), then applies the rules above to the GPUs on it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "vcore/gpu_inventory.h"
#include "vcore/gpu_policy.h"
#include "vcore/interner.h"

namespace vcore {

enum class GpuKind : uint8_t { kNone = 0, kWhole = 1, kShared = 2, kMig = 3 };

// MIG geometries (vcore.gpu.mig.MIG_MODELS): 0 none, 1 A100-40GB, 2 A100-80GB, 3 H100-80GB. The six instance
// shapes (compute slices, memory slices, allowed starts) are the same on all three; profile names differ.
constexpr int32_t kMigGeometries = 4;
constexpr int32_t kMigShapeCount = 6;
constexpr int32_t kMaxMigInstances = 7;
struct MigShape {
  int32_t compute, memory;
  uint32_t starts;  // bit s set: the driver allows start s
  uint32_t compute_mask(int32_t s) const { return ((1u << compute) - 1) << s; }
  uint32_t memory_mask(int32_t s) const { return ((1u << memory) - 1) << s; }
};

// Upper-case '-'-separated tokens of a model name: "A100-80GB" matches a product holding both tokens.
std::vector<std::string> model_tokens(const std::string& name);

struct DeviceInput {
  std::string model;
  int64_t memory_mib = 0;
  int32_t numa = -1, nvlink = -1;
  bool mig_mode = false;
  int32_t mig_geometry = 0;
  std::vector<std::pair<int32_t, int32_t>> mig_layout;  // configured (shape, start); empty: created on demand
};

// Kubernetes Topology Manager policies as Volcano's numa-aware plugin reads them (pod annotation
// volcano.sh/numa-topology-policy): which NUMA alignment of a pod's GPUs and pinned CPUs a node must offer.
enum class NumaPolicy : uint8_t { kNone = 0, kBestEffort = 1, kRestricted = 2, kSingleNumaNode = 3 };

// A node's CPUs on one NUMA node: allocatable millicores and those held by pinned pods.
struct NumaCpu {
  int32_t id;
  int64_t alloc_milli;
  int64_t used_milli = 0;
};

// The nvidia.com/gpu.product part of one required node-selector term (terms are ORed).
struct ProductTerm {
  bool any = true;  // no In on the key
  std::vector<std::string> allowed, excluded;
  bool never = false;
};

// A pod's GPU request, compiled (see vcore.gpu.requests for the conventions it comes from).
struct DeviceRequest {
  GpuKind kind = GpuKind::kNone;
  int32_t count = 0;        // GPUs (whole, shared) or MIG instances
  int32_t milli = -1;       // shared: compute per GPU; -1: memory_mib * 1000 / device memory, per GPU
  int64_t memory_mib = -1;  // shared: device memory per GPU; -1: memory_milli of the device
  int32_t memory_milli = -1;
  std::array<int32_t, kMigGeometries> mig_shape{-1, -1, -1, -1};  // per geometry; -1: no such profile
  bool has_models = false;                                        // vcore.io/gpu-models given
  std::vector<std::vector<std::string>> models;                   // upper-case tokens of each allowed model name
  std::vector<ProductTerm> product_terms;                         // ORed; empty: no affinity on the product
  NumaPolicy numa_policy = NumaPolicy::kNone;
  int64_t numa_cpu_milli = 0;  // CPUs pinned to the chosen NUMA node(s): whole CPUs of a pod with a policy

  bool uses_gpus() const { return kind != GpuKind::kNone && count > 0; }
  // Whether the device fit has anything to decide: GPUs, or NUMA alignment of a pod with a policy.
  bool needs_devices() const { return uses_gpus() || numa_policy != NumaPolicy::kNone; }
  bool allows(const std::string& product) const;
  int32_t milli_on(int64_t device_memory_mib) const;  // kGpuMilli + 1 when it cannot be sized
  int64_t memory_on(int64_t device_memory_mib) const;
  std::string constraint_key() const;  // equal keys: equal model constraints
};

// What a placed pod holds: one entry per GPU (whole, shared) or per MIG instance, node-local GPU indices.
struct GpuHold {
  int32_t gpu;
  int32_t milli = 0;
  int64_t memory_mib = 0;
  int32_t mig_shape = -1, mig_start = -1;
};
struct GpuAssignment {
  GpuKind kind = GpuKind::kNone;
  std::vector<GpuHold> holds;
  std::vector<std::pair<int32_t, int64_t>> numa_cpu;  // pinned CPU per NUMA node: (NUMA id, millicores)
};

class DeviceTable {
 public:
  // Throws Invalid naming the node and the field of the first bad device.
  void validate(const std::string& node, const std::vector<DeviceInput>& devices) const;
  static void validate_numa(const std::string& node, const std::vector<std::pair<int32_t, int64_t>>& cpu);
  // Replaces a slot's per-NUMA allocatable CPU (NUMA id, millicores); usage is rebuilt like the devices'.
  void set_numa(int32_t slot, const std::vector<std::pair<int32_t, int64_t>>& cpu);
  const std::vector<NumaCpu>& numa_cpu(int32_t slot) const;
  // Replaces a slot's devices; usage is kept per index until the caller rebuilds it (reset_usage + apply).
  void set_node(int32_t slot, const std::vector<DeviceInput>& devices);
  void clear_node(int32_t slot);
  void reset_usage(int32_t slot);
  // Whether GPU `gpu` of the slot exists and can hold what it held (MIG instances need MIG mode, others not).
  bool holdable(int32_t slot, int32_t gpu, bool mig) const {
    return gpu >= 0 && gpu < n_gpus(slot) && (mig_mode_[begin_[slot] + gpu] != 0) == mig;
  }

  int32_t n_gpus(int32_t slot) const { return slot < static_cast<int32_t>(count_.size()) ? count_[slot] : 0; }
  int32_t n_models() const { return static_cast<int32_t>(models_.size()); }
  const std::string& model_name(int32_t id) const { return models_.name(id); }
  // allowed[m] for every GPU model id m.
  std::vector<uint8_t> allowed_models(const DeviceRequest& r) const;

  // Whether r fits on the slot, and with `out` the devices it takes (unspecified when it does not fit). A pod with
  // a NUMA policy on a node that describes its NUMA nodes gets its GPUs and pinned CPUs aligned as the policy says.
  bool fit(int32_t slot, const DeviceRequest& r, const std::vector<uint8_t>& allowed, GpuAssignment* out) const;
  // The fit without NUMA alignment (tells a NUMA failure from a device shortage).
  bool fit_unaligned(int32_t slot, const DeviceRequest& r, const std::vector<uint8_t>& allowed) const {
    return fit_on(slot, r, allowed, ~uint64_t{0}, nullptr);
  }
  // Whether an explicit assignment (from assign(), so distinct existing GPUs) can be held now; else a message.
  std::string check_assignment(int32_t slot, const DeviceRequest& r, const std::vector<uint8_t>& allowed,
                               const GpuAssignment& a) const;
  // The assignment of r onto the given node-local GPUs (bits; whole/shared) with the request's amounts.
  void assign(int32_t slot, const DeviceRequest& r, uint64_t gpus, GpuAssignment* out) const;
  void apply(int32_t slot, const GpuAssignment& a, int sign);

  // The policies' view of a slot: free milli of its non-MIG GPUs (into `free`, with `local` mapping view index to
  // node-local GPU index); CPU/memory come from the caller.
  int32_t policy_gpus(int32_t slot, int32_t* free, int32_t* local) const;
  // Candidate / chosen sets of r on the slot as bits over the policy view (see GpuOptions).
  GpuOptions policy_options(int32_t slot, const DeviceRequest& r, const std::vector<uint8_t>& allowed,
                            const GpuAssignment& fitted) const;
  int32_t node_model(int32_t slot) const;     // model id of the slot's first non-MIG GPU, -1 none
  int64_t device_memory(int32_t slot) const;  // memory MiB of the slot's first non-MIG GPU, 0 none
  int64_t max_device_memory() const { return max_memory_; }

  // Flat copies for Python (per device, in slot order): see bindings.
  struct Snapshot {
    std::vector<int64_t> offsets;  // [n_slots + 1]
    std::vector<int32_t> model, numa, nvlink, used_milli, holders, mig_compute, mig_memory;
    std::vector<int64_t> memory_mib, used_memory_mib;
    std::vector<uint8_t> mig_mode, exclusive;
  };
  Snapshot snapshot(int32_t n_slots) const;
  size_t native_bytes() const;

 private:
  bool allowed_device(int32_t d, const std::vector<uint8_t>& allowed) const {
    return allowed.empty() || allowed[static_cast<size_t>(model_[d])] != 0;
  }
  // A shared slice of r fits on device d: no exclusive holder, enough free compute share and memory.
  bool can_share(int32_t d, const DeviceRequest& r) const {
    return !exclusive_[d] && r.milli_on(memory_[d]) <= kGpuMilli - used_milli_[d] &&
           r.memory_on(memory_[d]) <= memory_[d] - used_memory_[d];
  }
  bool wholly_free(int32_t d) const {
    return used_milli_[d] == 0 && used_memory_[d] == 0 && holders_[d] == 0 && !exclusive_[d] && mig_compute_[d] == 0;
  }
  bool pick(int32_t slot, uint64_t candidates, int32_t n, uint64_t* out) const;
  // The fit restricted to the GPUs in `gpus` (bits over node-local indices).
  bool fit_on(int32_t slot, const DeviceRequest& r, const std::vector<uint8_t>& allowed, uint64_t gpus,
              GpuAssignment* out) const;
  bool numa_fit(int32_t slot, const DeviceRequest& r, const std::vector<uint8_t>& allowed, GpuAssignment* out) const;
  bool has_numa(int32_t slot) const;
  void ensure_slot(int32_t slot);
  void compact();

  Interner models_;
  int64_t max_memory_ = 0;
  std::vector<int32_t> begin_, count_;  // per slot
  // per device
  std::vector<int32_t> model_, numa_, nvlink_;
  std::vector<int64_t> memory_;
  std::vector<uint8_t> mig_mode_, mig_geometry_, layout_n_;
  std::vector<uint64_t> layout_;  // configured MIG instances, 6 bits each: shape << 3 | start
  std::vector<int32_t> used_milli_, holders_;
  std::vector<int64_t> used_memory_;
  std::vector<uint8_t> exclusive_, mig_compute_, mig_memory_;
  int32_t live_devices_ = 0;
  std::vector<std::vector<NumaCpu>> numa_cpu_;  // per slot, by NUMA id
};

}  // namespace vcore
