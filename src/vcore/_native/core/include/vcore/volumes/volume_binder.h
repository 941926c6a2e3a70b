// kube-scheduler v1.34's volume binder (framework/plugins/volumebinding/binder.go) over the VolumeStore: a pod's
// claims sorted into bound, delayed (WaitForFirstConsumer, still unbound) and immediate (which the PV controller
// should have bound); per node, whether the bound claims' PVs allow it and the delayed claims can be bound there,
// to a matching static PV (FindMatchingVolume, pv_helpers.go) or by dynamic provisioning (the StorageClass's
// provisioner, allowedTopologies and CSIStorageCapacity); and what Reserve assumes for the node chosen.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vcore/volumes/volume_store.h"

namespace vcore {

class ClusterState;

// Why a pod cannot be placed at all: a PreFilter rejection (UnschedulableAndUnresolvable) or, with `error`, an
// error status (kube-scheduler fails the scheduling attempt with it).
struct VolumeRejection {
  std::string message;
  bool error = false;
};

// The reasons FindPodVolumes gives a node, as bits, in kube-scheduler's order.
inline constexpr uint8_t kNodeConflict = 1;    // a bound claim's PV does not allow the node
inline constexpr uint8_t kBindConflict = 2;    // a delayed claim can neither be bound nor provisioned there
inline constexpr uint8_t kNotEnoughSpace = 4;  // no CSIStorageCapacity holds a claim to provision there
inline constexpr uint8_t kPvMissing = 8;       // a bound claim's PV does not exist

// Whether CSI migration translates PVs and inline volumes of an in-tree plugin on a node with this CSINode (the
// plugin named in its migrated-plugins annotation; AWS EBS, GCE PD, Azure Disk, Cinder and Portworx only).
bool migrated_on(const CsiNodeRecord* csi_node, const std::string& plugin);

// A pod's claims, as VolumeBinding's PreFilter finds them, with the candidate PVs of each delayed claim.
class PodClaims {
 public:
  // PreFilter (podHasPVCs, GetPodVolumeClaims): nullopt when the pod may go on (has_claims() says whether it has
  // any), else why it cannot.
  std::optional<VolumeRejection> prefilter(const ClusterState& s, const PodVolumes& pod);
  bool has_claims() const { return has_claims_; }
  // Whether some claim is not bound yet (Reserve has something to assume).
  bool needs_binding() const { return !all_bound_; }
  // Whether FindPodVolumes passes every node: each claim bound, to a PV that exists, has no node affinity and is not
  // one CSI migration may translate.
  bool passes_every_node() const;

  // FindPodVolumes on one node: the reason bits (0: the node fits); `out` gets what Reserve would assume there.
  // `error` is set when the node's CSI migration cannot translate a bound claim's PV.
  uint8_t find(const ClusterState& s, int32_t slot, VolumeAssumption* out, std::string* error) const;

  // The PVs of bound claims that CSI migration cannot translate, as (plugin, error): a node migrating that plugin
  // makes FindPodVolumes fail with an error.
  std::vector<std::pair<std::string, std::string>> translation_errors() const;

 private:
  struct Candidate {
    const PersistentVolumeRecord* pv;
    bool prebound;  // already bound (or pre-bound) to the claim
  };
  struct DelayedClaim {
    const ClaimRecord* claim;
    const std::string* selected_node;   // nullptr: not selected yet
    std::vector<Candidate> candidates;  // in PV name order, past every check that does not depend on the node
    const StorageClassRecord* storage_class;
  };
  bool has_claims_ = false;
  bool all_bound_ = true;
  std::vector<const ClaimRecord*> bound_;
  std::vector<const PersistentVolumeRecord*> bound_pvs_;  // each bound claim's PV (nullptr: missing)
  std::vector<DelayedClaim> delayed_;                     // the pod's order
  std::vector<size_t> matching_order_;  // delayed claims without a selected node, by increasing request (stable)
  const VolumeStore* store_ = nullptr;
};

}  // namespace vcore
