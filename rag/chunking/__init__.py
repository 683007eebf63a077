"""Split a file into chunks, choosing the chunker by the file's type."""

from __future__ import annotations

from dataclasses import replace

from .base import Chunk
from .text import chunk_text

__all__ = ["Chunk", "chunk_file", "chunk_text"]


def chunk_file(path: str, text: str) -> list[Chunk]:
    """Chunk one file's text by its type and number the chunks in file order."""
    chunks = chunk_text(path, text)
    return [replace(c, ordinal=i) for i, c in enumerate(chunks)]
