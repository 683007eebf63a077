"""The common English words rag ships (rag/data/english-words.txt.gz: SCOWL's American list, made by
bench/english_words.py): a misspelt query word is never corrected into one of them's place when it
is one (rag.retrieval.spelling), and a name made of them is no secret (rag.secrets.anywhere)."""

from __future__ import annotations

import os
import zlib
from functools import cache

# one lowercase word a line after '#' lines (the source's notice), gzipped
ENGLISH_WORDS = os.path.join(os.path.dirname(__file__), "data", "english-words.txt.gz")


def is_english_word(word: str) -> bool:
    """Tell whether `word` (lowercase) is one of the common English words: a search of the list's
    text, for a process that asks a few times (a query)."""
    return word.isascii() and word.isalpha() and f"\n{word}\n".encode() in _english_words()


@cache
def english_words() -> frozenset[str]:
    """The common English words as a set, for a process that asks many times (an ingest's redaction)."""
    return frozenset(_english_words().decode().split())


@cache
def _english_words() -> bytes:
    """The word list's text, each word between newlines (read once per process)."""
    with open(ENGLISH_WORDS, "rb") as f:
        return b"\n" + zlib.decompress(f.read(), 16 + zlib.MAX_WBITS)
