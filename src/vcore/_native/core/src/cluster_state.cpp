// ClusterState: validation, interning and the accounting of nodes and bound pods.
#include "vcore/cluster_state.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <tuple>

#include "vcore/errors.h"

namespace vcore {
namespace {

std::atomic<uint64_t> next_state_id{1};

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// kube-scheduler's IsScalarResourceName: extended, hugepages, prefixed-native and attachable-volume resources.
bool is_prefixed_native(const std::string& n) { return n.find("kubernetes.io/") != std::string::npos; }
bool is_extended(const std::string& n) {
  const bool native = n.find('/') == std::string::npos || is_prefixed_native(n);
  return !native && !starts_with(n, "requests.");
}
bool is_scalar(const std::string& n) {
  return is_extended(n) || starts_with(n, "hugepages-") || is_prefixed_native(n) ||
         starts_with(n, "attachable-volumes-");
}

// strconv.ParseInt(s, 10, 64): optional sign, decimal digits, must fit int64.
std::optional<int64_t> parse_int64(const std::string& s) {
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i == s.size()) return std::nullopt;
  unsigned long long magnitude = 0;
  const unsigned long long limit = negative
                                       ? static_cast<unsigned long long>(std::numeric_limits<int64_t>::max()) + 1ULL
                                       : static_cast<unsigned long long>(std::numeric_limits<int64_t>::max());
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    const unsigned long long digit = static_cast<unsigned long long>(s[i] - '0');
    if (magnitude > (limit - digit) / 10) return std::nullopt;
    magnitude = magnitude * 10 + digit;
  }
  if (negative) return magnitude == limit ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(magnitude);
  return static_cast<int64_t>(magnitude);
}

TaintEffect parse_effect(const std::string& effect, bool allow_any, const std::string& where) {
  if (effect == "NoSchedule") return TaintEffect::kNoSchedule;
  if (effect == "PreferNoSchedule") return TaintEffect::kPreferNoSchedule;
  if (effect == "NoExecute") return TaintEffect::kNoExecute;
  if (allow_any && effect.empty()) return TaintEffect::kAny;
  throw Invalid(where + ": unknown taint effect '" + effect + "'");
}

SelectorOp parse_op(const std::string& op, const std::string& where) {
  if (op == "In") return SelectorOp::kIn;
  if (op == "NotIn") return SelectorOp::kNotIn;
  if (op == "Exists") return SelectorOp::kExists;
  if (op == "DoesNotExist") return SelectorOp::kDoesNotExist;
  if (op == "Gt") return SelectorOp::kGt;
  if (op == "Lt") return SelectorOp::kLt;
  throw Invalid(where + ": unknown operator '" + op + "'");
}

}  // namespace

void SharedMatrix::reshape(int32_t new_row_capacity, int32_t new_stride) {
  auto fresh = std::make_shared<std::vector<int64_t>>(static_cast<size_t>(new_row_capacity) * new_stride, 0);
  for (int32_t r = 0; r < rows; ++r)
    std::copy(row(r), row(r) + stride, fresh->data() + static_cast<size_t>(r) * new_stride);
  data = std::move(fresh);
  row_capacity = new_row_capacity;
  stride = new_stride;
}

ClusterState::ClusterState() : id_(next_state_id.fetch_add(1)) {
  nonzero_.reshape(2, 0);
  nonzero_.rows = 2;
  for (const char* name : {"cpu", "memory", "ephemeral-storage", "pods"}) resource_axis(name);
  any_host_ip_ = intern_string("0.0.0.0");
}

int32_t ClusterState::resource_axis(const std::string& name) {
  const int32_t existing = resources_.find(name);
  if (existing >= 0) return existing;
  if (name.empty()) throw Invalid("resource name must not be empty");
  const int32_t axis = resources_.intern(name);
  scalar_.push_back(is_scalar(name) ? 1 : 0);
  extended_.push_back(is_extended(name) ? 1 : 0);
  max_alloc_.push_back(0);
  alloc_total_.push_back(0);
  req_total_.push_back(0);
  for (SharedMatrix* m : {&alloc_, &req_}) {
    if (m->rows == m->row_capacity) m->reshape(std::max(8, m->row_capacity * 2), m->stride);
    ++m->rows;
  }
  ++generation_;
  return axis;
}

int32_t ClusterState::intern_string(const std::string& s) {
  const int32_t id = strings_.intern(s);
  if (static_cast<size_t>(id) == string_ints_.size()) string_ints_.push_back(parse_int64(s));
  return id;
}

void ClusterState::ensure_slot_capacity(int32_t slots) {
  if (slots <= alloc_.stride) return;
  const int32_t stride = std::max({slots, alloc_.stride * 2, 64});
  for (SharedMatrix* m : {&alloc_, &req_, &nonzero_}) m->reshape(std::max(m->row_capacity, m->rows), stride);
  auto live = std::make_shared<std::vector<uint8_t>>(*live_);
  live->reserve(static_cast<size_t>(stride));
  live_ = std::move(live);
  ++generation_;
}

