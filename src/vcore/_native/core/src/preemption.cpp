// Engine::preemption_report: kube-scheduler's DefaultPreemption dry run for a pod that fits no node, for the words
// of its PostFilter ("preemption: 0/5 nodes are available: 2 No preemption victims found for incoming pod, ...").
// Nothing is evicted here: the pods a node would lose are detached while the node is tried and attached again.
#include <algorithm>

#include "vcore/engine.h"
#include "vcore/node_plugin.h"
#include "vcore/pod_kernel.h"

namespace vcore {

using namespace kernel;  // NOLINT: the kernel's names read as the engine's own

namespace {

// Whether a reason code is UnschedulableAndUnresolvable whatever the node ("Insufficient <resource>" is not: that
// depends on the node's allocatable, see resolvable()).
bool unresolvable_code(size_t code) {
  const std::vector<uint8_t>& unresolvable = reason_unresolvable();
  return code < unresolvable.size() && unresolvable[code] != 0;
}

// Whether a node that failed with `codes` (the first failing filter's reasons) might fit once pods are evicted:
// no reason of the status UnschedulableAndUnresolvable; when NodeResourcesFit failed it, no resource the pod asks
// more of than the node's allocatable (kube-scheduler marks that insufficiency unresolvable).
bool resolvable(const std::vector<int64_t>& codes, const std::vector<blocks::ResourceRow>& fit_rows, int32_t slot) {
  bool fit_failed = codes[kTooManyPods] != 0;
  for (size_t code = 0; code < codes.size(); ++code) {
    if (codes[code] == 0) continue;
    if (unresolvable_code(code)) return false;
    fit_failed |= static_cast<int32_t>(code) >= insufficient_base();
  }
  if (fit_failed)
    for (const auto& row : fit_rows)
      if (row.amount > row.alloc[slot]) return false;
  return true;
}

}  // namespace

std::optional<PreemptionReport> Engine::preemption_report(const CompiledPod& pod) {
  ClusterState& s = *state_;
  if (pod.state_id != s.id()) throw Invalid("pod " + pod.key + ": compiled for another cluster");
  if (pod.never_preempts || pod.refused || !s.n_nodes()) return std::nullopt;
  const std::vector<uint8_t> ignored = ignored_axes(s, config_);
  const uint8_t* scope = hard_scope();
  const PodKernel shared(s, config_, *plugins_, ignored, pod);
  // NodeAffinity's PreFilter refused the pod as a whole: kube-scheduler's PostFilter has nothing to dry-run.
  if (shared.terms_conflict()) return std::nullopt;
  // What a node plugin prepared (PreFilter) may depend on the pods bound: then a fresh kernel per look.
  const bool fresh = shared.depends_on_bound_pods();
  const std::vector<blocks::ResourceRow> fit_rows = shared.fit_rows();
  const bool anyone_lower = s.lowest_bound_priority() < pod.priority;
  PreemptionReport out;
  out.reasons.assign(static_cast<size_t>(n_reasons()), 0);
  std::vector<int64_t> codes(out.reasons.size());
  // The filters alone on one slot (no scores): whether it passes, its reasons in `codes`.
  const auto look = [&](const PodKernel& kernel, int32_t slot) {
    std::fill(codes.begin(), codes.end(), 0);
    uint8_t ok[1];
    kernel.filter_block(slot, slot + 1, fit_rows, ok, codes.data(), scope);
    return ok[0] != 0;
  };
  // Whether the node's failure might be resolved by evicting, from which filter failed it first: the fused
  // built-ins' reasons are known by the filter alone (NodeResourcesFit's but for a request past the allocatable);
  // a node plugin's are looked at on the node.
  const auto may_resolve = [&](int32_t slot, uint8_t first) {
    if (first == PodKernel::kPreFilter) return false;
    switch (shared.stages()[first].stage) {
      case Stage::kUnschedulable:
      case Stage::kTaints:
      case Stage::kAffinity:
        return false;
      case Stage::kFit:
        return std::none_of(fit_rows.begin(), fit_rows.end(), [slot](const auto& row) { return row.amount > row.alloc[slot]; });
      case Stage::kGpu:
        return true;
      case Stage::kPlugin:
        break;
    }
    look(shared, slot);
    return resolvable(codes, fit_rows, slot);
  };
  // A node that failed: not helpful, no victims, or tried again without the pods of lower priority.
  const auto dry_run = [&](int32_t slot, uint8_t first) {
    if (!may_resolve(slot, first)) {
      ++out.not_helpful;
      return;
    }
    std::vector<std::string> lower;
    if (anyone_lower) lower = s.pods_below(slot, pod.priority);
    if (lower.empty()) {
      ++out.no_victims;
      return;
    }
    std::vector<std::pair<std::string, BoundPod>> removed;
    removed.reserve(lower.size());
    for (std::string& key : lower) {
      BoundPod record = s.detach(key);
      removed.emplace_back(std::move(key), std::move(record));
    }
    const bool fits = fresh ? look(PodKernel(s, config_, *plugins_, ignored, pod), slot) : look(shared, slot);
    for (auto it = removed.rbegin(); it != removed.rend(); ++it) s.attach(it->first, std::move(it->second));
    if (fits) {
      out.candidate = true;
      return;
    }
    for (size_t code = 0; code < codes.size(); ++code) out.reasons[code] += codes[code];
  };
  std::vector<int64_t> block_codes(out.reasons.size());
  uint8_t ok[kBlock], first[kBlock];
  for (int32_t begin = 0; begin < s.n_slots(); begin += kBlock) {
    const int32_t end = std::min(s.n_slots(), begin + kBlock);
    shared.filter_block(begin, end, fit_rows, ok, block_codes.data(), scope, first);
    for (int32_t slot = begin; slot < end; ++slot) {
      const uint8_t stage = first[slot - begin];
      if (stage == PodKernel::kNotLooked) continue;
      if (stage == PodKernel::kPassed) out.candidate = true;  // fits as it is (a caller asked anyway): it goes there
      else dry_run(slot, stage);
    }
  }
  return out;
}

}  // namespace vcore
