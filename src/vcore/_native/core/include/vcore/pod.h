// A pod compiled against one ClusterState: requests as (axis, amount), selectors and tolerations as interned ids.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vcore/gpu_devices.h"
#include "vcore/node_extras.h"
#include "vcore/pod_affinity.h"
#include "vcore/volumes/pod_volumes.h"

namespace vcore {

// A start time nobody knows: kube-scheduler reads a missing status.startTime as "now", later than every real one.
inline constexpr int64_t kUnknownStartTime = INT64_MAX;

enum class TaintEffect : uint8_t { kAny = 0, kNoSchedule = 1, kPreferNoSchedule = 2, kNoExecute = 3 };

enum class SelectorOp : uint8_t { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };

// A pod's inter-pod constraints (InterPodAffinity, PodTopologySpread), compiled: its terms, and the counters of the
// pod index that serve them (registered when the pod is compiled; see pod_affinity.h).
struct InterPodConstraints {
  std::vector<PodAffinityTerm> required_affinity, required_anti_affinity, preferred_affinity, preferred_anti_affinity;
  std::vector<SpreadConstraint> spread;  // its own; or, without any, none (the profile's defaults apply)
  PodSelector default_spread_selector;   // for the profile's default constraints (Services, ReplicaSets... that
                                         // select the pod); `nothing` when none selects it
  int32_t affinity_tracker = -1;         // bound pods matching every required affinity term
  std::vector<int32_t> anti_affinity_trackers, preferred_affinity_trackers, preferred_anti_affinity_trackers;
  std::vector<int32_t> spread_trackers;  // per own constraint
  int32_t default_spread_tracker = -1;   // the default selector's
  // Its terms as term classes, what other pods meet once it is bound; null when it carries none (most pods): its
  // bound record shares the pointer.
  std::shared_ptr<const CarriedTerms> carried;
  bool empty() const {
    return required_affinity.empty() && required_anti_affinity.empty() && preferred_affinity.empty() &&
           preferred_anti_affinity.empty() && spread.empty() && default_spread_selector.nothing;
  }
};

struct Taint {
  int32_t key;
  int32_t value;
  TaintEffect effect;
};

struct LabelRequirement {
  int32_t key;
  SelectorOp op;
  std::vector<int32_t> values;  // interned, for In / NotIn
  int64_t number = 0;           // for Gt / Lt
};

// matchFields supports metadata.name only (as the API server enforces).
struct NameRequirement {
  SelectorOp op;  // kIn or kNotIn
  std::vector<std::string> names;
};

struct NodeSelectorTerm {
  std::vector<LabelRequirement> expressions;
  std::vector<NameRequirement> fields;
};

struct Toleration {
  int32_t key;  // -1: empty key (with Exists, matches every taint key)
  bool exists;  // operator Exists (else Equal)
  int32_t value;
  TaintEffect effect;  // kAny: all effects
};

struct CompiledPod {
  // The fields a gang placement reads of every task come first, in as few cache lines as they fit.
  std::string key;                                    // namespace/name
  uint64_t state_id = 0;                              // which ClusterState interned the ids
  size_t key_hash = 0;                                // std::hash of key, made once: a gang checks thousands
  std::vector<std::pair<int32_t, int64_t>> requests;  // axis, amount > 0; never the pods axis
  int64_t nonzero_cpu_milli = 0;                      // what it adds to its node's non-zero requests once bound
  int64_t nonzero_mem_bytes = 0;
  // Its cpu/memory as NodeResourcesFit's scorer reads the pod it places: the containers' requests with the non-zero
  // defaults, pod-level requests left out (kube-scheduler v1.34's resourceAllocationScorer). Equal to the pair above
  // but for a pod with pod-level requests.
  int64_t score_cpu_milli = 0;
  int64_t score_mem_bytes = 0;
  int64_t priority = 0;
  bool never_preempts = false;  // spec.preemptionPolicy Never: DefaultPreemption never evicts for it
  bool tolerates_unschedulable = false;
  std::shared_ptr<const PodVolumes> volumes;  // what the volume plugins look at; null for a pod without such volumes
  std::vector<std::pair<int32_t, int32_t>> node_selector;  // key id, value id
  bool has_required_terms = false;
  std::vector<NodeSelectorTerm> required_terms;                       // ORed
  std::vector<std::pair<int64_t, NodeSelectorTerm>> preferred_terms;  // weight, term
  std::vector<Toleration> tolerations;
  DeviceRequest gpu;      // GPU devices (whole, shared slices, MIG instances); kind kNone for most pods
  std::string node_name;  // spec.nodeName: the only node the pod may go to (NodeName); empty: any
  PodIdentity identity;   // namespace, labels, being deleted: what other pods' selectors look at
  InterPodConstraints inter_pod;
  std::vector<HostPort> host_ports;  // NodePorts: the host ports its containers (and sidecars) take
  std::vector<int32_t> images;       // ImageLocality: its containers' images (init first), interned
  int32_t n_containers = 0;
  int64_t start_time = kUnknownStartTime;  // status.startTime (Unix seconds): preemption spares older pods first
  // A constraint vcore does not evaluate (or scheduling gates): every node is infeasible for the pod.
  bool refused = false;

  int64_t request(int32_t axis) const {
    for (const auto& [a, v] : requests)
      if (a == axis) return v;
    return 0;
  }
};

}  // namespace vcore
