// Topology kernels: the gang domain search (Kueue's BestFit over the domain tree), Volcano's network-topology
// node score and its HyperNode binpack score. They read the tree, node_topo and the resource rows only; the caller
// holds the state's shared lock.
//
// place_gang, in three phases:
//  1. Aggregate: per domain, how many of the gang's pods fit (the sum of `fit` over its nodes), and with sub-group
//     layers how many whole groups fit, bottom-up: a domain of row <= a layer's max_row holds floor(units of the
//     finer layer / ratio) groups, a higher domain the sum of its children's groups.
//  2. Choose: from start_row up to limit_row, the first row with a domain able to hold the gang (domains that
//     cannot are pruned by their aggregate, so no per-node work is spent on them) and there the tightest such
//     domain (Kueue BestFit, Volcano HyperNode binpack); equally tight domains (within tie_slack) are ranked by
//     the link-state score, then by free capacity, then by name. A gang with running pods only considers the
//     domains that already contain them. Soft constraints fall back to the virtual root.
//  3. Place inside it, level by level, as Kueue's BestFit: children (domains and the domain's own nodes) sorted
//     by capacity (descending), then free pods (ascending), then name; take them whole while the rest does not
//     fit, then the tightest child that holds the remainder. Whole children are filled before a new one is
//     opened, so the free capacity left is in as few, as large blocks as possible. Each chosen child keeps its
//     count (Kueue's own rule at and below the slice level; above it Kueue pools the grandchildren of all chosen
//     children, which can undo a level's decision).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "vcore/cluster_state.h"
#include "vcore/errors.h"
#include "vcore/topology.h"

