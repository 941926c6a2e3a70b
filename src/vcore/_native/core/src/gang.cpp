// Engine::place_gang and Engine::fit_counts (gang.h): gang placement over the fused per-pod kernel.
#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "vcore/engine.h"
#include "vcore/pod_kernel.h"

namespace vcore {

using namespace kernel;  // NOLINT: the kernel's names read as the engine's own

namespace {

// Whether two compiled pods filter and score alike on every node: tasks of one run share a kernel.
bool same_requirement(const LabelRequirement& a, const LabelRequirement& b) {
  return a.key == b.key && a.op == b.op && a.values == b.values && a.number == b.number;
}
bool same_term(const NodeSelectorTerm& a, const NodeSelectorTerm& b) {
  return std::equal(a.expressions.begin(), a.expressions.end(), b.expressions.begin(), b.expressions.end(),
                    same_requirement) &&
         std::equal(
             a.fields.begin(), a.fields.end(), b.fields.begin(), b.fields.end(),
             [](const NameRequirement& x, const NameRequirement& y) { return x.op == y.op && x.names == y.names; });
}
bool same_gpu_request(const DeviceRequest& a, const DeviceRequest& b) {
  if (a.kind != b.kind || a.count != b.count || a.milli != b.milli || a.memory_mib != b.memory_mib ||
      a.memory_milli != b.memory_milli || a.mig_shape != b.mig_shape || a.has_models != b.has_models ||
      a.models != b.models)
    return false;
  return std::equal(a.product_terms.begin(), a.product_terms.end(), b.product_terms.begin(), b.product_terms.end(),
                    [](const ProductTerm& x, const ProductTerm& y) {
                      return x.any == y.any && x.never == y.never && x.allowed == y.allowed && x.excluded == y.excluded;
                    });
}
bool same_placement_spec(const CompiledPod& a, const CompiledPod& b) {
  return a.requests == b.requests && a.nonzero_cpu_milli == b.nonzero_cpu_milli &&
         a.nonzero_mem_bytes == b.nonzero_mem_bytes && a.score_cpu_milli == b.score_cpu_milli &&
         a.score_mem_bytes == b.score_mem_bytes && a.node_selector == b.node_selector &&
         a.has_required_terms == b.has_required_terms &&
         std::equal(a.required_terms.begin(), a.required_terms.end(), b.required_terms.begin(), b.required_terms.end(),
                    same_term) &&
         std::equal(a.preferred_terms.begin(), a.preferred_terms.end(), b.preferred_terms.begin(),
                    b.preferred_terms.end(),
                    [](const auto& x, const auto& y) { return x.first == y.first && same_term(x.second, y.second); }) &&
         std::equal(a.tolerations.begin(), a.tolerations.end(), b.tolerations.begin(), b.tolerations.end(),
                    [](const Toleration& x, const Toleration& y) {
                      return x.key == y.key && x.exists == y.exists && x.value == y.value && x.effect == y.effect;
                    }) &&
         a.tolerates_unschedulable == b.tolerates_unschedulable && same_gpu_request(a.gpu, b.gpu) &&
         a.volumes == b.volumes;  // pods with volumes never share a kernel (their claims differ)
}

// A run's candidate nodes: feasible slots found by discovery, with their base score (before the normalized
// plugins) and the raw values the normalized plugins scale by their maximum over the candidates.
// The heap is built once per discovery (make_heap, linear) rather than a push per candidate: a run usually
// examines hundreds of nodes to place a few dozen tasks. Discovery keeps only the best `budget` entries (the tasks
// still to place), in a min-heap while it adds: each task takes one node, so after t < budget placements at least
// budget - t kept nodes are untouched and rank above every node left out; the best live node is always kept.
// Every candidate stays in nodes_ (the live count, the normalization range and rebuild() see them all).
class Candidates {
 public:
  // The normalized plugins count only where the pod's kernel computes them (PodKernel::count_prefer_taints,
  // sum_preferred), as Engine::schedule adds them. `index` maps slots to candidates: all -1 on entry, and left
  // so again when the run ends (it is the engine's, reused by every run).
  // A node's raw normalized values must not change while it is a candidate (TaintToleration's and NodeAffinity's
  // do not; a pod whose node plugins' do is placed one task per run, with candidates of its own).
  // `fraction` (per slot, or empty): the fractional part of a node's score bonus, in 2^-32 units, which ranks nodes
  // of equal integer totals before the tie rule does.
  Candidates(std::vector<int32_t>& index, const PodKernel& kernel, uint64_t pod_mix,
             const std::vector<uint64_t>& name_rank, const std::vector<uint32_t>& fraction, size_t expected)
      : index_(index),
        terms_(kernel.normalized()),
        n_terms_(terms_.size()),
        pod_mix_(pod_mix),
        name_rank_(name_rank),
        fraction_(fraction) {
    nodes_.reserve(expected);
    heap_.reserve(expected);
  }
  ~Candidates() {
    for (const Node& n : nodes_) index_[static_cast<size_t>(n.slot)] = -1;
  }
  Candidates(const Candidates&) = delete;
  Candidates& operator=(const Candidates&) = delete;

