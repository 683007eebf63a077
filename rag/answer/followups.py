"""The answer's own search: before it answers, the model may search the index again, a few times.

The first passages rarely miss the code a question is about, but an answer often needs one piece
more: the default of the setting that decides the behaviour, the function a neighbour outranked,
the helper that picks a branch. The model that reads the passages knows best what is missing, so it
gets one tool, `search(query)`: each call runs this project's retrieval over the same index, as the
same caller (access groups), and returns up to PASSAGES_PER_SEARCH passages that were not sent
yet, framed as the first documents were. A call that cannot run (bad arguments, an error, the
searches used up) returns an error the model reads, and it answers from what it has.

Both backends use it: the SDK runs it in process (rag.answer.backends), `claude -p` through an MCP
server of its own (rag.answer.tool_server), whose calls come back here as records (round_from_record).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from rag.answer.defaults import DEFAULT_FOLLOW_UPS
from rag.answer.prompts import render
from rag.chunking.base import Chunk
from rag.ranking.hits import Hit

if TYPE_CHECKING:
    from rag.retrieval.retrieve import Request
    from rag.store.paths import Where

PASSAGES_PER_SEARCH = 3  # new passages one search returns at most
SEARCH_DEPTH = 10  # how far down a search's ranking the new passages may come from
TOOL_NAME = "search"
MAX_QUERY_CHARS = 500  # what a search keeps of the model's query

NO_NEW_PASSAGES = (
    "No passage beyond those already sent matches these words. Answer from the documents you have, "
    "or search once more with other words."
)
NO_SEARCHES_LEFT = "No searches left: answer now from the documents you have."
BAD_ARGUMENTS = "The search needs `query`: a string of keywords, e.g. {example}. Nothing was searched."
SEARCH_FAILED = "The search failed ({reason}). Answer from the documents you have."


class Round(NamedTuple):
    """One search the answering model made: its words, the passages it was sent back (none when
    nothing new matched), and the error it read instead when the search could not run."""

    search: str
    hits: tuple[Hit, ...] = ()
    error: str | None = None


def tool_definition(limit: int) -> dict[str, Any]:
    """The search tool as the Messages API and MCP describe a tool: name, description, input schema."""
    return {
        "name": TOOL_NAME,
        "description": render("search_tool", per_search=PASSAGES_PER_SEARCH, limit=limit),
        "input_schema": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "3 to 12 keywords: identifiers as the code spells them, setting or "
                    "option names, words the code or its comments would use",
                }
            },
            "required": ["query"],
        },
    }


def unseen(hit: Hit, sent: Sequence[Hit]) -> Hit | None:
    """What of `hit` the model has not been sent: None when its match lies within lines sent
    already; else the hit, its passage shorn of the lines at either edge that were sent (the match
    is kept whole). A passage that merely borders one sent is new: what it matched was not seen."""
    p, m = hit.passage, hit.chunk
    shown: set[int] = set()
    for s in sent:
        if s.passage.path == p.path:
            shown.update(range(s.passage.start_line, s.passage.end_line + 1))
    if all(n in shown for n in range(m.start_line, m.end_line + 1)):
        return None
    start, end = p.start_line, p.end_line
    while start < m.start_line and start in shown:
        start += 1
    while end > m.end_line and end in shown:
        end -= 1
    if (start, end) == (p.start_line, p.end_line):
        return hit
    lines = p.text.split("\n")
    context = p._replace(
        start_line=start, end_line=end, text="\n".join(lines[start - p.start_line : end - p.start_line + 1])
    )
    return hit._replace(context=context, marks=tuple(n for n in hit.marks if start <= n <= end))


class SearchTool:
    """The answering model's search over one index, as one caller, bounded to `limit` calls.

    `sent` is what the model has been sent already (the first passages); each search's passages
    join it, so that no passage is sent twice."""

    def __init__(
        self,
        index_path: Where | os.PathLike[str],
        request: Request,
        sent: Sequence[Hit],
        limit: int = DEFAULT_FOLLOW_UPS,
    ) -> None:
        self.index_path: Where = index_path if isinstance(index_path, tuple) else os.fspath(index_path)
        self.request = request
        self.sent: list[Hit] = list(sent)
        self.limit = limit
        self.rounds: list[Round] = []

    @property
    def left(self) -> int:
        """Searches the model may still make."""
        return max(0, self.limit - len(self.rounds))

    def call(self, arguments: object) -> Round:
        """Run one search for the tool arguments the model sent (`{"query": "..."}`); never raises
        for anything the model or the index does: the error is the round's, for the model to read."""
        query = arguments.get("query") if isinstance(arguments, dict) else None
        if not isinstance(query, str) or not query.strip():
            text = query if isinstance(query, str) else ""
            found = Round(text, error=BAD_ARGUMENTS.format(example='"parse_config default_timeout"'))
        elif not self.left:
            found = Round(_clean(query), error=NO_SEARCHES_LEFT)
        else:
            found = self._search(_clean(query))
        if found.error != NO_SEARCHES_LEFT:
            self.rounds.append(found)
        return found

    def _search(self, query: str) -> Round:
        from rag.errors import RagError
        from rag.retrieval.retrieve import retrieve

        request = self.request._replace(
            question=query, k=SEARCH_DEPTH, refresh=False, searches=(), explain=False
        )
        try:
            found = retrieve(self.index_path, request)
        except RagError as exc:
            return Round(query, error=SEARCH_FAILED.format(reason=" ".join(str(exc).split())))
        except Exception as exc:  # a fault in rag must not cost the answer; the model is told
            return Round(query, error=SEARCH_FAILED.format(reason=f"internal error: {type(exc).__name__}"))
        new: list[Hit] = []
        for hit in found.hits:
            part = unseen(hit, [*self.sent, *new])
            if part is not None:
                new.append(part)
            if len(new) == PASSAGES_PER_SEARCH:
                break
        self.sent.extend(new)
        return Round(query, tuple(new))


def _clean(query: str) -> str:
    return " ".join(query.split())[:MAX_QUERY_CHARS]


def round_text(found: Round, first_index: int) -> str:
    """A round as the model reads it in text: its passages as numbered documents (the first
    `first_index`), framed as the prompt's are, or the error, or that nothing new matched."""
    from rag.answer.prompts import documents_text

    if found.error is not None:
        return found.error
    if not found.hits:
        return NO_NEW_PASSAGES
    return "<documents>\n" + documents_text(found.hits, first_index) + "\n</documents>"


# --- a round as a record: how rag.answer.tool_server hands its calls back -------------------------------


def _chunk_record(c: Chunk) -> list[Any]:
    return list(c)


def round_record(found: Round) -> dict[str, Any]:
    """A round as JSON-ready data (its passages' match and context, score and marks)."""
    return {
        "search": found.search,
        "error": found.error,
        "hits": [
            {
                "score": h.score,
                "chunk": _chunk_record(h.chunk),
                "context": None if h.context is None else _chunk_record(h.context),
                "words": list(h.words),
                "marks": list(h.marks),
            }
            for h in found.hits
        ],
    }


def round_from_record(data: dict[str, Any]) -> Round:
    """The round round_record() wrote."""
    hits = tuple(
        Hit(
            float(h["score"]),
            Chunk(*h["chunk"]),
            context=None if h["context"] is None else Chunk(*h["context"]),
            words=tuple(h["words"]),
            marks=tuple(h["marks"]),
        )
        for h in data["hits"]
    )
    return Round(str(data["search"]), hits, data["error"])
