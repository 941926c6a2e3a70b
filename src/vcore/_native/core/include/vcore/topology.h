// Network topology of a ClusterState: the domain tree and one domain id per node slot per tier.
//
// The tree comes from one of two sources, never both:
// - Volcano HyperNodes (topology.volcano.sh/v1alpha1): a HyperNode has a tier and members, nodes (exact name,
//   regex on the name, or a label selector) or other HyperNodes (exact name). A HyperNode lists its child
//   HyperNodes; a member's tier is strictly lower than its parent's.
// - Node labels as levels (Kueue Topology / KAI Topology): level keys from the highest (e.g. zone) to the lowest
//   (e.g. rack or kubernetes.io/hostname); a domain is a path of label values, so equal rack values under two
//   blocks are two racks.
// Rows are the distinct tiers in ascending order (row 0 = the lowest tier, the fastest domain); above the highest
// row sits a virtual root holding every node. `node_topo` is row-major int32[rows][stride]: the domain of slot s at
// row r, or -1 (the node is in no domain of that tier: not in the tree, or its branch skips the tier).
//
// Membership follows the nodes: a node added or relabeled joins the HyperNodes whose selectors match it. Every
// mutation validates completely before it writes, so a failed call (an Invalid naming the HyperNode or the node)
// leaves the topology unchanged. Domain ids are stable while their HyperNode exists (freed ids are reused).
//
// regexMatch patterns are never evaluated here. Volcano evaluates them with Go's regexp (RE2: its syntax, linear
// time); the caller does the same with RE2 and hands over the results, which depend on (pattern, node name) only:
// per regexMatch member the node slots it matches (computed at a node membership, `ClusterState::membership()`),
// and per node written the ids of the patterns in use that its name matches (computed at a `pattern_version()`).
// Results computed against another membership or version are refused with Stale, and the caller computes again.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vcore/pod.h"

namespace vcore {

class ClusterState;
struct TermInput;

// One member of a HyperNode: type "Node" or "HyperNode"; selector "exactMatch", "regexMatch" or "labelMatch".
struct HyperNodeMemberInput {
  std::string type;
  std::string selector;
  std::string value;  // the name (exactMatch) or the pattern (regexMatch)
  std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> labels;  // labelMatch: key, op, values
  std::vector<int32_t> slots;  // regexMatch: the live node slots whose names the pattern matches (RE2 search)
};

// What a node write knows of the regexMatch patterns: the ids (Topology::patterns()) its name matches, computed
// against the pattern table of `version`.
struct NodePatternMatches {
  uint64_t version = 0;
  std::vector<int32_t> ids;
};

struct HyperNodeInput {
  std::string name;
  int64_t tier = 0;
  std::string tier_name;  // "" when not given
  std::vector<HyperNodeMemberInput> members;
  double bandwidth_gbps = -1;  // vcore.io/bandwidth-gbps; -1 when not annotated
  double congestion = -1;      // vcore.io/congestion in [0, 1]; -1 when not annotated
};

// A sub-group partition layer of a gang: groups of `size` pods, each inside one domain of row <= max_row.
struct PartitionLayer {
  int64_t size = 1;
  int32_t max_row = 0;
};

struct DomainRequest {
  std::vector<int32_t> fit;  // per slot: how many of the gang's identical pods fit
  int64_t n_pods = 0;
  int32_t start_row = 0;  // the lowest row whose domains may enclose the gang
  int32_t limit_row = 0;  // the highest; n_rows() is the virtual root
  bool hard = true;       // hard: nothing outside [start_row, limit_row]; soft: fall back to the virtual root
  std::vector<PartitionLayer> layers;  // finest first; sizes nested (each divides the next), rows non-decreasing
  std::vector<int32_t> running;        // per slot the job's running pods (empty: none run yet)
  double bandwidth_weight = 0, congestion_weight = 0;  // link-state tie-break among equally tight domains
  int64_t tie_slack = 0;  // domains within this many units of the tightest count as tied for the link score
};

// One weighted resource of Volcano's HyperNode binpack score: the pod's request on a resource axis and its weight.
struct BinpackResource {
  int32_t axis = 0;
  int64_t request = 0;
  int64_t weight = 1;
};

struct DomainChoice {
  bool placed = false;
  int32_t domain = -1;          // the enclosing domain; -1 when placed under the virtual root
  int32_t row = -1;             // its row; n_rows() for the virtual root
  std::vector<int32_t> counts;  // per slot: pods placed
  std::string reason, message;
  int64_t best_capacity = 0;  // largest capacity among the domains tried (units of the coarsest layer, or pods)
};

class Topology {
 public:
  // -- reads ---------------------------------------------------------------------------------------------
  int32_t n_rows() const { return static_cast<int32_t>(tiers_.size()); }
  const std::vector<int64_t>& tiers() const { return tiers_; }  // tier number per row
  const std::vector<std::string>& tier_names() const { return tier_names_; }
  bool uses_levels() const { return !levels_.empty(); }
  const std::vector<std::string>& levels() const { return levels_; }  // highest first, as configured
  int32_t n_domains() const { return static_cast<int32_t>(domains_.size()); }
  bool domain_live(int32_t d) const { return domains_[static_cast<size_t>(d)].row >= 0; }
  const std::string& domain_name(int32_t d) const { return domains_[static_cast<size_t>(d)].name; }
  int32_t domain_row(int32_t d) const { return domains_[static_cast<size_t>(d)].row; }  // -1: free id
  int32_t domain_parent(int32_t d) const { return domains_[static_cast<size_t>(d)].parent; }
  double domain_bandwidth(int32_t d) const { return domains_[static_cast<size_t>(d)].bandwidth_gbps; }
  double domain_congestion(int32_t d) const { return domains_[static_cast<size_t>(d)].congestion; }
  int32_t find_domain(const std::string& name) const;  // -1 when absent
  const std::shared_ptr<std::vector<int32_t>>& node_topo() const { return node_topo_; }
  int32_t stride() const { return stride_; }
  int32_t at(int32_t row, int32_t slot) const {
    return slot < stride_ ? (*node_topo_)[static_cast<size_t>(row) * stride_ + slot] : -1;
  }
  int32_t node_leaf(int32_t slot) const {  // the node's lowest domain, -1 when it is in none
    return slot < static_cast<int32_t>(leaf_.size()) ? leaf_[static_cast<size_t>(slot)] : -1;
  }
  uint64_t generation() const { return generation_; }  // bumped by every change of the tree or of node_topo
  size_t native_bytes() const;
  // The distinct regexMatch patterns of the HyperNodes, sorted (a pattern's id is its index), and the version of
  // this table (it changes whenever the table does).
  const std::vector<std::string>& patterns() const { return patterns_; }
  uint64_t pattern_version() const { return pattern_version_; }

