// VolumeRestrictions, as kube-scheduler v1.34 has it.
//
// PreFilter: every persistentVolumeClaim volume's claim exists; the claims with the ReadWriteOncePod access mode that
// a bound pod uses already make every node infeasible. Filter: a node where a bound pod mounts the same disk
// conflicts: the same GCE PD unless both mount it read-only, the same AWS EBS volume, the same iSCSI IQN unless both
// are read-only, the same RBD image (a shared monitor, same pool and image) unless both are read-only.
#include <algorithm>
#include <set>

#include "vcore/cluster_state.h"
#include "vcore/node_plugin.h"
#include "vcore/pod.h"
#include "vcore/volumes/volume_store.h"

namespace vcore {
namespace {

enum Reason { kDiskConflict = 0, kClaimInUse = 1, kRejected = 2 };

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

bool checks_conflicts(const PodVolume& v) {
  return v.source == VolumeSource::kGcePersistentDisk || v.source == VolumeSource::kAwsElasticBlockStore ||
         v.source == VolumeSource::kRbd || v.source == VolumeSource::kIscsi;
}

bool share_monitor(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (const std::string& m : a)
    if (std::find(b.begin(), b.end(), m) != b.end()) return true;
  return false;
}

// isVolumeConflict for one pair of volumes.
bool conflict(const PodVolume& v, const PodVolume& e) {
  if (v.source != e.source) return false;
  switch (v.source) {
    case VolumeSource::kGcePersistentDisk:
    case VolumeSource::kIscsi:
      return v.disk == e.disk && !(v.read_only && e.read_only);
    case VolumeSource::kAwsElasticBlockStore:
      return v.disk == e.disk;
    case VolumeSource::kRbd:
      return share_monitor(v.monitors, e.monitors) && v.pool == e.pool && v.disk == e.disk &&
             !(v.read_only && e.read_only);
    default:
      return false;
  }
}

class RejectedPod final : public PodPlugin {
 public:
  RejectedPod() {
    filters = true;
    rejects_with = kRejected;
  }
};

class RestrictionsOfPod final : public PodPlugin {
 public:
  RestrictionsOfPod(const ClusterState& s, std::vector<const PodVolume*> disks, bool rwop_in_use)
      : s_(s), disks_(std::move(disks)), rwop_in_use_(rwop_in_use) {
    filters = true;
    depends_on_bound_pods = true;
  }

  void filter(int32_t begin, int32_t end, uint8_t* failed, int64_t* reasons) const override {
    int64_t disk = 0, rwop = 0;
    for (int32_t j = 0; j < end - begin; ++j) {
      if (failed[j]) continue;
      if (!disks_.empty() && conflicts_on(begin + j)) {
        failed[j] = 1;
        ++disk;
      } else if (rwop_in_use_) {
        failed[j] = 1;
        ++rwop;
      }
    }
    reasons[reason_base + kDiskConflict] += disk;
    reasons[reason_base + kClaimInUse] += rwop;
  }

 private:
  bool conflicts_on(int32_t slot) const {
    for (const auto& bound : s_.volumes().pods_on(slot))
      for (const PodVolume& e : bound.volumes->volumes)
        for (const PodVolume* v : disks_)
          if (conflict(*v, e)) return true;
    return false;
  }

  const ClusterState& s_;
  std::vector<const PodVolume*> disks_;
  bool rwop_in_use_;
};

class VolumeRestrictions final : public NodePlugin {
 public:
  std::vector<std::string> reasons() const override {
    return {"node(s) had no available disk",
            "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by "
            "another pod",
            "<VolumeRestrictions: pod rejected at PreFilter>"};
  }
  // A missing claim is UnschedulableAndUnresolvable at PreFilter; a disk conflict and a ReadWriteOncePod claim in
  // use are Unschedulable (evicting the pod that holds the disk or the claim lifts them).
  std::vector<int32_t> unresolvable_reasons() const override { return {kRejected}; }

  std::unique_ptr<PodPlugin> prepare(const ClusterState& s, const CompiledPod& pod) const override {
    if (pod.volumes == nullptr) return nullptr;
    const VolumeStore& store = s.volumes();
    const PodVolumes& v = *pod.volumes;
    std::vector<const PodVolume*> disks;
    std::set<std::string> rwop;  // the pod's ReadWriteOncePod claims, by name
    for (const PodVolume& vol : v.volumes) {
      if (checks_conflicts(vol)) disks.push_back(&vol);
      if (vol.source != VolumeSource::kClaim) continue;
      const ClaimRecord* c = store.claim(v.ns, vol.claim);
      if (c == nullptr) {
        store.note_rejection(pod.key, "VolumeRestrictions",
                             "persistentvolumeclaim " + quoted(vol.claim) + " not found");
        return std::make_unique<RejectedPod>();
      }
      if (c->access_modes & kReadWriteOncePod) rwop.insert(c->name);
    }
    bool in_use = false;
    for (const std::string& name : rwop) in_use |= store.claim_users(v.ns + "/" + name) > 0;
    if (disks.empty() && !in_use) return nullptr;
    return std::make_unique<RestrictionsOfPod>(s, std::move(disks), in_use);
  }
};

VCORE_NODE_PLUGIN("VolumeRestrictions", [](const PluginArgs&) -> std::unique_ptr<NodePlugin> {
  return std::make_unique<VolumeRestrictions>();
});

}  // namespace
}  // namespace vcore
