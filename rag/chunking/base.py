"""The chunk type every chunker returns, and the size policy they share."""

from __future__ import annotations

import re
from typing import NamedTuple

# Size policy, one for all chunkers (see README "How it works").
MERGE_WORDS = 25  # a piece under this many words merges forward into the next one
WINDOW_WORDS = 120  # prose longer than this is windowed ...
OVERLAP_WORDS = 30  # ... with this much overlap
MAX_CHARS = 2400  # a code definition or section longer than this is windowed by lines
WINDOW_LINES = 50  # lines per window of an over-long definition or section
OVERLAP_LINES = 10
# The tree-sitter languages' definitions are windowed smaller: on the 43-repository code-search set
# this lifts 11 of their 16 languages (bash, ruby, zig most) and the set 0.759 -> 0.768, while the
# Python and JS/TS chunkers keep the policy above, which the dev and docstring sets prefer
# (docs/levers.md: smaller chunks everywhere cost dev 4 questions)
DEFINITION_MAX_CHARS = 1200
DEFINITION_WINDOW_LINES = 25
DEFINITION_OVERLAP_LINES = 5

KINDS = ("function", "method", "class", "module", "section", "text")

_WORD = re.compile(r"\S+")


class Chunk(NamedTuple):
    """One passage of a file: what is indexed, retrieved, shown and cited. (A NamedTuple rather
    than a dataclass: defining one costs a query's startup far less.)"""

    path: str  # relative to the repo root, '/'-separated
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    kind: str  # one of KINDS
    symbol: str | None  # qualified name (Flask.make_response) or heading path (Install > Linux)
    text: str  # the source text of the span
    context: str = ""  # breadcrumb indexed and shown with the text, e.g. "class Flask(App):"
    ordinal: int = 0  # position of the chunk within its file


def word_count(text: str) -> int:
    """Count whitespace-separated words."""
    return len(_WORD.findall(text))


def line_of_offset(line_starts: list[int], offset: int) -> int:
    """Return the 1-based line number holding character `offset`."""
    import bisect

    return bisect.bisect_right(line_starts, offset)


_last_starts: tuple[str, list[int]] = ("", [0])


def _line_starts_cached(text: str) -> list[int]:
    """line_starts_of, kept for the last text: a file's long chunks are windowed one by one,
    and recomputing the line starts of a 5 MB file for each made that quadratic."""
    global _last_starts
    if _last_starts[0] is not text:
        _last_starts = (text, line_starts_of(text))
    return _last_starts[1]


def line_starts_of(text: str) -> list[int]:
    """Return the character offset at which each line of `text` starts."""
    starts = [0]
    find = text.find
    pos = find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = find("\n", pos + 1)
    return starts


def window_lines(
    chunk: Chunk,
    lines: list[str],
    max_chars: int | None = None,
    window: int | None = None,
    overlap: int | None = None,
) -> list[Chunk]:
    """Split an over-long chunk into overlapping line windows that keep its breadcrumb.

    `lines` are the file's lines (without newlines); the chunk's span indexes into them.
    A chunk within `max_chars` (MAX_CHARS), or of a single line, is returned unchanged; windows
    are `window` lines (WINDOW_LINES) overlapping by `overlap` (OVERLAP_LINES).
    """
    max_chars = MAX_CHARS if max_chars is None else max_chars
    window = WINDOW_LINES if window is None else window
    overlap = OVERLAP_LINES if overlap is None else overlap
    if len(chunk.text) <= max_chars or chunk.start_line == chunk.end_line:
        return [chunk]
    out: list[Chunk] = []
    start = chunk.start_line
    step = window - overlap
    while True:
        end = min(start + window - 1, chunk.end_line)
        # a short tail joins the last window rather than standing alone
        if chunk.end_line - end < overlap:
            end = chunk.end_line
        text = "\n".join(lines[start - 1 : end])
        out.append(chunk._replace(start_line=start, end_line=end, text=text))
        if end >= chunk.end_line:
            return out
        start += step


# --- Shared by the structure-aware chunkers -------------------------------------------

HARD_MAX_CHARS = 4 * MAX_CHARS  # a chunk still longer than this (very long lines) is cut by characters
OVERLAP_CHARS = MAX_CHARS // 8


class Piece(NamedTuple):
    """A span a chunker found, before the size policy turns it into chunks."""

    start_line: int
    end_line: int
    kind: str
    symbol: str | None
    context: str = ""
    glue: bool = False  # module/class glue or a section: merges into a neighbour when tiny
    window_context: str = ""  # breadcrumb for the windows of an over-long piece (e.g. its signature)


_new = tuple.__new__


def span_size(lines: list[str]) -> int:
    """The characters of these lines, with their newlines: what MAX_CHARS is compared with."""
    return sum(map(len, lines)) + len(lines)


def span_text(lines: list[str], start: int, end: int) -> str:
    """Return lines start..end (1-based, inclusive) joined with newlines."""
    return "\n".join(lines[start - 1 : end])


