// Bindings of Engine: the profile dict (vcore.profile.Profile.native()) in, numpy arrays out.
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>

#include "convert.h"
#include "nogil_probe.h"
#include "registry.h"
#include "vcore/engine.h"
#include "vcore/node_plugin.h"

namespace vcore_bindings {
namespace {

using vcore::Engine;
using vcore::ProfileConfig;

std::vector<vcore::ResourceWeight> resource_weights(const py::dict& d, const char* key) {
  std::vector<vcore::ResourceWeight> out;
  for (const auto& [name, weight] : field_or<std::vector<std::pair<std::string, int64_t>>>(d, key, "profile", {}))
    out.push_back({name, weight});
  return out;
}

// A node plugin's arguments (vcore.plugins.<module>.native()): a dict of bool, int, float, str or list of str.
vcore::PluginArgs plugin_args(const py::dict& d, const std::string& plugin) {
  vcore::PluginArgs out;
  for (const auto& [k, v] : d) {
    const std::string key = py::cast<std::string>(k);
    if (py::isinstance<py::bool_>(v) || py::isinstance<py::int_>(v))
      out.ints[key] = py::cast<int64_t>(v);
    else if (py::isinstance<py::float_>(v))
      out.floats[key] = py::cast<double>(v);
    else if (py::isinstance<py::str>(v))
      out.strings[key] = py::cast<std::string>(v);
    else if ((py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) && py::len(v) > 0 &&
             py::isinstance<py::int_>(py::reinterpret_borrow<py::sequence>(v)[0]))
      out.int_lists[key] = py::cast<std::vector<int64_t>>(v);
    else if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v))
      out.string_lists[key] = py::cast<std::vector<std::string>>(v);
    else
      throw py::type_error("profile: args of " + plugin + ": " + key + " has an unsupported type");
  }
  return out;
}

