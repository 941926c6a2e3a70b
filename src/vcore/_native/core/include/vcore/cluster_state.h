// ClusterState: the cluster as struct-of-arrays owned by C++.
//
// Per resource axis a contiguous row over node slots (allocatable, requested), plus the non-zero requested cpu
// and memory rows that kube-scheduler's scoring uses. Node slots are stable across removals (free list), so an
// adapter's name->index map stays valid. Buffers are shared_ptr-owned so numpy views keep them alive; growing
// a buffer swaps in a new one and bumps `generation`, leaving old views readable but stale.
// Every mutation validates first and only then writes, so a failed call leaves the state unchanged.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vcore/interner.h"
#include "vcore/node_extras.h"
#include "vcore/pod.h"
#include "vcore/topology.h"
#include "vcore/volumes/volume_store.h"

namespace vcore {

inline constexpr int32_t kAxisCpu = 0;
inline constexpr int32_t kAxisMemory = 1;
inline constexpr int32_t kAxisEphemeralStorage = 2;
inline constexpr int32_t kAxisPods = 3;
// Bound on the cluster's total allocatable and total requested per resource: writes past it are refused, so
// the batch layer's sums of a few totals never wrap int64 (vcore.batch.amounts.MAX_AMOUNT).
inline constexpr int64_t kMaxTotal = int64_t{1} << 61;

struct NodeInput {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
  std::vector<std::pair<std::string, int64_t>> allocatable;
  std::vector<std::tuple<std::string, std::string, std::string>> taints;  // key, value, effect
  bool unschedulable = false;
  std::vector<DeviceInput> gpus;                      // from vcore.gpu.devices; empty for nodes without GPUs
  std::vector<std::pair<int32_t, int64_t>> numa_cpu;  // (NUMA id, allocatable millicores); from vcore.gpu.numa
  NodePatternMatches patterns;  // the HyperNodes' regexMatch patterns its name matches (see topology.h)
  std::vector<std::pair<std::vector<std::string>, int64_t>> images;  // status.images: (names, sizeBytes)
};

struct RequirementInput {
  std::string key;
  std::string op;
  std::vector<std::string> values;
};

struct TermInput {
  std::vector<RequirementInput> expressions;
  std::vector<RequirementInput> fields;
};

// A pod label selector as vcore._native._convert gives it: requirements with In/NotIn/Exists/DoesNotExist
// (matchLabels as In of one value); `nothing`: a nil selector.
struct PodSelectorInput {
  bool nothing = false;
  std::vector<RequirementInput> requirements;
};

struct AffinityTermInput {
  std::vector<std::string> namespaces;
  bool has_namespace_selector = false;
  PodSelectorInput namespace_selector;
  PodSelectorInput selector;
  std::string topology_key;
  int64_t weight = 0;
};

struct SpreadInput {
  int32_t max_skew = 1;
  std::string topology_key;
  bool hard = true;
  PodSelectorInput selector;
  int32_t min_domains = 1;
  bool honor_node_affinity = true;
  bool honor_taints = false;
};

struct PodInput {
  std::string key;
  std::vector<std::pair<std::string, int64_t>> requests;
  int64_t nonzero_cpu_milli = 0;
  int64_t nonzero_mem_bytes = 0;
  std::optional<int64_t> score_cpu_milli, score_mem_bytes;  // absent: the non-zero pair (CompiledPod's)
  int64_t priority = 0;
  bool never_preempts = false;
  std::vector<std::pair<std::string, std::string>> node_selector;
  std::optional<std::vector<TermInput>> required_terms;
  std::vector<std::pair<int64_t, TermInput>> preferred_terms;
  std::vector<std::tuple<std::string, std::string, std::string, std::string>> tolerations;  // key, op, value, effect
  DeviceRequest gpu;
  std::string node_name;
  bool refused = false;
  std::vector<std::pair<std::string, std::string>> labels;  // metadata.labels
  bool deleting = false;                                    // metadata.deletionTimestamp is set
  std::vector<AffinityTermInput> required_affinity, required_anti_affinity, preferred_affinity, preferred_anti_affinity;
  std::vector<SpreadInput> spread;
  std::optional<PodSelectorInput> default_spread_selector;
  std::vector<std::tuple<std::string, std::string, int32_t>> host_ports;  // (host IP, protocol, port), sanitized
  std::vector<std::string> images;            // each container's image (init containers first), normalized
  int32_t n_containers = 0;                   // init containers + containers
  int64_t start_time = kUnknownStartTime;     // status.startTime, Unix seconds
  std::shared_ptr<const PodVolumes> volumes;  // from vcore.volumes; null for pods without volumes the plugins read
};

// A PodDisruptionBudget as preemption reads it: the pods it covers and how many may still be disrupted.
struct PdbInput {
  std::string key;                           // namespace/name
  std::optional<PodSelectorInput> selector;  // spec.selector; none or empty: covers no pod (as kube-scheduler reads it)
  int32_t disruptions_allowed = 0;           // status.disruptionsAllowed
  std::vector<std::string> disrupted;        // status.disruptedPods: names the API server already counts
};

struct Pdb {
  std::string key;
  int32_t namespace_id;
  PodSelector selector;  // `nothing` when it covers no pod
  int32_t disruptions_allowed;
  std::vector<std::string> disrupted;  // sorted
};

// A row-major int64 matrix [rows][stride] whose storage numpy views may share.
struct SharedMatrix {
  std::shared_ptr<std::vector<int64_t>> data = std::make_shared<std::vector<int64_t>>();
  int32_t rows = 0;
  int32_t row_capacity = 0;
  int32_t stride = 0;  // slot capacity

