"""What both faces of rag tell a person, as text and JSON: the CLI (rag.cli.commands) and the MCP
server (rag.cli.mcp_server) share it, so that a search, an ingest or a fault reads the same in both."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rag.cli.terminal import one_line
from rag.errors import command
from rag.numeric import scale_hint

if TYPE_CHECKING:
    from rag.chunking.base import Chunk
    from rag.indexing.pipeline import IngestReport
    from rag.ranking.hits import Hit
    from rag.retrieval.retrieve import Retrieval
    from rag.semantic.embed import AfterIngest

INTERNAL_ERROR = (
    "Internal error ({}) — this is a bug in rag, please report it (RAG_DEBUG=1 shows the traceback)"
)


def internal_error(exc: BaseException) -> str:
    """Return the one-line message for a fault in rag: the exception's type and first line."""
    detail = (str(exc).splitlines() or [""])[0][:200]
    return INTERNAL_ERROR.format(f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__)


def format_ingest_report(report: IngestReport) -> str:
    """Return the one-line ingest summary."""
    blocked = "".join(
        f"\n--include {pattern!r} matched only files in folders excluded by a built-in rule ({example}): name the "
        f"folder in the pattern to index them, e.g. --include '{example.split('/')[0]}/**'"
        for pattern, example in sorted(report.blocked_includes.items())
    )
    if report.up_to_date:
        return (
            f"Index is up to date: {report.files} files, {report.chunks} chunks ({report.index_path})"
            + blocked
        )
    skipped = ", ".join(f"{n} {reason}" for reason, n in sorted(report.skipped.items())) or "none"
    line = (
        f"Indexed {report.files} files ({report.chunks} chunks) in {report.seconds:.1f} s, "
        f"{report.bytes_read / 1e6:.1f} MB read"
    )
    if report.reused:
        line += f", {report.reused} unchanged files reused"
    line += f"; skipped: {skipped}"
    if report.redacted:
        line += "; secrets redacted: " + ", ".join(f"{n} {k}" for k, n in sorted(report.redacted.items()))
    if report.fell_back:
        line += "; chunked as paragraphs, their structure unreadable: " + ", ".join(
            f"{n} {k}" for k, n in sorted(report.fell_back.items())
        )
    line += f" -> {report.index_path}"
    if report.unstructured:
        languages = ", ".join(sorted(report.unstructured, key=lambda k: (-report.unstructured[k], k)))
        line += (
            f"\n{sum(report.unstructured.values())} files chunked as paragraphs: "
            f"pip install 'rag-code[languages]' for {languages} structure (the next ingest then re-chunks them)"
        )
    return line + blocked


def after_ingest_lines(after: AfterIngest | None, chunks: int) -> list[str]:
    """What an ingest of `chunks` chunks did for the semantic stage's vectors (`after`; None: nothing),
    in lines, then what the scale extra would add (the notes, "Note: ...": for stderr)."""
    lines = [after.note] if after is not None and after.note else []
    if after is not None and after.prepared is not None:
        lines.append(f"Prepared the semantic model for queries in {after.prepared:.1f} s (once per machine)")
    done = after.embedded if after is not None else None
    if done is not None:
        rate = (
            f", {done.computed / done.seconds:.0f} passages/s" if done.computed and done.seconds > 0 else ""
        )
        lines.append(
            f"Embedded {done.computed} passages ({done.chunks - done.computed} cached) in {done.seconds:.1f} s{rate}"
        )
    hint = scale_hint(chunks)
    return lines if hint is None else [*lines, hint]


def freshness_lines(found: Retrieval) -> list[str]:
    """The one-line notes of a retrieval: spelling corrections, a refresh, a gone or stale repository."""
    lines = []
    if found.corrections:
        lines.append(
            "Note: searched "
            + ", ".join(f"{c.searched!r} for {c.word!r}" for c in found.corrections)
            + " (words the index has never seen)"
        )
    if found.refreshed is not None or found.refresh:
        lines.append(refresh_line(found.refreshed))
    if found.gone is not None:
        lines.append(
            f"Note: {one_line(found.gone)}, the repository this index was built from, is gone: the passages are "
            f"as indexed — re-run `{command('ingest')} REPO` with its new path"
        )
    if found.changed:
        shown = ", ".join(map(one_line, found.changed[:3])) + (", ..." if len(found.changed) > 3 else "")
        lines.append(
            f"Note: {len(found.changed)} indexed file(s) or folder(s) changed since ingest ({shown}) "
            "— re-run ingest or pass --refresh"
        )
    return lines


def refresh_line(report: IngestReport | None) -> str:
    """What --refresh did, in one line."""
    if report is None or report.up_to_date:
        return "Refreshed: the index is up to date"
    gone = f", {report.deleted} removed" if report.deleted else ""
    return (
        f"Refreshed: re-indexed {report.changed} changed or new file(s){gone}, {report.reused} unchanged, "
        f"in {report.seconds:.1f} s"
    )


def passage_dict(rank: int, hit: Hit, explain: bool = False) -> dict[str, Any]:
    """Return a hit in the JSON shape scripts rely on: `query --json`'s results and the MCP
    search tool's passages. The match (the chunk that scored) is `start_line`-`end_line`, `symbol`
    and `kind`; the context (the lines shown and sent) is `context_start_line`-`context_end_line`
    and `text`."""
    c, shown = hit.chunk, hit.passage
    out: dict[str, Any] = {
        "rank": rank,
        "score": hit.score,
        "path": c.path,
        "start_line": c.start_line,
        "end_line": c.end_line,
        "chunk": c.ordinal,
        "kind": c.kind,
        "symbol": c.symbol,
        "context_start_line": shown.start_line,
        "context_end_line": shown.end_line,
        "text": shown.text,
        "matched": list(hit.words),  # the question's words it matched
        "marked_lines": list(hit.marks),  # the lines of text that hold them
        "demoted": hit.demoted,  # ranked at rag.ranking.order.TEST_FACTOR of its score, and why
        "boosted": hit.boosted,  # ranked above its score by the code-aware order, and why
    }
    if hit.repository:  # from a workspace: the repository its path begins with
        out["repository"] = hit.repository
    if hit.semantic is not None:  # the semantic stage ran (absent otherwise: the lexical output is unchanged)
        out["semantic"] = hit.semantic
        out["mix"] = hit.mix
    if hit.found_by:  # a model's searches ran with the question: which of them found it
        out["found_by"] = list(hit.found_by)
    if explain:
        out["explain"] = [t._asdict() for t in hit.contributions]
    return out


def about(found: Retrieval) -> dict[str, Any]:
    """The JSON keys that say which index answered, and what was corrected."""
    return {
        "index": found.index_path,
        "repository": found.repository,
        **({"repositories": list(found.repositories)} if found.repositories else {}),
        "corrections": [c._asdict() for c in found.corrections],
    }


NO_MATCH = (
    "No passage matches: none of the query's words occur in the index (question words such as 'how' "
    "are not searched) — search for words the code or its docs would contain"
)


def source_dict(chunk: Chunk) -> dict[str, Any]:
    """Return the passage `rag related` searched from, in passage_dict's keys (no rank nor score)."""
    return {
        "path": chunk.path,
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "chunk": chunk.ordinal,
        "kind": chunk.kind,
        "symbol": chunk.symbol,
        "text": chunk.text,
    }
