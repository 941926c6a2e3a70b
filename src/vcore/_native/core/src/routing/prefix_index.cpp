// Per-endpoint LRU prefix record and the one-pass longest-prefix match (see prefix_index.h).
#include "vcore/routing/prefix_index.h"

#include <algorithm>
#include <string>

#include "vcore/errors.h"

namespace vcore::routing {

PrefixIndex::PrefixIndex(int64_t capacity_blocks) : capacity_(capacity_blocks) {
  if (capacity_blocks < 1)
    throw Invalid("prefix_capacity_blocks: must be >= 1, got " + std::to_string(capacity_blocks));
}

void PrefixIndex::reserve_endpoint(int32_t endpoint) {
  if (endpoint < 0) throw Invalid("endpoint slot must be >= 0");
  if (static_cast<size_t>(endpoint) >= lru_.size()) lru_.resize(static_cast<size_t>(endpoint) + 1);
}

int32_t PrefixIndex::find(int32_t endpoint, uint64_t hash) const {
  auto it = holders_.find(hash);
  if (it == holders_.end()) return -1;
  for (const Holder& h : it->second.list)
    if (h.endpoint == endpoint) return h.entry;
  return -1;
}

void PrefixIndex::unlink(int32_t idx) {
  Entry& e = pool_[idx];
  Lru& l = lru_[e.endpoint];
  if (e.prev >= 0)
    pool_[e.prev].next = e.next;
  else
    l.head = e.next;
  if (e.next >= 0)
    pool_[e.next].prev = e.prev;
  else
    l.tail = e.prev;
  e.prev = e.next = -1;
}

void PrefixIndex::push_front(int32_t idx) {
  Entry& e = pool_[idx];
  Lru& l = lru_[e.endpoint];
  e.prev = -1;
  e.next = l.head;
  if (l.head >= 0) pool_[l.head].prev = idx;
  l.head = idx;
  if (l.tail < 0) l.tail = idx;
}

void PrefixIndex::erase(int32_t idx) {
  unlink(idx);
  Entry& e = pool_[idx];
  auto it = holders_.find(e.hash);
  auto& v = it->second.list;
  v.erase(std::find_if(v.begin(), v.end(), [idx](const Holder& h) { return h.entry == idx; }));
  it->second.bits[e.endpoint >> 6] &= ~(uint64_t{1} << (e.endpoint & 63));
  if (v.empty()) holders_.erase(it);
  --lru_[e.endpoint].size;
  --total_;
  free_.push_back(idx);
}

void PrefixIndex::insert(int32_t endpoint, const uint64_t* hashes, size_t n) {
  reserve_endpoint(endpoint);
  // Last to first: the prompt's first blocks end up most recently used, its deepest blocks are evicted first.
  for (size_t k = n; k-- > 0;) {
    const uint64_t h = hashes[k];
    int32_t idx = find(endpoint, h);
    if (idx >= 0) {
      unlink(idx);
      push_front(idx);
      continue;
    }
    if (lru_[endpoint].size >= capacity_) erase(lru_[endpoint].tail);
    if (free_.empty()) {
      idx = static_cast<int32_t>(pool_.size());
      pool_.push_back(Entry{h, endpoint, -1, -1});
    } else {
      idx = free_.back();
      free_.pop_back();
      pool_[idx] = Entry{h, endpoint, -1, -1};
    }
    push_front(idx);
    Holders& hs = holders_[h];
    hs.list.push_back(Holder{endpoint, idx});
    if (hs.bits.size() <= static_cast<size_t>(endpoint >> 6)) hs.bits.resize(static_cast<size_t>(endpoint >> 6) + 1, 0);
    hs.bits[endpoint >> 6] |= uint64_t{1} << (endpoint & 63);
    ++lru_[endpoint].size;
    ++total_;
  }
}

void PrefixIndex::remove(int32_t endpoint, const uint64_t* hashes, size_t n) {
  if (endpoint < 0 || static_cast<size_t>(endpoint) >= lru_.size()) return;
  for (size_t k = 0; k < n; ++k) {
    int32_t idx = find(endpoint, hashes[k]);
    if (idx >= 0) erase(idx);
  }
}

void PrefixIndex::clear_endpoint(int32_t endpoint) {
  if (endpoint < 0 || static_cast<size_t>(endpoint) >= lru_.size()) return;
  while (lru_[endpoint].head >= 0) erase(lru_[endpoint].head);
}

int64_t PrefixIndex::endpoint_size(int32_t endpoint) const {
  if (endpoint < 0 || static_cast<size_t>(endpoint) >= lru_.size()) return 0;
  return lru_[endpoint].size;
}

std::vector<uint64_t> PrefixIndex::endpoint_blocks(int32_t endpoint) const {
  std::vector<uint64_t> out;
  if (endpoint < 0 || static_cast<size_t>(endpoint) >= lru_.size()) return out;
  for (int32_t idx = lru_[endpoint].head; idx >= 0; idx = pool_[idx].next) out.push_back(pool_[idx].hash);
  return out;
}

void PrefixIndex::match(const uint64_t* hashes, size_t n, const int32_t* candidates, size_t n_candidates,
                        int32_t* out) const {
  if (n_candidates == 0) return;
  int32_t max_slot = 0;
  for (size_t j = 0; j < n_candidates; ++j) max_slot = std::max(max_slot, candidates[j]);
  const size_t words = static_cast<size_t>(max_slot) / 64 + 1;
  alive_.assign(words, 0);
  next_.assign(words, 0);
  if (position_.size() < static_cast<size_t>(max_slot) + 1) position_.resize(static_cast<size_t>(max_slot) + 1);
  for (size_t j = 0; j < n_candidates; ++j) {
    const int32_t s = candidates[j];
    alive_[s >> 6] |= uint64_t{1} << (s & 63);
    position_[s] = static_cast<int32_t>(j);
    out[j] = static_cast<int32_t>(n);  // until a block is missing
  }
  size_t n_alive = n_candidates;
  for (size_t i = 0; i < n && n_alive > 0; ++i) {
    auto it = holders_.find(hashes[i]);
    std::fill(next_.begin(), next_.end(), 0);
    if (it != holders_.end()) {
      const auto& bits = it->second.bits;
      const size_t n_words = std::min(words, bits.size());
      for (size_t w = 0; w < n_words; ++w) next_[w] = alive_[w] & bits[w];
    }
    for (size_t w = 0; w < words; ++w) {
      uint64_t gone = alive_[w] & ~next_[w];
      while (gone) {
        const int bit = __builtin_ctzll(gone);
        gone &= gone - 1;
        out[position_[static_cast<int32_t>(w * 64 + bit)]] = static_cast<int32_t>(i);
        --n_alive;
      }
      alive_[w] = next_[w];
    }
  }
}

}  // namespace vcore::routing
