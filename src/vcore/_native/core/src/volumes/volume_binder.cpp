// The volume binder of kube-scheduler v1.34 (volumebinding/binder.go and component-helpers' FindMatchingVolume),
// over the VolumeStore's records and the assumptions VolumeBinding's Reserve made.
#include "vcore/volumes/volume_binder.h"

#include <algorithm>

#include "vcore/cluster_state.h"

namespace vcore {
namespace {

const char* const kNoProvisioner = "kubernetes.io/no-provisioner";

bool bound_to(const ClaimRef* ref, const ClaimRecord& claim) {
  return ref != nullptr && ref->name == claim.name && ref->ns == claim.ns &&
         (ref->uid.empty() || ref->uid == claim.uid);
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

}  // namespace

bool migrated_on(const CsiNodeRecord* csi_node, const std::string& plugin) {
  return csi_node != nullptr && !plugin.empty() && csi_node->migrated.count(plugin) != 0;
}

std::optional<VolumeRejection> PodClaims::prefilter(const ClusterState& s, const PodVolumes& pod) {
  const VolumeStore& store = s.volumes();
  store_ = &store;
  // podHasPVCs: every claim exists, is not Lost or being deleted, and an ephemeral one belongs to the pod.
  for (const PodVolume& v : pod.volumes) {
    if (!v.uses_claim()) continue;
    has_claims_ = true;
    const ClaimRecord* c = store.claim(pod.ns, v.claim);
    const bool ephemeral = v.source == VolumeSource::kEphemeral;
    if (c == nullptr) {
      if (ephemeral)
        return VolumeRejection{"waiting for ephemeral volume controller to create the persistentvolumeclaim " +
                               quoted(v.claim)};
      return VolumeRejection{"persistentvolumeclaim " + quoted(v.claim) + " not found"};
    }
    if (c->lost)
      return VolumeRejection{"persistentvolumeclaim " + quoted(c->name) + " bound to non-existent persistentvolume " +
                             quoted(c->volume_name)};
    if (c->deleting) return VolumeRejection{"persistentvolumeclaim " + quoted(c->name) + " is being deleted"};
    if (ephemeral && (!c->has_controller || c->controller_uid != pod.uid))
      return VolumeRejection{"PVC " + pod.ns + "/" + c->name + " was not created for pod " + pod.ns + "/" + pod.name +
                             " (pod is not owner)"};
  }
  if (!has_claims_) return std::nullopt;
  // GetPodVolumeClaims: bound claims, delayed ones (WaitForFirstConsumer, no volumeName yet), immediate ones.
  std::vector<const ClaimRecord*> immediate;
  for (const PodVolume& v : pod.volumes) {
    if (!v.uses_claim()) continue;
    const ClaimRecord* c = store.claim(pod.ns, v.claim);
    if (c->fully_bound()) {
      bound_.push_back(c);
      bound_pvs_.push_back(store.pv(c->volume_name));
      continue;
    }
    all_bound_ = false;
    bool delay = false;
    const StorageClassRecord* sc = c->storage_class.empty() ? nullptr : store.storage_class(c->storage_class);
    if (sc != nullptr) {
      if (sc->mode == BindingMode::kUnset)
        return VolumeRejection{
            "running PreFilter plugin \"VolumeBinding\": VolumeBindingMode not set for StorageClass " +
                quoted(sc->name),
            true};
      delay = sc->mode == BindingMode::kWaitForFirstConsumer;
    }
    if (delay && c->volume_name.empty()) {
      DelayedClaim d{c, store.selected_node(*c), {}, sc};
      delayed_.push_back(std::move(d));
    } else {
      immediate.push_back(c);
    }
  }
  if (!immediate.empty()) return VolumeRejection{"pod has unbound immediate PersistentVolumeClaims"};

  // FindMatchingVolume's checks that do not depend on the node, done once per claim (the node affinity and the PVs
  // other claims of the pod took are checked per node, in the same order).
  for (size_t i = 0; i < delayed_.size(); ++i) {
    DelayedClaim& d = delayed_[i];
    if (d.selected_node != nullptr) continue;  // to be provisioned on that node: no PV is matched
    matching_order_.push_back(i);
    const ClaimRecord& c = *d.claim;
    for (const std::string& name : store.pvs_of_class(c.storage_class)) {
      const PersistentVolumeRecord& pv = *store.pv(name);
      const ClaimRef* ref = store.claim_ref(pv);
      const bool prebound = bound_to(ref, c);
      if (ref != nullptr && !prebound) continue;
      if (pv.capacity < c.request) continue;
      if (pv.block != c.block) continue;
      if (pv.attributes_class != c.attributes_class) continue;
      if (pv.deleting) continue;
      if (!prebound) {
        if (!pv.available) continue;
        if (c.has_selector && !labels_match(s, c.selector, pv.labels)) continue;
        if (pv.storage_class != c.storage_class) continue;
        if ((pv.access_modes & c.access_modes) != c.access_modes) continue;
      }
      d.candidates.push_back({&pv, prebound});
    }
  }
  // The claims to match, smallest request first (sort.Sort is an insertion sort, so stable, below 13 claims).
  std::stable_sort(matching_order_.begin(), matching_order_.end(),
                   [&](size_t a, size_t b) { return delayed_[a].claim->request < delayed_[b].claim->request; });
  return std::nullopt;
}

bool PodClaims::passes_every_node() const {
  if (!delayed_.empty()) return false;
  for (const PersistentVolumeRecord* pv : bound_pvs_)
    if (pv == nullptr || pv->affinity.set || !pv->migration_plugin.empty()) return false;
  return true;
}

std::vector<std::pair<std::string, std::string>> PodClaims::translation_errors() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const ClaimRecord* c : bound_) {
    const PersistentVolumeRecord* pv = store_->pv(c->volume_name);
    if (pv != nullptr && !pv->migration_plugin.empty() && !pv->migration_error.empty())
      out.emplace_back(pv->migration_plugin, pv->migration_error);
  }
  return out;
}

