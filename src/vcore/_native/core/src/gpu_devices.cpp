// The live GPU device table and its fit rules (see vcore/gpu_devices.h).
#include "vcore/gpu_devices.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <tuple>

#include "vcore/errors.h"

namespace vcore {
namespace {

// Same order as vcore.gpu.mig's shapes: 1c1m, 1c2m, 2c2m, 3c4m, 4c4m, 7c8m (starts in memory-slice units).
constexpr MigShape kShapes[kMigShapeCount] = {
    {1, 1, 0b1111111}, {1, 2, 0b1010101}, {2, 2, 0b0010101}, {3, 4, 0b0010001}, {4, 4, 0b1}, {7, 8, 0b1},
};

}  // namespace

std::vector<std::string> model_tokens(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == '-') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

bool DeviceRequest::allows(const std::string& product) const {
  if (has_models) {
    const std::vector<std::string> have = model_tokens(product);
    const auto matches = [&](const std::vector<std::string>& want) {
      if (want.empty()) return false;
      return std::all_of(want.begin(), want.end(),
                         [&](const std::string& t) { return std::find(have.begin(), have.end(), t) != have.end(); });
    };
    if (!std::any_of(models.begin(), models.end(), matches)) return false;
  }
  if (product_terms.empty()) return true;
  for (const auto& t : product_terms) {
    if (t.never) continue;
    if (!t.any && std::find(t.allowed.begin(), t.allowed.end(), product) == t.allowed.end()) continue;
    if (std::find(t.excluded.begin(), t.excluded.end(), product) != t.excluded.end()) continue;
    return true;
  }
  return false;
}

int32_t DeviceRequest::milli_on(int64_t device_memory_mib) const {
  if (milli >= 0) return milli;
  if (device_memory_mib <= 0) return kGpuMilli + 1;  // a memory-sized slice cannot be sized: never fits
  const int64_t m = std::max<int64_t>(memory_mib, 0);
  const int64_t v = (m * kGpuMilli + device_memory_mib - 1) / device_memory_mib;
  return static_cast<int32_t>(std::min<int64_t>(v, kGpuMilli + 1));
}

int64_t DeviceRequest::memory_on(int64_t device_memory_mib) const {
  if (memory_mib >= 0) return memory_mib;
  return (std::max<int32_t>(memory_milli, 0) * device_memory_mib + kGpuMilli - 1) / kGpuMilli;
}

std::string DeviceRequest::constraint_key() const {
  std::string k = has_models ? "m:" : "-";
  for (const auto& m : models) {
    for (const auto& t : m) k += t + "-";
    k += "|";
  }
  for (const auto& t : product_terms) {
    k += t.never ? "!" : (t.any ? "*" : "+");
    for (const auto& a : t.allowed) k += a + ",";
    k += "/";
    for (const auto& e : t.excluded) k += e + ",";
    k += ";";
  }
  return k;
}

// ----------------------------------------------------------------------------------------------------------
// Inventory
// ----------------------------------------------------------------------------------------------------------

void DeviceTable::validate(const std::string& node, const std::vector<DeviceInput>& devices) const {
  const std::string at = "node " + node + ": gpus";
  if (static_cast<int32_t>(devices.size()) > kMaxGpusPerNode)
    throw Invalid(at + ": " + std::to_string(devices.size()) + " GPUs, at most " + std::to_string(kMaxGpusPerNode));
  int32_t new_models = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    const DeviceInput& d = devices[i];
    const std::string f = at + "[" + std::to_string(i) + "]";
    if (d.memory_mib < 0) throw Invalid(f + ".memory_mib: must be >= 0, got " + std::to_string(d.memory_mib));
    if (d.numa < -1) throw Invalid(f + ".numa: must be >= -1");
    if (d.nvlink < -1) throw Invalid(f + ".nvlink: must be >= -1");
    if (d.mig_geometry < 0 || d.mig_geometry >= kMigGeometries) throw Invalid(f + ".mig_geometry: out of range 0..3");
    if (d.mig_mode && d.mig_geometry == 0) throw Invalid(f + ": in MIG mode but its model has no MIG geometry");
    if (!d.mig_mode && !d.mig_layout.empty()) throw Invalid(f + ".mig_layout: the GPU is not in MIG mode");
    if (static_cast<int32_t>(d.mig_layout.size()) > kMaxMigInstances)
      throw Invalid(f + ".mig_layout: too many instances");
    uint32_t compute = 0, memory = 0;
    for (const auto& [shape, start] : d.mig_layout) {
      if (shape < 0 || shape >= kMigShapeCount)
        throw Invalid(f + ".mig_layout: unknown shape " + std::to_string(shape));
      const MigShape& s = kShapes[shape];
      if (start < 0 || start > 7 || !((s.starts >> start) & 1u))
        throw Invalid(f + ".mig_layout: start " + std::to_string(start) + " not allowed for its profile");
      if ((compute & s.compute_mask(start)) || (memory & s.memory_mask(start)))
        throw Invalid(f + ".mig_layout: instances overlap");
      compute |= s.compute_mask(start);
      memory |= s.memory_mask(start);
    }
    if (models_.find(d.model) < 0) ++new_models;
  }
  if (static_cast<int32_t>(models_.size()) + new_models > kMaxGpuModels)
    throw Invalid(at + ": more than " + std::to_string(kMaxGpuModels) + " distinct GPU models in the cluster");
}

