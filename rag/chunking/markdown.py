"""The Markdown and reStructuredText chunker: one chunk per section, named by its heading path."""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag.chunking.base import MAX_CHARS, Chunk, Piece, assemble, merge_tiny, span_text, trim_blank
from rag.chunking.text import chunk_text

# a fence may open a list item (`- ```js`); a backtick fence's info string has no backtick, so
# ```` ```pip install x``` ```` is inline code, not a fence that never closes
_FENCE = re.compile(r"^ {0,3}(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?(`{3,}|~{3,})")
_COMMENT_OPEN = re.compile(r"^ {0,3}<!--")  # an HTML comment block: no heading inside it
# the title's closing `#`s are stripped in Python (_atx_title): in the pattern, a lazy title
# before optional closing hashes backtracks quadratically on a long run of blanks
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
_YAML_KEY = re.compile(r"[A-Za-z_][\w.-]*[ \t]*:(?:[ \t]|$)")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_NOT_SETEXT_TEXT = re.compile(r"^(?: {4}|\t| {0,3}(?:[-*+>|]|\d+[.)])(?:\s|$))")
_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1+[ \t]*$")  # one punctuation character, repeated
_EXPLICIT_MARKUP = re.compile(r"^\.\. \S")  # `.. _target:`, `.. setting:: NAME`, `.. index::`
_DIRECTIVE = re.compile(r"^([ \t]*)\.\. ([\w:-]+)::[ \t]*(\S.*)?$")
# reST directives that describe one API entry or setting: a long section splits at them
_ENTRY_DIRECTIVES = frozenset(
    [
        "attribute",
        "class",
        "data",
        "decorator",
        "exception",
        "function",
        "method",
        "module-attribute",
        "setting",
        "option",
        "envvar",
        "describe",
        "object",
        "confval",
        "templatetag",
        "templatefilter",
        "django-admin",
        "django-admin-option",
        "fieldlookup",
    ]
)
_NOT_ENTRIES = frozenset(["py:module", "py:currentmodule", "js:module"])
# The most sections a file is cut into: each costs a few objects and passes, so a file of 500,000
# `#` lines took 12 s. Past this, the deepest levels stop being sections (their text stays in the
# section above); a big real document (Django's largest, 1 MB of release notes) has under 2,000.
MAX_HEADINGS = 5000
# ... and the scan for headings stops after this many: the rest of the file is the last section's
# text, windowed as any long section is (no levels to choose from would be worth 500,000 titles)
_SCAN_HEADINGS = 4 * MAX_HEADINGS
# the first character (after up to 3 spaces) of any line that can open a fence, an HTML comment, an
# ATX heading or underline a Setext one: other lines are text, and skip the patterns
_BLOCK_STARTS = frozenset("#`~<=-*+0123456789")


@dataclass(frozen=True, slots=True)
class Heading:
    """A section title: the section starts at `line` (over-line or target lines included)."""

    line: int
    level: int
    title: str


def _atx_title(rest: str) -> str:
    """An ATX heading's title: what follows the opening `#`s, less a closing run of `#`s that
    stands alone (`## Title ##`; `C#` keeps its hash), its blanks collapsed."""
    title = rest.strip(" \t")
    bare = title.rstrip("#")
    if bare != title and (not bare or bare[-1] in " \t"):
        title = bare
    return " ".join(title.split())


def chunk_markdown(path: str, text: str) -> list[Chunk]:
    """Split Markdown into sections named by their heading path (`Install > Linux`)."""
    lines = text.split("\n")
    first = _front_matter_end(lines) + 1
    headings, in_fence = _markdown_headings(lines, first)
    headings = _capped(headings)
    pieces = [Piece(1, first - 1, "section", None, glue=True)] if first > 1 else []
    pieces += _section_pieces(lines, headings, first, in_fence, rst=False)
    return assemble(path, text, lines, pieces)


def chunk_rst(path: str, text: str) -> list[Chunk]:
    """Split reStructuredText into sections; a text without titles is chunked as paragraphs."""
    lines = text.split("\n")
    headings = _capped(_rst_headings(lines))
    if not headings:
        return chunk_text(path, text)
    pieces = _section_pieces(lines, headings, 1, [False] * (len(lines) + 1), rst=True)
    return assemble(path, text, lines, pieces)


def _front_matter_end(lines: list[str]) -> int:
    """Return the last line of YAML front matter (`---` ... `---`), or 0 if there is none.

    A leading `---` is also a thematic break: the block counts as front matter only when its
    first line follows at once and some line is a YAML `key: value`."""
    if len(lines) < 2 or lines[0].rstrip() != "---" or not lines[1].strip():
        return 0
    for number in range(2, len(lines) + 1):
        if lines[number - 1].rstrip() in ("---", "..."):
            return number if any(map(_YAML_KEY.match, lines[1 : number - 1])) else 0
    return 0