ClusterState::ParsedNode ClusterState::parse_node(const NodeInput& node) {
  const std::string where = "node " + node.name;
  if (node.name.empty()) throw Invalid("node: metadata.name must not be empty");
  ParsedNode parsed;
  for (const auto& [name, amount] : node.allocatable) {
    if (amount < 0) throw Invalid(where + ": status.allocatable." + name + ": must not be negative");
    if (name.empty()) throw Invalid(where + ": status.allocatable: empty resource name");
  }
  for (const auto& [key, value, effect] : node.taints) {
    if (key.empty()) throw Invalid(where + ": spec.taints: key must not be empty");
    parse_effect(effect, false, where + ": spec.taints[" + key + "].effect");
  }
  gpus_.validate(node.name, node.gpus);
  DeviceTable::validate_numa(node.name, node.numa_cpu);
  for (const auto& [names, size] : node.images)
    if (size < 0) throw Invalid(where + ": status.images: sizeBytes must not be negative");
  // Validation done; interning below only grows lookup tables.
  for (const auto& [key, value] : node.labels) parsed.labels.emplace_back(intern_string(key), intern_string(value));
  std::sort(parsed.labels.begin(), parsed.labels.end());
  for (size_t i = 1; i < parsed.labels.size(); ++i)
    if (parsed.labels[i].first == parsed.labels[i - 1].first)
      throw Invalid(where + ": metadata.labels: duplicate key '" + strings_.name(parsed.labels[i].first) + "'");
  for (const auto& [name, amount] : node.allocatable) parsed.allocatable.emplace_back(resource_axis(name), amount);
  for (const auto& [key, value, effect] : node.taints)
    parsed.taints.push_back({intern_string(key), intern_string(value), parse_effect(effect, false, where)});
  for (const auto& [names, size] : node.images) {
    std::vector<int32_t> ids;
    for (const auto& name : names) ids.push_back(intern_string(name));
    parsed.images.emplace_back(std::move(ids), size);
  }
  return parsed;
}

void ClusterState::check_allocatable_total(int32_t slot, const NodeInput& node) const {
  for (const auto& [name, amount] : node.allocatable) {
    const int32_t axis = resources_.find(name);  // a resource no node has yet: a total of 0
    const int64_t others = axis < 0 ? 0 : alloc_total_[axis] - (slot >= 0 ? alloc_.row(axis)[slot] : 0);
    if (amount > kMaxTotal - others)
      throw Invalid("node " + node.name + ": status.allocatable." + name + ": the cluster's total " + name +
                    " would exceed 2**61 (vcore's bound on a cluster total)");
  }
}

void ClusterState::write_node(int32_t slot, const NodeInput& node, ParsedNode&& parsed) {
  for (int32_t r = 0; r < alloc_.rows; ++r) {
    alloc_total_[r] -= alloc_.row(r)[slot];
    alloc_.row(r)[slot] = 0;
  }
  for (const auto& [axis, amount] : parsed.allocatable) {
    alloc_total_[axis] += amount;
    alloc_.row(axis)[slot] = amount;
    max_alloc_[axis] = std::max(max_alloc_[axis], amount);
  }
  prefer_taints_[slot] = std::any_of(parsed.taints.begin(), parsed.taints.end(),
                                     [](const Taint& t) { return t.effect == TaintEffect::kPreferNoSchedule; });
  for (auto& [key, column] : label_columns_) column.set(slot, -1);
  for (const auto& [key, value] : parsed.labels) {
    auto column = label_columns_.find(key);
    if (column != label_columns_.end()) column->second.set(slot, value);
  }
  blocking_taints_[slot] = std::any_of(parsed.taints.begin(), parsed.taints.end(), [](const Taint& t) {
    return t.effect == TaintEffect::kNoSchedule || t.effect == TaintEffect::kNoExecute;
  });
  for (const auto& t : node_taints(slot)) n_prefer_taints_ -= t.effect == TaintEffect::kPreferNoSchedule;
  for (const auto& t : parsed.taints) n_prefer_taints_ += t.effect == TaintEffect::kPreferNoSchedule;
  taint_set_[slot] = intern_taint_set(std::move(parsed.taints));
  labels_[slot] = std::move(parsed.labels);
  unschedulable_[slot] = node.unschedulable ? 1 : 0;
  gpus_.set_node(slot, node.gpus);
  gpus_.set_numa(slot, node.numa_cpu);
  images_.set_node(slot, parsed.images);
  ++node_version_[slot];
}

int32_t ClusterState::add_node(const NodeInput& node) {
  if (slot_of_.count(node.name)) throw Invalid("node " + node.name + ": already exists (use update_node)");
  check_allocatable_total(-1, node);
  ParsedNode parsed = parse_node(node);
  Topology::NodePlan topo = topology_.plan_node(*this, node.name, parsed.labels, node.patterns);
  int32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    names_[slot] = node.name;
  } else {
    slot = n_slots();
    ensure_slot_capacity(slot + 1);
    names_.push_back(node.name);
    live_->push_back(0);
    unschedulable_.push_back(0);
    blocking_taints_.push_back(0);
    prefer_taints_.push_back(0);
    for (auto& [key, column] : label_columns_) column.values.push_back(-1), column.domains.push_back(-1);
    taint_set_.push_back(0);
    labels_.emplace_back();
    pods_on_.emplace_back();
    node_version_.push_back(0);
    gpu_classes_.emplace_back();
  }
  write_node(slot, node, std::move(parsed));
  for (int32_t r = 0; r < req_.rows; ++r) req_.row(r)[slot] = 0;
  for (int32_t r = 0; r < nonzero_.rows; ++r) nonzero_.row(r)[slot] = 0;
  (*live_)[slot] = 1;
  slot_of_.emplace(node.name, slot);
  ++n_live_;
  ++membership_;
  topology_.commit_node(*this, slot, std::move(topo));
  return slot;
}

int32_t ClusterState::update_node(const NodeInput& node) {
  auto it = slot_of_.find(node.name);
  if (it == slot_of_.end()) throw NotFound("node " + node.name + ": not found (use add_node)");
  check_allocatable_total(it->second, node);
  ParsedNode parsed = parse_node(node);
  Topology::NodePlan topo = topology_.plan_node(*this, node.name, parsed.labels, node.patterns);
  const int32_t slot = it->second;
  write_node(slot, node, std::move(parsed));
  reconcile_gpus(slot);
  topology_.commit_node(*this, slot, std::move(topo));
  return slot;
}