void DeviceTable::reset_usage(int32_t slot) {
  for (int32_t d = begin_[slot]; d < begin_[slot] + n_gpus(slot); ++d) {
    used_milli_[d] = 0, holders_[d] = 0, used_memory_[d] = 0;
    exclusive_[d] = 0, mig_compute_[d] = 0, mig_memory_[d] = 0;
  }
  if (slot < static_cast<int32_t>(numa_cpu_.size()))
    for (NumaCpu& c : numa_cpu_[slot]) c.used_milli = 0;
}

void DeviceTable::validate_numa(const std::string& node, const std::vector<std::pair<int32_t, int64_t>>& cpu) {
  const std::string at = "node " + node + ": NUMA CPUs";
  if (static_cast<int32_t>(cpu.size()) > kMaxNumaNodes)
    throw Invalid(at + ": " + std::to_string(cpu.size()) + " NUMA nodes, at most " + std::to_string(kMaxNumaNodes));
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (cpu[i].first < 0 || cpu[i].first >= 1024)
      throw Invalid(at + "[" + std::to_string(i) + "].id: must be in 0..1023");
    if (cpu[i].second < 0) throw Invalid(at + "[" + std::to_string(i) + "].cpu: must be >= 0");
    for (size_t j = 0; j < i; ++j)
      if (cpu[j].first == cpu[i].first)
        throw Invalid(at + ": NUMA node " + std::to_string(cpu[i].first) + " listed twice");
  }
}

void DeviceTable::set_numa(int32_t slot, const std::vector<std::pair<int32_t, int64_t>>& cpu) {
  if (slot >= static_cast<int32_t>(numa_cpu_.size())) numa_cpu_.resize(static_cast<size_t>(slot) + 1);
  std::vector<NumaCpu> fresh;
  for (const auto& [id, milli] : cpu) fresh.push_back({id, milli, 0});
  std::sort(fresh.begin(), fresh.end(), [](const NumaCpu& a, const NumaCpu& b) { return a.id < b.id; });
  numa_cpu_[slot] = std::move(fresh);  // usage is rebuilt by the caller (reset_usage + apply), as for the devices
}

const std::vector<NumaCpu>& DeviceTable::numa_cpu(int32_t slot) const {
  static const std::vector<NumaCpu> none;
  return slot < static_cast<int32_t>(numa_cpu_.size()) ? numa_cpu_[slot] : none;
}

