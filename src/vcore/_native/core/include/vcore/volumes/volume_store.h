// VolumeStore: the storage objects kube-scheduler's volume plugins read (PersistentVolumes, PersistentVolumeClaims,
// StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities, VolumeAttachments), what the pods bound to each node
// use, and what VolumeBinding assumed for the pods it placed (its assume cache).
//
// vcore.volumes parses the API objects (validation, the beta annotations, the in-tree to CSI translation) into the
// records below; ClusterState owns one store and keeps its per-node view current as pods bind and unbind. Kernels
// read it under the state's lock like everything else.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vcore/pod.h"
#include "vcore/volumes/pod_volumes.h"

namespace vcore {

class ClusterState;

// A storage quantity, ordered as resource.Quantity.Cmp orders them: whole bytes rounded up (Quantity.Value()), then
// the thousandths within the last byte, so "1.5Gi" < "1610612737" and sub-byte differences still count.
struct StorageSize {
  int64_t bytes = 0;
  int64_t milli = 0;  // 0 for zero; else in 1..1000, 1000 for a whole number of bytes
  bool operator<(const StorageSize& o) const { return bytes != o.bytes ? bytes < o.bytes : milli < o.milli; }
  bool operator==(const StorageSize& o) const { return bytes == o.bytes && milli == o.milli; }
};

// Access modes as bits.
inline constexpr uint8_t kReadWriteOnce = 1, kReadOnlyMany = 2, kReadWriteMany = 4, kReadWriteOncePod = 8;

// A PersistentVolume's spec.nodeAffinity.required (unset: any node), its terms ORed.
struct VolumeNodeAffinity {
  bool set = false;
  std::vector<NodeSelectorTerm> terms;
  // CheckNodeAffinity: the node is given by its labels only (its name is empty for matchFields).
  bool matches(const ClusterState& s, int32_t slot) const;
};

struct ClaimRef {
  std::string ns, name, uid;
};

// One of the topology labels VolumeZone reads off a PV (failure-domain.beta.kubernetes.io/zone and /region,
// topology.kubernetes.io/zone and /region): its key, the GA key a node may carry instead, the zones it allows.
struct ZoneLabel {
  int32_t key = -1;
  int32_t ga_key = -1;
  std::vector<int32_t> values;  // sorted
  std::string key_name;
};

struct PersistentVolumeRecord {
  std::string name;
  std::string resource_version;
  std::vector<std::pair<int32_t, int32_t>> labels;  // interned, sorted by key: what a claim's selector looks at
  std::string storage_class;                        // the beta annotation first, then spec.storageClassName
  StorageSize capacity;                             // spec.capacity.storage (zero when absent)
  uint8_t access_modes = 0;
  bool block = false;  // spec.volumeMode Block (else Filesystem)
  std::string attributes_class;
  bool available = false;  // status.phase Available
  bool deleting = false;
  bool has_claim_ref = false;
  ClaimRef claim_ref;
  VolumeNodeAffinity affinity;
  std::string csi_driver, csi_handle;  // spec.csi
  // An in-tree PV that CSI migration translates when its plugin is migrated on the node (CSINode's
  // storage.alpha.kubernetes.io/migrated-plugins): the plugin, and the PV as translated (or why it cannot be).
  std::string migration_plugin;
  std::string migrated_driver, migrated_handle, migration_error;
  VolumeNodeAffinity migrated_affinity;
  std::vector<ZoneLabel> zones;  // VolumeZone's topology labels, in kube-scheduler's order
};

struct ClaimRecord {
  std::string ns, name, uid;
  std::string storage_class;  // the beta annotation first, then spec.storageClassName ("" for none)
  std::string volume_name;
  bool bind_completed = false;  // the pv.kubernetes.io/bind-completed annotation
  bool lost = false;            // status.phase Lost
  bool deleting = false;
  bool has_selected_node = false;  // volume.kubernetes.io/selected-node
  std::string selected_node;
  uint8_t access_modes = 0;
  bool block = false;
  std::string attributes_class;
  bool has_request = false;  // spec.resources.requests.storage
  StorageSize request;
  bool has_selector = false;  // spec.selector; an empty one selects every PV
  std::vector<LabelRequirement> selector;
  bool has_controller = false;  // an ownerReference with controller: true (generic ephemeral volumes)
  std::string controller_uid;

