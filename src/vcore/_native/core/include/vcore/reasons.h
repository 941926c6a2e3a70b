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

// Whether a fixed reason is kube-scheduler's UnschedulableAndUnresolvable: evicting pods cannot change it, so
// preemption does not try such a node.
// NodeResourcesFit's "Insufficient <resource>" is unresolvable too where the pod asks for more than the node's
// allocatable (preemption checks that per node).
inline constexpr bool kFixedReasonUnresolvable[kFixedReasons] = {true,  true, true, false, false,
                                                                 false, true, true, true};

}  // namespace vcore