  int64_t* row(int32_t r) { return data->data() + static_cast<size_t>(r) * stride; }
  const int64_t* row(int32_t r) const { return data->data() + static_cast<size_t>(r) * stride; }
  void reshape(int32_t new_row_capacity, int32_t new_stride);
};

struct BoundPod;
using BoundEntry = std::pair<const std::string, BoundPod>;  // ClusterState's entry of a bound pod: key and pod

struct BoundPod {
  int32_t node;
  std::vector<std::pair<int32_t, int64_t>> requests;
  int64_t nonzero_cpu_milli;
  int64_t nonzero_mem_bytes;
  GpuAssignment gpu;
  PodIdentity identity;                         // what the pod index counts it by
  std::shared_ptr<const CarriedTerms> carried;  // its (anti-)affinity terms (CompiledPod's, shared), or null
  std::vector<HostPort> host_ports;
  int64_t priority = 0;
  int64_t start_time = kUnknownStartTime;
  std::shared_ptr<const PodVolumes> volumes;                  // its volumes (VolumeStore::pods_on)
  std::shared_ptr<const VolumeAssumption> volume_assumption;  // what VolumeBinding's Reserve assumed for it
  // Its neighbours in its node's list of pods (ClusterState's links between its own entries: a copy's mean nothing).
  BoundEntry* prev_on_node = nullptr;
  BoundEntry* next_on_node = nullptr;
};

class ClusterState {
 public:
  ClusterState();
  ClusterState(const ClusterState&) = delete;  // pods_on_ points into pods_: a copy would point into the original
  ClusterState& operator=(const ClusterState&) = delete;

  // Resource axes.
  int32_t resource_axis(const std::string& name);  // interns; adds a zero row for a new resource
  int32_t find_resource_axis(const std::string& name) const { return resources_.find(name); }
  int32_t n_resources() const { return alloc_.rows; }
  const std::string& resource_name(int32_t axis) const { return resources_.name(axis); }
  // Extended, hugepages and prefixed-native resources: kube-scheduler's "scalar" resources.
  bool is_scalar_resource(int32_t axis) const { return scalar_.at(static_cast<size_t>(axis)) != 0; }
  bool is_extended_resource(int32_t axis) const { return extended_.at(static_cast<size_t>(axis)) != 0; }

  // Nodes.
  int32_t add_node(const NodeInput& node);
  int32_t update_node(const NodeInput& node);
  std::vector<std::string> remove_node(const std::string& name, bool evict);
  int32_t node_index(const std::string& name) const;  // -1 if absent
  const std::string& node_name(int32_t slot) const;
  int32_t n_nodes() const { return n_live_; }
  int32_t n_slots() const { return static_cast<int32_t>(names_.size()); }
  bool is_live(int32_t slot) const { return (*live_)[static_cast<size_t>(slot)] != 0; }

