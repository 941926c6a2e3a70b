// NodePlugin: the seam for node plugins outside the fused built-ins (NodeUnschedulable, TaintToleration,
// NodeAffinity, NodeResourcesFit, NodeResourcesBalancedAllocation, binpack, GPUDeviceFit, GPUPlacement).
//
// A plugin is one translation unit under core/src/plugins/ that registers itself by name (VCORE_NODE_PLUGIN); its
// Python half (vcore.plugins.<module>) declares and validates its arguments and hands them over as PluginArgs. For
// each pod the engine asks the plugin to `prepare` (kube-scheduler's PreFilter: what the plugin computes once per
// pod), then runs the prepared state over blocks of node slots inside the fused pass: `filter` marks infeasible
// slots and counts them under the plugin's reasons. A plugin's score is either final (0..100 per node, written by
// `score` block by block in the same pass) or normalized over the feasible nodes the way its kube-scheduler
// counterpart normalizes it: then `score_nodes` gets all the feasible nodes at once, as kube-scheduler's PreScore
// and Score see them (a score may depend on that set: PodTopologySpread's does).
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace vcore {

class ClusterState;
struct CompiledPod;

// A plugin's arguments: typed values by key, as vcore.plugins.<module>.native() produced them.
struct PluginArgs {
  std::map<std::string, int64_t> ints;
  std::map<std::string, double> floats;
  std::map<std::string, std::string> strings;
  std::map<std::string, std::vector<std::string>> string_lists;
  std::map<std::string, std::vector<int64_t>> int_lists;

  int64_t get_int(const std::string& key, int64_t fallback) const;
  double get_float(const std::string& key, double fallback) const;
  const std::string& get_string(const std::string& key, const std::string& fallback) const;
  std::vector<std::string> get_strings(const std::string& key) const;
  std::vector<int64_t> get_ints(const std::string& key) const;
};

// How a plugin's raw scores become node scores 0..100 over the feasible nodes (kube-scheduler's NormalizeScore).
enum class Normalization : uint8_t {
  kNone,  // the raw score is the node score already
  kMax,   // DefaultNormalizeScore: 100 * raw / max (100 everywhere when max is 0... see normalize())
  kMaxReverse,
  kMinMax,  // InterPodAffinity: 100 * (raw - min) / (max - min), 0 everywhere when max == min
  kSpread,  // PodTopologySpread: 100 * (max + min - raw) / max, 100 when max == 0; kIgnored slots score 0
};

// A raw score that takes no part in normalization and scores 0 (PodTopologySpread's ignored nodes).
inline constexpr int64_t kIgnoredScore = INT64_MIN;

// The node score of one raw value, given the minimum and maximum raw value over the feasible nodes (ignored ones
// left out; min > max when none is left). Inline: a gang's candidates ask it once per candidate and term.
inline int64_t normalize(Normalization kind, int64_t raw, int64_t min, int64_t max) {
  constexpr int64_t kMaxScore = 100;
  switch (kind) {
    case Normalization::kNone:
      return raw;
    case Normalization::kMax:
    case Normalization::kMaxReverse: {
      const int64_t top = std::max<int64_t>(max, 0);  // kube-scheduler's maximum starts at 0
      const bool reverse = kind == Normalization::kMaxReverse;
      if (top == 0) return reverse ? kMaxScore : raw;
      const int64_t s = kMaxScore * raw / top;
      return reverse ? kMaxScore - s : s;
    }
    case Normalization::kMinMax: {
      if (min > max || max == min) return 0;
      return static_cast<int64_t>(static_cast<double>(kMaxScore) *
                                  (static_cast<double>(raw - min) / static_cast<double>(max - min)));
    }
    case Normalization::kSpread: {
      if (raw == kIgnoredScore) return 0;
      if (max == 0) return kMaxScore;
      return kMaxScore * (max + min - raw) / max;
    }
  }
  return raw;
}

// What a plugin prepared for one pod. Slots are absolute; `failed`, `reasons`, `mask` and `raw` are block-relative.
class PodPlugin {
 public:
  virtual ~PodPlugin() = default;
  // Set failed[j] for the slots begin + j (those not failed yet) the plugin refuses, counting each under one of
  // the plugin's reasons: reasons[reason_base + k] for its k-th reason.
  virtual void filter(int32_t begin, int32_t end, uint8_t* failed, int64_t* reasons) const;
  // A final score: raw[j] for the slots with mask[j] (feasible); others are left alone.
  virtual void score(int32_t begin, int32_t end, const uint8_t* mask, int64_t* raw) const;
  // A normalized score: raw[i] for slots[i], the feasible nodes (all of them at once).
  virtual void score_nodes(const int32_t* slots, int32_t n, int64_t* raw) const;
  // kube-scheduler's Reserve: a scheduling decision (schedule(), a gang) bound the pod to `slot`; called under the
  // state's exclusive lock. What it records must be undone by the pod's unbinding (ClusterState sees to that).
  virtual void reserve(ClusterState& s, const CompiledPod& pod, int32_t slot) const;
  bool filters = false;  // the pod gives the plugin something to filter on
  bool scores = false;   // ... to score on
  // Whether the plugin's answer for a slot changes when other pods bind (inter-pod constraints): a gang's tasks
  // are then placed one at a time, each with a fresh look at the nodes.
  bool depends_on_bound_pods = false;
  // A PreFilter rejection: the pod fits no node, each counted under this reason of the plugin (plugin-relative code)
  // before any filter looks at it, as kube-scheduler stops at the first PreFilter plugin that rejects. -1: none.
  int32_t rejects_with = -1;
  // The rejection is an error of the plugin's Filter (kube-scheduler fails the attempt when a node meets it): it
  // counts only when no plugin rejected the pod at PreFilter, which runs for every plugin first.
  bool rejects_at_filter = false;
  int32_t reason_base = 0;
};

class NodePlugin {
 public:
  virtual ~NodePlugin() = default;
  // Its filter reasons, in kube-scheduler's words (their codes follow the fixed ones, see reason_table()).
  virtual std::vector<std::string> reasons() const { return {}; }
  // Indices of its reasons that are UnschedulableAndUnresolvable in kube-scheduler: no eviction can lift them, so
  // preemption leaves such nodes alone.
  virtual std::vector<int32_t> unresolvable_reasons() const { return {}; }
  virtual Normalization normalization() const { return Normalization::kNone; }
  // Node label keys its kernels read by column (ClusterState::label_column): the engine makes sure they exist.
  virtual std::vector<std::string> label_keys() const { return {}; }
  // The pod's prepared state (PreFilter, PreScore); `filters`/`scores` say what it takes part in. Called under the
  // state's lock (shared or exclusive), without the GIL.
  virtual std::unique_ptr<PodPlugin> prepare(const ClusterState& s, const CompiledPod& pod) const = 0;
};

using PluginFactory = std::unique_ptr<NodePlugin> (*)(const PluginArgs& args);

// The registry: every plugin linked into the module, by name.
void register_plugin(const std::string& name, PluginFactory factory);
PluginFactory find_plugin(const std::string& name);  // nullptr when no plugin has the name
std::vector<std::string> registered_plugins();       // sorted

// Reason codes: the fixed ones (reasons.h), then every registered plugin's reasons (plugins by name, each in its
// own order), then "Insufficient <resource>" per resource axis from insufficient_base().
const std::vector<std::string>& reason_table();
// Per code of reason_table() (the Insufficient codes after it are all resolvable): UnschedulableAndUnresolvable.
const std::vector<uint8_t>& reason_unresolvable();
int32_t plugin_reason_base(const std::string& plugin);
int32_t insufficient_base();

struct PluginRegistrar {
  PluginRegistrar(const char* name, PluginFactory factory) { register_plugin(name, factory); }
};

}  // namespace vcore

#define VCORE_NODE_PLUGIN_CONCAT2(a, b) a##b
#define VCORE_NODE_PLUGIN_CONCAT(a, b) VCORE_NODE_PLUGIN_CONCAT2(a, b)
// In a plugin's .cpp: VCORE_NODE_PLUGIN("NodePorts", [](const PluginArgs& a) -> std::unique_ptr<NodePlugin> {...});
#define VCORE_NODE_PLUGIN(name, factory) \
  static const ::vcore::PluginRegistrar VCORE_NODE_PLUGIN_CONCAT(vcore_plugin_registrar_, __LINE__)(name, factory)
