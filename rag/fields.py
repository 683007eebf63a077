"""What is indexed for a chunk: its terms and their frequencies, from its text and breadcrumb."""

from __future__ import annotations

from .chunking.base import Chunk
from .tokens import Tokenizer


def indexed_text(chunk: Chunk) -> str:
    """Return the text that is tokenized for a chunk: its breadcrumb, then its text."""
    return f"{chunk.context}\n{chunk.text}" if chunk.context else chunk.text


def chunk_counts(chunk: Chunk, tokenizer: Tokenizer) -> dict[str, int]:
    """Return term -> frequency for one chunk, as stored in the index."""
    return tokenizer.counts(indexed_text(chunk))