  std::string key() const { return ns + "/" + name; }
  bool fully_bound() const { return !volume_name.empty() && bind_completed; }
};

enum class BindingMode : uint8_t { kUnset, kImmediate, kWaitForFirstConsumer };

struct StorageClassRecord {
  std::string name;
  std::string provisioner;
  BindingMode mode = BindingMode::kUnset;
  // allowedTopologies: terms ORed, each a list of "key In values" requirements; an empty term (or one the API's
  // label syntax rejects, which vcore.volumes empties) matches no node; no terms at all matches every node.
  std::vector<std::vector<LabelRequirement>> allowed_topologies;
  bool allows(const ClusterState& s, int32_t slot) const;
};

struct CsiNodeRecord {
  std::string name;
  std::map<std::string, int64_t> limits;  // driver -> spec.drivers[].allocatable.count, for drivers that set it
  std::set<std::string> migrated;         // the in-tree plugins of the migrated-plugins annotation
};

struct CapacityRecord {
  std::string key;  // namespace/name
  std::string storage_class;
  bool has_limit = false;  // maximumVolumeSize if set, else capacity
  int64_t limit = 0;       // bytes, rounded up
  bool has_topology = false;
  std::vector<LabelRequirement> topology;  // nodeTopology as requirements ANDed (empty: every node)
};

struct AttachmentRecord {
  std::string name, node, attacher;
  bool has_pv = false;
  std::string pv;
};

// What VolumeBinding's Reserve assumed for a placed pod (its assume cache entries) and what PreBind writes: each
// static binding's PV gets a claimRef to its claim; each claim to provision gets the selected-node annotation.
struct VolumeAssumption {
  std::string node;
  std::vector<std::pair<std::string, ClaimRef>> bindings;  // PV name, the claim it is bound to
  std::vector<std::string> provisions;                     // claim keys (namespace/name)
};

class VolumeStore {
 public:
  // Objects. put_* replaces an object of the same name; `keep_assumed` keeps what VolumeBinding assumed about it (an
  // unchanged resourceVersion, as a relist delivers: the assume cache keeps its newer assumed object then).
  void put_class(StorageClassRecord r);
  void remove_class(const std::string& name);
  void put_pv(PersistentVolumeRecord r, bool keep_assumed);
  void remove_pv(const std::string& name);
  void put_claim(ClaimRecord r, bool keep_assumed);
  void remove_claim(const std::string& key);
  void put_csi_node(CsiNodeRecord r);
  void remove_csi_node(const std::string& name);
  void put_csi_driver(const std::string& name, bool storage_capacity);
  void remove_csi_driver(const std::string& name);
  void put_capacity(CapacityRecord r);
  void remove_capacity(const std::string& key);
  void put_attachment(AttachmentRecord r);
  void remove_attachment(const std::string& name);

  const StorageClassRecord* storage_class(const std::string& name) const;
  const PersistentVolumeRecord* pv(const std::string& name) const;
  const ClaimRecord* claim(const std::string& ns, const std::string& name) const;
  // PV names of a storage class in name order (kube-scheduler lists them from its assume cache index).
  const std::set<std::string>& pvs_of_class(const std::string& storage_class) const;
  const CsiNodeRecord* csi_node(const std::string& node) const;
  // The CSINode of each slot's node (nullptr: none); rebuilt when nodes or CSINodes changed.
  const std::vector<const CsiNodeRecord*>& csi_nodes_by_slot(const ClusterState& s) const;
  // nullptr when there is no CSIDriver of that name; else whether it sets storageCapacity.
  const bool* csi_driver_storage_capacity(const std::string& name) const;
  const std::map<std::string, CapacityRecord>& capacities() const { return capacities_; }
  std::vector<const AttachmentRecord*> attachments_on(const std::string& node) const;

  // VolumeBinding's view: the claimRef a PV has, or was assumed with (nullptr: none), and the node a claim was
  // selected for, or assumed to be (nullptr: none).
  const ClaimRef* claim_ref(const PersistentVolumeRecord& pv) const;
  const std::string* selected_node(const ClaimRecord& claim) const;

  // Bound pods: ClusterState calls these as pods bind and unbind (`key` stays valid while the pod is bound).
  void on_bind(const std::string& key, int32_t slot, const std::shared_ptr<const PodVolumes>& volumes,
               const std::shared_ptr<const VolumeAssumption>& assumed);
  void on_unbind(const std::string& key, int32_t slot, const std::shared_ptr<const PodVolumes>& volumes,
                 const std::shared_ptr<const VolumeAssumption>& assumed);
  void apply_assumption(const std::string& key, const VolumeAssumption& a);
  void revert_assumption(const std::string& key, const VolumeAssumption& a);
  // The bound pods with an assumption (what PreBind still has to write for them), in key order.
  const std::set<std::string>& assumed_pods() const { return assumed_pods_; }
  struct SlotPod {
    const std::string* key;
    const PodVolumes* volumes;
  };
  // The pods bound to a slot that have volumes.
  const std::vector<SlotPod>& pods_on(int32_t slot) const;
  // Bound pods with a persistentVolumeClaim volume of this claim (namespace/name): kube-scheduler's PVC ref counts.
  int32_t claim_users(const std::string& claim_key) const;
  // Slots holding a pod whose volumes can make NodeVolumeLimits fail with an error (ephemeral volumes, inline
  // in-tree volumes CSI migration counts): checked whole when a pod is prepared.
  std::vector<int32_t> slots_with_unusual_pods() const;

