// NodePorts, as kube-scheduler v1.34 has it: a node is infeasible when a host port the pod's containers (and
// sidecar init containers) take is in use there: the same protocol and port on the same host IP, or on any IP when
// either side binds 0.0.0.0. The ports in use per node live in ClusterState (node_extras.h), updated on every
// bind and unbind.
#include "vcore/cluster_state.h"
#include "vcore/node_plugin.h"
#include "vcore/pod.h"

namespace vcore {
namespace {

class PortsOfPod final : public PodPlugin {
 public:
  PortsOfPod(const ClusterState& s, const CompiledPod& pod) : s_(s), pod_(pod) {
    filters = true;
    depends_on_bound_pods = true;  // a gang's tasks may want the same port
  }

  void filter(int32_t begin, int32_t end, uint8_t* failed, int64_t* reasons) const override {
    int64_t refused = 0;
    const int32_t any_ip = s_.any_host_ip();
    for (int32_t j = 0; j < end - begin; ++j) {
      if (failed[j] || !s_.host_ports().conflicts(begin + j, pod_.host_ports, any_ip)) continue;
      failed[j] = 1;
      ++refused;
    }
    reasons[reason_base] += refused;
  }

 private:
  const ClusterState& s_;
  const CompiledPod& pod_;
};

class NodePorts final : public NodePlugin {
 public:
  std::vector<std::string> reasons() const override {
    return {"node(s) didn't have free ports for the requested pod ports"};
  }
  std::unique_ptr<PodPlugin> prepare(const ClusterState& s, const CompiledPod& pod) const override {
    if (pod.host_ports.empty()) return nullptr;
    return std::make_unique<PortsOfPod>(s, pod);
  }
};

VCORE_NODE_PLUGIN("NodePorts",
                  [](const PluginArgs&) -> std::unique_ptr<NodePlugin> { return std::make_unique<NodePorts>(); });

}  // namespace
}  // namespace vcore