  bool empty() const { return live_ == 0; }

  // How many tasks the entries added from now on may still have to serve (at least one).
  void set_budget(int64_t tasks) { budget_ = static_cast<size_t>(std::max<int64_t>(tasks, 1)); }

  void add(int32_t slot, int64_t base, int64_t* const* raw, int32_t j) {
    index_[static_cast<size_t>(slot)] = static_cast<int32_t>(nodes_.size());
    Node& node = nodes_.emplace_back();
    node.slot = slot, node.base = base, node.version = 0, node.live = true;
    for (size_t k = 0; k < n_terms_; ++k) {
      node.raw[k] = raw[k][j];
      if (raw[k][j] != kIgnoredScore && (raw[k][j] < range_.min[k] || raw[k][j] > range_.max[k])) {
        range_.add(static_cast<int32_t>(k), raw[k][j]);
        tabled_ = false;
        stale_ = true;  // every total changes with a new minimum or maximum
      }
    }
    ++live_;
    if (!stale_) keep(entry(nodes_.back()));
  }

  // The node plugins' normalized scores of every candidate, over the candidates at once (their PreScore sees the
  // feasible set); for a pod placed one task per run, after each discovery.
  void score_plugins(const PodKernel& kernel) {
    if (!kernel.has_plugin_terms() || nodes_.empty()) return;
    add_plugin_scores(kernel, nodes_);
    range_ = NormalizationRange();
    tabled_ = false;
    for (const Node& m : nodes_)
      if (m.live)
        for (size_t k = 0; k < n_terms_; ++k) range_.add(static_cast<int32_t>(k), m.raw[k]);
    stale_ = true;
  }

  // The best live candidate (highest total, then the tie rule), or -1; `tasks`: how many tasks, this one included,
  // the candidates may still have to serve.
  int32_t best(int64_t tasks) {
    if (stale_) rebuild(tasks);
    if (!heaped_) {
      std::make_heap(heap_.begin(), heap_.end());
      heaped_ = true;
    }
    while (!heap_.empty()) {
      const Entry& top = heap_.front();
      const Node& n = nodes_[static_cast<size_t>(index_[static_cast<size_t>(top.slot)])];
      if (n.live && n.version == top.version) return top.slot;
      std::pop_heap(heap_.begin(), heap_.end());
      heap_.pop_back();
    }
    return -1;
  }

