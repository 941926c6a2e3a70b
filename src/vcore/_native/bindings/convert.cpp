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

using Requirement = std::tuple<std::string, std::string, std::vector<std::string>>;

vcore::PodSelectorInput pod_selector(const py::handle& value, const std::string& what) {
  vcore::PodSelectorInput out;
  if (value.is_none()) {
    out.nothing = true;
    return out;
  }
  const auto d = value.cast<py::dict>();
  out.nothing = field_or<bool>(d, "nothing", what, false);
  for (const auto& [key, op, values] : field_or<std::vector<Requirement>>(d, "requirements", what, {}))
    out.requirements.push_back({key, op, values});
  return out;
}

vcore::AffinityTermInput affinity_term(const py::handle& value, const std::string& what) {
  const auto d = value.cast<py::dict>();
  vcore::AffinityTermInput t;
  t.namespaces = field_or<std::vector<std::string>>(d, "namespaces", what, {});
  if (d.contains("namespace_selector") && !d["namespace_selector"].is_none()) {
    t.has_namespace_selector = true;
    t.namespace_selector = pod_selector(d["namespace_selector"], what);
  }
  t.selector = pod_selector(d.contains("selector") ? py::object(d["selector"]) : py::object(py::none()), what);
  t.topology_key = field<std::string>(d, "topology_key", what);
  t.weight = field_or<int64_t>(d, "weight", what, 0);
  return t;
}

vcore::SpreadInput spread_constraint(const py::handle& value, const std::string& what) {
  const auto d = value.cast<py::dict>();
  vcore::SpreadInput c;
  c.max_skew = field<int32_t>(d, "max_skew", what);
  c.topology_key = field<std::string>(d, "topology_key", what);
  c.hard = field<bool>(d, "hard", what);
  c.selector = pod_selector(d.contains("selector") ? py::object(d["selector"]) : py::object(py::none()), what);
  c.min_domains = field_or<int32_t>(d, "min_domains", what, 1);
  c.honor_node_affinity = field_or<bool>(d, "honor_node_affinity", what, true);
  c.honor_taints = field_or<bool>(d, "honor_taints", what, false);
  return c;
}

// The pod's inter-pod constraints (present only for pods that have any).
void inter_pod_input(const py::dict& spec, vcore::PodInput& p, const std::string& what) {
  if (spec.contains("pod_affinity")) {
    const auto a = spec["pod_affinity"].cast<py::dict>();
    const auto list = [&](const char* key, std::vector<vcore::AffinityTermInput>& out) {
      if (!a.contains(key)) return;
      for (const auto& t : a[key].cast<py::list>()) out.push_back(affinity_term(t, what + ": " + key));
    };
    list("required_affinity", p.required_affinity);
    list("required_anti_affinity", p.required_anti_affinity);
    list("preferred_affinity", p.preferred_affinity);
    list("preferred_anti_affinity", p.preferred_anti_affinity);
  }
  if (spec.contains("spread"))
    for (const auto& c : spec["spread"].cast<py::list>()) p.spread.push_back(spread_constraint(c, what + ": spread"));
  if (spec.contains("default_spread_selector") && !spec["default_spread_selector"].is_none())
    p.default_spread_selector = pod_selector(spec["default_spread_selector"], what + ": default spread selector");
}

}  // namespace

vcore::PdbInput pdb_input(const std::string& key, const py::object& selector, int32_t disruptions_allowed,
                          const std::vector<std::string>& disrupted) {
  vcore::PdbInput out{key, std::nullopt, disruptions_allowed, disrupted};
  if (!selector.is_none()) out.selector = pod_selector(selector, "poddisruptionbudget " + key + ": spec.selector");
  return out;
}

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
  // (model, memory MiB, NUMA, NVLink domain, MIG mode, MIG geometry, [(shape, start)]) per GPU
  using Device =
      std::tuple<std::string, int64_t, int32_t, int32_t, bool, int32_t, std::vector<std::pair<int32_t, int32_t>>>;
  for (const auto& [model, memory, numa, nvlink, mig_mode, geometry, layout] :
       field_or<std::vector<Device>>(spec, "gpus", named, {}))
    n.gpus.push_back({model, memory, numa, nvlink, mig_mode, geometry, layout});
  n.numa_cpu = field_or<decltype(n.numa_cpu)>(spec, "numa_cpu", named, {});
  // The regexMatch patterns (vcore.topology.patterns) its name matches, by id under the pattern table's version.
  n.patterns.version = field_or<uint64_t>(spec, "pattern_version", named, 0);
  n.patterns.ids = field_or<std::vector<int32_t>>(spec, "pattern_ids", named, {});
  n.images = field_or<decltype(n.images)>(spec, "images", named, {});
  return n;
}

