// A pod's volumes as kube-scheduler's volume plugins see them: the PersistentVolumeClaims it uses (directly or as
// generic ephemeral volumes) and the in-tree disks VolumeRestrictions checks for conflicts and NodeVolumeLimits
// counts once their CSI migration is on. Other volume sources (configMap, secret, emptyDir, ...) take no part and
// are left out; a pod with none of these has no PodVolumes at all.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vcore {

enum class VolumeSource : uint8_t {
  kClaim,      // persistentVolumeClaim
  kEphemeral,  // ephemeral (a PVC named <pod>-<volume>, owned by the pod)
  kGcePersistentDisk,
  kAwsElasticBlockStore,
  kRbd,
  kIscsi,
  kAzureDisk,
  kAzureFile,
  kCinder,
  kVsphere,
  kPortworx,
};

struct PodVolume {
  VolumeSource source = VolumeSource::kClaim;
  std::string name;   // spec.volumes[i].name
  std::string claim;  // the PVC's name: claimName, or <pod name>-<volume name> for an ephemeral volume
  // VolumeRestrictions: the disk (GCE pdName, EBS volumeID, iSCSI IQN, RBD image), the RBD pool and monitors, and
  // whether it is mounted read-only.
  std::string disk;
  std::string pool;
  std::vector<std::string> monitors;
  bool read_only = false;
  // NodeVolumeLimits: the in-tree plugin whose CSI migration would count this inline volume (empty: none), and the
  // volume translated to CSI (driver and handle), or why the translation fails.
  std::string migration_plugin;
  std::string csi_driver, csi_handle, translation_error;

  bool uses_claim() const { return source == VolumeSource::kClaim || source == VolumeSource::kEphemeral; }
};

struct PodVolumes {
  std::string ns, name, uid;  // the pod's namespace, name and metadata.uid (ephemeral PVCs must be owned by it)
  std::vector<PodVolume> volumes;
};

}  // namespace vcore
