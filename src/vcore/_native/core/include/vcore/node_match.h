// A pod's node-level constraints checked on one node: node selector and required node affinity terms, and the
// taints it tolerates. The fused kernel (pod_kernel.h) runs these over blocks; node plugins that ask the same
// questions of single nodes (PodTopologySpread's node inclusion policies) use them as they are.
#pragma once
#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "vcore/cluster_state.h"
#include "vcore/pod.h"

namespace vcore {

// Whether a node whose label value of the requirement's key is `value` (-1: no such label) meets it.
inline bool label_requirement_matches(const ClusterState& s, const LabelRequirement& r, int32_t value) {
  const bool has = value >= 0;
  switch (r.op) {
    case SelectorOp::kIn:
      return has && std::find(r.values.begin(), r.values.end(), value) != r.values.end();
    case SelectorOp::kNotIn:
      return !has || std::find(r.values.begin(), r.values.end(), value) == r.values.end();
    case SelectorOp::kExists:
      return has;
    case SelectorOp::kDoesNotExist:
      return !has;
    case SelectorOp::kGt:
    case SelectorOp::kLt: {
      if (!has) return false;
      const auto& number = s.string_as_int(value);
      if (!number) return false;
      return r.op == SelectorOp::kGt ? *number > r.number : *number < r.number;
    }
  }
  return false;
}

// matchFields (metadata.name In / NotIn) of a term.
inline bool name_requirements_match(const NodeSelectorTerm& term, const std::string& node_name) {
  for (const auto& f : term.fields) {
    const bool in = std::find(f.names.begin(), f.names.end(), node_name) != f.names.end();
    if (in != (f.op == SelectorOp::kIn)) return false;
  }
  return true;
}

// NodeAffinity's PreFilter: when every required term names nodes (matchFields metadata.name In; several In
// requirements of one term are ANDed), the union of those names is every node the pod may go to, and kube-scheduler
// looks at no other. nullopt when some term names none (it may match any node); an empty list when the terms'
// names are disjoint ("pod affinity terms conflict"). Names of nodes that do not exist are kept.
inline std::optional<std::vector<std::string>> prefilter_node_names(const CompiledPod& pod) {
  if (!pod.has_required_terms || pod.required_terms.empty()) return std::nullopt;
  std::vector<std::string> all;
  for (const auto& term : pod.required_terms) {
    std::optional<std::vector<std::string>> names;
    for (const auto& f : term.fields) {
      if (f.op != SelectorOp::kIn) continue;
      std::vector<std::string> in(f.names);
      std::sort(in.begin(), in.end());
      if (!names) {
        names = std::move(in);
        continue;
      }
      std::vector<std::string> both;
      std::set_intersection(names->begin(), names->end(), in.begin(), in.end(), std::back_inserter(both));
      names = std::move(both);
    }
    if (!names) return std::nullopt;
    all.insert(all.end(), names->begin(), names->end());
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

inline bool tolerates(const Toleration& t, const Taint& taint) {
  if (t.effect != TaintEffect::kAny && t.effect != taint.effect) return false;
  if (t.key != -1 && t.key != taint.key) return false;
  return t.exists || t.value == taint.value;
}

// Whether a NoSchedule or NoExecute taint of the set is not tolerated.
inline bool has_untolerated_blocking_taint(const std::vector<Taint>& taints,
                                           const std::vector<Toleration>& tolerations) {
  for (const auto& taint : taints) {
    if (taint.effect != TaintEffect::kNoSchedule && taint.effect != TaintEffect::kNoExecute) continue;
    if (std::none_of(tolerations.begin(), tolerations.end(), [&](const Toleration& t) { return tolerates(t, taint); }))
      return true;
  }
  return false;
}

// nodeSelector and required node affinity on one node at a time (kube-scheduler's RequiredNodeAffinity.Match).
class RequiredNodeAffinity {
 public:
  RequiredNodeAffinity(const ClusterState& s, const CompiledPod& pod) : s_(s), pod_(pod) {}

  bool matches(int32_t slot) const {
    for (const auto& [key, value] : pod_.node_selector)
      if (label_value(slot, key) != value) return false;
    if (!pod_.has_required_terms) return true;
    for (const NodeSelectorTerm& term : pod_.required_terms) {        // ORed
      if (term.expressions.empty() && term.fields.empty()) continue;  // an empty term matches nothing
      bool all = name_requirements_match(term, s_.names()[slot]);
      for (size_t k = 0; all && k < term.expressions.size(); ++k)
        all = label_requirement_matches(s_, term.expressions[k], label_value(slot, term.expressions[k].key));
      if (all) return true;
    }
    return false;
  }

 private:
  int32_t label_value(int32_t slot, int32_t key) const {
    const int32_t* column = s_.label_column(key);
    if (column != nullptr) return column[slot];
    const auto& labels = s_.labels()[slot];
    const auto it = std::lower_bound(labels.begin(), labels.end(), std::make_pair(key, INT32_MIN));
    return it != labels.end() && it->first == key ? it->second : -1;
  }

  const ClusterState& s_;
  const CompiledPod& pod_;
};

}  // namespace vcore