  // -- tree mutations (the caller holds the state's exclusive lock) ----------------------------------------
  // `membership`: the ClusterState::membership() the regexMatch members' slots were computed at (Stale when the
  // nodes changed since); empty when no member is a regexMatch.
  void set_hypernodes(ClusterState& s, const std::vector<HyperNodeInput>& all, std::optional<uint64_t> membership);
  void add_hypernode(ClusterState& s, const HyperNodeInput& hn, std::optional<uint64_t> membership);
  void update_hypernode(ClusterState& s, const HyperNodeInput& hn, std::optional<uint64_t> membership);
  void remove_hypernode(const ClusterState& s, const std::string& name);
  void set_levels(ClusterState& s, const std::vector<std::string>& keys);  // highest level first

  // -- node hooks (ClusterState calls them from add/update/remove_node) ------------------------------------
  struct NodePlan {  // what a node write will do to the topology, computed (and validated) before any write
    std::vector<int32_t> direct;  // HyperNodes selecting the node directly
    std::vector<int32_t> column;  // domain per row
    std::vector<int32_t> path;    // levels mode: label value id per level (lowest first); empty: not in the tree
  };
  // Stale when `patterns` were computed against another pattern table than the current one (a node written while no
  // pattern is in use needs none).
  NodePlan plan_node(const ClusterState& s, const std::string& name,
                     const std::vector<std::pair<int32_t, int32_t>>& labels, const NodePatternMatches& patterns) const;
  void commit_node(const ClusterState& s, int32_t slot, NodePlan&& plan);
  void clear_node(int32_t slot);

  // -- kernels (the caller holds the state's shared lock; nothing here touches Python) ----------------------
  DomainChoice place_gang(const ClusterState& s, const DomainRequest& in) const;
  // Volcano's network-topology-aware node score for a job whose running pods are `job_pods` per slot.
  std::vector<double> node_scores(const ClusterState& s, const std::vector<int32_t>& job_pods, int64_t job_tasks,
                                  double weight, const std::vector<uint8_t>& candidates) const;
  // Volcano's HyperNode binpack node score of a pod without a network topology (network-topology-aware, normal
  // pods): per tier from the lowest to the highest, weighted fading^(tier - 1), the weighted fullness of the
  // node's HyperNode of that tier with the pod ((used + request) / allocatable; 0 when it would overflow; 1 for a
  // node in no HyperNode of the tier), scaled to 0..100 * weight (Volcano's float64 score). Zeros without tiers or
  // resources.
  std::vector<double> binpack_scores(const ClusterState& s, const std::vector<BinpackResource>& resources,
                                     double fading, double weight) const;
  int32_t lca(int32_t a, int32_t b) const;  // lowest common domain; -1 when none (different roots)

