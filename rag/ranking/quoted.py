"""Quoted text in a question: a pasted error message or log line ("panics with 'there is no reactor
running'") is looked up as written. A passage that holds the quoted words verbatim (case and spacing
aside) joins the candidates at the best candidate's score on top of its own, wherever its words
alone would have ranked it: BM25 weighs the message's common words ("there", "is", "running") at
almost nothing, and the message's passage can lie far outside the pool."""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable
from functools import cache

from rag.store.workspace import Reader

# a quoted span: opened after a space, a bracket or the start, closed before a space, punctuation or
# the end, so that the apostrophes of "don't ... isn't" do not pair up; backticks name code, which
# the identifier terms already find
_QUOTED = (
    r"""(?:^|(?<=[\s(\[]))(["'\u201c\u2018])(?=\S)(.{6,200}?)(?<=\S)["'\u201d\u2019](?=$|[\s.,;:!?)\]])"""
)
_OPENING = "\"'\u201c\u2018"  # the characters _QUOTED opens a span with
MIN_WORDS = 3  # a quoted name or word is a term like any other; a message has several
MAX_CANDIDATES = 200  # chunks holding every term of a quote that are read to check the words' order


def quotes(question: str) -> list[str]:
    """Return the quoted spans of at least MIN_WORDS words in `question`, normalised (lower case,
    single spaces)."""
    if not any(c in question for c in _OPENING):  # most questions: the pattern is not even compiled
        return []
    spans = (_normal(m.group(2)) for m in _compiled(_QUOTED).finditer(question))
    return [s for s in spans if len(s.split(" ")) >= MIN_WORDS]


def holding(index: Reader, spans: list[str], postings: Callable[[str], array[int] | None]) -> set[int]:
    """Return the ids of the chunks (of the view `postings` reads) whose text holds one of `spans`
    verbatim: the chunks holding all of a span's index terms, then their text checked."""
    found: set[int] = set()
    for span in spans:
        lists = []
        for term in dict.fromkeys(index.tokenizer.tokenize(span)):
            ids = postings(term)
            if ids is None:
                break  # a word the view never saw: no passage of it holds the span
            lists.append(ids)
        else:
            if not lists:
                continue
            lists.sort(key=len)
            common = set(lists[0])
            for ids in lists[1:]:
                common.intersection_update(ids)
            found.update(_verbatim(index, common, span))
    return found


def _verbatim(index: Reader, ids: set[int], span: str) -> set[int]:
    """The chunks of `ids` whose text holds `span`, when there are few enough to read."""
    if not ids or len(ids) > MAX_CANDIDATES:
        return set()
    return {cid for cid, chunk in index.chunks(sorted(ids)).items() if span in _normal(chunk.text)}


def _normal(text: str) -> str:
    return _compiled(r"\s+").sub(" ", text.lower()).strip()


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """A pattern compiled on first use: a question with no quote needs none (the span's pattern
    takes 1.5 ms to compile)."""
    return re.compile(pattern)
