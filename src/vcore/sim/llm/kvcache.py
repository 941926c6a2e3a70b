"""An engine's KV cache: fixed block capacity, blocks shared by prefix hash, LRU eviction of unused blocks.

A block is identified by its prefix hash (equal hash = equal prefix, as in vLLM's automatic prefix caching). A
running request pins its blocks; a finished request unpins them and they stay cached until space is needed,
evicted least recently used first, and within one request deepest block first (vLLM frees a sequence's blocks
tail first, so a shared prefix outlives the suffixes built on it). Generated tokens take anonymous blocks that
are freed at once (their hashes are unknown to a trace). ``on_store`` / ``on_evict`` receive the hashes that
became resident / were evicted: the engine's KV events.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence


class KVCache:
    def __init__(
        self,
        capacity_blocks: int,
        on_store: Callable[[list[int]], None] | None = None,
        on_evict: Callable[[list[int]], None] | None = None,
    ):
        if isinstance(capacity_blocks, bool) or not isinstance(capacity_blocks, int) or capacity_blocks < 1:
            raise ValueError(f"KVCache.capacity_blocks: expected an integer >= 1, got {capacity_blocks!r}")
        self.capacity_blocks = capacity_blocks
        self._pins: dict[int, int] = {}  # resident hash -> pin count (0 = cached, evictable)
        self._evictable: OrderedDict[int, None] = OrderedDict()  # least recently used first
        self._anonymous = 0  # pinned blocks without a hash (generated tokens)
        self.on_store = on_store
        self.on_evict = on_evict
        self.evictions = 0

    @property
    def resident_blocks(self) -> int:
        return len(self._pins) + self._anonymous

    @property
    def used_blocks(self) -> int:
        """Blocks pinned by running requests (what vLLM's kv_cache_usage_perc counts)."""
        return len(self._pins) - len(self._evictable) + self._anonymous

    @property
    def usage(self) -> float:
        return self.used_blocks / self.capacity_blocks

    def cached_prefix(self, hashes: Sequence[int]) -> int:
        """Leading blocks of ``hashes`` resident now."""
        n = 0
        for h in hashes:
            if h not in self._pins:
                break
            n += 1
        return n

    def can_allocate(self, hashes: Sequence[int], anonymous: int) -> bool:
        missing = sum(1 for h in set(hashes) if h not in self._pins)
        # reusing an evictable block of this request frees nothing, so count it as taken
        reusable = sum(1 for h in set(hashes) if h in self._evictable)
        free = self.capacity_blocks - self.resident_blocks + len(self._evictable) - reusable
        return missing + anonymous <= free

    def allocate(self, hashes: Sequence[int], anonymous: int) -> None:
        """Pin ``hashes`` (reusing resident ones) and ``anonymous`` more blocks; call can_allocate first."""
        if not self.can_allocate(hashes, anonymous):
            raise RuntimeError("KVCache.allocate: not enough free blocks")
        stored = []
        for h in hashes:
            count = self._pins.get(h)
            if count is None:
                self._make_room(1)
                self._pins[h] = 1
                stored.append(h)
            else:
                if count == 0:
                    del self._evictable[h]
                self._pins[h] = count + 1
        self._make_room(anonymous)
        self._anonymous += anonymous
        if stored and self.on_store:
            self.on_store(stored)

    def release(self, hashes: Sequence[int], anonymous: int) -> None:
        """Unpin; blocks no longer used become evictable, the deepest block of the prompt first."""
        self._anonymous -= anonymous
        for h in reversed(hashes):
            count = self._pins[h] - 1
            self._pins[h] = count
            if count == 0:
                self._evictable[h] = None

    def _make_room(self, n: int) -> None:
        evicted = []
        while self.resident_blocks + n > self.capacity_blocks:
            h, _ = self._evictable.popitem(last=False)
            del self._pins[h]
            evicted.append(h)
        if evicted:
            self.evictions += len(evicted)
            if self.on_evict:
                self.on_evict(evicted)