 private:
  struct LabelRequirement {
    int32_t key;
    SelectorOp op;
    std::vector<int32_t> values;
  };
  struct Compiled {  // one HyperNode, compiled against the state's string table
    std::string name;
    int64_t tier = 0;
    std::string tier_name;
    std::vector<std::string> exact_nodes;
    std::vector<std::string> regex_nodes;                    // patterns
    std::vector<std::vector<LabelRequirement>> label_nodes;  // each a selector (requirements ANDed)
    std::vector<std::string> children;                       // HyperNode members
    double bandwidth_gbps = -1, congestion = -1;
    bool labels_match(const std::vector<std::pair<int32_t, int32_t>>& labels) const;  // any label member
  };
  struct Domain {
    std::string name;
    int32_t row = -1;
    int32_t parent = -1;
    double bandwidth_gbps = -1, congestion = -1;
  };
  struct Tree {  // everything derived from the HyperNode set
    std::vector<int64_t> tiers;
    std::vector<std::string> tier_names;
    std::vector<Domain> domains;
    std::vector<std::vector<int32_t>> children;
  };

  Compiled compile(ClusterState& s, const HyperNodeInput& in) const;
  // Validates references, single parents, cycles, tier order and tier names of `hns` (by id; nullptr = free id).
  Tree build_tree(const std::vector<const Compiled*>& hns) const;
  std::vector<const Compiled*> current() const;
  // Slots a HyperNode selects directly (`in` gives its regexMatch members' slots); every member must match a node.
  std::vector<int32_t> resolve(const ClusterState& s, const Compiled& c, const HyperNodeInput& in) const;
  // The domain column of a node directly in `direct`, or an Invalid naming `who` (conflict or non-nesting).
  static std::vector<int32_t> column_of(const std::vector<Domain>& domains, const std::vector<int64_t>& tiers,
                                        const std::vector<int32_t>& direct, const std::string& node,
                                        const std::string& who);
  struct Columns {
    std::vector<int32_t> topo, leaf;
  };
  // Every live slot's column under tree `t` with direct(slot) memberships (throws on a conflict, writes nothing).
  template <class Direct>
  Columns columns(const ClusterState& s, const Tree& t, const Direct& direct, const std::string& who) const;
  // The columns with HyperNode `id` selecting exactly `slots` (every other membership as it is).
  Columns columns_with(const ClusterState& s, const Tree& t, int32_t id, const std::vector<int32_t>& slots,
                       const std::string& who) const;
  void set_direct(int32_t id, const std::vector<int32_t>& slots);  // commit what columns_with assumed
  void install(Tree&& t, Columns&& c);
  void ensure_stride(int32_t slots);
  void index_hypernode(int32_t id, bool add);
  void index_patterns();  // rebuild patterns_ / pattern_hns_ from hns_
  void reset();

  // HyperNode mode
  std::vector<std::optional<Compiled>> hns_;  // by id (= domain id)
  std::unordered_map<std::string, int32_t> hn_id_;
  std::unordered_map<std::string, std::vector<int32_t>> exact_index_;  // node name -> HyperNodes listing it
  std::vector<int32_t> label_matchers_;                                // HyperNodes with labelMatch members
  std::vector<std::vector<int32_t>> direct_;                           // per slot, sorted HyperNode ids
  std::vector<std::string> patterns_;                                  // distinct regexMatch patterns, sorted
  std::vector<std::vector<int32_t>> pattern_hns_;                      // per pattern id: HyperNodes using it
  uint64_t pattern_version_ = 0;

  // Levels mode
  std::vector<std::string> levels_;                                   // as configured (highest first)
  std::vector<int32_t> level_keys_;                                   // interned, lowest first (row order)
  std::vector<std::unordered_map<uint64_t, int32_t>> level_domains_;  // per row: (parent + 1, value) -> domain

  // Derived state shared by both modes
  std::vector<int64_t> tiers_;
  std::vector<std::string> tier_names_;
  std::vector<Domain> domains_;
  std::vector<std::vector<int32_t>> children_;
  std::unordered_map<std::string, int32_t> domain_id_;
  std::shared_ptr<std::vector<int32_t>> node_topo_ = std::make_shared<std::vector<int32_t>>();
  int32_t stride_ = 0;
  std::vector<int32_t> leaf_;
  uint64_t generation_ = 0;
};

}  // namespace vcore