namespace {

vcore::DeviceRequest gpu_request(const py::dict& g, const std::string& what) {
  const std::string at = what + ": gpu request";
  vcore::DeviceRequest r;
  const auto kind = field<int32_t>(g, "kind", at);
  if (kind < 0 || kind > 3) throw py::value_error(at + ": kind must be 0..3");
  r.kind = static_cast<vcore::GpuKind>(kind);
  r.count = field<int32_t>(g, "count", at);
  r.milli = field_or<int32_t>(g, "milli", at, -1);
  r.memory_mib = field_or<int64_t>(g, "memory_mib", at, -1);
  r.memory_milli = field_or<int32_t>(g, "memory_milli", at, -1);
  const auto shapes = field_or<std::vector<int32_t>>(g, "mig_shape", at, {});
  if (!shapes.empty() && shapes.size() != r.mig_shape.size()) throw py::value_error(at + ": mig_shape needs 4 entries");
  std::copy(shapes.begin(), shapes.end(), r.mig_shape.begin());
  if (g.contains("models") && !g["models"].is_none()) {
    r.has_models = true;
    for (const auto& m : field<std::vector<std::string>>(g, "models", at)) r.models.push_back(vcore::model_tokens(m));
  }
  using Term = std::tuple<bool, std::vector<std::string>, std::vector<std::string>, bool>;
  for (const auto& [any, allowed, excluded, never] : field_or<std::vector<Term>>(g, "product_terms", at, {}))
    r.product_terms.push_back({any, allowed, excluded, never});
  const auto policy = field_or<int32_t>(g, "numa_policy", at, 0);
  if (policy < 0 || policy > 3) throw py::value_error(at + ": numa_policy must be 0..3");
  r.numa_policy = static_cast<vcore::NumaPolicy>(policy);
  r.numa_cpu_milli = field_or<int64_t>(g, "numa_cpu_milli", at, 0);
  return r;
}

// Interned key objects: dict lookups by a cached str skip building and hashing a new str per call, which
// dominated compile time (pods are compiled by the thousand per schedule() call).
struct PodKeys {
  py::str key{"key"}, requests{"requests"}, nonzero_cpu{"nonzero_cpu_milli"}, nonzero_mem{"nonzero_mem_bytes"},
      score_cpu{"score_cpu_milli"}, score_mem{"score_mem_bytes"}, preemption_policy{"preemption_policy"},
      priority{"priority"}, node_selector{"node_selector"}, required_terms{"required_terms"},
      preferred_terms{"preferred_terms"}, tolerations{"tolerations"}, gpu{"gpu"}, node_name{"node_name"},
      unhonored{"unhonored"}, scheduling_gates{"scheduling_gates"}, labels{"labels"}, deleting{"deleting"},
      pod_affinity{"pod_affinity"}, spread{"spread"}, default_spread{"default_spread_selector"},
      host_ports{"host_ports"}, images{"images"}, n_containers{"n_containers"}, start_time{"start_time"};
};

const PodKeys& pod_keys() {
  static const PodKeys* keys = new PodKeys();  // leaked on purpose: must outlive interpreter teardown order
  return *keys;
}

// Borrowed reference or nullptr when absent or None.
PyObject* lookup(const py::dict& d, const py::str& key) {
  PyObject* value = PyDict_GetItemWithError(d.ptr(), key.ptr());
  if (value == nullptr && PyErr_Occurred()) throw py::error_already_set();
  return value == Py_None ? nullptr : value;
}

int64_t as_int64(PyObject* value, const std::string& what, const char* field) {
  if (!PyLong_Check(value) || PyBool_Check(value)) throw py::type_error(what + ": " + field + " must be an int");
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
  if (overflow != 0) throw py::type_error(what + ": " + field + " does not fit in int64");  // as pybind11's casters
  return v;
}

std::string as_string(PyObject* value, const std::string& what, const char* field) {
  if (!PyUnicode_Check(value)) throw py::type_error(what + ": " + field + " must be a str");
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(value, &size);
  if (data == nullptr) throw py::error_already_set();
  return std::string(data, static_cast<size_t>(size));
}

py::list as_list(PyObject* value, const std::string& what, const char* field) {
  if (!PyList_Check(value)) throw py::type_error(what + ": " + field + " must be a list");
  return py::reinterpret_borrow<py::list>(value);
}

bool empty_sequence(PyObject* value) {
  return value == nullptr || ((PyList_Check(value) || PyTuple_Check(value)) && PySequence_Size(value) == 0);
}

}  // namespace

