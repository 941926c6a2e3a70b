// Engine: the fused filter/score kernels of one profile over one ClusterState.
//
// evaluate() runs every enabled filter and score plugin over all node slots in one pass (two when a score needs
// normalizing over the feasible set) and counts filter reasons. schedule() places a batch of pods in order with
// kube-scheduler's percentageOfNodesToScore sampling and rotating start, binding each placed pod.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "vcore/cluster_state.h"
#include "vcore/gang.h"
#include "vcore/gpu_scorer.h"
#include "vcore/profile.h"

namespace vcore {

namespace kernel {
struct EnginePlugins;
}

struct ScheduleResult {
  std::vector<int32_t> node;           // slot per pod, -1 when unschedulable
  std::vector<GpuAssignment> gpus;     // per pod: the devices it took (empty holds for pods without GPUs)
  std::vector<int64_t> reasons;        // [n_pods][n_reasons], zero rows for placed pods
  std::vector<uint8_t> over_headroom;  // per pod: 1 when its queue's headroom refused it (not tried)
  int32_t n_reasons = 0;
};

// kube-scheduler's DefaultPreemption for one pod (PostFilter), as a dry run: the state is left as it was found.
struct PreemptionRequest {
  int32_t offset = 0;  // where the walk over the potential nodes starts (kube-scheduler: at random)
  int32_t min_candidate_nodes_percentage = 10;
  int32_t min_candidate_nodes_absolute = 100;
  // Pending pods nominated to a node (status.nominatedNodeName), with that node's slot. Those of the preemptor's
  // priority or higher are assumed there while the pod is filtered (kube-scheduler's
  // RunFilterPluginsWithNominatedPods): it must fit both with and without them.
  std::vector<std::pair<const CompiledPod*, int32_t>> nominated;
};

// A node where evicting `victims` (most important first) lets the pod fit.
struct PreemptionCandidate {
  int32_t node;
  std::vector<std::string> victims;
  int64_t pdb_violations;  // how many victims their PodDisruptionBudgets did not allow
};

struct PreemptionOutcome {
  // Per slot, what the dry run found there (kube-scheduler's NodeToStatus): a reason code (the pod does not fit
  // even with every lower-priority pod gone), or one of:
  static constexpr int32_t kCandidate = -1;   // evicting `victims` there lets the pod fit
  static constexpr int32_t kNoVictims = -2;   // "No preemption victims found for incoming pod"
  static constexpr int32_t kNotHelpful = -3;  // "Preemption is not helpful for scheduling" (unresolvable, not tried)
  static constexpr int32_t kFits = -4;        // the pod fits there as it is
  static constexpr int32_t kOutside = -5;     // not a node, or outside a hard scope
  int32_t node = -1;                          // the chosen node, -1 when none helps
  std::vector<std::string> victims;           // the chosen node's victims, most important first
  int64_t pdb_violations = 0;                 // how many of them their PodDisruptionBudgets did not allow
  std::vector<int32_t> status;                // per slot, see above
  // The slots whose status is a reason code, with every reason the pod failed there for.
  std::vector<std::pair<int32_t, std::vector<int32_t>>> reasons;
  // Every candidate the dry run kept, as kube-scheduler's DryRunPreemption returns them: those without
  // PodDisruptionBudget violations first, each group in walk order and at most as many as it wanted.
  std::vector<PreemptionCandidate> candidates;
};

class Engine {
 public:
  Engine(std::shared_ptr<ClusterState> state, ProfileConfig config, uint64_t seed);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Callers hold the state's mutex: shared for evaluate, exclusive for schedule (it binds).
  // Writes mask/scores for slots [0, n_slots) (scores 0 for infeasible) and reason counts (size n_reasons()).
  void evaluate(const CompiledPod& pod, uint8_t* feasible_mask, int64_t* scores, std::vector<int64_t>& reasons) const;
  // `headroom` (optional, per resource axis as in GangRequest): pods asking more than is left are skipped.
  ScheduleResult schedule(const std::vector<const CompiledPod*>& pods, const std::vector<int64_t>* headroom = nullptr);
  // Places a gang (gang.h); exclusive lock. Throws Invalid before binding anything when the request is malformed.
  GangResult place_gang(const GangRequest& request);
  // kube-scheduler's DefaultPreemption (preemption.h's Evaluator and SelectVictimsOnNode): the nodes whose failure
  // an eviction could lift, from `offset` on, until enough candidates are found; per node the bound pods of lower
  // priority go, then come back, PodDisruptionBudget-violating ones first, most important first, while the pod
  // still fits; the candidate with the fewest violations, lowest highest-priority victim, lowest priority sum,
  // fewest victims, latest start of its most important victims wins. Exclusive lock (pods detach and re-attach).
  PreemptionOutcome preempt(const CompiledPod& pod, const PreemptionRequest& request);
  // Per slot, how many copies of the pod fit there now (0 where a filter fails or `allowed` is 0; the resource
  // and pod-count rows bound it, device-level GPU fit only says whether one copy fits); shared lock.
  std::vector<int32_t> fit_counts(const CompiledPod& pod, const std::vector<uint8_t>& allowed) const;
  // Whether any node passes every filter for the pod now: evaluate()'s feasible set is not empty, found without
  // looking past the first feasible node; shared lock.
  bool fits_somewhere(const CompiledPod& pod) const;
  // Count pods toward GPUPlacement's learned target workload without placing them (exclusive lock).
  void observe(const std::vector<const CompiledPod*>& pods);
  const TargetWorkload& gpu_target();  // exclusive lock

