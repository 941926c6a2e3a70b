// Topology: the HyperNode / label-level tree and its node columns (validation, membership, rebuilds).
#include "vcore/topology.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "vcore/cluster_state.h"
#include "vcore/errors.h"

namespace vcore {
namespace {

constexpr int32_t kMaxRows = 16;

std::string tier_text(int64_t tier) { return std::to_string(tier); }

SelectorOp label_op(const std::string& op, const std::string& where) {
  if (op == "In") return SelectorOp::kIn;
  if (op == "NotIn") return SelectorOp::kNotIn;
  if (op == "Exists") return SelectorOp::kExists;
  if (op == "DoesNotExist") return SelectorOp::kDoesNotExist;
  throw Invalid(where + ": unknown operator '" + op + "' (In, NotIn, Exists, DoesNotExist)");
}

// The value id of `key` in a node's sorted (key, value) labels, -1 when absent.
int32_t label_value(const std::vector<std::pair<int32_t, int32_t>>& labels, int32_t key) {
  auto it = std::lower_bound(labels.begin(), labels.end(), std::make_pair(key, std::numeric_limits<int32_t>::min()));
  return it != labels.end() && it->first == key ? it->second : -1;
}

void insert_sorted(std::vector<int32_t>& v, int32_t x) {
  auto it = std::lower_bound(v.begin(), v.end(), x);
  if (it == v.end() || *it != x) v.insert(it, x);
}

void erase_sorted(std::vector<int32_t>& v, int32_t x) {
  auto it = std::lower_bound(v.begin(), v.end(), x);
  if (it != v.end() && *it == x) v.erase(it);
}

// regexMatch members carry the slots the caller matched at `membership`; refuse them once the nodes have changed.
void check_membership(const ClusterState& s, const HyperNodeInput& in, std::optional<uint64_t> membership) {
  for (const auto& m : in.members) {
    if (m.selector != "regexMatch") continue;
    if (!membership)
      throw Invalid("HyperNode " + in.name +
                    ": regexMatch members need the node membership their slots were "
                    "matched at");
    if (*membership != s.membership())
      throw Stale("HyperNode " + in.name + ": the nodes changed since its regexMatch members were matched");
    return;
  }
}

}  // namespace

bool Topology::Compiled::labels_match(const std::vector<std::pair<int32_t, int32_t>>& labels) const {
  for (const auto& selector : label_nodes) {
    bool all = true;
    for (const auto& r : selector) {
      const int32_t v = label_value(labels, r.key);
      const bool listed = v >= 0 && std::find(r.values.begin(), r.values.end(), v) != r.values.end();
      switch (r.op) {
        case SelectorOp::kIn:
          all = listed;
          break;
        case SelectorOp::kNotIn:
          all = !listed;
          break;
        case SelectorOp::kExists:
          all = v >= 0;
          break;
        case SelectorOp::kDoesNotExist:
          all = v < 0;
          break;
        default:
          all = false;
      }
      if (!all) break;
    }
    if (all) return true;
  }
  return false;
}

int32_t Topology::find_domain(const std::string& name) const {
  auto it = domain_id_.find(name);
  return it == domain_id_.end() ? -1 : it->second;
}

size_t Topology::native_bytes() const {
  size_t bytes = node_topo_->capacity() * sizeof(int32_t) + leaf_.capacity() * sizeof(int32_t);
  bytes += domains_.capacity() * sizeof(Domain) + direct_.capacity() * sizeof(direct_[0]);
  for (const auto& d : direct_) bytes += d.capacity() * sizeof(int32_t);
  return bytes;
}

// -- compilation and the tree ---------------------------------------------------------------------------------

Topology::Compiled Topology::compile(ClusterState& s, const HyperNodeInput& in) const {
  const std::string where = "HyperNode " + in.name;
  if (in.name.empty()) throw Invalid("HyperNode: metadata.name must not be empty");
  if (in.tier < 0 || in.tier > std::numeric_limits<int32_t>::max())
    throw Invalid(where + ": spec.tier must be a non-negative integer, got " + std::to_string(in.tier));
  if (in.members.empty()) throw Invalid(where + ": spec.members must not be empty");
  if (in.congestion > 1) throw Invalid(where + ": vcore.io/congestion must be in [0, 1]");
  Compiled c;
  c.name = in.name;
  c.tier = in.tier;
  c.tier_name = in.tier_name;
  c.bandwidth_gbps = in.bandwidth_gbps;
  c.congestion = in.congestion;
  for (size_t i = 0; i < in.members.size(); ++i) {
    const auto& m = in.members[i];
    const std::string at = where + ": spec.members[" + std::to_string(i) + "]";
    if (m.type == "HyperNode") {
      if (m.selector != "exactMatch")
        throw Invalid(at + ": a HyperNode member is selected by exactMatch only (as Volcano), got " + m.selector);
      if (m.value.empty()) throw Invalid(at + ".selector.exactMatch.name must not be empty");
      c.children.push_back(m.value);
    } else if (m.type == "Node") {
      if (m.selector == "exactMatch") {
        if (m.value.empty()) throw Invalid(at + ".selector.exactMatch.name must not be empty");
        c.exact_nodes.push_back(m.value);
      } else if (m.selector == "regexMatch") {
        if (m.value.empty()) throw Invalid(at + ".selector.regexMatch.pattern must not be empty");
        c.regex_nodes.push_back(m.value);
      } else if (m.selector == "labelMatch") {
        if (m.labels.empty()) throw Invalid(at + ".selector.labelMatch: an empty selector matches no node");
        std::vector<LabelRequirement> selector;
        for (const auto& [key, op, values] : m.labels) {
          const std::string rat = at + ".selector.labelMatch[" + key + "]";
          if (key.empty()) throw Invalid(at + ".selector.labelMatch: empty label key");
          LabelRequirement r{s.intern_string(key), label_op(op, rat + ".operator"), {}};
          if ((r.op == SelectorOp::kIn || r.op == SelectorOp::kNotIn) && values.empty())
            throw Invalid(rat + ".values: " + op + " needs at least one value");
          if ((r.op == SelectorOp::kExists || r.op == SelectorOp::kDoesNotExist) && !values.empty())
            throw Invalid(rat + ".values: " + op + " takes no values");
          for (const auto& v : values) r.values.push_back(s.intern_string(v));
          selector.push_back(std::move(r));
        }
        c.label_nodes.push_back(std::move(selector));
      } else {
        throw Invalid(at + ".selector: unknown selector '" + m.selector + "' (exactMatch, regexMatch, labelMatch)");
      }
    } else {
      throw Invalid(at + ".type: unknown member type '" + m.type + "' (Node, HyperNode)");
    }
  }
  return c;
}

std::vector<const Topology::Compiled*> Topology::current() const {
  std::vector<const Compiled*> out(hns_.size(), nullptr);
  for (size_t i = 0; i < hns_.size(); ++i)
    if (hns_[i]) out[i] = &*hns_[i];
  return out;
}

Topology::Tree Topology::build_tree(const std::vector<const Compiled*>& hns) const {
  Tree t;
  std::unordered_map<std::string, int32_t> id_of;
  for (size_t i = 0; i < hns.size(); ++i)
    if (hns[i]) id_of.emplace(hns[i]->name, static_cast<int32_t>(i));
  // Tiers and their names: one name per tier, one tier per name.
  std::map<int64_t, std::pair<std::string, std::string>> named;  // tier -> (name, HyperNode that named it)
  std::map<std::string, std::pair<int64_t, std::string>> tier_of_name;
  for (const Compiled* h : hns) {
    if (!h) continue;
    auto& entry = named[h->tier];
    if (h->tier_name.empty()) continue;
    if (!entry.first.empty() && entry.first != h->tier_name)
      throw Invalid("HyperNode " + h->name + ": spec.tierName '" + h->tier_name + "' but HyperNode " + entry.second +
                    " names tier " + tier_text(h->tier) + " '" + entry.first + "'");
    entry = {h->tier_name, h->name};
    auto [it, fresh] = tier_of_name.emplace(h->tier_name, std::make_pair(h->tier, h->name));
    if (!fresh && it->second.first != h->tier)
      throw Invalid("HyperNode " + h->name + ": spec.tierName '" + h->tier_name + "' is tier " +
                    tier_text(it->second.first) + " in HyperNode " + it->second.second + " but tier " +
                    tier_text(h->tier) + " here");
  }
  if (static_cast<int32_t>(named.size()) > kMaxRows)
    throw Invalid("HyperNodes: at most " + std::to_string(kMaxRows) + " distinct tiers are supported, got " +
                  std::to_string(named.size()));
  std::map<int64_t, int32_t> row_of;
  for (const auto& [tier, name] : named) {
    row_of[tier] = static_cast<int32_t>(t.tiers.size());
    t.tiers.push_back(tier);
    t.tier_names.push_back(name.first);
  }
  // Parents: a HyperNode is a member of at most one HyperNode.
  t.domains.resize(hns.size());
  t.children.resize(hns.size());
  for (size_t i = 0; i < hns.size(); ++i) {
    const Compiled* h = hns[i];
    if (!h) continue;
    Domain& d = t.domains[i];
    d.name = h->name;
    d.row = row_of.at(h->tier);
    d.bandwidth_gbps = h->bandwidth_gbps;
    d.congestion = h->congestion;
  }
  std::vector<std::string> parent_name(hns.size());
  for (size_t i = 0; i < hns.size(); ++i) {
    const Compiled* h = hns[i];
    if (!h) continue;
    std::set<std::string> seen;
    for (const auto& child : h->children) {
      if (!seen.insert(child).second) continue;
      if (child == h->name) throw Invalid("HyperNode " + h->name + ": lists itself as a member (a cycle)");
      // A member HyperNode not (yet) there is no error: it joins when it is added, as Volcano's cache sets a
      // missing member's parent first (HyperNodesInfo.addChild).
      auto it = id_of.find(child);
      if (it == id_of.end()) continue;
      const int32_t c = it->second;
      if (t.domains[c].parent >= 0)
        throw Invalid("HyperNode " + child + ": is a member of both HyperNode " + parent_name[c] + " and HyperNode " +
                      h->name + " (a HyperNode has one parent)");
      t.domains[c].parent = static_cast<int32_t>(i);
      parent_name[c] = h->name;
      t.children[i].push_back(c);
    }
  }
  // Cycles, then tier order (a member's tier is strictly lower than its HyperNode's).
  std::vector<uint8_t> state(hns.size(), 0);  // 0 unvisited, 1 on the current walk, 2 done
  for (size_t i = 0; i < hns.size(); ++i) {
    if (!hns[i] || state[i]) continue;
    std::vector<int32_t> walk;
    int32_t x = static_cast<int32_t>(i);
    while (x >= 0 && state[x] == 0) {
      state[x] = 1;
      walk.push_back(x);
      x = t.domains[x].parent;
    }
    if (x >= 0 && state[x] == 1) {
      std::string cycle = hns[x]->name;
      for (int32_t y = t.domains[x].parent; y != x; y = t.domains[y].parent) cycle = hns[y]->name + " -> " + cycle;
      throw Invalid("HyperNode " + hns[x]->name + ": the HyperNodes form a cycle (" + hns[x]->name + " -> " + cycle +
                    ")");
    }
    for (int32_t y : walk) state[y] = 2;
  }
  for (size_t i = 0; i < hns.size(); ++i) {
    if (!hns[i] || t.domains[i].parent < 0) continue;
    const Compiled* p = hns[t.domains[i].parent];
    if (hns[i]->tier >= p->tier)
      throw Invalid("HyperNode " + p->name + " (tier " + tier_text(p->tier) + "): member HyperNode " + hns[i]->name +
                    " has tier " + tier_text(hns[i]->tier) + "; a member's tier must be lower than its HyperNode's");
  }
  return t;
}

// A member that matches no node leaves the HyperNode without that node, as Volcano's member selection does: the
// HyperNode is kept (empty when no member matches) and a node added or relabeled later joins it.
std::vector<int32_t> Topology::resolve(const ClusterState& s, const Compiled& c, const HyperNodeInput& in) const {
  const std::string where = "HyperNode " + c.name;
  std::vector<int32_t> slots;
  for (const auto& name : c.exact_nodes) {
    const int32_t slot = s.node_index(name);
    if (slot >= 0) slots.push_back(slot);
  }
  const int32_t n = s.n_slots();
  for (size_t i = 0; i < in.members.size(); ++i) {
    const HyperNodeMemberInput& m = in.members[i];
    if (m.type != "Node" || m.selector != "regexMatch") {
      if (!m.slots.empty())
        throw Invalid(where + ": spec.members[" + std::to_string(i) + "]: node slots are given for regexMatch only");
      continue;
    }
    for (int32_t slot : m.slots) {
      if (slot < 0 || slot >= n || !s.is_live(slot))
        throw Invalid(where + ": spec.members[" + std::to_string(i) + "]: regexMatch slot " + std::to_string(slot) +
                      " is not a live node");
      slots.push_back(slot);
    }
  }
  for (const auto& selector : c.label_nodes) {
    Compiled one;
    one.label_nodes.push_back(selector);
    for (int32_t slot = 0; slot < n; ++slot)
      if (s.is_live(slot) && one.labels_match(s.labels()[slot])) slots.push_back(slot);
  }
  std::sort(slots.begin(), slots.end());
  slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
  return slots;
}

std::vector<int32_t> Topology::column_of(const std::vector<Domain>& domains, const std::vector<int64_t>& tiers,
                                         const std::vector<int32_t>& direct, const std::string& node,
                                         const std::string& who) {
  const int32_t rows = static_cast<int32_t>(tiers.size());
  // "HyperNode x: node n would be ..." for a HyperNode write; "node n: would be ..." for the node's own.
  const std::string subject = who == "node " + node ? who + ":" : who + ": node " + node;
  std::vector<int32_t> col(static_cast<size_t>(rows), -1);
  for (int32_t h : direct) {
    for (int32_t a = h; a >= 0; a = domains[a].parent) {
      int32_t& cell = col[static_cast<size_t>(domains[a].row)];
      if (cell == -1) {
        cell = a;
      } else if (cell != a) {
        throw Invalid(subject + " would be in HyperNodes " + domains[cell].name + " and " + domains[a].name +
                      " of tier row " + std::to_string(domains[a].row) +
                      " (a node belongs to at most one HyperNode per tier)");
      }
    }
  }
  // The node's domains must form one chain: the ancestors of its lowest domain, and nothing else.
  int32_t low = 0;
  while (low < rows && col[low] < 0) ++low;
  if (low < rows) {
    std::vector<int32_t> chain(static_cast<size_t>(rows), -1);
    for (int32_t a = col[low]; a >= 0; a = domains[a].parent) chain[domains[a].row] = a;
    for (int32_t r = low; r < rows; ++r)
      if (chain[r] != col[r])
        throw Invalid(subject + " would be in HyperNode " + domains[col[r]].name +
                      ", which does not contain its HyperNode " + domains[col[low]].name +
                      " (a node's HyperNodes must nest)");
  }
  return col;
}

template <class Direct>
Topology::Columns Topology::columns(const ClusterState& s, const Tree& t, const Direct& direct,
                                    const std::string& who) const {
  const int32_t rows = static_cast<int32_t>(t.tiers.size());
  const int32_t n = s.n_slots();
  const int32_t stride = std::max(stride_, n);
  Columns out;
  out.topo.assign(static_cast<size_t>(rows) * stride, -1);
  out.leaf.assign(static_cast<size_t>(stride), -1);
  for (int32_t slot = 0; slot < n; ++slot) {
    if (!s.is_live(slot)) continue;
    const std::vector<int32_t>& d = direct(slot);
    if (d.empty()) continue;
    const auto col = column_of(t.domains, t.tiers, d, s.names()[slot], who);
    for (int32_t r = 0; r < rows; ++r) {
      out.topo[static_cast<size_t>(r) * stride + slot] = col[r];
      if (out.leaf[slot] < 0 && col[r] >= 0) out.leaf[slot] = col[r];
    }
  }
  return out;
}

Topology::Columns Topology::columns_with(const ClusterState& s, const Tree& t, int32_t id,
                                         const std::vector<int32_t>& slots, const std::string& who) const {
  std::vector<uint8_t> selected(static_cast<size_t>(s.n_slots()), 0);
  for (int32_t slot : slots) selected[slot] = 1;
  std::vector<int32_t> scratch;
  const auto direct = [&](int32_t slot) -> const std::vector<int32_t>& {
    scratch = slot < static_cast<int32_t>(direct_.size()) ? direct_[slot] : std::vector<int32_t>{};
    erase_sorted(scratch, id);
    if (selected[slot]) insert_sorted(scratch, id);
    return scratch;
  };
  return columns(s, t, direct, who);
}

void Topology::set_direct(int32_t id, const std::vector<int32_t>& slots) {
  for (auto& d : direct_) erase_sorted(d, id);
  for (int32_t slot : slots) {
    if (slot >= static_cast<int32_t>(direct_.size())) direct_.resize(static_cast<size_t>(slot) + 1);
    insert_sorted(direct_[slot], id);
  }
}

void Topology::install(Tree&& t, Columns&& c) {
  tiers_ = std::move(t.tiers);
  tier_names_ = std::move(t.tier_names);
  domains_ = std::move(t.domains);
  children_ = std::move(t.children);
  domain_id_.clear();
  for (size_t d = 0; d < domains_.size(); ++d)
    if (domains_[d].row >= 0) domain_id_.emplace(domains_[d].name, static_cast<int32_t>(d));
  stride_ = static_cast<int32_t>(c.leaf.size());
  node_topo_ = std::make_shared<std::vector<int32_t>>(std::move(c.topo));
  leaf_ = std::move(c.leaf);
  if (direct_.size() < leaf_.size()) direct_.resize(leaf_.size());
  ++generation_;
}

void Topology::index_hypernode(int32_t id, bool add) {
  const Compiled& c = *hns_[id];
  for (const auto& name : c.exact_nodes) {
    auto& ids = exact_index_[name];
    if (add) {
      insert_sorted(ids, id);
    } else {
      erase_sorted(ids, id);
      if (ids.empty()) exact_index_.erase(name);
    }
  }
  if (!c.label_nodes.empty()) {
    if (add)
      insert_sorted(label_matchers_, id);
    else
      erase_sorted(label_matchers_, id);
  }
}

void Topology::index_patterns() {
  std::map<std::string, std::vector<int32_t>> users;
  for (size_t id = 0; id < hns_.size(); ++id)
    if (hns_[id])
      for (const auto& pattern : hns_[id]->regex_nodes) insert_sorted(users[pattern], static_cast<int32_t>(id));
  std::vector<std::string> patterns;
  pattern_hns_.clear();
  for (auto& [pattern, ids] : users) {
    patterns.push_back(pattern);
    pattern_hns_.push_back(std::move(ids));
  }
  if (patterns != patterns_) {
    patterns_ = std::move(patterns);
    ++pattern_version_;
  }
}

void Topology::reset() {
  hns_.clear();
  hn_id_.clear();
  exact_index_.clear();
  label_matchers_.clear();
  for (auto& d : direct_) d.clear();
  levels_.clear();
  level_keys_.clear();
  level_domains_.clear();
  index_patterns();
}

// -- HyperNode mutations -------------------------------------------------------------------------------------

void Topology::set_hypernodes(ClusterState& s, const std::vector<HyperNodeInput>& all,
                              std::optional<uint64_t> membership) {
  if (uses_levels())
    throw Invalid(
        "HyperNodes: the topology is defined by node label levels; clear them first (set_topology_levels([]))");
  for (const auto& h : all) check_membership(s, h, membership);
  std::vector<const HyperNodeInput*> order;
  for (const auto& h : all) order.push_back(&h);
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i]->name == order[i - 1]->name) throw Invalid("HyperNode " + order[i]->name + ": listed twice");
  std::vector<std::optional<Compiled>> fresh;
  for (const auto* h : order) fresh.emplace_back(compile(s, *h));
  std::vector<const Compiled*> ptrs;
  for (const auto& c : fresh) ptrs.push_back(&*c);
  Tree t = build_tree(ptrs);
  std::vector<std::vector<int32_t>> direct(static_cast<size_t>(s.n_slots()));
  for (size_t i = 0; i < fresh.size(); ++i)
    for (int32_t slot : resolve(s, *fresh[i], *order[i])) direct[slot].push_back(static_cast<int32_t>(i));
  Columns c = columns(s, t, [&](int32_t slot) -> const std::vector<int32_t>& { return direct[slot]; }, "HyperNodes");
  // Validated: commit.
  reset();
  hns_ = std::move(fresh);
  for (size_t i = 0; i < hns_.size(); ++i) {
    hn_id_.emplace(hns_[i]->name, static_cast<int32_t>(i));
    index_hypernode(static_cast<int32_t>(i), true);
  }
  index_patterns();
  direct.resize(std::max(direct.size(), c.leaf.size()));
  direct_ = std::move(direct);
  install(std::move(t), std::move(c));
}