  // The node took a task: its new base score, or its removal when no further copy fits.
  void rescore(int32_t slot, bool feasible, int64_t base) {
    Node& n = nodes_[static_cast<size_t>(index_[static_cast<size_t>(slot)])];
    ++n.version;
    if (!feasible) {
      n.live = false;
      --live_;
      if (heaped_ && !heap_.empty() && heap_.front().slot == slot && heap_.front().version + 1 == n.version) {
        std::pop_heap(heap_.begin(), heap_.end());
        heap_.pop_back();
      }
      bool extreme = false;
      for (size_t k = 0; k < n_terms_; ++k) extreme |= n.raw[k] == range_.min[k] || n.raw[k] == range_.max[k];
      if (extreme) {  // the range may shrink without it
        NormalizationRange range;
        for (const Node& m : nodes_)
          if (m.live)
            for (size_t k = 0; k < n_terms_; ++k) range.add(static_cast<int32_t>(k), m.raw[k]);
        for (size_t k = 0; k < n_terms_; ++k) stale_ |= range.min[k] != range_.min[k] || range.max[k] != range_.max[k];
        range_ = range;
        tabled_ = false;
      }
      return;
    }
    n.base = base;
    if (stale_) return;
    if (heaped_ && !heap_.empty() && heap_.front().slot == slot && heap_.front().version + 1 == n.version) {
      // The usual case: the node best() returned took the task. Its entry is the top; replace it in place
      // (one sift down) instead of leaving a stale entry behind to pop later.
      replace_top(entry(n));
      return;
    }
    heap_.push_back(entry(n));
    if (heaped_) std::push_heap(heap_.begin(), heap_.end());
  }

 private:
  struct Node {
    // Left uninitialized: add() writes every field it reads (raw only for the pod's terms), and zeroing 88 bytes
    // per candidate cost more than the rest of add().
    Node() {}  // NOLINT(modernize-use-equals-default): `= default` would value-initialize in emplace_back()
    int32_t slot;
    int64_t base;
    int64_t raw[kMaxNormalized];
    uint32_t version;
    bool live;
  };
  struct Entry {
    // Highest total first; among equal totals the smallest tie key (as Engine::schedule breaks ties): the total
    // in the high half and the complemented tie key in the low half, so one 128-bit comparison (no branch on
    // equal totals) orders the heap.
    __int128 rank;
    int32_t slot;
    uint32_t version;
    bool operator<(const Entry& o) const { return rank < o.rank; }
  };

  // During discovery: the entry joins the best `budget_` kept so far (a min-heap once full), or is left out.
  void keep(const Entry& e) {
    const auto worse_first = [](const Entry& a, const Entry& b) { return b < a; };
    heaped_ = false;  // a discovery starts on an empty heap: the first, or once best() found no live entry
    if (heap_.size() < budget_) {
      heap_.push_back(e);
      if (heap_.size() == budget_) std::make_heap(heap_.begin(), heap_.end(), worse_first);
    } else if (heap_.front() < e) {
      std::pop_heap(heap_.begin(), heap_.end(), worse_first);
      heap_.back() = e;
      std::push_heap(heap_.begin(), heap_.end(), worse_first);
    }
  }

  // The top entry takes a new value and sinks to its place: no move at all when the node stays best (binpack
  // makes a node that took a task more attractive), log n when it falls behind.
  void replace_top(const Entry& e) {
    const size_t n = heap_.size();
    size_t i = 0;
    for (;;) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && heap_[child] < heap_[child + 1]) ++child;
      if (!(e < heap_[child])) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = e;
  }

