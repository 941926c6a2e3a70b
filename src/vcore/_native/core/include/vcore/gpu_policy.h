// GPU placement policies as functions of one node's GPU state.
//
// Shared by the trace replay (over a GpuInventory) and the live engine (over ClusterState's device table): both
// describe a node as a GpuNodeView and say which device sets the fit check allows (GpuOptions); every policy then
// returns an integer node score (kube-scheduler style, higher is better) and the device set it would take.
// Formulas follow the FGD paper's simulator (Weng et al., ATC'23) and Volcano's card orders; see gpu_policy.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "vcore/gpu_fragment.h"
#include "vcore/gpu_inventory.h"

namespace vcore {

// One node as the policies see it. `free` lists the free share (milli) of each GPU that can take whole or shared
// work (0 for a GPU held exclusively); MIG-mode GPUs are not in it.
struct GpuNodeView {
  int64_t cpu_cap = 0, cpu_free = 0, mem_cap = 0, mem_free = 0;
  int32_t model = -1;  // node-level GPU model id for target-workload model masks; -1 none
  int32_t g = 0;
  const int32_t* free = nullptr;
  int32_t idle = 0;        // GPUs with free == kGpuMilli
  int64_t free_total = 0;  // sum of free
};

// The device sets the fit check allows on a node, as bits over the view's GPUs: `candidates` = the GPUs that can
// host a fractional slice; `whole` = the set an n-GPU request takes (the fit rule's choice). 0 for CPU-only pods.
struct GpuOptions {
  uint64_t candidates = 0;
  uint64_t whole = 0;
};

enum class GpuPolicy : int32_t {
  kFirstFit = 0,
  kBestFit,
  kRandom,
  kFgd,
  kDotProduct,
  kGpuPacking,
  kGpuClustering,
  kBinpack,
  kSpread,
  kVcore,
};

// Parses a policy name ("first-fit", "best-fit", "random", "fgd", "dot-product", "gpu-packing", "gpu-clustering",
// "binpack", "spread", "vcore"); throws std::invalid_argument on anything else.
GpuPolicy parse_gpu_policy(const std::string& name);

enum class CardOrder : uint8_t { kFirst, kTightest, kEmptiest };

struct VcoreKnobs {
  double scale = 1000.0;         // fragment-delta scale of the sigmoid (FGD's is 1000)
  double pack_points = 1.0;      // bonus for the share of the node's GPU already allocated
  double balance_points = 10.0;  // bonus for leaving CPU and GPU allocated in equal proportion, at full CPU pressure
};

// CPU pressure of a workload on a cluster: the CPU it asks per GPU milli (target-workload mean) over the CPU the
// cluster has per GPU milli; at 100 % GPU demand this is its CPU utilization. 1 when either side has no GPU.
double cpu_pressure(const TargetWorkload& tw, double cluster_cpu_milli, double cluster_gpu_milli);
// vcore's knobs for a workload of that pressure: the CPU/GPU balance bonus only guards against CPU stranding GPUs,
// which cannot happen where CPU is abundant, so it fades from full at pressure >= 0.8 to nothing at <= 0.5.
VcoreKnobs knobs_for_pressure(const VcoreKnobs& k, double pressure);

// Views of GpuInventory node n, and the options the replay's protocol allows there (free >= milli; lowest idle).
GpuNodeView inventory_view(const GpuInventory& inv, int32_t n);
GpuOptions inventory_options(const GpuInventory& inv, int32_t n, const GpuRequest& r);

// The device set of request r under a card order: a fractional slice takes one candidate GPU (first, tightest or
// emptiest), a whole-GPU request takes o.whole, a CPU-only request nothing.
uint64_t pick_devices(const GpuNodeView& v, const GpuRequest& r, const GpuOptions& o, CardOrder order);

int64_t best_fit_score(const GpuNodeView& v, const GpuRequest& r);
int64_t dot_product_score(const GpuNodeView& v, const GpuRequest& r, const GpuOptions& o, uint64_t* mask);
int64_t gpu_packing_score(const GpuNodeView& v, const GpuRequest& r);
// same_class: the node already runs a GPU pod of r's class (0 = shared, k = k whole GPUs); n_classes: distinct
// classes it runs.
int64_t gpu_clustering_score(const GpuNodeView& v, const GpuRequest& r, bool same_class, int32_t n_classes);
// Mean over cpu, memory and GPU of the node's allocated share after placing r (Volcano binpack / spread).
double allocated_after(const GpuNodeView& v, const GpuRequest& r);

// Score (0..100) and device set (*mask) of every policy but fgd and vcore, which need the fragment measure. Random
// scores 0 and takes the first fitting GPU (callers break ties at random). gpu-clustering needs `same_class`: the
// node already runs a GPU pod of r's class; `n_classes`: the distinct classes it runs.
int64_t fragment_free_score(GpuPolicy policy, const GpuNodeView& v, const GpuRequest& r, const GpuOptions& o,
                            bool same_class, int32_t n_classes, uint64_t* mask);

// FGD: the fragment F_after of the device set chosen for r. Fractional slices try every candidate GPU (equal
// free milli gives equal states, so the first of each is tried): by_score picks the first with the best integer
// FGD score (the published rule), otherwise the smallest exact F_after.
double fgd_after(const GpuNodeView& v, const GpuRequest& r, const GpuOptions& o, const TargetWorkload& tw,
                 double f_before, bool by_score, uint64_t* mask);
int64_t fgd_score(double f_before, double f_after);  // int(100 * sigmoid((F_before - F_after) / 1000))
// vcore's policy score (tenths of a point): see gpu_policy.cpp.
int64_t vcore_score(const GpuNodeView& v, const GpuRequest& r, double delta, const VcoreKnobs& k);

}  // namespace vcore
