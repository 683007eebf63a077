"""Passages shaped for answers: each hit of the final list grows over the neighbouring windows of its
file (a long definition's other windows, the code around a short one) up to RankingWeights.grow_chars
characters, and a later hit that an earlier passage already covers makes way for the next one. An
answer that spans two windows is then shown whole, and the top k holds k different places rather
than two overlapping windows of one (docs/levers.md, "Passages grown to their neighbours")."""

from __future__ import annotations

from collections.abc import Sequence

from rag.chunking.base import Chunk
from rag.retrieval.results import Hit
from rag.store.reader import Index
from rag.weights import DEFAULTS

REACH = 6  # windows looked at on each side of a hit
# lines between two windows that neither holds (the blank lines between definitions) a passage may
# span, shown empty; a wider gap is code no chunk holds, which a passage must not hide
GAP_LINES = 3


def shape(
    index: Index,
    hits: list[Hit],
    k: int,
    grow_chars: int = DEFAULTS.grow_chars,
    clear: Sequence[Chunk] = (),
) -> list[Hit]:
    """Return the first k of `hits` (best first) grown over their neighbours up to `grow_chars`,
    skipping a hit whose span an earlier passage of its file already overlaps; no passage grows
    over a chunk of `clear` (`rag related`'s source passage), nor holds one."""
    out: list[Hit] = []
    for hit in hits:
        if len(out) == k:
            break
        if any(_overlaps(o.chunk, hit.chunk) for o in out) or any(_overlaps(c, hit.chunk) for c in clear):
            continue
        out.append(hit._replace(chunk=grown(index, hit.chunk, grow_chars, clear)))
    return out


def grown(
    index: Index, chunk: Chunk, grow_chars: int = DEFAULTS.grow_chars, clear: Sequence[Chunk] = ()
) -> Chunk:
    """Return `chunk` merged with the adjacent windows of its file, alternately the one before and
    the one after, while the merged text stays within `grow_chars` and overlaps no chunk of `clear`;
    the chunk itself when none fits."""
    ids = index.file_chunk_ids(chunk.path)
    if not 0 <= chunk.ordinal < len(ids) or len(ids) == 1:
        return chunk
    near = ids[max(0, chunk.ordinal - REACH) : chunk.ordinal + REACH + 1]
    by_ordinal = {c.ordinal: c for c in index.chunks(near).values()}
    if by_ordinal.get(chunk.ordinal, chunk)[:3] != chunk[:3]:  # not the window the hit holds
        return chunk
    lines = _lines(chunk)
    first = last = chunk.ordinal
    before = True  # the side tried first, turn about: the window before (a definition's head), then after
    for _ in range(2 * REACH):
        for ordinal in (first - 1, last + 1) if before else (last + 1, first - 1):
            other = by_ordinal.get(ordinal)
            if other is None or not _touches(lines, other) or any(_overlaps(c, other) for c in clear):
                continue
            merged = {**_lines(other), **lines}
            if _size(merged) <= grow_chars:
                lines = merged
                first, last = min(first, ordinal), max(last, ordinal)
                before = ordinal > chunk.ordinal
                break
        else:
            break
    if first == last:
        return chunk
    start, end = min(lines), max(lines)
    text = "\n".join(lines.get(n, "") for n in range(start, end + 1))
    return chunk._replace(start_line=start, end_line=end, text=text)


def _lines(chunk: Chunk) -> dict[int, str]:
    return dict(enumerate(chunk.text.split("\n"), chunk.start_line))


def _size(lines: dict[int, str]) -> int:
    return sum(len(t) + 1 for t in lines.values()) - 1


def _touches(lines: dict[int, str], other: Chunk) -> bool:
    """Whether `other` overlaps the lines held so far or lies within GAP_LINES of them."""
    return other.start_line <= max(lines) + 1 + GAP_LINES and min(lines) <= other.end_line + 1 + GAP_LINES


def _overlaps(a: Chunk, b: Chunk) -> bool:
    return a.path == b.path and a.start_line <= b.end_line and b.start_line <= a.end_line
