// VolumeStore: the storage objects, the per-node view of the pods that use volumes, and VolumeBinding's assumptions.
#include "vcore/volumes/volume_store.h"

#include <algorithm>

#include "vcore/cluster_state.h"
#include "vcore/node_match.h"

namespace vcore {
namespace {

int32_t label_of(const std::vector<std::pair<int32_t, int32_t>>& labels, int32_t key) {
  const auto it = std::lower_bound(labels.begin(), labels.end(), std::make_pair(key, INT32_MIN));
  return it != labels.end() && it->first == key ? it->second : -1;
}

bool unusual(const PodVolumes& v) {
  for (const PodVolume& vol : v.volumes)
    if (vol.source == VolumeSource::kEphemeral || !vol.migration_plugin.empty()) return true;
  return false;
}

const std::set<std::string>& no_names() {
  static const std::set<std::string> empty;
  return empty;
}

}  // namespace

bool labels_match(const ClusterState& s, const std::vector<LabelRequirement>& requirements,
                  const std::vector<std::pair<int32_t, int32_t>>& labels) {
  for (const LabelRequirement& r : requirements)
    if (!label_requirement_matches(s, r, label_of(labels, r.key))) return false;
  return true;
}

bool VolumeNodeAffinity::matches(const ClusterState& s, int32_t slot) const {
  if (!set) return true;
  const auto& labels = s.labels()[static_cast<size_t>(slot)];
  static const std::string no_name;
  for (const NodeSelectorTerm& term : terms) {  // ORed; an empty term matches nothing
    if (term.expressions.empty() && term.fields.empty()) continue;
    if (!name_requirements_match(term, no_name)) continue;
    bool all = true;
    for (size_t k = 0; all && k < term.expressions.size(); ++k)
      all = label_requirement_matches(s, term.expressions[k], label_of(labels, term.expressions[k].key));
    if (all) return true;
  }
  return false;
}

bool StorageClassRecord::allows(const ClusterState& s, int32_t slot) const {
  if (allowed_topologies.empty()) return true;
  const auto& labels = s.labels()[static_cast<size_t>(slot)];
  for (const auto& term : allowed_topologies)
    if (!term.empty() && labels_match(s, term, labels)) return true;
  return false;
}

void VolumeStore::put_class(StorageClassRecord r) {
  const std::string name = r.name;
  classes_[name] = std::move(r);
  ++objects_version_;
}

void VolumeStore::remove_class(const std::string& name) {
  classes_.erase(name);
  ++objects_version_;
}

void VolumeStore::put_pv(PersistentVolumeRecord r, bool keep_assumed) {
  const auto old = pvs_.find(r.name);
  if (old != pvs_.end() && old->second.storage_class != r.storage_class) {
    auto& names = pvs_by_class_[old->second.storage_class];
    names.erase(r.name);
    if (names.empty()) pvs_by_class_.erase(old->second.storage_class);
  }
  if (!keep_assumed) assumed_refs_.erase(r.name);
  pvs_by_class_[r.storage_class].insert(r.name);
  const std::string name = r.name;
  pvs_[name] = std::move(r);
  ++objects_version_;
}

void VolumeStore::remove_pv(const std::string& name) {
  const auto it = pvs_.find(name);
  if (it == pvs_.end()) return;
  auto& names = pvs_by_class_[it->second.storage_class];
  names.erase(name);
  if (names.empty()) pvs_by_class_.erase(it->second.storage_class);
  assumed_refs_.erase(name);
  pvs_.erase(it);
  ++objects_version_;
}

void VolumeStore::put_claim(ClaimRecord r, bool keep_assumed) {
  const std::string key = r.key();
  if (!keep_assumed) assumed_nodes_.erase(key);
  claims_[key] = std::move(r);
  ++objects_version_;
}

void VolumeStore::remove_claim(const std::string& key) {
  assumed_nodes_.erase(key);
  claims_.erase(key);
  ++objects_version_;
}

void VolumeStore::put_csi_node(CsiNodeRecord r) {
  const std::string name = r.name;
  csi_nodes_[name] = std::move(r);
  ++csi_node_version_;
}

void VolumeStore::remove_csi_node(const std::string& name) {
  csi_nodes_.erase(name);
  ++csi_node_version_;
}

void VolumeStore::put_csi_driver(const std::string& name, bool storage_capacity) {
  csi_drivers_[name] = storage_capacity;
}
void VolumeStore::remove_csi_driver(const std::string& name) { csi_drivers_.erase(name); }

void VolumeStore::put_capacity(CapacityRecord r) {
  const std::string key = r.key;
  capacities_[key] = std::move(r);
}

void VolumeStore::remove_capacity(const std::string& key) { capacities_.erase(key); }

void VolumeStore::put_attachment(AttachmentRecord r) {
  remove_attachment(r.name);
  attachments_by_node_[r.node].insert(r.name);
  const std::string name = r.name;
  attachments_[name] = std::move(r);
  ++objects_version_;
}

void VolumeStore::remove_attachment(const std::string& name) {
  const auto it = attachments_.find(name);
  if (it == attachments_.end()) return;
  auto& names = attachments_by_node_[it->second.node];
  names.erase(name);
  if (names.empty()) attachments_by_node_.erase(it->second.node);
  attachments_.erase(it);
  ++objects_version_;
}

const StorageClassRecord* VolumeStore::storage_class(const std::string& name) const {
  const auto it = classes_.find(name);
  return it == classes_.end() ? nullptr : &it->second;
}

const PersistentVolumeRecord* VolumeStore::pv(const std::string& name) const {
  const auto it = pvs_.find(name);
  return it == pvs_.end() ? nullptr : &it->second;
}

const ClaimRecord* VolumeStore::claim(const std::string& ns, const std::string& name) const {
  const auto it = claims_.find(ns + "/" + name);
  return it == claims_.end() ? nullptr : &it->second;
}

const std::set<std::string>& VolumeStore::pvs_of_class(const std::string& storage_class) const {
  const auto it = pvs_by_class_.find(storage_class);
  return it == pvs_by_class_.end() ? no_names() : it->second;
}

const CsiNodeRecord* VolumeStore::csi_node(const std::string& node) const {
  const auto it = csi_nodes_.find(node);
  return it == csi_nodes_.end() ? nullptr : &it->second;
}

const std::vector<const CsiNodeRecord*>& VolumeStore::csi_nodes_by_slot(const ClusterState& s) const {
  std::lock_guard guard(cache_mutex_);
  // Which name holds a slot changes only with membership; a node update keeps its slot and name.
  if (csi_by_slot_membership_ != s.membership() || csi_by_slot_version_ != csi_node_version_ ||
      csi_by_slot_.size() != static_cast<size_t>(s.n_slots())) {
    csi_by_slot_.assign(static_cast<size_t>(s.n_slots()), nullptr);
    for (int32_t slot = 0; slot < s.n_slots(); ++slot)
      if (s.is_live(slot)) csi_by_slot_[static_cast<size_t>(slot)] = csi_node(s.names()[static_cast<size_t>(slot)]);
    csi_by_slot_membership_ = s.membership();
    csi_by_slot_version_ = csi_node_version_;
  }
  return csi_by_slot_;
}

const bool* VolumeStore::csi_driver_storage_capacity(const std::string& name) const {
  const auto it = csi_drivers_.find(name);
  return it == csi_drivers_.end() ? nullptr : &it->second;
}

std::vector<const AttachmentRecord*> VolumeStore::attachments_on(const std::string& node) const {
  std::vector<const AttachmentRecord*> out;
  const auto it = attachments_by_node_.find(node);
  if (it == attachments_by_node_.end()) return out;
  for (const std::string& name : it->second) out.push_back(&attachments_.at(name));
  return out;
}

const ClaimRef* VolumeStore::claim_ref(const PersistentVolumeRecord& pv) const {
  const auto it = assumed_refs_.find(pv.name);
  if (it != assumed_refs_.end()) return &it->second.ref;
  return pv.has_claim_ref ? &pv.claim_ref : nullptr;
}

const std::string* VolumeStore::selected_node(const ClaimRecord& claim) const {
  const auto it = assumed_nodes_.find(claim.key());
  if (it != assumed_nodes_.end()) return &it->second.node;
  return claim.has_selected_node ? &claim.selected_node : nullptr;
}

void VolumeStore::mark_attached_dirty(int32_t slot) {
  // Many binds before the next pod with volumes is prepared: recompute every slot then instead.
  if (attached_dirty_.size() >= attached_.flags.size()) {
    attached_dirty_.clear();
    attached_version_ = ~uint64_t{0};
    return;
  }
  if (attached_version_ != ~uint64_t{0}) attached_dirty_.push_back(slot);
}

void VolumeStore::on_bind(const std::string& key, int32_t slot, const std::shared_ptr<const PodVolumes>& volumes,
                          const std::shared_ptr<const VolumeAssumption>& assumed) {
  if (volumes != nullptr) {
    if (slot_pods_.size() <= static_cast<size_t>(slot)) slot_pods_.resize(static_cast<size_t>(slot) + 1);
    slot_pods_[static_cast<size_t>(slot)].push_back({&key, volumes.get()});
    for (const PodVolume& v : volumes->volumes)
      if (v.source == VolumeSource::kClaim) ++claim_users_[volumes->ns + "/" + v.claim];
    if (unusual(*volumes)) ++unusual_slots_[slot];
    mark_attached_dirty(slot);
  }
  if (assumed != nullptr) apply_assumption(key, *assumed);
}

void VolumeStore::on_unbind(const std::string& key, int32_t slot, const std::shared_ptr<const PodVolumes>& volumes,
                            const std::shared_ptr<const VolumeAssumption>& assumed) {
  if (volumes != nullptr) {
    auto& pods = slot_pods_.at(static_cast<size_t>(slot));
    pods.erase(std::find_if(pods.begin(), pods.end(), [&](const SlotPod& p) { return p.key == &key; }));
    for (const PodVolume& v : volumes->volumes) {
      if (v.source != VolumeSource::kClaim) continue;
      const auto it = claim_users_.find(volumes->ns + "/" + v.claim);
      if (--it->second <= 0) claim_users_.erase(it);
    }
    if (unusual(*volumes)) {
      const auto it = unusual_slots_.find(slot);
      if (--it->second <= 0) unusual_slots_.erase(it);
    }
    mark_attached_dirty(slot);
  }
  if (assumed != nullptr) revert_assumption(key, *assumed);
}

void VolumeStore::apply_assumption(const std::string& key, const VolumeAssumption& a) {
  assumed_pods_.insert(key);
  for (const auto& [pv, ref] : a.bindings) assumed_refs_[pv] = {ref, key};
  for (const std::string& claim : a.provisions) assumed_nodes_[claim] = {a.node, key};
}

void VolumeStore::revert_assumption(const std::string& key, const VolumeAssumption& a) {
  assumed_pods_.erase(key);
  // Only what is still this pod's: a newer object from the API, or another pod's assumption, stays.
  for (const auto& [pv, ref] : a.bindings) {
    const auto it = assumed_refs_.find(pv);
    if (it != assumed_refs_.end() && it->second.owner == key) assumed_refs_.erase(it);
  }
  for (const std::string& claim : a.provisions) {
    const auto it = assumed_nodes_.find(claim);
    if (it != assumed_nodes_.end() && it->second.owner == key) assumed_nodes_.erase(it);
  }
}

const std::vector<VolumeStore::SlotPod>& VolumeStore::pods_on(int32_t slot) const {
  static const std::vector<SlotPod> none;
  return static_cast<size_t>(slot) < slot_pods_.size() ? slot_pods_[static_cast<size_t>(slot)] : none;
}

int32_t VolumeStore::claim_users(const std::string& claim_key) const {
  const auto it = claim_users_.find(claim_key);
  return it == claim_users_.end() ? 0 : it->second;
}

std::vector<int32_t> VolumeStore::slots_with_unusual_pods() const {
  std::vector<int32_t> out;
  for (const auto& [slot, n] : unusual_slots_) out.push_back(slot);
  return out;
}

bool VolumeStore::AttachedView::attached(const std::string& volume, int32_t slot) const {
  const auto it = slots_of_volume.find(volume);
  return it != slots_of_volume.end() && std::find(it->second.begin(), it->second.end(), slot) != it->second.end();
}

void VolumeStore::compute_attached_slot(const ClusterState& s, int32_t slot, ComputeAttached compute) const {
  AttachedView& v = attached_;
  const size_t row = static_cast<size_t>(slot) * v.stride;
  for (const std::string& name : v.volumes_of_slot[static_cast<size_t>(slot)]) {
    auto& slots = v.slots_of_volume[name];
    slots.erase(std::find(slots.begin(), slots.end(), slot));
    if (slots.empty()) v.slots_of_volume.erase(name);
  }
  v.volumes_of_slot[static_cast<size_t>(slot)].clear();
  std::fill(v.in_use.begin() + static_cast<ptrdiff_t>(row), v.in_use.begin() + static_cast<ptrdiff_t>(row + v.stride),
            0);
  std::fill(v.limit.begin() + static_cast<ptrdiff_t>(row), v.limit.begin() + static_cast<ptrdiff_t>(row + v.stride),
            -1);
  v.flags[static_cast<size_t>(slot)] = 0;
  v.errors.erase(slot);
  if (!s.is_live(slot)) return;
  const CsiNodeRecord* csi = csi_node(s.names()[static_cast<size_t>(slot)]);
  if (csi == nullptr) return;
  uint8_t flags = csi->migrated.empty() ? 0 : AttachedView::kMigrates;
  if (!csi->limits.empty()) flags |= AttachedView::kHasLimits;
  for (const auto& [driver, count] : csi->limits) v.limit[row + static_cast<size_t>(v.driver_id(driver))] = count;
  SlotAttached found;
  if (flags & AttachedView::kHasLimits) compute(s, *this, csi, slot, &found);
  if (found.error) {
    flags |= AttachedView::kError;
    v.errors[slot] = std::move(found.message);
  }
  for (const auto& [driver, n] : found.in_use) {
    const int32_t id = v.driver_id(driver);
    if (id >= 0) v.in_use[row + static_cast<size_t>(id)] = n;
  }
  for (std::string& name : found.volumes) {
    v.slots_of_volume[name].push_back(slot);
    v.volumes_of_slot[static_cast<size_t>(slot)].push_back(std::move(name));
  }
  v.flags[static_cast<size_t>(slot)] = flags;
}

const VolumeStore::AttachedView& VolumeStore::attached_view(const ClusterState& s, ComputeAttached compute) const {
  std::lock_guard guard(cache_mutex_);
  const size_t n = static_cast<size_t>(s.n_slots());
  if (attached_membership_ != s.membership() || attached_version_ != objects_version_ + csi_node_version_ ||
      attached_by_ != compute || attached_.flags.size() != n) {
    AttachedView& v = attached_;
    v = AttachedView{};
    for (const auto& [name, csi] : csi_nodes_)  // the drivers some node limits, in name order
      for (const auto& [driver, count] : csi.limits) v.driver_ids.emplace(driver, 0);
    std::set<std::string> drivers;
    for (const auto& [driver, id] : v.driver_ids) drivers.insert(driver);
    int32_t id = 0;
    for (const std::string& driver : drivers) v.driver_ids[driver] = id++;
    v.stride = drivers.size();
    v.in_use.assign(n * v.stride, 0);
    v.limit.assign(n * v.stride, -1);
    v.flags.assign(n, 0);
    v.volumes_of_slot.assign(n, {});
    for (int32_t slot = 0; slot < s.n_slots(); ++slot) compute_attached_slot(s, slot, compute);
    attached_membership_ = s.membership();
    attached_version_ = objects_version_ + csi_node_version_;
    attached_by_ = compute;
  } else {
    for (const int32_t slot : attached_dirty_)
      if (static_cast<size_t>(slot) < n) compute_attached_slot(s, slot, compute);
  }
  attached_dirty_.clear();
  return attached_;
}

void VolumeStore::note_rejection(const std::string& pod_key, const std::string& plugin, std::string message) const {
  std::lock_guard guard(rejections_mutex_);
  // Read right after the call that prepared the pod; a bound on the entries keeps pods rejected and gone from
  // piling up (what is dropped is at worst reworded generically).
  constexpr size_t kMaxNotes = 1 << 16;
  if (rejections_.size() >= kMaxNotes) rejections_.clear();
  rejections_[pod_key + '\n' + plugin] = std::move(message);
}

std::string VolumeStore::rejection(const std::string& pod_key, const std::string& plugin) const {
  std::lock_guard guard(rejections_mutex_);
  const auto it = rejections_.find(pod_key + '\n' + plugin);
  return it == rejections_.end() ? std::string() : it->second;
}

size_t VolumeStore::n_objects() const {
  return classes_.size() + pvs_.size() + claims_.size() + csi_nodes_.size() + csi_drivers_.size() + capacities_.size() +
         attachments_.size();
}

}  // namespace vcore
