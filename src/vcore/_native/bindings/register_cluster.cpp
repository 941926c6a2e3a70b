// Bindings of ClusterState and CompiledPod. Mutations take the state's exclusive lock while holding the GIL;
// no path acquires the GIL while holding that lock, so kernels running without the GIL cannot deadlock with them.
#include <mutex>
#include <optional>
#include <shared_mutex>

#include "convert.h"
#include "registry.h"
#include "vcore/errors.h"
#include "vcore/node_plugin.h"
#include "vcore/reasons.h"

namespace vcore_bindings {
namespace {

using vcore::ClusterState;
using vcore::CompiledPod;

template <typename F>
auto typed(const std::string& what, F&& f) {
  try {
    return f();
  } catch (const py::cast_error& e) {
    throw py::type_error(what + ": wrong type in spec (" + e.what() + ")");
  }
}

py::array matrix_view(const vcore::SharedMatrix& m, int32_t n_slots) {
  return readonly_view<int64_t>(m.data, m.data->data(), {m.rows, n_slots}, {static_cast<py::ssize_t>(m.stride) * 8, 8},
                                py::dtype::of<int64_t>());
}

// What ClusterState::detach hands back, kept by Python while a preemption is tentative.
struct DetachedPod {
  std::string key;
  vcore::BoundPod record;
};

// tp_new of the types only the core makes: `T.__new__(T)` (or a subclass's) would give an object whose C++ value
// pybind11 allocates uninitialized the first time a call reads it.
PyObject* refuse_new(PyTypeObject* type, PyObject* /*args*/, PyObject* /*kwargs*/) {
  PyErr_Format(PyExc_TypeError, "%s objects are made by the native core only (ClusterState.compile_pod, detach)",
               type->tp_name);
  return nullptr;
}

void made_by_the_core_only(const py::handle& cls) { reinterpret_cast<PyTypeObject*>(cls.ptr())->tp_new = refuse_new; }

}  // namespace

void register_cluster(py::module_& m) {
  made_by_the_core_only(
      py::class_<DetachedPod>(m, "DetachedPod", "A pod unbound by ClusterState.detach, to attach again (opaque).")
          .def_property_readonly("key", [](const DetachedPod& p) { return p.key; })
          .def_property_readonly("node", [](const DetachedPod& p) { return p.record.node; }));

  made_by_the_core_only(
      py::class_<CompiledPod, std::shared_ptr<CompiledPod>>(m, "CompiledPod",
                                                            "A pod compiled against one ClusterState (opaque).")
          .def_property_readonly("key", [](const CompiledPod& p) { return p.key; })
          .def_property_readonly("priority", [](const CompiledPod& p) { return p.priority; })
          .def_property_readonly(
              "never_preempts", [](const CompiledPod& p) { return p.never_preempts; }, "spec.preemptionPolicy is Never")
          .def_property_readonly(
              "requests", [](const CompiledPod& p) { return p.requests; },
              "(resource axis, amount) pairs of the effective request")
          .def("__repr__", [](const CompiledPod& p) { return "<CompiledPod " + p.key + ">"; }));

  py::class_<ClusterState, std::shared_ptr<ClusterState>>(m, "ClusterState")
      .def(py::init<>())
      .def("add_node",
           [](ClusterState& s, const py::dict& spec) {
             const auto input = typed("node spec", [&] { return node_input(spec); });
             std::unique_lock lock(s.mutex());
             return s.add_node(input);
           })
      .def("update_node",
           [](ClusterState& s, const py::dict& spec) {
             const auto input = typed("node spec", [&] { return node_input(spec); });
             std::unique_lock lock(s.mutex());
             return s.update_node(input);
           })
      .def(
          "remove_node",
          [](ClusterState& s, const std::string& name, bool evict) {
            std::unique_lock lock(s.mutex());
            return s.remove_node(name, evict);
          },
          py::arg("name"), py::arg("evict") = false)
      .def("node_index", &ClusterState::node_index)
      .def("node_name", [](const ClusterState& s, int32_t i) { return s.node_name(i); })
      .def("has_node", [](const ClusterState& s, const std::string& n) { return s.node_index(n) >= 0; })
      .def(
          "node_names", [](const ClusterState& s) { return s.names(); },
          "names by slot; an empty string marks a free slot")
      .def(
          "node_label_values",
          [](const ClusterState& s, const std::string& key) {
            std::shared_lock lock(s.mutex());
            std::vector<std::optional<std::string>> values(static_cast<size_t>(s.n_slots()));
            const int32_t key_id = s.find_string(key);
            if (key_id < 0) return values;  // no node has ever had the label
            for (int32_t slot = 0; slot < s.n_slots(); ++slot) {
              if (!s.is_live(slot)) continue;
              for (const auto& [k, v] : s.labels()[static_cast<size_t>(slot)])
                if (k == key_id) values[static_cast<size_t>(slot)] = s.string_name(v);
            }
            return values;
          },
          py::arg("key"),
          "each slot's value of the node label ``key``: None where the node lacks it or the slot is free")
      .def("resource_axis",
           [](ClusterState& s, const std::string& name) {
             std::unique_lock lock(s.mutex());
             return s.resource_axis(name);
           })
      .def("find_resource_axis", &ClusterState::find_resource_axis)
      .def("resource_names",
           [](const ClusterState& s) {
             std::vector<std::string> names;
             for (int32_t a = 0; a < s.n_resources(); ++a) names.push_back(s.resource_name(a));
             return names;
           })
      .def("compile_pod",
           [](ClusterState& s, const py::dict& spec) {
             const auto input = typed("pod spec", [&] { return pod_input(spec); });
             std::unique_lock lock(s.mutex());
             return std::make_shared<CompiledPod>(s.compile_pod(input));
           })
      .def("compile_pods",
           [](ClusterState& s, const py::list& specs) {
             std::vector<vcore::PodInput> inputs;
             inputs.reserve(specs.size());
             for (const auto& spec : specs)
               inputs.push_back(typed("pod spec", [&] { return pod_input(spec.cast<py::dict>()); }));
             std::unique_lock lock(s.mutex());
             std::vector<std::shared_ptr<CompiledPod>> out;
             out.reserve(inputs.size());
             for (const auto& in : inputs) out.push_back(std::make_shared<CompiledPod>(s.compile_pod(in)));
             return out;
           })
      .def(
          "bind",
          [](ClusterState& s, const CompiledPod& pod, int32_t slot, std::optional<std::vector<int32_t>> gpus) {
            std::unique_lock lock(s.mutex());
            s.bind(pod, slot, gpus ? &*gpus : nullptr);
          },
          py::arg("pod"), py::arg("slot"), py::arg("gpus") = py::none(),
          "account a pod on a node; GPU pods take the given node-local GPU indices or the fit rule's choice")
      .def(
          "pod_gpus",
          [](const ClusterState& s, const std::string& key) -> py::object {
            const vcore::GpuAssignment* a = s.pod_gpus(key);
            if (a == nullptr) return py::none();
            return assignment_tuple(*a);
          },
          "((gpu, mig_start), ...) a bound pod holds, None when not bound")
      .def(
          "gpu_devices",
          [](const ClusterState& s) {
            const auto snap = s.gpus().snapshot(s.n_slots());
            py::dict out;
            const auto put = [&out](const char* k, const auto& v) {
              using T = typename std::decay_t<decltype(v)>::value_type;
              out[k] = py::array_t<T>(static_cast<py::ssize_t>(v.size()), v.data());
            };
            put("dev_offsets", snap.offsets);
            put("dev_model_id", snap.model);
            put("dev_memory_mib", snap.memory_mib);
            put("dev_numa", snap.numa);
            put("dev_nvlink", snap.nvlink);
            put("dev_mig_mode", snap.mig_mode);
            put("dev_used_milli", snap.used_milli);
            put("dev_used_memory_mib", snap.used_memory_mib);
            put("dev_shared_pods", snap.holders);
            put("dev_exclusive", snap.exclusive);
            put("dev_mig_compute_used", snap.mig_compute);
            put("dev_mig_memory_used", snap.mig_memory);
            std::vector<std::string> models;
            for (int32_t m = 0; m < s.gpus().n_models(); ++m) models.push_back(s.gpus().model_name(m));
            out["model_names"] = models;
            return out;
          },
          "a copy of the GPU device table in CSR form over node slots (dev_offsets[n_slots + 1])")
      .def("unbind",
           [](ClusterState& s, const std::string& key) {
             std::unique_lock lock(s.mutex());
             return s.unbind(key);
           })
      .def(
          "detach",
          [](ClusterState& s, const std::string& key) {
            std::unique_lock lock(s.mutex());
            return DetachedPod{key, s.detach(key)};
          },
          "unbind a pod and keep its record (node, resources, devices) for attach")
      .def(
          "attach",
          [](ClusterState& s, const DetachedPod& pod) {
            std::unique_lock lock(s.mutex());
            s.attach(pod.key, pod.record);
          },
          "bind a detached pod again exactly as it was")
      .def(
          "set_namespace_labels",
          [](ClusterState& s, const std::string& name, const std::vector<std::pair<std::string, std::string>>& labels,
             bool exists) {
            std::unique_lock lock(s.mutex());
            s.set_namespace_labels(name, labels, exists);
          },
          py::arg("name"), py::arg("labels"), py::arg("exists") = true,
          "a namespace's labels, which pod affinity terms' namespaceSelector reads (exists=False: it is gone)")
      .def(
          "set_pdb",
          [](ClusterState& s, const std::string& key, const py::object& selector, int32_t disruptions_allowed,
             const std::vector<std::string>& disrupted) {
            const auto input = pdb_input(key, selector, disruptions_allowed, disrupted);
            std::unique_lock lock(s.mutex());
            s.set_pdb(input);
          },
          py::arg("key"), py::arg("selector"), py::arg("disruptions_allowed"), py::arg("disrupted"),
          "add or replace a PodDisruptionBudget (preemption spares what it protects where it can)")
      .def(
          "remove_pdb",
          [](ClusterState& s, const std::string& key) {
            std::unique_lock lock(s.mutex());
            return s.remove_pdb(key);
          },
          "forget a PodDisruptionBudget; False when it was not there")
      .def(
          "set_pod_start_time",
          [](ClusterState& s, const std::string& key, std::optional<int64_t> start_time) {
            std::unique_lock lock(s.mutex());
            // The record as it is (node, devices, terms), with the start time the kubelet reported since.
            vcore::BoundPod record = s.detach(key);
            record.start_time = start_time.value_or(vcore::kUnknownStartTime);
            s.attach(key, std::move(record));
          },
          py::arg("key"), py::arg("start_time"),
          "a bound pod's status.startTime (Unix seconds, None: unknown), which preemption orders victims by; "
          "an unbound key -> KeyError")
      .def(
          "pdb_violating",
          [](const ClusterState& s, const std::vector<std::string>& keys) {
            std::shared_lock lock(s.mutex());
            // kube-scheduler's filterPodsWithPDBViolation over the pods in the given order: each one a budget
            // covers spends one of its allowed disruptions; one that finds none left is violating.
            std::vector<int64_t> allowed;
            for (const vcore::Pdb& pdb : s.pdbs()) allowed.push_back(pdb.disruptions_allowed);
            std::vector<bool> out;
            out.reserve(keys.size());
            for (const std::string& key : keys) {
              const vcore::BoundPod* pod = s.bound_pod(key);
              if (pod == nullptr) throw vcore::NotFound("pod " + key + ": not bound");
              bool violated = false;
              for (int32_t id : s.pdbs_of(key, *pod)) violated |= --allowed[static_cast<size_t>(id)] < 0;
              out.push_back(violated);
            }
            return out;
          },
          py::arg("keys"),
          "per bound pod, in order, whether evicting it with the ones before it goes past a PodDisruptionBudget "
          "(kube-scheduler's filterPodsWithPDBViolation); an unbound key -> KeyError")
      .def("pod_node", &ClusterState::pod_node)
      .def(
          "bound_keys",
          [](const ClusterState& s) {
            // Tens of thousands of keys each cycle: the C API directly (no pybind object per key).
            py::set keys;
            for (const auto& entry : s.bound_pods()) {
              const std::string& k = entry.first;
              PyObject* key = PyUnicode_DecodeUTF8(k.data(), static_cast<Py_ssize_t>(k.size()), "strict");
              if (key == nullptr) throw py::error_already_set();
              const int added = PySet_Add(keys.ptr(), key);
              Py_DECREF(key);
              if (added < 0) throw py::error_already_set();
            }
            return keys;
          },
          "the keys of every bound pod, as a set")
      .def(
          "reserve_pods",
          [](ClusterState& s, int64_t n) {
            std::unique_lock lock(s.mutex());
            s.reserve_pods(n);
          },
          "make room for n bound pods (no rehash while a cycle binds up to that many)")
      .def(
          "first_bound",
          [](const ClusterState& s, const std::vector<std::string>& keys) {
            for (size_t i = 0; i < keys.size(); ++i)
              if (s.pod_node(keys[i]) >= 0) return static_cast<int64_t>(i);
            return int64_t{-1};
          },
          "index of the first key that is bound, or -1")
      .def(
          "allocatable_total",
          [](const ClusterState& s) {
            std::shared_lock lock(s.mutex());
            const auto& t = s.allocatable_total();
            return py::array_t<int64_t>(static_cast<py::ssize_t>(t.size()), t.data());
          },
          "per resource axis, allocatable summed over the live nodes (a new int64 array; never past 2**61)")
      .def(
          "requested_total",
          [](const ClusterState& s) {
            std::shared_lock lock(s.mutex());
            const auto& t = s.requested_total();
            return py::array_t<int64_t>(static_cast<py::ssize_t>(t.size()), t.data());
          },
          "per resource axis, the requests of the bound pods summed (a new int64 array; never past 2**61)")
      .def("pods_on", &ClusterState::pods_on)
      .def(
          "pod_priority",
          [](const ClusterState& s, const std::string& key) {
            std::shared_lock lock(s.mutex());
            const vcore::BoundPod* pod = s.bound_pod(key);
            if (pod == nullptr) throw py::key_error("pod " + key + ": not bound");
            return pod->priority;
          },
          "the priority of a bound pod")
      .def_property_readonly("n_nodes", &ClusterState::n_nodes)
      .def_property_readonly("n_slots", &ClusterState::n_slots)
      .def_property_readonly("n_pods", &ClusterState::n_pods)
      .def_property_readonly("generation", &ClusterState::generation)
      .def_property_readonly("native_bytes", &ClusterState::native_bytes)
      .def_property_readonly("allocatable",
                             [](const ClusterState& s) { return matrix_view(s.allocatable(), s.n_slots()); })
      .def_property_readonly("requested", [](const ClusterState& s) { return matrix_view(s.requested(), s.n_slots()); })
      .def_property_readonly("nonzero_requested",
                             [](const ClusterState& s) { return matrix_view(s.nonzero_requested(), s.n_slots()); })
      .def_property_readonly("live_mask", [](const ClusterState& s) {
        return readonly_view<uint8_t>(s.live(), s.live()->data(), {s.n_slots()}, {1}, py::dtype("bool"));
      });

  m.def("node_plugins", &vcore::registered_plugins, "the names of the node plugins compiled into the core, sorted");
  m.def(
      "reason_names",
      [](const ClusterState& s) {
        std::vector<std::string> names = vcore::reason_table();
        for (int32_t a = 0; a < s.n_resources(); ++a) names.push_back("Insufficient " + s.resource_name(a));
        return names;
      },
      "reason strings by code for this state: the fixed codes, the node plugins', then 'Insufficient <resource>' per "
      "axis");
}

}  // namespace vcore_bindings