  // The node scope, a scheduler's shard. Hard: every decision (evaluate, schedule, place_gang, fit_counts,
  // preempt) sees only the named nodes, as if the others did not exist (they count under no reason). Soft:
  // schedule and place_gang try the named nodes first and the others only for what fits none of them, never the
  // `avoid` ones (another scheduler's shard). Names not (yet) in the cluster join when a node of that name is
  // added. Exclusive lock.
  void set_scope(const std::vector<std::string>& names, bool soft, const std::vector<std::string>& avoid = {});
  void clear_scope();
  bool has_scope() const { return has_scope_; }
  bool scope_soft() const { return scope_soft_; }
  int32_t scope_size() const;  // live nodes in the scope (all live nodes without one); a lock held

  int32_t n_reasons() const;
  const ProfileConfig& config() const { return config_; }
  const std::shared_ptr<ClusterState>& state() const { return state_; }
  uint64_t pods_seen() const { return sequence_; }

 private:
  // Counts the pod toward a learned target, rebuilds the target when due and resets stale fragment caches.
  const TargetWorkload& refresh_gpu_target(const CompiledPod& pod);
  GpuScoreRow gpu_score_row(const CompiledPod& pod);            // this pod's spec row of the score cache (or none)
  double cluster_cpu_pressure(const TargetWorkload& tw) const;  // of the live nodes (see cpu_pressure)
  // GPUPlacement's tieBreak NodeName: each live slot's rank in name order (empty when ties are seeded).
  std::vector<uint64_t> name_ranks() const;
  // Per slot masks of the scope, resolved from the names when nodes were added or removed since (under the
  // caller's state lock, shared or exclusive; membership cannot change under either).
  struct ScopeMasks {
    const uint8_t* inside = nullptr;   // nullptr without a scope
    const uint8_t* outside = nullptr;  // live slots not in the scope (soft: nor avoided)
    int32_t n_inside = 0, n_outside = 0;
  };
  ScopeMasks scope_masks() const;
  const uint8_t* hard_scope() const { return has_scope_ && !scope_soft_ ? scope_masks().inside : nullptr; }

  std::shared_ptr<ClusterState> state_;
  ProfileConfig config_;
  std::unique_ptr<kernel::EnginePlugins> plugins_;  // the profile's node plugins and the filter order
  uint64_t seed_;
  uint64_t sequence_ = 0;   // pods offered to schedule(); feeds the tie-break
  int32_t next_start_ = 0;  // rotating start slot (kube-scheduler's nextStartNodeIndex)
  GpuTarget target_;
  // GPUPlacement's F_before per slot, valid while the slot's node_version and the target version are unchanged.
  std::vector<double> fragment_;
  std::vector<uint64_t> fragment_node_version_;
  uint64_t fragment_target_version_ = 0;
  VcoreKnobs vcore_knobs_;  // config_.gpu.knobs at the current target's CPU pressure
  // GPUPlacement scores per (pod spec, slot); reset with the fragment caches.
  std::map<std::string, size_t> score_spec_ids_;
  std::vector<uint64_t> score_version_;
  std::vector<int64_t> score_value_;
  // place_gang's slot -> candidate map, all -1 between runs (kept to spare an n_slots allocation per run).
  std::vector<int32_t> candidate_index_;
  bool has_scope_ = false, scope_soft_ = false;
  std::unordered_set<std::string> scope_names_, scope_avoid_;
  mutable std::mutex scope_mutex_;  // resolution from shared-lock readers
  mutable bool scope_resolved_ = false;
  mutable uint64_t scope_membership_ = 0;
  mutable std::vector<uint8_t> scope_inside_, scope_outside_;
  mutable int32_t scope_n_inside_ = 0, scope_n_outside_ = 0;
};

}  // namespace vcore