std::vector<std::string> ClusterState::remove_node(const std::string& name, bool evict) {
  auto it = slot_of_.find(name);
  if (it == slot_of_.end()) throw NotFound("node " + name + ": not found");
  const int32_t slot = it->second;
  std::vector<std::string> evicted = pods_on(slot);
  if (!evicted.empty() && !evict)
    throw Invalid("node " + name + ": has " + std::to_string(evicted.size()) +
                  " bound pod(s); unbind them first or pass evict=True");
  for (const auto& key : evicted) unbind(key);
  NodeInput empty;
  empty.name = name;
  write_node(slot, empty, ParsedNode{});
  (*live_)[slot] = 0;
  topology_.clear_node(slot);
  names_[slot].clear();
  slot_of_.erase(it);
  free_slots_.push_back(slot);
  --n_live_;
  ++membership_;
  return evicted;
}

int32_t ClusterState::node_index(const std::string& name) const {
  auto it = slot_of_.find(name);
  return it == slot_of_.end() ? -1 : it->second;
}

const std::string& ClusterState::node_name(int32_t slot) const {
  if (slot < 0 || slot >= n_slots() || !is_live(slot))
    throw NotFound("node index " + std::to_string(slot) + ": no node");
  return names_[slot];
}

int32_t ClusterState::intern_taint_set(std::vector<Taint> taints) {
  if (taints.empty()) return 0;
  const auto order = [](const Taint& t) { return std::make_tuple(t.key, t.value, static_cast<int>(t.effect)); };
  std::sort(taints.begin(), taints.end(), [&](const Taint& a, const Taint& b) { return order(a) < order(b); });
  std::vector<int32_t> key;
  for (const auto& t : taints) key.insert(key.end(), {t.key, t.value, static_cast<int32_t>(t.effect)});
  const auto [it, inserted] = taint_set_index_.emplace(std::move(key), static_cast<int32_t>(taint_sets_.size()));
  if (inserted) taint_sets_.push_back(std::move(taints));
  return it->second;
}

void ClusterState::LabelColumn::set(int32_t slot, int32_t value) {
  values[static_cast<size_t>(slot)] = value;
  if (value < 0) {
    domains[static_cast<size_t>(slot)] = -1;
    return;
  }
  const auto [it, fresh] = domain_of_value.try_emplace(value, static_cast<int32_t>(domain_of_value.size()));
  domains[static_cast<size_t>(slot)] = it->second;
}

const int32_t* ClusterState::label_column(int32_t key) const {
  auto it = label_columns_.find(key);
  return it == label_columns_.end() ? nullptr : it->second.values.data();
}

const int32_t* ClusterState::domain_column(int32_t key) const {
  auto it = label_columns_.find(key);
  return it == label_columns_.end() ? nullptr : it->second.domains.data();
}

int32_t ClusterState::n_domains(int32_t key) const {
  auto it = label_columns_.find(key);
  return it == label_columns_.end() ? 0 : static_cast<int32_t>(it->second.domain_of_value.size());
}

int32_t ClusterState::domain_of_value(int32_t key, int32_t value) const {
  const auto it = label_columns_.find(key);
  if (it == label_columns_.end()) return -1;
  const auto d = it->second.domain_of_value.find(value);
  return d == it->second.domain_of_value.end() ? -1 : d->second;
}

void ClusterState::ensure_label_column(int32_t key) {
  if (label_columns_.count(key)) return;
  LabelColumn column{std::vector<int32_t>(names_.size(), -1), std::vector<int32_t>(names_.size(), -1), {}};
  for (size_t slot = 0; slot < labels_.size(); ++slot) {
    const auto& labels = labels_[slot];
    auto it = std::lower_bound(labels.begin(), labels.end(), std::make_pair(key, std::numeric_limits<int32_t>::min()));
    if (it != labels.end() && it->first == key) column.set(static_cast<int32_t>(slot), it->second);
  }
  label_columns_.emplace(key, std::move(column));
}

PodSelector ClusterState::compile_selector(const PodSelectorInput& in, const std::string& where) {
  PodSelector out;
  out.nothing = in.nothing;
  for (const auto& req : in.requirements) {
    const SelectorOp op = parse_op(req.op, where + ".matchExpressions[" + req.key + "].operator");
    if (op != SelectorOp::kIn && op != SelectorOp::kNotIn && op != SelectorOp::kExists &&
        op != SelectorOp::kDoesNotExist)
      throw Invalid(where + ".matchExpressions[" + req.key + "].operator: not a label selector operator");
    PodSelectorRequirement r{intern_string(req.key), op, {}};
    for (const auto& v : req.values) r.values.push_back(intern_string(v));
    std::sort(r.values.begin(), r.values.end());
    out.requirements.push_back(std::move(r));
  }
  // One order, so two selectors that say the same thing share one tracker.
  std::sort(out.requirements.begin(), out.requirements.end(), [](const auto& a, const auto& b) {
    return std::tie(a.key, a.op, a.values) < std::tie(b.key, b.op, b.values);
  });
  return out;
}

