// PodTopologySpread, as kube-scheduler v1.34 has it.
//
// Filter (the DoNotSchedule constraints): per constraint, the pods matching its selector in the pod's namespace (not
// being deleted) are counted per topology domain over the nodes the constraint considers (the nodes with every
// constraint's topology label that pass its node inclusion policies); a node is infeasible when it lacks the label,
// or when the pod there would make its domain exceed the emptiest domain (0 with fewer domains than minDomains)
// by more than maxSkew. Score (the ScheduleAnyway constraints): per feasible node, the pods matching in its domains
// weighted by log(domains + 2), plus maxSkew - 1, normalized so that the emptiest domain scores highest. A pod with
// no constraints of its own gets the profile's defaults (kube-scheduler's system defaults or a list) with the
// selector of the Services, ReplicationControllers, ReplicaSets and StatefulSets that select it.
//
// The counts come from the pod index (pod_affinity.h): per node slot, how many matching pods are bound there.
#include <cmath>

#include "vcore/cluster_state.h"
#include "vcore/node_match.h"
#include "vcore/node_plugin.h"
#include "vcore/pod.h"

namespace vcore {
namespace {

constexpr const char* kHostname = "kubernetes.io/hostname";

// One constraint as the plugin applies it to a pod.
struct Applied {
  const SpreadConstraint* constraint;
  int32_t key;                 // the topology key, interned in this state (-1: no node has it)
  const SlotCounts* per_slot;  // matching pods bound per slot (the tracker's counts)
  const int32_t* domain;       // the topology label's domain per slot, -1 without it (nullptr: no node has the key)
  int32_t n_domains;
  int32_t missing;  // the domain a node without the label reads as: that of the value "" (kube-scheduler
                    // reads a missing map key as ""), n_domains when no node has that value
  bool self_match;  // the pod matches the selector

  Applied(const ClusterState& s, const SpreadConstraint* c, int32_t key, const SlotCounts* per_slot, bool self_match)
      : constraint(c),
        key(key),
        per_slot(per_slot),
        domain(key < 0 ? nullptr : s.domain_column(key)),
        n_domains(key < 0 ? 0 : s.n_domains(key)),
        missing(n_domains),
        self_match(self_match) {
    const int32_t empty = s.find_string("");
    if (key >= 0 && empty >= 0 && s.domain_of_value(key, empty) >= 0) missing = s.domain_of_value(key, empty);
  }
  bool has_label(int32_t slot) const { return domain != nullptr && domain[slot] >= 0; }
  int32_t domain_of(int32_t slot) const { return has_label(slot) ? domain[slot] : missing; }
};

class SpreadOfPod final : public PodPlugin {
 public:
  enum Reason { kMissingLabel = 0, kSkew = 1 };

  SpreadOfPod(const ClusterState& s, const CompiledPod& pod) : s_(s), pod_(pod), affinity_(s, pod) {}

  // PreFilter: per hard constraint, the count of each domain the constraint considers, and the minimum.
  void prepare_filter(std::vector<Applied> hard) {
    hard_ = std::move(hard);
    const int32_t n = s_.n_slots();
    std::vector<uint8_t> has_all(static_cast<size_t>(n), 0);
    for (int32_t slot = 0; slot < n; ++slot) has_all[slot] = s_.is_live(slot) && has_every_key(hard_, slot);
    for (const Applied& a : hard_) {
      // The domains of the nodes the constraint considers, then the matching pods on those nodes.
      std::vector<int64_t> counts(static_cast<size_t>(a.n_domains), 0);
      std::vector<uint8_t> present(static_cast<size_t>(a.n_domains), 0), considered(static_cast<size_t>(n), 0);
      int32_t n_present = 0;
      for (int32_t slot = 0; slot < n; ++slot) {
        if (!has_all[slot] || !included(*a.constraint, slot)) continue;
        considered[slot] = 1;
        uint8_t& p = present[static_cast<size_t>(a.domain[slot])];
        n_present += !p;
        p = 1;
      }
      for (const auto& [slot, matched] : *a.per_slot)
        if (slot < n && considered[slot]) counts[static_cast<size_t>(a.domain[slot])] += matched;
      int64_t min = static_cast<int64_t>(INT32_MAX);
      for (int32_t d = 0; d < a.n_domains; ++d)
        if (present[static_cast<size_t>(d)]) min = std::min(min, counts[static_cast<size_t>(d)]);
      if (n_present < a.constraint->min_domains) min = 0;
      domain_counts_.push_back(std::move(counts));
      min_counts_.push_back(min);
    }
    filters = !hard_.empty();
  }