vcore::PodInput pod_input(const py::dict& spec) {
  const PodKeys& k = pod_keys();
  vcore::PodInput p;
  PyObject* key = lookup(spec, k.key);
  if (key == nullptr) throw py::key_error("pod spec: missing field 'key'");
  p.key = as_string(key, "pod spec", "key");
  const std::string what = "pod " + p.key;
  if (PyObject* requests = lookup(spec, k.requests)) {
    if (!PyDict_Check(requests)) throw py::type_error(what + ": requests must be a dict");
    PyObject *name, *amount;
    Py_ssize_t pos = 0;
    while (PyDict_Next(requests, &pos, &name, &amount))
      p.requests.emplace_back(as_string(name, what, "requests key"), as_int64(amount, what, "requests value"));
  }
  if (PyObject* v = lookup(spec, k.nonzero_cpu)) p.nonzero_cpu_milli = as_int64(v, what, "nonzero_cpu_milli");
  if (PyObject* v = lookup(spec, k.nonzero_mem)) p.nonzero_mem_bytes = as_int64(v, what, "nonzero_mem_bytes");
  if (PyObject* v = lookup(spec, k.score_cpu)) p.score_cpu_milli = as_int64(v, what, "score_cpu_milli");
  if (PyObject* v = lookup(spec, k.score_mem)) p.score_mem_bytes = as_int64(v, what, "score_mem_bytes");
  if (PyObject* v = lookup(spec, k.priority)) p.priority = as_int64(v, what, "priority");
  if (PyObject* v = lookup(spec, k.preemption_policy)) {
    const std::string policy = as_string(v, what, "preemption_policy");
    if (policy != "Never" && policy != "PreemptLowerPriority")
      throw py::value_error(what + ": preemption_policy must be Never or PreemptLowerPriority, not '" + policy + "'");
    p.never_preempts = policy == "Never";
  }
  // Selectors and tolerations are rare: the general pybind11 casters handle them.
  if (PyObject* v = lookup(spec, k.node_selector); !empty_sequence(v))
    p.node_selector = field<decltype(p.node_selector)>(spec, "node_selector", what);
  if (PyObject* v = lookup(spec, k.required_terms)) {
    std::vector<vcore::TermInput> terms;
    for (const auto& t : as_list(v, what, "required_terms")) terms.push_back(term_input(t.cast<py::dict>(), what));
    p.required_terms = std::move(terms);
  }
  if (PyObject* v = lookup(spec, k.preferred_terms); !empty_sequence(v)) {
    for (const auto& item : as_list(v, what, "preferred_terms")) {
      const auto pair = item.cast<py::tuple>();
      if (pair.size() != 2) throw py::value_error(what + ": preferred_terms entries must be (weight, term) pairs");
      p.preferred_terms.emplace_back(pair[0].cast<int64_t>(), term_input(pair[1].cast<py::dict>(), what));
    }
  }
  if (PyObject* v = lookup(spec, k.tolerations); !empty_sequence(v))
    p.tolerations = field<decltype(p.tolerations)>(spec, "tolerations", what);
  if (PyObject* v = lookup(spec, k.node_name)) p.node_name = as_string(v, what, "node_name");
  p.refused = !empty_sequence(lookup(spec, k.unhonored)) || !empty_sequence(lookup(spec, k.scheduling_gates));
  if (PyObject* v = lookup(spec, k.labels); !empty_sequence(v))
    p.labels = field<decltype(p.labels)>(spec, "labels", what);
  if (PyObject* v = lookup(spec, k.deleting)) p.deleting = PyObject_IsTrue(v) == 1;
  // Rare: only pods with inter-pod constraints (or selected by Services and the like) carry these keys.
  if (lookup(spec, k.pod_affinity) != nullptr || lookup(spec, k.spread) != nullptr ||
      lookup(spec, k.default_spread) != nullptr)
    inter_pod_input(spec, p, what);
  if (PyObject* v = PyDict_GetItemString(spec.ptr(), "volumes"))  // rare: pods using claims or in-tree disks
    p.volumes = pod_volumes_input(py::handle(v), what);
  if (PyObject* v = lookup(spec, k.gpu)) {
    if (!PyDict_Check(v)) throw py::type_error(what + ": gpu must be a dict");
    p.gpu = gpu_request(py::reinterpret_borrow<py::dict>(v), what);
  }
  if (PyObject* v = lookup(spec, k.host_ports); !empty_sequence(v))
    p.host_ports = field<decltype(p.host_ports)>(spec, "host_ports", what);
  if (PyObject* v = lookup(spec, k.images); !empty_sequence(v))
    p.images = field<decltype(p.images)>(spec, "images", what);
  if (PyObject* v = lookup(spec, k.n_containers))
    p.n_containers = static_cast<int32_t>(as_int64(v, what, "n_containers"));
  if (PyObject* v = lookup(spec, k.start_time)) p.start_time = as_int64(v, what, "start_time");
  return p;
}