PodAffinityTerm ClusterState::compile_affinity_term(const AffinityTermInput& in, int32_t own_namespace,
                                                    const std::string& where) {
  if (in.topology_key.empty()) throw Invalid(where + ".topologyKey: required");
  PodAffinityTerm t;
  t.selector = compile_selector(in.selector, where + ".labelSelector");
  for (const auto& name : in.namespaces) t.namespaces.names.push_back(intern_string(name));
  if (in.has_namespace_selector) {
    t.namespaces.has_selector = true;
    t.namespaces.selector = compile_selector(in.namespace_selector, where + ".namespaceSelector");
  }
  // The API server's default: no namespaces and no namespace selector means the pod's own namespace.
  if (in.namespaces.empty() && !in.has_namespace_selector) t.namespaces.names.push_back(own_namespace);
  std::sort(t.namespaces.names.begin(), t.namespaces.names.end());
  t.namespaces.names.erase(std::unique(t.namespaces.names.begin(), t.namespaces.names.end()), t.namespaces.names.end());
  t.topology_key = intern_string(in.topology_key);
  ensure_label_column(t.topology_key);
  t.weight = in.weight;
  return t;
}

void ClusterState::compile_inter_pod(const PodInput& pod, CompiledPod& out, const std::string& where) {
  const size_t slash = pod.key.find('/');
  out.identity.namespace_id =
      intern_string(slash == std::string::npos ? std::string("default") : pod.key.substr(0, slash));
  std::vector<std::pair<int32_t, int32_t>> labels;
  for (const auto& [k, v] : pod.labels) labels.emplace_back(intern_string(k), intern_string(v));
  std::sort(labels.begin(), labels.end());
  out.identity.label_set = pod_index_.label_set(out.identity.namespace_id, std::move(labels));
  out.identity.deleting = pod.deleting;

  InterPodConstraints& c = out.inter_pod;
  const int32_t ns = out.identity.namespace_id;
  const auto terms = [&](const std::vector<AffinityTermInput>& in, const std::string& path) {
    std::vector<PodAffinityTerm> compiled;
    for (size_t i = 0; i < in.size(); ++i)
      compiled.push_back(compile_affinity_term(in[i], ns, where + ": " + path + "[" + std::to_string(i) + "]"));
    return compiled;
  };
  c.required_affinity =
      terms(pod.required_affinity, "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution");
  c.required_anti_affinity =
      terms(pod.required_anti_affinity, "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution");
  c.preferred_affinity =
      terms(pod.preferred_affinity, "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution");
  c.preferred_anti_affinity = terms(pod.preferred_anti_affinity,
                                    "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution");
  for (size_t i = 0; i < pod.spread.size(); ++i) {
    const SpreadInput& in = pod.spread[i];
    const std::string at = where + ": spec.topologySpreadConstraints[" + std::to_string(i) + "]";
    if (in.max_skew < 1) throw Invalid(at + ".maxSkew: must be at least 1");
    if (in.min_domains < 1) throw Invalid(at + ".minDomains: must be at least 1");
    if (in.topology_key.empty()) throw Invalid(at + ".topologyKey: required");
    SpreadConstraint sc{in.max_skew,    intern_string(in.topology_key),
                        in.hard,        compile_selector(in.selector, at + ".labelSelector"),
                        in.min_domains, in.honor_node_affinity,
                        in.honor_taints};
    ensure_label_column(sc.topology_key);
    c.spread.push_back(std::move(sc));
  }
  c.default_spread_selector.nothing = true;
  if (pod.default_spread_selector)
    c.default_spread_selector = compile_selector(*pod.default_spread_selector, where + ": default spread selector");
  if (c.empty()) return;         // no counter to register (the common case)
  if (!pod_index_.counting()) {  // the first pod that reads the index: count the pods bound so far
    pod_index_.start_counting();
    for (const auto& [key, bound] : pods_) pod_index_.apply(bound.identity, bound.carried.get(), bound.node, 1);
  }

  // The counters its terms read, registered now (the exclusive lock is held): a new one is counted from the pods
  // bound so far, and kept current by every bind after.
  if (!c.required_affinity.empty()) {
    std::vector<PodIndex::Condition> all_of;
    for (const auto& t : c.required_affinity) all_of.push_back({t.namespaces, t.selector});
    c.affinity_tracker = pod_index_.tracker(std::move(all_of), false);
  }
  for (const auto& t : c.required_anti_affinity)
    c.anti_affinity_trackers.push_back(pod_index_.tracker({{t.namespaces, t.selector}}, false));
  for (const auto& t : c.preferred_affinity)
    c.preferred_affinity_trackers.push_back(pod_index_.tracker({{t.namespaces, t.selector}}, false));
  for (const auto& t : c.preferred_anti_affinity)
    c.preferred_anti_affinity_trackers.push_back(pod_index_.tracker({{t.namespaces, t.selector}}, false));
  // Topology spread counts the pods of the pod's own namespace that are not being deleted, and none at all for an
  // empty selector (which still matches the pod itself).
  NamespaceFilter own{{ns}, false, {}};
  for (const auto& sc : c.spread) {
    PodSelector counted = sc.selector;
    counted.nothing |= counted.requirements.empty();
    c.spread_trackers.push_back(pod_index_.tracker({{own, counted}}, true));
  }
  if (!c.default_spread_selector.nothing)
    c.default_spread_tracker = pod_index_.tracker({{own, c.default_spread_selector}}, true);
  CarriedTerms carried;
  for (const auto& t : c.required_affinity)
    carried.required_affinity.push_back(pod_index_.term_class(t, PodIndex::kRequiredAffinity));
  for (const auto& t : c.required_anti_affinity)
    carried.required_anti_affinity.push_back(pod_index_.term_class(t, PodIndex::kRequiredAntiAffinity));
  for (const auto& t : c.preferred_affinity)
    carried.preferred_affinity.push_back(pod_index_.term_class(t, PodIndex::kPreferredAffinity));
  for (const auto& t : c.preferred_anti_affinity)
    carried.preferred_anti_affinity.push_back(pod_index_.term_class(t, PodIndex::kPreferredAntiAffinity));
  c.carried = carried.empty() ? nullptr : std::make_shared<const CarriedTerms>(std::move(carried));
}