  // Pods.
  CompiledPod compile_pod(const PodInput& pod);
  // GPU pods take the node-local GPU indices given (checked: a conflict is rejected and nothing changes), or the
  // devices the fit rule picks; when none fit, the pod is accounted by its resources only.
  void bind(const CompiledPod& pod, int32_t slot, const std::vector<int32_t>* gpu_indices = nullptr);
  int32_t unbind(const std::string& key);
  // What-if removal for preemption: detach() unbinds a pod and hands back its record, attach() binds it again
  // exactly as it was (same node, same devices). The kernels see the node without the pod in between.
  BoundPod detach(const std::string& key);
  void attach(const std::string& key, BoundPod pod);
  const BoundPod* bound_pod(const std::string& key) const;  // nullptr when not bound
  int32_t pod_node(const std::string& key) const;
  int64_t n_pods() const { return static_cast<int64_t>(pods_.size()); }
  const std::unordered_map<std::string, BoundPod>& bound_pods() const { return pods_; }
  // The bound pods as inter-pod constraints count them (pod_affinity.h).
  const PodIndex& pod_index() const { return pod_index_; }
  // Host ports held per node (NodePorts), the images nodes report (ImageLocality); the interned id of 0.0.0.0.
  const HostPortTable& host_ports() const { return host_ports_; }
  const ImageTable& images() const { return images_; }
  int32_t any_host_ip() const { return any_host_ip_; }
  // PodDisruptionBudgets (preemption spares the pods they protect where it can); exclusive lock to change.
  void set_pdb(const PdbInput& pdb);
  bool remove_pdb(const std::string& key);
  const std::vector<Pdb>& pdbs() const { return pdbs_; }
  // Indices into pdbs() of the budgets that count a bound pod's eviction (kube-scheduler's rule: same namespace,
  // the selector matches its labels, not already among the budget's disrupted pods).
  std::vector<int32_t> pdbs_of(const std::string& key, const BoundPod& pod) const;
  // A namespace's labels (for namespaceSelector); exclusive lock.
  void set_namespace_labels(const std::string& name, const std::vector<std::pair<std::string, std::string>>& labels,
                            bool exists = true);
  // Room for n bound pods without rehashing: a cycle about to bind thousands of pods asks once, instead of the
  // table growing (and moving every entry) several times while it binds.
  void reserve_pods(int64_t n) { pods_.reserve(static_cast<size_t>(std::max<int64_t>(n, 0))); }
  // Reads the table entries that binding these pods will probe, all in one pass. The probes are independent, so
  // their cache misses overlap here instead of stalling each bind in turn (a gang binds dozens in a row).
  void warm_pod_entries(const CompiledPod* const* pods, size_t n) const;
  std::vector<std::string> pods_on(int32_t slot) const;
  const GpuAssignment* pod_gpus(const std::string& key) const;  // nullptr when not bound

  // GPU devices, and per slot a version bumped by every change to the node or its pods (policy caches key on it).
  const DeviceTable& gpus() const { return gpus_; }
  uint64_t node_version(int32_t slot) const { return node_version_[static_cast<size_t>(slot)]; }
  // gpu-clustering: GPU pods on the slot of one class (0 = shared slices, k = k whole GPUs), and distinct classes.
  int32_t gpu_class_pods(int32_t slot, int32_t cls) const;
  int32_t gpu_classes(int32_t slot) const;

