// Python -> C++ input conversion shared by the binding files. Wrong types raise TypeError naming the field.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "vcore/cluster_state.h"

namespace vcore_bindings {
namespace py = pybind11;

template <typename T>
T field(const py::dict& d, const char* key, const std::string& what) {
  if (!d.contains(key)) throw py::key_error(what + ": missing field '" + key + "'");
  try {
    return d[key].cast<T>();
  } catch (const py::cast_error&) {
    throw py::type_error(what + ": field '" + key + "' has the wrong type (" +
                         std::string(py::str(py::type::of(d[key]).attr("__name__"))) + ")");
  }
}

template <typename T>
T field_or(const py::dict& d, const char* key, const std::string& what, T fallback) {
  if (!d.contains(key) || d[key].is_none()) return fallback;
  return field<T>(d, key, what);
}

vcore::NodeInput node_input(const py::dict& spec);
vcore::PodInput pod_input(const py::dict& spec);
// A PodDisruptionBudget: its selector as vcore._native._convert.label_selector gives it (None: covers no pod).
vcore::PdbInput pdb_input(const std::string& key, const py::object& selector, int32_t disruptions_allowed,
                          const std::vector<std::string>& disrupted);
// A pod's volumes as vcore.volumes.pods built them (register_volumes.cpp).
std::shared_ptr<const vcore::PodVolumes> pod_volumes_input(const py::handle& value, const std::string& what);

// Compiled pods passed as a list or tuple, for a call that releases the GIL. `keep` is a tuple of them, held by the
// caller for the call, so no other thread can drop a pod the pointers name; `pods` point into it. A gang passes
// thousands a call: pybind11's per-element caster cost more than the placement of a small gang's pods.
struct CompiledPods {
  py::tuple keep;
  std::vector<const vcore::CompiledPod*> pods;
};
// TypeError naming `what` and the index of anything that is not a CompiledPod (None included).
CompiledPods compiled_pods(const py::handle& seq, const std::string& what);

// A placed pod's devices for Python: ((gpu, mig_start), ...) with mig_start -1 outside MIG.
py::tuple assignment_tuple(const vcore::GpuAssignment& a);

// A read-only numpy view of `rows` x `cols` int64 (or uint8 as bool) storage that keeps `owner` alive.
template <typename T>
py::array readonly_view(const std::shared_ptr<std::vector<T>>& owner, const T* data, std::vector<py::ssize_t> shape,
                        std::vector<py::ssize_t> strides, py::dtype dtype) {
  auto* keep = new std::shared_ptr<std::vector<T>>(owner);
  py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<std::vector<T>>*>(p); });
  py::array view(dtype, shape, strides, data, base);
  py::detail::array_proxy(view.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return view;
}

}  // namespace vcore_bindings
