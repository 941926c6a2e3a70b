// GPUPlacement's per-node scoring (see vcore/gpu_scorer.h).
#include "vcore/gpu_scorer.h"

#include <algorithm>

namespace vcore {

int64_t GpuScorer::score(int32_t slot) const {
  thread_local GpuAssignment unused;
  if (scores_.version == nullptr) return score(slot, &unused);
  const uint64_t version = s_.node_version(slot) + 1;
  if (scores_.version[slot] != version) {
    scores_.value[slot] = score(slot, &unused);
    scores_.version[slot] = version;
  }
  return scores_.value[slot];
}

int64_t GpuScorer::score(int32_t slot, GpuAssignment* choice) const {
  const DeviceTable& dt = s_.gpus();
  int32_t free[kMaxGpusPerNode], local[kMaxGpusPerNode];
  GpuNodeView v;
  v.g = dt.policy_gpus(slot, free, local);
  v.free = free;
  for (int32_t i = 0; i < v.g; ++i) v.idle += free[i] == kGpuMilli, v.free_total += free[i];
  v.cpu_cap = s_.allocatable().row(kAxisCpu)[slot];
  v.cpu_free = v.cpu_cap - s_.requested().row(kAxisCpu)[slot];
  v.mem_cap = s_.allocatable().row(kAxisMemory)[slot];
  v.mem_free = v.mem_cap - s_.requested().row(kAxisMemory)[slot];
  v.model = dt.node_model(slot);
  GpuRequest r;
  r.cpu_milli = cpu_;
  r.memory = memory_;
  const DeviceRequest& want = pod_.gpu;
  thread_local GpuAssignment fitted;                                 // reused: this runs per node
  if (want.uses_gpus() && !dt.fit(slot, want, allowed_, &fitted)) {  // only when GPUDeviceFit is disabled
    *choice = GpuAssignment{};
    return 0;
  }
  if (want.uses_gpus() && want.kind != GpuKind::kMig) {
    r.num_gpu = want.count;
    r.gpu_milli = want.kind == GpuKind::kWhole ? kGpuMilli : std::min(kGpuMilli, want.milli_on(dt.device_memory(slot)));
  }
  const GpuOptions o = dt.policy_options(slot, want, allowed_, fitted);
  uint64_t mask = 0;
  int64_t score = 0;
  if (c_.policy == GpuPolicy::kFgd || c_.policy == GpuPolicy::kVcore) {
    const double before = fragment(slot, v);
    if (c_.policy == GpuPolicy::kFgd)
      score = 10 * fgd_score(before, fgd_after(v, r, o, tw_, before, true, &mask));
    else
      score = vcore_score(v, r, fgd_after(v, r, o, tw_, before, false, &mask) - before, knobs_);
  } else {
    const int32_t cls = want.kind == GpuKind::kShared ? 0 : want.count;
    score = 10 * fragment_free_score(c_.policy, v, r, o, s_.gpu_class_pods(slot, cls) > 0, s_.gpu_classes(slot), &mask);
  }
  if (want.kind == GpuKind::kShared && want.count == 1 && mask != 0 && want.numa_policy == NumaPolicy::kNone)
    dt.assign(slot, want, uint64_t{1} << local[__builtin_ctzll(mask)], choice);
  else
    *choice = fitted;
  return std::max<int64_t>(score, 0);
}

double GpuScorer::fragment(int32_t slot, const GpuNodeView& v) const {
  if (cache_ == nullptr) return node_fragment(v.cpu_free, v.model, v.free, v.g, tw_);
  const uint64_t version = s_.node_version(slot) + 1;
  if ((*cache_version_)[slot] != version) {
    (*cache_)[slot] = node_fragment(v.cpu_free, v.model, v.free, v.g, tw_);
    (*cache_version_)[slot] = version;
  }
  return (*cache_)[slot];
}
}  // namespace vcore
