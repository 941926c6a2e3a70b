// NodeName: a pod with spec.nodeName fits only the node of that name (kube-scheduler's NodeName filter).
#include "vcore/cluster_state.h"
#include "vcore/node_plugin.h"
#include "vcore/pod.h"

namespace vcore {
namespace {

class NamedNode final : public PodPlugin {
 public:
  explicit NamedNode(int32_t slot) : slot_(slot) { filters = true; }

  void filter(int32_t begin, int32_t end, uint8_t* failed, int64_t* reasons) const override {
    int64_t count = 0;
    for (int32_t j = 0; j < end - begin; ++j) {
      const uint8_t f = static_cast<uint8_t>(!failed[j] & (begin + j != slot_));
      failed[j] |= f;
      count += f;
    }
    reasons[reason_base] += count;
  }

 private:
  const int32_t slot_;  // -1: no node has the name
};

class NodeName final : public NodePlugin {
 public:
  std::vector<std::string> reasons() const override { return {"node(s) didn't match the requested node name"}; }

  std::unique_ptr<PodPlugin> prepare(const ClusterState& s, const CompiledPod& pod) const override {
    if (pod.node_name.empty()) return nullptr;
    return std::make_unique<NamedNode>(s.node_index(pod.node_name));
  }
  std::vector<int32_t> unresolvable_reasons() const override { return {0}; }
};

VCORE_NODE_PLUGIN("NodeName",
                  [](const PluginArgs&) -> std::unique_ptr<NodePlugin> { return std::make_unique<NodeName>(); });

}  // namespace
}  // namespace vcore
