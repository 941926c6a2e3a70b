// The engine's entry points over the fused per-pod kernel (pod_kernel.h): evaluate() over all slots, schedule()
// pod by pod with kube-scheduler's sampling. One PodKernel is built per pod; the loops call it per block of nodes
// with no Python involvement and no allocation.
#include "vcore/engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <shared_mutex>

#include "vcore/parallel.h"
#include "vcore/pod_kernel.h"

namespace vcore {

using namespace kernel;  // NOLINT: the kernel's names read as the engine's own

Engine::Engine(std::shared_ptr<ClusterState> state, ProfileConfig config, uint64_t seed)
    : state_(std::move(state)),
      config_(std::move(config)),
      seed_(seed),
      target_(config_.gpu.learn, config_.gpu.coverage, config_.gpu.policy == GpuPolicy::kVcore, config_.gpu.target) {
  for (const auto& [u, s] : config_.shape)
    if (u < 0 || u > 100 || s < 0 || s > 10)
      throw Invalid("profile: requestedToCapacityRatio.shape point out of range");
  if (config_.weight_fit > 0 && config_.strategy == FitStrategy::kRequestedToCapacityRatio && config_.shape.empty())
    throw Invalid("profile: requestedToCapacityRatio.shape must not be empty");
  plugins_ = std::make_unique<EnginePlugins>();
  std::map<std::string, int32_t> slot_of;
  for (const PluginConfig& pc : config_.plugins) {
    const PluginFactory factory = find_plugin(pc.name);
    if (factory == nullptr) throw Invalid("profile: unknown node plugin '" + pc.name + "'");
    if (!slot_of.emplace(pc.name, static_cast<int32_t>(plugins_->slots.size())).second)
      throw Invalid("profile: node plugin '" + pc.name + "' configured twice");
    if (pc.weight < 0) throw Invalid("profile: score weight of " + pc.name + " must not be negative");
    PluginSlot slot;
    slot.name = pc.name;
    slot.plugin = factory(pc.args);
    slot.filter = pc.filter;
    slot.weight = pc.weight;
    slot.normalization = slot.plugin->normalization();
    slot.reason_base = plugin_reason_base(pc.name);
    plugins_->slots.push_back(std::move(slot));
  }
  const auto add_stage = [&](const std::string& name) {
    if (name == "NodeUnschedulable")
      plugins_->order.push_back({Stage::kUnschedulable});
    else if (name == "TaintToleration")
      plugins_->order.push_back({Stage::kTaints});
    else if (name == "NodeAffinity")
      plugins_->order.push_back({Stage::kAffinity});
    else if (name == "NodeResourcesFit")
      plugins_->order.push_back({Stage::kFit});
    else if (name == "GPUDeviceFit")
      plugins_->order.push_back({Stage::kGpu});
    else if (slot_of.count(name) && plugins_->slots[static_cast<size_t>(slot_of[name])].filter)
      plugins_->order.push_back({Stage::kPlugin, slot_of[name]});
    else
      throw Invalid("profile: filter '" + name + "' is neither a built-in filter nor a filtering node plugin");
  };
  if (config_.filter_order.empty()) {
    if (config_.filter_unschedulable) add_stage("NodeUnschedulable");
    if (config_.filter_taints) add_stage("TaintToleration");
    if (config_.filter_affinity) add_stage("NodeAffinity");
    if (config_.filter_fit) add_stage("NodeResourcesFit");
    if (config_.filter_gpu) add_stage("GPUDeviceFit");
    for (const PluginSlot& slot : plugins_->slots)
      if (slot.filter) add_stage(slot.name);
  } else {
    for (const std::string& name : config_.filter_order) add_stage(name);
  }
  std::unique_lock lock(state_->mutex());
  for (const PluginSlot& slot : plugins_->slots)
    for (const std::string& key : slot.plugin->label_keys()) state_->ensure_label_column(state_->intern_string(key));
  // Score resources become axes now so kernels never grow the state.
  for (auto* list : {&config_.fit_resources, &config_.balanced_resources, &config_.binpack_resources})
    for (const auto& rw : *list) state_->resource_axis(rw.name);
}

Engine::~Engine() = default;

int32_t Engine::n_reasons() const { return insufficient_base() + state_->n_resources(); }

void Engine::evaluate(const CompiledPod& pod, uint8_t* mask, int64_t* scores, std::vector<int64_t>& reasons) const {
  const ClusterState& s = *state_;
  BlockRunner runner(s, config_, *plugins_, ignored_axes(s, config_), pod, target_.current(), vcore_knobs_);
  runner.restrict_to(hard_scope());
  const PodKernel& kernel = runner.kernel();
  const int32_t n = s.n_slots();
  const int32_t n_reason = n_reasons();
  reasons.assign(static_cast<size_t>(n_reason), 0);
  const std::vector<NormalizedTerm>& terms = kernel.normalized();
  const int32_t n_terms = static_cast<int32_t>(terms.size());
  thread_local std::vector<std::vector<int64_t>> rows;  // per normalized score, its raw value per slot
  if (rows.size() < terms.size()) rows.resize(terms.size());
  for (int32_t k = 0; k < n_terms; ++k) rows[static_cast<size_t>(k)].resize(static_cast<size_t>(n));
  // A name of this thread's rows: the blocks below may run on helper threads, where `rows` is another object.
  std::vector<std::vector<int64_t>>& raw_rows = rows;
  const int32_t n_blocks = (n + kBlock - 1) / kBlock;
  // Per-participant accumulators, merged below: results do not depend on who ran which block.
  const int32_t participants = n >= kParallelMinSlots ? max_participants() : 1;
  std::vector<std::vector<int64_t>> local(static_cast<size_t>(participants), std::vector<int64_t>(n_reason, 0));
  std::vector<NormalizationRange> ranges(static_cast<size_t>(participants));
  const auto run_block = [&](int32_t block, int32_t who) {
    const int32_t begin = block * kBlock, end = std::min(n, begin + kBlock);
    int64_t* raw[kMaxNormalized];
    for (int32_t k = 0; k < n_terms; ++k) raw[k] = raw_rows[static_cast<size_t>(k)].data() + begin;
    runner.run(begin, end, mask + begin, scores + begin, raw, local[who].data());
    NormalizationRange& range = ranges[static_cast<size_t>(who)];
    for (int32_t k = 0; k < static_cast<int32_t>(kernel.first_plugin_term()); ++k) {
      if (terms[k].kind == Normalization::kMax || terms[k].kind == Normalization::kMaxReverse) {
        range.max[k] = std::max(range.max[k], blocks::max_where(end - begin, mask + begin, raw[k]));
        continue;
      }
      for (int32_t j = 0; j < end - begin; ++j)
        if (mask[begin + j]) range.add(k, raw[k][j]);
    }
  };
  if (participants > 1) {
    parallel_blocks(n_blocks, run_block);
  } else {
    for (int32_t block = 0; block < n_blocks; ++block) run_block(block, 0);
  }
  for (const auto& counts : local)
    for (int32_t r = 0; r < n_reason; ++r) reasons[r] += counts[r];
  if (!kernel.needs_normalization()) return;
  // Scores normalized over the feasible set (TaintToleration reversed, NodeAffinity straight, the plugins').
  NormalizationRange range;
  for (const auto& r : ranges) range.merge(r, n_terms);
  if (kernel.has_plugin_terms()) {  // the node plugins score the feasible nodes all at once
    std::vector<int32_t> feasible;
    for (int32_t i = 0; i < n; ++i)
      if (mask[i]) feasible.push_back(i);
    std::vector<std::vector<int64_t>> values(terms.size(), std::vector<int64_t>(feasible.size()));
    int64_t* out[kMaxNormalized];
    for (int32_t k = 0; k < n_terms; ++k) out[k] = values[static_cast<size_t>(k)].data();
    kernel.plugin_scores(feasible.data(), static_cast<int32_t>(feasible.size()), out);
    for (int32_t k = static_cast<int32_t>(kernel.first_plugin_term()); k < n_terms; ++k) {
      for (size_t i = 0; i < feasible.size(); ++i) {
        raw_rows[static_cast<size_t>(k)][static_cast<size_t>(feasible[i])] = out[k][i];
        range.add(k, out[k][i]);
      }
    }
  }
  const auto normalize_block = [&](int32_t block, int32_t) {
    const int32_t begin = block * kBlock, end = std::min(n, begin + kBlock);
    for (int32_t k = 0; k < n_terms; ++k) {
      const int64_t* raw = raw_rows[static_cast<size_t>(k)].data();
      if (terms[k].kind == Normalization::kMax || terms[k].kind == Normalization::kMaxReverse) {
        blocks::add_normalized(begin, end, mask, raw, std::max<int64_t>(range.max[k], 0),
                               terms[k].kind == Normalization::kMaxReverse, terms[k].weight, scores);
        continue;
      }
      for (int32_t i = begin; i < end; ++i)
        if (mask[i]) scores[i] += terms[k].weight * normalize(terms[k].kind, raw[i], range.min[k], range.max[k]);
    }
  };
  if (participants > 1) {
    parallel_blocks(n_blocks, normalize_block);
  } else {
    for (int32_t block = 0; block < n_blocks; ++block) normalize_block(block, 0);
  }
}

ScheduleResult Engine::schedule(const std::vector<const CompiledPod*>& pods, const std::vector<int64_t>* headroom) {
  ClusterState& s = *state_;
  // Validate the whole batch before binding anything, so a bad batch leaves the state unchanged.
  {
    std::vector<std::string> keys;
    keys.reserve(pods.size());
    for (const CompiledPod* p : pods) {
      if (p->state_id != s.id()) throw Invalid("pod " + p->key + ": compiled for another cluster");
      if (s.pod_node(p->key) >= 0)
        throw Invalid("pod " + p->key + ": already bound to node " + s.names()[s.pod_node(p->key)]);
      keys.push_back(p->key);
    }
    std::sort(keys.begin(), keys.end());
    const auto dup = std::adjacent_find(keys.begin(), keys.end());
    if (dup != keys.end()) throw Invalid("pod " + *dup + ": appears twice in the batch");
  }
  ScheduleResult result;
  result.n_reasons = n_reasons();
  result.node.assign(pods.size(), -1);
  result.gpus.assign(pods.size(), GpuAssignment{});
  result.reasons.assign(pods.size() * static_cast<size_t>(result.n_reasons), 0);
  result.over_headroom.assign(pods.size(), 0);
  std::vector<int64_t> room = headroom != nullptr ? *headroom : std::vector<int64_t>{};
  const std::vector<uint8_t> ignored = ignored_axes(s, config_);

  struct Candidate {
    int32_t slot;
    int64_t score;
    int64_t raw[kMaxNormalized];  // the normalized scores' raw values
  };
  // GPUPlacement's tieBreak NodeName: a slot's rank in name order replaces the seeded hash.
  const std::vector<uint64_t> name_rank = name_ranks();
  // With a scope, the first search covers its nodes; a soft scope searches the others for a pod none of them fits.
  const ScopeMasks scope = has_scope_ ? scope_masks() : ScopeMasks{};
  std::vector<Candidate> feasible;
  uint8_t mask[kBlock];
  int64_t scores[kBlock];
  RawBlocks raw;
  for (size_t p = 0; p < pods.size(); ++p) {
    const CompiledPod& pod = *pods[p];
    if (!room.empty() && !within_headroom(pod, room)) {
      result.over_headroom[p] = 1;
      continue;
    }
    const uint64_t sequence = sequence_++;
    const TargetWorkload& gpu_target = refresh_gpu_target(pod);
    BlockRunner runner(s, config_, *plugins_, ignored, pod, gpu_target, vcore_knobs_, &fragment_,
                       &fragment_node_version_, gpu_score_row(pod));
    const int32_t n_slots = s.n_slots();
    int64_t* reasons = result.reasons.data() + p * result.n_reasons;
    const PodKernel& kernel = runner.kernel();
    // Without normalized plugins a block's scores are final, so the best node is tracked while streaming;
    // otherwise candidates are kept until the maxima over the feasible set are known.
    const bool stream = !kernel.needs_normalization();
    const uint64_t pod_mix = mix64(seed_ ^ mix64(sequence));
    // Highest score wins; among equal scores the smallest seeded hash of the slot (kube-scheduler picks at random).
    int32_t best = -1, found = 0;
    int64_t best_score = std::numeric_limits<int64_t>::min();
    uint64_t best_tie = 0;
    const auto offer = [&best, &best_score, &best_tie, &name_rank, pod_mix](int32_t slot, int64_t score) {
      if (score < best_score) return;
      const uint64_t tie = name_rank.empty() ? mix64(pod_mix ^ static_cast<uint64_t>(slot)) : name_rank[slot];
      if (score == best_score && tie >= best_tie) return;
      best = slot, best_score = score, best_tie = tie;
    };
    // kube-scheduler's search: slots in order from the rotating start, wrapping once, until `want` feasible
    // nodes are found; `examined` counts the slots looked at, which advances the start for the next pod.
    const auto search = [&](int32_t want) {
      feasible.clear();
      if (next_start_ >= n_slots) next_start_ = 0;
      int32_t examined = 0;
      while (examined < n_slots && found < want) {
        const int32_t begin = (next_start_ + examined) % n_slots;
        const int32_t end = std::min({n_slots, begin + kBlock, begin + (n_slots - examined)});
        runner.run(begin, end, mask, scores, raw.rows, reasons);
        const int32_t len = end - begin;
        int32_t j = 0;
        if (stream) {
          for (; j < len && found < want; ++j) {
            if (!mask[j] || scores[j] < best_score) {
              found += mask[j];
              continue;
            }
            ++found;
            offer(begin + j, scores[j]);
          }
        } else {
          const size_t n_terms = kernel.normalized().size();
          for (; j < len && found < want; ++j) {
            if (!mask[j]) continue;
            ++found;
            Candidate& c = feasible.emplace_back();
            c.slot = begin + j, c.score = scores[j];
            for (size_t k = 0; k < n_terms; ++k) c.raw[k] = raw.rows[k][j];
          }
        }
        examined += j;
      }
      if (n_slots > 0) next_start_ = static_cast<int32_t>((next_start_ + examined) % n_slots);
    };
    runner.restrict_to(scope.inside);
    search(nodes_to_find(scope.inside ? scope.n_inside : s.n_nodes(), config_.percentage_of_nodes_to_score));
    if (found == 0 && scope.inside && scope_soft_) {
      runner.restrict_to(scope.outside);
      search(nodes_to_find(scope.n_outside, config_.percentage_of_nodes_to_score));
      if (found == 0) {  // why it fits nowhere, counted over every node (the scope's and the others)
        std::fill(reasons, reasons + result.n_reasons, 0);
        runner.restrict_to(nullptr);
        for (int32_t begin = 0; begin < n_slots; begin += kBlock)
          runner.run(begin, std::min(n_slots, begin + kBlock), mask, scores, raw.rows, reasons);
      }
    }
    if (found == 0) continue;
    std::fill(reasons, reasons + result.n_reasons, 0);  // placed pods report no reasons

    if (!stream) {
      const std::vector<NormalizedTerm>& terms = kernel.normalized();
      if (kernel.has_plugin_terms()) add_plugin_scores(kernel, feasible);
      NormalizationRange range;
      for (const auto& c : feasible)
        for (size_t k = 0; k < terms.size(); ++k) range.add(static_cast<int32_t>(k), c.raw[k]);
      for (const auto& c : feasible) offer(c.slot, c.score + range.total(terms, c.raw));
    }
    GpuAssignment& gpus = result.gpus[p];
    if (pod.gpu.needs_devices()) {
      if (config_.weight_gpu > 0 && pod.gpu.uses_gpus())
        runner.gpu().score(best, &gpus);
      else if (!s.gpus().fit(best, pod.gpu, kernel.allowed_models(), &gpus))
        gpus = GpuAssignment{};  // GPUDeviceFit off
    }
    s.bind_locked(pod, best, &gpus);
    kernel.reserve(s, pod, best);
    result.node[p] = best;
    if (!room.empty()) take_headroom(pod, room);
  }
  return result;
}

void Engine::set_scope(const std::vector<std::string>& names, bool soft, const std::vector<std::string>& avoid) {
  scope_names_ = std::unordered_set<std::string>(names.begin(), names.end());
  scope_avoid_ = std::unordered_set<std::string>(avoid.begin(), avoid.end());
  has_scope_ = true;
  scope_soft_ = soft;
  std::lock_guard guard(scope_mutex_);
  scope_resolved_ = false;
}

void Engine::clear_scope() {
  scope_names_.clear();
  scope_avoid_.clear();
  has_scope_ = scope_soft_ = false;
  std::lock_guard guard(scope_mutex_);
  scope_resolved_ = false;
}

int32_t Engine::scope_size() const { return has_scope_ ? scope_masks().n_inside : state_->n_nodes(); }

Engine::ScopeMasks Engine::scope_masks() const {
  if (!has_scope_) return {};
  const ClusterState& s = *state_;
  std::lock_guard guard(scope_mutex_);
  if (!scope_resolved_ || scope_membership_ != s.membership()) {
    const size_t n = static_cast<size_t>(s.n_slots());
    // At least one entry: the masks' data() must never be null while a scope is set.
    scope_inside_.assign(std::max<size_t>(n, 1), 0);
    scope_outside_.assign(std::max<size_t>(n, 1), 0);
    scope_n_inside_ = scope_n_outside_ = 0;
    for (size_t slot = 0; slot < n; ++slot) {
      if (!s.is_live(static_cast<int32_t>(slot))) continue;
      const std::string& name = s.names()[slot];
      if (scope_names_.count(name) != 0) {
        scope_inside_[slot] = 1;
        ++scope_n_inside_;
      } else if (scope_avoid_.count(name) == 0) {
        scope_outside_[slot] = 1;
        ++scope_n_outside_;
      }
    }
    scope_membership_ = s.membership();
    scope_resolved_ = true;
  }
  return {scope_inside_.data(), scope_outside_.data(), scope_n_inside_, scope_n_outside_};
}

std::vector<uint64_t> Engine::name_ranks() const {
  if (!config_.gpu.tie_by_name) return {};
  const ClusterState& s = *state_;
  std::vector<int32_t> order;
  for (int32_t i = 0; i < s.n_slots(); ++i)
    if (s.is_live(i)) order.push_back(i);
  std::sort(order.begin(), order.end(), [&s](int32_t a, int32_t b) { return s.names()[a] < s.names()[b]; });
  std::vector<uint64_t> rank(static_cast<size_t>(s.n_slots()), 0);
  for (size_t r = 0; r < order.size(); ++r) rank[static_cast<size_t>(order[r])] = r;
  return rank;
}

const TargetWorkload& Engine::refresh_gpu_target(const CompiledPod& pod) {
  if (config_.weight_gpu == 0) return target_.current();
  target_.observe(pod, state_->gpus());
  return gpu_target();
}

double Engine::cluster_cpu_pressure(const TargetWorkload& tw) const {
  const ClusterState& s = *state_;
  double cpu = 0.0, gpu = 0.0;
  for (int32_t slot = 0; slot < s.n_slots(); ++slot) {
    if (!s.is_live(slot)) continue;
    cpu += static_cast<double>(s.allocatable().row(kAxisCpu)[slot]);
    int32_t free[kMaxGpusPerNode], local[kMaxGpusPerNode];
    gpu += static_cast<double>(kGpuMilli) * s.gpus().policy_gpus(slot, free, local);
  }
  return cpu_pressure(tw, cpu, gpu);
}

GpuScoreRow Engine::gpu_score_row(const CompiledPod& pod) {
  if (config_.weight_gpu == 0) return {};
  // Pods of one spec (requests, GPU request, model constraint) score alike on an unchanged node: traces and
  // training jobs repeat a few specs thousands of times, so the policy runs once per (spec, node change).
  const DeviceRequest& r = pod.gpu;
  std::string key;
  for (const auto& [axis, amount] : pod.requests) key += std::to_string(axis) + ":" + std::to_string(amount) + ",";
  key += "|" + std::to_string(static_cast<int>(r.kind)) + "," + std::to_string(r.count) + "," +
         std::to_string(r.milli) + "," + std::to_string(r.memory_mib) + "," + std::to_string(r.memory_milli);
  for (int32_t shape : r.mig_shape) key += "," + std::to_string(shape);
  key += r.constraint_key();
  const size_t slots = static_cast<size_t>(state_->n_slots());
  constexpr size_t kCacheEntries = size_t{1} << 22;  // 64 MiB at most
  const auto it = score_spec_ids_.emplace(key, score_spec_ids_.size()).first;
  const size_t id = it->second;
  if (slots == 0 || (id + 1) * slots > kCacheEntries) return {};
  if (score_version_.size() < (id + 1) * slots) {
    score_version_.resize((id + 1) * slots, 0);
    score_value_.resize((id + 1) * slots, 0);
  }
  return {score_version_.data() + id * slots, score_value_.data() + id * slots};
}

void Engine::observe(const std::vector<const CompiledPod*>& pods) {
  for (const CompiledPod* p : pods) {
    if (p->state_id != state_->id()) throw Invalid("pod " + p->key + ": compiled for another cluster");
    target_.observe(*p, state_->gpus());
  }
}

const TargetWorkload& Engine::gpu_target() {
  const ClusterState& s = *state_;
  const TargetWorkload& tw = target_.workload(s.gpus());
  const size_t slots = static_cast<size_t>(s.n_slots());
  // What depends on the target (and is laid out per slot) is recomputed only when it was rebuilt or slots grew.
  if (fragment_target_version_ != target_.version() || fragment_.size() != slots) {
    fragment_.assign(slots, 0.0);
    fragment_node_version_.assign(slots, 0);
    fragment_target_version_ = target_.version();
    vcore_knobs_ = knobs_for_pressure(config_.gpu.knobs, cluster_cpu_pressure(tw));
    score_spec_ids_.clear();
    score_version_.clear();
    score_value_.clear();
  }
  return tw;
}

}  // namespace vcore