void DeviceTable::ensure_slot(int32_t slot) {
  if (slot >= static_cast<int32_t>(begin_.size())) {
    begin_.resize(static_cast<size_t>(slot) + 1, 0);
    count_.resize(static_cast<size_t>(slot) + 1, 0);
  }
}

void DeviceTable::set_node(int32_t slot, const std::vector<DeviceInput>& devices) {
  ensure_slot(slot);
  const int32_t g = static_cast<int32_t>(devices.size());
  const int32_t old_g = count_[slot];
  int32_t base = begin_[slot];
  if (g != old_g) {
    // A new range at the end; usage of the GPUs that stay is carried over (the caller then rebuilds it).
    base = static_cast<int32_t>(model_.size());
    const size_t end = static_cast<size_t>(base) + static_cast<size_t>(g);
    for (auto* v : {&model_, &numa_, &nvlink_, &used_milli_, &holders_}) v->resize(end, 0);
    for (auto* v : {&memory_, &used_memory_}) v->resize(end, 0);
    for (auto* v : {&mig_mode_, &mig_geometry_, &layout_n_, &exclusive_, &mig_compute_, &mig_memory_})
      v->resize(end, 0);
    layout_.resize(end, 0);
    for (int32_t i = 0; i < std::min(g, old_g); ++i) {
      const int32_t from = begin_[slot] + i, to = base + i;
      used_milli_[to] = used_milli_[from], holders_[to] = holders_[from], used_memory_[to] = used_memory_[from];
      exclusive_[to] = exclusive_[from], mig_compute_[to] = mig_compute_[from], mig_memory_[to] = mig_memory_[from];
    }
    live_devices_ += g - old_g;
    begin_[slot] = base;
    count_[slot] = g;
  }
  for (int32_t i = 0; i < g; ++i) {
    const DeviceInput& in = devices[i];
    const int32_t d = base + i;
    model_[d] = models_.intern(in.model);
    memory_[d] = in.memory_mib;
    max_memory_ = std::max(max_memory_, in.memory_mib);
    numa_[d] = in.numa;
    nvlink_[d] = in.nvlink;
    mig_mode_[d] = in.mig_mode;
    mig_geometry_[d] = static_cast<uint8_t>(in.mig_geometry);
    layout_n_[d] = static_cast<uint8_t>(in.mig_layout.size());
    uint64_t packed = 0;
    for (size_t k = 0; k < in.mig_layout.size(); ++k)
      packed |= static_cast<uint64_t>((in.mig_layout[k].first << 3) | in.mig_layout[k].second) << (6 * k);
    layout_[d] = packed;
  }
  if (static_cast<int32_t>(model_.size()) > 2 * live_devices_ + 1024) compact();
}

void DeviceTable::clear_node(int32_t slot) {
  if (slot < static_cast<int32_t>(numa_cpu_.size())) numa_cpu_[slot].clear();
  if (slot >= static_cast<int32_t>(count_.size())) return;
  live_devices_ -= count_[slot];
  count_[slot] = 0;
  begin_[slot] = 0;
}

void DeviceTable::compact() {
  std::vector<int32_t> order;  // old device index per new position, slot by slot
  order.reserve(static_cast<size_t>(live_devices_));
  for (size_t slot = 0; slot < begin_.size(); ++slot) {
    const int32_t b = begin_[slot];
    begin_[slot] = static_cast<int32_t>(order.size());
    for (int32_t i = 0; i < count_[slot]; ++i) order.push_back(b + i);
  }
  const auto gather = [&order](auto& v) {
    std::remove_reference_t<decltype(v)> out;
    out.reserve(order.size());
    for (int32_t d : order) out.push_back(v[static_cast<size_t>(d)]);
    v.swap(out);
  };
  gather(model_), gather(numa_), gather(nvlink_), gather(memory_), gather(mig_mode_), gather(mig_geometry_);
  gather(layout_n_), gather(layout_), gather(used_milli_), gather(holders_), gather(used_memory_);
  gather(exclusive_), gather(mig_compute_), gather(mig_memory_);
}