namespace vcore {
namespace {

struct Entity {
  int32_t id;
  bool node;
  int64_t cap;  // units of the active layer (pods without one)
  int64_t agg;  // free pods
};

// Volcano's HyperNode binpack weighs tier t by fading^(t - 1) over every tier number in [lo, hi]; up to this many
// tier numbers the weights are summed one by one.
constexpr int64_t kTierLoopSpan = 64;

// Tier t's share of those weights, from the geometric series without forming the powers themselves (which overflow
// or underflow for far-apart tiers): a share of a sum of n terms f^j, j = 0..n-1, scaled by the largest term.
double tier_share(double fading, int64_t t, int64_t lo, int64_t hi) {
  const double n = static_cast<double>(hi - lo + 1);
  if (fading == 0) return t == 1 ? 1.0 : 0.0;  // only 0^0 = 1 weighs
  if (fading == 1) return 1.0 / n;
  if (fading < 1)
    return std::pow(fading, static_cast<double>(t - lo)) * (1 - fading) / -std::expm1(n * std::log(fading));
  const double g = 1 / fading;
  return std::pow(g, static_cast<double>(hi - t)) * (1 - g) / -std::expm1(n * std::log(g));
}

std::string tier_label(const std::vector<int64_t>& tiers, const std::vector<std::string>& names, int32_t row) {
  if (row >= static_cast<int32_t>(tiers.size())) return "the whole cluster";
  std::string out = "tier " + std::to_string(tiers[row]);
  if (!names[row].empty()) out += " (" + names[row] + ")";
  return out;
}

}  // namespace

DomainChoice Topology::place_gang(const ClusterState& s, const DomainRequest& in) const {
  const int32_t rows = n_rows(), n = s.n_slots(), nd = n_domains();
  const int32_t K = static_cast<int32_t>(in.layers.size());
  // -- validation -----------------------------------------------------------------------------------------
  if (static_cast<int32_t>(in.fit.size()) != n)
    throw Invalid("place_gang: fit has " + std::to_string(in.fit.size()) + " entries, the cluster " +
                  std::to_string(n) + " node slots");
  if (!in.running.empty() && static_cast<int32_t>(in.running.size()) != n)
    throw Invalid("place_gang: running has " + std::to_string(in.running.size()) + " entries, the cluster " +
                  std::to_string(n) + " node slots");
  if (in.n_pods < 1) throw Invalid("place_gang: n_pods must be >= 1");
  if (in.start_row < 0 || in.start_row > in.limit_row || in.limit_row > rows)
    throw Invalid("place_gang: need 0 <= start_row <= limit_row <= " + std::to_string(rows) + " (rows), got " +
                  std::to_string(in.start_row) + ", " + std::to_string(in.limit_row));
  if (in.tie_slack < 0) throw Invalid("place_gang: tie_slack must be >= 0");
  if (!std::isfinite(in.bandwidth_weight) || !std::isfinite(in.congestion_weight))
    throw Invalid("place_gang: link weights must be finite");
  for (int32_t k = 0; k < K; ++k) {
    const PartitionLayer& l = in.layers[k];
    const std::string at = "place_gang: layers[" + std::to_string(k) + "]";
    if (l.size < 1) throw Invalid(at + ": size must be >= 1");
    if (l.max_row < 0 || l.max_row >= rows)
      throw Invalid(at + ": max_row must name a tier row (0.." + std::to_string(rows - 1) + ")");
    if (in.hard && l.max_row > in.limit_row) throw Invalid(at + ": a sub-group limit above the gang's limit");
    if (k > 0 && (l.size % in.layers[k - 1].size != 0 || l.max_row < in.layers[k - 1].max_row))
      throw Invalid(at + ": layers must nest (sizes dividing the next, rows non-decreasing)");
  }
  const int64_t unit_top = K ? in.layers[K - 1].size : 1;
  if (in.n_pods % unit_top != 0)
    throw Invalid("place_gang: " + std::to_string(in.n_pods) + " pods are not whole groups of " +
                  std::to_string(unit_top));
  for (int32_t slot = 0; slot < n; ++slot) {
    if (in.fit[slot] < 0) throw Invalid("place_gang: fit must be >= 0 (slot " + std::to_string(slot) + ")");
    if (!in.running.empty() && in.running[slot] < 0) throw Invalid("place_gang: running must be >= 0");
  }

  DomainChoice res;
  res.counts.assign(static_cast<size_t>(n), 0);
  const int64_t need = in.n_pods / unit_top;

  // -- 1. aggregate ---------------------------------------------------------------------------------------
  std::vector<int64_t> agg(static_cast<size_t>(nd), 0);
  int64_t root_agg = 0;
  for (int32_t slot = 0; slot < n; ++slot) {
    const int32_t f = in.fit[slot];
    if (f == 0 || !s.is_live(slot)) continue;
    root_agg += f;
    for (int32_t r = 0; r < rows; ++r)
      if (const int32_t d = at(r, slot); d >= 0) agg[d] += f;
  }
  std::vector<std::vector<int32_t>> by_row(static_cast<size_t>(rows));
  std::vector<int32_t> roots;
  for (int32_t d = 0; d < nd; ++d) {
    if (!domain_live(d)) continue;
    by_row[domains_[d].row].push_back(d);
    if (domains_[d].parent < 0) roots.push_back(d);
  }
  std::vector<int64_t> units(static_cast<size_t>(K) * nd, 0), below(static_cast<size_t>(K) * nd, 0);
  std::vector<int64_t> root_units(static_cast<size_t>(K), 0);
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t d : by_row[r])
      for (int32_t k = 0; k < K; ++k) {
        const size_t i = static_cast<size_t>(k) * nd + d;
        if (r <= in.layers[k].max_row)
          units[i] = k == 0 ? agg[d] / in.layers[0].size : units[i - nd] / (in.layers[k].size / in.layers[k - 1].size);
        else
          units[i] = below[i];
        const int32_t p = domains_[d].parent;
        if (p >= 0)
          below[static_cast<size_t>(k) * nd + p] += units[i];
        else
          root_units[k] += units[i];
      }
  const auto capacity = [&](int32_t d) { return K ? units[static_cast<size_t>(K - 1) * nd + d] : agg[d]; };
  const int64_t root_capacity = K ? root_units[K - 1] : root_agg;

