// NodeVolumeLimits (kube-scheduler's CSILimits), as kube-scheduler v1.34 has it.
//
// The volumes a pod would attach to a node are its claims' CSI volumes (the bound PV's spec.csi; an in-tree PV or
// inline disk translated to CSI where the node's CSINode lists its plugin as migrated; a claim not bound yet counts
// as a new volume of its StorageClass's provisioner), named driver/handle. A node whose CSINode sets
// allocatable.count for a driver takes the pod only if the volumes of that driver its bound pods use (and the
// VolumeAttachments to it of other CSI PVs) plus the pod's new ones stay within the count. A claim the pod uses that
// does not exist makes every node refuse it with the lookup's message.
#include <map>

#include "vcore/cluster_state.h"
#include "vcore/node_plugin.h"
#include "vcore/pod.h"
#include "vcore/volumes/volume_binder.h"
#include "vcore/volumes/volume_store.h"

namespace vcore {
namespace {

enum Reason { kExceeded = 0, kStatus = 1, kError = 2 };

// The handles of claims not bound yet carry a prefix no volume handle has (kube-scheduler uses a random one).
const char* const kUnboundPrefix = "\x01unbound-";

// In-tree plugin -> the CSI driver its volumes migrate to (csi-translation-lib).
const std::map<std::string, std::string>& migrated_drivers() {
  static const std::map<std::string, std::string> drivers = {
      {"kubernetes.io/aws-ebs", "ebs.csi.aws.com"},
      {"kubernetes.io/azure-disk", "disk.csi.azure.com"},
      {"kubernetes.io/azure-file", "file.csi.azure.com"},
      {"kubernetes.io/gce-pd", "pd.csi.storage.gke.io"},
      {"kubernetes.io/cinder", "cinder.csi.openstack.org"},
      {"kubernetes.io/portworx-volume", "pxd.portworx.com"},
      {"kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com"},
  };
  return drivers;
}

// Migration is on only for these (isCSIMigrationOn: Azure File and vSphere never count).
bool migratable(const std::string& plugin) {
  return plugin == "kubernetes.io/aws-ebs" || plugin == "kubernetes.io/gce-pd" || plugin == "kubernetes.io/azure-disk" ||
         plugin == "kubernetes.io/cinder" || plugin == "kubernetes.io/portworx-volume";
}

bool attachable_inline(const PodVolume& v) {
  switch (v.source) {
    case VolumeSource::kGcePersistentDisk:
    case VolumeSource::kAwsElasticBlockStore:
    case VolumeSource::kAzureDisk:
    case VolumeSource::kAzureFile:
    case VolumeSource::kCinder:
    case VolumeSource::kVsphere:
    case VolumeSource::kPortworx:
      return true;
    default:
      return false;
  }
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

enum class Outcome { kOk, kMissingClaim, kError };

using Attached = std::map<std::string, std::string>;  // driver/handle -> driver

// getCSIDriverInfo: a claim's CSI driver and volume handle on a node with this CSINode ("" when it does not count).
std::pair<std::string, std::string> claim_driver(const VolumeStore& store, const CsiNodeRecord* csi, const ClaimRecord& c) {
  const auto from_class = [&]() -> std::pair<std::string, std::string> {
    if (c.storage_class.empty()) return {};
    const StorageClassRecord* sc = store.storage_class(c.storage_class);
    if (sc == nullptr) return {};
    const std::string handle = kUnboundPrefix + c.ns + "/" + c.name;
    const auto it = migrated_drivers().find(sc->provisioner);
    if (it != migrated_drivers().end()) {
      if (!migratable(sc->provisioner) || !migrated_on(csi, sc->provisioner)) return {};
      return {it->second, handle};
    }
    return {sc->provisioner, handle};
  };
  if (c.volume_name.empty()) return from_class();
  const PersistentVolumeRecord* pv = store.pv(c.volume_name);
  if (pv == nullptr) return from_class();
  if (!pv->csi_driver.empty()) return {pv->csi_driver, pv->csi_handle};
  if (pv->migration_plugin.empty() || !migrated_on(csi, pv->migration_plugin) || !pv->migration_error.empty()) return {};
  return {pv->migrated_driver, pv->migrated_handle};
}

// filterAttachableVolumes: the volumes of a pod that count on a node with this CSINode. For the pod being placed a
// missing claim is a status (kMissingClaim); for a bound pod it is skipped.
Outcome attachable(const VolumeStore& store, const CsiNodeRecord* csi, const PodVolumes& pod, bool new_pod,
                   Attached* out, std::string* message) {
  for (const PodVolume& v : pod.volumes) {
    if (v.uses_claim()) {
      if (v.claim.empty()) {
        *message = "PersistentVolumeClaim had no name";
        return Outcome::kError;
      }
      const ClaimRecord* c = store.claim(pod.ns, v.claim);
      if (c == nullptr) {
        if (!new_pod) continue;
        *message = "looking up PVC " + pod.ns + "/" + v.claim + ": persistentvolumeclaim " + quoted(v.claim) + " not found";
        return Outcome::kMissingClaim;
      }
      if (v.source == VolumeSource::kEphemeral && (!c->has_controller || c->controller_uid != pod.uid)) {
        *message = "PVC " + pod.ns + "/" + c->name + " was not created for pod " + pod.ns + "/" + pod.name + " (pod is not owner)";
        return Outcome::kError;
      }
      const auto [driver, handle] = claim_driver(store, csi, *c);
      if (!driver.empty() && !handle.empty()) (*out)[driver + "/" + handle] = driver;
      continue;
    }
    if (!attachable_inline(v) || !migratable(v.migration_plugin) || !migrated_on(csi, v.migration_plugin)) continue;
    if (!v.translation_error.empty()) {
      *message = "converting volume(" + v.name + ") from inline to csi: " + v.translation_error;
      return Outcome::kError;
    }
    if (!v.csi_handle.empty()) (*out)[v.csi_driver + "/" + v.csi_handle] = v.csi_driver;
  }
  return Outcome::kOk;
}

class LimitsOfPod final : public PodPlugin {
 public:
  LimitsOfPod(const ClusterState& s, const PodVolumes& pod) : s_(s), pod_(pod), csi_(s.volumes().csi_nodes_by_slot(s)) {
    filters = true;
    depends_on_bound_pods = true;
    // The pod's own volumes on a node that migrates no in-tree plugin: the same on all of them, so found once.
    plain_ = attachable(s.volumes(), nullptr, pod_, true, &plain_volumes_, &plain_message_);
  }

  void filter(int32_t begin, int32_t end, uint8_t* failed, int64_t* reasons) const override {
    int64_t counts[3] = {0, 0, 0};
    std::string message;
    for (int32_t j = 0; j < end - begin; ++j) {
      if (failed[j]) continue;
      const int reason = check(begin + j, &message);
      if (reason < 0) continue;
      failed[j] = 1;
      ++counts[reason];
    }
    for (int r = 0; r < 3; ++r) reasons[reason_base + r] += counts[r];
  }

  // The reason the node refuses the pod (-1: it takes it); `message` for kStatus and kError.
  int check(int32_t slot, std::string* message) const {
    const VolumeStore& store = s_.volumes();
    const CsiNodeRecord* csi = csi_[static_cast<size_t>(slot)];
    Attached fresh;
    Outcome own;
    if (csi == nullptr || csi->migrated.empty()) {
      own = plain_;
      fresh = plain_volumes_;
      *message = plain_message_;
    } else {
      own = attachable(store, csi, pod_, true, &fresh, message);
    }
    if (own == Outcome::kMissingClaim) return kStatus;
    if (own == Outcome::kError) return kError;
    if (fresh.empty() || csi == nullptr || csi->limits.empty()) return -1;
    Attached attached;
    for (const auto& bound : store.pods_on(slot))
      if (attachable(store, csi, *bound.volumes, false, &attached, message) == Outcome::kError) return kError;
    std::map<std::string, int64_t> in_use;
    for (const auto& [name, driver] : attached) {
      fresh.erase(name);  // a volume the node has already counts once
      ++in_use[driver];
    }
    for (const AttachmentRecord* va : store.attachments_on(s_.names()[static_cast<size_t>(slot)])) {
      if (va->attacher.empty() || !va->has_pv) continue;
      const PersistentVolumeRecord* pv = store.pv(va->pv);
      if (pv == nullptr || pv->csi_driver.empty()) continue;
      if (attached.count(va->attacher + "/" + pv->csi_handle) == 0) ++in_use[va->attacher];
    }
    std::map<std::string, int64_t> wanted;
    for (const auto& [name, driver] : fresh) ++wanted[driver];
    for (const auto& [driver, n] : wanted) {
      const auto limit = csi->limits.find(driver);
      if (limit != csi->limits.end() && in_use[driver] + n > limit->second) return kExceeded;
    }
    return -1;
  }

 private:
  const ClusterState& s_;
  const PodVolumes& pod_;
  const std::vector<const CsiNodeRecord*>& csi_;
  Outcome plain_ = Outcome::kOk;
  Attached plain_volumes_;
  std::string plain_message_;
};

class NodeVolumeLimits final : public NodePlugin {
 public:
  std::vector<std::string> reasons() const override {
    return {"node(s) exceed max volume count", "<NodeVolumeLimits: filter status>", "<NodeVolumeLimits: filter error>"};
  }

  std::unique_ptr<PodPlugin> prepare(const ClusterState& s, const CompiledPod& pod) const override {
    if (pod.volumes == nullptr) return nullptr;
    const PodVolumes& v = *pod.volumes;
    bool counts = false;  // PreFilter: only claims and inline disks CSI migration may count are looked at
    for (const PodVolume& vol : v.volumes) counts |= vol.uses_claim() || attachable_inline(vol);
    if (!counts) return nullptr;
    const VolumeStore& store = s.volumes();
    auto out = std::make_unique<LimitsOfPod>(s, v);
    // Errors fail kube-scheduler's whole attempt once a node meets them: the pod's own volumes (a claim of an
    // ephemeral volume it does not own, an inline disk a migrating node cannot translate), or a bound pod's on a
    // node where the pod's new volumes would be counted. Any live node that meets one rules the pod out.
    std::string message;
    const auto& csi = store.csi_nodes_by_slot(s);
    const auto fail_with = [&](const std::string& why) -> std::unique_ptr<PodPlugin> {
      store.note_rejection(pod.key, "NodeVolumeLimits", "running \"NodeVolumeLimits\" filter plugin: " + why);
      out->rejects_with = kError;
      out->rejects_at_filter = true;
      return std::move(out);
    };
    for (const PodVolume& vol : v.volumes) {
      if (vol.uses_claim()) {
        Attached ignored;
        const PodVolumes one{v.ns, v.name, v.uid, {vol}};
        const Outcome o = attachable(store, nullptr, one, true, &ignored, &message);
        if (o == Outcome::kMissingClaim) {  // every node stops here, with the same status
          store.note_rejection(pod.key, "NodeVolumeLimits", message);
          return out;
        }
        if (o == Outcome::kError) return fail_with(message);
        continue;
      }
      if (!attachable_inline(vol) || !migratable(vol.migration_plugin) || vol.translation_error.empty()) continue;
      for (int32_t slot = 0; slot < s.n_slots(); ++slot)
        if (s.is_live(slot) && migrated_on(csi[static_cast<size_t>(slot)], vol.migration_plugin))
          return fail_with("converting volume(" + vol.name + ") from inline to csi: " + vol.translation_error);
    }
    for (int32_t slot : store.slots_with_unusual_pods())
      if (s.is_live(slot) && out->check(slot, &message) == kError) return fail_with(message);
    return out;
  }
};

VCORE_NODE_PLUGIN("NodeVolumeLimits", [](const PluginArgs&) -> std::unique_ptr<NodePlugin> {
  return std::make_unique<NodeVolumeLimits>();
});

}  // namespace
}  // namespace vcore
