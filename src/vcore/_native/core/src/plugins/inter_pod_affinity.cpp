// InterPodAffinity, as kube-scheduler v1.34 has it.
//
// Filter: a node must be in a topology domain that holds a pod matching every required affinity term of the pod
// (or, for the first pod of a group with affinity to itself, no pod anywhere matches and the pod matches its own
// terms), in no domain holding a pod that a required anti-affinity term of the pod matches, and in no domain where
// a bound pod's required anti-affinity term matches this pod. Score: per topology domain, the weights of the pod's
// preferred terms times the pods they match there, plus the weights of the bound pods' terms that match this pod
// (their required affinity at hardPodAffinityWeight, their preferred terms at their weights), summed over the node's
// domains and normalized min-max over the feasible nodes; with ignorePreferredTermsOfExistingPods, a pod without
// preferred terms of its own is not scored.
//
// The counts come from the pod index (pod_affinity.h): nothing here walks the bound pods.
#include <map>
#include <vector>

#include "vcore/cluster_state.h"
#include "vcore/node_plugin.h"
#include "vcore/pod.h"

namespace vcore {
namespace {

// Counts per topology domain of one key: the domains as dense ids (ClusterState::domain_column), so a node's count
// is two loads.
struct DomainCounts {
  const int32_t* domain = nullptr;  // per slot, -1 where the node lacks the label (nullptr: no node has it)
  std::vector<int64_t> count;       // per domain
  bool any = false;                 // some pod was counted

  DomainCounts(const ClusterState& s, int32_t key)
      : domain(s.domain_column(key)), count(static_cast<size_t>(s.n_domains(key)), 0) {}
  bool has_label(int32_t slot) const { return domain != nullptr && domain[slot] >= 0; }
  int64_t at(int32_t slot) const { return has_label(slot) ? count[static_cast<size_t>(domain[slot])] : 0; }
  // Add per-slot counts (times `factor`) into the domains of their nodes; nodes without the label add nothing.
  void add(const SlotCounts& per_slot, int64_t factor = 1) {
    if (domain == nullptr) return;
    for (const auto& [slot, n] : per_slot) {
      const int32_t d = domain[slot];
      if (d < 0) continue;
      count[static_cast<size_t>(d)] += n * factor;
      any = true;
    }
  }
};

class AffinityOfPod final : public PodPlugin {
 public:
  enum Reason { kAffinity = 0, kAntiAffinity = 1, kExistingAntiAffinity = 2 };

  void filter(int32_t begin, int32_t end, uint8_t* failed, int64_t* reasons) const override {
    int64_t counts[3] = {0, 0, 0};
    for (int32_t j = 0; j < end - begin; ++j) {
      if (failed[j]) continue;
      const int32_t slot = begin + j;
      int reason = -1;
      if (!satisfies_affinity(slot))
        reason = kAffinity;
      else if (violates(anti_, slot))
        reason = kAntiAffinity;
      else if (violates(existing_anti_, slot))
        reason = kExistingAntiAffinity;
      if (reason < 0) continue;
      failed[j] = 1;
      ++counts[reason];
    }
    for (int r = 0; r < 3; ++r) reasons[reason_base + r] += counts[r];
  }

  void score_nodes(const int32_t* slots, int32_t n, int64_t* raw) const override {
    for (int32_t i = 0; i < n; ++i) {
      int64_t total = 0;
      for (const DomainCounts& k : scores_) total += k.at(slots[i]);
      raw[i] = total;
    }
  }

  // Required affinity: per term, its key's column and the domains holding a pod that matches every term.
  std::vector<DomainCounts> affinity_;
  bool no_pod_matches_all_ = false;  // affinityCounts empty: no such pod on any node with the term's label
  bool matches_own_terms_ = false;
  std::vector<DomainCounts> anti_, existing_anti_;  // domains a count > 0 rules out
  std::vector<DomainCounts> scores_;                // per topology key, the score of each domain

 private:
  bool satisfies_affinity(int32_t slot) const {
    bool pods_exist = true;
    for (const DomainCounts& k : affinity_) {
      if (!k.has_label(slot)) return false;  // every topology label must be on the node
      if (k.at(slot) <= 0) pods_exist = false;
    }
    // The first pod of a group with affinity to itself: nothing matches anywhere yet, and it matches itself.
    return pods_exist || (no_pod_matches_all_ && matches_own_terms_);
  }

  static bool violates(const std::vector<DomainCounts>& keyed, int32_t slot) {
    for (const DomainCounts& k : keyed)
      if (k.at(slot) > 0) return true;
    return false;
  }
};

class InterPodAffinity final : public NodePlugin {
 public:
  InterPodAffinity(int64_t hard_weight, bool ignore_existing_preferred)
      : hard_weight_(hard_weight), ignore_existing_preferred_(ignore_existing_preferred) {}

