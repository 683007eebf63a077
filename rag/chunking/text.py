"""The paragraph chunker: any text file that no structure-aware chunker claims."""

from __future__ import annotations

import re

from rag.chunking.base import (
    HARD_MAX_CHARS,
    MERGE_WORDS,
    OVERLAP_WORDS,
    WINDOW_WORDS,
    Chunk,
    line_of_offset,
    line_starts_of,
    window_chars,
)

_PARAGRAPH = re.compile(r"\S(?:.*\S)?(?:\n[ \t\r\f\v]*\S.*)*")  # runs of non-blank lines
_WORD = re.compile(r"\S+")


def chunk_text(path: str, text: str, max_chars: int = HARD_MAX_CHARS) -> list[Chunk]:
    """Split prose into paragraph chunks with exact line spans.

    Paragraphs under MERGE_WORDS words merge forward into the next one (a short tail
    joins the previous passage); paragraphs over WINDOW_WORDS words are windowed with
    OVERLAP_WORDS words of overlap. A chunk still over `max_chars` (very long lines: data,
    source maps, minified code) is cut by characters. Each chunk's text is the exact
    source slice.
    """
    spans = _merged_spans(text)
    starts = line_starts_of(text)
    chunks: list[Chunk] = []
    for begin, end in spans:
        for s, e in _windows(text, begin, end):
            chunk = Chunk(
                path, line_of_offset(starts, s), line_of_offset(starts, e - 1), "text", None, text[s:e]
            )
            chunks.extend(window_chars(chunk, text, max_chars))
    return chunks


def _merged_spans(text: str) -> list[tuple[int, int]]:
    """Return (start, end) offsets of paragraphs after merging short ones forward."""
    spans: list[tuple[int, int]] = []
    pending_start: int | None = None
    pending_words = 0
    for m in _PARAGRAPH.finditer(text):
        start = m.start() if pending_start is None else pending_start
        pending_words += len(_WORD.findall(m.group()))
        if pending_words < MERGE_WORDS:
            pending_start = start
            continue
        spans.append((start, m.end()))
        pending_start, pending_words = None, 0
    if pending_start is not None:  # a short tail joins the last passage
        if spans:
            spans[-1] = (spans[-1][0], len(text.rstrip()))
        else:
            spans.append((pending_start, len(text.rstrip())))
    return spans


def _windows(text: str, begin: int, end: int) -> list[tuple[int, int]]:
    """Cut text[begin:end] into windows of WINDOW_WORDS words overlapping by OVERLAP_WORDS."""
    words = [(m.start(), m.end()) for m in _WORD.finditer(text, begin, end)]
    if len(words) <= WINDOW_WORDS:
        return [(begin, end)]
    out: list[tuple[int, int]] = []
    i, n = 0, len(words)
    while True:
        j = min(i + WINDOW_WORDS, n)
        if n - j < MERGE_WORDS:  # a short tail joins this window
            j = n
        out.append((words[i][0], words[j - 1][1]))
        if j == n:
            return out
        i += WINDOW_WORDS - OVERLAP_WORDS
