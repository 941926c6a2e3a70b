"""Resource vectors of the batch layer, and the bound that keeps their arithmetic exact.

The batch layer adds and compares int64 vectors over the resource axes (what jobs hold and ask for, queue bounds,
minResources). numpy wraps int64 silently, so every amount entering it is held to at most ``MAX_AMOUNT`` = 2**61:
the native state refuses a node or a binding that would take the cluster's allocatable or requested total past
it, and a request, a minResources or a queue bound beyond it is more than any cluster vcore accepts can hold, so
reading it as ``MAX_AMOUNT`` changes no decision. Any expression of up to three such amounts then stays below
2**63. ``UNLIMITED`` (an unset bound) is not an amount and passes through unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MAX_AMOUNT = 2**61  # the native core's bound on a cluster's total (ClusterState::kMaxTotal)
UNLIMITED = 2**63 - 1  # a bound that is not set


def bounded(amount: int) -> int:
    """An amount held to MAX_AMOUNT (UNLIMITED stays UNLIMITED)."""
    return amount if amount <= MAX_AMOUNT or amount == UNLIMITED else MAX_AMOUNT


def vector(amounts: Sequence[int]) -> np.ndarray:
    """Python ints (any size, non-negative) as an int64 vector, each held to MAX_AMOUNT."""
    if not amounts or max(amounts) <= MAX_AMOUNT:  # the usual case: one pass in C, none in Python
        return np.array(amounts, np.int64)
    return np.array([a if a <= MAX_AMOUNT else MAX_AMOUNT for a in amounts], np.int64)


def summed(vectors: Sequence[np.ndarray], start: np.ndarray) -> np.ndarray:
    """start + the vectors, held to MAX_AMOUNT per entry (the inputs are bounded already)."""
    if not vectors:
        return start
    rows = np.array(vectors, dtype=np.int64)  # one conversion of the list, for both sums
    exact = start + rows.sum(axis=0, dtype=np.int64)
    # A float sum cannot wrap; far below 2**63 it proves the int64 sum did not either (thousands of jobs a queue:
    # one more numpy reduction, not a Python loop).
    if float(rows.sum(axis=0, dtype=np.float64).max(initial=0.0)) + float(start.max(initial=0)) < 2.0**62:
        return np.minimum(exact, MAX_AMOUNT)
    return vector([int(x) for x in np.sum(np.asarray(vectors, dtype=object), axis=0) + start.astype(object)])
