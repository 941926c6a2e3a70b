// Network topology bindings: submodule `topology` of vcore._native._core.
//
// Tree mutations take the state's exclusive lock (they rewrite node_topo); the kernels copy their array arguments
// into C++-owned vectors, take the shared lock and release the GIL. Arrays must have the documented dtype: a wrong
// one raises TypeError rather than being converted.
#include <mutex>
#include <optional>
#include <shared_mutex>

#include "convert.h"
#include "registry.h"
#include "vcore/errors.h"
#include "vcore/topology.h"

namespace vcore_bindings {
namespace {

using vcore::ClusterState;

template <class T>
std::vector<T> exact_array(const py::handle& obj, const char* name, int32_t expected) {
  if (!py::isinstance<py::array>(obj)) throw py::type_error(std::string(name) + ": expected a numpy array");
  auto arr = py::reinterpret_borrow<py::array>(obj);
  if (!arr.dtype().is(py::dtype::of<T>()))
    throw py::type_error(std::string(name) + ": expected dtype " + std::string(py::str(py::dtype::of<T>())) + ", got " +
                         std::string(py::str(arr.dtype())));
  if (arr.ndim() != 1) throw py::value_error(std::string(name) + ": expected a 1-d array");
  if (arr.shape(0) != expected)
    throw py::value_error(std::string(name) + ": expected " + std::to_string(expected) + " entries (n_slots), got " +
                          std::to_string(arr.shape(0)));
  std::vector<T> out(static_cast<size_t>(expected));
  auto view = arr.unchecked<T, 1>();
  for (py::ssize_t i = 0; i < expected; ++i) out[static_cast<size_t>(i)] = view(i);
  return out;
}

vcore::HyperNodeInput hypernode_input(const py::dict& spec) {
  vcore::HyperNodeInput h;
  h.name = field<std::string>(spec, "name", "HyperNode spec");
  const std::string what = "HyperNode " + h.name;
  h.tier = field<int64_t>(spec, "tier", what);
  h.tier_name = field_or<std::string>(spec, "tier_name", what, "");
  h.bandwidth_gbps = field_or<double>(spec, "bandwidth_gbps", what, -1.0);
  h.congestion = field_or<double>(spec, "congestion", what, -1.0);
  using Label = std::tuple<std::string, std::string, std::vector<std::string>>;
  using Member = std::tuple<std::string, std::string, std::string, std::vector<Label>, std::vector<int32_t>>;
  for (const auto& [type, selector, value, labels, slots] : field<std::vector<Member>>(spec, "members", what))
    h.members.push_back({type, selector, value, labels, slots});
  return h;
}

py::array int32_array(const std::vector<int32_t>& v) {
  py::array_t<int32_t> a(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), a.mutable_data());
  return std::move(a);
}

}  // namespace