  // Raw storage for kernels and views.
  const SharedMatrix& allocatable() const { return alloc_; }
  const SharedMatrix& requested() const { return req_; }
  const SharedMatrix& nonzero_requested() const { return nonzero_; }
  const std::shared_ptr<std::vector<uint8_t>>& live() const { return live_; }
  const std::vector<uint8_t>& unschedulable() const { return unschedulable_; }
  // 1 where a node has a NoSchedule or NoExecute taint: the vector pre-filter sends those to the exact check.
  const std::vector<uint8_t>& blocking_taints() const { return blocking_taints_; }
  // Per axis, the sum over live nodes of allocatable and of requested. Node writes and binds that would take a
  // sum past kMaxTotal are refused, so every sum over nodes or bound pods fits in int64 with room to spare.
  const std::vector<int64_t>& allocatable_total() const { return alloc_total_; }
  const std::vector<int64_t>& requested_total() const { return req_total_; }
  // Largest allocatable ever seen per axis; kernels use it to prove double arithmetic exact.
  int64_t max_allocatable(int32_t axis) const { return max_alloc_.at(static_cast<size_t>(axis)); }
  // Taints are interned as sets: nodes of a pool share one taint set, so a pod's tolerations are checked once
  // per set rather than once per node. Set 0 is the empty set; sets are never freed.
  const std::vector<Taint>& node_taints(int32_t slot) const {
    return taint_sets_[static_cast<size_t>(taint_set_[slot])];
  }
  const int32_t* taint_set_ids() const { return taint_set_.data(); }
  int32_t n_taint_sets() const { return static_cast<int32_t>(taint_sets_.size()); }
  const std::vector<Taint>& taint_set(int32_t id) const { return taint_sets_[static_cast<size_t>(id)]; }
  const std::vector<std::vector<std::pair<int32_t, int32_t>>>& labels() const { return labels_; }
  // Label columns: for each label key some compiled pod asks about, the value id per slot (-1: no such label).
  // Materialized by compile_pod (under the exclusive lock) and kept current by every node write, so kernels
  // test labels with one load per node instead of a search.
  const int32_t* label_column(int32_t key) const;
  void ensure_label_column(int32_t key);
  // The same column as topology domains: per slot a dense id 0..n_domains(key)-1 of the label's value (-1: no
  // such label), so inter-pod constraints count per domain in a plain array. Ids are handed out as values appear
  // and kept (a value no node has any more keeps its id).
  const int32_t* domain_column(int32_t key) const;
  int32_t n_domains(int32_t key) const;
  int32_t domain_of_value(int32_t key, int32_t value) const;  // -1: no node ever had it
  // 1 where a node has a PreferNoSchedule taint.
  const std::vector<uint8_t>& prefer_taints() const { return prefer_taints_; }
  const std::vector<std::string>& names() const { return names_; }
  int64_t prefer_no_schedule_taints() const { return n_prefer_taints_; }
  // Label value ids that parse as int64 (strconv.ParseInt base 10), for Gt / Lt.
  const std::optional<int64_t>& string_as_int(int32_t id) const { return string_ints_.at(static_cast<size_t>(id)); }
  int32_t intern_string(const std::string& s);
  int32_t find_string(const std::string& s) const { return strings_.find(s); }
  const std::string& string_name(int32_t id) const { return strings_.name(id); }

  // Storage objects and what bound pods use of them (volumes/volume_store.h); writers hold the exclusive lock.
  const VolumeStore& volumes() const { return volumes_; }
  VolumeStore& volumes() { return volumes_; }
  // VolumeBinding's Reserve for a bound pod: record the assumption (replacing one it had); unbinding undoes it.
  void assume_volumes(const std::string& key, std::shared_ptr<const VolumeAssumption> assumption);
  // A node selector term compiled against this state (interned, label columns materialized); `where` names it.
  NodeSelectorTerm compile_term(const TermInput& term, const std::string& where);

  // The network topology (HyperNodes or label levels); node writes keep its columns current.
  const Topology& topology() const { return topology_; }
  Topology& topology() { return topology_; }

  uint64_t generation() const { return generation_; }
  // Bumped when a node is added or removed (which names hold which slots changed).
  uint64_t membership() const { return membership_; }
  uint64_t id() const { return id_; }
  size_t native_bytes() const;  // heap bytes of the per-node arrays (for memory reports)

  // Readers (kernels) take a shared lock, writers an exclusive one, so adapter threads may mutate safely.
  std::shared_mutex& mutex() const { return mutex_; }
  // For kernels that bind while holding the lock already (Engine::schedule).
  // `assignment` (from the engine's device choice) skips the fit; nullptr picks as bind() does.
  void bind_locked(const CompiledPod& pod, int32_t slot, const GpuAssignment* assignment = nullptr);