ProfileConfig profile_config(const py::dict& p) {
  ProfileConfig c;
  std::map<std::string, vcore::PluginConfig> plugins;  // the node plugins the profile names, by name
  const auto plugin = [&](const std::string& name) -> vcore::PluginConfig& {
    if (vcore::find_plugin(name) == nullptr) throw py::value_error("profile: unknown plugin '" + name + "'");
    auto& pc = plugins[name];
    pc.name = name;
    return pc;
  };
  for (const auto& name : field<std::vector<std::string>>(p, "filters", "profile")) {
    if (name == "NodeUnschedulable")
      c.filter_unschedulable = true;
    else if (name == "TaintToleration")
      c.filter_taints = true;
    else if (name == "NodeAffinity")
      c.filter_affinity = true;
    else if (name == "NodeResourcesFit")
      c.filter_fit = true;
    else if (name == "GPUDeviceFit")
      c.filter_gpu = true;
    else
      plugin(name).filter = true;
    c.filter_order.push_back(name);
  }
  for (const auto& [name, weight] : field<std::vector<std::pair<std::string, int64_t>>>(p, "scores", "profile")) {
    if (weight <= 0) throw py::value_error("profile: scores: weight of " + name + " must be positive");
    if (name == "TaintToleration")
      c.weight_taints = weight;
    else if (name == "NodeAffinity")
      c.weight_affinity = weight;
    else if (name == "NodeResourcesFit")
      c.weight_fit = weight;
    else if (name == "NodeResourcesBalancedAllocation")
      c.weight_balanced = weight;
    else if (name == "binpack")
      c.weight_binpack = weight;
    else if (name == "GPUPlacement")
      c.weight_gpu = weight;
    else
      plugin(name).weight = weight;
  }
  const auto args = field_or<py::dict>(p, "args", "profile", py::dict());
  for (auto& [name, pc] : plugins) {
    if (args.contains(name)) pc.args = plugin_args(args[py::str(name)].cast<py::dict>(), name);
    c.plugins.push_back(std::move(pc));
  }
  const auto fit = field_or<py::dict>(p, "fit", "profile", py::dict());
  c.ignored_resources = field_or<std::vector<std::string>>(fit, "ignored_resources", "profile.fit", {});
  c.ignored_resource_groups = field_or<std::vector<std::string>>(fit, "ignored_resource_groups", "profile.fit", {});
  const auto strategy = field_or<std::string>(fit, "strategy", "profile.fit", "LeastAllocated");
  if (strategy == "LeastAllocated")
    c.strategy = vcore::FitStrategy::kLeastAllocated;
  else if (strategy == "MostAllocated")
    c.strategy = vcore::FitStrategy::kMostAllocated;
  else if (strategy == "RequestedToCapacityRatio")
    c.strategy = vcore::FitStrategy::kRequestedToCapacityRatio;
  else
    throw py::value_error("profile: fit.strategy: unknown '" + strategy + "'");
  c.fit_resources = fit.contains("resources") ? resource_weights(fit, "resources")
                                              : std::vector<vcore::ResourceWeight>{{"cpu", 1}, {"memory", 1}};
  c.shape = field_or<std::vector<std::pair<int64_t, int64_t>>>(fit, "shape", "profile.fit", {});
  const auto balanced = field_or<py::dict>(p, "balanced", "profile", py::dict());
  c.balanced_resources = balanced.contains("resources") ? resource_weights(balanced, "resources")
                                                        : std::vector<vcore::ResourceWeight>{{"cpu", 1}, {"memory", 1}};
  const auto binpack = field_or<py::dict>(p, "binpack", "profile", py::dict());
  c.binpack_weight = field_or<int64_t>(binpack, "weight", "profile.binpack", 1);
  c.binpack_resources = binpack.contains("resources") ? resource_weights(binpack, "resources")
                                                      : std::vector<vcore::ResourceWeight>{{"cpu", 1}, {"memory", 1}};
  const auto gpu = field_or<py::dict>(p, "gpu", "profile", py::dict());
  try {
    c.gpu.policy = vcore::parse_gpu_policy(field_or<std::string>(gpu, "policy", "profile.gpu", "vcore"));
  } catch (const std::invalid_argument& e) {
    throw py::value_error(std::string("profile: gpu.policy: ") + e.what());
  }
  c.gpu.knobs.scale = field_or<double>(gpu, "vcore_scale", "profile.gpu", 1000.0);
  c.gpu.knobs.pack_points = field_or<double>(gpu, "vcore_pack_points", "profile.gpu", 1.0);
  c.gpu.knobs.balance_points = field_or<double>(gpu, "vcore_balance_points", "profile.gpu", 10.0);
  if (!(c.gpu.knobs.scale > 0)) throw py::value_error("profile: gpu.vcore_scale must be > 0");
  c.gpu.coverage = field_or<double>(gpu, "coverage", "profile.gpu", 95.0);
  c.gpu.learn = field_or<bool>(gpu, "learn", "profile.gpu", true);
  c.gpu.tie_by_name = field_or<std::string>(gpu, "tie_break", "profile.gpu", "Random") == "NodeName";
  using Spec = std::tuple<int64_t, int32_t, int32_t, std::vector<std::string>, double>;
  for (const auto& [cpu, milli, num, models, weight] : field_or<std::vector<Spec>>(gpu, "target", "profile.gpu", {}))
    c.gpu.target.push_back({cpu, milli, num, models, weight});
  c.percentage_of_nodes_to_score = field_or<int32_t>(p, "percentage_of_nodes_to_score", "profile", 0);
  if (c.percentage_of_nodes_to_score < 0 || c.percentage_of_nodes_to_score > 100)
    throw py::value_error("profile: percentage_of_nodes_to_score must be in 0..100");
  return c;
}

}  // namespace

