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

// NodeResourcesFit's filter over a block of nodes not yet rejected (failed[j] == 0): counts "Too many pods" and
// each insufficient row (every one, as kube-scheduler reports them all), then marks those nodes failed.
void fit_filter(int32_t begin, int32_t end, const int64_t* pods_alloc, const int64_t* pods_used,
                const ResourceRow* rows, int32_t n_rows, uint8_t* failed, int64_t* too_many_pods,
                int64_t* insufficient);

// NodeResourcesFit Least/MostAllocated over rows: out[j] = sum(w * s) / sum(w) over rows with alloc > 0.
// Exact in double when every alloc < 2^45: then (alloc - req) * 100 and alloc are exact doubles and
// quotient * alloc < 2^53, so truncating the correctly rounded quotient gives the integer quotient.
void allocated_score(int32_t begin, int32_t end, bool most, const ResourceRow* rows, int32_t n_rows, int64_t* out);

// NodeResourcesBalancedAllocation for exactly two resources: (1 - |f0 - f1| / 2) * 100 truncated, the same IEEE
// operations as the scalar path; -1 where a node lacks either resource (the scalar path redoes those).
void balanced_two(int32_t begin, int32_t end, const ResourceRow& r0, const ResourceRow& r1, int64_t* out);

// scores[j] = ok[j] ? w_fit * fit[j] + w_balanced * balanced[j] + constant : 0 and mask[j] = ok[j], j < n.
// Returns how many feasible slots still need a scalar score: those with balanced[j] < 0.
int32_t combine(int32_t n, const uint8_t* ok, const int64_t* fit, int64_t w_fit, const int64_t* balanced,
                int64_t w_balanced, int64_t constant, uint8_t* mask, int64_t* scores);

// out[j] &= (column[i] is one of values) != negate, for In / NotIn (and nodeSelector with one value).
void and_label_in(int32_t begin, int32_t end, const int32_t* column, const int32_t* values, int32_t n_values,
                  bool negate, uint8_t* out);

// out[j] &= (column[i] >= 0) != negate, for Exists / DoesNotExist.
void and_label_exists(int32_t begin, int32_t end, const int32_t* column, bool negate, uint8_t* out);

// scores[i] += weight * DefaultNormalizeScore(raw[i]) where mask[i], over [begin, end): 100 * raw / max_raw
// (100 - that when reverse; 100 or 0 when max_raw == 0). Exact: a reciprocal multiply corrected in integers.
void add_normalized(int32_t begin, int32_t end, const uint8_t* mask, const int64_t* raw, int64_t max_raw, bool reverse,
                    int64_t weight, int64_t* scores);

// failed[j] |= hit, hit = !failed[j] && flag[j] && table[ids[j]]; returns the number of hits. A per-node lookup
// into a small per-pod table (e.g. "this taint set is not tolerated"), as a gather.
int64_t mark_from_table(int32_t n, const uint8_t* flag, const int32_t* ids, const int32_t* table, uint8_t* failed);

// out[j] = mask[j] ? table[ids[j]] : 0.
void gather_where(int32_t n, const uint8_t* mask, const int32_t* ids, const int64_t* table, int64_t* out);

// raw[j] += mask[j] ? weight : 0 (a matched preferred term adds its weight).
void add_weight_where(int32_t n, const uint8_t* mask, int64_t weight, int64_t* raw);

// max(values[j] where mask[j]), or 0.
int64_t max_where(int32_t n, const uint8_t* mask, const int64_t* values);

}  // namespace vcore::blocks
