// Why a node was filtered out. One table shared with Python (vcore.reasons); a test keeps the two equal.
// Codes below kInsufficientBase are fixed; "Insufficient <resource>" is kInsufficientBase + resource axis.
#pragma once
#include <cstdint>

namespace vcore {

enum Reason : int32_t {
  kFeasible = -1,
  kUnschedulable = 0,   // "node(s) were unschedulable"
  kUntoleratedTaint = 1,  // "node(s) had untolerated taint"
  kAffinityMismatch = 2,  // "node(s) didn't match Pod's node affinity/selector"
  kTooManyPods = 3,       // "Too many pods"
  kGpuDevices = 4,        // "node(s) had no free GPU devices that fit"
  kNumaAlignment = 5,     // "node(s) could not align the pod on NUMA nodes as its topology policy asks"
  kNodeName = 6,          // "node(s) didn't match the requested node name"
  kUnhonored = 7,         // "pod has a constraint vcore does not honor" (Python names the fields)
  kInsufficientBase = 8,  // + axis: "Insufficient <resource>"
};

inline constexpr const char* kFixedReasonNames[kInsufficientBase] = {
    "node(s) were unschedulable",
    "node(s) had untolerated taint",
    "node(s) didn't match Pod's node affinity/selector",
    "Too many pods",
    "node(s) had no free GPU devices that fit",
    "node(s) could not align the pod on NUMA nodes as its topology policy asks",
    "node(s) didn't match the requested node name",
    "pod has a constraint vcore does not honor",
};

}  // namespace vcore
