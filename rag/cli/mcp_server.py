"""`rag mcp`: the index as an MCP server over stdio, with four tools (search, related, status, reindex).

The tools call the library exactly as the CLI does (rag.retrieval.retrieve, rag.retrieval.related, rag.status,
rag.indexing.pipeline) and say what it says (rag.cli.report): search returns `rag query --no-llm
--json`'s object and related `rag related --json`'s, each with the notes the command prints on stderr,
so a search sees the same passages, access groups and freshness notes as the command. An error a user
can cause is a tool error with the CLI's one-line message; a fault in rag is a tool error naming it;
neither ends the server. stdout carries only the protocol.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from importlib import import_module
from typing import Any

from rag.cli.report import (
    NO_MATCH,
    about,
    format_ingest_report,
    freshness_lines,
    internal_error,
    passage_dict,
    source_dict,
)
from rag.store.paths import Where

MAX_K = 50
INSTALL_HINT = "rag mcp needs the MCP SDK — pip install 'rag-code[mcp]'"

SEARCH_HELP = (
    "Search the indexed repository's code and docs for passages relevant to a question or keywords. "
    "The search is lexical (BM25): it finds passages by the words they share with the query, splitting "
    "identifiers into words (getUserName: get, user, name) and matching them whole too; word order does "
    "not matter. Write the query as the code would: the user's key words, then the identifiers likely to "
    "hold the answer in the language's spelling (camelCase, snake_case, PascalCase), and any error message "
    "or setting text involved, e.g. 'task never runs enqueue_job poll_ready worker queue'. If the first "
    "passages miss, search again with names taken from them. "
    "Returns the ranked passages as results, each with path, its match (start_line, end_line, symbol), "
    "score, and its context (context_start_line, context_end_line, text: cite any of its lines as "
    "path:start-end), and notes: words corrected, files changed since the index was built, or why "
    "nothing matched. "
    "Use before answering any question about this codebase."
)
RELATED_HELP = (
    "Find the passages most like the code at a line of an indexed file: pass its path (relative to the "
    "repository) and a line number. Returns the passage holding that line as source, and ranked passages "
    "as results, as search does (that passage and those overlapping it left out). Use to find code like the code "
    "you are reading: other implementations, copies to change together, the same pattern elsewhere."
)
STATUS_HELP = (
    "Describe the index: repository, when it was built, files and chunks by language, skipped files "
    "and files changed since ingest. Call when search results look stale or incomplete."
)
REINDEX_HELP = (
    "Re-index the repository incrementally (only changed files are read). Call when status or a "
    "search note says files changed since ingest."
)


def _sdk() -> tuple[Any, type[Exception]]:
    """The SDK's server class and ToolError: MCPServer (mcp 2), else FastMCP (mcp 1)."""
    try:
        server = import_module("mcp.server.mcpserver")
        errors = import_module("mcp.server.mcpserver.exceptions")
        return server.MCPServer, errors.ToolError
    except ImportError:
        server = import_module("mcp.server.fastmcp")
        errors = import_module("mcp.server.fastmcp.exceptions")
        return server.FastMCP, errors.ToolError


def available() -> bool:
    """Tell whether the mcp extra is installed."""
    try:
        _sdk()
    except ImportError:
        return False
    return True


