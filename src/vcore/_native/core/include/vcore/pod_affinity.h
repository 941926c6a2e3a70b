// Inter-pod constraints: label selectors over pods, the terms of pod (anti-)affinity and topology spread, and the
// index of bound pods they count.
//
// kube-scheduler recounts, in PreFilter for every pod, the pods that match each term of the pod (and the pods
// whose terms match it) over every node. vcore keeps those counts: a pod's terms register, when it is compiled, a
// counter of the bound pods matching each of its selectors (a "tracker": per node slot, how many) and, for the
// terms bound pods carry, a counter per "term class" (per slot, how many bound pods carry it). Every bind and
// unbind updates the counters it touches, so a pod without affinity or spread pays nothing, and one with them
// reads its counts instead of walking every pod. Pods of one template share one interned label set, and each
// label set remembers which trackers it matches and where its bound pods are. Trackers and carried terms are found
// by a label their selector requires (an In of one value, as matchLabels are), so a new label set is checked
// against the few trackers that could match it, and a new tracker counts from the few label sets that could.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace vcore {

enum class SelectorOp : uint8_t;  // pod.h

// A label requirement of a pod selector (metav1.LabelSelector: In, NotIn, Exists, DoesNotExist), interned.
struct PodSelectorRequirement {
  int32_t key;
  SelectorOp op;
  std::vector<int32_t> values;  // sorted
};

// A pod label selector: requirements ANDed. `nothing`: a nil selector, which matches no pod; an empty (non-nil)
// selector matches every pod.
struct PodSelector {
  std::vector<PodSelectorRequirement> requirements;
  bool nothing = false;
  bool matches(const std::vector<std::pair<int32_t, int32_t>>& labels) const;  // labels sorted by key
};

// The namespaces a pod affinity term looks at: listed ones, or those whose labels match a selector.
struct NamespaceFilter {
  std::vector<int32_t> names;  // interned, sorted
  bool has_selector = false;
  PodSelector selector;  // namespaceSelector; an empty one means every namespace
};

// One pod (anti-)affinity term (v1.PodAffinityTerm), its namespaces resolved as the API server defaults them (none
// listed and no selector: the pod's own), matchLabelKeys/mismatchLabelKeys merged into the selector.
struct PodAffinityTerm {
  NamespaceFilter namespaces;
  PodSelector selector;
  int32_t topology_key = -1;  // interned label key
  int64_t weight = 0;         // preferred terms: 1..100
};

// One topology spread constraint (v1.TopologySpreadConstraint) with its defaults resolved.
struct SpreadConstraint {
  int32_t max_skew = 1;
  int32_t topology_key = -1;
  bool hard = true;      // DoNotSchedule; else ScheduleAnyway
  PodSelector selector;  // matchLabelKeys merged in
  int32_t min_domains = 1;
  bool honor_node_affinity = true;  // nodeAffinityPolicy Honor (default)
  bool honor_taints = false;        // nodeTaintsPolicy Honor (default Ignore)
};

// What the index knows of a pod: its namespace and labels (interned as a label set), whether it is being deleted.
struct PodIdentity {
  int32_t namespace_id = -1;
  int32_t label_set = -1;
  bool deleting = false;
};

// The terms a bound pod carries that concern other pods: per kind, the term classes (index of PodIndex::classes).
struct CarriedTerms {
  std::vector<int32_t> required_affinity, required_anti_affinity, preferred_affinity, preferred_anti_affinity;
  bool empty() const {
    return required_affinity.empty() && required_anti_affinity.empty() && preferred_affinity.empty() &&
           preferred_anti_affinity.empty();
  }
};

// How many pods per node slot, holding only the slots with any: a selector matches a few pods (a workload's
// replicas), so its counts cost memory in proportion to them, not to the cluster's nodes.
class SlotCounts {
 public:
  int32_t at(int32_t slot) const {
    const auto it = position_.find(slot);
    return it == position_.end() ? 0 : entries_[static_cast<size_t>(it->second)].second;
  }
  void add(int32_t slot, int32_t delta) {
    if (delta == 0) return;
    const auto [it, fresh] = position_.try_emplace(slot, static_cast<int32_t>(entries_.size()));
    if (fresh) entries_.emplace_back(slot, 0);
    auto& entry = entries_[static_cast<size_t>(it->second)];
    if ((entry.second += delta) != 0) return;
    // Gone to zero: the last entry takes its place, so the entries stay contiguous.
    const int32_t hole = it->second;
    position_.erase(it);
    if (static_cast<size_t>(hole) + 1 != entries_.size()) {
      entries_[static_cast<size_t>(hole)] = entries_.back();
      position_[entries_[static_cast<size_t>(hole)].first] = hole;
    }
    entries_.pop_back();
  }
  void clear() { entries_.clear(), position_.clear(); }
  // (slot, count) of every slot with a non-zero count, contiguous (kernels walk them per pod).
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  size_t bytes() const {
    return entries_.capacity() * sizeof(entries_[0]) + position_.size() * 32 + position_.bucket_count() * sizeof(void*);
  }

 private:
  std::vector<std::pair<int32_t, int32_t>> entries_;
  std::unordered_map<int32_t, int32_t> position_;  // slot -> index in entries_
};

class PodIndex {
 public:
  // One condition on a pod: in one of the filter's namespaces, with labels the selector matches.
  struct Condition {
    NamespaceFilter namespaces;
    PodSelector selector;
  };
  // A counter of bound pods, per node slot: those that meet every condition (those being deleted left out when
  // `live_only`: PodTopologySpread does not count them). Its conditions are the incoming pod's own terms.
  struct Tracker {
    std::vector<Condition> all_of;
    bool live_only = false;
    SlotCounts per_slot;
  };
  // A term carried by bound pods, and how many carry it per node slot.
  struct TermClass {
    PodAffinityTerm term;
    SlotCounts per_slot;
    int64_t total = 0;
  };