def trim_blank(lines: list[str], start: int, end: int) -> tuple[int, int]:
    """Shrink a span so that it starts and ends on non-blank lines (start > end if all blank)."""
    while start <= end and not lines[start - 1].strip():
        start += 1
    while end >= start and not lines[end - 1].strip():
        end -= 1
    return start, end


def merge_tiny(pieces: list[Piece], lines: list[str]) -> list[Piece]:
    """Merge glue pieces under MERGE_WORDS words forward into the next piece.

    A tiny trailing piece joins the previous one; a file that is nothing but a tiny
    piece keeps it. Pieces must be in file order and not overlap.
    """
    out: list[Piece] = []
    pending: Piece | None = None  # tiny glue waiting for the next piece
    for piece in pieces:
        start = piece.start_line if pending is None else pending.start_line
        # (start, *rest) rather than _replace, as in assemble
        if piece.glue and word_count(span_text(lines, start, piece.end_line)) < MERGE_WORDS:
            pending = _new(Piece, (start, *piece[1:]))
            continue
        out.append(piece if start == piece.start_line else _new(Piece, (start, *piece[1:])))
        pending = None
    if pending is not None:
        if out:
            out[-1] = out[-1]._replace(end_line=pending.end_line)
        else:
            out.append(pending)
    return out


def close_scope(pieces: list[Piece], lines: list[str]) -> list[Piece]:
    """Join a tiny glue piece that ends a class body to the member before it.

    Without this it would merge forward into whatever follows the class.
    """
    if len(pieces) > 1 and pieces[-1].glue and not pieces[-2].glue:
        last = pieces[-1]
        if word_count(span_text(lines, last.start_line, last.end_line)) < MERGE_WORDS:
            return pieces[:-2] + [pieces[-2]._replace(end_line=last.end_line)]
    return pieces


def assemble(
    path: str,
    text: str,
    lines: list[str],
    pieces: list[Piece],
    group_same_symbol: bool = False,
    max_chars: int | None = None,
    window: int | None = None,
    overlap: int | None = None,
) -> list[Chunk]:
    """Apply the size policy to a chunker's pieces and return the chunks.

    Blank edges are trimmed, empty pieces dropped, consecutive definitions with the same
    symbol (overloads, property setters) optionally grouped, tiny glue merged, and
    over-long pieces windowed by lines (then by characters if lines are very long). The
    window sizes are window_lines' (None: the shared policy).
    """
    limit = MAX_CHARS if max_chars is None else max_chars
    trimmed: list[Piece] = []
    for piece in pieces:
        start, end = trim_blank(lines, piece.start_line, min(piece.end_line, len(lines)))
        if start > end:
            continue
        prev = trimmed[-1] if trimmed else None
        if (
            group_same_symbol
            and prev is not None
            and not piece.glue
            and not prev.glue
            and piece.symbol is not None
            and (prev.symbol, prev.kind) == (piece.symbol, piece.kind)
        ):
            trimmed[-1] = prev._replace(end_line=end)
            continue
        # a NamedTuple's _replace runs Python code per field: for the pieces of every file, 5% of
        # chunking (bench/ingest_profile.py); tuple.__new__ copies them at C speed
        trimmed.append(_new(Piece, (start, end, *piece[2:])))
    chunks: list[Chunk] = []
    for piece in merge_tiny(trimmed, lines):
        body = span_text(lines, piece.start_line, piece.end_line)
        chunk = Chunk(path, piece.start_line, piece.end_line, piece.kind, piece.symbol, body, piece.context)
        if len(body) > limit and piece.window_context:
            chunk = chunk._replace(context=piece.window_context)
        for part in window_lines(chunk, lines, limit, window, overlap):
            chunks.extend(window_chars(part, text, size=limit))
    return chunks


def window_chars(
    chunk: Chunk, text: str, limit: int = HARD_MAX_CHARS, size: int | None = None
) -> list[Chunk]:
    """Cut a chunk longer than `limit` characters into exact slices of about `size` (MAX_CHARS).

    For very long lines (minified code, data); cuts fall on whitespace where one is near.
    """
    if len(chunk.text) <= limit:
        return [chunk]
    starts = _line_starts_cached(text)
    base = text.find(chunk.text, starts[chunk.start_line - 1])
    if base == -1:
        return [chunk]
    out: list[Chunk] = []
    size = MAX_CHARS if size is None else size
    begin, stop = base, base + len(chunk.text)
    while begin < stop:
        end = min(begin + size, stop)
        if end < stop:
            half = begin + size // 2
            space = max(text.rfind(" ", half, end), text.rfind("\n", half, end))
            if space != -1:
                end = space
        s, e = begin, end
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s < e:
            out.append(
                chunk._replace(
                    start_line=line_of_offset(starts, s),
                    end_line=line_of_offset(starts, e - 1),
                    text=text[s:e],
                )
            )
        if end >= stop:
            break
        begin = max(end - OVERLAP_CHARS, begin + 1)
    return out