void ClusterState::set_pdb(const PdbInput& in) {
  const size_t slash = in.key.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == in.key.size())
    throw Invalid("poddisruptionbudget " + in.key + ": key must be namespace/name");
  Pdb pdb{in.key, intern_string(in.key.substr(0, slash)), {}, in.disruptions_allowed, in.disrupted};
  pdb.selector.nothing = true;
  if (in.selector) {
    pdb.selector = compile_selector(*in.selector, "poddisruptionbudget " + in.key + ": spec.selector");
    pdb.selector.nothing |= pdb.selector.requirements.empty();  // an empty selector covers no pod either
  }
  std::sort(pdb.disrupted.begin(), pdb.disrupted.end());
  const auto it = std::find_if(pdbs_.begin(), pdbs_.end(), [&](const Pdb& p) { return p.key == in.key; });
  if (it == pdbs_.end())
    pdbs_.push_back(std::move(pdb));
  else
    *it = std::move(pdb);
}

bool ClusterState::remove_pdb(const std::string& key) {
  const auto it = std::find_if(pdbs_.begin(), pdbs_.end(), [&](const Pdb& p) { return p.key == key; });
  if (it == pdbs_.end()) return false;
  pdbs_.erase(it);
  return true;
}

std::vector<int32_t> ClusterState::pdbs_of(const std::string& key, const BoundPod& pod) const {
  std::vector<int32_t> out;
  if (pdbs_.empty() || pod.identity.label_set < 0) return out;
  const auto& labels = pod_index_.labels_of(pod.identity.label_set);
  if (labels.empty()) return out;
  const std::string name = key.substr(key.find('/') + 1);
  for (size_t i = 0; i < pdbs_.size(); ++i) {
    const Pdb& pdb = pdbs_[i];
    if (pdb.namespace_id != pod.identity.namespace_id || !pdb.selector.matches(labels)) continue;
    if (std::binary_search(pdb.disrupted.begin(), pdb.disrupted.end(), name)) continue;
    out.push_back(static_cast<int32_t>(i));
  }
  return out;
}

void ClusterState::set_namespace_labels(const std::string& name,
                                        const std::vector<std::pair<std::string, std::string>>& labels, bool exists) {
  std::vector<std::pair<int32_t, int32_t>> interned;
  for (const auto& [k, v] : labels) interned.emplace_back(intern_string(k), intern_string(v));
  pod_index_.set_namespace_labels(intern_string(name), std::move(interned), exists);
}

NodeSelectorTerm ClusterState::compile_term(const TermInput& term, const std::string& where) {
  NodeSelectorTerm out;
  for (const auto& req : term.expressions) {
    const SelectorOp op = parse_op(req.op, where + ".matchExpressions[" + req.key + "].operator");
    LabelRequirement r{intern_string(req.key), op, {}, 0};
    ensure_label_column(r.key);
    for (const auto& v : req.values) r.values.push_back(intern_string(v));
    if (op == SelectorOp::kGt || op == SelectorOp::kLt) {
      const auto n = req.values.size() == 1 ? parse_int64(req.values[0]) : std::nullopt;
      if (!n)
        throw Invalid(where + ".matchExpressions[" + req.key + "].values: " + req.op + " needs one integer value");
      r.number = *n;
    }
    out.expressions.push_back(std::move(r));
  }
  for (const auto& req : term.fields) {
    const SelectorOp op = parse_op(req.op, where + ".matchFields[" + req.key + "].operator");
    if (req.key != "metadata.name" || (op != SelectorOp::kIn && op != SelectorOp::kNotIn))
      throw Invalid(where + ".matchFields: only metadata.name with In or NotIn is supported");
    out.fields.push_back({op, req.values});
  }
  return out;
}

namespace {

void validate_gpu_request(const DeviceRequest& r, const std::string& where) {
  const std::string at = where + ": gpu request: ";
  if (r.kind > GpuKind::kMig) throw Invalid(at + "unknown kind");
  if (r.count < 0 || r.count > kMaxGpusPerNode) throw Invalid(at + "count must be in 0..64");
  if (r.kind == GpuKind::kShared) {
    if (r.milli < -1 || r.milli > kGpuMilli) throw Invalid(at + "milli must be in 0..1000");
    if ((r.memory_mib >= 0) == (r.memory_milli >= 0)) throw Invalid(at + "exactly one of memory_mib and memory_milli");
    if (r.memory_milli > kGpuMilli) throw Invalid(at + "memory_milli must be in 0..1000");
    if (r.milli < 0 && r.memory_mib < 0) throw Invalid(at + "a slice sized by memory needs memory_mib");
  }
  if (r.numa_policy > NumaPolicy::kSingleNumaNode) throw Invalid(at + "numa_policy must be 0..3");
  if (r.numa_cpu_milli < 0) throw Invalid(at + "numa_cpu_milli must be >= 0");
  if (r.kind == GpuKind::kMig && r.count > 0 &&
      std::none_of(r.mig_shape.begin(), r.mig_shape.end(), [](int32_t s) { return s >= 0; }))
    throw Invalid(at + "MIG profile unknown on every GPU model");
  for (int32_t s : r.mig_shape)
    if (s < -1 || s >= kMigShapeCount) throw Invalid(at + "MIG shape id out of range");
}

}  // namespace

