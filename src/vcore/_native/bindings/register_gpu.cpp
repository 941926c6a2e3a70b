// GPU device-level bindings: submodule `gpu` of vcore._native._core.
//
// Inputs are converted into C++-owned vectors before any kernel runs; kernels release the GIL. Bad input raises
// ValueError (std::invalid_argument) -- nothing here can crash the interpreter on malformed arrays.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "registry.h"
#include "vcore/gpu_fragment.h"
#include "vcore/gpu_inventory.h"
#include "vcore/gpu_replay.h"

namespace py = pybind11;

namespace vcore_bindings {
namespace {

template <class T>
std::vector<T> to_vec(const py::handle& obj, const char* name) {
  py::array arr = py::array::ensure(obj);
  if (!arr) throw py::type_error(std::string(name) + ": expected an array-like of numbers");
  if (arr.ndim() != 1)
    throw py::value_error(std::string(name) + ": expected a 1-d array, got " + std::to_string(arr.ndim()) + "-d");
  auto kind = arr.dtype().kind();
  if (kind != 'i' && kind != 'u' && kind != 'b' && !(std::is_floating_point<T>::value && kind == 'f'))
    throw py::type_error(std::string(name) + ": expected an integer array, got dtype " +
                         std::string(py::str(arr.dtype())));
  auto typed = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(arr);
  if (!typed) throw py::type_error(std::string(name) + ": cannot convert to the required dtype");
  const T* p = typed.data();
  return std::vector<T>(p, p + typed.size());
}

template <class T>
py::array_t<T> to_array(const std::vector<T>& v) {
  py::array_t<T> a(v.size());
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

vcore::TargetWorkload to_target(const py::tuple& t) {
  if (t.size() != 5)
    throw py::value_error("target: expected a tuple (cpu_milli, gpu_milli, num_gpu, model_mask, weight)");
  vcore::TargetWorkload tw;
  tw.cpu_milli = to_vec<int64_t>(t[0], "target.cpu_milli");
  tw.gpu_milli = to_vec<int32_t>(t[1], "target.gpu_milli");
  tw.num_gpu = to_vec<int32_t>(t[2], "target.num_gpu");
  tw.model_mask = to_vec<uint64_t>(t[3], "target.model_mask");
  tw.weight = to_vec<double>(t[4], "target.weight");
  tw.validate();
  return tw;
}

std::vector<vcore::GpuRequest> to_requests(const py::handle& cpu, const py::handle& mem, const py::handle& num,
                                           const py::handle& milli, const py::handle& mask) {
  auto c = to_vec<int64_t>(cpu, "pods.cpu_milli");
  auto m = to_vec<int64_t>(mem, "pods.memory");
  auto n = to_vec<int32_t>(num, "pods.num_gpu");
  auto g = to_vec<int32_t>(milli, "pods.gpu_milli");
  auto k = to_vec<uint64_t>(mask, "pods.model_mask");
  const size_t P = c.size();
  if (m.size() != P || n.size() != P || g.size() != P || k.size() != P)
    throw py::value_error("pods: cpu_milli, memory, num_gpu, gpu_milli and model_mask must have equal lengths");
  std::vector<vcore::GpuRequest> out(P);
  for (size_t i = 0; i < P; ++i) out[i] = vcore::GpuRequest{c[i], m[i], n[i], g[i], k[i]};
  return out;
}

}  // namespace

void register_gpu(py::module_& m) {
  py::module_ g = m.def_submodule("gpu", "GPU inventory (CSR), FGD fragmentation and the native trace replay");

  py::class_<vcore::GpuInventory>(g, "GpuInventory",
                                  "Per-node CPU/memory and per-GPU free milli, memory and model in CSR form.")
      .def(py::init([](py::handle cpu, py::handle mem, py::handle model, py::handle offsets, py::handle dev_free,
                       py::object dev_mem) {
             std::vector<int64_t> dm;
             if (!dev_mem.is_none()) dm = to_vec<int64_t>(dev_mem, "dev_memory_mib");
             return vcore::GpuInventory(to_vec<int64_t>(cpu, "cpu_milli"), to_vec<int64_t>(mem, "memory"),
                                        to_vec<int32_t>(model, "node_model"), to_vec<int32_t>(offsets, "dev_offsets"),
                                        to_vec<int32_t>(dev_free, "dev_free_milli"), std::move(dm));
           }),
           py::arg("cpu_milli"), py::arg("memory"), py::arg("node_model"), py::arg("dev_offsets"),
           py::arg("dev_free_milli"), py::arg("dev_memory_mib") = py::none())
      .def_property_readonly("n_nodes", &vcore::GpuInventory::n_nodes)
      .def_property_readonly("n_devices", &vcore::GpuInventory::n_devices)
      .def_property_readonly("cpu_free", [](const vcore::GpuInventory& s) { return to_array(s.cpu_free_); })
      .def_property_readonly("memory_free", [](const vcore::GpuInventory& s) { return to_array(s.mem_free_); })
      .def_property_readonly("node_model", [](const vcore::GpuInventory& s) { return to_array(s.node_model_); })
      .def_property_readonly("dev_offsets", [](const vcore::GpuInventory& s) { return to_array(s.dev_offsets_); })
      .def_property_readonly("dev_free_milli",
                             [](const vcore::GpuInventory& s) { return to_array(s.dev_free_milli_); });

  g.def(
      "node_fragments",
      [](const vcore::GpuInventory& inv, const py::tuple& target) {
        auto tw = to_target(target);
        std::vector<double> out(inv.n_nodes());
        {
          py::gil_scoped_release nogil;  // reads only C++-owned inventory/target copies
          for (int32_t n = 0; n < inv.n_nodes(); ++n)
            out[n] = vcore::node_fragment(inv.cpu_free_[n], inv.node_model_[n], inv.gpu_free(n), inv.n_gpus(n), tw);
        }
        return to_array(out);
      },
      py::arg("inventory"), py::arg("target"), "F_n of every node for the target workload (float64[n_nodes]).");

  g.def(
      "fgd_scores",
      [](const vcore::GpuInventory& inv, int64_t cpu, int64_t mem, int32_t num, int32_t milli, uint64_t mask,
         const py::tuple& target) {
        auto tw = to_target(target);
        vcore::GpuRequest r{cpu, mem, num, milli, mask};
        std::vector<int64_t> score;
        std::vector<uint64_t> dev;
        {
          py::gil_scoped_release nogil;  // kernel touches only C++-owned copies
          vcore::fgd_scores(inv, r, tw, &score, &dev);
        }
        return py::make_tuple(to_array(score), to_array(dev));
      },
      py::arg("inventory"), py::arg("cpu_milli"), py::arg("memory"), py::arg("num_gpu"), py::arg("gpu_milli"),
      py::arg("model_mask"), py::arg("target"),
      "FGD score of one pod on every node (int64, -1 = infeasible) and the chosen GPU bit masks (uint64).");

  g.def(
      "replay",
      [](const vcore::GpuInventory& inv, py::handle cpu, py::handle mem, py::handle num, py::handle milli,
         py::handle mask, py::handle order, const py::tuple& target, const std::string& policy, uint64_t seed,
         double scale, double pack_points, double balance_points) {
        auto pods = to_requests(cpu, mem, num, milli, mask);
        auto ord = to_vec<int32_t>(order, "order");
        auto tw = to_target(target);
        vcore::ReplayOptions opt;
        opt.policy = vcore::parse_gpu_policy(policy);
        opt.seed = seed;
        opt.vcore_scale = scale;
        if (!(scale > 0) || !(pack_points >= 0))
          throw py::value_error("vcore_scale must be > 0 and vcore_pack_points >= 0");
        opt.vcore_pack_points = pack_points;
        if (!(balance_points >= 0)) throw py::value_error("vcore_balance_points must be >= 0");
        opt.vcore_balance_points = balance_points;
        vcore::ReplayResult res;
        {
          py::gil_scoped_release nogil;  // replay works on its own copy of the inventory and owned vectors
          res = vcore::replay_trace(inv, pods, ord, tw, opt);
        }
        py::dict d;
        d["node_idx"] = to_array(res.node_idx);
        d["dev_mask"] = to_array(res.dev_mask);
        d["frag_after"] = to_array(res.frag_after);
        d["free_after"] = to_array(res.free_after);
        return d;
      },
      py::arg("inventory"), py::arg("cpu_milli"), py::arg("memory"), py::arg("num_gpu"), py::arg("gpu_milli"),
      py::arg("model_mask"), py::arg("order"), py::arg("target"), py::arg("policy"), py::arg("seed") = 0,
      py::arg("vcore_scale") = 1000.0, py::arg("vcore_pack_points") = 1.0, py::arg("vcore_balance_points") = 10.0,
      "Replay pods once in order on a copy of the inventory; returns per-pod node_idx, dev_mask, frag_after, "
      "free_after.");
}

}  // namespace vcore_bindings