CompiledPods compiled_pods(const py::handle& seq, const std::string& what) {
  if (!PyList_Check(seq.ptr()) && !PyTuple_Check(seq.ptr()))
    throw py::type_error(what + ": expected a list of CompiledPod objects, got " +
                         std::string(py::str(py::type::of(seq).attr("__name__"))));
  CompiledPods out;
  out.keep = py::reinterpret_steal<py::tuple>(PySequence_Tuple(seq.ptr()));
  if (!out.keep) throw py::error_already_set();
  static const py::detail::type_info* const compiled = py::detail::get_type_info(typeid(vcore::CompiledPod));
  const size_t n = out.keep.size();
  out.pods.resize(n);
  for (size_t i = 0; i < n; ++i) {
    PyObject* item = PyTuple_GET_ITEM(out.keep.ptr(), static_cast<py::ssize_t>(i));
    const vcore::CompiledPod* pod = nullptr;
    // The exact type is only ever made by pybind11 from C++ (it has no Python constructor), in the simple layout:
    // the value pointer is read where pybind11's caster reads it. Anything else goes through the caster.
    const auto* inst = reinterpret_cast<const py::detail::instance*>(item);
    if (Py_TYPE(item) == compiled->type && inst->simple_layout) {
      pod = static_cast<const vcore::CompiledPod*>(inst->simple_value_holder[0]);
    } else if (item != Py_None) {
      try {
        pod = py::handle(item).cast<const vcore::CompiledPod*>();
      } catch (const py::cast_error&) {
      }
    }
    if (pod == nullptr)
      throw py::type_error(what + "[" + std::to_string(i) + "]: expected a CompiledPod, got " +
                           std::string(py::str(py::type::of(py::handle(item)).attr("__name__"))));
    out.pods[i] = pod;
  }
  return out;
}

py::tuple assignment_tuple(const vcore::GpuAssignment& a) {
  py::tuple out(a.holds.size());
  for (size_t i = 0; i < a.holds.size(); ++i) out[i] = py::make_tuple(a.holds[i].gpu, a.holds[i].mig_start);
  return out;
}

}  // namespace vcore_bindings