 private:
  struct ParsedNode {
    std::vector<std::pair<int32_t, int32_t>> labels;
    std::vector<std::pair<int32_t, int64_t>> allocatable;
    std::vector<Taint> taints;
    std::vector<std::pair<std::vector<int32_t>, int64_t>> images;
  };
  ParsedNode parse_node(const NodeInput& node);  // validates and interns; writes nothing else
  void write_node(int32_t slot, const NodeInput& node, ParsedNode&& parsed);
  // Throw Invalid, naming the node or pod, when a write would take a total past kMaxTotal (slot -1: a new node).
  void check_allocatable_total(int32_t slot, const NodeInput& node) const;
  void check_requested_total(const std::string& key, int32_t slot,
                             const std::vector<std::pair<int32_t, int64_t>>& requests, int64_t nonzero_cpu,
                             int64_t nonzero_mem) const;
  void ensure_slot_capacity(int32_t slots);
  void apply_pod(const BoundPod& pod, int64_t sign);
  PodSelector compile_selector(const PodSelectorInput& in, const std::string& where);
  PodAffinityTerm compile_affinity_term(const AffinityTermInput& in, int32_t own_namespace, const std::string& where);
  void compile_inter_pod(const PodInput& pod, CompiledPod& out, const std::string& where);

  DeviceTable gpus_;
  Topology topology_;
  std::vector<uint64_t> node_version_;
  std::vector<std::vector<std::pair<int32_t, int32_t>>> gpu_classes_;  // per slot: (class, pods)
  void count_gpu_class(int32_t slot, const GpuAssignment& a, int32_t sign);
  void reconcile_gpus(int32_t slot);  // after a node update: drop holds on vanished GPUs, rebuild usage

  Interner resources_;
  std::vector<uint8_t> scalar_, extended_;
  Interner strings_;
  std::vector<std::optional<int64_t>> string_ints_;

  SharedMatrix alloc_, req_, nonzero_;
  std::shared_ptr<std::vector<uint8_t>> live_ = std::make_shared<std::vector<uint8_t>>();
  std::vector<uint8_t> unschedulable_;
  std::vector<uint8_t> blocking_taints_;
  std::vector<uint8_t> prefer_taints_;
  struct LabelColumn {
    std::vector<int32_t> values;   // value id per slot
    std::vector<int32_t> domains;  // dense domain id per slot
    std::unordered_map<int32_t, int32_t> domain_of_value;
    void set(int32_t slot, int32_t value);
  };
  std::unordered_map<int32_t, LabelColumn> label_columns_;
  std::vector<int64_t> max_alloc_;
  std::vector<int64_t> alloc_total_, req_total_;
  int32_t intern_taint_set(std::vector<Taint> taints);
  std::vector<int32_t> taint_set_;
  std::vector<std::vector<Taint>> taint_sets_{std::vector<Taint>{}};
  std::map<std::vector<int32_t>, int32_t> taint_set_index_;
  std::vector<std::vector<std::pair<int32_t, int32_t>>> labels_;
  std::vector<std::string> names_;
  // Per slot: its pods in bind order, a list linked through their entries in pods_ (a map's entries never move
  // while they are in it). A gang binds thousands of pods a call: linking allocates nothing, unlinking searches
  // nothing.
  struct NodePods {
    BoundEntry* first = nullptr;
    BoundEntry* last = nullptr;
  };
  void link_on_node(BoundEntry& entry);
  void unlink_from_node(BoundEntry& entry);
  std::vector<NodePods> pods_on_;
  std::vector<int32_t> free_slots_;
  std::unordered_map<std::string, int32_t> slot_of_;
  std::unordered_map<std::string, BoundPod> pods_;
  int32_t n_live_ = 0;
  PodIndex pod_index_;
  HostPortTable host_ports_;
  ImageTable images_;
  std::vector<Pdb> pdbs_;
  int32_t any_host_ip_ = -1;
  VolumeStore volumes_;
  int64_t n_prefer_taints_ = 0;
  uint64_t generation_ = 0;
  uint64_t membership_ = 0;
  uint64_t id_;
  mutable std::shared_mutex mutex_;
};

}  // namespace vcore
