// A scheduler profile resolved to what the kernels need: which filters run, score plugin weights, plugin args.
// Built by vcore.profile (which validates user input); the engine checks only what could crash it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "vcore/gpu_policy.h"
#include "vcore/gpu_replay.h"
#include "vcore/gpu_target.h"
#include "vcore/node_plugin.h"

namespace vcore {

enum class FitStrategy : uint8_t { kLeastAllocated, kMostAllocated, kRequestedToCapacityRatio };

struct ResourceWeight {
  std::string name;
  int64_t weight;
};

// GPUPlacement's arguments (vcore.profile.GPUPlacementArgs).
struct GpuPlacementConfig {
  GpuPolicy policy = GpuPolicy::kVcore;
  VcoreKnobs knobs;
  double coverage = 95.0;    // FGD's cut-off for a learned target (vcore blends 95..100)
  bool learn = true;         // learn the target workload from the pods seen; else `target`
  bool tie_by_name = false;  // equal scores go to the smallest node name (the FGD simulator's rule), not at random
  std::vector<TargetSpecInput> target;
};

// A node plugin the profile enables (node_plugin.h), with its arguments.
struct PluginConfig {
  std::string name;
  PluginArgs args;
  bool filter = false;  // at the filter extension point
  int64_t weight = 0;   // score weight; 0: not at the score extension point
};

struct ProfileConfig {
  bool filter_unschedulable = false;
  bool filter_taints = false;
  bool filter_affinity = false;
  bool filter_fit = false;
  // Score plugin weights; 0 means the plugin is not enabled.
  int64_t weight_taints = 0;
  int64_t weight_affinity = 0;
  int64_t weight_fit = 0;
  int64_t weight_balanced = 0;
  int64_t weight_binpack = 0;
  bool filter_gpu = false;  // GPUDeviceFit
  int64_t weight_gpu = 0;   // GPUPlacement
  GpuPlacementConfig gpu;

  std::vector<std::string> ignored_resources;
  std::vector<std::string> ignored_resource_groups;
  FitStrategy strategy = FitStrategy::kLeastAllocated;
  std::vector<ResourceWeight> fit_resources;
  std::vector<std::pair<int64_t, int64_t>> shape;  // (utilization 0..100, score 0..10) as configured
  std::vector<ResourceWeight> balanced_resources;
  int64_t binpack_weight = 1;  // Volcano's binpack.weight
  std::vector<ResourceWeight> binpack_resources;
  int32_t percentage_of_nodes_to_score = 0;  // 0: kube-scheduler's adaptive default
  // Every filter of the profile in its order, built-ins and node plugins by name (the first failing one gives a
  // node's reason). Empty: the built-in filters flagged above, in kube-scheduler's default order.
  std::vector<std::string> filter_order;
  std::vector<PluginConfig> plugins;
};

// kube-scheduler's numFeasibleNodesToFind.
inline int32_t nodes_to_find(int32_t n_all, int32_t percentage) {
  constexpr int32_t kMinNodes = 100, kMinPercentage = 5;
  if (n_all < kMinNodes || percentage >= 100) return n_all;
  int64_t p = percentage;
  if (p <= 0) p = std::max<int64_t>(kMinPercentage, 50 - n_all / 125);
  const int64_t n = static_cast<int64_t>(n_all) * p / 100;
  return static_cast<int32_t>(n < kMinNodes ? kMinNodes : n);
}

}  // namespace vcore
