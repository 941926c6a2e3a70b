// Branch-free loops over a contiguous block of node slots, written so the compiler vectorizes them. Built for
// several instruction sets (AVX-512, AVX2, baseline) and picked at load time, so one build runs anywhere.
// Each loop computes the same integers as the scalar path in engine.cpp; the engine uses them only when that is
// provably so (see the exactness notes at each function).
#pragma once
#include <cstdint>

namespace vcore::blocks {

struct ResourceRow {
  const int64_t* alloc;
  const int64_t* used;
  int64_t amount;  // the pod's request
  int64_t weight;
};

// ok[j] = live && amount <= alloc - used for every row && pods fit && no unschedulable / blocking-taint flag.
// A cleared ok[j] means only "take the exact path", never "infeasible".
void prefilter(int32_t begin, int32_t end, const uint8_t* live, const uint8_t* unschedulable, bool check_unschedulable,
               const uint8_t* blocking_taints, bool check_taints, const ResourceRow* rows, int32_t n_rows,
               const int64_t* pods_alloc, const int64_t* pods_used, bool check_fit, uint8_t* ok);

// NodeResourcesFit Least/MostAllocated over rows: out[j] = sum(w * s) / sum(w) over rows with alloc > 0.
// Exact in double when every alloc < 2^45: then (alloc - req) * 100 and alloc are exact doubles and
// quotient * alloc < 2^53, so truncating the correctly rounded quotient gives the integer quotient.
void allocated_score(int32_t begin, int32_t end, bool most, const ResourceRow* rows, int32_t n_rows, int64_t* out);

// NodeResourcesBalancedAllocation for exactly two resources: (1 - |f0 - f1| / 2) * 100 truncated, the same IEEE
// operations as the scalar path; -1 where a node lacks either resource (the scalar path redoes those).
void balanced_two(int32_t begin, int32_t end, const ResourceRow& r0, const ResourceRow& r1, int64_t* out);

// scores[begin + j] = ok[j] ? w_fit * fit[j] + w_balanced * balanced[j] + constant : 0 and mask = ok.
// Returns how many slots need the exact scalar path: !ok[j] (reasons, tolerations) or balanced[j] < 0.
int32_t combine(int32_t begin, int32_t end, const uint8_t* ok, const int64_t* fit, int64_t w_fit,
                const int64_t* balanced, int64_t w_balanced, int64_t constant, uint8_t* mask, int64_t* scores);

}  // namespace vcore::blocks