  void filter(int32_t begin, int32_t end, uint8_t* failed, int64_t* reasons) const override {
    int64_t counts[2] = {0, 0};
    for (int32_t j = 0; j < end - begin; ++j) {
      if (failed[j]) continue;
      const int32_t slot = begin + j;
      for (size_t i = 0; i < hard_.size(); ++i) {
        const Applied& a = hard_[i];
        if (!a.has_label(slot)) {
          failed[j] = 1, ++counts[kMissingLabel];
          break;
        }
        const int64_t matched = domain_counts_[i][static_cast<size_t>(a.domain[slot])];
        if (matched + (a.self_match ? 1 : 0) - min_counts_[i] > a.constraint->max_skew) {
          failed[j] = 1, ++counts[kSkew];
          break;
        }
      }
    }
    reasons[reason_base + kMissingLabel] += counts[kMissingLabel];
    reasons[reason_base + kSkew] += counts[kSkew];
  }

  // PreScore + Score over the feasible nodes.
  void prepare_score(std::vector<Applied> soft, bool require_all_topologies) {
    soft_ = std::move(soft);
    require_all_ = require_all_topologies;
    scores = !soft_.empty();
  }

  void score_nodes(const int32_t* slots, int32_t n, int64_t* raw) const override {
    const int32_t hostname = s_.find_string(kHostname);
    std::vector<uint8_t> ignored(static_cast<size_t>(n), 0);
    for (int32_t i = 0; i < n; ++i) ignored[i] = require_all_ && !has_every_key(soft_, slots[i]);
    // The domains among the feasible nodes (kube-scheduler's topology sizes), then their counts over every node.
    std::vector<std::vector<int64_t>> counts(soft_.size());
    std::vector<double> weight(soft_.size());
    for (size_t c = 0; c < soft_.size(); ++c) {
      const Applied& a = soft_[c];
      int64_t size = 0;
      if (a.key == hostname) {
        for (int32_t i = 0; i < n; ++i) size += !ignored[i];
      } else {
        // -1: a domain no feasible node is in (its pods are not counted); the extra last one is `missing`.
        counts[c].assign(static_cast<size_t>(a.n_domains) + 1, -1);
        for (int32_t i = 0; i < n; ++i) {
          if (ignored[i]) continue;
          int64_t& count = counts[c][static_cast<size_t>(a.domain_of(slots[i]))];
          if (count < 0) count = 0, ++size;
        }
        for (const auto& [slot, matched] : *a.per_slot) {
          if (!s_.is_live(slot) || (require_all_ && !has_every_key(soft_, slot)) || !included(*a.constraint, slot))
            continue;
          int64_t& count = counts[c][static_cast<size_t>(a.domain_of(slot))];
          if (count >= 0) count += matched;
        }
      }
      weight[c] = std::log(static_cast<double>(size + 2));
    }
    for (int32_t i = 0; i < n; ++i) {
      if (ignored[i]) {
        raw[i] = kIgnoredScore;
        continue;
      }
      double score = 0;
      for (size_t c = 0; c < soft_.size(); ++c) {
        const Applied& a = soft_[c];
        if (!a.has_label(slots[i])) continue;
        const int64_t count =
            a.key == hostname ? a.per_slot->at(slots[i]) : counts[c][static_cast<size_t>(a.domain[slots[i]])];
        score += static_cast<double>(count) * weight[c] + static_cast<double>(a.constraint->max_skew - 1);
      }
      raw[i] = static_cast<int64_t>(std::round(score));
    }
  }

 private:
  static bool has_every_key(const std::vector<Applied>& applied, int32_t slot) {
    for (const Applied& a : applied)
      if (!a.has_label(slot)) return false;
    return true;
  }
  bool included(const SpreadConstraint& c, int32_t slot) const {
    if (c.honor_node_affinity && !affinity_.matches(slot)) return false;
    return !c.honor_taints || !has_untolerated_blocking_taint(s_.node_taints(slot), pod_.tolerations);
  }

