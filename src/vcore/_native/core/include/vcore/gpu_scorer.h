// GPUPlacement's per-node scoring: one pod's GPU policy score on a node of the live cluster, and the
// devices the policy would take there, so the engine chooses node and GPUs together.
//
// Scores are in tenths of a point: the published policies' 0..100 score x 10, vcore's own up to 1110 (FGD x 10 plus
// packing and balance bonuses), so vcore keeps its full resolution inside kube-scheduler's weighted sum. The policy
// formulas are gpu_policy.h's, fed the node as a GpuNodeView built from the device table; the trace replay feeds
// them a GpuInventory instead, and both place every pod alike (tests/sim/gpu/test_live_replay.py).
#pragma once

#include <cstdint>
#include <vector>

#include "vcore/cluster_state.h"
#include "vcore/gpu_policy.h"
#include "vcore/profile.h"

namespace vcore {

// GPUPlacement scores of one pod spec per slot, valid while the slot's node_version is unchanged (+1; 0 = empty).
struct GpuScoreRow {
  uint64_t* version = nullptr;
  int64_t* value = nullptr;
};

class GpuScorer {
 public:
  // `cache`: F_before per slot with the node version it was computed at (+1; 0 = empty), or nullptr to compute
  // every time (evaluate(), which may run on several threads). `scores`: this pod spec's row of the score cache.
  GpuScorer(const ClusterState& s, const GpuPlacementConfig& c, const VcoreKnobs& knobs, const CompiledPod& pod,
            const std::vector<uint8_t>& allowed, const TargetWorkload& tw, std::vector<double>* cache,
            std::vector<uint64_t>* cache_version, const GpuScoreRow& scores)
      : s_(s),
        c_(c),
        knobs_(knobs),
        pod_(pod),
        allowed_(allowed),
        tw_(tw),
        cache_(cache),
        cache_version_(cache_version),
        scores_(scores),
        cpu_(pod.request(kAxisCpu)),
        memory_(pod.request(kAxisMemory)) {}

  // The score alone, from the per-spec cache when this pod's spec has a row there (schedule() only).
  int64_t score(int32_t slot) const;
  // The score and the devices the pod would take on the slot (empty holds when it asks for no GPU, or when the
  // devices do not fit because GPUDeviceFit is disabled: then the score is 0).
  int64_t score(int32_t slot, GpuAssignment* choice) const;

 private:
  double fragment(int32_t slot, const GpuNodeView& v) const;  // F_before, cached per node version

  const ClusterState& s_;
  const GpuPlacementConfig& c_;
  const VcoreKnobs knobs_;
  const CompiledPod& pod_;
  const std::vector<uint8_t>& allowed_;
  const TargetWorkload& tw_;
  std::vector<double>* cache_;
  std::vector<uint64_t>* cache_version_;
  const GpuScoreRow scores_;
  const int64_t cpu_, memory_;
};

}  // namespace vcore
