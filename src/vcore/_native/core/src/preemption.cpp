// kube-scheduler's DefaultPreemption as a dry run (engine.h: Engine::preempt).
#include <algorithm>
#include <climits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "vcore/engine.h"
#include "vcore/errors.h"
#include "vcore/node_plugin.h"
#include "vcore/pod_kernel.h"

namespace vcore {
namespace {

// A bound pod that may be evicted, as preemption sorts it.
struct Victim {
  std::string key;
  int64_t priority;
  int64_t start_time;
  std::vector<int32_t> pdbs;
};

// kube-scheduler's MoreImportantPod: higher priority, then the earlier start (then the key, for a total order).
bool more_important(const Victim& a, const Victim& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.start_time != b.start_time) return a.start_time < b.start_time;
  return a.key < b.key;
}

struct Candidate {
  int32_t node;
  std::vector<Victim> victims;  // most important first
  int64_t violations;
};

// kube-scheduler's GetEarliestPodStartTime: the earliest start among the victims of the highest priority.
int64_t earliest_start_of_most_important(const std::vector<Victim>& victims) {
  int64_t top = victims.front().priority, earliest = victims.front().start_time;
  for (const Victim& v : victims) {
    if (v.priority > top)
      top = v.priority, earliest = v.start_time;
    else if (v.priority == top)
      earliest = std::min(earliest, v.start_time);
  }
  return earliest;
}

// pickOneNodeForPreemption: each criterion keeps the best candidates; the first left wins.
const Candidate* pick(const std::vector<Candidate>& candidates) {
  std::vector<const Candidate*> left;
  for (const Candidate& c : candidates) left.push_back(&c);
  const auto keep_max = [&](auto score) {
    if (left.size() <= 1) return;
    int64_t best = INT64_MIN;
    for (const Candidate* c : left) best = std::max(best, score(*c));
    left.erase(std::remove_if(left.begin(), left.end(), [&](const Candidate* c) { return score(*c) != best; }),
               left.end());
  };
  keep_max([](const Candidate& c) { return -c.violations; });
  keep_max([](const Candidate& c) { return -c.victims.front().priority; });
  keep_max([](const Candidate& c) {
    int64_t sum = 0;  // each priority shifted by 2^31, so that a victim always adds to the sum
    for (const Victim& v : c.victims) sum += v.priority + (int64_t{INT32_MAX} + 1);
    return -sum;
  });
  keep_max([](const Candidate& c) { return -static_cast<int64_t>(c.victims.size()); });
  keep_max([](const Candidate& c) { return earliest_start_of_most_important(c.victims); });
  return left.empty() ? nullptr : left.front();
}

}  // namespace

