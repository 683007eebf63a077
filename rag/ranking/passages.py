"""Passages shaped for answers: each result is a match, the chunk that scored (its own lines, symbol
and kind), and a context, the lines shown and sent to the model: the match grown over the neighbouring
windows of its file (a long definition's other windows, the code around a short one) up to
RankingWeights.grow_chars characters. An answer that spans two windows is then shown whole.

The matches of a list are distinct: a hit that overlaps a match already listed, or is another window of
the same definition, makes way for the next one, and a context grows over no other result's match nor
an earlier result's context, so that growth never merges two results into one and no line is sent
twice (docs/levers.md, "Passages grown to their neighbours")."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag.chunking.base import Chunk
from rag.ranking.hits import Hit
from rag.store.workspace import Reader, Workspace
from rag.weights import DEFAULTS

REACH = 6  # windows looked at on each side of a hit
# lines between two windows that neither holds (the blank lines between definitions) a passage may
# span, shown empty; a wider gap is code no chunk holds, which a passage must not hide
GAP_LINES = 3
_WORDS = re.compile(r"[^\W_]+(?:_[^\W_]+)*")  # a question's words, snake_case whole
# windows of one definition apart by more than this are taken for two definitions of one name
SAME_DEFINITION_REACH = 40


def distinct_passages(
    index: Reader,
    hits: list[Hit],
    k: int,
    grow_chars: int = DEFAULTS.grow_chars,
    clear: Sequence[Chunk] = (),
    before: Sequence[Hit] = (),
) -> list[Hit]:
    """Return the first k distinct matches of `hits` (best first), after the results `before`
    (already shaped), each with its context grown over its neighbours up to `grow_chars`
    (Hit.context); the results returned include `before`.

    A hit overlapping a match already chosen, or a chunk of `clear` (`rag related`'s source
    passage), is skipped, and so is another window of a definition already chosen. A hit whose
    match an earlier context already shows is listed after the hits that show new lines, with its
    own lines for context. A context grows over no chunk of `clear` and no earlier match. The first
    results are the same for every k."""
    out = list(before)
    chosen: list[Hit] = []
    if isinstance(index, Workspace):  # what growing them reads, for every hit at once
        index.prefetch_neighbourhoods((h.chunk for h in hits), REACH)
    for hit in hits:
        c = hit.chunk
        if any(_overlaps(o.chunk, c) for o in (*out, *chosen)) or any(_overlaps(x, c) for x in clear):
            continue
        if any(_same_definition(index, o.chunk, c) for o in (*out, *chosen)):
            continue
        chosen.append(hit)
    shown: list[Hit] = []
    for hit in chosen:
        if len(out) == k:
            break
        if any(_overlaps(o.passage, hit.chunk) for o in out):
            shown.append(hit)  # on show in an earlier context: after the hits that show new lines
            continue
        out.append(_with_context(index, hit, grow_chars, (*clear, *(o.chunk for o in out))))
    for hit in shown:  # its lines are on show already: its context is its own lines, not sent twice more
        if len(out) == k:
            break
        out.append(hit._replace(context=hit.chunk))
    return out


def _with_context(index: Reader, hit: Hit, grow_chars: int, bounds: Sequence[Chunk]) -> Hit:
    return hit._replace(context=grown(index, hit.chunk, grow_chars, bounds))


def mark(index: Reader, hits: list[Hit], texts: Sequence[str]) -> list[Hit]:
    """Note on each hit the words of `texts` (the question, and a model's searches) whose terms it
    matched (Hit.words, as written, lowercased) and the lines of its passage that hold one of those
    terms (Hit.marks): what a reader's eye goes to. Needs the hits' term contributions."""
    tokenizer = index.tokenizer
    words: dict[str, str] = {}  # term -> the first word written that yields it
    for text in texts:
        for word in _WORDS.findall(text):
            for term in tokenizer.tokenize(word):
                words.setdefault(term, word.lower())
    out = []
    for hit in hits:
        terms = {c.term for c in hit.contributions if not c.term.startswith('"')}  # not a quoted span
        passage = hit.passage
        marks = tuple(
            n
            for n, line in enumerate(passage.text.split("\n"), passage.start_line)
            if line.strip() and terms.intersection(tokenizer.tokenize(line))
        )
        said = tuple(dict.fromkeys(words[t] for t in (c.term for c in hit.contributions) if t in words))
        out.append(hit._replace(words=said, marks=marks))
    return out


def _same_definition(index: Reader, a: Chunk, b: Chunk) -> bool:
    """Whether two chunks of a file are windows of one definition: the same symbol, on every chunk
    between them (a long definition is cut into windows that each carry its name)."""
    if a.path != b.path or a.symbol is None or a.symbol != b.symbol or a.kind in ("section", "text"):
        return False
    lo, hi = sorted((a.ordinal, b.ordinal))
    if hi - lo > SAME_DEFINITION_REACH:
        return False
    if hi - lo <= 1:
        return True
    between = index.chunks(index.file_chunk_ids(a.path)[lo + 1 : hi])
    return len(between) == hi - lo - 1 and all(c.symbol == a.symbol for c in between.values())


def grown(
    index: Reader, chunk: Chunk, grow_chars: int = DEFAULTS.grow_chars, clear: Sequence[Chunk] = ()
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