CompiledPod ClusterState::compile_pod(const PodInput& pod) {
  const std::string where = "pod " + pod.key;
  if (pod.key.empty()) throw Invalid("pod: key (namespace/name) must not be empty");
  for (const auto& [name, amount] : pod.requests)
    if (amount < 0) throw Invalid(where + ": requests." + name + ": must not be negative");
  if (pod.nonzero_cpu_milli < 0 || pod.nonzero_mem_bytes < 0)
    throw Invalid(where + ": non-zero requests must not be negative");
  if (pod.score_cpu_milli.value_or(0) < 0 || pod.score_mem_bytes.value_or(0) < 0)
    throw Invalid(where + ": score requests must not be negative");
  for (const auto& [key, op, value, effect] : pod.tolerations) {
    if (op != "Exists" && op != "Equal") throw Invalid(where + ": spec.tolerations: unknown operator '" + op + "'");
    if (key.empty() && op != "Exists") throw Invalid(where + ": spec.tolerations: an empty key needs operator Exists");
    parse_effect(effect, true, where + ": spec.tolerations.effect");
  }
  validate_gpu_request(pod.gpu, where);
  CompiledPod out;
  out.key = pod.key;
  out.key_hash = std::hash<std::string>{}(out.key);
  out.gpu = pod.gpu;
  out.state_id = id_;
  out.nonzero_cpu_milli = pod.nonzero_cpu_milli;
  out.nonzero_mem_bytes = pod.nonzero_mem_bytes;
  out.score_cpu_milli = pod.score_cpu_milli.value_or(pod.nonzero_cpu_milli);
  out.score_mem_bytes = pod.score_mem_bytes.value_or(pod.nonzero_mem_bytes);
  out.priority = pod.priority;
  out.never_preempts = pod.never_preempts;
  out.node_name = pod.node_name;
  out.refused = pod.refused;
  out.volumes = pod.volumes;
  compile_inter_pod(pod, out, where);
  for (const auto& [ip, protocol, port] : pod.host_ports) {
    if (port < 1 || port > 65535) throw Invalid(where + ": hostPort " + std::to_string(port) + ": must be in 1..65535");
    out.host_ports.push_back({intern_string(ip), intern_string(protocol), port});
  }
  for (const auto& image : pod.images) out.images.push_back(intern_string(image));
  out.n_containers = pod.n_containers;
  out.start_time = pod.start_time;
  for (const auto& [name, amount] : pod.requests) {
    if (amount == 0 || name == "pods") continue;  // the pod count is accounted per bound pod, not requested
    out.requests.emplace_back(resource_axis(name), amount);
  }
  std::sort(out.requests.begin(), out.requests.end());
  for (const auto& [key, value] : pod.node_selector) {
    out.node_selector.emplace_back(intern_string(key), intern_string(value));
    ensure_label_column(out.node_selector.back().first);
  }
  if (pod.required_terms) {
    out.has_required_terms = true;
    for (size_t i = 0; i < pod.required_terms->size(); ++i)
      out.required_terms.push_back(compile_term(
          (*pod.required_terms)[i], where + ": requiredDuringScheduling.nodeSelectorTerms[" + std::to_string(i) + "]"));
  }
  for (size_t i = 0; i < pod.preferred_terms.size(); ++i) {
    const auto& [weight, term] = pod.preferred_terms[i];
    out.preferred_terms.emplace_back(
        weight, compile_term(term, where + ": preferredDuringScheduling[" + std::to_string(i) + "].preference"));
  }
  const int32_t unschedulable_key = pod.tolerations.empty() ? -1 : intern_string("node.kubernetes.io/unschedulable");
  for (const auto& [key, op, value, effect] : pod.tolerations) {
    Toleration t{key.empty() ? -1 : intern_string(key), op == "Exists", intern_string(value),
                 parse_effect(effect, true, where)};
    // NodeUnschedulable lets a pod through when it tolerates node.kubernetes.io/unschedulable:NoSchedule.
    const bool key_ok = t.key == -1 || t.key == unschedulable_key;
    const bool effect_ok = t.effect == TaintEffect::kAny || t.effect == TaintEffect::kNoSchedule;
    const bool value_ok = t.exists || value.empty();
    out.tolerates_unschedulable |= key_ok && effect_ok && value_ok;
    out.tolerations.push_back(t);
  }
  return out;
}

void ClusterState::apply_pod(const BoundPod& pod, int64_t sign) {
  for (const auto& [axis, amount] : pod.requests) {
    req_.row(axis)[pod.node] += sign * amount;
    req_total_[axis] += sign * amount;
  }
  req_.row(kAxisPods)[pod.node] += sign;
  nonzero_.row(0)[pod.node] += sign * pod.nonzero_cpu_milli;
  nonzero_.row(1)[pod.node] += sign * pod.nonzero_mem_bytes;
  pod_index_.apply(pod.identity, pod.carried.get(), pod.node, static_cast<int>(sign));
  host_ports_.apply(pod.node, pod.host_ports, static_cast<int>(sign));
  gpus_.apply(pod.node, pod.gpu, static_cast<int>(sign));
  count_gpu_class(pod.node, pod.gpu, static_cast<int32_t>(sign));
  ++node_version_[static_cast<size_t>(pod.node)];
}