std::vector<uint8_t> DeviceTable::allowed_models(const DeviceRequest& r) const {
  if (!r.has_models && r.product_terms.empty()) return {};
  std::vector<uint8_t> allowed(models_.size(), 0);
  for (size_t m = 0; m < models_.size(); ++m) allowed[m] = r.allows(models_.name(static_cast<int32_t>(m)));
  return allowed;
}

// ----------------------------------------------------------------------------------------------------------
// Fit
// ----------------------------------------------------------------------------------------------------------

namespace {

// A set (bits over node-local GPUs) lies in one domain: a single GPU always does; otherwise all known and equal.
bool one_domain(uint64_t set, const int32_t* values) {
  if ((set & (set - 1)) == 0) return true;
  const int32_t first = values[__builtin_ctzll(set)];
  if (first == -1) return false;
  for (uint64_t m = set; m; m &= m - 1)
    if (values[__builtin_ctzll(m)] != first) return false;
  return true;
}

// The lowest n members of a set (all of it when it has fewer).
uint64_t lowest(uint64_t set, int32_t n) {
  uint64_t out = 0;
  for (; set && n > 0; --n) {
    out |= set & (~set + 1);
    set &= set - 1;
  }
  return out;
}

// Sets compared as ascending index tuples.
bool lexicographically_less(uint64_t a, uint64_t b) {
  while (a && b) {
    const int ia = __builtin_ctzll(a), ib = __builtin_ctzll(b);
    if (ia != ib) return ia < ib;
    a &= a - 1, b &= b - 1;
  }
  return false;
}

}  // namespace

// The preferred n-subset of `candidates`: the first n of one group (one NVLink domain and NUMA node; one domain; one
// NUMA node; all) compared by (not in one domain, not in one NUMA node, indices). No allocation: it runs per node.
bool DeviceTable::pick(int32_t slot, uint64_t candidates, int32_t n, uint64_t* out) const {
  if (__builtin_popcountll(candidates) < n) return false;
  const int32_t* link = nvlink_.data() + begin_[slot];
  const int32_t* numa = numa_.data() + begin_[slot];
  uint64_t best = lowest(candidates, n);
  if (n <= 1) {  // one GPU is in one domain of each kind: the lowest index wins
    *out = best;
    return true;
  }
  const auto key = [&](uint64_t set) { return (one_domain(set, link) ? 0 : 2) + (one_domain(set, numa) ? 0 : 1); };
  int best_key = key(best);
  const auto consider = [&](uint64_t members) {
    if (__builtin_popcountll(members) < n) return;
    const uint64_t set = lowest(members, n);
    const int k = key(set);
    if (k < best_key || (k == best_key && lexicographically_less(set, best))) best = set, best_key = k;
  };
  for (uint64_t m = candidates; m && best_key > 0; m &= m - 1) {
    const int32_t i = __builtin_ctzll(m);
    uint64_t same_link = 0, same_numa = 0, same_both = 0;
    for (uint64_t c = candidates; c; c &= c - 1) {
      const int32_t j = __builtin_ctzll(c);
      const uint64_t bit = uint64_t{1} << j;
      if (link[i] != -1 && link[j] == link[i]) same_link |= bit;
      if (numa[i] != -1 && numa[j] == numa[i]) same_numa |= bit;
    }
    same_both = same_link & same_numa;
    consider(same_both);
    consider(same_link);
    consider(same_numa);
  }
  *out = best;
  return true;
}

bool DeviceTable::fit(int32_t slot, const DeviceRequest& r, const std::vector<uint8_t>& allowed,
                      GpuAssignment* out) const {
  if (r.numa_policy != NumaPolicy::kNone && has_numa(slot)) return numa_fit(slot, r, allowed, out);
  return fit_on(slot, r, allowed, ~uint64_t{0}, out);
}