  // -- 2. choose the enclosing domain -----------------------------------------------------------------------
  int32_t anchor = -2;  // -2: nothing runs yet; -1: the running pods share no domain; else their lowest domain
  if (!in.running.empty()) {
    std::vector<int32_t> used;
    for (int32_t slot = 0; slot < n; ++slot)
      if (in.running[slot] > 0 && s.is_live(slot)) used.push_back(slot);
    if (!used.empty()) {
      anchor = -1;
      for (int32_t r = 0; r < rows && anchor < 0; ++r) {
        const int32_t d0 = at(r, used[0]);
        if (d0 >= 0 && std::all_of(used.begin(), used.end(), [&](int32_t u) { return at(r, u) == d0; })) anchor = d0;
      }
    }
  }
  const auto name_less = [&](int32_t a, int32_t b) { return domains_[a].name < domains_[b].name; };
  int32_t chosen = -1, chosen_row = -1;
  int64_t best_seen = -1;
  const bool link = in.bandwidth_weight != 0 || in.congestion_weight != 0;
  for (int32_t r = in.start_row; r <= std::min(in.limit_row, rows - 1) && chosen_row < 0; ++r) {
    std::vector<int32_t> candidates;
    if (anchor == -2) {
      candidates = by_row[r];
    } else if (anchor >= 0 && domains_[anchor].row <= r) {
      int32_t a = anchor;
      while (a >= 0 && domains_[a].row < r) a = domains_[a].parent;
      if (a >= 0 && domains_[a].row == r) candidates.push_back(a);
    }
    std::vector<int32_t> feasible;
    int64_t min_slack = std::numeric_limits<int64_t>::max();
    double max_bw = 0;
    for (int32_t d : candidates) {
      best_seen = std::max(best_seen, capacity(d));
      if (capacity(d) < need) continue;
      feasible.push_back(d);
      min_slack = std::min(min_slack, capacity(d) - need);
      max_bw = std::max(max_bw, domains_[d].bandwidth_gbps);
    }
    if (feasible.empty()) continue;
    const auto link_score = [&](int32_t d) {
      if (!link) return 0.0;
      const double bw = domains_[d].bandwidth_gbps > 0 && max_bw > 0 ? domains_[d].bandwidth_gbps / max_bw : 0.0;
      const double cong = domains_[d].congestion > 0 ? domains_[d].congestion : 0.0;
      return in.bandwidth_weight * bw - in.congestion_weight * cong;
    };
    int32_t best = -1;
    for (int32_t d : feasible) {
      const int64_t slack = capacity(d) - need;
      if (slack > min_slack + in.tie_slack) continue;
      if (best < 0) {
        best = d;
        continue;
      }
      const double ls = link_score(d), lb = link_score(best);
      const int64_t sb = capacity(best) - need;
      if (ls != lb ? ls > lb : slack != sb ? slack < sb : agg[d] != agg[best] ? agg[d] < agg[best] : name_less(d, best))
        best = d;
    }
    chosen = best;
    chosen_row = r;
  }
  if (chosen_row < 0 && (!in.hard || in.limit_row == rows)) {
    best_seen = std::max(best_seen, root_capacity);
    if (root_capacity >= need) chosen_row = rows;
  }
  const auto pods_text = [](int64_t n) { return std::to_string(n) + (n == 1 ? " pod" : " pods"); };
  const std::string what =
      K ? pods_text(in.n_pods) + " (" + std::to_string(need) + " groups of " + std::to_string(unit_top) + ")"
        : pods_text(in.n_pods);
  res.best_capacity = std::max<int64_t>(best_seen, 0);
  if (chosen_row < 0) {
    const std::string span = in.start_row == std::min(in.limit_row, rows)
                                 ? tier_label(tiers_, tier_names_, in.start_row)
                                 : tier_label(tiers_, tier_names_, in.start_row) + " to " +
                                       tier_label(tiers_, tier_names_, std::min(in.limit_row, rows));
    if (!in.hard || in.limit_row == rows) {
      res.reason = "InsufficientCapacity";
      res.message = "only " + std::to_string(root_capacity * unit_top) + " of " + what + " fit in the cluster" +
                    (K ? " as whole groups" : "");
    } else if (anchor == -1 || (anchor >= 0 && domains_[anchor].row > std::min(in.limit_row, rows - 1))) {
      res.reason = "TopologyUnsatisfiable";
      res.message = "the gang's running pods are in no common domain of " + span + "; " + what + " cannot join them";
    } else {
      res.reason = "TopologyUnsatisfiable";
      res.message = "no domain of " + span + (anchor >= 0 ? " containing the gang's running pods" : "") + " can hold " +
                    what + "; the largest holds " + pods_text(res.best_capacity * unit_top);
    }
    return res;
  }
  res.placed = true;
  res.domain = chosen_row == rows ? -1 : chosen;
  res.row = chosen_row;

