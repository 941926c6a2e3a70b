// Target workload of the live GPU plugin (see vcore/gpu_target.h).
#include "vcore/gpu_target.h"

#include <algorithm>

#include "vcore/errors.h"

namespace vcore {

GpuTarget::GpuTarget(bool learn, double coverage, bool blended, const std::vector<TargetSpecInput>& given)
    : learn_(learn), coverage_(coverage), blended_(blended) {
  if (!(coverage > 0 && coverage <= 100)) throw Invalid("profile: GPUPlacement: coverage must be in (0, 100]");
  for (size_t i = 0; i < given.size(); ++i) {
    const TargetSpecInput& t = given[i];
    const std::string at = "profile: GPUPlacement: targetWorkload[" + std::to_string(i) + "]";
    if (t.cpu_milli < 0) throw Invalid(at + ".cpuMilli: must be >= 0");
    if (t.gpu_milli < 0 || t.gpu_milli > kGpuMilli) throw Invalid(at + ".gpuMilli: must be in 0..1000");
    if (t.num_gpu < 0 || t.num_gpu > kMaxGpusPerNode) throw Invalid(at + ".numGpu: must be in 0..64");
    if (!(t.weight > 0)) throw Invalid(at + ".weight: must be > 0");
    Spec s{t.cpu_milli, t.gpu_milli, t.num_gpu, {}, t.weight};
    s.constraint.has_models = !t.models.empty();
    for (const auto& m : t.models) s.constraint.models.push_back(model_tokens(m));
    specs_.push_back(std::move(s));
  }
}

void GpuTarget::observe(const CompiledPod& pod, const DeviceTable& devices) {
  if (!learn_) return;
  const DeviceRequest& r = pod.gpu;
  int32_t milli = 0, num = 0;
  if (r.uses_gpus() && r.kind == GpuKind::kWhole) {
    milli = kGpuMilli, num = r.count;
  } else if (r.uses_gpus() && r.kind == GpuKind::kShared) {
    num = r.count;
    if (r.milli >= 0)
      milli = r.milli;
    else if (r.memory_milli >= 0)
      milli = r.memory_milli;
    else
      milli = devices.max_device_memory() > 0 ? r.milli_on(devices.max_device_memory()) : kGpuMilli;
    milli = std::min(milli, kGpuMilli);
  }  // MIG instances live on MIG GPUs, outside the measure: the pod counts as its CPU only
  int64_t cpu = 0;
  for (const auto& [axis, amount] : pod.requests)
    if (axis == 0) cpu = amount;
  const Key key{cpu, milli, num, num ? r.constraint_key() : std::string()};
  auto it = index_.find(key);
  if (it == index_.end()) {
    Spec s{cpu, milli, num, {}, 0};
    if (num)
      s.constraint.has_models = r.has_models, s.constraint.models = r.models,
      s.constraint.product_terms = r.product_terms;
    it = index_.emplace(key, specs_.size()).first;
    specs_.push_back(std::move(s));
  }
  specs_[it->second].count += 1;
  ++seen_;
}

std::vector<std::pair<size_t, double>> GpuTarget::cut(double coverage) const {
  std::vector<size_t> order(specs_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Most frequent first; equal counts by decreasing (cpu, gpu milli, GPU count), as the artifact sorts.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Spec &x = specs_[a], &y = specs_[b];
    return std::make_tuple(x.count, x.cpu_milli, x.gpu_milli, x.num_gpu) >
           std::make_tuple(y.count, y.cpu_milli, y.gpu_milli, y.num_gpu);
  });
  double total = 0;
  for (const auto& s : specs_) total += s.count;
  std::vector<std::pair<size_t, double>> out;
  double cum = 0;
  for (size_t i : order) {
    if (cum >= coverage * total / 100.0) break;
    out.emplace_back(i, specs_[i].count);
    cum += specs_[i].count;
  }
  for (auto& [i, w] : out) w /= cum;
  return out;
}

void GpuTarget::rebuild(const DeviceTable& devices) {
  std::vector<double> weight(specs_.size(), 0.0);
  if (!learn_) {
    double total = 0;
    for (const auto& s : specs_) total += s.count;
    for (size_t i = 0; i < specs_.size(); ++i) weight[i] = specs_[i].count / total;
  } else if (seen_ > 0) {
    const std::vector<double> cutoffs =
        blended_ ? std::vector<double>{95, 96, 97, 98, 99, 100} : std::vector<double>{coverage_};
    for (double c : cutoffs)
      for (const auto& [i, w] : cut(c)) weight[i] += w / static_cast<double>(cutoffs.size());
  }
  TargetWorkload tw;
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (weight[i] <= 0) continue;
    const Spec& s = specs_[i];
    uint64_t mask = 0;
    if (s.constraint.has_models || !s.constraint.product_terms.empty()) {
      for (int32_t m = 0; m < devices.n_models(); ++m)
        if (s.constraint.allows(devices.model_name(m))) mask |= uint64_t{1} << m;
      if (mask == 0) continue;  // no GPU of the cluster can host it: it cannot be fragmented against
    }
    tw.cpu_milli.push_back(s.cpu_milli);
    tw.gpu_milli.push_back(s.gpu_milli);
    tw.num_gpu.push_back(s.num_gpu);
    tw.model_mask.push_back(mask);
    tw.weight.push_back(weight[i]);
  }
  workload_ = std::move(tw);
  seen_at_build_ = seen_;
  models_at_build_ = devices.n_models();
  ++version_;
}

const TargetWorkload& GpuTarget::workload(const DeviceTable& devices) {
  const bool due = seen_at_build_ < 0 || devices.n_models() != models_at_build_ ||
                   (learn_ && seen_ - seen_at_build_ >= std::max<int64_t>(1, seen_at_build_ / 16));
  if (due) rebuild(devices);
  return workload_;
}

}  // namespace vcore