def build_server(index_path: Where | None, groups: frozenset[str] = frozenset()) -> Any:
    """Return the MCP server for the index `index_path` (None: found from the current folder,
    as query.py finds it), searching as a member of `groups`."""
    from rag.errors import RagError
    from rag.retrieval.search import DEFAULT_TOP_K

    server_class, tool_error = _sdk()
    server = server_class(
        "rag",
        instructions="Search this repository's code: call search, or related for code like a file's line; cite path:start-end.",
        log_level="WARNING",
    )

    def guarded(call: Any) -> Any:
        try:
            return call()
        except RagError as exc:
            raise tool_error(str(exc)) from None
        except tool_error:
            raise
        except Exception as exc:  # a fault in rag: named, and the server goes on
            raise tool_error(internal_error(exc)) from None

    def where() -> Where:
        from rag.store.paths import CLUSTER_PREFIX, locate_index

        if isinstance(index_path, tuple):  # a workspace
            return index_path
        if index_path is not None and index_path.startswith(CLUSTER_PREFIX):  # one served on a cluster
            return index_path
        return locate_index(index_path)

    def local() -> Where:
        from rag.errors import InputError
        from rag.store.paths import CLUSTER_PREFIX

        found = where()
        if isinstance(found, str) and found.startswith(CLUSTER_PREFIX):
            raise InputError(
                "The workspace is served on a Ray cluster: its status and ingest run where its indexes are — "
                "`rag status --workspace FILE`, `rag ingest --workspace FILE --cluster ADDRESS`"
            )
        return found

    def search(query: str, k: int = DEFAULT_TOP_K) -> dict[str, Any]:
        return guarded(lambda: _search(where, groups, tool_error, query, k))  # type: ignore[no-any-return]

    def related(path: str, line: int, k: int = DEFAULT_TOP_K) -> dict[str, Any]:
        return guarded(lambda: _related(where, groups, tool_error, path, line, k))  # type: ignore[no-any-return]

    def status() -> dict[str, Any]:
        def run() -> dict[str, Any]:
            from rag.status import statuses, statuses_dict

            return statuses_dict(statuses(local(), groups))  # counted as the search sees the index

        return guarded(run)  # type: ignore[no-any-return]

    def reindex() -> dict[str, Any]:
        return guarded(lambda: _reindex(local(), groups))  # type: ignore[no-any-return]

    register: Any = server.tool  # the SDK's decorator: registered by call, not decoration (it is untyped)
    tools = ((search, SEARCH_HELP), (related, RELATED_HELP), (status, STATUS_HELP), (reindex, REINDEX_HELP))
    for tool, help_text in tools:
        register(description=help_text)(tool)
    return server


def _search(
    where: Callable[[], Where], groups: frozenset[str], tool_error: Any, query: str, k: int
) -> dict[str, Any]:
    """The search tool's answer: `rag query --no-llm --json`'s object, and the notes the command prints."""
    from rag.retrieval.retrieve import Request, retrieve

    if not 1 <= k <= MAX_K:
        raise tool_error(f"k must be between 1 and {MAX_K} — ask for fewer passages")
    if not query.strip():
        raise tool_error("The query is empty — pass the question or keywords to search for")
    question = query.strip()
    found = retrieve(where(), Request(question, k, groups=groups))
    return {
        "question": question,
        "results": [passage_dict(rank, hit) for rank, hit in enumerate(found.hits, 1)],
        **about(found),
        # the semantic stage's note too (the model failed: lexical order)
        "notes": ([found.note] if found.note else [])
        + freshness_lines(found)
        + ([] if found.hits else [NO_MATCH]),
    }


def _related(
    where: Callable[[], Where], groups: frozenset[str], tool_error: Any, path: str, line: int, k: int
) -> dict[str, Any]:
    """The related tool's answer: `rag related --json`'s object, and the notes the command prints."""
    from rag.retrieval.related import related as related_to

    if not 1 <= k <= MAX_K:
        raise tool_error(f"k must be between 1 and {MAX_K} — ask for fewer passages")
    if line < 1:
        raise tool_error(f"line {line} is not a line number — lines count from 1")
    if not path.strip():
        raise tool_error("The path is empty — pass an indexed file's path, relative to the repository")
    result = related_to(where(), path.strip(), line, k, groups=groups)
    found = result.found
    return {
        "source": source_dict(result.source),
        "results": [passage_dict(rank, hit) for rank, hit in enumerate(found.hits, 1)],
        **about(found),
        "notes": ([found.note] if found.note else []) + freshness_lines(found),
    }


def _reindex(path: Where, groups: frozenset[str]) -> dict[str, Any]:
    """The reindex tool's answer: an incremental ingest of the index's repository (of each in a
    workspace), summed up as the search sees the index (a caller's groups)."""
    from rag.indexing.pipeline import reingest

    if isinstance(path, tuple):
        return {"repositories": [_reindex(one, groups) for one in path]}
    report = reingest(path, groups, workers=1)
    return {
        "summary": format_ingest_report(report),
        "files": report.files,
        "chunks": report.chunks,
        "changed": report.changed,
        "deleted": report.deleted,
        "up_to_date": report.up_to_date,
    }


def serve(index_path: Where | os.PathLike[str] | None, groups: frozenset[str] = frozenset()) -> None:
    """Run the server on stdin/stdout until the client closes them."""
    where = index_path if index_path is None or isinstance(index_path, tuple) else os.fspath(index_path)
    build_server(where, groups).run("stdio")
