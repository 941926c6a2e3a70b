// The router's approximate record of which prefix blocks each endpoint holds in its KV cache.
//
// Per endpoint a bounded LRU of block hashes; a global hash -> holders map answers "which endpoints hold this
// block". A served request's blocks are inserted last-to-first, so its first blocks are the most recently used
// and the deepest blocks of old prompts are evicted first (what an engine's prefix cache does when it frees a
// sequence's blocks tail first). KV events from an engine (blocks stored / removed) update the same record.
//
// match() is the longest-prefix match of one request against every candidate endpoint in one pass over the
// request's blocks: a bitset of endpoints still matching shrinks block by block and stops when it is empty.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace vcore::routing {

class PrefixIndex {
 public:
  explicit PrefixIndex(int64_t capacity_blocks);

  int64_t capacity_blocks() const { return capacity_; }
  // Grows per-endpoint storage so that slot `endpoint` exists (slots are small non-negative integers).
  void reserve_endpoint(int32_t endpoint);
  // Records that `endpoint` holds hashes[0..n) (touching existing entries), evicting its LRU tail if full.
  void insert(int32_t endpoint, const uint64_t* hashes, size_t n);
  // Forgets the given blocks of `endpoint` (a KV "removed" event); unknown hashes are ignored.
  void remove(int32_t endpoint, const uint64_t* hashes, size_t n);
  // Forgets everything about `endpoint` (removed endpoint, engine restart, "all blocks cleared" event).
  void clear_endpoint(int32_t endpoint);
  // out[j] = number of leading hashes that candidates[j] holds. `candidates` are distinct valid slots.
  void match(const uint64_t* hashes, size_t n, const int32_t* candidates, size_t n_candidates, int32_t* out) const;

  int64_t endpoint_size(int32_t endpoint) const;
  int64_t total_entries() const { return total_; }
  // The endpoint's hashes from most to least recently used (tests, debugging).
  std::vector<uint64_t> endpoint_blocks(int32_t endpoint) const;

 private:
  struct Entry {
    uint64_t hash;
    int32_t endpoint;
    int32_t prev;  // towards the most recently used end
    int32_t next;  // towards the least recently used end
  };
  struct Lru {
    int32_t head = -1;  // most recently used
    int32_t tail = -1;  // least recently used
    int64_t size = 0;
  };

  int32_t find(int32_t endpoint, uint64_t hash) const;
  void unlink(int32_t idx);
  void push_front(int32_t idx);
  void erase(int32_t idx);

  int64_t capacity_;
  int64_t total_ = 0;
  std::vector<Entry> pool_;
  std::vector<int32_t> free_;
  std::vector<Lru> lru_;
  struct Holder {
    int32_t endpoint;  // inline, so match() scans a contiguous vector without touching the pool
    int32_t entry;
  };
  struct Holders {
    std::vector<Holder> list;    // one per endpoint holding the hash (for LRU updates)
    std::vector<uint64_t> bits;  // the same endpoints as a bitset over slots (for match: word ANDs)
  };
  std::unordered_map<uint64_t, Holders> holders_;
  mutable std::vector<uint64_t> alive_, next_;  // match() scratch bitsets over slots
  mutable std::vector<int32_t> position_;       // match() scratch: slot -> candidate position
};

}  // namespace vcore::routing
