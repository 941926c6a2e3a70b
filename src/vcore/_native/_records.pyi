"""Type stub for the Cython module vcore._native._records (hand-written; keep in step with _records.pyx)."""

from typing import Any, TypeVar

__all__ = ["placements"]

T = TypeVar("T", bound=tuple[Any, ...])

def placements(cls: type[T], pods: list[Any], slots: list[int], names: list[str], gpus: list[Any]) -> list[T]:
    """``cls(pods[i].key, names[slots[i]], {}, "", gpus[i], None, None)`` for every i; ``cls`` a 7-field named
    tuple type; each pod an object with a str ``key``."""