bool DeviceTable::fit_on(int32_t slot, const DeviceRequest& r, const std::vector<uint8_t>& allowed, uint64_t gpus,
                         GpuAssignment* out) const {
  if (out != nullptr) out->kind = r.kind, out->holds.clear(), out->numa_cpu.clear();
  if (!r.uses_gpus()) return true;
  const int32_t g = n_gpus(slot);
  if (g == 0) return false;
  const int32_t base = begin_[slot];
  if (r.kind == GpuKind::kWhole || r.kind == GpuKind::kShared) {
    uint64_t candidates = 0;
    for (int32_t i = 0; i < g; ++i) {
      const int32_t d = base + i;
      if (!((gpus >> i) & 1u) || mig_mode_[d] || !allowed_device(d, allowed)) continue;
      if (r.kind == GpuKind::kWhole ? wholly_free(d) : can_share(d, r)) candidates |= uint64_t{1} << i;
    }
    if (out == nullptr) return __builtin_popcountll(candidates) >= r.count;
    uint64_t chosen = 0;
    if (!pick(slot, candidates, r.count, &chosen)) return false;
    assign(slot, r, chosen, out);
    return true;
  }
  // MIG: lowest GPU index, then lowest start; a configured layout offers only its own free instances.
  int32_t taken = 0;
  for (int32_t i = 0; i < g && taken < r.count; ++i) {
    const int32_t d = base + i;
    if (!((gpus >> i) & 1u) || !mig_mode_[d] || !allowed_device(d, allowed)) continue;
    const int32_t shape = r.mig_shape[mig_geometry_[d]];
    if (shape < 0) continue;
    const MigShape& s = kShapes[shape];
    uint32_t compute = mig_compute_[d], memory = mig_memory_[d];
    const auto try_take = [&](int32_t start) {
      if (taken == r.count || (compute & s.compute_mask(start)) || (memory & s.memory_mask(start))) return;
      compute |= s.compute_mask(start), memory |= s.memory_mask(start);
      ++taken;
      if (out != nullptr) out->holds.push_back({i, 0, 0, shape, start});
    };
    if (layout_n_[d] > 0) {
      uint32_t starts = 0;  // the configured instances of this shape, tried lowest start first
      for (int32_t k = 0; k < layout_n_[d]; ++k) {
        const uint64_t e = (layout_[d] >> (6 * k)) & 63u;
        if (static_cast<int32_t>(e >> 3) == shape) starts |= 1u << (e & 7u);
      }
      for (int32_t st = 0; st < 8; ++st)
        if ((starts >> st) & 1u) try_take(st);
    } else {
      for (int32_t st = 0; st < 8; ++st)
        if ((s.starts >> st) & 1u) try_take(st);
    }
  }
  return taken == r.count;
}

bool DeviceTable::has_numa(int32_t slot) const {
  if (!numa_cpu(slot).empty()) return true;
  for (int32_t i = 0; i < n_gpus(slot); ++i)
    if (numa_[begin_[slot] + i] >= 0) return true;
  return false;
}

