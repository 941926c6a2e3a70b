// Gang placement: all of a job's pending tasks placed in one native call, all or nothing.
//
// The tasks come in the order they are tried (the batch layer puts each role's minimum first). Runs of tasks
// with an identical placement spec (one role of a PodGroup, typically) share one compiled kernel and one
// candidate set: candidates are discovered from the engine's rotating start, kube-scheduler's
// percentageOfNodesToScore generalized to gangs (at least numFeasibleNodesToFind feasible nodes, and enough of
// them to hold the run), then the run's tasks go one at a time to the best candidate, re-scoring only the node
// that changed. That is exactly sequential placement over the candidate set, at a heap operation per task
// instead of a pass over the nodes. Placements are real binds in the cluster state; a gang that ends below its
// minimums is unbound again before the call returns, so nothing of it survives.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "vcore/gpu_devices.h"
#include "vcore/pod.h"

namespace vcore {

inline constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kMaxScoreBonus = int64_t{1} << 40;  // |score_bonus| bound, far below int64 overflow

struct GangRequest {
  std::vector<const CompiledPod*> tasks;  // in the order they are tried
  std::vector<int32_t> role;              // per task: its role's index into role_need
  std::vector<int32_t> role_need;         // per role: placements still missing for the role's minimum
  int32_t need = 0;                       // placements still missing for minMember (<= 0: ready already)
  std::vector<int64_t> headroom;          // per resource axis: what the queue may still take (kUnlimited: no
                                          // limit; axes past the end are unlimited)
  std::vector<uint8_t> allowed;           // per slot: 1 where the gang may go; empty: everywhere
  std::vector<int32_t> cap;               // per slot: at most this many of the gang's tasks (0: none); empty: no
                                          // cap (topology: the domain search's pods per node)
  std::vector<double> score_bonus;        // per slot: added to the node's weighted score before the normalized
                                          // plugins (topology: soft-mode and HyperNode scores), its fraction
                                          // ranking equal integer totals; empty: none
  bool all_or_nothing = true;             // undo every placement unless the gang ends ready
};

// Whether a pod's requests fit a queue's headroom (per axis; axes past the end are unlimited), and taking them.
inline bool within_headroom(const CompiledPod& pod, const std::vector<int64_t>& headroom) {
  for (const auto& [axis, amount] : pod.requests)
    if (static_cast<size_t>(axis) < headroom.size() && amount > headroom[static_cast<size_t>(axis)]) return false;
  return true;
}

inline void take_headroom(const CompiledPod& pod, std::vector<int64_t>& headroom) {
  for (const auto& [axis, amount] : pod.requests)
    if (static_cast<size_t>(axis) < headroom.size() && headroom[static_cast<size_t>(axis)] != kUnlimited)
      headroom[static_cast<size_t>(axis)] -= amount;
}

enum class TaskOutcome : uint8_t { kNotTried = 0, kPlaced = 1, kNoFit = 2, kHeadroom = 3 };

struct GangResult {
  std::vector<int32_t> node;         // per task: the slot it was bound to, or -1
  std::vector<GpuAssignment> gpus;   // per task: the devices it took
  std::vector<TaskOutcome> outcome;  // per task (placements undone by all-or-nothing read kPlaced, node -1)
  bool ready = false;
  int32_t first_unfit = -1;      // first task no node fit; `reasons` counts why, over every slot
  std::vector<int64_t> reasons;  // n_reasons wide; zeros when every task found a node
  int64_t evaluations = 0;       // node evaluations made (discovery and re-scoring)
};

}  // namespace vcore
