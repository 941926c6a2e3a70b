// Prompt text -> chain of block hashes, the key of the router's prefix index.
//
// The text is cut into fixed-size byte blocks; block i's hash mixes block i's bytes into block i-1's hash (the
// first block starts from the hash of a salt, e.g. the model name), so equal hash i means an equal prefix up to
// and including block i. This is the chaining Kthena's prefix-cache plugin and vLLM's prefix caching use; the
// mixing function is vcore's own (64-bit multiply-xorshift), stable across runs and platforms.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace vcore::routing {

// 64-bit hash of `data`, continuing from `seed`.
uint64_t hash_bytes(uint64_t seed, const char* data, size_t n);

// Chained hashes of `text` in blocks of `block_bytes` (the last block may be shorter); at most `max_blocks`
// blocks when max_blocks > 0. Throws Invalid when block_bytes < 1.
std::vector<uint64_t> hash_blocks(std::string_view text, int64_t block_bytes, int64_t max_blocks,
                                  std::string_view salt);

}  // namespace vcore::routing
