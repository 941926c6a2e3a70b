"""The scheduling loop's inbox: what reflectors, bind workers and writers hand the loop's thread, in arrival order,
with a lane for the fast path that the loop takes first.

A burst of batch pods puts thousands of watch events ahead of an agent pod; in one queue the agent would wait for
all of them to be applied. The fast lane carries the fast path's pod events and bind results. Each object's
messages stay in one lane (the loop routes by pod key), so an object's events are never reordered. A relist
(`barrier=True`) is the exception that orders both lanes: fast messages that arrived after it wait until it, and
everything before it, has been taken, so a relist never overwrites a newer event.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from typing import Any


class Inbox:
    def __init__(self) -> None:
        self._ready = threading.Condition(threading.Lock())
        self._normal: deque[tuple[int, Any]] = deque()
        self._fast: deque[tuple[int, Any]] = deque()
        self._barriers: deque[int] = deque()  # sequence numbers of relists not yet taken
        self._seq = 0

    def put(self, msg: Any, *, fast: bool = False, barrier: bool = False) -> None:
        with self._ready:
            self._seq += 1
            (self._fast if fast else self._normal).append((self._seq, msg))
            if barrier:
                self._barriers.append(self._seq)
            self._ready.notify()

    def get(self, timeout: float | None = None) -> Any:
        """The next message (the fast lane's first), waiting up to `timeout` seconds; queue.Empty if none."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._ready:
            while True:
                msg = self._take(fast_only=False)
                if msg is not _NONE:
                    return msg
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise queue.Empty
                self._ready.wait(left)

    def get_nowait(self) -> Any:
        return self.get(timeout=0)

    def get_fast_nowait(self) -> Any:
        """The fast lane's next message that may go now; queue.Empty if none."""
        with self._ready:
            msg = self._take(fast_only=True)
        if msg is _NONE:
            raise queue.Empty
        return msg

    def __len__(self) -> int:
        with self._ready:
            return len(self._normal) + len(self._fast)

    def _take(self, fast_only: bool) -> Any:
        fast, normal, barriers = self._fast, self._normal, self._barriers
        if fast and (not barriers or fast[0][0] < barriers[0]):
            return fast.popleft()[1]
        if fast_only or not normal:
            return _NONE
        seq, msg = normal.popleft()
        if barriers and seq == barriers[0]:
            barriers.popleft()
        return msg


_NONE = object()
