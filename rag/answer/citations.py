"""What a model answered, and the check of every citation it makes against the passages that were
sent. Loaded with a model's answer only: a query for passages never pays for it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from rag.ranking.hits import Hit

if TYPE_CHECKING:
    from rag.answer.followups import Round
    from rag.answer.generation import ApiCitation

NO_CONTEXT = "no_context"  # Answer.stop_reason when retrieval found nothing and no model was called
# stop reasons whose text must not be passed off as an answer -> what to tell the user
INCOMPLETE = {
    "refusal": "The model declined to answer (stop_reason: refusal)",
    "max_tokens": "The answer was cut off at the token limit and is incomplete (stop_reason: max_tokens)",
}

_BRACKET = re.compile(r"\[([^\[\]\n]+)\]")
# one reference inside brackets: path:12 or path:12-20 (en dash too)
_REFERENCE = re.compile(r"^\s*`?(?P<path>[^\s`:][^:`]*?)`?:(?P<start>\d+)(?:\s*[-–]\s*(?P<end>\d+))?\s*$")


class Citation(NamedTuple):
    """A span the answer cites, and whether it lies within a passage that was actually sent."""

    path: str
    start_line: int
    end_line: int
    cited_text: str
    valid: bool


class Answer(NamedTuple):
    """A generated answer with the passages it was given and its checked citations."""

    question: str
    text: str
    hits: tuple[Hit, ...]
    citations: tuple[Citation, ...]
    backend: str
    model: str | None
    usage: dict[str, int]
    stop_reason: str | None = None
    rounds: tuple[Round, ...] = ()  # the searches the model made before answering, and their passages
    calls: int = 1  # model calls the answer took (the search plan's included)

    @property
    def sent(self) -> tuple[Hit, ...]:
        """Every passage the model was sent: the first ones, then each search's."""
        return (*self.hits, *(h for r in self.rounds for h in r.hits))


def check_citations(text: str, api_citations: Sequence[ApiCitation], hits: Sequence[Hit]) -> list[Citation]:
    """Check API citations, then each distinct [path:start-end] in `text`, against the hits sent.

    An API citation is valid when it names a document that was sent and quotes its text; it carries
    that document's span. A bracket
    citation is valid when its path is that of a sent passage and its whole span lies inside that
    passage's span: a span that only overlaps reaches lines the model never saw.
    """
    out: list[Citation] = [_check_api(c, hits) for c in api_citations]
    seen: set[tuple[str, int, int]] = set()
    for path, start, end in bracket_citations(text):
        if (path, start, end) in seen:
            continue
        seen.add((path, start, end))
        out.append(_check_span(path, start, end, hits))
    return out


def bracket_citations(text: str) -> list[tuple[str, int, int]]:
    """Return every (path, start, end) cited as [path:start-end] or [path:line], in order.

    One bracket may hold several references separated by commas or semicolons.
    """
    found = []
    for group in _BRACKET.findall(text):
        for part in re.split(r"[;,]", group):
            m = _REFERENCE.match(part)
            if m:
                start = int(m["start"])
                end = int(m["end"]) if m["end"] else start
                found.append((_normal_path(m["path"]), start, end))
    return found


def _normal_path(path: str) -> str:
    path = path.strip().replace("\\", "/")
    return path.removeprefix("./")


def _check_span(path: str, start: int, end: int, hits: Sequence[Hit]) -> Citation:
    for hit in hits:
        c = hit.passage  # any line sent may be cited
        if c.path == path and c.start_line <= start <= end <= c.end_line:
            lines = c.text.splitlines()[start - c.start_line : end - c.start_line + 1]
            return Citation(path, start, end, "\n".join(lines), True)
    return Citation(path, start, end, "", False)


def _check_api(cite: ApiCitation, hits: Sequence[Hit]) -> Citation:
    """The document an API citation names: by the title it was sent with (unique: passages sent
    never overlap), else by its place among all the documents sent, tool results' included."""
    from rag.answer.prompts import document_title

    titled = [h for h in hits if cite.document_title and document_title(h) == cite.document_title]
    if titled:
        c = titled[0].passage
    elif 0 <= cite.document_index < len(hits):  # valid only if the document holds the cited text
        c = hits[cite.document_index].passage
    else:
        return Citation("", 0, 0, cite.cited_text, False)
    # the span is the whole passage's, so that every citation of one document has one reference number
    return Citation(c.path, c.start_line, c.end_line, cite.cited_text, _offset_of(cite, c.text) is not None)


def _offset_of(cite: ApiCitation, text: str) -> int | None:
    """Return where the cited text starts in the document, or None if the document does not hold it."""
    if not cite.cited_text.strip():
        return None
    if cite.start_char is not None and text[cite.start_char : cite.end_char] == cite.cited_text:
        return cite.start_char
    found = text.find(cite.cited_text)
    return found if found >= 0 else None