def _capped(headings: list[Heading], cap: int = MAX_HEADINGS) -> list[Heading]:
    """Keep at most `cap` headings: the levels from the top down while they fit, else the first `cap`."""
    if len(headings) <= cap:
        return headings
    per_level: dict[int, int] = {}
    for heading in headings:
        per_level[heading.level] = per_level.get(heading.level, 0) + 1
    kept, deepest = 0, 0
    for level in sorted(per_level):
        if kept + per_level[level] > cap:
            break
        kept, deepest = kept + per_level[level], level
    if not deepest:
        return headings[:cap]
    return [h for h in headings if h.level <= deepest]


def _markdown_headings(lines: list[str], first: int) -> tuple[list[Heading], list[bool]]:
    """Find ATX and Setext headings outside fenced code; also return which lines are fenced."""
    headings: list[Heading] = []
    in_fence = [False] * (len(lines) + 1)  # by 1-based line number
    fence = ""
    comment = False
    for number in range(first, len(lines) + 1):
        if len(headings) >= _SCAN_HEADINGS:
            break
        line = lines[number - 1]
        if fence:
            in_fence[number] = True
            stripped = line.strip()
            if stripped.startswith(fence) and stripped.strip(fence[0]) == "":
                fence = ""
            continue
        if not comment and line[:4].lstrip(" ")[:1] not in _BLOCK_STARTS:
            continue  # text: no fence, comment or heading starts here, and no underline
        if comment or _COMMENT_OPEN.match(line):
            in_fence[number] = True
            comment = "-->" not in (line if comment else line.split("<!--", 1)[1])
            continue
        m = _FENCE.match(line)
        if m is not None and not (m.group(1)[0] == "`" and "`" in line[m.end() :]):
            fence, in_fence[number] = m.group(1), True
            continue
        m = _ATX.match(line)
        if m is not None:
            headings.append(Heading(number, len(m.group(1)), _atx_title(m.group(2) or "")))
            continue
        m = _SETEXT.match(line)
        if m is not None and number > first:
            above = lines[number - 2]
            if (
                above.strip()
                and not in_fence[number - 1]
                and not _NOT_SETEXT_TEXT.match(above)
                and not (headings and headings[-1].line == number - 1)
                and not _SETEXT.match(above)
            ):
                headings.append(
                    Heading(number - 1, 1 if m.group(1)[0] == "=" else 2, " ".join(above.split()))
                )
    return headings, in_fence


def _rst_headings(lines: list[str]) -> list[Heading]:
    """Find reST section titles; levels follow the order in which adornment styles appear."""
    styles: dict[tuple[str, bool], int] = {}
    headings: list[Heading] = []
    n = len(lines)
    number = 1
    while number < n:
        line = lines[number - 1]
        below = lines[number]
        start, title, style = 0, "", ("", False)
        over = _ADORNMENT.match(line)
        if over and number + 1 < n and (number == 1 or not lines[number - 2].strip()):
            text = lines[number]
            under = lines[number + 1]
            if (
                text.strip()
                and not _ADORNMENT.match(text)
                and under.rstrip() == line.rstrip()
                and len(line.rstrip()) >= len(text.strip())
            ):
                start, title, style = number, text.strip(), (line[0], True)
        if not start and line[:1].strip() and not over:
            m = _ADORNMENT.match(below)
            if (
                m
                # docutils takes a shorter underline too (with a warning) once it is 4 long
                and len(below.rstrip()) >= min(len(line.rstrip()), 4)
                and (number == 1 or not lines[number - 2].strip() or _ADORNMENT.match(lines[number - 2]))
                and not line.startswith(".. ")
            ):
                start, title, style = number, line.strip(), (below[0], False)
        if not start:
            number += 1
            continue
        level = styles.setdefault(style, len(styles) + 1)
        floor = headings[-1].line + 2 if headings else 1
        headings.append(Heading(_targets_above(lines, start, floor), level, title))
        number = start + (3 if style[1] else 2)
    return headings


def _targets_above(lines: list[str], start: int, floor: int) -> int:
    """Move a title's first line up over the `.. _target:` / `.. setting::` lines above it."""
    top, number = start, start - 1
    while number >= floor:
        line = lines[number - 1]
        if not line.strip():
            number -= 1
            continue
        if not _EXPLICIT_MARKUP.match(line):
            break
        top = number
        number -= 1
    return top