  const ClusterState& s_;
  const CompiledPod& pod_;
  const RequiredNodeAffinity affinity_;
  std::vector<Applied> hard_, soft_;
  std::vector<std::vector<int64_t>> domain_counts_;  // per hard constraint, per domain
  std::vector<int64_t> min_counts_;
  bool require_all_ = true;
};

class PodTopologySpread final : public NodePlugin {
 public:
  explicit PodTopologySpread(const PluginArgs& args) : system_defaulting_(args.get_int("system_defaulting", 1) != 0) {
    if (system_defaulting_) {  // kube-scheduler's systemDefaultConstraints
      defaults_.push_back(default_constraint(kHostname, 3, false));
      defaults_.push_back(default_constraint("topology.kubernetes.io/zone", 5, false));
      return;
    }
    const auto keys = args.get_strings("default_keys");
    const auto skews = args.get_ints("default_max_skews"), hard = args.get_ints("default_hard");
    const auto min_domains = args.get_ints("default_min_domains");
    const auto honor_affinity = args.get_ints("default_honor_node_affinity");
    const auto honor_taints = args.get_ints("default_honor_taints");
    for (size_t i = 0; i < keys.size(); ++i) {
      SpreadConstraint c = default_constraint(keys[i], static_cast<int32_t>(skews.at(i)), hard.at(i) != 0);
      c.min_domains = static_cast<int32_t>(min_domains.at(i));
      c.honor_node_affinity = honor_affinity.at(i) != 0;
      c.honor_taints = honor_taints.at(i) != 0;
      defaults_.push_back(std::move(c));
    }
  }

  std::vector<std::string> reasons() const override {
    return {"node(s) didn't match pod topology spread constraints (missing required label)",
            "node(s) didn't match pod topology spread constraints"};
  }
  std::vector<int32_t> unresolvable_reasons() const override { return {0}; }
  Normalization normalization() const override { return Normalization::kSpread; }
  std::vector<std::string> label_keys() const override { return default_keys_; }

  std::unique_ptr<PodPlugin> prepare(const ClusterState& s, const CompiledPod& pod) const override {
    const InterPodConstraints& ip = pod.inter_pod;
    const PodIndex& index = s.pod_index();
    const auto& labels = index.labels_of(pod.identity.label_set);
    std::vector<Applied> hard, soft;
    if (!ip.spread.empty()) {
      for (size_t i = 0; i < ip.spread.size(); ++i) {
        const SpreadConstraint& c = ip.spread[i];
        (c.hard ? hard : soft)
            .emplace_back(s, &c, c.topology_key, &index.tracker_at(ip.spread_trackers[i]).per_slot,
                          c.selector.matches(labels));
      }
    } else if (ip.default_spread_tracker >= 0) {  // the profile's defaults, with the selector of what selects it
      for (size_t i = 0; i < defaults_.size(); ++i) {
        const SpreadConstraint& c = defaults_[i];
        (c.hard ? hard : soft)
            .emplace_back(s, &c, s.find_string(default_keys_[i]), &index.tracker_at(ip.default_spread_tracker).per_slot,
                          ip.default_spread_selector.matches(labels));
      }
    }
    if (hard.empty() && soft.empty()) return nullptr;
    auto out = std::make_unique<SpreadOfPod>(s, pod);
    out->depends_on_bound_pods = true;
    if (!hard.empty()) out->prepare_filter(std::move(hard));
    // kube-scheduler: every topology label is required of a node, unless the constraints are the system defaults.
    if (!soft.empty()) out->prepare_score(std::move(soft), !ip.spread.empty() || !system_defaulting_);
    return out;
  }

 private:
  SpreadConstraint default_constraint(const std::string& key, int32_t max_skew, bool hard) {
    default_keys_.push_back(key);
    SpreadConstraint c;
    c.max_skew = max_skew, c.hard = hard;
    return c;
  }

  const bool system_defaulting_;
  std::vector<SpreadConstraint> defaults_;  // their topology keys are interned per state: by name, default_keys_
  std::vector<std::string> default_keys_;
};

VCORE_NODE_PLUGIN("PodTopologySpread", [](const PluginArgs& args) -> std::unique_ptr<NodePlugin> {
  return std::make_unique<PodTopologySpread>(args);
});

}  // namespace
}  // namespace vcore
