// The fused per-pod kernel, shared by the engine's entry points (evaluate, schedule, the gang placement).
//
// PodKernel holds one pod's compiled filter checks and score terms (pointers to the rows it reads); BlockRunner
// runs them over a contiguous block of node slots with no allocation. Internal to the native core: only engine
// and gang translation units include this header.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "vcore/block_kernels.h"
#include "vcore/cluster_state.h"
#include "vcore/errors.h"
#include "vcore/gpu_scorer.h"
#include "vcore/node_match.h"
#include "vcore/node_plugin.h"
#include "vcore/profile.h"
#include "vcore/reasons.h"

namespace vcore {
namespace kernel {

constexpr int64_t kMaxNodeScore = 100;
constexpr int32_t kMaxCachedTaintSets = 4096;  // more distinct sets than this: check tolerations per node
constexpr int32_t kParallelMinSlots = 8192;    // below this waking a helper thread costs more than it saves

inline uint64_t mix64(uint64_t x) {  // splitmix64 finalizer: the seeded tie-break rule
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// (a * 100) / b without overflow for any non-negative int64 a <= b.
inline int64_t percent_of(int64_t a, int64_t b) {
  if (a <= std::numeric_limits<int64_t>::max() / kMaxNodeScore) return a * kMaxNodeScore / b;
  return static_cast<int64_t>(static_cast<__int128>(a) * kMaxNodeScore / b);
}

// The filter stages in the profile's order: the fused built-ins and the node plugins (node_plugin.h).
enum class Stage : uint8_t { kUnschedulable, kTaints, kAffinity, kFit, kGpu, kPlugin };
struct FilterStageRef {
  Stage stage;
  int32_t plugin = -1;  // index into EnginePlugins::slots for kPlugin
};

// A node plugin of the profile, built once by the engine.
struct PluginSlot {
  std::string name;
  std::unique_ptr<NodePlugin> plugin;
  bool filter = false;
  int64_t weight = 0;  // 0: not a score plugin of the profile
  Normalization normalization = Normalization::kNone;
  int32_t reason_base = 0;
};

struct EnginePlugins {
  std::vector<PluginSlot> slots;
  std::vector<FilterStageRef> order;  // every filter the profile enables, in its order
};

// A score normalized over the feasible nodes: TaintToleration's, NodeAffinity's, or a node plugin's.
struct NormalizedTerm {
  Normalization kind;
  int64_t weight;
};
constexpr int32_t kMaxNormalized = 8;  // of one pod: two built-ins, the rest plugins

struct FitCheck {
  int32_t axis;
  int64_t amount;
  const int64_t* alloc;
  const int64_t* used;
};

struct ScoreTerm {
  int32_t axis;
  int64_t weight;
  int64_t amount;  // the pod's request for this resource
  const int64_t* alloc;
  const int64_t* used;
};

struct BinpackTerm {
  double weight;
  double amount;
  const int64_t* alloc;
  const int64_t* used;
};

class PodKernel {
 public:
  PodKernel(const ClusterState& s, const ProfileConfig& c, const EnginePlugins& plugins,
            const std::vector<uint8_t>& ignored, const CompiledPod& pod)
      : s_(s), c_(c), pod_(pod), insufficient_base_(insufficient_base()) {
    if (pod.state_id != s.id()) throw Invalid("pod " + pod.key + ": compiled for another cluster");
    const auto& alloc = s.allocatable();
    const auto& req = s.requested();
    const auto& nz = s.nonzero_requested();
    pods_alloc_ = alloc.row(kAxisPods);
    pods_used_ = req.row(kAxisPods);
    // A kernel is made per pod class and call: its small vectors are sized once rather than grown.
    fit_.reserve(pod.requests.size());
    for (const auto& [axis, amount] : pod.requests)
      if (!ignored[static_cast<size_t>(axis)]) fit_.push_back({axis, amount, alloc.row(axis), req.row(axis)});
    check_affinity_ = c.filter_affinity && (!pod.node_selector.empty() || pod.has_required_terms);
    if (c.filter_affinity) {
      if (const auto names = prefilter_node_names(pod)) {
        terms_conflict_ = names->empty();
        if (!terms_conflict_) {
          prefilter_.assign(static_cast<size_t>(s.n_slots()), 0);
          for (const std::string& name : *names) {
            const int32_t slot = s.node_index(name);
            if (slot >= 0) prefilter_[static_cast<size_t>(slot)] = 1;
          }
        }
      }
    }
    for (const auto& [key, value] : pod.node_selector) selector_.push_back({column_of(key), value});
    for (const auto& term : pod.required_terms) required_.push_back(resolve(term));
    for (const auto& [weight, term] : pod.preferred_terms) preferred_.push_back({weight, resolve(term)});
    for (const auto& t : pod.tolerations)
      if (t.effect == TaintEffect::kAny || t.effect == TaintEffect::kPreferNoSchedule) prefer_tolerations_.push_back(t);
    count_prefer_taints_ = c.weight_taints > 0 && s.prefer_no_schedule_taints() > 0;
    // Tolerations against each taint set once, when there are few sets (pools); else per node.
    if (s.n_taint_sets() <= kMaxCachedTaintSets) {
      untolerated_by_set_.reserve(static_cast<size_t>(s.n_taint_sets()));
      prefer_count_by_set_.reserve(static_cast<size_t>(s.n_taint_sets()));
      for (int32_t id = 0; id < s.n_taint_sets(); ++id) {
        untolerated_by_set_.push_back(has_untolerated(s.taint_set(id)));
        prefer_count_by_set_.push_back(count_prefer(s.taint_set(id)));
      }
    }
    sum_preferred_ = c.weight_affinity > 0 && !pod.preferred_terms.empty();
    if (c.weight_fit > 0) fit_terms_ = score_terms(c.fit_resources, /*nonzero=*/true, alloc, req, nz);
    if (c.weight_balanced > 0) balanced_terms_ = score_terms(c.balanced_resources, /*nonzero=*/false, alloc, req, nz);
    // kube-scheduler skips BalancedAllocation for a pod that requests none of its resources (best-effort), so
    // such pods do not all pile onto the same node (kubernetes#129138).
    weight_balanced_ =
        std::any_of(balanced_terms_.begin(), balanced_terms_.end(), [](const ScoreTerm& t) { return t.amount > 0; })
            ? c.weight_balanced
            : 0;
    if (c.weight_binpack > 0) {
      for (const auto& [axis, amount] : pod.requests) {
        for (const auto& rw : c.binpack_resources) {
          if (s.find_resource_axis(rw.name) != axis) continue;
          binpack_.push_back(
              {static_cast<double>(rw.weight), static_cast<double>(amount), alloc.row(axis), req.row(axis)});
        }
      }
      for (const auto& t : binpack_) binpack_weight_sum_ += t.weight;
    }
    shape_.reserve(c.shape.size());
    for (const auto& [u, score] : c.shape) shape_.emplace_back(u, score * (kMaxNodeScore / 10));
    if (pod.gpu.uses_gpus()) allowed_models_ = s.gpus().allowed_models(pod.gpu);
    check_gpu_ = c.filter_gpu && pod.gpu.needs_devices();
    refused_ = pod.refused;
    if (count_prefer_taints_) normalized_.push_back({Normalization::kMaxReverse, c.weight_taints});
    if (sum_preferred_) normalized_.push_back({Normalization::kMax, c.weight_affinity});
    prepared_.resize(plugins.slots.size());
    for (size_t k = 0; k < plugins.slots.size(); ++k) {
      const PluginSlot& slot = plugins.slots[k];
      std::unique_ptr<PodPlugin> prepared = slot.plugin->prepare(s, pod);
      if (prepared == nullptr) continue;
      prepared->reason_base = slot.reason_base;
      depends_on_bound_pods_ |= prepared->depends_on_bound_pods && (prepared->filters || prepared->scores);
      filters_depend_on_bound_pods_ |= prepared->depends_on_bound_pods && prepared->filters;
      if (slot.weight > 0 && prepared->scores) {
        if (slot.normalization == Normalization::kNone) {
          final_scores_.push_back(static_cast<int32_t>(k));
        } else if (normalized_.size() < static_cast<size_t>(kMaxNormalized)) {
          normalized_.push_back({slot.normalization, slot.weight});
          normalized_plugins_.push_back(static_cast<int32_t>(k));
        } else {
          throw Invalid("profile: more than " + std::to_string(kMaxNormalized) + " normalized score plugins");
        }
      }
      prepared_[k] = std::move(prepared);
    }
    // The first filtering plugin (in the profile's order) whose PreFilter rejected the pod decides for every node;
    // without one, the first whose Filter fails with an error.
    for (const bool at_filter : {false, true}) {
      for (const FilterStageRef& stage : plugins.order) {
        if (stage.stage != Stage::kPlugin || rejection_ >= 0) continue;
        const auto& prepared = prepared_[static_cast<size_t>(stage.plugin)];
        if (prepared == nullptr || prepared->rejects_with < 0 || prepared->rejects_at_filter != at_filter) continue;
        rejection_ = prepared->reason_base + prepared->rejects_with;
      }
    }
    for (const FilterStageRef& stage : plugins.order) {
      switch (stage.stage) {
        case Stage::kUnschedulable:
          if (!pod.tolerates_unschedulable) stages_.push_back(stage);
          break;
        case Stage::kTaints:
          stages_.push_back(stage);
          break;
        case Stage::kAffinity:
          if (check_affinity_) stages_.push_back(stage);
          break;
        case Stage::kFit:
          stages_.push_back(stage);
          break;
        case Stage::kGpu:
          if (check_gpu_) stages_.push_back(stage);
          break;
        case Stage::kPlugin: {
          const auto& prepared = prepared_[static_cast<size_t>(stage.plugin)];
          if (prepared != nullptr && prepared->filters) stages_.push_back(stage);
          break;
        }
      }
    }
  }

  // How many copies of the pod the node's free resources and pod slots hold (call only where it is feasible).
  // Without the NodeResourcesFit filter nothing bounds it; device-level GPU fit is not counted beyond one copy.
  int64_t copies_that_fit(int32_t i) const {
    if (!c_.filter_fit) return std::numeric_limits<int32_t>::max();
    int64_t copies = pods_alloc_[i] - pods_used_[i];
    for (const auto& f : fit_) copies = std::min(copies, (f.alloc[i] - f.used[i]) / f.amount);
    return std::max<int64_t>(copies, 0);
  }

  // allowed[m] per GPU model id (empty: any model).
  const std::vector<uint8_t>& allowed_models() const { return allowed_models_; }

  bool needs_normalization() const { return !normalized_.empty(); }
  // NodeAffinity's PreFilter found the required terms' node names disjoint: the pod is refused as a whole.
  bool terms_conflict() const { return terms_conflict_; }
  // The pod's normalized scores, in the order their raw values are written (TaintToleration's, NodeAffinity's,
  // then the node plugins').
  const std::vector<NormalizedTerm>& normalized() const { return normalized_; }
  // Node plugins whose answer changes when other pods bind (a gang's tasks then go one at a time).
  bool depends_on_bound_pods() const { return depends_on_bound_pods_; }
  // The same for feasibility alone (preemption's dry run reads only the mask).
  bool filters_depend_on_bound_pods() const { return filters_depend_on_bound_pods_; }
  // Reserve: the pod was bound to `slot` by a scheduling decision (exclusive lock held).
  void reserve(ClusterState& s, const CompiledPod& pod, int32_t slot) const {
    for (const auto& prepared : prepared_)
      if (prepared != nullptr) prepared->reserve(s, pod, slot);
  }

  // The normalized scores of the node plugins come after the built-ins' (which the block pass writes): their raw
  // values are asked for once the feasible nodes are known.
  size_t first_plugin_term() const { return normalized_.size() - normalized_plugins_.size(); }
  bool has_plugin_terms() const { return !normalized_plugins_.empty(); }
  // raw[first_plugin_term() + k][i]: the k-th normalized plugin's raw score of slots[i].
  void plugin_scores(const int32_t* slots, int32_t n, int64_t* const* raw) const {
    const size_t first = first_plugin_term();
    for (size_t k = 0; k < normalized_plugins_.size(); ++k) {
      std::fill(raw[first + k], raw[first + k] + n, int64_t{0});
      prepared_[static_cast<size_t>(normalized_plugins_[k])]->score_nodes(slots, n, raw[first + k]);
    }
  }

  // scores[j] += weight * raw for the node plugins whose score needs no normalization.
  void add_final_plugin_scores(int32_t begin, int32_t end, const uint8_t* mask, int64_t* scores,
                               const EnginePlugins& plugins) const {
    int64_t raw[512];
    const int32_t n = end - begin;
    for (int32_t k : final_scores_) {
      std::fill(raw, raw + n, int64_t{0});
      prepared_[static_cast<size_t>(k)]->score(begin, end, mask, raw);
      const int64_t weight = plugins.slots[static_cast<size_t>(k)].weight;
      for (int32_t j = 0; j < n; ++j)
        if (mask[j]) scores[j] += weight * raw[j];
    }
  }
  bool has_final_plugin_scores() const { return !final_scores_.empty(); }

  // Rows and flags for the vectorized block path (block_kernels.h).
  std::vector<blocks::ResourceRow> fit_rows() const {
    std::vector<blocks::ResourceRow> rows;
    rows.reserve(fit_.size());
    for (const auto& f : fit_) rows.push_back({f.alloc, f.used, f.amount, 0});
    return rows;
  }
  static std::vector<blocks::ResourceRow> rows_of(const std::vector<ScoreTerm>& terms) {
    std::vector<blocks::ResourceRow> rows;
    rows.reserve(terms.size());
    for (const auto& t : terms) rows.push_back({t.alloc, t.used, t.amount, t.weight});
    return rows;
  }
  std::vector<blocks::ResourceRow> fit_score_rows() const { return rows_of(fit_terms_); }
  std::vector<blocks::ResourceRow> balanced_rows() const { return rows_of(balanced_terms_); }
  bool vector_fit_score() const {
    if (c_.weight_fit == 0 || c_.strategy == FitStrategy::kRequestedToCapacityRatio) return false;
    for (const auto& t : fit_terms_)
      if (s_.max_allocatable(t.axis) >= (int64_t{1} << 45)) return false;
    return true;
  }
  int64_t weight_balanced() const { return weight_balanced_; }
  bool vector_balanced_score() const { return weight_balanced_ > 0 && balanced_terms_.size() == 2; }
  bool balanced_both_present(int32_t i) const {
    return balanced_terms_[0].alloc[i] > 0 && balanced_terms_[1].alloc[i] > 0;
  }
  bool count_prefer_taints() const { return count_prefer_taints_; }
  bool sum_preferred() const { return sum_preferred_; }

  // taints[j] = prefer_taint_count(begin + j) where mask[j], else 0.
  void prefer_counts_block(int32_t begin, int32_t end, const uint8_t* mask, int64_t* taints) const {
    const int32_t n = end - begin;
    if (!prefer_count_by_set_.empty()) {
      blocks::gather_where(n, mask, s_.taint_set_ids() + begin, prefer_count_by_set_.data(), taints);
      return;
    }
    const uint8_t* prefer = s_.prefer_taints().data() + begin;
    for (int32_t j = 0; j < n; ++j) taints[j] = prefer[j] && mask[j] ? prefer_taint_count(begin + j) : 0;
  }

  int64_t prefer_taint_count(int32_t i) const {
    if (!prefer_count_by_set_.empty()) return prefer_count_by_set_[s_.taint_set_ids()[i]];
    return count_prefer(s_.node_taints(i));
  }

  std::vector<ScoreTerm> score_terms(const std::vector<ResourceWeight>& resources, bool nonzero,
                                     const SharedMatrix& alloc, const SharedMatrix& req, const SharedMatrix& nz) const {
    std::vector<ScoreTerm> out;
    out.reserve(resources.size());
    for (const auto& rw : resources) {
      const int32_t axis = s_.find_resource_axis(rw.name);
      if (axis < 0) continue;  // no node has it: allocatable 0 everywhere, so it is skipped
      int64_t amount = pod_.request(axis);
      const int64_t* used = req.row(axis);
      // NodeResourcesFit: the node's non-zero requests of its bound pods, plus the pod's own as the scorer reads it.
      if (nonzero && axis == kAxisCpu) amount = pod_.score_cpu_milli, used = nz.row(0);
      if (nonzero && axis == kAxisMemory) amount = pod_.score_mem_bytes, used = nz.row(1);
      // kube-scheduler skips scalar resources the pod does not request.
      if (amount == 0 && s_.is_scalar_resource(axis)) continue;
      out.push_back({axis, rw.weight, amount, alloc.row(axis), used});
    }
    return out;
  }

  bool has_untolerated_taint(int32_t i) const {
    if (!untolerated_by_set_.empty()) return untolerated_by_set_[s_.taint_set_ids()[i]];
    return has_untolerated(s_.node_taints(i));
  }

  // Whether a NoSchedule or NoExecute taint of the set is not tolerated by the pod.
  bool has_untolerated(const std::vector<Taint>& taints) const {
    return has_untolerated_blocking_taint(taints, pod_.tolerations);
  }

  // PreferNoSchedule taints of the set not tolerated by a toleration with an empty or PreferNoSchedule effect.
  int64_t count_prefer(const std::vector<Taint>& taints) const {
    int64_t count = 0;
    for (const auto& taint : taints) {
      if (taint.effect != TaintEffect::kPreferNoSchedule) continue;
      bool tolerated = false;
      for (const auto& t : prefer_tolerations_) tolerated |= tolerates(t, taint);
      count += !tolerated;
    }
    return count;
  }

  // A compiled pod's selector terms with their label columns looked up once.
  struct ResolvedRequirement {
    const int32_t* column;
    const LabelRequirement* requirement;
  };
  struct ResolvedTerm {
    std::vector<ResolvedRequirement> requirements;
    const NodeSelectorTerm* term;
  };

  const int32_t* column_of(int32_t key) const {
    const int32_t* column = s_.label_column(key);
    if (column == nullptr)
      throw Invalid("pod " + pod_.key + ": label column missing (pod compiled for another state?)");
    return column;
  }

  ResolvedTerm resolve(const NodeSelectorTerm& term) const {
    ResolvedTerm out{{}, &term};
    for (const auto& r : term.expressions) out.requirements.push_back({column_of(r.key), &r});
    return out;
  }

  bool matches_requirement(int32_t i, const ResolvedRequirement& rr) const {
    return label_requirement_matches(s_, *rr.requirement, rr.column[i]);
  }

  bool matches_fields(int32_t i, const NodeSelectorTerm& term) const {
    return name_requirements_match(term, s_.names()[i]);
  }

  // term_mask[j] = whether node begin + j matches the term; vector loops for the label operators.
  void term_block(int32_t begin, int32_t end, const ResolvedTerm& rt, uint8_t* term_mask) const {
    const int32_t n = end - begin;
    std::fill(term_mask, term_mask + n, uint8_t{1});
    if (rt.requirements.empty() && rt.term->fields.empty()) {
      std::fill(term_mask, term_mask + n, uint8_t{0});
      return;
    }
    for (const auto& rr : rt.requirements) {
      const LabelRequirement& r = *rr.requirement;
      switch (r.op) {
        case SelectorOp::kIn:
        case SelectorOp::kNotIn:
          blocks::and_label_in(begin, end, rr.column, r.values.data(), static_cast<int32_t>(r.values.size()),
                               r.op == SelectorOp::kNotIn, term_mask);
          break;
        case SelectorOp::kExists:
        case SelectorOp::kDoesNotExist:
          blocks::and_label_exists(begin, end, rr.column, r.op == SelectorOp::kDoesNotExist, term_mask);
          break;
        default:
          for (int32_t j = 0; j < n; ++j) term_mask[j] &= matches_requirement(begin + j, rr);
      }
    }
    if (!rt.term->fields.empty())
      for (int32_t j = 0; j < n; ++j) term_mask[j] &= matches_fields(begin + j, *rt.term);
  }

  // ok[j] &= nodeSelector and required node affinity, for a block.
  void and_affinity_block(int32_t begin, int32_t end, uint8_t* ok) const {
    for (const auto& [column, value] : selector_) blocks::and_label_in(begin, end, column, &value, 1, false, ok);
    if (!pod_.has_required_terms) return;
    const int32_t n = end - begin;
    uint8_t any[512], term_mask[512];
    std::fill(any, any + n, uint8_t{0});
    for (const auto& term : required_) {
      term_block(begin, end, term, term_mask);
      for (int32_t j = 0; j < n; ++j) any[j] |= term_mask[j];
    }
    for (int32_t j = 0; j < n; ++j) ok[j] &= any[j];
  }

  // The exact filter over a block: ok[j] = feasible, reasons counted as filter() counts them (the first failing
  // plugin's reasons; all insufficient resources). Only nodes with a NoSchedule/NoExecute taint take a scalar look.
  // `scope` (per slot, or nullptr) leaves out the slots where it is 0 as if they were free: not counted anywhere.
  void filter_block(int32_t begin, int32_t end, const std::vector<blocks::ResourceRow>& fit_rows, uint8_t* ok,
                    int64_t* reasons, const uint8_t* scope = nullptr) const {
    const int32_t n = end - begin;
    const uint8_t* live = s_.live()->data() + begin;
    uint8_t failed[512];
    for (int32_t j = 0; j < n; ++j) failed[j] = !live[j];  // free slots are not counted under any reason
    if (scope != nullptr)
      for (int32_t j = 0; j < n; ++j) failed[j] |= !scope[begin + j];
    // A constraint vcore does not evaluate (no node is safe), or a PreFilter rejection: NodeAffinity's terms naming
    // no node (its PreFilter runs first), or a volume plugin's.
    if (refused_ || terms_conflict_ || rejection_ >= 0) {
      int64_t count = 0;
      for (int32_t j = 0; j < n; ++j) count += !failed[j];
      reasons[refused_          ? static_cast<int32_t>(kUnhonored)
              : terms_conflict_ ? static_cast<int32_t>(kAffinityTermsConflict)
                                : rejection_] += count;
      std::fill(ok, ok + n, uint8_t{0});
      return;
    }
    if (!prefilter_.empty()) {  // NodeAffinity's PreFilter: no filter looks at a node the terms do not name
      int64_t count = 0;
      for (int32_t j = 0; j < n; ++j) {
        const uint8_t f = static_cast<uint8_t>(!failed[j] & !prefilter_[static_cast<size_t>(begin + j)]);
        failed[j] |= f;
        count += f;
      }
      reasons[kNodeAffinityPreFilter] += count;
    }
    for (const FilterStageRef& stage : stages_) {
      switch (stage.stage) {
        case Stage::kUnschedulable: {
          const uint8_t* unschedulable = s_.unschedulable().data() + begin;
          int64_t count = 0;
          for (int32_t j = 0; j < n; ++j) {
            const uint8_t f = static_cast<uint8_t>(!failed[j] & (unschedulable[j] != 0));
            failed[j] |= f;
            count += f;
          }
          reasons[kUnschedulable] += count;
          break;
        }
        case Stage::kTaints: {
          const uint8_t* blocking = s_.blocking_taints().data() + begin;
          int64_t count = 0;
          if (!untolerated_by_set_.empty()) {  // a table lookup per node
            count =
                blocks::mark_from_table(n, blocking, s_.taint_set_ids() + begin, untolerated_by_set_.data(), failed);
          } else {
            for (int32_t j = 0; j < n; ++j) {
              if (!failed[j] && blocking[j] && has_untolerated_taint(begin + j)) {
                failed[j] = 1;
                ++count;
              }
            }
          }
          reasons[kUntoleratedTaint] += count;
          break;
        }
        case Stage::kAffinity: {
          uint8_t match[512];
          std::fill(match, match + n, uint8_t{1});
          and_affinity_block(begin, end, match);
          int64_t count = 0;
          for (int32_t j = 0; j < n; ++j) {
            const uint8_t f = static_cast<uint8_t>(!failed[j] & !match[j]);
            failed[j] |= f;
            count += f;
          }
          reasons[kAffinityMismatch] += count;
          break;
        }
        case Stage::kFit: {
          int64_t insufficient[64];  // only the rows' counts are read: zeroing all 64 cost a single-node run more
          const int32_t n_rows = std::min<int32_t>(64, static_cast<int32_t>(fit_rows.size()));
          std::fill(insufficient, insufficient + n_rows, int64_t{0});
          blocks::fit_filter(begin, end, pods_alloc_, pods_used_, fit_rows.data(), n_rows, failed,
                             &reasons[kTooManyPods], insufficient);
          for (int32_t r = 0; r < n_rows; ++r) reasons[insufficient_base_ + fit_[r].axis] += insufficient[r];
          break;
        }
        case Stage::kGpu: {  // GPUDeviceFit: per node, only for pods that ask for GPU devices or NUMA alignment
          int64_t count = 0, numa = 0;
          for (int32_t j = 0; j < n; ++j) {
            if (failed[j] || s_.gpus().fit(begin + j, pod_.gpu, allowed_models_, nullptr)) continue;
            failed[j] = 1;
            if (pod_.gpu.numa_policy != NumaPolicy::kNone &&
                s_.gpus().fit_unaligned(begin + j, pod_.gpu, allowed_models_))
              ++numa;
            else
              ++count;
          }
          reasons[kGpuDevices] += count;
          reasons[kNumaAlignment] += numa;
          break;
        }
        case Stage::kPlugin:
          prepared_[static_cast<size_t>(stage.plugin)]->filter(begin, end, failed, reasons);
          break;
      }
    }
    for (int32_t j = 0; j < n; ++j) ok[j] = !failed[j];
  }

  // raw[j] = sum of the weights of the preferred terms node begin + j matches.
  void preferred_block(int32_t begin, int32_t end, int64_t* raw) const {
    const int32_t n = end - begin;
    uint8_t term_mask[512];
    std::fill(raw, raw + n, int64_t{0});
    for (const auto& [weight, term] : preferred_) {
      term_block(begin, end, term, term_mask);
      blocks::add_weight_where(n, term_mask, weight, raw);
    }
  }

  int64_t shape_at(int64_t utilization) const {  // kube-scheduler's broken linear function
    for (size_t k = 0; k < shape_.size(); ++k) {
      if (utilization <= shape_[k].first) {
        if (k == 0) return shape_[0].second;
        const auto [u0, s0] = shape_[k - 1];
        const auto [u1, s1] = shape_[k];
        return s0 + (s1 - s0) * (utilization - u0) / (u1 - u0);
      }
    }
    return shape_.back().second;
  }

  int64_t fit_score(int32_t i) const {
    int64_t sum = 0, weights = 0;
    for (const auto& t : fit_terms_) {
      const int64_t alloc = t.alloc[i];
      if (alloc == 0) continue;  // kube-scheduler leaves resources the node lacks out of the mean
      const int64_t req = t.used[i] + t.amount;
      int64_t s;
      switch (c_.strategy) {
        case FitStrategy::kLeastAllocated:
          s = req > alloc ? 0 : percent_of(alloc - req, alloc);
          break;
        case FitStrategy::kMostAllocated:
          s = percent_of(std::min(req, alloc), alloc);
          break;
        default:
          s = shape_at(req > alloc ? kMaxNodeScore : percent_of(req, alloc));
          // kube-scheduler's RequestedToCapacityRatio leaves a resource that scores 0 out of the mean.
          if (s == 0) continue;
      }
      sum += s * t.weight;
      weights += t.weight;
    }
    if (weights == 0) return 0;
    if (c_.strategy == FitStrategy::kRequestedToCapacityRatio)
      return static_cast<int64_t>(std::round(static_cast<double>(sum) / static_cast<double>(weights)));
    return sum / weights;
  }

  int64_t balanced_score(int32_t i) const {
    double fractions[16];
    double total = 0;
    int n = 0;
    for (const auto& t : balanced_terms_) {
      const int64_t alloc = t.alloc[i];
      if (alloc == 0 || n == 16) continue;
      const double f = std::min(1.0, static_cast<double>(t.used[i] + t.amount) / static_cast<double>(alloc));
      fractions[n++] = f;
      total += f;
    }
    double std_dev = 0;
    if (n == 2) {
      std_dev = std::abs((fractions[0] - fractions[1]) / 2);
    } else if (n > 2) {
      const double mean = total / n;
      double sum = 0;
      for (int k = 0; k < n; ++k) sum += (fractions[k] - mean) * (fractions[k] - mean);
      std_dev = std::sqrt(sum / n);
    }
    return static_cast<int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
  }

  int64_t binpack_score(int32_t i) const {  // Volcano's BinPackingScore, in its float arithmetic
    double score = 0;
    for (const auto& t : binpack_) {
      const double alloc = static_cast<double>(t.alloc[i]);
      if (alloc == 0 || t.weight == 0) continue;
      const double used = t.amount + static_cast<double>(t.used[i]);
      if (used > alloc) return 0;
      score += used * t.weight / alloc;
    }
    if (binpack_weight_sum_ > 0) score /= binpack_weight_sum_;
    return static_cast<int64_t>(score * static_cast<double>(kMaxNodeScore * c_.binpack_weight));
  }

 private:
  const ClusterState& s_;
  const ProfileConfig& c_;
  const CompiledPod& pod_;
  const int64_t* pods_alloc_;
  const int64_t* pods_used_;
  std::vector<FitCheck> fit_;
  bool check_affinity_;
  bool count_prefer_taints_;
  bool sum_preferred_;
  std::vector<Toleration> prefer_tolerations_;
  std::vector<int32_t> untolerated_by_set_;  // per taint set (0/1); empty: evaluate per node
  std::vector<int64_t> prefer_count_by_set_;
  std::vector<std::pair<const int32_t*, int32_t>> selector_;  // label column, wanted value
  std::vector<ResolvedTerm> required_;
  std::vector<std::pair<int64_t, ResolvedTerm>> preferred_;
  std::vector<ScoreTerm> fit_terms_, balanced_terms_;
  std::vector<BinpackTerm> binpack_;
  double binpack_weight_sum_ = 0;
  int64_t weight_balanced_ = 0;
  std::vector<std::pair<int64_t, int64_t>> shape_;
  std::vector<uint8_t> allowed_models_;
  bool check_gpu_ = false;
  bool refused_ = false;
  bool terms_conflict_ = false;     // NodeAffinity's PreFilter: the required terms name disjoint nodes
  std::vector<uint8_t> prefilter_;  // per slot, 1 where the PreFilter's node names allow it; empty: every slot
  int32_t rejection_ = -1;          // reason code of a PreFilter rejection (-1: none)
  const int32_t insufficient_base_;
  std::vector<FilterStageRef> stages_;                // the filters this pod meets, in the profile's order
  std::vector<std::unique_ptr<PodPlugin>> prepared_;  // per plugin slot; nullptr where the plugin has nothing to do
  std::vector<NormalizedTerm> normalized_;
  std::vector<int32_t> normalized_plugins_, final_scores_;  // plugin slots
  bool depends_on_bound_pods_ = false;
  bool filters_depend_on_bound_pods_ = false;
};

// kube-scheduler's DefaultNormalizeScore for one raw value given the maximum over the feasible nodes.
inline int64_t normalized(int64_t raw, int64_t max_raw, bool reverse) {
  if (max_raw == 0) return reverse ? kMaxNodeScore : 0;
  const int64_t s = kMaxNodeScore * raw / max_raw;
  return reverse ? kMaxNodeScore - s : s;
}

inline std::vector<uint8_t> ignored_axes(const ClusterState& s, const ProfileConfig& c) {
  std::vector<uint8_t> ignored(static_cast<size_t>(s.n_resources()), 0);
  for (int32_t axis = 0; axis < s.n_resources(); ++axis) {
    if (!s.is_extended_resource(axis)) continue;  // only extended resources can be ignored
    const std::string& name = s.resource_name(axis);
    const std::string group = name.substr(0, name.find('/'));
    ignored[axis] =
        std::find(c.ignored_resources.begin(), c.ignored_resources.end(), name) != c.ignored_resources.end() ||
        std::find(c.ignored_resource_groups.begin(), c.ignored_resource_groups.end(), group) !=
            c.ignored_resource_groups.end();
  }
  return ignored;
}

constexpr int32_t kBlock = 512;  // slots per block: the block buffers stay in L1

// One pod's fused pass over a contiguous block of slots. Outputs are block-relative: mask[j], scores[j] (base
// score, before the normalized plugins), and raw[k][j], the raw value of the pod's k-th normalized score
// (PodKernel::normalized(); written for the built-in terms only). Reasons are added to `reasons`.
class BlockRunner {
 public:
  BlockRunner(const ClusterState& s, const ProfileConfig& c, const EnginePlugins& plugins,
              const std::vector<uint8_t>& ignored, const CompiledPod& pod, const TargetWorkload& gpu_target,
              const VcoreKnobs& knobs, std::vector<double>* fragment_cache = nullptr,
              std::vector<uint64_t>* fragment_versions = nullptr, const GpuScoreRow& gpu_scores = {})
      : s_(s),
        c_(c),
        plugins_(plugins),
        kernel_(s, c, plugins, ignored, pod),
        gpu_(s, c.gpu, knobs, pod, kernel_.allowed_models(), gpu_target, fragment_cache, fragment_versions, gpu_scores),
        fit_rows_(kernel_.fit_rows()),
        fit_score_rows_(kernel_.fit_score_rows()),
        balanced_rows_(kernel_.balanced_rows()),
        vector_fit_(kernel_.vector_fit_score()),
        vector_balanced_(kernel_.vector_balanced_score()),
        scalar_scores_(c.weight_binpack > 0 || (c.weight_fit > 0 && !vector_fit_) ||
                       (kernel_.weight_balanced() > 0 && !vector_balanced_)),
        // TaintToleration with no PreferNoSchedule taint anywhere normalizes to 100 on every feasible node.
        taint_constant_((c.weight_taints > 0 && !kernel_.count_prefer_taints()) ? c.weight_taints * kMaxNodeScore : 0) {
  }

  const PodKernel& kernel() const { return kernel_; }
  const GpuScorer& gpu() const { return gpu_; }
  // Slots where `scope` is 0 are left out of every run (infeasible, no reason counted); nullptr: none left out.
  void restrict_to(const uint8_t* scope) { scope_ = scope; }

  void run(int32_t begin, int32_t end, uint8_t* mask, int64_t* scores, int64_t* const* raw, int64_t* reasons) const {
    uint8_t ok[kBlock];
    int64_t fit[kBlock], balanced[kBlock];
    const int32_t n = end - begin;
    // 1. Filters, exact, with reasons counted.
    kernel_.filter_block(begin, end, fit_rows_, ok, reasons, scope_);
    // 2. Vector scores, computed for every slot of the block and masked by combine.
    if (vector_fit_)
      blocks::allocated_score(begin, end, c_.strategy == FitStrategy::kMostAllocated, fit_score_rows_.data(),
                              static_cast<int32_t>(fit_score_rows_.size()), fit);
    else
      std::fill(fit, fit + n, int64_t{0});
    if (vector_balanced_)
      blocks::balanced_two(begin, end, balanced_rows_[0], balanced_rows_[1], balanced);
    else
      std::fill(balanced, balanced + n, int64_t{0});
    const int32_t rescore =
        blocks::combine(n, ok, fit, vector_fit_ ? c_.weight_fit : 0, balanced,
                        vector_balanced_ ? kernel_.weight_balanced() : 0, taint_constant_, mask, scores);
    // 3. Scalar scores for the few feasible slots the vector path could not settle.
    if (rescore > 0 || scalar_scores_) {
      for (int32_t j = 0; j < n; ++j) {
        if (!ok[j] || (!scalar_scores_ && (!vector_balanced_ || balanced[j] >= 0))) continue;
        const int32_t i = begin + j;
        int64_t total = taint_constant_;
        if (c_.weight_fit > 0) total += c_.weight_fit * (vector_fit_ ? fit[j] : kernel_.fit_score(i));
        if (kernel_.weight_balanced() > 0)
          total += kernel_.weight_balanced() *
                   (vector_balanced_ && balanced[j] >= 0 ? balanced[j] : kernel_.balanced_score(i));
        if (c_.weight_binpack > 0) total += c_.weight_binpack * kernel_.binpack_score(i);
        scores[j] = total;
      }
    }
    // GPUPlacement: the policy's score per feasible node (node and GPUs are chosen together; see GpuScorer).
    if (c_.weight_gpu > 0) {
      for (int32_t j = 0; j < n; ++j)
        if (mask[j]) scores[j] += c_.weight_gpu * gpu_.score(begin + j);
    }
    if (kernel_.has_final_plugin_scores()) kernel_.add_final_plugin_scores(begin, end, mask, scores, plugins_);
    // 4. Raw values of the built-in normalized scores (the node plugins' come from PodKernel::plugin_scores).
    int32_t k = 0;
    if (kernel_.count_prefer_taints()) kernel_.prefer_counts_block(begin, end, mask, raw[k++]);
    if (kernel_.sum_preferred()) kernel_.preferred_block(begin, end, raw[k++]);
  }

 private:
  const ClusterState& s_;
  const ProfileConfig& c_;
  const EnginePlugins& plugins_;
  const PodKernel kernel_;
  const GpuScorer gpu_;
  const std::vector<blocks::ResourceRow> fit_rows_, fit_score_rows_, balanced_rows_;
  const bool vector_fit_, vector_balanced_, scalar_scores_;
  const int64_t taint_constant_;
  const uint8_t* scope_ = nullptr;
};

// Block buffers for the raw values of a pod's normalized scores (BlockRunner::run's `raw`).
struct RawBlocks {
  int64_t values[kMaxNormalized][kBlock];
  int64_t* rows[kMaxNormalized];
  RawBlocks() {
    for (int32_t k = 0; k < kMaxNormalized; ++k) rows[k] = values[k];
  }
};

// The minimum and maximum raw value of each normalized score over feasible nodes, and the final scores.
struct NormalizationRange {
  int64_t min[kMaxNormalized];
  int64_t max[kMaxNormalized];
  NormalizationRange() {
    std::fill(min, min + kMaxNormalized, std::numeric_limits<int64_t>::max());
    std::fill(max, max + kMaxNormalized, std::numeric_limits<int64_t>::min());
  }
  void add(int32_t k, int64_t raw) {
    if (raw == kIgnoredScore) return;
    min[k] = std::min(min[k], raw), max[k] = std::max(max[k], raw);
  }
  void merge(const NormalizationRange& o, int32_t n) {
    for (int32_t k = 0; k < n; ++k) min[k] = std::min(min[k], o.min[k]), max[k] = std::max(max[k], o.max[k]);
  }
  // Term k's weighted normalized score of one raw value.
  int64_t score(const NormalizedTerm& term, size_t k, int64_t raw) const {
    return term.weight * normalize(term.kind, raw, min[k], max[k]);
  }
  // The weighted sum of the normalized scores of one node, given its raw values.
  int64_t total(const std::vector<NormalizedTerm>& terms, const int64_t* raw) const {
    int64_t sum = 0;
    for (size_t k = 0; k < terms.size(); ++k) sum += score(terms[k], k, raw[k]);
    return sum;
  }
};

// The node plugins' normalized scores of these feasible nodes (each with .slot and .raw), over them at once: their
// PreScore sees the whole set.
template <typename Node>
void add_plugin_scores(const PodKernel& kernel, std::vector<Node>& nodes) {
  const size_t first = kernel.first_plugin_term(), n_terms = kernel.normalized().size();
  std::vector<int32_t> slots;
  slots.reserve(nodes.size());
  for (const Node& c : nodes) slots.push_back(c.slot);
  std::vector<std::vector<int64_t>> values(n_terms, std::vector<int64_t>(nodes.size()));
  int64_t* out[kMaxNormalized];
  for (size_t k = 0; k < n_terms; ++k) out[k] = values[k].data();
  kernel.plugin_scores(slots.data(), static_cast<int32_t>(slots.size()), out);
  for (size_t i = 0; i < nodes.size(); ++i)
    for (size_t k = first; k < n_terms; ++k) nodes[i].raw[k] = values[k][i];
}

}  // namespace kernel
}  // namespace vcore