void Topology::add_hypernode(ClusterState& s, const HyperNodeInput& in, std::optional<uint64_t> membership) {
  if (uses_levels())
    throw Invalid("HyperNode " + in.name + ": the topology is defined by node label levels; clear them first");
  if (hn_id_.count(in.name)) throw Invalid("HyperNode " + in.name + ": already exists (use update_hypernode)");
  check_membership(s, in, membership);
  Compiled c = compile(s, in);
  int32_t id = 0;
  while (id < static_cast<int32_t>(hns_.size()) && hns_[id]) ++id;
  std::vector<const Compiled*> ptrs = current();
  if (id == static_cast<int32_t>(ptrs.size())) ptrs.push_back(nullptr);
  ptrs[id] = &c;
  Tree t = build_tree(ptrs);
  const std::vector<int32_t> slots = resolve(s, c, in);
  Columns cols = columns_with(s, t, id, slots, "HyperNode " + in.name);
  if (id == static_cast<int32_t>(hns_.size())) hns_.emplace_back();
  hns_[id] = std::move(c);
  hn_id_.emplace(in.name, id);
  index_hypernode(id, true);
  index_patterns();
  set_direct(id, slots);
  install(std::move(t), std::move(cols));
}

void Topology::update_hypernode(ClusterState& s, const HyperNodeInput& in, std::optional<uint64_t> membership) {
  auto it = hn_id_.find(in.name);
  if (it == hn_id_.end()) throw NotFound("HyperNode " + in.name + ": not found (use add_hypernode)");
  check_membership(s, in, membership);
  const int32_t id = it->second;
  Compiled c = compile(s, in);
  std::vector<const Compiled*> ptrs = current();
  ptrs[id] = &c;
  Tree t = build_tree(ptrs);
  const std::vector<int32_t> slots = resolve(s, c, in);
  Columns cols = columns_with(s, t, id, slots, "HyperNode " + in.name);
  index_hypernode(id, false);
  hns_[id] = std::move(c);
  index_hypernode(id, true);
  index_patterns();
  set_direct(id, slots);
  install(std::move(t), std::move(cols));
}