// The Topology Manager's alignment, as the scheduler can check it (see vcore.gpu.numa):
//  single-numa-node  the GPUs and the pinned CPUs on one NUMA node;
//  restricted        on the fewest NUMA nodes that could ever hold the request on this node (its "preferred" hint);
//  best-effort       on as few NUMA nodes as possible now, and anywhere when no set fits (never filters).
// Among equally small sets: one whose GPUs share an NVLink domain first, then the lowest NUMA ids.
bool DeviceTable::numa_fit(int32_t slot, const DeviceRequest& r, const std::vector<uint8_t>& allowed,
                           GpuAssignment* out) const {
  const std::vector<NumaCpu>& cpu = numa_cpu(slot);
  const int32_t g = n_gpus(slot), base = begin_[slot];
  int32_t ids[kMaxNumaNodes];
  int32_t m = 0;
  const auto add_id = [&](int32_t id) {
    if (id < 0) return;
    for (int32_t k = 0; k < m; ++k)
      if (ids[k] == id) return;
    if (m < kMaxNumaNodes) ids[m++] = id;
  };
  for (const NumaCpu& c : cpu) add_id(c.id);
  for (int32_t i = 0; i < g; ++i) add_id(numa_[base + i]);
  std::sort(ids, ids + m);
  // Per NUMA node: free and allocatable pinned CPU; the GPUs usable now and the GPUs of the request's kind.
  int64_t cpu_free[kMaxNumaNodes] = {0}, cpu_cap[kMaxNumaNodes] = {0};
  uint64_t now[kMaxNumaNodes] = {0}, all[kMaxNumaNodes] = {0};
  const bool cpu_known = !cpu.empty();
  for (int32_t k = 0; k < m; ++k) {
    for (const NumaCpu& c : cpu)
      if (c.id == ids[k]) cpu_free[k] = c.alloc_milli - c.used_milli, cpu_cap[k] = c.alloc_milli;
    for (int32_t i = 0; i < g; ++i) {
      const int32_t d = base + i;
      if (numa_[d] != ids[k] || !allowed_device(d, allowed)) continue;
      if (r.kind == GpuKind::kMig ? mig_mode_[d] != 0 : mig_mode_[d] == 0) {
        all[k] |= uint64_t{1} << i;
        const bool usable = r.kind == GpuKind::kWhole    ? wholly_free(d)
                            : r.kind == GpuKind::kShared ? can_share(d, r)
                                                         : true;
        if (usable) now[k] |= uint64_t{1} << i;
      }
    }
  }
  const auto cpu_of = [&](uint32_t set, const int64_t* per) {
    int64_t sum = 0;
    for (int32_t k = 0; k < m; ++k)
      if ((set >> k) & 1u) sum += per[k];
    return sum;
  };
  const auto gpus_of = [&](uint32_t set, const uint64_t* per) {
    uint64_t mask = 0;
    for (int32_t k = 0; k < m; ++k)
      if ((set >> k) & 1u) mask |= per[k];
    return mask;
  };
  const int32_t need = r.uses_gpus() ? r.count : 0;
  const auto holds_now = [&](uint32_t set) {
    if (cpu_known && cpu_of(set, cpu_free) < r.numa_cpu_milli) return false;
    if (need == 0) return true;
    return fit_on(slot, r, allowed, gpus_of(set, now), nullptr);
  };
  const auto could_hold = [&](uint32_t set) {  // on this node with nothing running
    if (cpu_known && cpu_of(set, cpu_cap) < r.numa_cpu_milli) return false;
    const int32_t gpus = __builtin_popcountll(gpus_of(set, all));
    return r.kind == GpuKind::kMig ? need == 0 || gpus * kMaxMigInstances >= need : gpus >= need;
  };
  int32_t k_lo = 1, k_hi = m;
  if (r.numa_policy == NumaPolicy::kSingleNumaNode) k_hi = 1;
  if (r.numa_policy == NumaPolicy::kRestricted) {
    int32_t k_min = 0;
    for (int32_t k = 1; k <= m && !k_min; ++k)
      for (uint32_t set = 1; set < (1u << m) && !k_min; ++set)
        if (__builtin_popcount(set) == k && could_hold(set)) k_min = k;
    if (!k_min) return false;
    k_lo = k_hi = k_min;
  }
  uint32_t best = 0;
  int best_key = 0;
  for (int32_t k = k_lo; k <= k_hi && !best; ++k) {
    for (uint32_t set = 1; set < (1u << m); ++set) {
      if (__builtin_popcount(set) != k || !holds_now(set)) continue;
      int key = 0;  // 0: the GPUs can share one NVLink domain
      if (need > 1 && r.kind != GpuKind::kMig) {
        uint64_t chosen = 0;
        pick(slot, gpus_of(set, now), need, &chosen);
        key = one_domain(chosen, nvlink_.data() + base) ? 0 : 1;
      }
      if (!best || key < best_key) best = set, best_key = key;
      if (key == 0) break;
    }
  }
  if (!best) {
    if (r.numa_policy != NumaPolicy::kBestEffort) return false;
    best = (1u << m) - 1;  // best-effort: anywhere, CPUs spread over every NUMA node
    if (!fit_on(slot, r, allowed, ~uint64_t{0}, out)) return false;
  } else if (!fit_on(slot, r, allowed, gpus_of(best, now), out)) {
    return false;
  }
  if (out != nullptr && r.numa_cpu_milli > 0 && cpu_known) {
    int64_t left = r.numa_cpu_milli;
    for (int32_t k = 0; k < m && left > 0; ++k) {
      if (!((best >> k) & 1u) || cpu_free[k] <= 0) continue;
      const int64_t take = std::min(left, cpu_free[k]);
      out->numa_cpu.emplace_back(ids[k], take);
      left -= take;
    }
  }
  return true;
}

