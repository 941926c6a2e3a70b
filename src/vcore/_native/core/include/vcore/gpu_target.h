// The target workload of the live GPU placement plugin: given in the profile, or learned online.
//
// FGD's fragment measure needs the workload the cluster should keep room for: pod specs (cpu milli, GPU share per
// GPU, GPU count, model constraint) with frequencies. Learned, it is built from every pod the engine is offered:
// the most frequent specs covering `coverage` % of them (the FGD artifact's rule), or for the vcore policy the mean
// of those targets at cut-offs 95..100 % (vcore.sim.gpu.replay.blended_target_workload). It is rebuilt when the pods
// seen since the last build reach 1/16 of all seen (so the cost stays logarithmic in the pod count) or when a new
// GPU model appears; `version()` changes on every rebuild so fragment caches know to refresh.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "vcore/gpu_devices.h"
#include "vcore/gpu_fragment.h"
#include "vcore/pod.h"

namespace vcore {

struct TargetSpecInput {
  int64_t cpu_milli = 0;
  int32_t gpu_milli = 0;  // per GPU, 0..1000
  int32_t num_gpu = 0;
  std::vector<std::string> models;  // allowed model names (vcore.io/gpu-models matching); empty: any
  double weight = 1.0;
};

class GpuTarget {
 public:
  // learn: count observed pods; else use `given` (weights renormalized). blended: vcore's 95..100 % mean.
  GpuTarget(bool learn, double coverage, bool blended, const std::vector<TargetSpecInput>& given);

  void observe(const CompiledPod& pod, const DeviceTable& devices);
  const TargetWorkload& workload(const DeviceTable& devices);  // rebuilt when due
  const TargetWorkload& current() const { return workload_; }  // as last built (readers under a shared lock)
  uint64_t version() const { return version_; }

 private:
  struct Spec {
    int64_t cpu_milli;
    int32_t gpu_milli, num_gpu;
    DeviceRequest constraint;  // only the model constraint is used
    double count = 0;
  };
  using Key = std::tuple<int64_t, int32_t, int32_t, std::string>;
  void rebuild(const DeviceTable& devices);
  std::vector<std::pair<size_t, double>> cut(double coverage) const;  // (spec, weight) covering `coverage` %

  bool learn_;
  double coverage_;
  bool blended_;
  std::map<Key, size_t> index_;
  std::vector<Spec> specs_;
  int64_t seen_ = 0, seen_at_build_ = -1;
  int32_t models_at_build_ = -1;
  uint64_t version_ = 0;
  TargetWorkload workload_;
};

}  // namespace vcore