  int32_t label_set(int32_t namespace_id, std::vector<std::pair<int32_t, int32_t>> labels);  // sorted by key
  const std::vector<std::pair<int32_t, int32_t>>& labels_of(int32_t label_set) const { return sets_[label_set].labels; }
  int32_t namespace_of(int32_t label_set) const { return sets_[label_set].namespace_id; }

  // The namespaces that exist and their labels, for namespace selectors (`exists` false: the namespace is gone).
  void set_namespace_labels(int32_t namespace_id, std::vector<std::pair<int32_t, int32_t>> labels, bool exists);
  const std::vector<std::pair<int32_t, int32_t>>& namespace_labels(int32_t namespace_id) const;
  // Whether a namespace is one of a term's. kube-scheduler resolves the two sides of a term differently:
  //  - the incoming pod's own terms (`own_term`): a non-empty namespaceSelector becomes the namespaces that exist
  //    and match it (an empty one stays "every namespace"), so a namespace that does not exist matches only by name;
  //  - a bound pod's term, against the incoming pod: the selector is matched against the incoming pod's namespace
  //    labels, none when the namespace does not exist.
  bool in_namespaces(const NamespaceFilter& filter, int32_t namespace_id, bool own_term) const;
  // Whether a pod (by identity) matches a term: its namespace and its labels.
  bool matches(const PodAffinityTerm& term, const PodIdentity& pod, bool own_term) const;

  // Register (or find) the tracker of a selector (counted from the pods bound so far), and the class of a term
  // carried as one kind (kRequiredAffinity...): the same term carried as affinity by some pods and as
  // anti-affinity by others is two classes, each counting its own carriers.
  int32_t tracker(std::vector<Condition> all_of, bool live_only);
  int32_t term_class(const PodAffinityTerm& term, int kind);
  const Tracker& tracker_at(int32_t id) const { return trackers_[id]; }
  const std::vector<TermClass>& classes() const { return classes_; }
  // The term classes of one kind that some bound pod carries and whose selector could match a pod of `label_set`
  // (the caller checks the term itself): what a pod's PreFilter must look at.
  template <typename F>
  void for_active(int kind, int32_t label_set, const F& f) const;

  // A pod bound (sign +1) or unbound (-1) on a slot. Nothing is counted until the first pod with inter-pod terms
  // or spread is compiled (`counting()`): a cluster whose pods have none pays nothing for the index on bind; the
  // owner then replays the pods bound so far (`start_counting()` and one apply each) before any counter is made.
  void apply(const PodIdentity& pod, const CarriedTerms* terms, int32_t slot, int sign);  // terms: null for none
  bool counting() const { return counting_; }
  void start_counting() { counting_ = true; }
  size_t bytes() const;

  static constexpr int kRequiredAffinity = 0, kRequiredAntiAffinity = 1, kPreferredAffinity = 2,
                       kPreferredAntiAffinity = 3;

 private:
  struct LabelSet {
    int32_t namespace_id;
    std::vector<std::pair<int32_t, int32_t>> labels;
    std::vector<int32_t> trackers;  // the trackers it matches (deleting pods checked at apply)
    SlotCounts bound, live;         // its bound pods per slot, and those of them not being deleted
  };
  // A label (key, value) as one index key; kNoLabel for a selector without an In of one value; kNever for one
  // that matches no pod.
  static constexpr uint64_t kNoLabel = ~uint64_t{0}, kNever = ~uint64_t{0} - 1;
  static uint64_t label_key(int32_t key, int32_t value) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(key)) << 32) | static_cast<uint32_t>(value);
  }
  static uint64_t required_label(const PodSelector& selector);
  bool tracker_matches(const Tracker& t, const LabelSet& set) const;
  void link(int32_t tracker, int32_t label_set);  // the set matches the tracker: count its pods in
  std::vector<int32_t> tracker_candidates(const LabelSet& set) const;
  void relink_all();  // every set's trackers worked out again, every tracker counted again

  bool counting_ = false;
  std::vector<LabelSet> sets_;
  std::map<std::pair<int32_t, std::vector<std::pair<int32_t, int32_t>>>, int32_t> set_ids_;
  std::unordered_map<uint64_t, std::vector<int32_t>> sets_by_label_;
  std::vector<Tracker> trackers_;
  std::map<std::string, int32_t> tracker_ids_;
  std::unordered_map<uint64_t, std::vector<int32_t>> trackers_by_label_;
  std::vector<int32_t> trackers_without_label_;
  std::vector<TermClass> classes_;
  std::vector<uint64_t> class_label_;  // per class, required_label of its selector
  std::map<std::string, int32_t> class_ids_;
  // Per kind, the classes some bound pod carries, by their required label (kNoLabel: the rest).
  std::unordered_map<uint64_t, std::vector<int32_t>> active_[4];
  std::map<int32_t, std::vector<std::pair<int32_t, int32_t>>> namespace_labels_;  // the namespaces that exist
};

// A signature that says when two selectors (or filters, or terms) are the same, for deduplication.
std::string signature(const PodSelector& s);
std::string signature(const NamespaceFilter& f);

template <typename F>
void PodIndex::for_active(int kind, int32_t label_set, const F& f) const {
  const auto& by_label = active_[kind];
  if (by_label.empty()) return;
  const auto visit = [&](uint64_t label) {
    const auto it = by_label.find(label);
    if (it != by_label.end())
      for (int32_t id : it->second) f(id);
  };
  visit(kNoLabel);
  if (label_set < 0) return;
  for (const auto& [key, value] : sets_[static_cast<size_t>(label_set)].labels) visit(label_key(key, value));
}

}  // namespace vcore