void DeviceTable::assign(int32_t slot, const DeviceRequest& r, uint64_t gpus, GpuAssignment* out) const {
  out->kind = r.kind;
  out->holds.clear();
  for (uint64_t m = gpus; m; m &= m - 1) {
    const int32_t i = __builtin_ctzll(m);
    const int64_t mem = memory_[begin_[slot] + i];
    if (r.kind == GpuKind::kWhole)
      out->holds.push_back({i, kGpuMilli, mem});
    else
      out->holds.push_back({i, r.milli_on(mem), r.memory_on(mem)});
  }
}

std::string DeviceTable::check_assignment(int32_t slot, const DeviceRequest& r, const std::vector<uint8_t>& allowed,
                                          const GpuAssignment& a) const {
  for (const GpuHold& h : a.holds) {  // distinct, existing GPUs: assign() built `a` from a bit mask of them
    const std::string at = "GPU " + std::to_string(h.gpu);
    const int32_t d = begin_[slot] + h.gpu;
    if (mig_mode_[d]) return at + ": is in MIG mode";
    if (!allowed_device(d, allowed)) return at + ": model " + models_.name(model_[d]) + " is not allowed";
    if (r.kind == GpuKind::kWhole && !wholly_free(d)) return at + ": is not wholly free";
    if (r.kind == GpuKind::kShared) {
      if (exclusive_[d]) return at + ": is held exclusively";
      if (h.milli > kGpuMilli - used_milli_[d]) return at + ": not enough free compute share";
      if (h.memory_mib > memory_[d] - used_memory_[d]) return at + ": not enough free memory";
    }
  }
  if (static_cast<int32_t>(a.holds.size()) != r.count)
    return std::to_string(a.holds.size()) + " GPUs given, the pod needs " + std::to_string(r.count);
  return "";
}

void DeviceTable::apply(int32_t slot, const GpuAssignment& a, int sign) {
  if (!a.numa_cpu.empty() && slot < static_cast<int32_t>(numa_cpu_.size()))
    for (const auto& [id, milli] : a.numa_cpu)
      for (NumaCpu& c : numa_cpu_[slot])
        if (c.id == id) c.used_milli += sign * milli;  // a NUMA node that vanished holds nothing any more
  const int32_t base = begin_[slot];
  for (const GpuHold& h : a.holds) {
    const int32_t d = base + h.gpu;
    switch (a.kind) {
      case GpuKind::kWhole:
        exclusive_[d] = sign > 0;
        break;
      case GpuKind::kShared:
        used_milli_[d] += sign * h.milli;
        used_memory_[d] += sign * h.memory_mib;
        holders_[d] += sign;
        break;
      case GpuKind::kMig: {
        const MigShape& s = kShapes[h.mig_shape];
        if (sign > 0)
          mig_compute_[d] |= s.compute_mask(h.mig_start), mig_memory_[d] |= s.memory_mask(h.mig_start);
        else
          mig_compute_[d] &= ~s.compute_mask(h.mig_start), mig_memory_[d] &= ~s.memory_mask(h.mig_start);
        break;
      }
      default:
        break;
    }
  }
}

