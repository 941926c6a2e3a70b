// Conversion of the flat spec dicts built by vcore._native._convert into the core's input structs.
#include "convert.h"

namespace vcore_bindings {
namespace {

vcore::TermInput term_input(const py::dict& term, const std::string& what) {
  vcore::TermInput out;
  using Req = std::tuple<std::string, std::string, std::vector<std::string>>;
  for (const auto& [key, op, values] : field_or<std::vector<Req>>(term, "expressions", what, {}))
    out.expressions.push_back({key, op, values});
  for (const auto& [key, op, values] : field_or<std::vector<Req>>(term, "fields", what, {}))
    out.fields.push_back({key, op, values});
  return out;
}

}  // namespace

vcore::NodeInput node_input(const py::dict& spec) {
  const std::string what = "node spec";
  vcore::NodeInput n;
  n.name = field<std::string>(spec, "name", what);
  const std::string named = "node " + n.name;
  n.labels = field_or<decltype(n.labels)>(spec, "labels", named, {});
  for (const auto& [k, v] : field_or<py::dict>(spec, "allocatable", named, py::dict())) {
    try {
      n.allocatable.emplace_back(k.cast<std::string>(), v.cast<int64_t>());
    } catch (const py::cast_error&) {
      throw py::type_error(named + ": status.allocatable: expected str -> int64 entries");
    }
  }
  n.taints = field_or<decltype(n.taints)>(spec, "taints", named, {});
  n.unschedulable = field_or<bool>(spec, "unschedulable", named, false);
  return n;
}

vcore::PodInput pod_input(const py::dict& spec) {
  vcore::PodInput p;
  p.key = field<std::string>(spec, "key", "pod spec");
  const std::string what = "pod " + p.key;
  for (const auto& [k, v] : field_or<py::dict>(spec, "requests", what, py::dict())) {
    try {
      p.requests.emplace_back(k.cast<std::string>(), v.cast<int64_t>());
    } catch (const py::cast_error&) {
      throw py::type_error(what + ": requests: expected str -> int64 entries");
    }
  }
  p.nonzero_cpu_milli = field_or<int64_t>(spec, "nonzero_cpu_milli", what, 0);
  p.nonzero_mem_bytes = field_or<int64_t>(spec, "nonzero_mem_bytes", what, 0);
  p.priority = field_or<int64_t>(spec, "priority", what, 0);
  p.node_selector = field_or<decltype(p.node_selector)>(spec, "node_selector", what, {});
  if (spec.contains("required_terms") && !spec["required_terms"].is_none()) {
    std::vector<vcore::TermInput> terms;
    for (const auto& t : field<py::list>(spec, "required_terms", what)) terms.push_back(term_input(t.cast<py::dict>(), what));
    p.required_terms = std::move(terms);
  }
  for (const auto& item : field_or<py::list>(spec, "preferred_terms", what, py::list())) {
    const auto pair = item.cast<py::tuple>();
    if (pair.size() != 2) throw py::value_error(what + ": preferred_terms entries must be (weight, term) pairs");
    p.preferred_terms.emplace_back(pair[0].cast<int64_t>(), term_input(pair[1].cast<py::dict>(), what));
  }
  p.tolerations = field_or<decltype(p.tolerations)>(spec, "tolerations", what, {});
  return p;
}

}  // namespace vcore_bindings
