"""Type stub for the Cython module vcore._native._records (hand-written; keep in step with _records.pyx)."""

from typing import Any, TypeVar

__all__ = ["placements"]

T = TypeVar("T", bound=tuple[Any, ...])

def placements(cls: type[T], keys: list[str], slots: list[int], names: list[str], gpus: list[Any]) -> list[T]:
    """``cls(keys[i], names[slots[i]], {}, "", gpus[i], None, None)`` for every i; ``cls`` a 7-field named tuple
    type."""