  // The base plus the weighted normalized scores (NormalizationRange::total), small raw values read from the table.
  int64_t total(const Node& n) {
    if (n_terms_ == 0) return n.base;
    if (!tabled_) tabulate();
    int64_t sum = n.base;
    for (size_t k = 0; k < n_terms_; ++k) {
      const int64_t raw = n.raw[k];
      sum += static_cast<uint64_t>(raw) < kTabled ? table_[k][raw] : range_.score(terms_[k], k, raw);
    }
    return sum;
  }
  // Each term's weighted normalized score of the raw values 0..kTabled-1 under the current range: most raw values
  // are small counts (TaintToleration's intolerable taints), and a lookup replaces a division per candidate.
  void tabulate() {
    for (size_t k = 0; k < n_terms_; ++k)
      for (int64_t raw = 0; raw < kTabled; ++raw) table_[k][raw] = range_.score(terms_[k], k, raw);
    tabled_ = true;
  }
  Entry entry(const Node& n) {
    const uint64_t tie = name_rank_.empty() ? mix64(pod_mix_ ^ static_cast<uint64_t>(n.slot)) : name_rank_[n.slot];
    // With fractions, the low half is the fraction, then the low 32 bits of the tie key (a name rank fits them).
    const uint64_t low =
        fraction_.empty() ? ~tie : uint64_t{fraction_[static_cast<size_t>(n.slot)]} << 32 | (~tie & 0xffffffffULL);
    return {static_cast<__int128>(static_cast<unsigned __int128>(total(n)) << 64 | low), n.slot, n.version};
  }
  void rebuild(int64_t tasks) {
    heap_.clear();
    set_budget(tasks);
    for (const Node& n : nodes_)
      if (n.live) keep(entry(n));
    heaped_ = false;
    stale_ = false;
  }

  std::vector<int32_t>& index_;  // per slot: position in nodes_, -1 when not a candidate
  std::vector<Node> nodes_;
  std::vector<Entry> heap_;
  bool heaped_ = true;  // heap_ is a max-heap (entries kept by add() are not, until best() heapifies them)
  size_t budget_ = 1;
  int32_t live_ = 0;
  const std::vector<NormalizedTerm>& terms_;
  const size_t n_terms_;
  bool stale_ = false;
  NormalizationRange range_;  // of the live candidates' raw values
  static constexpr int64_t kTabled = 16;
  int64_t table_[kMaxNormalized][kTabled];  // see tabulate(); valid while tabled_
  bool tabled_ = false;
  const uint64_t pod_mix_;
  const std::vector<uint64_t>& name_rank_;
  const std::vector<uint32_t>& fraction_;
};

// The kernel over every slot block in order, reasons counted into `reasons`; after each block, `visit(begin, end,
// mask)` says whether to go on.
template <typename Visit>
void walk_blocks(const BlockRunner& runner, int32_t n_slots, int64_t* reasons, Visit visit) {
  uint8_t mask[kBlock];
  int64_t scores[kBlock];
  RawBlocks raw;
  for (int32_t begin = 0; begin < n_slots; begin += kBlock) {
    const int32_t end = std::min(n_slots, begin + kBlock);
    runner.run(begin, end, mask, scores, raw.rows, reasons);
    if (!visit(begin, end, mask)) return;
  }
}

}  // namespace

std::vector<int32_t> Engine::fit_counts(const CompiledPod& pod, const std::vector<uint8_t>& allowed) const {
  const ClusterState& s = *state_;
  const int32_t n = s.n_slots();
  if (!allowed.empty() && static_cast<int32_t>(allowed.size()) != n)
    throw Invalid("fit_counts: allowed has " + std::to_string(allowed.size()) + " entries, the cluster " +
                  std::to_string(n) + " slots");
  BlockRunner runner(s, config_, *plugins_, ignored_axes(s, config_), pod, target_.current(), vcore_knobs_);
  runner.restrict_to(hard_scope());
  std::vector<int32_t> counts(static_cast<size_t>(n), 0);
  std::vector<int64_t> reasons(static_cast<size_t>(n_reasons()), 0);
  walk_blocks(runner, n, reasons.data(), [&](int32_t begin, int32_t end, const uint8_t* mask) {
    for (int32_t j = 0; j < end - begin; ++j)
      if (mask[j] && (allowed.empty() || allowed[static_cast<size_t>(begin + j)]))
        counts[static_cast<size_t>(begin + j)] =
            static_cast<int32_t>(std::min<int64_t>(runner.kernel().copies_that_fit(begin + j), INT32_MAX));
    return true;
  });
  return counts;
}