  // -- 3. place inside the enclosing domain ---------------------------------------------------------------
  // The enclosure's nodes that can take a pod, bucketed by their lowest domain (bucket nd: in no domain).
  std::vector<int32_t> offsets(static_cast<size_t>(nd) + 2, 0), members;
  std::vector<int32_t> inside;
  for (int32_t slot = 0; slot < n; ++slot) {
    if (in.fit[slot] == 0 || !s.is_live(slot)) continue;
    if (res.domain >= 0 && at(chosen_row, slot) != res.domain) continue;
    inside.push_back(slot);
    const int32_t leaf = node_leaf(slot);
    ++offsets[static_cast<size_t>(leaf < 0 ? nd : leaf) + 1];
  }
  for (size_t i = 1; i < offsets.size(); ++i) offsets[i] += offsets[i - 1];
  members.resize(inside.size());
  {
    std::vector<int32_t> fill(offsets.begin(), offsets.end() - 1);
    for (int32_t slot : inside) {
      const int32_t leaf = node_leaf(slot);
      members[static_cast<size_t>(fill[static_cast<size_t>(leaf < 0 ? nd : leaf)]++)] = slot;
    }
  }
  const auto& names = s.names();
  const auto entity_name = [&](const Entity& e) -> const std::string& {
    return e.node ? names[e.id] : domains_[e.id].name;
  };
  // Recursive over the domain tree, whose depth is bounded by construction: a child's row is strictly lower than
  // its parent's (tier order is validated) and there are at most 16 rows, so at most 17 frames whatever the input.
  std::function<void(int32_t, int64_t)> place = [&](int32_t d, int64_t pods) {
    const int32_t row_d = d < 0 ? rows : domains_[d].row;
    int32_t k = -1;
    for (int32_t j = 0; j < K; ++j)
      if (in.layers[j].max_row < row_d) k = j;
    const int64_t unit = k >= 0 ? in.layers[k].size : 1;
    std::vector<Entity> ents;
    for (int32_t c : d < 0 ? roots : children_[d]) {
      const int64_t cap = k >= 0 ? units[static_cast<size_t>(k) * nd + c] : agg[c];
      if (cap > 0) ents.push_back({c, false, cap, agg[c]});
    }
    if (k < 0) {
      const size_t b = static_cast<size_t>(d < 0 ? nd : d);
      for (int32_t i = offsets[b]; i < offsets[b + 1]; ++i)
        ents.push_back({members[i], true, in.fit[members[i]], in.fit[members[i]]});
    }
    std::sort(ents.begin(), ents.end(), [&](const Entity& a, const Entity& b) {
      if (a.cap != b.cap) return a.cap > b.cap;
      if (a.agg != b.agg) return a.agg < b.agg;
      return entity_name(a) < entity_name(b);
    });
    int64_t remaining = pods / unit;
    const auto assign = [&](const Entity& e, int64_t u) {
      if (e.node)
        res.counts[e.id] += static_cast<int32_t>(u);  // nodes are only children without a layer (unit 1)
      else
        place(e.id, u * unit);
    };
    for (size_t i = 0; i < ents.size() && remaining > 0; ++i) {
      if (ents[i].cap >= remaining) {
        size_t j = i;
        for (size_t t = i + 1; t < ents.size(); ++t)
          if (ents[t].cap >= remaining && ents[t].cap < ents[j].cap) j = t;
        assign(ents[j], remaining);
        remaining = 0;
      } else {
        assign(ents[i], ents[i].cap);
        remaining -= ents[i].cap;
      }
    }
    if (remaining > 0)
      throw std::logic_error("place_gang: capacity bookkeeping broke (remaining " + std::to_string(remaining) + ")");
  };
  place(res.domain, in.n_pods);
  return res;
}