def _section_pieces(
    lines: list[str], headings: list[Heading], first: int, in_fence: list[bool], rst: bool
) -> list[Piece]:
    """Return one piece per section, splitting long ones at entries or paragraphs."""
    pieces: list[Piece] = []
    if not headings or headings[0].line > first:
        end = headings[0].line - 1 if headings else len(lines)
        pieces += _sized(lines, first, end, None, in_fence, rst)
    path: list[tuple[int, str]] = []  # (level, title) of the open headings
    for i, heading in enumerate(headings):
        while path and path[-1][0] >= heading.level:
            path.pop()
        path.append((heading.level, heading.title))
        end = headings[i + 1].line - 1 if i + 1 < len(headings) else len(lines)
        pieces += _sized(lines, heading.line, end, " > ".join(t for _, t in path), in_fence, rst)
    return pieces


def _sized(
    lines: list[str], start: int, end: int, symbol: str | None, in_fence: list[bool], rst: bool
) -> list[Piece]:
    """Return a section as one piece, or as several if it is over MAX_CHARS."""
    context = symbol or ""
    if len(span_text(lines, start, end)) <= MAX_CHARS:
        return [Piece(start, end, "section", symbol, context, glue=True)]
    units: list[Piece] = []
    cuts = _entry_lines(lines, start, end) if rst else []
    bounds = [start] + cuts + [end + 1]
    for i in range(len(bounds) - 1):
        a, b = bounds[i], bounds[i + 1] - 1
        unit_symbol = symbol
        if i > 0:
            m = _DIRECTIVE.match(lines[a - 1])
            name = re.split(r"[\s(]", (m.group(3) or "").strip(), maxsplit=1)[0] if m else ""
            unit_symbol = f"{symbol} > {name}" if symbol and name else symbol or name or None
        if len(span_text(lines, a, b)) <= MAX_CHARS:
            units.append(Piece(a, b, "section", unit_symbol, context, glue=True))
        else:
            for s, e in _paragraph_groups(lines, a, b, in_fence):
                units.append(Piece(s, e, "section", unit_symbol, context, glue=True))
    # tiny units merge within the section; the results must not merge across sections
    merged = merge_tiny(_trimmed(units, lines), lines)
    return [Piece(p.start_line, p.end_line, p.kind, p.symbol, p.context) for p in merged]


def _trimmed(pieces: list[Piece], lines: list[str]) -> list[Piece]:
    """Drop blank edges (and all-blank pieces) so that tiny pieces are measured fairly."""
    out: list[Piece] = []
    for p in pieces:
        s, e = trim_blank(lines, p.start_line, p.end_line)
        if s <= e:
            out.append(Piece(s, e, p.kind, p.symbol, p.context, p.glue))
    return out


def _entry_lines(lines: list[str], start: int, end: int) -> list[int]:
    """Return the lines in start..end where a reST API entry (`.. setting:: X`) begins."""
    cuts: list[int] = []
    previous = 0  # the last non-blank line seen
    for number in range(start + 1, end + 1):
        line = lines[number - 1]
        if not line.strip():
            continue
        m = _DIRECTIVE.match(line)
        # consecutive signatures (`.. method:: get()` then `.. method:: aget()`) stay together
        grouped = previous == number - 1 and _DIRECTIVE.match(lines[number - 2]) is not None
        if m is not None and m.group(3) and _is_entry(m.group(2)) and not grouped:
            cuts.append(_targets_above(lines, number, cuts[-1] + 1 if cuts else start + 1))
        previous = number
    return cuts


def _is_entry(name: str) -> bool:
    """Tell whether a directive describes one API entry (`py:data`, `attribute`, `setting`)."""
    if name in _NOT_ENTRIES:
        return False
    return name in _ENTRY_DIRECTIVES or ":" in name


def _paragraph_groups(lines: list[str], start: int, end: int, in_fence: list[bool]) -> list[tuple[int, int]]:
    """Pack the paragraphs of start..end into runs of up to MAX_CHARS (fences stay whole)."""
    # paragraph starts: a non-blank line after a blank one, outside fenced code
    starts = [start] + [
        n
        for n in range(start + 1, end + 1)
        if lines[n - 1].strip() and not lines[n - 2].strip() and not (in_fence[n] and in_fence[n - 1])
    ]
    groups: list[tuple[int, int]] = []
    group_start, size = start, 0
    for i, para_start in enumerate(starts):
        para_end = starts[i + 1] - 1 if i + 1 < len(starts) else end
        para_size = len(span_text(lines, para_start, para_end)) + 1
        if size and size + para_size > MAX_CHARS:
            groups.append((group_start, para_start - 1))
            group_start, size = para_start, 0
        size += para_size
    groups.append((group_start, end))
    return groups
