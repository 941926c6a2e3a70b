// ImageLocality, as kube-scheduler v1.34 has it: a node scores by the images of the pod's containers it already
// has. Each image present adds its size scaled by the share of nodes that have it (so an image on every node
// counts fully, one on a single node of many hardly at all); the sum, clamped to [23 MiB, 1000 MiB per container],
// maps linearly onto 0..100. No normalization over the feasible nodes.
#include <algorithm>

#include "vcore/cluster_state.h"
#include "vcore/node_plugin.h"
#include "vcore/pod.h"

namespace vcore {
namespace {

constexpr int64_t kMiB = 1024 * 1024;
constexpr int64_t kMinThreshold = 23 * kMiB;
constexpr int64_t kMaxContainerThreshold = 1000 * kMiB;

class ImagesOfPod final : public PodPlugin {
 public:
  // Per image of the pod (with repeats), its scaled size; the node sum only adds those it has.
  ImagesOfPod(const ClusterState& s, std::vector<std::pair<int32_t, int64_t>> scaled, int32_t n_containers)
      : s_(s), scaled_(std::move(scaled)), max_threshold_(kMaxContainerThreshold * n_containers) {
    scores = true;
  }

  void score(int32_t begin, int32_t end, const uint8_t* mask, int64_t* raw) const override {
    for (int32_t j = 0; j < end - begin; ++j) {
      if (!mask[j]) continue;
      int64_t sum = 0;
      for (const auto& [name, size] : scaled_)
        if (s_.images().node_has(begin + j, name)) sum += size;
      sum = std::clamp(sum, kMinThreshold, std::max(kMinThreshold, max_threshold_));
      raw[j] = 100 * (sum - kMinThreshold) / (max_threshold_ - kMinThreshold);
    }
  }

 private:
  const ClusterState& s_;
  std::vector<std::pair<int32_t, int64_t>> scaled_;
  int64_t max_threshold_;
};

class ImageLocality final : public NodePlugin {
 public:
  std::unique_ptr<PodPlugin> prepare(const ClusterState& s, const CompiledPod& pod) const override {
    if (pod.images.empty() || s.images().empty() || pod.n_containers <= 0) return nullptr;
    const double total = static_cast<double>(s.n_nodes());
    std::vector<std::pair<int32_t, int64_t>> scaled;
    for (int32_t name : pod.images)
      if (const ImageTable::Image* image = s.images().find(name))
        scaled.emplace_back(
            name, static_cast<int64_t>(static_cast<double>(image->size) * (static_cast<double>(image->nodes) / total)));
    if (scaled.empty()) return nullptr;  // no node has any of its images: every node scores 0
    return std::make_unique<ImagesOfPod>(s, std::move(scaled), pod.n_containers);
  }
};

VCORE_NODE_PLUGIN("ImageLocality",
                  [](const PluginArgs&) -> std::unique_ptr<NodePlugin> { return std::make_unique<ImageLocality>(); });

}  // namespace
}  // namespace vcore