// ----------------------------------------------------------------------------------------------------------
// Policy view
// ----------------------------------------------------------------------------------------------------------

int32_t DeviceTable::policy_gpus(int32_t slot, int32_t* free, int32_t* local) const {
  int32_t k = 0;
  for (int32_t i = 0; i < n_gpus(slot); ++i) {
    const int32_t d = begin_[slot] + i;
    if (mig_mode_[d]) continue;
    free[k] = exclusive_[d] ? 0 : std::max(0, kGpuMilli - used_milli_[d]);
    local[k++] = i;
  }
  return k;
}

GpuOptions DeviceTable::policy_options(int32_t slot, const DeviceRequest& r, const std::vector<uint8_t>& allowed,
                                       const GpuAssignment& fitted) const {
  GpuOptions o;
  if (!r.uses_gpus() || r.kind == GpuKind::kMig) return o;
  int32_t k = 0;
  for (int32_t i = 0; i < n_gpus(slot); ++i) {
    const int32_t d = begin_[slot] + i;
    if (mig_mode_[d]) continue;
    if (r.kind == GpuKind::kShared && r.count == 1 && allowed_device(d, allowed) && can_share(d, r))
      o.candidates |= uint64_t{1} << k;
    for (const GpuHold& h : fitted.holds)
      if (h.gpu == i) o.whole |= uint64_t{1} << k;
    ++k;
  }
  return o;
}

int32_t DeviceTable::node_model(int32_t slot) const {
  for (int32_t i = 0; i < n_gpus(slot); ++i)
    if (!mig_mode_[begin_[slot] + i]) return model_[begin_[slot] + i];
  return -1;
}

int64_t DeviceTable::device_memory(int32_t slot) const {
  for (int32_t i = 0; i < n_gpus(slot); ++i)
    if (!mig_mode_[begin_[slot] + i]) return memory_[begin_[slot] + i];
  return 0;
}

DeviceTable::Snapshot DeviceTable::snapshot(int32_t n_slots) const {
  Snapshot s;
  s.offsets.push_back(0);
  for (int32_t slot = 0; slot < n_slots; ++slot) {
    for (int32_t i = 0; i < n_gpus(slot); ++i) {
      const int32_t d = begin_[slot] + i;
      s.model.push_back(model_[d]), s.numa.push_back(numa_[d]), s.nvlink.push_back(nvlink_[d]);
      s.used_milli.push_back(exclusive_[d] ? kGpuMilli : used_milli_[d]);
      s.holders.push_back(holders_[d]), s.mig_compute.push_back(mig_compute_[d]),
          s.mig_memory.push_back(mig_memory_[d]);
      s.memory_mib.push_back(memory_[d]);
      s.used_memory_mib.push_back(exclusive_[d] ? memory_[d] : used_memory_[d]);
      s.mig_mode.push_back(mig_mode_[d]), s.exclusive.push_back(exclusive_[d]);
    }
    s.offsets.push_back(static_cast<int64_t>(s.model.size()));
  }
  return s;
}

size_t DeviceTable::native_bytes() const {
  const size_t per_device = 4 * 5 + 8 * 3 + 1 * 6 + 8;
  size_t bytes = begin_.capacity() * 8 + model_.capacity() * per_device + numa_cpu_.capacity() * sizeof(numa_cpu_[0]);
  for (const auto& v : numa_cpu_) bytes += v.capacity() * sizeof(NumaCpu);
  return bytes;
}

}  // namespace vcore