  // What NodeVolumeLimits finds on one node (computed by the plugin): the CSI volumes (driver/handle) its bound pods
  // use there (as its CSINode migrates in-tree volumes), the volumes in use per driver (VolumeAttachments of other
  // PVs included), or the error a bound pod's volume meets there.
  struct SlotAttached {
    bool error = false;
    std::string message;
    std::vector<std::string> volumes;
    std::vector<std::pair<std::string, int64_t>> in_use;  // driver -> volumes
  };
  using ComputeAttached = void (*)(const ClusterState& s, const VolumeStore& store, const CsiNodeRecord* csi,
                                   int32_t slot, SlotAttached* out);
  // The same for every node, laid out for a pass over the nodes: per slot and limited driver (a driver some CSINode
  // sets allocatable.count for), the volumes in use and the node's limit; flags; and per volume the slots that
  // have it attached. Kept current incrementally: only the slots whose pods changed are recomputed, all of them when
  // a storage object or the node membership changed.
  struct AttachedView {
    static constexpr uint8_t kMigrates = 1;   // the node's CSINode migrates some in-tree plugin
    static constexpr uint8_t kHasLimits = 2;  // the node's CSINode sets a limit
    static constexpr uint8_t kError = 4;      // a bound pod's volume fails there (the message in `errors`)
    std::unordered_map<std::string, int32_t> driver_ids;
    size_t stride = 0;
    std::vector<int64_t> in_use;  // [slot * stride + driver id]
    std::vector<int64_t> limit;   // [slot * stride + driver id], -1: the node sets none for that driver
    std::vector<uint8_t> flags;   // per slot
    std::unordered_map<int32_t, std::string> errors;
    std::unordered_map<std::string, std::vector<int32_t>> slots_of_volume;
    std::vector<std::vector<std::string>> volumes_of_slot;
    int32_t driver_id(const std::string& driver) const {
      const auto it = driver_ids.find(driver);
      return it == driver_ids.end() ? -1 : it->second;
    }
    bool attached(const std::string& volume, int32_t slot) const;
  };
  // Brings the view up to date with `compute` (under the cache mutex: called when a pod is prepared, never while a
  // kernel reads the view, which only changes when pods bind, under the exclusive lock) and returns it.
  const AttachedView& attached_view(const ClusterState& s, ComputeAttached compute) const;

  // Why a volume plugin rejected a pod the last time it was prepared (a PreFilter rejection, an error, or a filter
  // status with a message of its own), per pod and plugin, so that Python can word the result. Thread-safe.
  void note_rejection(const std::string& pod_key, const std::string& plugin, std::string message) const;
  std::string rejection(const std::string& pod_key, const std::string& plugin) const;

  size_t n_objects() const;

 private:
  std::unordered_map<std::string, StorageClassRecord> classes_;
  std::unordered_map<std::string, PersistentVolumeRecord> pvs_;
  std::map<std::string, std::set<std::string>> pvs_by_class_;
  std::unordered_map<std::string, ClaimRecord> claims_;
  std::unordered_map<std::string, CsiNodeRecord> csi_nodes_;
  std::unordered_map<std::string, bool> csi_drivers_;
  std::map<std::string, CapacityRecord> capacities_;
  std::unordered_map<std::string, AttachmentRecord> attachments_;
  std::unordered_map<std::string, std::set<std::string>> attachments_by_node_;

  struct AssumedRef {
    ClaimRef ref;
    std::string owner;  // the pod whose Reserve assumed it
  };
  struct AssumedNode {
    std::string node;
    std::string owner;
  };
  std::unordered_map<std::string, AssumedRef> assumed_refs_;    // PV name ->
  std::unordered_map<std::string, AssumedNode> assumed_nodes_;  // claim key ->
  std::set<std::string> assumed_pods_;

  std::vector<std::vector<SlotPod>> slot_pods_;
  std::unordered_map<std::string, int32_t> claim_users_;
  std::map<int32_t, int32_t> unusual_slots_;  // slot -> pods there with ephemeral or migratable inline volumes

  void mark_attached_dirty(int32_t slot);

  uint64_t csi_node_version_ = 0;
  uint64_t objects_version_ = 0;  // bumped by any change to the objects NodeVolumeLimits reads
  void compute_attached_slot(const ClusterState& s, int32_t slot, ComputeAttached compute) const;
  mutable AttachedView attached_;
  mutable std::vector<int32_t> attached_dirty_;  // slots whose bound pods changed since the entries were computed
  mutable uint64_t attached_membership_ = ~uint64_t{0}, attached_version_ = ~uint64_t{0};
  mutable ComputeAttached attached_by_ = nullptr;
  mutable std::mutex cache_mutex_;  // the per-slot CSINode cache, built by readers under the shared lock
  mutable std::vector<const CsiNodeRecord*> csi_by_slot_;
  mutable uint64_t csi_by_slot_membership_ = ~uint64_t{0}, csi_by_slot_version_ = ~uint64_t{0};
  mutable std::mutex rejections_mutex_;
  mutable std::unordered_map<std::string, std::string> rejections_;
};

// Whether labels (sorted (key, value) ids) meet every requirement (In, NotIn, Exists, DoesNotExist).
bool labels_match(const ClusterState& s, const std::vector<LabelRequirement>& requirements,
                  const std::vector<std::pair<int32_t, int32_t>>& labels);

}  // namespace vcore
