// VolumeZone, as kube-scheduler v1.34 has it.
//
// PreFilter: the topology labels (failure-domain.beta.kubernetes.io/zone and /region, topology.kubernetes.io/zone
// and /region; a value may list several zones joined by "__") of the PVs the pod's persistentVolumeClaim volumes are
// bound to. A claim not bound yet is skipped when its StorageClass binds WaitForFirstConsumer, and rejects the pod
// otherwise (as does a missing claim, class or PV). Filter: a node carrying any of the four labels must carry, for
// each of the PVs' labels, that label (or its GA form) with one of the allowed values.
#include <algorithm>

#include "vcore/cluster_state.h"
#include "vcore/node_plugin.h"
#include "vcore/pod.h"
#include "vcore/volumes/volume_store.h"

namespace vcore {
namespace {

const char* const kTopologyLabels[] = {"failure-domain.beta.kubernetes.io/zone",
                                       "failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/zone",
                                       "topology.kubernetes.io/region"};

enum Reason { kConflict = 0, kRejected = 1 };

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

class RejectedPod final : public PodPlugin {
 public:
  RejectedPod() {
    filters = true;
    rejects_with = kRejected;
  }
};

class ZonesOfPod final : public PodPlugin {
 public:
  ZonesOfPod(const ClusterState& s, std::vector<const ZoneLabel*> zones) : s_(s), zones_(std::move(zones)) {
    filters = true;
    for (const char* key : kTopologyLabels) columns_.push_back(s.label_column(s.find_string(key)));
  }

  void filter(int32_t begin, int32_t end, uint8_t* failed, int64_t* reasons) const override {
    int64_t count = 0;
    for (int32_t j = 0; j < end - begin; ++j) {
      if (failed[j] || fits(begin + j)) continue;
      failed[j] = 1;
      ++count;
    }
    reasons[reason_base + kConflict] += count;
  }

 private:
  int32_t label(int32_t key, int32_t slot) const {
    if (key < 0) return -1;
    const int32_t* column = s_.label_column(key);
    if (column != nullptr) return column[slot];
    const auto& labels = s_.labels()[static_cast<size_t>(slot)];
    const auto it = std::lower_bound(labels.begin(), labels.end(), std::make_pair(key, INT32_MIN));
    return it != labels.end() && it->first == key ? it->second : -1;
  }

  bool fits(int32_t slot) const {
    // A node without topology labels (a single-zone cluster) takes any volume.
    bool constrained = false;
    for (const int32_t* column : columns_) constrained |= column != nullptr && column[slot] >= 0;
    if (!constrained) return true;
    for (const ZoneLabel* z : zones_) {
      int32_t value = label(z->key, slot);
      if (value < 0) value = label(z->ga_key, slot);  // the PV's beta label against the node's GA label
      if (value < 0 || !std::binary_search(z->values.begin(), z->values.end(), value)) return false;
    }
    return true;
  }

  const ClusterState& s_;
  std::vector<const ZoneLabel*> zones_;
  std::vector<const int32_t*> columns_;
};

class VolumeZone final : public NodePlugin {
 public:
  std::vector<std::string> reasons() const override {
    return {"node(s) had no available volume zone", "<VolumeZone: pod rejected at PreFilter>"};
  }
  // Every VolumeZone failure is UnschedulableAndUnresolvable: no eviction moves a volume's zone.
  std::vector<int32_t> unresolvable_reasons() const override { return {kConflict, kRejected}; }
  std::vector<std::string> label_keys() const override {
    return {std::begin(kTopologyLabels), std::end(kTopologyLabels)};
  }

  std::unique_ptr<PodPlugin> prepare(const ClusterState& s, const CompiledPod& pod) const override {
    if (pod.volumes == nullptr) return nullptr;
    const VolumeStore& store = s.volumes();
    const PodVolumes& v = *pod.volumes;
    std::vector<const ZoneLabel*> zones;
    const auto reject = [&](std::string message) -> std::unique_ptr<PodPlugin> {
      store.note_rejection(pod.key, "VolumeZone", std::move(message));
      return std::make_unique<RejectedPod>();
    };
    for (const PodVolume& vol : v.volumes) {
      if (vol.source != VolumeSource::kClaim) continue;  // generic ephemeral volumes are not looked at
      if (vol.claim.empty()) return reject("PersistentVolumeClaim had no name");
      const ClaimRecord* c = store.claim(v.ns, vol.claim);
      if (c == nullptr) return reject("persistentvolumeclaim " + quoted(vol.claim) + " not found");
      if (c->volume_name.empty()) {
        if (c->storage_class.empty()) return reject("PersistentVolumeClaim had no pv name and storageClass name");
        const StorageClassRecord* sc = store.storage_class(c->storage_class);
        if (sc == nullptr) return reject("storageclass.storage.k8s.io " + quoted(c->storage_class) + " not found");
        if (sc->mode == BindingMode::kUnset)
          return reject("VolumeBindingMode not set for StorageClass " + quoted(c->storage_class));
        if (sc->mode == BindingMode::kWaitForFirstConsumer) continue;
        return reject("PersistentVolume had no name");
      }
      const PersistentVolumeRecord* pv = store.pv(c->volume_name);
      if (pv == nullptr) return reject("persistentvolume " + quoted(c->volume_name) + " not found");
      for (const ZoneLabel& z : pv->zones) zones.push_back(&z);
    }
    if (zones.empty()) return nullptr;
    return std::make_unique<ZonesOfPod>(s, std::move(zones));
  }
};

VCORE_NODE_PLUGIN("VolumeZone",
                  [](const PluginArgs&) -> std::unique_ptr<NodePlugin> { return std::make_unique<VolumeZone>(); });

}  // namespace
}  // namespace vcore