uint8_t PodClaims::find(const ClusterState& s, int32_t slot, VolumeAssumption* out, std::string* error) const {
  const VolumeStore& store = *store_;
  uint8_t reasons = 0;
  const std::string& node = s.names()[static_cast<size_t>(slot)];
  // checkBoundClaims: the first claim whose PV is missing or does not allow the node decides.
  if (!bound_.empty()) {
    const CsiNodeRecord* csi = nullptr;
    bool csi_looked_up = false;
    for (const PersistentVolumeRecord* pv : bound_pvs_) {
      if (pv == nullptr) {
        reasons |= kPvMissing;
        break;
      }
      const VolumeNodeAffinity* affinity = &pv->affinity;
      if (!pv->migration_plugin.empty()) {
        if (!csi_looked_up) csi = store.csi_node(node), csi_looked_up = true;
        if (migrated_on(csi, pv->migration_plugin)) {
          if (!pv->migration_error.empty()) {
            if (error != nullptr) *error = "could not translate pv: " + pv->migration_error;
            return reasons | kNodeConflict;
          }
          affinity = &pv->migrated_affinity;
        }
      }
      if (!affinity->matches(s, slot)) {
        reasons |= kNodeConflict;
        break;
      }
    }
  }
  if (delayed_.empty()) return reasons;
  // A claim already selected for another node rules this one out before anything is matched.
  for (const DelayedClaim& d : delayed_)
    if (d.selected_node != nullptr && *d.selected_node != node) return reasons | kBindConflict;
  std::vector<const ClaimRecord*> to_provision;
  std::vector<const StorageClassRecord*> provision_classes;
  for (const DelayedClaim& d : delayed_)
    if (d.selected_node != nullptr) to_provision.push_back(d.claim), provision_classes.push_back(d.storage_class);
  bool satisfied = true;
  std::vector<const PersistentVolumeRecord*> chosen;
  VolumeAssumption found;
  for (size_t i : matching_order_) {
    const DelayedClaim& d = delayed_[i];
    const PersistentVolumeRecord* match = nullptr;
    StorageSize smallest;
    for (const Candidate& cand : d.candidates) {
      if (std::find(chosen.begin(), chosen.end(), cand.pv) != chosen.end()) continue;
      const bool fits = cand.pv->affinity.matches(s, slot);
      if (cand.prebound) {  // the claim's own PV: it or nothing
        match = fits ? cand.pv : nullptr;
        break;
      }
      if (!fits) continue;
      if (match == nullptr || cand.pv->capacity < smallest) match = cand.pv, smallest = cand.pv->capacity;
    }
    if (match == nullptr) {
      satisfied = false;
      to_provision.push_back(d.claim);
      provision_classes.push_back(d.storage_class);
      continue;
    }
    chosen.push_back(match);
    found.bindings.emplace_back(match->name, ClaimRef{d.claim->ns, d.claim->name, d.claim->uid});
  }
  // checkVolumeProvisions: its verdict replaces the matching's.
  if (!to_provision.empty()) {
    satisfied = true;
    for (size_t k = 0; k < to_provision.size(); ++k) {
      const ClaimRecord& c = *to_provision[k];
      const StorageClassRecord* sc = provision_classes[k];
      if (sc->provisioner.empty() || sc->provisioner == kNoProvisioner || !sc->allows(s, slot)) {
        satisfied = false;
        found.provisions.clear();
        break;
      }
      // hasEnoughCapacity: only for a CSI driver that opts in (CSIDriver storageCapacity: true).
      const bool* tracks = c.has_request ? store.csi_driver_storage_capacity(sc->provisioner) : nullptr;
      if (tracks != nullptr && *tracks) {
        bool enough = false;
        const int64_t size = c.request.bytes;
        for (const auto& [key, cap] : store.capacities()) {
          if (cap.storage_class != sc->name || !cap.has_limit || cap.limit < size || !cap.has_topology) continue;
          if (labels_match(s, cap.topology, s.labels()[static_cast<size_t>(slot)])) {
            enough = true;
            break;
          }
        }
        if (!enough) {
          reasons |= kNotEnoughSpace;
          found.provisions.clear();
          break;
        }
      }
      found.provisions.push_back(c.key());
    }
  }
  if (!satisfied) reasons |= kBindConflict;
  if (out != nullptr && reasons == 0) {
    found.node = node;
    *out = std::move(found);
  }
  return reasons;
}

}  // namespace vcore
