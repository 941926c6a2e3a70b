// Chained block hashes of prompt text (see block_hash.h).
#include "vcore/routing/block_hash.h"

#include <cstring>

#include "vcore/errors.h"

namespace vcore::routing {
namespace {

constexpr uint64_t kMul = 0x9E3779B97F4A7C15ULL;  // 2^64 / golden ratio: odd, well-spread bits

// Final avalanche: every input bit affects every output bit (the splitmix64 finalizer constants).
inline uint64_t avalanche(uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return x;
}

}  // namespace

uint64_t hash_bytes(uint64_t seed, const char* data, size_t n) {
  uint64_t h = avalanche(seed ^ (static_cast<uint64_t>(n) * kMul));
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, data + i, 8);  // unaligned-safe load; little-endian hosts only differ in byte order
    h = (h ^ avalanche(w + kMul)) * kMul;
    h ^= h >> 29;
  }
  if (i < n) {
    uint64_t w = 0;
    std::memcpy(&w, data + i, n - i);
    h = (h ^ avalanche(w + kMul + static_cast<uint64_t>(n - i))) * kMul;
    h ^= h >> 29;
  }
  return avalanche(h);
}

std::vector<uint64_t> hash_blocks(std::string_view text, int64_t block_bytes, int64_t max_blocks,
                                  std::string_view salt) {
  if (block_bytes < 1) throw Invalid("block_bytes: must be >= 1, got " + std::to_string(block_bytes));
  std::vector<uint64_t> out;
  const int64_t n = static_cast<int64_t>(text.size());
  int64_t n_blocks = (n + block_bytes - 1) / block_bytes;
  if (max_blocks > 0 && n_blocks > max_blocks) n_blocks = max_blocks;
  out.reserve(static_cast<size_t>(n_blocks));
  uint64_t prev = hash_bytes(0, salt.data(), salt.size());
  for (int64_t b = 0; b < n_blocks; ++b) {
    const int64_t start = b * block_bytes;
    const int64_t len = std::min(block_bytes, n - start);
    prev = hash_bytes(prev, text.data() + start, static_cast<size_t>(len));
    out.push_back(prev);
  }
  return out;
}

}  // namespace vcore::routing
