// One-pass trace replay of GPU pods over a GpuInventory with a placement policy (the FGD experiment protocol).
//
// Every pod is offered once, in order; feasible nodes get an integer score 0..100 (kube-scheduler style), the
// highest wins and ties go to the node that comes first in `order` (the caller passes nodes sorted by name).
// A pod that fits nowhere is dropped. The whole loop is native: one call per seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vcore/gpu_fragment.h"
#include "vcore/gpu_inventory.h"
#include "vcore/gpu_policy.h"

namespace vcore {

struct ReplayOptions {
  GpuPolicy policy = GpuPolicy::kFgd;
  uint64_t seed = 0;
  // vcore policy knobs (see vcore_score in gpu_replay.cpp): fragment-delta scale of the sigmoid (FGD: 1000),
  // the packing bonus in score points for a node whose GPUs are all allocated, and the balance bonus in points
  // for a placement that leaves the node's CPU and GPU allocated in equal proportion.
  double vcore_scale = 1000.0;
  double vcore_pack_points = 1.0;
  double vcore_balance_points = 10.0;
};

struct ReplayResult {
  std::vector<int32_t> node_idx;    // per pod: chosen node, -1 = dropped
  std::vector<uint64_t> dev_mask;   // per pod: node-local GPU indices taken (bit i = GPU i)
  std::vector<double> frag_after;   // per pod: cluster fragment sum_n F_n after the pod
  std::vector<int64_t> free_after;  // per pod: cluster free GPU milli after the pod
};

// `pods` are copied requests; `order` is a permutation of node indices (tie order). `tw` is the target workload
// used by FGD/vcore and by the fragmentation metric. Throws std::invalid_argument on bad input.
ReplayResult replay_trace(GpuInventory inv, const std::vector<GpuRequest>& pods, const std::vector<int32_t>& order,
                          const TargetWorkload& tw, const ReplayOptions& opt);

// FGD score of one pod over all nodes: score[n] (-1 when infeasible) and dev_mask[n].
void fgd_scores(const GpuInventory& inv, const GpuRequest& r, const TargetWorkload& tw, std::vector<int64_t>* score,
                std::vector<uint64_t>* dev_mask);

}  // namespace vcore