PreemptionOutcome Engine::preempt(const CompiledPod& pod, const PreemptionRequest& request) {
  using kernel::BlockRunner;
  ClusterState& s = *state_;
  if (pod.state_id != s.id()) throw Invalid("pod " + pod.key + ": compiled for another cluster");
  const int32_t n_slots = s.n_slots();
  PreemptionOutcome out;
  out.status.assign(static_cast<size_t>(n_slots), PreemptionOutcome::kOutside);
  const std::vector<uint8_t> ignored = kernel::ignored_axes(s, config_);
  const uint8_t* scope = hard_scope();
  const auto make_runner = [&] {
    auto runner = std::make_unique<BlockRunner>(s, config_, *plugins_, ignored, pod, target_.current(), vcore_knobs_);
    runner->restrict_to(scope);
    return runner;
  };
  std::vector<int64_t> scratch(static_cast<size_t>(n_reasons()), 0);
  // The (first) reason the pod does not fit a slot, or kFits; `codes` gets every reason (a plugin may give
  // several: NodeResourcesFit one per insufficient resource).
  const auto check = [&](const BlockRunner& runner, int32_t slot, std::vector<int32_t>* codes) {
    std::fill(scratch.begin(), scratch.end(), 0);
    uint8_t mask[1];
    int64_t score[1];
    kernel::RawBlocks raw;
    runner.run(slot, slot + 1, mask, score, raw.rows, scratch.data());
    if (mask[0]) return PreemptionOutcome::kFits;
    int32_t first = -1;
    for (size_t code = 0; code < scratch.size(); ++code) {
      if (scratch[code] == 0) continue;
      if (first < 0) first = static_cast<int32_t>(code);
      if (codes != nullptr) codes->push_back(static_cast<int32_t>(code));
    }
    return first < 0 ? PreemptionOutcome::kNotHelpful : first;  // no reason counted: nothing to lift
  };

  // Nominated pods that the pod must leave room for: its priority or higher, not itself, not bound yet.
  struct Nominated {
    std::vector<const CompiledPod*> pods;
    bool carry_anti_affinity = false;
  };
  std::unordered_map<int32_t, Nominated> nominated_on;
  for (const auto& [nominee, slot] : request.nominated) {
    if (nominee == nullptr || nominee->key == pod.key || nominee->priority < pod.priority) continue;
    if (nominee->state_id != s.id()) throw Invalid("pod " + nominee->key + ": compiled for another cluster");
    if (slot < 0 || slot >= n_slots || !s.is_live(slot) || s.bound_pod(nominee->key) != nullptr) continue;
    Nominated& here = nominated_on[slot];
    here.pods.push_back(nominee);
    here.carry_anti_affinity |=
        nominee->inter_pod.carried && !nominee->inter_pod.carried->required_anti_affinity.empty();
  }
  std::unique_ptr<BlockRunner> whole = make_runner();
  // What the node's plugins prepared for filtering may depend on the pods bound (inter-pod constraints, ports):
  // then a runner is good only for the pods bound when it was made, and every other look gets a fresh one (the
  // dry run reads only the mask: what scores read does not matter). A runner that does
  // not depend on them now may once a pod carrying required anti-affinity is back (InterPodAffinity prepares no
  // filter when no bound pod's anti-affinity concerns the pod): such pods coming and going need fresh ones too.
  const bool depends = whole->kernel().filters_depend_on_bound_pods();
  // kube-scheduler's RunFilterPluginsWithNominatedPods: with the nominated pods there first; when the pod fits
  // beside them, again without them. `current` was made for the pods bound now; `current_ok`: it is still good
  // after victims come back.
  const auto status_on = [&](int32_t slot, const BlockRunner& current, bool current_ok, std::vector<int32_t>* codes) {
    const auto look = [&](bool ok) {
      if (codes != nullptr) codes->clear();
      return ok ? check(current, slot, codes) : check(*make_runner(), slot, codes);
    };
    const auto it = nominated_on.find(slot);
    if (it == nominated_on.end()) return look(current_ok);
    std::vector<const CompiledPod*> placed;
    for (const CompiledPod* nominee : it->second.pods) {
      try {
        s.bind_locked(*nominee, slot);
        placed.push_back(nominee);
      } catch (const Invalid&) {  // it could not be accounted there at all (a total past the limit): not assumed
      }
    }
    const int32_t with = look(!depends && !it->second.carry_anti_affinity);
    for (const CompiledPod* nominee : placed) s.unbind(nominee->key);
    if (with != PreemptionOutcome::kFits || placed.empty()) return with;
    return look(current_ok);
  };

  // The nodes where preemption might help: every live node in scope the pod does not fit for a resolvable reason.
  // NodeResourcesFit's failure is unresolvable where the pod asks for more of a resource than the node's
  // allocatable (fit.go: InsufficientResource.Unresolvable makes the node's whole status so).
  const std::vector<uint8_t>& unresolvable = reason_unresolvable();
  const std::vector<blocks::ResourceRow> fit_rows = whole->kernel().fit_rows();
  const int32_t insufficient = insufficient_base();
  const auto past_allocatable = [&](int32_t slot, const std::vector<int32_t>& codes) {
    const bool fit_failed = std::any_of(codes.begin(), codes.end(),
                                        [&](int32_t code) { return code == kTooManyPods || code >= insufficient; });
    return fit_failed && std::any_of(fit_rows.begin(), fit_rows.end(),
                                     [slot](const blocks::ResourceRow& row) { return row.amount > row.alloc[slot]; });
  };
  std::vector<int32_t> potential, first_codes;
  for (int32_t slot = 0; slot < n_slots; ++slot) {
    if (!s.is_live(slot) || (scope != nullptr && !scope[slot])) continue;
    const int32_t code = status_on(slot, *whole, true, &first_codes);
    const bool lifts = code >= 0 && (static_cast<size_t>(code) >= unresolvable.size() || !unresolvable[code]) &&
                       !past_allocatable(slot, first_codes);
    out.status[slot] = code == PreemptionOutcome::kFits ? code : lifts ? code : PreemptionOutcome::kNotHelpful;
    if (lifts) potential.push_back(slot);
  }
  if (potential.empty()) return out;
  const int32_t n = static_cast<int32_t>(potential.size());
  int32_t wanted = static_cast<int32_t>(int64_t{n} * request.min_candidate_nodes_percentage / 100);
  wanted = std::min(std::max(wanted, request.min_candidate_nodes_absolute), n);
  const int32_t offset = ((request.offset % n) + n) % n;

  // DryRunPreemption: candidates with and without violations each fill a list of `wanted` (a later one is
  // dropped); the walk stops once a candidate without violations is found and the lists hold `wanted` together.
  std::vector<Candidate> non_violating, violating;
  const std::vector<Pdb>& pdbs = s.pdbs();
  const auto enough = [&] {
    const auto held = static_cast<int32_t>(non_violating.size() + violating.size());
    return !non_violating.empty() && held >= wanted;
  };
  for (int32_t i = 0; i < n && !enough(); ++i) {
    const int32_t slot = potential[static_cast<size_t>((offset + i) % n)];
    // Every bound pod of lower priority goes.
    std::vector<Victim> potential_victims;
    bool victims_carry_anti_affinity = false;
    for (const std::string& key : s.pods_on(slot)) {
      const BoundPod* bound = s.bound_pod(key);
      if (bound->priority >= pod.priority) continue;
      potential_victims.push_back({key, bound->priority, bound->start_time, s.pdbs_of(key, *bound)});
      victims_carry_anti_affinity |= bound->carried && !bound->carried->required_anti_affinity.empty();
    }
    if (potential_victims.empty()) {
      out.status[slot] = PreemptionOutcome::kNoVictims;
      continue;
    }
    std::sort(potential_victims.begin(), potential_victims.end(), more_important);
    std::vector<std::pair<const Victim*, BoundPod>> detached;
    for (const Victim& v : potential_victims) detached.emplace_back(&v, s.detach(v.key));
    // A runner that reads nothing of the bound pods serves every node as it is; otherwise one made now, without
    // the victims.
    const bool reusable = !depends && !victims_carry_anti_affinity;
    const std::unique_ptr<BlockRunner> made = reusable ? nullptr : make_runner();
    const BlockRunner& shared = reusable ? *whole : *made;
    const auto fits = [&] { return status_on(slot, shared, reusable, nullptr) == PreemptionOutcome::kFits; };
    std::vector<int32_t> codes;
    const int32_t without_all = status_on(slot, shared, true, &codes);
    if (without_all != PreemptionOutcome::kFits) {
      for (auto& [v, record] : detached) s.attach(v->key, std::move(record));
      out.status[slot] = without_all;
      out.reasons.emplace_back(slot, std::move(codes));
      continue;
    }
    // Budgets: walking the victims most important first, each one a budget covers spends one of its allowed
    // disruptions; one that finds none left is violating (filterPodsWithPDBViolation).
    std::vector<int32_t> allowed;
    for (const Pdb& pdb : pdbs) allowed.push_back(pdb.disruptions_allowed);
    std::vector<size_t> violating_k, keeping_k;
    for (size_t k = 0; k < potential_victims.size(); ++k) {
      bool violated = false;
      for (int32_t id : potential_victims[k].pdbs) violated |= --allowed[static_cast<size_t>(id)] < 0;
      (violated ? violating_k : keeping_k).push_back(k);
    }
    // Reprieve: each comes back if the pod still fits beside it; violating ones first, most important first.
    std::vector<Victim> victims;
    int64_t violations = 0;
    for (const auto* group : {&violating_k, &keeping_k}) {
      for (size_t k : *group) {
        auto& [victim, record] = detached[k];
        s.attach(victim->key, std::move(record));
        if (fits()) {
          victim = nullptr;  // reprieved: stays
          continue;
        }
        record = s.detach(victim->key);
        victims.push_back(*victim);
        violations += group == &violating_k;
      }
    }
    for (auto& [v, record] : detached)  // the dry run leaves every pod where it was
      if (v != nullptr) s.attach(v->key, std::move(record));
    if (victims.empty()) {  // it fits with every pod back: not a preemption
      out.status[slot] = PreemptionOutcome::kFits;
      continue;
    }
    std::sort(victims.begin(), victims.end(), more_important);
    out.status[slot] = PreemptionOutcome::kCandidate;
    std::vector<Candidate>& list = violations == 0 ? non_violating : violating;
    if (static_cast<int32_t>(list.size()) < wanted) list.push_back({slot, std::move(victims), violations});
  }
  // kube-scheduler lists the candidates without violations first.
  std::vector<Candidate> candidates = std::move(non_violating);
  for (Candidate& c : violating) candidates.push_back(std::move(c));
  for (const Candidate& c : candidates) {
    PreemptionCandidate listed{c.node, {}, c.violations};
    for (const Victim& v : c.victims) listed.victims.push_back(v.key);
    out.candidates.push_back(std::move(listed));
  }
  if (const Candidate* best = pick(candidates)) {
    out.node = best->node;
    out.pdb_violations = best->violations;
    for (const Victim& v : best->victims) out.victims.push_back(v.key);
  }
  return out;
}

}  // namespace vcore