std::vector<double> Topology::node_scores(const ClusterState& s, const std::vector<int32_t>& job_pods,
                                          int64_t job_tasks, double weight,
                                          const std::vector<uint8_t>& candidates) const {
  const int32_t n = s.n_slots(), rows = n_rows();
  if (static_cast<int32_t>(job_pods.size()) != n)
    throw Invalid("node_scores: job_pods has " + std::to_string(job_pods.size()) + " entries, the cluster " +
                  std::to_string(n) + " node slots");
  if (!candidates.empty() && static_cast<int32_t>(candidates.size()) != n)
    throw Invalid("node_scores: candidates has " + std::to_string(candidates.size()) + " entries, the cluster " +
                  std::to_string(n) + " node slots");
  if (!std::isfinite(weight)) throw Invalid("node_scores: weight must be finite");
  if (std::any_of(job_pods.begin(), job_pods.end(), [](int32_t v) { return v < 0; }))
    throw Invalid("node_scores: job_pods must be >= 0");
  std::vector<double> out(static_cast<size_t>(n), 0.0);
  if (rows == 0) return out;
  // The job's allocated HyperNode: the lowest common domain of the lowest domains of its nodes.
  int32_t allocated = -2;
  std::vector<int64_t> pods_in(static_cast<size_t>(n_domains()), 0);
  for (int32_t slot = 0; slot < n; ++slot) {
    if (job_pods[slot] == 0 || !s.is_live(slot)) continue;
    for (int32_t r = 0; r < rows; ++r)
      if (const int32_t d = at(r, slot); d >= 0) pods_in[d] += job_pods[slot];
    const int32_t leaf = node_leaf(slot);
    if (allocated == -1) continue;
    allocated = leaf < 0 ? -1 : allocated == -2 ? leaf : lca(allocated, leaf);
  }
  if (allocated < 0) return out;  // the first pod, or pods with no common HyperNode: no preference
  // Volcano's session adds a virtual HyperNode of every node one tier above the highest (addClusterTopHyperNode):
  // the tier scale runs up to it, and nodes that meet the job's HyperNode only there score 0.
  const double min_tier = static_cast<double>(tiers_.front()), top_tier = static_cast<double>(tiers_.back()) + 1;
  const auto considered = [&](int32_t slot) { return s.is_live(slot) && (candidates.empty() || candidates[slot]); };
  double best = -1;
  int32_t at_best = 0;
  for (int32_t slot = 0; slot < n; ++slot) {
    if (!considered(slot)) continue;
    const int32_t leaf = node_leaf(slot);
    double score = 0;
    if (leaf == allocated) {
      score = 100.0;
    } else if (leaf >= 0) {
      const int32_t l = lca(allocated, leaf);
      if (l >= 0) score = 100.0 * (top_tier - static_cast<double>(tiers_[domains_[l].row])) / (top_tier - min_tier);
    }
    out[slot] = score * weight;
    if (out[slot] > best) {
      best = out[slot];
      at_best = 0;
    }
    at_best += out[slot] == best;
  }
  // Volcano breaks a tie at the top by the share of the job's pods already in the node's HyperNode.
  if (at_best > 1 && job_tasks > 0)
    for (int32_t slot = 0; slot < n; ++slot)
      if (considered(slot) && out[slot] == best && node_leaf(slot) >= 0)
        out[slot] += 100.0 * static_cast<double>(pods_in[node_leaf(slot)]) / static_cast<double>(job_tasks) * weight;
  return out;
}

