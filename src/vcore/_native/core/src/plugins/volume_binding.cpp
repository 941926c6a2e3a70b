// VolumeBinding, as kube-scheduler v1.34 has it (with StorageCapacityScoring off, its default: no score).
//
// PreFilter: every claim of the pod (persistentVolumeClaim and generic ephemeral volumes) exists, is neither Lost nor
// being deleted, an ephemeral one is owned by the pod, and none is an unbound claim of Immediate binding. Filter (the
// volume binder, vcore/volumes/volume_binder.h): the bound claims' PVs allow the node, and every unbound
// WaitForFirstConsumer claim can be bound there to a static PV or provisioned there. Reserve: the chosen PVs are
// assumed bound to their claims and the claims to provision assumed selected for the node, so that the pods placed
// next see them taken; unbinding the pod undoes it. What PreBind must write is the assumption
// (ClusterState::bound_pod(key)->volume_assumption).
#include "vcore/cluster_state.h"
#include "vcore/node_plugin.h"
#include "vcore/pod.h"
#include "vcore/volumes/volume_binder.h"

namespace vcore {
namespace {

enum Reason {
  kNodeAffinityConflict = 0,
  kNoVolumesToBind = 1,
  kNotEnoughStorage = 2,
  kMissingPv = 3,
  kRejected = 4,  // PreFilter rejected the pod (the message is noted per pod)
  kError = 5,     // an error status fails the pod (the message is noted per pod)
};

class RejectedPod final : public PodPlugin {
 public:
  RejectedPod(int32_t reason, bool at_filter) {
    filters = true;
    rejects_with = reason;
    rejects_at_filter = at_filter;
  }
};

class BindingOfPod final : public PodPlugin {
 public:
  explicit BindingOfPod(PodClaims claims) : claims_(std::move(claims)) {
    filters = true;
    depends_on_bound_pods = true;  // what other pods bind (and assume) changes which PVs are left
  }

  void filter(int32_t begin, int32_t end, uint8_t* failed, int64_t* reasons) const override {
    for (int32_t j = 0; j < end - begin; ++j) {
      if (failed[j]) continue;
      const uint8_t bits = claims_.find(*state_, begin + j, nullptr, nullptr);
      if (bits == 0) continue;
      failed[j] = 1;
      if (bits & kNodeConflict) ++reasons[reason_base + kNodeAffinityConflict];
      if (bits & kBindConflict) ++reasons[reason_base + kNoVolumesToBind];
      if (bits & kNotEnoughSpace) ++reasons[reason_base + kNotEnoughStorage];
      if (bits & kPvMissing) ++reasons[reason_base + kMissingPv];
    }
  }

  void reserve(ClusterState& s, const CompiledPod& pod, int32_t slot) const override {
    if (!claims_.needs_binding()) return;  // every claim is bound: nothing to assume
    VolumeAssumption a;
    if (claims_.find(s, slot, &a, nullptr) != 0) return;  // not a node the filter let through
    s.assume_volumes(pod.key, std::make_shared<const VolumeAssumption>(std::move(a)));
  }

  const ClusterState* state_ = nullptr;

 private:
  PodClaims claims_;
};

class VolumeBinding final : public NodePlugin {
 public:
  std::vector<std::string> reasons() const override {
    return {"node(s) didn't match PersistentVolume's node affinity",
            "node(s) didn't find available persistent volumes to bind",
            "node(s) did not have enough free storage",
            "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",
            "<VolumeBinding: pod rejected at PreFilter>",
            "<VolumeBinding: filter error>"};
  }
  // Every VolumeBinding failure is UnschedulableAndUnresolvable (its PreFilter's and FindPodVolumes' reasons); an
  // error fails the attempt, which no eviction changes either.
  std::vector<int32_t> unresolvable_reasons() const override {
    return {kNodeAffinityConflict, kNoVolumesToBind, kNotEnoughStorage, kMissingPv, kRejected, kError};
  }

  std::unique_ptr<PodPlugin> prepare(const ClusterState& s, const CompiledPod& pod) const override {
    if (pod.volumes == nullptr) return nullptr;
    const VolumeStore& store = s.volumes();
    PodClaims claims;
    if (const auto rejection = claims.prefilter(s, *pod.volumes)) {
      store.note_rejection(pod.key, "VolumeBinding", rejection->message);
      return std::make_unique<RejectedPod>(rejection->error ? kError : kRejected, false);
    }
    if (!claims.has_claims()) return nullptr;
    // A bound claim's PV that CSI migration cannot translate fails the pod on a node migrating its plugin: kube-
    // scheduler's attempt errors as soon as it filters such a node, so any such node rules the pod out.
    for (const auto& [plugin, error] : claims.translation_errors()) {
      const auto& csi = store.csi_nodes_by_slot(s);
      for (int32_t slot = 0; slot < s.n_slots(); ++slot) {
        if (!s.is_live(slot) || !migrated_on(csi[static_cast<size_t>(slot)], plugin)) continue;
        store.note_rejection(pod.key, "VolumeBinding",
                             "running \"VolumeBinding\" filter plugin: could not translate pv: " + error);
        return std::make_unique<RejectedPod>(kError, true);
      }
    }
    if (claims.passes_every_node()) return nullptr;  // bound claims whose PVs allow any node: nothing to filter
    auto out = std::make_unique<BindingOfPod>(std::move(claims));
    out->state_ = &s;
    return out;
  }
};

VCORE_NODE_PLUGIN("VolumeBinding",
                  [](const PluginArgs&) -> std::unique_ptr<NodePlugin> { return std::make_unique<VolumeBinding>(); });

}  // namespace
}  // namespace vcore
