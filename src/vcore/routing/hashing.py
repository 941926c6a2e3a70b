"""Prompt text to prefix-block hashes, and the token estimate the router uses without a tokenizer.

A prompt is cut into fixed-size byte blocks of its UTF-8 text and each block's hash chains the previous one
(native, ``hash_blocks``), so two prompts share hash i exactly when they share their first i + 1 blocks. The
router estimates tokens as bytes / 4 (the usual characters-per-token figure for English text and BPE
tokenizers, the same guess behind Kthena's 64-byte blocks for vLLM's 16-token KV blocks).
"""

from __future__ import annotations

import numpy as np

from vcore._native import _core

BYTES_PER_TOKEN = 4


def hash_prompt(text: str, block_bytes: int = 64, max_blocks: int = 0, salt: str = "") -> np.ndarray:
    """uint64 hashes of ``text``'s blocks of ``block_bytes`` bytes (at most ``max_blocks`` when > 0), chained
    from ``salt`` (use the model name, so that two models never share a block)."""
    if not isinstance(text, str):
        raise TypeError(f"prompt: expected str, got {type(text).__name__}")
    if isinstance(block_bytes, bool) or not isinstance(block_bytes, int) or block_bytes < 1:
        raise ValueError(f"block_bytes: expected an integer >= 1, got {block_bytes!r}")
    return _core.routing.hash_blocks(text, block_bytes, max_blocks, salt)


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` estimated from its UTF-8 size (at least 1 for a non-empty text)."""
    n = len(text.encode("utf-8"))
    return (n + BYTES_PER_TOKEN - 1) // BYTES_PER_TOKEN