void Topology::remove_hypernode(const ClusterState& s, const std::string& name) {
  auto it = hn_id_.find(name);
  if (it == hn_id_.end()) throw NotFound("HyperNode " + name + ": not found");
  const int32_t id = it->second;
  // A member HyperNode may go first: its parent keeps listing it (a member not there, which joins again when it is
  // added), and its own members become roots until then.
  std::vector<const Compiled*> ptrs = current();
  ptrs[id] = nullptr;
  Tree t = build_tree(ptrs);
  Columns cols = columns_with(s, t, id, {}, "HyperNode " + name);
  index_hypernode(id, false);
  hns_[id].reset();
  hn_id_.erase(it);
  set_direct(id, {});
  while (!hns_.empty() && !hns_.back()) hns_.pop_back();
  index_patterns();
  install(std::move(t), std::move(cols));
}

// -- label levels --------------------------------------------------------------------------------------------

void Topology::set_levels(ClusterState& s, const std::vector<std::string>& keys) {
  if (!hn_id_.empty() && !keys.empty())
    throw Invalid(
        "topology levels: the cluster has HyperNodes; remove them first (levels and HyperNodes exclude each other)");
  if (static_cast<int32_t>(keys.size()) > kMaxRows)
    throw Invalid("topology levels: at most " + std::to_string(kMaxRows) + " levels are supported");
  if (keys.empty() && !uses_levels()) return;  // nothing to clear (HyperNodes, if any, stay)
  std::set<std::string> seen;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i].empty()) throw Invalid("topology levels[" + std::to_string(i) + "]: empty label key");
    if (!seen.insert(keys[i]).second)
      throw Invalid("topology levels[" + std::to_string(i) + "]: '" + keys[i] + "' listed twice");
  }
  reset();
  levels_ = keys;
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) level_keys_.push_back(s.intern_string(*it));
  level_domains_.assign(keys.size(), {});
  Tree t;
  for (size_t r = 0; r < keys.size(); ++r) {
    t.tiers.push_back(static_cast<int64_t>(r) + 1);
    t.tier_names.push_back(keys[keys.size() - 1 - r]);
  }
  Columns empty;
  empty.topo.assign(static_cast<size_t>(keys.size()) * std::max(stride_, s.n_slots()), -1);
  empty.leaf.assign(static_cast<size_t>(std::max(stride_, s.n_slots())), -1);
  install(std::move(t), std::move(empty));
  for (int32_t slot = 0; slot < s.n_slots(); ++slot)
    if (s.is_live(slot)) commit_node(s, slot, plan_node(s, s.names()[slot], s.labels()[slot], {}));
}

