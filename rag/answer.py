"""The query flow, retrieve -> prompt -> generate, in one place (the CLI and the library call it),
and the check of every citation against the passages that were sent."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from .hits import Hit
from .retrieve import Request, Retrieval, retrieve

if TYPE_CHECKING:  # the model's side is imported when a prompt is built: a query for passages never loads it
    from .backends import ApiCitation, Backend, OnText
    from .prompts import Prompt

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


class Outcome(NamedTuple):
    """What one question came to: the passages retrieved, the prompt built from them, the answer."""

    retrieval: Retrieval
    prompt: Prompt | None  # None when nothing was retrieved, or only passages were asked for
    answer: Answer | None  # None when no model was asked


def ask(
    index_path: str | os.PathLike[str], request: Request, backend: Backend | None = None, *,
    build_prompt: bool = True, on_retrieved: Callable[[Retrieval], None] | None = None,
    on_text: OnText | None = None,
) -> Outcome:
    """Answer a question from the index: retrieve its passages, build the prompt (unless
    `build_prompt` is off), and with a backend generate the answer, streamed to `on_text`.
    `on_retrieved` sees the retrieval before any model is asked (to print its notes first).

    When nothing is retrieved no model is called: with a backend, the answer is empty, stop_reason NO_CONTEXT.
    """
    retrieval = retrieve(index_path, request)
    if on_retrieved is not None:
        on_retrieved(retrieval)
    if not retrieval.hits:
        return Outcome(retrieval, None, None if backend is None else no_context_answer(request.question, backend))
    if not build_prompt:
        return Outcome(retrieval, None, None)
    from .prompts import build_prompt as build

    prompt = build(request.question, retrieval.hits)
    return Outcome(retrieval, prompt, None if backend is None else generate(prompt, backend, on_text))


def no_context_answer(question: str, backend: Backend) -> Answer:
    """The answer when no passage matched: empty, no model called."""
    return Answer(question, "", (), (), backend.name, backend.model, {}, NO_CONTEXT)


def generate(prompt: Prompt, backend: Backend, on_text: OnText | None = None) -> Answer:
    """Send `prompt` to `backend` and check the citations of its answer."""
    gen = backend.generate(prompt, on_text)
    citations = check_citations(gen.text, gen.api_citations, prompt.hits)
    return Answer(prompt.question, gen.text, prompt.hits, tuple(citations), backend.name,
                  gen.model or backend.model, gen.usage, gen.stop_reason)


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
        c = hit.chunk
        if c.path == path and c.start_line <= start <= end <= c.end_line:
            lines = c.text.splitlines()[start - c.start_line : end - c.start_line + 1]
            return Citation(path, start, end, "\n".join(lines), True)
    return Citation(path, start, end, "", False)


def _check_api(cite: ApiCitation, hits: Sequence[Hit]) -> Citation:
    if not 0 <= cite.document_index < len(hits):
        return Citation("", 0, 0, cite.cited_text, False)
    c = hits[cite.document_index].chunk
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
