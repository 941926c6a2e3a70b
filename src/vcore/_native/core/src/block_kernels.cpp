// Vectorizable block loops; see block_kernels.h for what each computes and why it is exact.
#include "vcore/block_kernels.h"

#include <algorithm>
#include <cmath>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define VCORE_MULTIVERSION __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define VCORE_MULTIVERSION
#endif
// Helpers must inline into each clone to be compiled for that clone's instruction set.
#define VCORE_INLINE inline __attribute__((always_inline))

namespace vcore::blocks {

VCORE_MULTIVERSION
void fit_filter(int32_t begin, int32_t end, const int64_t* pods_alloc, const int64_t* pods_used,
                const ResourceRow* rows, int32_t n_rows, uint8_t* failed, int64_t* too_many_pods,
                int64_t* insufficient) {
  const int32_t n = end - begin;
  uint8_t fit_failed[512];  // callers pass blocks of at most 512 slots
  int64_t count = 0;
  for (int32_t j = 0; j < n; ++j) {
    const uint8_t f = static_cast<uint8_t>(!failed[j] & (pods_used[begin + j] >= pods_alloc[begin + j]));
    fit_failed[j] = f;
    count += f;
  }
  *too_many_pods += count;
  for (int32_t r = 0; r < n_rows; ++r) {
    const int64_t* __restrict alloc = rows[r].alloc + begin;
    const int64_t* __restrict used = rows[r].used + begin;
    const int64_t amount = rows[r].amount;
    count = 0;
    for (int32_t j = 0; j < n; ++j) {
      const uint8_t f = static_cast<uint8_t>(!failed[j] & (amount > alloc[j] - used[j]));
      fit_failed[j] |= f;
      count += f;
    }
    insufficient[r] += count;
  }
  for (int32_t j = 0; j < n; ++j) failed[j] |= fit_failed[j];
}

namespace {

// floor(x / d) for 0 <= x and 1 <= d below 2^45 with a quotient of at most a few hundred, given inv = 1.0 / d:
// the product is within one of the quotient, and two integer comparisons correct it exactly. A multiply and two
// integer multiplies vectorize far cheaper than a division.
VCORE_INLINE int64_t div_by_inv(int64_t x, int64_t d, double inv) {
  int64_t q = static_cast<int64_t>(static_cast<double>(x) * inv);
  q -= static_cast<int64_t>(q * d > x);
  q += static_cast<int64_t>((q + 1) * d <= x);
  return q;
}

// One resource's Least/MostAllocated score (0..100); 0 when the node lacks it (a == 0).
template <bool Most>
VCORE_INLINE int64_t allocated_part(int64_t a, int64_t req) {
  // Least: (a - req) * 100 / a, 0 when req > a. Most: min(req, a) * 100 / a. Written with min/max, no branches.
  const int64_t part = Most ? std::min(req, a) : std::max<int64_t>(a - req, 0);
  return static_cast<int64_t>(
      std::trunc(static_cast<double>(part * 100) / static_cast<double>(std::max<int64_t>(a, 1))));
}

template <bool Most>
VCORE_INLINE void allocated_score_t(int32_t begin, int32_t end, const ResourceRow* rows, int32_t n_rows, int64_t* out) {
  const int32_t n = end - begin;
  if (n_rows == 2) {  // cpu and memory: the common case, one pass with no intermediate arrays
    const ResourceRow r0 = rows[0], r1 = rows[1];
    const int64_t* __restrict a0 = r0.alloc + begin;
    const int64_t* __restrict u0 = r0.used + begin;
    const int64_t* __restrict a1 = r1.alloc + begin;
    const int64_t* __restrict u1 = r1.used + begin;
    // The weight sum takes one of four values (which resources the node has): their inverses are constants.
    const double inv_both = 1.0 / static_cast<double>(r0.weight + r1.weight);
    const double inv_0 = 1.0 / static_cast<double>(r0.weight), inv_1 = 1.0 / static_cast<double>(r1.weight);
    for (int32_t j = 0; j < n; ++j) {
      const int64_t p0 = a0[j] > 0, p1 = a1[j] > 0;
      const int64_t sum = p0 * r0.weight * allocated_part<Most>(a0[j], u0[j] + r0.amount) +
                          p1 * r1.weight * allocated_part<Most>(a1[j], u1[j] + r1.amount);
      const int64_t weights = p0 * r0.weight + p1 * r1.weight;  // sum is 0 whenever weights is
      const double inv = p0 ? (p1 ? inv_both : inv_0) : (p1 ? inv_1 : 1.0);
      out[j] = div_by_inv(sum, std::max<int64_t>(weights, 1), inv);
    }
    return;
  }
  int64_t weights[512];  // callers pass blocks of at most 512 slots
  for (int32_t j = 0; j < n; ++j) out[j] = 0, weights[j] = 0;
  for (int32_t r = 0; r < n_rows; ++r) {
    const int64_t* __restrict alloc = rows[r].alloc + begin;
    const int64_t* __restrict used = rows[r].used + begin;
    const int64_t amount = rows[r].amount;
    const int64_t w = rows[r].weight;
    for (int32_t j = 0; j < n; ++j) {
      const int64_t present = alloc[j] > 0;
      out[j] += present * w * allocated_part<Most>(alloc[j], used[j] + amount);
      weights[j] += present * w;
    }
  }
  for (int32_t j = 0; j < n; ++j)
    out[j] = static_cast<int64_t>(
        std::trunc(static_cast<double>(out[j]) / static_cast<double>(std::max<int64_t>(weights[j], 1))));
}

}  // namespace

VCORE_MULTIVERSION
void allocated_score(int32_t begin, int32_t end, bool most, const ResourceRow* rows, int32_t n_rows, int64_t* out) {
  if (most)
    allocated_score_t<true>(begin, end, rows, n_rows, out);
  else
    allocated_score_t<false>(begin, end, rows, n_rows, out);
}

VCORE_MULTIVERSION
void balanced_two(int32_t begin, int32_t end, const ResourceRow& r0, const ResourceRow& r1, int64_t* out) {
  const int32_t n = end - begin;
  const int64_t* __restrict a0 = r0.alloc + begin;
  const int64_t* __restrict u0 = r0.used + begin;
  const int64_t* __restrict a1 = r1.alloc + begin;
  const int64_t* __restrict u1 = r1.used + begin;
  for (int32_t j = 0; j < n; ++j) {
    double f0 = static_cast<double>(u0[j] + r0.amount) / static_cast<double>(a0[j] > 0 ? a0[j] : 1);
    double f1 = static_cast<double>(u1[j] + r1.amount) / static_cast<double>(a1[j] > 0 ? a1[j] : 1);
    f0 = f0 < 1.0 ? f0 : 1.0;
    f1 = f1 < 1.0 ? f1 : 1.0;
    const double std_dev = std::fabs((f0 - f1) / 2);
    const int64_t score = static_cast<int64_t>((1 - std_dev) * 100.0);
    out[j] = (a0[j] > 0 && a1[j] > 0) ? score : -1;
  }
}

VCORE_MULTIVERSION
int32_t combine(int32_t n, const uint8_t* ok, const int64_t* fit, int64_t w_fit, const int64_t* balanced,
                int64_t w_balanced, int64_t constant, uint8_t* mask, int64_t* scores) {
  int32_t exact = 0;
  uint8_t* __restrict m = mask;
  int64_t* __restrict out = scores;
  for (int32_t j = 0; j < n; ++j) {
    const int64_t total = w_fit * fit[j] + w_balanced * balanced[j] + constant;
    m[j] = ok[j];
    out[j] = ok[j] ? total : 0;
    exact += ok[j] & (balanced[j] < 0);
  }
  return exact;
}

VCORE_MULTIVERSION
void and_label_in(int32_t begin, int32_t end, const int32_t* column, const int32_t* values, int32_t n_values,
                  bool negate, uint8_t* out) {
  const int32_t n = end - begin;
  const int32_t* __restrict col = column + begin;
  uint8_t found[512];  // callers pass blocks of at most 512 slots
  for (int32_t j = 0; j < n; ++j) found[j] = 0;
  for (int32_t v = 0; v < n_values; ++v) {
    const int32_t value = values[v];
    for (int32_t j = 0; j < n; ++j) found[j] |= static_cast<uint8_t>(col[j] == value);
  }
  for (int32_t j = 0; j < n; ++j) out[j] &= static_cast<uint8_t>(found[j] != static_cast<uint8_t>(negate));
}

VCORE_MULTIVERSION
void and_label_exists(int32_t begin, int32_t end, const int32_t* column, bool negate, uint8_t* out) {
  const int32_t n = end - begin;
  const int32_t* __restrict col = column + begin;
  for (int32_t j = 0; j < n; ++j) out[j] &= static_cast<uint8_t>((col[j] >= 0) != negate);
}

VCORE_MULTIVERSION
void add_normalized(int32_t begin, int32_t end, const uint8_t* mask, const int64_t* raw, int64_t max_raw, bool reverse,
                    int64_t weight, int64_t* scores) {
  const int64_t divisor = max_raw > 0 ? max_raw : 1;
  const double inv = 1.0 / static_cast<double>(divisor);
  for (int32_t i = begin; i < end; ++i) {
    int64_t s = max_raw > 0 ? div_by_inv(raw[i] * 100, divisor, inv) : 0;
    s = reverse ? 100 - s : s;
    scores[i] += mask[i] ? weight * s : 0;
  }
}

VCORE_MULTIVERSION
int64_t mark_from_table(int32_t n, const uint8_t* __restrict flag, const int32_t* __restrict ids,
                        const int32_t* __restrict table, uint8_t* __restrict failed) {
  int64_t hits = 0;
  for (int32_t j = 0; j < n; ++j) {
    const int32_t hit = (failed[j] == 0) & (flag[j] != 0) & table[ids[j]];  // every id indexes the table
    failed[j] |= static_cast<uint8_t>(hit);
    hits += hit;
  }
  return hits;
}

VCORE_MULTIVERSION
void gather_where(int32_t n, const uint8_t* __restrict mask, const int32_t* __restrict ids,
                  const int64_t* __restrict table, int64_t* __restrict out) {
  // Unconditional load (every id indexes the table) so the loop becomes a gather.
  for (int32_t j = 0; j < n; ++j) out[j] = table[ids[j]] * static_cast<int64_t>(mask[j] != 0);
}

VCORE_MULTIVERSION
void add_weight_where(int32_t n, const uint8_t* __restrict mask, int64_t weight, int64_t* __restrict raw) {
  for (int32_t j = 0; j < n; ++j) raw[j] += mask[j] ? weight : 0;
}

VCORE_MULTIVERSION
int64_t max_where(int32_t n, const uint8_t* __restrict mask, const int64_t* __restrict values) {
  int64_t best = 0;
  for (int32_t j = 0; j < n; ++j) best = std::max(best, mask[j] ? values[j] : int64_t{0});
  return best;
}

}  // namespace vcore::blocks