bool Engine::fits_somewhere(const CompiledPod& pod) const {
  const ClusterState& s = *state_;
  BlockRunner runner(s, config_, *plugins_, ignored_axes(s, config_), pod, target_.current(), vcore_knobs_);
  runner.restrict_to(hard_scope());
  std::vector<int64_t> reasons(static_cast<size_t>(n_reasons()), 0);
  bool found = false;
  walk_blocks(runner, s.n_slots(), reasons.data(), [&](int32_t begin, int32_t end, const uint8_t* mask) {
    found = std::any_of(mask, mask + (end - begin), [](uint8_t m) { return m != 0; });
    return !found;
  });
  return found;
}

GangResult Engine::place_gang(const GangRequest& r) {
  ClusterState& s = *state_;
  const size_t n_tasks = r.tasks.size();
  const int32_t n_slots = s.n_slots();
  // Validate everything before binding anything, so a malformed request leaves the state unchanged.
  if (r.role.size() != n_tasks) throw Invalid("place_gang: role must have one entry per task");
  const auto check_width = [&](const char* what, size_t size) {
    if (size != 0 && static_cast<int32_t>(size) != n_slots)
      throw Invalid(std::string("place_gang: ") + what + " has " + std::to_string(size) + " entries, the cluster " +
                    std::to_string(n_slots) + " slots");
  };
  check_width("allowed", r.allowed.size());
  check_width("cap", r.cap.size());
  check_width("score_bonus", r.score_bonus.size());
  for (size_t k = 0; k < r.cap.size(); ++k)
    if (r.cap[k] < 0) throw Invalid("place_gang: cap of slot " + std::to_string(k) + " is negative");
  // A bonus is a plugin's float score (Volcano sums node scores in float64): its whole part joins the node's
  // integer total, its fraction ranks equal totals, so nodes are ordered as by their float sums.
  std::vector<int64_t> bonus_whole;
  std::vector<uint32_t> bonus_fraction;
  bool fractional = false;
  bonus_whole.reserve(r.score_bonus.size());
  bonus_fraction.reserve(r.score_bonus.size());
  for (size_t k = 0; k < r.score_bonus.size(); ++k) {
    const double b = r.score_bonus[k];
    if (!(std::abs(b) <= static_cast<double>(kMaxScoreBonus)))  // keeps every total far from int64 overflow
      throw Invalid("place_gang: score_bonus of slot " + std::to_string(k) + " is not a number within +-" +
                    std::to_string(kMaxScoreBonus));
    const double whole = std::floor(b);
    bonus_whole.push_back(static_cast<int64_t>(whole));
    bonus_fraction.push_back(static_cast<uint32_t>((b - whole) * 4294967296.0));
    fractional |= bonus_fraction.back() != 0;
  }
  if (!fractional) bonus_fraction.clear();  // whole bonuses: the tie rule as without any
  {
    // Duplicates by key hash: sorting integers, the keys themselves compared only where two hashes meet.
    std::vector<std::pair<size_t, const std::string*>> keys;
    keys.reserve(n_tasks);
    // The tasks are cold (compiled as the session opened): ask for all of them before the checks read each.
    for (const CompiledPod* p : r.tasks) __builtin_prefetch(p);
    for (size_t t = 0; t < n_tasks; ++t) {
      const CompiledPod* p = r.tasks[t];
      if (p == nullptr) throw Invalid("place_gang: task " + std::to_string(t) + " is missing");
      if (p->state_id != s.id()) throw Invalid("pod " + p->key + ": compiled for another cluster");
      if (r.role[t] < 0 || static_cast<size_t>(r.role[t]) >= r.role_need.size())
        throw Invalid("pod " + p->key + ": role index out of range");
      keys.emplace_back(p->key_hash, &p->key);
      // What the placement reads of it next, each a block of its own: its requests (run detection, binding) and
      // its key's characters (the binding's insert).
      __builtin_prefetch(p->requests.data());
      __builtin_prefetch(p->key.data());
    }
    std::sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i + 1 < keys.size(); ++i)
      for (size_t j = i + 1; j < keys.size() && keys[j].first == keys[i].first; ++j)
        if (*keys[j].second == *keys[i].second) throw Invalid("pod " + *keys[i].second + ": appears twice in the gang");
  }
  GangResult out;
  out.node.assign(n_tasks, -1);
  out.gpus.assign(n_tasks, GpuAssignment{});
  out.outcome.assign(n_tasks, TaskOutcome::kNotTried);
  out.reasons.assign(static_cast<size_t>(n_reasons()), 0);
  std::vector<int64_t> headroom = r.headroom;
  int64_t need = r.need;
  std::vector<int32_t> role_need = r.role_need;
  // Tasks of each role not yet tried: when the untried ones can no longer meet a minimum, stop early.
  std::vector<int32_t> role_left(r.role_need.size(), 0);
  for (int32_t role : r.role) ++role_left[static_cast<size_t>(role)];
  int64_t left = static_cast<int64_t>(n_tasks), placed = 0;
  const auto hopeless = [&] {
    if (!r.all_or_nothing) return false;
    if (left < need) return true;
    for (size_t k = 0; k < role_need.size(); ++k)
      if (role_left[k] < role_need[k]) return true;
    return false;
  };

  const std::vector<uint8_t> ignored = ignored_axes(s, config_);
  const std::vector<uint64_t> name_rank = name_ranks();
  // With a scope, discovery covers its nodes; a soft scope goes on to the others once they are exhausted.
  const ScopeMasks scope = has_scope_ ? scope_masks() : ScopeMasks{};
  const bool soft = scope.inside != nullptr && scope_soft_;
  const int32_t want_inside =
      nodes_to_find(scope.inside ? scope.n_inside : s.n_nodes(), config_.percentage_of_nodes_to_score);
  uint8_t mask[kBlock];
  int64_t scores[kBlock];
  int32_t feasible[kBlock];  // discovery's feasible positions in a block
  RawBlocks raw;             // the raw values of the normalized scores, for pods that have any
  std::vector<int64_t> scratch(static_cast<size_t>(n_reasons()), 0);
  // Per slot: tasks still allowed there by `cap` (shared by every run of the gang), and the score bonus.
  std::vector<int32_t> room = r.cap;
  const auto open = [&](int32_t slot) {
    return (r.allowed.empty() || r.allowed[static_cast<size_t>(slot)]) &&
           (room.empty() || room[static_cast<size_t>(slot)] > 0);
  };
  const auto with_bonus = [&](int32_t slot, int64_t score) {
    return bonus_whole.empty() ? score : score + bonus_whole[static_cast<size_t>(slot)];
  };
  const auto copies = [&](const PodKernel& kernel, int32_t slot) {
    const int64_t fit = kernel.copies_that_fit(slot);
    return room.empty() ? fit : std::min<int64_t>(fit, room[static_cast<size_t>(slot)]);
  };

  // A task already bound is found where it is bound (one hash lookup, not two): everything this call bound is
  // undone and the rotating start restored, so the error leaves the state as it was.
  const int32_t start_before = next_start_;
  const uint64_t sequence_before = sequence_;
  const auto undo_placements = [&] {  // latest first
    for (size_t k = n_tasks; k-- > 0;) {
      if (out.node[k] < 0) continue;
      s.unbind(r.tasks[k]->key);
      out.node[k] = -1;
      out.gpus[k] = GpuAssignment{};
    }
  };
  size_t observed = 0;  // tasks counted toward a learned GPU target so far (each once)
  try {
    for (size_t t = 0; t < n_tasks && !hopeless();) {
      size_t e = t + 1;
      while (e < n_tasks && same_placement_spec(*r.tasks[e], *r.tasks[t])) ++e;
      const CompiledPod& pod = *r.tasks[t];
      if (!within_headroom(pod, headroom)) {
        // The queue cannot take the run's first task, so none of its identical tasks: as Engine::schedule does
        // for such a pod, no node is looked at (the rotating start stays) and the pods are not observed.
        for (size_t k = t; k < e; ++k) {
          --left, --role_left[static_cast<size_t>(r.role[k])];
          out.outcome[k] = TaskOutcome::kHeadroom;
        }
        t = e;
        continue;
      }
      for (; observed < e; ++observed)
        if (observed >= t) refresh_gpu_target(*r.tasks[observed]);
      BlockRunner runner(s, config_, *plugins_, ignored, pod, target_.current(), vcore_knobs_, &fragment_,
                         &fragment_node_version_, gpu_score_row(pod));
      // Where a node plugin's answer depends on the pods bound (inter-pod constraints), each binding changes
      // other nodes too: one task per run, each with a fresh discovery.
      if (runner.kernel().depends_on_bound_pods() ||
          runner.kernel().normalized().size() > static_cast<size_t>(runner.kernel().count_prefer_taints()) +
                                                    static_cast<size_t>(runner.kernel().sum_preferred()))
        e = t + 1;
      const uint8_t* phase = scope.inside;  // the slots discovery looks at: the scope's, then (soft) the others
      runner.restrict_to(phase);
      int32_t want = want_inside;
      const PodKernel& kernel = runner.kernel();
      // One tie order per run: its tasks are interchangeable, so the heap keeps one order for all of them.
      const uint64_t pod_mix = mix64(seed_ ^ mix64(sequence_));
      sequence_ += e - t;
      if (candidate_index_.size() < static_cast<size_t>(n_slots))
        candidate_index_.resize(static_cast<size_t>(n_slots), -1);
      Candidates candidates(candidate_index_, kernel, pod_mix, name_rank, bonus_fraction,
                            static_cast<size_t>(std::min(want, n_slots)) + (e - t));
      // Discovery from the rotating start: slots in order, wrapping once, until at least `want` feasible nodes are
      // found and they hold the tasks still to place (or every slot was looked at).
      if (next_start_ >= n_slots) next_start_ = 0;
      int32_t examined = 0, found = 0;
      int64_t capacity = 0;
      // How many slots the next block evaluates: whole blocks until the feasible share of the slots is known,
      // then about what the nodes still wanted take at that share. Where discovery stops does not depend on it
      // (the slots past the stop are evaluated for nothing); a full-size last block wasted half a block a run.
      const auto block_for = [&](int32_t wanted, bool capacity_met) {
        if (!capacity_met || found == 0 || wanted <= 0) return kBlock;
        const int64_t expected = static_cast<int64_t>(wanted) * examined / found;
        return static_cast<int32_t>(std::clamp<int64_t>((expected + expected / 4 + 63) / 64 * 64, 64, kBlock));
      };
      const auto discover = [&](int64_t remaining) {
        while (examined < n_slots && (found < want || capacity < remaining)) {
          const int32_t begin = (next_start_ + examined) % n_slots;
          const int32_t end =
              std::min({n_slots, begin + block_for(want - found, capacity >= remaining), begin + (n_slots - examined)});
          runner.run(begin, end, mask, scores, raw.rows, scratch.data());
          out.evaluations += end - begin;
          // The block's feasible open slots, gathered without a branch on each: feasibility is close to random
          // along a block, and a branch on it mispredicted about as often as it was taken.
          int32_t n_feasible = 0;
          for (int32_t i = 0; i < end - begin; ++i) {
            feasible[n_feasible] = i;
            n_feasible += static_cast<int32_t>((mask[i] != 0) & open(begin + i));
          }
          // Taken in slot order until discovery has enough; the slots after the last one taken stay unexamined.
          int32_t j = end - begin;
          for (int32_t f = 0; f < n_feasible; ++f) {
            const int32_t slot = begin + feasible[f];
            ++found;
            if (capacity < remaining) capacity += copies(kernel, slot);  // only the comparison with it matters
            candidates.add(slot, with_bonus(slot, scores[feasible[f]]), raw.rows, feasible[f]);
            if (found >= want && capacity >= remaining) {
              j = feasible[f] + 1;
              break;
            }
          }
          examined += j;
        }
      };
      candidates.set_budget(static_cast<int64_t>(e - t));
      discover(static_cast<int64_t>(e - t));
      candidates.score_plugins(kernel);
      s.warm_pod_entries(&r.tasks[t], e - t);
      for (size_t k = t; k < e; ++k) {
        const CompiledPod& task = *r.tasks[k];
        --left, --role_left[static_cast<size_t>(r.role[k])];
        if (!within_headroom(task, headroom)) {
          out.outcome[k] = TaskOutcome::kHeadroom;
          continue;  // the queue cannot take this task; its identical successors meet the same answer
        }
        int32_t best = candidates.best(static_cast<int64_t>(e - k));
        if (best < 0 && examined < n_slots) {
          capacity = 0;  // every candidate found so far is full
          candidates.set_budget(static_cast<int64_t>(e - k));
          discover(static_cast<int64_t>(e - k));
          candidates.score_plugins(kernel);
          best = candidates.best(static_cast<int64_t>(e - k));
        }
        if (best < 0 && soft && phase == scope.inside) {  // the scope is full: go on to the other nodes
          phase = scope.outside;
          runner.restrict_to(phase);
          want = nodes_to_find(scope.n_outside, config_.percentage_of_nodes_to_score);
          if (n_slots > 0) next_start_ = static_cast<int32_t>((next_start_ + examined) % n_slots);
          examined = found = 0;
          capacity = 0;
          candidates.set_budget(static_cast<int64_t>(e - k));
          discover(static_cast<int64_t>(e - k));
          candidates.score_plugins(kernel);
          best = candidates.best(static_cast<int64_t>(e - k));
        }
        if (best < 0) {
          out.outcome[k] = TaskOutcome::kNoFit;
          if (out.first_unfit < 0) {
            // Why it fits nowhere, counted over every node as kube-scheduler reports it (a hard scope's nodes).
            out.first_unfit = static_cast<int32_t>(k);
            runner.restrict_to(soft ? nullptr : scope.inside);
            for (int32_t begin = 0; begin < n_slots; begin += kBlock)
              runner.run(begin, std::min(n_slots, begin + kBlock), mask, scores, raw.rows, out.reasons.data());
            runner.restrict_to(phase);
          }
          continue;
        }
        GpuAssignment& gpus = out.gpus[k];
        if (task.gpu.needs_devices()) {
          if (config_.weight_gpu > 0 && task.gpu.uses_gpus())
            runner.gpu().score(best, &gpus);
          else if (!s.gpus().fit(best, task.gpu, kernel.allowed_models(), &gpus))
            gpus = GpuAssignment{};
        }
        s.bind_locked(task, best, &gpus);
        kernel.reserve(s, task, best);
        out.node[k] = best;
        out.outcome[k] = TaskOutcome::kPlaced;
        ++placed, --need, --role_need[static_cast<size_t>(r.role[k])];
        take_headroom(task, headroom);
        if (!room.empty()) --room[static_cast<size_t>(best)];
        runner.restrict_to(nullptr);  // a candidate of either phase: re-scored whatever the phase now
        runner.run(best, best + 1, mask, scores, raw.rows, scratch.data());
        runner.restrict_to(phase);
        ++out.evaluations;
        candidates.rescore(best, mask[0] != 0 && open(best), with_bonus(best, scores[0]));
      }
      if (n_slots > 0) next_start_ = static_cast<int32_t>((next_start_ + examined) % n_slots);
      t = e;
    }
  } catch (...) {
    undo_placements();
    next_start_ = start_before, sequence_ = sequence_before;
    throw;
  }
  out.ready = need <= 0 && std::all_of(role_need.begin(), role_need.end(), [](int32_t n) { return n <= 0; });
  if (!out.ready && r.all_or_nothing && placed > 0) undo_placements();
  return out;
}

}  // namespace vcore