// -- node hooks ----------------------------------------------------------------------------------------------

Topology::NodePlan Topology::plan_node(const ClusterState& s, const std::string& name,
                                       const std::vector<std::pair<int32_t, int32_t>>& labels,
                                       const NodePatternMatches& patterns) const {
  (void)s;
  NodePlan plan;
  if (uses_levels()) {
    for (int32_t key : level_keys_) {
      const int32_t v = label_value(labels, key);
      if (v < 0) return NodePlan{};  // a node without every level label is not in the topology (as Kueue)
      plan.path.push_back(v);
    }
    return plan;
  }
  if (hn_id_.empty()) return plan;
  if (!patterns_.empty()) {
    if (patterns.version != pattern_version_)
      throw Stale("node " + name + ": the HyperNodes' regexMatch patterns changed since its name was matched");
    for (int32_t id : patterns.ids) {
      if (id < 0 || id >= static_cast<int32_t>(patterns_.size()))
        throw Invalid("node " + name + ": regexMatch pattern id " + std::to_string(id) + " out of range");
      for (int32_t h : pattern_hns_[static_cast<size_t>(id)]) insert_sorted(plan.direct, h);
    }
  }
  auto it = exact_index_.find(name);
  if (it != exact_index_.end())
    for (int32_t h : it->second) insert_sorted(plan.direct, h);
  for (int32_t m : label_matchers_)
    if (hns_[m]->labels_match(labels)) insert_sorted(plan.direct, m);
  if (!plan.direct.empty()) plan.column = column_of(domains_, tiers_, plan.direct, name, "node " + name);
  return plan;
}