void ClusterState::bind(const CompiledPod& pod, int32_t slot, const std::vector<int32_t>* gpu_indices) {
  if (gpu_indices == nullptr || !pod.gpu.uses_gpus()) return bind_locked(pod, slot);
  if (slot < 0 || slot >= n_slots() || !is_live(slot))
    throw NotFound("pod " + pod.key + ": node index " + std::to_string(slot) + " does not exist");
  if (pod.gpu.kind == GpuKind::kMig)
    throw Invalid("pod " + pod.key + ": GPU indices cannot be given for MIG instances");
  for (int32_t i : *gpu_indices)
    if (i < 0 || i >= gpus_.n_gpus(slot))
      throw Invalid("pod " + pod.key + ": GPU " + std::to_string(i) + " does not exist on node " + names_[slot]);
  uint64_t mask = 0;
  for (int32_t i : *gpu_indices) {
    if ((mask >> i) & 1u) throw Invalid("pod " + pod.key + ": GPU " + std::to_string(i) + " listed twice");
    mask |= uint64_t{1} << i;
  }
  GpuAssignment a;
  gpus_.assign(slot, pod.gpu, mask, &a);
  const std::string bad = gpus_.check_assignment(slot, pod.gpu, gpus_.allowed_models(pod.gpu), a);
  if (!bad.empty()) throw Invalid("pod " + pod.key + ": node " + names_[slot] + ": " + bad);
  bind_locked(pod, slot, &a);
}

void ClusterState::bind_locked(const CompiledPod& pod, int32_t slot, const GpuAssignment* assignment) {
  if (pod.state_id != id_) throw Invalid("pod " + pod.key + ": compiled for another cluster");
  if (slot < 0 || slot >= n_slots() || !is_live(slot))
    throw NotFound("pod " + pod.key + ": node index " + std::to_string(slot) + " does not exist");
  for (const auto& [axis, amount] : pod.requests)
    if (axis >= req_.rows) throw Invalid("pod " + pod.key + ": resource axis out of range");
  check_requested_total(pod.key, slot, pod.requests, pod.nonzero_cpu_milli, pod.nonzero_mem_bytes);
  GpuAssignment gpu;
  if (assignment != nullptr) {
    gpu = *assignment;
  } else if (pod.gpu.needs_devices() && !gpus_.fit(slot, pod.gpu, gpus_.allowed_models(pod.gpu), &gpu)) {
    // A pod that runs there already must be accounted even when the device table cannot say which GPUs it has
    // (no inventory, or the node reported its GPUs later): its resource rows still count, its devices do not.
    gpu = GpuAssignment{};
  }
  // One hash of the key for the check and the insert: a gang binds thousands of pods in a call.
  const auto [it, inserted] = pods_.try_emplace(pod.key);
  if (!inserted) throw Invalid("pod " + pod.key + ": already bound to node " + names_[it->second.node]);
  it->second = BoundPod{slot,           pod.requests,   pod.nonzero_cpu_milli, pod.nonzero_mem_bytes,
                        std::move(gpu), pod.identity,   pod.inter_pod.carried, pod.host_ports,
                        pod.priority,   pod.start_time, pod.volumes,           nullptr};
  apply_pod(it->second, +1);
  link_on_node(*it);
  if (pod.volumes != nullptr) volumes_.on_bind(it->first, slot, it->second.volumes, nullptr);
}

void ClusterState::link_on_node(BoundEntry& entry) {
  NodePods& on = pods_on_[static_cast<size_t>(entry.second.node)];
  entry.second.prev_on_node = on.last;
  entry.second.next_on_node = nullptr;
  (on.last != nullptr ? on.last->second.next_on_node : on.first) = &entry;
  on.last = &entry;
}

void ClusterState::unlink_from_node(BoundEntry& entry) {
  NodePods& on = pods_on_[static_cast<size_t>(entry.second.node)];
  BoundPod& pod = entry.second;
  (pod.prev_on_node != nullptr ? pod.prev_on_node->second.next_on_node : on.first) = pod.next_on_node;
  (pod.next_on_node != nullptr ? pod.next_on_node->second.prev_on_node : on.last) = pod.prev_on_node;
  pod.prev_on_node = pod.next_on_node = nullptr;
}

void ClusterState::check_requested_total(const std::string& key, int32_t slot,
                                         const std::vector<std::pair<int32_t, int64_t>>& requests, int64_t nonzero_cpu,
                                         int64_t nonzero_mem) const {
  // A node's requested amount never exceeds the cluster's total, so checking the total covers the node too.
  for (const auto& [axis, amount] : requests)
    if (amount > kMaxTotal - req_total_[axis])
      throw Invalid("pod " + key + ": node " + names_[slot] + ": the cluster's requested " + resources_.name(axis) +
                    " would exceed 2**61 (vcore's bound on a cluster total)");
  int64_t sum = 0;
  if (__builtin_add_overflow(nonzero_.row(0)[slot], nonzero_cpu, &sum) ||
      __builtin_add_overflow(nonzero_.row(1)[slot], nonzero_mem, &sum))
    throw Invalid("pod " + key + ": node " + names_[slot] + ": requested cpu or memory would exceed 2**63-1");
}

void ClusterState::warm_pod_entries(const CompiledPod* const* pods, size_t n) const {
  // The bucket from the hash the pod carries (libstdc++'s: the hash modulo the bucket count); were a library to map
  // hashes otherwise, only the warming would miss.
  const size_t n_buckets = pods_.bucket_count();
  size_t probed = 0;
  for (size_t i = 0; i < n; ++i) probed += pods_.bucket_size(pods[i]->key_hash % n_buckets);
  asm volatile("" : : "r"(probed));  // keeps the reads: nothing else uses what they found
}

BoundPod ClusterState::detach(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) throw NotFound("pod " + key + ": not bound");
  BoundPod pod = it->second;
  unbind(key);
  return pod;
}