void register_topology(py::module_& m) {
  py::module_ t = m.def_submodule("topology", "Network topology: HyperNode / label-level tree, node_topo, gang search");

  // `membership`: the ClusterState membership the regexMatch members' slots were matched at (node_names below);
  // StaleError when the nodes changed since.
  t.def(
      "set_hypernodes",
      [](ClusterState& s, const py::list& specs, std::optional<uint64_t> membership) {
        std::vector<vcore::HyperNodeInput> in;
        for (const auto& spec : specs) in.push_back(hypernode_input(spec.cast<py::dict>()));
        std::unique_lock lock(s.mutex());
        s.topology().set_hypernodes(s, in, membership);
      },
      py::arg("state"), py::arg("specs"), py::arg("membership") = py::none(),
      "replace every HyperNode (validated as a whole)");
  t.def(
      "add_hypernode",
      [](ClusterState& s, const py::dict& spec, std::optional<uint64_t> membership) {
        const auto in = hypernode_input(spec);
        std::unique_lock lock(s.mutex());
        s.topology().add_hypernode(s, in, membership);
      },
      py::arg("state"), py::arg("spec"), py::arg("membership") = py::none());
  t.def(
      "update_hypernode",
      [](ClusterState& s, const py::dict& spec, std::optional<uint64_t> membership) {
        const auto in = hypernode_input(spec);
        std::unique_lock lock(s.mutex());
        s.topology().update_hypernode(s, in, membership);
      },
      py::arg("state"), py::arg("spec"), py::arg("membership") = py::none());
  t.def(
      "node_names",
      [](const ClusterState& s) {
        std::shared_lock lock(s.mutex());
        return py::make_tuple(s.membership(), s.names());
      },
      py::arg("state"), "(membership, names by slot): what regexMatch members are matched against, read at once");
  t.def(
      "patterns",
      [](const ClusterState& s) {
        std::shared_lock lock(s.mutex());
        return py::make_tuple(s.topology().pattern_version(), s.topology().patterns());
      },
      py::arg("state"),
      "(version, patterns): the HyperNodes' distinct regexMatch patterns; a pattern's id is its index");
  t.def(
      "remove_hypernode",
      [](ClusterState& s, const std::string& name) {
        std::unique_lock lock(s.mutex());
        s.topology().remove_hypernode(s, name);
      },
      py::arg("state"), py::arg("name"));
  t.def(
      "set_levels",
      [](ClusterState& s, const std::vector<std::string>& keys) {
        std::unique_lock lock(s.mutex());
        s.topology().set_levels(s, keys);
      },
      py::arg("state"), py::arg("keys"), "label keys from the highest level to the lowest; [] clears them");
  t.def(
      "node_topo",
      [](const ClusterState& s) {
        std::shared_lock lock(s.mutex());
        const auto& topo = s.topology();
        return readonly_view<int32_t>(topo.node_topo(), topo.node_topo()->data(), {topo.n_rows(), s.n_slots()},
                                      {static_cast<py::ssize_t>(topo.stride()) * 4, 4}, py::dtype::of<int32_t>());
      },
      py::arg("state"), "read-only int32[rows, n_slots]: the domain of each node slot per tier row, -1 none");
  t.def(
      "tiers",
      [](const ClusterState& s) {
        std::shared_lock lock(s.mutex());
        const auto& topo = s.topology();
        py::dict out;
        out["tiers"] = topo.tiers();
        out["tier_names"] = topo.tier_names();
        out["levels"] = topo.levels();
        out["generation"] = topo.generation();
        return out;
      },
      py::arg("state"), "the tier rows (tiers, tier_names, levels) and the topology generation, without the domains");
  t.def(
      "tree",
      [](const ClusterState& s) {
        std::shared_lock lock(s.mutex());
        const auto& topo = s.topology();
        const int32_t nd = topo.n_domains();
        std::vector<std::string> names(static_cast<size_t>(nd));
        std::vector<int32_t> row(static_cast<size_t>(nd)), parent(static_cast<size_t>(nd));
        py::array_t<double> bandwidth(nd), congestion(nd);
        for (int32_t d = 0; d < nd; ++d) {
          names[d] = topo.domain_live(d) ? topo.domain_name(d) : std::string();
          row[d] = topo.domain_row(d);
          parent[d] = topo.domain_parent(d);
          bandwidth.mutable_at(d) = topo.domain_bandwidth(d);
          congestion.mutable_at(d) = topo.domain_congestion(d);
        }
        std::vector<int32_t> leaf(static_cast<size_t>(s.n_slots()));
        for (int32_t slot = 0; slot < s.n_slots(); ++slot) leaf[slot] = topo.node_leaf(slot);
        py::dict out;
        out["tiers"] = topo.tiers();
        out["tier_names"] = topo.tier_names();
        out["levels"] = topo.levels();
        out["domain_names"] = names;
        out["domain_row"] = int32_array(row);
        out["domain_parent"] = int32_array(parent);
        out["domain_bandwidth_gbps"] = bandwidth;
        out["domain_congestion"] = congestion;
        out["node_leaf"] = int32_array(leaf);
        out["generation"] = topo.generation();
        return out;
      },
      py::arg("state"), "a copy of the domain tree (free domain ids have row -1 and an empty name)");
  t.def(
      "place_gang",
      [](const ClusterState& s, const py::handle& fit, int64_t n_pods, int32_t start_row, int32_t limit_row, bool hard,
         const std::vector<std::pair<int64_t, int32_t>>& layers, const py::handle& running, double bandwidth_weight,
         double congestion_weight, int64_t tie_slack) {
        vcore::DomainRequest in;
        {
          std::shared_lock lock(s.mutex());
          in.fit = exact_array<int32_t>(fit, "fit", s.n_slots());
          if (!running.is_none()) in.running = exact_array<int32_t>(running, "running", s.n_slots());
        }
        in.n_pods = n_pods;
        in.start_row = start_row;
        in.limit_row = limit_row;
        in.hard = hard;
        for (const auto& [size, row] : layers) in.layers.push_back({size, row});
        in.bandwidth_weight = bandwidth_weight;
        in.congestion_weight = congestion_weight;
        in.tie_slack = tie_slack;
        vcore::DomainChoice r;
        std::string domain_name;
        {
          py::gil_scoped_release nogil;  // reads only the tree (under the shared lock) and C++-owned copies
          std::shared_lock lock(s.mutex());
          if (static_cast<int32_t>(in.fit.size()) != s.n_slots())
            throw vcore::Invalid("place_gang: the cluster changed size during the call");
          r = s.topology().place_gang(s, in);
          if (r.domain >= 0) domain_name = s.topology().domain_name(r.domain);
        }
        py::dict out;
        out["placed"] = r.placed;
        out["domain"] = r.domain;
        out["domain_name"] = domain_name;
        out["row"] = r.row;
        out["counts"] = int32_array(r.counts);
        out["reason"] = r.reason;
        out["message"] = r.message;
        out["best_capacity"] = r.best_capacity;
        return out;
      },
      py::arg("state"), py::arg("fit"), py::arg("n_pods"), py::arg("start_row"), py::arg("limit_row"), py::arg("hard"),
      py::arg("layers"), py::arg("running"), py::arg("bandwidth_weight"), py::arg("congestion_weight"),
      py::arg("tie_slack"),
      "the gang search: fit int32[n_slots] (pods that fit per slot), running int32[n_slots] or None");
  t.def(
      "node_scores",
      [](const ClusterState& s, const py::handle& job_pods, int64_t job_tasks, double weight,
         const py::handle& candidates) {
        std::vector<int32_t> pods;
        std::vector<uint8_t> cand;
        {
          std::shared_lock lock(s.mutex());
          pods = exact_array<int32_t>(job_pods, "job_pods", s.n_slots());
          if (!candidates.is_none()) {
            for (auto b : exact_array<bool>(candidates, "candidates", s.n_slots())) cand.push_back(b ? 1 : 0);
          }
        }
        std::vector<double> scores;
        {
          py::gil_scoped_release nogil;  // reads only the tree (under the shared lock) and C++-owned copies
          std::shared_lock lock(s.mutex());
          if (static_cast<int32_t>(pods.size()) != s.n_slots())
            throw vcore::Invalid("node_scores: the cluster changed size during the call");
          scores = s.topology().node_scores(s, pods, job_tasks, weight, cand);
        }
        py::array_t<double> out(static_cast<py::ssize_t>(scores.size()));
        std::copy(scores.begin(), scores.end(), out.mutable_data());
        return out;
      },
      py::arg("state"), py::arg("job_pods"), py::arg("job_tasks"), py::arg("weight"), py::arg("candidates"),
      "Volcano's network-topology-aware node score; job_pods int32[n_slots], candidates bool[n_slots] or None");
  t.def(
      "binpack_scores",
      [](const ClusterState& s, const std::vector<std::tuple<int32_t, int64_t, int64_t>>& resources, double fading,
         double weight) {
        std::vector<vcore::BinpackResource> input;
        for (const auto& [axis, request, w] : resources) input.push_back({axis, request, w});
        std::vector<double> scores;
        {
          py::gil_scoped_release nogil;  // reads the tree and the resource rows under the shared lock into C++
          std::shared_lock lock(s.mutex());
          scores = s.topology().binpack_scores(s, input, fading, weight);
        }
        return py::array_t<double>(static_cast<py::ssize_t>(scores.size()), scores.data());
      },
      py::arg("state"), py::arg("resources"), py::arg("fading"), py::arg("weight"),
      "Volcano's HyperNode binpack node score of a pod without a network topology: resources [(axis, request, "
      "weight)], float64[n_slots] in 0..100 * weight");
}

}  // namespace vcore_bindings
