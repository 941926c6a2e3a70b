// Why a node was filtered out. Codes 0..kFixedReasons-1 belong to the fused built-in filters; the node plugins'
// reasons follow (node_plugin.h: reason_table()), then "Insufficient <resource>" is insufficient_base() + axis.
// Python reads the whole table from the core (vcore.reasons); a test keeps vcore.reasons.FIXED_REASONS equal to
// the fixed part.
#pragma once
#include <cstdint>

namespace vcore {

enum Reason : int32_t {
  kFeasible = -1,
  kUnschedulable = 0,     // "node(s) were unschedulable"
  kUntoleratedTaint = 1,  // "node(s) had untolerated taint(s)"
  kAffinityMismatch = 2,  // "node(s) didn't match Pod's node affinity/selector"
  kTooManyPods = 3,       // "Too many pods"
  kGpuDevices = 4,        // "node(s) had no free GPU devices that fit"
  kNumaAlignment = 5,     // "node(s) could not align the pod on NUMA nodes as its topology policy asks"
  kUnhonored = 6,         // "pod has a constraint vcore does not honor" (Python names the fields)
  // NodeAffinity's PreFilter: the pod's required terms all name nodes (matchFields metadata.name In), so only those
  // nodes are looked at; the others are "node(s) didn't satisfy plugin(s) [NodeAffinity]". When the names of
  // every term are disjoint no node is, and the pod is refused as a whole: "pod affinity terms conflict".
  kNodeAffinityPreFilter = 7,
  kAffinityTermsConflict = 8,
  kFixedReasons = 9,
};

inline constexpr const char* kFixedReasonNames[kFixedReasons] = {
    "node(s) were unschedulable",
    "node(s) had untolerated taint(s)",
    "node(s) didn't match Pod's node affinity/selector",
    "Too many pods",
    "node(s) had no free GPU devices that fit",
    "node(s) could not align the pod on NUMA nodes as its topology policy asks",
    "pod has a constraint vcore does not honor",
    "node(s) didn't satisfy plugin(s) [NodeAffinity]",
    "pod affinity terms conflict",
};

// The reasons kube-scheduler's filters give with the status UnschedulableAndUnresolvable: evicting pods cannot
// make such a node fit, so DefaultPreemption does not try it. Every other reason is Unschedulable, except
// "Insufficient <resource>" when the pod asks for more than the node's allocatable (the engine checks that per
// node). By text, so a node plugin that reuses kube-scheduler's words is classified with them.
inline constexpr const char* kUnresolvableReasonNames[] = {
    "node(s) were unschedulable",                       // NodeUnschedulable
    "node(s) had untolerated taint(s)",                 // TaintToleration
    "node(s) didn't match Pod's node affinity/selector",  // NodeAffinity
    "node(s) didn't satisfy plugin(s) [NodeAffinity]",  // the PreFilter's node names
    "pod affinity terms conflict",
    "pod has a constraint vcore does not honor",
    "node(s) didn't match the requested node name",     // NodeName
    "node(s) didn't match pod affinity rules",          // InterPodAffinity (affinity; anti-affinity is Unschedulable)
    "node(s) didn't match pod topology spread constraints (missing required label)",  // PodTopologySpread
    "node(s) had no available volume zone",             // VolumeZone
    "node(s) didn't match PersistentVolume's node affinity",  // VolumeBinding
    "node(s) didn't find available persistent volumes to bind",
    "node(s) did not have enough free storage",
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",
};

}  // namespace vcore