void ClusterState::attach(const std::string& key, BoundPod pod) {
  if (pods_.count(key) != 0) throw Invalid("pod " + key + ": already bound to node " + names_[pods_.at(key).node]);
  if (pod.node < 0 || pod.node >= n_slots() || !is_live(pod.node)) throw NotFound("pod " + key + ": its node is gone");
  check_requested_total(key, pod.node, pod.requests, pod.nonzero_cpu_milli, pod.nonzero_mem_bytes);
  apply_pod(pod, +1);
  const auto it = pods_.emplace(key, std::move(pod)).first;
  link_on_node(*it);
  if (it->second.volumes != nullptr || it->second.volume_assumption != nullptr)
    volumes_.on_bind(it->first, it->second.node, it->second.volumes, it->second.volume_assumption);
}

void ClusterState::assume_volumes(const std::string& key, std::shared_ptr<const VolumeAssumption> assumption) {
  const auto it = pods_.find(key);
  if (it == pods_.end()) throw NotFound("pod " + key + ": not bound");
  if (it->second.volume_assumption != nullptr) volumes_.revert_assumption(it->first, *it->second.volume_assumption);
  it->second.volume_assumption = std::move(assumption);
  if (it->second.volume_assumption != nullptr) volumes_.apply_assumption(it->first, *it->second.volume_assumption);
}

std::vector<std::string> ClusterState::pods_on(int32_t slot) const {
  std::vector<std::string> keys;
  for (const BoundEntry* e = pods_on_.at(static_cast<size_t>(slot)).first; e != nullptr; e = e->second.next_on_node)
    keys.push_back(e->first);
  return keys;
}

const BoundPod* ClusterState::bound_pod(const std::string& key) const {
  const auto it = pods_.find(key);
  return it == pods_.end() ? nullptr : &it->second;
}

int32_t ClusterState::unbind(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) throw NotFound("pod " + key + ": not bound");
  const int32_t slot = it->second.node;
  apply_pod(it->second, -1);
  if (it->second.volumes != nullptr || it->second.volume_assumption != nullptr)
    volumes_.on_unbind(it->first, slot, it->second.volumes, it->second.volume_assumption);
  unlink_from_node(*it);
  pods_.erase(it);
  return slot;
}

// The node object is the truth: a GPU that vanished or changed MIG mode is no longer held by anyone (its pods keep
// their resource accounting, as for a pod bound without identifiable devices), and usage is rebuilt from the pods.
void ClusterState::reconcile_gpus(int32_t slot) {
  gpus_.reset_usage(slot);
  gpu_classes_[slot].clear();
  for (BoundEntry* e = pods_on_[slot].first; e != nullptr; e = e->second.next_on_node) {
    GpuAssignment& a = e->second.gpu;
    auto& holds = a.holds;
    holds.erase(std::remove_if(holds.begin(), holds.end(),
                               [&](const GpuHold& h) { return !gpus_.holdable(slot, h.gpu, a.kind == GpuKind::kMig); }),
                holds.end());
    if (holds.empty()) a = GpuAssignment{};
    gpus_.apply(slot, a, +1);
    count_gpu_class(slot, a, +1);
  }
}

const GpuAssignment* ClusterState::pod_gpus(const std::string& key) const {
  auto it = pods_.find(key);
  return it == pods_.end() ? nullptr : &it->second.gpu;
}

void ClusterState::count_gpu_class(int32_t slot, const GpuAssignment& a, int32_t sign) {
  if (a.holds.empty() || a.kind == GpuKind::kMig) return;
  const int32_t cls = a.kind == GpuKind::kShared ? 0 : static_cast<int32_t>(a.holds.size());
  auto& classes = gpu_classes_[slot];
  auto it = std::find_if(classes.begin(), classes.end(), [cls](const auto& c) { return c.first == cls; });
  if (it == classes.end()) it = classes.insert(classes.end(), {cls, 0});
  it->second += sign;
  if (it->second == 0) classes.erase(it);
}

int32_t ClusterState::gpu_class_pods(int32_t slot, int32_t cls) const {
  for (const auto& [c, n] : gpu_classes_[static_cast<size_t>(slot)])
    if (c == cls) return n;
  return 0;
}

int32_t ClusterState::gpu_classes(int32_t slot) const {
  return static_cast<int32_t>(gpu_classes_[static_cast<size_t>(slot)].size());
}

int32_t ClusterState::pod_node(const std::string& key) const {
  auto it = pods_.find(key);
  return it == pods_.end() ? -1 : it->second.node;
}

size_t ClusterState::native_bytes() const {
  size_t bytes = (alloc_.data->capacity() + req_.data->capacity() + nonzero_.data->capacity()) * sizeof(int64_t);
  bytes += pod_index_.bytes() + host_ports_.bytes() + images_.bytes();
  bytes += live_->capacity() + unschedulable_.capacity() + blocking_taints_.capacity() + prefer_taints_.capacity();
  for (const auto& [key, column] : label_columns_)
    bytes +=
        (column.values.capacity() + column.domains.capacity()) * sizeof(int32_t) + column.domain_of_value.size() * 24;
  bytes += taint_set_.capacity() * sizeof(int32_t) + labels_.capacity() * sizeof(labels_[0]);
  bytes += names_.capacity() * sizeof(std::string) + pods_on_.capacity() * sizeof(pods_on_[0]);
  for (size_t i = 0; i < names_.size(); ++i) {
    bytes += labels_[i].capacity() * sizeof(labels_[i][0]);
    bytes += names_[i].capacity() > 15 ? names_[i].capacity() + 1 : 0;
  }
  bytes += slot_of_.size() * (sizeof(std::string) + sizeof(int32_t) + 2 * sizeof(void*));
  bytes += node_version_.capacity() * sizeof(uint64_t) + gpu_classes_.capacity() * sizeof(gpu_classes_[0]);
  bytes += gpus_.native_bytes() + topology_.native_bytes();
  return bytes;
}

}  // namespace vcore