  std::vector<std::string> reasons() const override {
    return {"node(s) didn't match pod affinity rules", "node(s) didn't match pod anti-affinity rules",
            "node(s) didn't satisfy existing pods anti-affinity rules"};
  }
  std::vector<int32_t> unresolvable_reasons() const override { return {0}; }
  Normalization normalization() const override { return Normalization::kMinMax; }

  std::unique_ptr<PodPlugin> prepare(const ClusterState& s, const CompiledPod& pod) const override {
    const PodIndex& index = s.pod_index();
    const InterPodConstraints& c = pod.inter_pod;
    auto out = std::make_unique<AffinityOfPod>();

    // Filter (PreFilter): the pod's required terms, and the required anti-affinity of the pods bound.
    if (!c.required_affinity.empty()) {
      const auto& per_slot = index.tracker_at(c.affinity_tracker).per_slot;
      bool any = false;
      for (const auto& t : c.required_affinity) {
        out->affinity_.emplace_back(s, t.topology_key);
        out->affinity_.back().add(per_slot);
        any |= out->affinity_.back().any;
      }
      out->no_pod_matches_all_ = !any;
      out->matches_own_terms_ = true;
      for (const auto& t : c.required_affinity) out->matches_own_terms_ &= index.matches(t, pod.identity, true);
    }
    for (size_t i = 0; i < c.required_anti_affinity.size(); ++i) {
      out->anti_.emplace_back(s, c.required_anti_affinity[i].topology_key);
      out->anti_.back().add(index.tracker_at(c.anti_affinity_trackers[i]).per_slot);
    }
    // Per topology key, the domains where a bound pod's term rules this pod out.
    std::map<int32_t, DomainCounts> existing;
    index.for_active(PodIndex::kRequiredAntiAffinity, pod.identity.label_set, [&](int32_t id) {
      const PodIndex::TermClass& tc = index.classes()[static_cast<size_t>(id)];
      if (index.matches(tc.term, pod.identity, false))
        existing.try_emplace(tc.term.topology_key, s, tc.term.topology_key).first->second.add(tc.per_slot);
    });
    for (auto& [key, counts] : existing) out->existing_anti_.push_back(std::move(counts));
    out->filters = !out->affinity_.empty() || !out->anti_.empty() || !out->existing_anti_.empty();

    // Score (PreScore): per topology key, each domain's score. ignorePreferredTermsOfExistingPods skips scoring
    // altogether for a pod without preferred terms of its own (the bound pods' required terms included).
    const bool has_preferred = !c.preferred_affinity.empty() || !c.preferred_anti_affinity.empty();
    out->depends_on_bound_pods = true;
    if (ignore_existing_preferred_ && !has_preferred) return out->filters ? std::move(out) : nullptr;
    std::map<int32_t, DomainCounts> topo;
    const auto add = [&](int32_t key, const SlotCounts& per_slot, int64_t factor) {
      topo.try_emplace(key, s, key).first->second.add(per_slot, factor);
    };
    for (size_t i = 0; i < c.preferred_affinity.size(); ++i)
      add(c.preferred_affinity[i].topology_key, index.tracker_at(c.preferred_affinity_trackers[i]).per_slot,
          c.preferred_affinity[i].weight);
    for (size_t i = 0; i < c.preferred_anti_affinity.size(); ++i)
      add(c.preferred_anti_affinity[i].topology_key, index.tracker_at(c.preferred_anti_affinity_trackers[i]).per_slot,
          -c.preferred_anti_affinity[i].weight);
    const auto add_existing = [&](int kind, int64_t sign, bool by_weight) {
      index.for_active(kind, pod.identity.label_set, [&](int32_t id) {
        const PodIndex::TermClass& tc = index.classes()[static_cast<size_t>(id)];
        if (index.matches(tc.term, pod.identity, false))
          add(tc.term.topology_key, tc.per_slot, sign * (by_weight ? tc.term.weight : hard_weight_));
      });
    };
    if (hard_weight_ > 0) add_existing(PodIndex::kRequiredAffinity, 1, false);
    add_existing(PodIndex::kPreferredAffinity, 1, true);
    add_existing(PodIndex::kPreferredAntiAffinity, -1, true);
    for (auto& [key, counts] : topo)
      if (counts.any) out->scores_.push_back(std::move(counts));
    out->scores = !out->scores_.empty();
    if (!out->filters && !out->scores) return nullptr;
    return out;
  }

 private:
  const int64_t hard_weight_;
  const bool ignore_existing_preferred_;
};

VCORE_NODE_PLUGIN("InterPodAffinity", [](const PluginArgs& args) -> std::unique_ptr<NodePlugin> {
  return std::make_unique<InterPodAffinity>(args.get_int("hard_pod_affinity_weight", 1),
                                            args.get_int("ignore_preferred_terms_of_existing_pods", 0) != 0);
});

}  // namespace
}  // namespace vcore