std::vector<double> Topology::binpack_scores(const ClusterState& s, const std::vector<BinpackResource>& resources,
                                             double fading, double weight) const {
  const int32_t n = s.n_slots(), rows = n_rows(), nd = n_domains();
  if (!std::isfinite(fading) || fading < 0) throw Invalid("binpack_scores: fading must be finite and >= 0");
  if (!std::isfinite(weight) || weight < 0) throw Invalid("binpack_scores: weight must be finite and >= 0");
  int64_t weight_sum = 0;
  for (const BinpackResource& r : resources) {
    if (r.axis < 0 || r.axis >= s.n_resources()) throw Invalid("binpack_scores: resource axis out of range");
    if (r.request < 0 || r.weight < 0) throw Invalid("binpack_scores: requests and weights must be >= 0");
    weight_sum += r.weight;
  }
  std::vector<double> out(static_cast<size_t>(n), 0.0);
  if (rows == 0 || weight_sum == 0) return out;
  // Per domain and resource: allocatable and used over its live nodes (every row at once).
  const size_t k = resources.size();
  std::vector<double> alloc(static_cast<size_t>(nd) * k, 0.0), used(static_cast<size_t>(nd) * k, 0.0);
  for (int32_t slot = 0; slot < n; ++slot) {
    if (!s.is_live(slot)) continue;
    for (int32_t r = 0; r < rows; ++r) {
      const int32_t d = at(r, slot);
      if (d < 0) continue;
      for (size_t i = 0; i < k; ++i) {
        alloc[static_cast<size_t>(d) * k + i] += static_cast<double>(s.allocatable().row(resources[i].axis)[slot]);
        used[static_cast<size_t>(d) * k + i] += static_cast<double>(s.requested().row(resources[i].axis)[slot]);
      }
    }
  }
  // The fullness with the pod of the domains' resources (and of the whole cluster's, kept past the domains).
  std::vector<double> cluster_alloc(k, 0.0), cluster_used(k, 0.0);
  for (int32_t slot = 0; slot < n; ++slot) {
    if (!s.is_live(slot)) continue;
    for (size_t i = 0; i < k; ++i) {
      cluster_alloc[i] += static_cast<double>(s.allocatable().row(resources[i].axis)[slot]);
      cluster_used[i] += static_cast<double>(s.requested().row(resources[i].axis)[slot]);
    }
  }
  const auto fullness = [&](const double* a, const double* u0) {
    double sum = 0;
    for (size_t i = 0; i < k; ++i) {
      const double u = u0[i] + static_cast<double>(resources[i].request);
      if (u > a[i]) return 0.0;
      if (a[i] > 0) sum += static_cast<double>(resources[i].weight) * u / a[i];
    }
    return sum / static_cast<double>(weight_sum);
  };
  std::vector<double> full(static_cast<size_t>(nd), 0.0);
  for (int32_t d = 0; d < nd; ++d)
    full[static_cast<size_t>(d)] = fullness(&alloc[static_cast<size_t>(d) * k], &used[static_cast<size_t>(d) * k]);
  const double cluster_full = fullness(cluster_alloc.data(), cluster_used.data());
  // Tier weights fading^(tier - 1) over every tier number from the lowest to Volcano's virtual cluster-wide tier one
  // above the highest (addClusterTopHyperNode; a tier without HyperNodes scores 1), summed tier by tier as Volcano
  // does while that is a short, finite sum. Tiers are any int32, so for a wide span (or weights that overflow) each
  // tier's share of the sum comes from the geometric series instead: the cost never grows with the tier numbers
  // and the score stays in 0..100 * weight.
  const int64_t lo = tiers_.front(), top = tiers_.back() + 1;
  std::vector<double> row_weight(static_cast<size_t>(rows), 0.0);
  double tier_sum = 0, absent = 0, top_weight = 0;
  if (top - lo < kTierLoopSpan) {
    for (int64_t tier = lo; tier <= top; ++tier) {
      const double w = fading > 0 ? std::pow(fading, static_cast<double>(tier - 1)) : (tier == 1 ? 1.0 : 0.0);
      tier_sum += w;
      const auto it = std::find(tiers_.begin(), tiers_.end(), tier);
      if (tier == top)
        top_weight = w;
      else if (it == tiers_.end())
        absent += w;
      else
        row_weight[static_cast<size_t>(it - tiers_.begin())] = w;
    }
  }
  if (top - lo >= kTierLoopSpan || !std::isfinite(tier_sum)) {
    tier_sum = 1;  // the weights hold shares of the whole sum
    top_weight = tier_share(fading, top, lo, top);
    absent = 1 - top_weight;
    for (int32_t r = 0; r < rows; ++r) {
      row_weight[static_cast<size_t>(r)] = tier_share(fading, tiers_[static_cast<size_t>(r)], lo, top);
      absent -= row_weight[static_cast<size_t>(r)];
    }
    absent = std::max(absent, 0.0);
    if (fading == 0 && !(lo <= 1 && 1 <= top)) tier_sum = 0;  // every weight is 0
  }
  if (!(tier_sum > 0)) return out;
  const double scale = 100.0 * weight / tier_sum;
  for (int32_t slot = 0; slot < n; ++slot) {
    if (!s.is_live(slot)) continue;
    double total = absent + top_weight * cluster_full;
    for (int32_t r = 0; r < rows; ++r) {
      const int32_t d = at(r, slot);
      total += row_weight[static_cast<size_t>(r)] * (d >= 0 ? full[static_cast<size_t>(d)] : 1.0);
    }
    out[static_cast<size_t>(slot)] = std::clamp(total * scale, 0.0, 100.0 * weight);
  }
  return out;
}

}  // namespace vcore