void Topology::ensure_stride(int32_t slots) {
  if (slots <= stride_) return;
  const int32_t stride = std::max({slots, stride_ * 2, 64});
  auto fresh = std::make_shared<std::vector<int32_t>>(static_cast<size_t>(n_rows()) * stride, -1);
  for (int32_t r = 0; r < n_rows(); ++r)
    std::copy(node_topo_->begin() + static_cast<ptrdiff_t>(r) * stride_,
              node_topo_->begin() + static_cast<ptrdiff_t>(r + 1) * stride_,
              fresh->begin() + static_cast<ptrdiff_t>(r) * stride);
  node_topo_ = std::move(fresh);
  leaf_.resize(static_cast<size_t>(stride), -1);
  direct_.resize(static_cast<size_t>(stride));
  stride_ = stride;
  ++generation_;
}

void Topology::commit_node(const ClusterState& s, int32_t slot, NodePlan&& plan) {
  ensure_stride(slot + 1);
  const int32_t rows = n_rows();
  if (uses_levels() && !plan.path.empty()) {
    plan.column.assign(static_cast<size_t>(rows), -1);
    int32_t parent = -1;
    for (int32_t r = rows - 1; r >= 0; --r) {  // from the highest level down, so a domain's id names its path
      const uint64_t key =
          (static_cast<uint64_t>(static_cast<uint32_t>(parent + 1)) << 32) | static_cast<uint32_t>(plan.path[r]);
      auto [it, fresh] = level_domains_[r].emplace(key, n_domains());
      if (fresh) {
        Domain d;
        d.name = (parent < 0 ? "" : domains_[parent].name + "/") + s.string_name(plan.path[r]);
        d.row = r;
        d.parent = parent;
        domain_id_.emplace(d.name, n_domains());
        domains_.push_back(std::move(d));
        children_.emplace_back();
        if (parent >= 0) children_[parent].push_back(it->second);
        ++generation_;
      }
      parent = it->second;
      plan.column[r] = parent;
    }
  }
  leaf_[slot] = -1;
  for (int32_t r = 0; r < rows; ++r) {
    const int32_t d = plan.column.empty() ? -1 : plan.column[r];
    (*node_topo_)[static_cast<size_t>(r) * stride_ + slot] = d;
    if (leaf_[slot] < 0) leaf_[slot] = d;
  }
  direct_[slot] = std::move(plan.direct);
}

void Topology::clear_node(int32_t slot) {
  if (slot >= stride_) return;
  for (int32_t r = 0; r < n_rows(); ++r) (*node_topo_)[static_cast<size_t>(r) * stride_ + slot] = -1;
  leaf_[slot] = -1;
  direct_[slot].clear();
}

int32_t Topology::lca(int32_t a, int32_t b) const {
  while (a >= 0 && b >= 0 && a != b) {
    const int32_t ra = domains_[a].row, rb = domains_[b].row;
    if (ra <= rb) a = domains_[a].parent;
    if (rb <= ra) b = domains_[b].parent;
  }
  return a == b ? a : -1;
}

}  // namespace vcore