void register_engine(py::module_& m) {
  py::class_<Engine>(m, "Engine")
      .def(py::init([](std::shared_ptr<vcore::ClusterState> state, const py::dict& profile, uint64_t seed) {
             if (!state) throw py::type_error("Engine: state must be a ClusterState, not None");
             return std::make_unique<Engine>(std::move(state), profile_config(profile), seed);
           }),
           py::arg("state"), py::arg("profile"), py::arg("seed") = 0)
      .def("evaluate",
           [](Engine& e, const vcore::CompiledPod& pod) {
             auto& state = *e.state();
             if (e.config().weight_gpu > 0) {  // bring a learned GPU target up to date (it is rebuilt lazily)
               py::gil_scoped_release release;
               std::unique_lock lock(state.mutex());
               e.gpu_target();
             }
             while (true) {
               const int32_t n = state.n_slots();
               py::array_t<bool> mask(n);
               py::array_t<int64_t> scores(n);
               std::vector<int64_t> reasons;
               auto* mask_ptr = reinterpret_cast<uint8_t*>(mask.mutable_data());
               auto* score_ptr = scores.mutable_data();
               {
                 // Safe without the GIL: the kernel reads only C++ state (under the shared lock, taken after the
                 // GIL is dropped and released before it is retaken) and writes only these fresh buffers.
                 py::gil_scoped_release release;
                 std::shared_lock lock(state.mutex());
                 if (state.n_slots() != n) continue;  // a node slot was added meanwhile: size again
                 nogil_probe::point();
                 e.evaluate(pod, mask_ptr, score_ptr, reasons);
               }
               return py::make_tuple(mask, scores,
                                     py::array_t<int64_t>(static_cast<py::ssize_t>(reasons.size()), reasons.data()));
             }
           })
      .def(
          "schedule",
          [](Engine& e, const std::vector<std::shared_ptr<vcore::CompiledPod>>& pods,
             std::optional<std::vector<int64_t>> headroom) {
            std::vector<const vcore::CompiledPod*> ptrs;
            ptrs.reserve(pods.size());
            for (const auto& p : pods) {
              if (!p) throw py::type_error("Engine.schedule: pods must be CompiledPod objects, not None");
              ptrs.push_back(p.get());
            }
            vcore::ScheduleResult r;
            {
              // Safe without the GIL: `pods` keeps the compiled pods alive; the kernel touches only C++ state
              // under the exclusive lock, which is released before the GIL is retaken.
              py::gil_scoped_release release;
              std::unique_lock lock(e.state()->mutex());
              nogil_probe::point();
              r = e.schedule(ptrs, headroom ? &*headroom : nullptr);
            }
            py::array_t<int32_t> nodes(static_cast<py::ssize_t>(r.node.size()), r.node.data());
            py::array_t<int64_t> reasons(
                {static_cast<py::ssize_t>(r.node.size()), static_cast<py::ssize_t>(r.n_reasons)});
            std::copy(r.reasons.begin(), r.reasons.end(), reasons.mutable_data());
            py::list gpus;
            for (const auto& a : r.gpus) gpus.append(assignment_tuple(a));
            py::array_t<bool> over(static_cast<py::ssize_t>(r.over_headroom.size()));
            std::copy(r.over_headroom.begin(), r.over_headroom.end(), over.mutable_data());
            return py::make_tuple(nodes, reasons, gpus, over);
          },
          py::arg("pods"), py::arg("headroom") = py::none())
      .def(
          "place_gang",
          [](Engine& e, const py::handle& tasks, std::optional<std::vector<int32_t>> role,
             std::vector<int32_t> role_need, int32_t need,
             std::optional<py::array_t<int64_t, py::array::c_style | py::array::forcecast>> headroom,
             std::optional<py::array_t<uint8_t, py::array::c_style | py::array::forcecast>> allowed,
             bool all_or_nothing, std::optional<py::array_t<int32_t, py::array::c_style>> cap,
             std::optional<py::array_t<double, py::array::c_style>> score_bonus) {
            vcore::GangRequest request;
            CompiledPods pods = compiled_pods(tasks, "Engine.place_gang: tasks");
            request.tasks = std::move(pods.pods);
            if (role)
              request.role = std::move(*role);
            else
              request.role.assign(request.tasks.size(), 0);  // one role
            request.role_need = std::move(role_need);
            request.need = need;
            if (headroom) request.headroom.assign(headroom->data(), headroom->data() + headroom->size());
            if (allowed) request.allowed.assign(allowed->data(), allowed->data() + allowed->size());
            if (cap) request.cap.assign(cap->data(), cap->data() + cap->size());
            if (score_bonus) request.score_bonus.assign(score_bonus->data(), score_bonus->data() + score_bonus->size());
            request.all_or_nothing = all_or_nothing;
            vcore::GangResult r;
            {
              // Safe without the GIL: `pods.keep` keeps the compiled pods alive and the request holds copies of
              // the arrays; the kernel touches only C++ state under the exclusive lock, released before the GIL
              // returns.
              py::gil_scoped_release release;
              std::unique_lock lock(e.state()->mutex());
              nogil_probe::point();
              r = e.place_gang(request);
            }
            py::array_t<int32_t> nodes(static_cast<py::ssize_t>(r.node.size()), r.node.data());
            py::array_t<uint8_t> outcome(static_cast<py::ssize_t>(r.outcome.size()),
                                         reinterpret_cast<const uint8_t*>(r.outcome.data()));
            // Most gangs take no devices: None then, rather than a list of empty tuples.
            py::object gpus = py::none();
            if (std::any_of(r.gpus.begin(), r.gpus.end(), [](const auto& a) { return !a.holds.empty(); })) {
              py::list held;
              for (const auto& a : r.gpus) held.append(assignment_tuple(a));
              gpus = std::move(held);
            }
            py::array_t<int64_t> reasons(static_cast<py::ssize_t>(r.reasons.size()), r.reasons.data());
            return py::make_tuple(nodes, outcome, gpus, r.ready, r.first_unfit, reasons, r.evaluations);
          },
          py::arg("tasks"), py::arg("role"), py::arg("role_need"), py::arg("need"), py::arg("headroom") = py::none(),
          py::arg("allowed") = py::none(), py::arg("all_or_nothing") = true, py::arg("cap") = py::none(),
          py::arg("score_bonus") = py::none(),
          "place a gang's tasks (bound on return), all or nothing; see core/include/vcore/gang.h")
      .def(
          "preempt",
          [](Engine& e, const vcore::CompiledPod& pod, int32_t offset, int32_t percentage, int32_t absolute,
             const std::vector<std::pair<const vcore::CompiledPod*, int32_t>>& nominated) {
            vcore::PreemptionOutcome outcome;
            {
              // Safe without the GIL: the nominated pods are held by the caller's list for the whole call, the
              // rest are C++ copies; the dry run detaches and re-attaches pods under the exclusive lock and
              // leaves the state as it found it.
              py::gil_scoped_release release;
              std::unique_lock lock(e.state()->mutex());
              nogil_probe::point();
              outcome = e.preempt(pod, {offset, percentage, absolute, nominated});
            }
            py::array_t<int32_t> status(static_cast<py::ssize_t>(outcome.status.size()), outcome.status.data());
            py::list candidates;
            for (const auto& c : outcome.candidates)
              candidates.append(py::make_tuple(c.node, c.victims, c.pdb_violations));
            return py::make_tuple(outcome.node, outcome.victims, outcome.pdb_violations, status, outcome.reasons,
                                  candidates);
          },
          py::arg("pod"), py::arg("offset"), py::arg("min_candidate_nodes_percentage"),
          py::arg("min_candidate_nodes_absolute"),
          py::arg("nominated") = std::vector<std::pair<const vcore::CompiledPod*, int32_t>>{},
          "kube-scheduler's DefaultPreemption, dry run: (node slot or -1, victim keys, PDB violations, per-slot "
          "status: a reason code, or -1 candidate, -2 no victims, -3 not helpful, -4 fits, -5 outside; "
          "[(slot, reason codes)] where the pod fails even with every lower-priority pod gone; every candidate "
          "kept as (slot, victim keys, PDB violations)). `nominated`: (pending pod, slot of its nominated node)")
      .def(
          "fit_counts",
          [](const Engine& e, const vcore::CompiledPod& pod,
             std::optional<py::array_t<uint8_t, py::array::c_style | py::array::forcecast>> allowed) {
            std::vector<uint8_t> mask;
            if (allowed) mask.assign(allowed->data(), allowed->data() + allowed->size());
            std::vector<int32_t> counts;
            {
              // Safe without the GIL: reads C++ state under the shared lock into a C++ vector.
              py::gil_scoped_release release;
              std::shared_lock lock(e.state()->mutex());
              nogil_probe::point();
              counts = e.fit_counts(pod, mask);
            }
            return py::array_t<int32_t>(static_cast<py::ssize_t>(counts.size()), counts.data());
          },
          py::arg("pod"), py::arg("allowed") = py::none(),
          "per node slot, how many copies of the pod fit there now (0 where it does not fit)")
      .def(
          "fits_somewhere",
          [](const Engine& e, const vcore::CompiledPod& pod) {
            // Safe without the GIL: reads C++ state under the shared lock.
            py::gil_scoped_release release;
            std::shared_lock lock(e.state()->mutex());
            nogil_probe::point();
            return e.fits_somewhere(pod);
          },
          py::arg("pod"), "whether any node passes every filter for the pod now (evaluate's feasible set is not empty)")
      .def(
          "observe",
          [](Engine& e, const std::vector<std::shared_ptr<vcore::CompiledPod>>& pods) {
            std::vector<const vcore::CompiledPod*> ptrs;
            for (const auto& p : pods) {
              if (!p) throw py::type_error("Engine.observe: pods must be CompiledPod objects, not None");
              ptrs.push_back(p.get());
            }
            std::unique_lock lock(e.state()->mutex());
            e.observe(ptrs);
          },
          "count pods toward GPUPlacement's learned target workload without placing them")
      .def(
          "gpu_target",
          [](Engine& e) {
            std::unique_lock lock(e.state()->mutex());
            const vcore::TargetWorkload& tw = e.gpu_target();
            py::dict out;
            out["cpu_milli"] = py::array_t<int64_t>(static_cast<py::ssize_t>(tw.size()), tw.cpu_milli.data());
            out["gpu_milli"] = py::array_t<int32_t>(static_cast<py::ssize_t>(tw.size()), tw.gpu_milli.data());
            out["num_gpu"] = py::array_t<int32_t>(static_cast<py::ssize_t>(tw.size()), tw.num_gpu.data());
            out["model_mask"] = py::array_t<uint64_t>(static_cast<py::ssize_t>(tw.size()), tw.model_mask.data());
            out["weight"] = py::array_t<double>(static_cast<py::ssize_t>(tw.size()), tw.weight.data());
            return out;
          },
          "GPUPlacement's current target workload (learned ones are rebuilt first when due)")
      .def(
          "set_scope",
          [](Engine& e, std::optional<std::vector<std::string>> names, bool soft, std::vector<std::string> avoid) {
            py::gil_scoped_release release;  // only C++ copies are touched; waits for the exclusive lock
            std::unique_lock lock(e.state()->mutex());
            if (names)
              e.set_scope(*names, soft, avoid);
            else
              e.clear_scope();
          },
          py::arg("names"), py::arg("soft") = false, py::arg("avoid") = std::vector<std::string>{},
          "confine (hard) or steer (soft) decisions to the named nodes (soft: never the avoided ones); None clears")
      .def_property_readonly(
          "scope_size",
          [](const Engine& e) {
            std::shared_lock lock(e.state()->mutex());
            return e.scope_size();
          },
          "live nodes in the scope (every live node without one)")
      .def_property_readonly("n_reasons", &Engine::n_reasons)
      .def_property_readonly("pods_seen", &Engine::pods_seen);
}

}  // namespace vcore_bindings
