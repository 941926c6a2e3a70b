// NodeVolumeLimits (kube-scheduler's CSILimits), as kube-scheduler v1.34 has it.
//
// The volumes a pod would attach to a node are its claims' CSI volumes (the bound PV's spec.csi; an in-tree PV or
// inline disk translated to CSI where the node's CSINode lists its plugin as migrated; a claim not bound yet counts
// as a new volume of its StorageClass's provisioner), named driver/handle. A node whose CSINode sets
// allocatable.count for a driver takes the pod only if the volumes of that driver its bound pods use (and the
// VolumeAttachments to it of other CSI PVs) plus the pod's new ones stay within the count. A claim the pod uses that
// does not exist makes every node refuse it with the lookup's message.
#include <algorithm>
#include <climits>
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
  return plugin == "kubernetes.io/aws-ebs" || plugin == "kubernetes.io/gce-pd" ||
         plugin == "kubernetes.io/azure-disk" || plugin == "kubernetes.io/cinder" ||
         plugin == "kubernetes.io/portworx-volume";
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
std::pair<std::string, std::string> claim_driver(const VolumeStore& store, const CsiNodeRecord* csi,
                                                 const ClaimRecord& c) {
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
  if (pv->migration_plugin.empty() || !migrated_on(csi, pv->migration_plugin) || !pv->migration_error.empty())
    return {};
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
        *message =
            "looking up PVC " + pod.ns + "/" + v.claim + ": persistentvolumeclaim " + quoted(v.claim) + " not found";
        return Outcome::kMissingClaim;
      }
      if (v.source == VolumeSource::kEphemeral && (!c->has_controller || c->controller_uid != pod.uid)) {
        *message = "PVC " + pod.ns + "/" + c->name + " was not created for pod " + pod.ns + "/" + pod.name +
                   " (pod is not owner)";
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

// The volumes the pods bound to a node use there, counted per driver with the VolumeAttachments of other CSI PVs
// to it (the store keeps this for every node whose CSINode sets limits: VolumeStore::attached_view).
void compute_attached(const ClusterState& s, const VolumeStore& store, const CsiNodeRecord* csi, int32_t slot,
                      VolumeStore::SlotAttached* out) {
  Attached attached;
  for (const auto& bound : store.pods_on(slot)) {
    if (attachable(store, csi, *bound.volumes, false, &attached, &out->message) == Outcome::kError) {
      out->error = true;
      return;
    }
  }
  out->message.clear();
  std::map<std::string, int64_t> in_use;
  for (const auto& [name, driver] : attached) {
    out->volumes.push_back(name);
    ++in_use[driver];
  }
  for (const AttachmentRecord* va : store.attachments_on(s.names()[static_cast<size_t>(slot)])) {
    if (va->attacher.empty() || !va->has_pv) continue;
    const PersistentVolumeRecord* pv = store.pv(va->pv);
    if (pv == nullptr || pv->csi_driver.empty()) continue;
    if (attached.count(va->attacher + "/" + pv->csi_handle) == 0) ++in_use[va->attacher];
  }
  out->in_use.assign(in_use.begin(), in_use.end());
}

using View = VolumeStore::AttachedView;

class LimitsOfPod final : public PodPlugin {
 public:
  LimitsOfPod(const ClusterState& s, const PodVolumes& pod)
      : s_(s),
        pod_(pod),
        csi_(s.volumes().csi_nodes_by_slot(s)),
        view_(s.volumes().attached_view(s, compute_attached)) {
    filters = true;
    depends_on_bound_pods = true;
    // The pod's own volumes on a node that migrates no in-tree plugin: the same on all of them, so found once, with
    // the count per limited driver and the nodes that already have one of them attached.
    plain_ = attachable(s.volumes(), nullptr, pod_, true, &plain_volumes_, &plain_message_);
    for (const auto& [name, driver] : plain_volumes_) {
      const int32_t id = view_.driver_id(driver);
      if (id < 0) continue;  // no node limits the driver
      bool found = false;
      for (auto& w : plain_wanted_)
        if (w.first == id) found = (++w.second, true);
      if (!found) plain_wanted_.emplace_back(id, 1);
      const auto at = view_.slots_of_volume.find(name);
      if (at != view_.slots_of_volume.end())
        for (const int32_t slot : at->second) plain_present_.emplace_back(slot, id);
    }
    std::sort(plain_present_.begin(), plain_present_.end());
  }

  void filter(int32_t begin, int32_t end, uint8_t* failed, int64_t* reasons) const override {
    int64_t counts[3] = {0, 0, 0};
    std::string message;
    if (plain_ == Outcome::kOk && plain_present_.empty() && plain_wanted_.size() <= 1) {
      // The common pod: its volumes attached nowhere yet, of one limited driver (or none): a pass over flat rows.
      const int32_t id = plain_wanted_.empty() ? -1 : plain_wanted_[0].first;
      const int64_t n = plain_wanted_.empty() ? 0 : plain_wanted_[0].second;
      const uint8_t* flags = view_.flags.data();
      const size_t stride = view_.stride;
      for (int32_t j = 0; j < end - begin; ++j) {
        const int32_t slot = begin + j;
        const uint8_t f = flags[slot];
        if (failed[j] || (f & (View::kMigrates | View::kHasLimits)) == 0) continue;
        int reason = -1;
        if (f & View::kMigrates) {
          reason = check(slot, &message);
        } else if (!plain_volumes_.empty()) {
          if (f & View::kError) {
            reason = kError;
          } else if (id >= 0) {
            const size_t cell = static_cast<size_t>(slot) * stride + static_cast<size_t>(id);
            const int64_t limit = view_.limit[cell];
            if (limit >= 0 && view_.in_use[cell] + n > limit) reason = kExceeded;
          }
        }
        if (reason < 0) continue;
        failed[j] = 1;
        ++counts[reason];
      }
      for (int r = 0; r < 3; ++r) reasons[reason_base + r] += counts[r];
      return;
    }
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
    const uint8_t flags = view_.flags[static_cast<size_t>(slot)];
    if (flags & View::kMigrates) return check_migrating(slot, flags, message);
    if (plain_ == Outcome::kMissingClaim || plain_ == Outcome::kError) {
      *message = plain_message_;
      return plain_ == Outcome::kMissingClaim ? kStatus : kError;
    }
    if (plain_volumes_.empty() || !(flags & View::kHasLimits)) return -1;
    if (flags & View::kError) {
      *message = view_.errors.at(slot);
      return kError;
    }
    const size_t row = static_cast<size_t>(slot) * view_.stride;
    // The pod's volumes the node has attached already count once: take them off.
    auto present = std::lower_bound(plain_present_.begin(), plain_present_.end(), std::make_pair(slot, INT32_MIN));
    for (const auto& [id, n] : plain_wanted_) {
      const int64_t limit = view_.limit[row + static_cast<size_t>(id)];
      if (limit < 0) continue;
      int64_t wanted = n;
      for (auto it = present; it != plain_present_.end() && it->first == slot; ++it) wanted -= it->second == id;
      if (wanted > 0 && view_.in_use[row + static_cast<size_t>(id)] + wanted > limit) return kExceeded;
    }
    return -1;
  }

 private:
  // A node whose CSINode migrates in-tree plugins: the pod's volumes as that node translates them.
  int check_migrating(int32_t slot, uint8_t flags, std::string* message) const {
    const CsiNodeRecord* csi = csi_[static_cast<size_t>(slot)];
    Attached fresh;
    const Outcome own = attachable(s_.volumes(), csi, pod_, true, &fresh, message);
    if (own == Outcome::kMissingClaim) return kStatus;
    if (own == Outcome::kError) return kError;
    if (fresh.empty() || !(flags & View::kHasLimits)) return -1;
    if (flags & View::kError) {
      *message = view_.errors.at(slot);
      return kError;
    }
    std::map<int32_t, int64_t> wanted;
    for (const auto& [name, driver] : fresh) {
      const int32_t id = view_.driver_id(driver);
      if (id >= 0 && !view_.attached(name, slot)) ++wanted[id];
    }
    const size_t row = static_cast<size_t>(slot) * view_.stride;
    for (const auto& [id, n] : wanted) {
      const int64_t limit = view_.limit[row + static_cast<size_t>(id)];
      if (limit >= 0 && view_.in_use[row + static_cast<size_t>(id)] + n > limit) return kExceeded;
    }
    return -1;
  }

  const ClusterState& s_;
  const PodVolumes& pod_;
  const std::vector<const CsiNodeRecord*>& csi_;
  const View& view_;
  Outcome plain_ = Outcome::kOk;
  Attached plain_volumes_;
  std::string plain_message_;
  std::vector<std::pair<int32_t, int64_t>> plain_wanted_;   // limited driver id -> the pod's volumes of it
  std::vector<std::pair<int32_t, int32_t>> plain_present_;  // (slot, driver id) of each volume a node has, by slot
};

class NodeVolumeLimits final : public NodePlugin {
 public:
  std::vector<std::string> reasons() const override {
    return {"node(s) exceed max volume count", "<NodeVolumeLimits: filter status>", "<NodeVolumeLimits: filter error>"};
  }
  // Too many volumes is Unschedulable (evicting pods frees their attachments); a missing claim is
  // UnschedulableAndUnresolvable, and an error fails the attempt.
  std::vector<int32_t> unresolvable_reasons() const override { return {kStatus, kError}; }

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
