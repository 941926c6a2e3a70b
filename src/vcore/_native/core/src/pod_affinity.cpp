// The index of bound pods that inter-pod constraints count (pod_affinity.h), and pod selector matching.
#include "vcore/pod_affinity.h"

#include <algorithm>

#include "vcore/pod.h"

namespace vcore {

namespace {

// The value of a label key in labels sorted by key, or -1.
int32_t value_of(const std::vector<std::pair<int32_t, int32_t>>& labels, int32_t key) {
  const auto it = std::lower_bound(labels.begin(), labels.end(), std::make_pair(key, INT32_MIN));
  return it != labels.end() && it->first == key ? it->second : -1;
}

}  // namespace

bool PodSelector::matches(const std::vector<std::pair<int32_t, int32_t>>& labels) const {
  if (nothing) return false;
  for (const PodSelectorRequirement& r : requirements) {
    const int32_t v = value_of(labels, r.key);
    const bool in = v >= 0 && std::binary_search(r.values.begin(), r.values.end(), v);
    switch (r.op) {
      case SelectorOp::kIn:
        if (!in) return false;
        break;
      case SelectorOp::kNotIn:
        if (in) return false;
        break;
      case SelectorOp::kExists:
        if (v < 0) return false;
        break;
      case SelectorOp::kDoesNotExist:
        if (v >= 0) return false;
        break;
      default:
        return false;  // Gt/Lt are node selector operators: a pod selector never has them
    }
  }
  return true;
}

std::string signature(const PodSelector& s) {
  if (s.nothing) return "nil";
  std::string out;
  for (const auto& r : s.requirements) {
    out += std::to_string(r.key) + ":" + std::to_string(static_cast<int>(r.op));
    for (int32_t v : r.values) out += "," + std::to_string(v);
    out += ";";
  }
  return out;
}

std::string signature(const NamespaceFilter& f) {
  std::string out;
  for (int32_t n : f.names) out += std::to_string(n) + ",";
  if (f.has_selector) out += "sel(" + signature(f.selector) + ")";
  return out;
}

uint64_t PodIndex::required_label(const PodSelector& selector) {
  if (selector.nothing) return kNever;
  for (const PodSelectorRequirement& r : selector.requirements)
    if (r.op == SelectorOp::kIn && r.values.size() == 1) return label_key(r.key, r.values.front());
  return kNoLabel;
}

int32_t PodIndex::label_set(int32_t namespace_id, std::vector<std::pair<int32_t, int32_t>> labels) {
  auto key = std::make_pair(namespace_id, labels);
  const auto [it, inserted] = set_ids_.emplace(std::move(key), static_cast<int32_t>(sets_.size()));
  if (!inserted) return it->second;
  const int32_t id = it->second;
  sets_.push_back({namespace_id, std::move(labels), {}, {}, {}});
  for (const auto& [k, v] : sets_.back().labels) sets_by_label_[label_key(k, v)].push_back(id);
  // A new label set has no bound pod yet: it only learns which trackers it feeds.
  for (int32_t t : tracker_candidates(sets_.back()))
    if (tracker_matches(trackers_[static_cast<size_t>(t)], sets_.back())) sets_.back().trackers.push_back(t);
  return id;
}

std::vector<int32_t> PodIndex::tracker_candidates(const LabelSet& set) const {
  std::vector<int32_t> out = trackers_without_label_;
  for (const auto& [k, v] : set.labels) {
    const auto it = trackers_by_label_.find(label_key(k, v));
    if (it != trackers_by_label_.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  }
  return out;
}

void PodIndex::link(int32_t tracker, int32_t label_set) {
  LabelSet& set = sets_[static_cast<size_t>(label_set)];
  Tracker& t = trackers_[static_cast<size_t>(tracker)];
  set.trackers.push_back(tracker);
  for (const auto& [slot, n] : t.live_only ? set.live : set.bound) t.per_slot.add(slot, n);
}

int32_t PodIndex::tracker(std::vector<Condition> all_of, bool live_only) {
  std::string key = live_only ? "live" : "all";
  for (const Condition& c : all_of) key += "|" + signature(c.namespaces) + "/" + signature(c.selector);
  const auto [it, inserted] = tracker_ids_.emplace(key, static_cast<int32_t>(trackers_.size()));
  if (!inserted) return it->second;
  const int32_t id = it->second;
  // Indexed by the first label some condition requires: only sets with that label can match.
  uint64_t label = kNoLabel;
  for (const Condition& c : all_of) {
    const uint64_t l = required_label(c.selector);
    if (l == kNever || label == kNoLabel) label = l;
    if (l == kNever) break;
  }
  trackers_.push_back({std::move(all_of), live_only, {}});
  if (label == kNever) return id;  // matches no pod: nothing ever counts into it
  std::vector<int32_t> candidates;
  if (label == kNoLabel) {
    trackers_without_label_.push_back(id);
    for (size_t s = 0; s < sets_.size(); ++s) candidates.push_back(static_cast<int32_t>(s));
  } else {
    trackers_by_label_[label].push_back(id);
    const auto sets = sets_by_label_.find(label);
    if (sets != sets_by_label_.end()) candidates = sets->second;
  }
  for (int32_t s : candidates)
    if (tracker_matches(trackers_[static_cast<size_t>(id)], sets_[static_cast<size_t>(s)])) link(id, s);
  return id;
}

void PodIndex::relink_all() {
  for (Tracker& t : trackers_) t.per_slot.clear();
  for (size_t s = 0; s < sets_.size(); ++s) {
    LabelSet& set = sets_[s];
    std::vector<int32_t> candidates = tracker_candidates(set);
    set.trackers.clear();
    for (int32_t t : candidates)
      if (tracker_matches(trackers_[static_cast<size_t>(t)], set)) link(t, static_cast<int32_t>(s));
  }
}

void PodIndex::set_namespace_labels(int32_t namespace_id, std::vector<std::pair<int32_t, int32_t>> labels,
                                    bool exists) {
  std::sort(labels.begin(), labels.end());
  if (exists)
    namespace_labels_[namespace_id] = std::move(labels);
  else
    namespace_labels_.erase(namespace_id);
  // Which pods a namespace selector takes in changed: every label set's trackers are worked out and counted again.
  relink_all();
}

const std::vector<std::pair<int32_t, int32_t>>& PodIndex::namespace_labels(int32_t namespace_id) const {
  static const std::vector<std::pair<int32_t, int32_t>> none;
  const auto it = namespace_labels_.find(namespace_id);
  return it == namespace_labels_.end() ? none : it->second;
}

bool PodIndex::in_namespaces(const NamespaceFilter& filter, int32_t namespace_id, bool own_term) const {
  if (std::binary_search(filter.names.begin(), filter.names.end(), namespace_id)) return true;
  if (!filter.has_selector) return false;
  const PodSelector& sel = filter.selector;
  if (!own_term) return sel.matches(namespace_labels(namespace_id));
  // kube-scheduler's mergeAffinityTermNamespacesIfNotEmpty: an empty selector is left as is (every namespace, even
  // one without a Namespace object); any other becomes the listed namespaces it matches.
  if (!sel.nothing && sel.requirements.empty()) return true;
  const auto it = namespace_labels_.find(namespace_id);
  return it != namespace_labels_.end() && sel.matches(it->second);
}

bool PodIndex::matches(const PodAffinityTerm& term, const PodIdentity& pod, bool own_term) const {
  return in_namespaces(term.namespaces, pod.namespace_id, own_term) && term.selector.matches(labels_of(pod.label_set));
}

bool PodIndex::tracker_matches(const Tracker& t, const LabelSet& set) const {
  for (const Condition& c : t.all_of)
    if (!in_namespaces(c.namespaces, set.namespace_id, true) || !c.selector.matches(set.labels)) return false;
  return true;
}

void PodIndex::apply(const PodIdentity& pod, const CarriedTerms* carried, int32_t slot, int sign) {
  if (!counting_ || pod.label_set < 0) return;
  LabelSet& set = sets_[static_cast<size_t>(pod.label_set)];
  set.bound.add(slot, sign);
  if (!pod.deleting) set.live.add(slot, sign);
  for (int32_t id : set.trackers) {
    Tracker& t = trackers_[static_cast<size_t>(id)];
    if (!(t.live_only && pod.deleting)) t.per_slot.add(slot, sign);
  }
  if (carried == nullptr || carried->empty()) return;
  const CarriedTerms& terms = *carried;
  const std::vector<int32_t>* kinds[4] = {&terms.required_affinity, &terms.required_anti_affinity,
                                          &terms.preferred_affinity, &terms.preferred_anti_affinity};
  for (int kind = 0; kind < 4; ++kind) {
    for (int32_t id : *kinds[kind]) {
      TermClass& c = classes_[static_cast<size_t>(id)];
      c.per_slot.add(slot, sign);
      const bool was_active = c.total > 0;
      c.total += sign;
      const uint64_t label = class_label_[static_cast<size_t>(id)];
      if (label == kNever) continue;  // a term that matches no pod never rules anything in or out
      std::vector<int32_t>& active = active_[kind][label];
      if (!was_active && c.total > 0)
        active.push_back(id);
      else if (was_active && c.total == 0)
        active.erase(std::remove(active.begin(), active.end(), id), active.end());
    }
  }
}

int32_t PodIndex::term_class(const PodAffinityTerm& term, int kind) {
  const std::string key = std::to_string(kind) + "|" + signature(term.namespaces) + "|" + signature(term.selector) +
                          "|" + std::to_string(term.topology_key) + "|" + std::to_string(term.weight);
  const auto [it, inserted] = class_ids_.emplace(key, static_cast<int32_t>(classes_.size()));
  // No bound pod carries a class the moment it is made: pods count into it as they bind.
  if (inserted) {
    classes_.push_back({term, {}, 0});
    class_label_.push_back(required_label(term.selector));
  }
  return it->second;
}

size_t PodIndex::bytes() const {
  size_t b = 0;
  for (const Tracker& t : trackers_) b += sizeof(Tracker) + t.per_slot.bytes();
  for (const TermClass& c : classes_) b += sizeof(TermClass) + c.per_slot.bytes();
  for (const LabelSet& s : sets_)
    b += sizeof(LabelSet) + s.labels.capacity() * sizeof(s.labels[0]) + s.trackers.capacity() * 4 + s.bound.bytes() +
         s.live.bytes();
  b += (sets_by_label_.size() + trackers_by_label_.size()) * 48 + class_label_.capacity() * 8;
  return b;
}

}  // namespace vcore
