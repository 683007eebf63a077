"""What the commands print: passages, answers and the index's status as text or JSON, made safe
for a terminal, and the notes that go to stderr."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

import click

from rag.cli.report import freshness_lines, passage_dict, source_dict
from rag.cli.terminal import one_line
from rag.retrieval.ranking import TEST_FACTOR
from rag.retrieval.results import Hit
from rag.semantic.registry import NOT_INSTALLED

if TYPE_CHECKING:
    from rag.answer.citations import Answer
    from rag.chunking.base import Chunk
    from rag.retrieval.retrieve import Retrieval

NO_CONTEXT_MESSAGE = (
    "The indexed code does not seem to cover this question: no passage matches its words, "
    "so no model was asked."
)


def no_backend_hint() -> str:
    """What to do when no model can answer, naming the query command as the user runs it."""
    from rag.errors import command

    return (
        "No model was asked: set ANTHROPIC_API_KEY, install Claude Code (`claude`), or pipe "
        f"`{command('query')} --prompt-only QUESTION | claude -p`."
    )


def _terminal(err: bool) -> bool:
    """Whether stderr (`err`) or stdout is a terminal."""
    stream = sys.stderr if err else sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no stream, or a closed one
        return False


def out(text: str, err: bool = False, nl: bool = True, exact: bool = False) -> None:
    """Write `text` (which may hold file-derived or model-derived text) to stdout or stderr: to a
    terminal with its control characters shown visibly (see rag.cli.terminal), elsewhere as it is.
    `exact` (JSON: its escapes already make it safe) writes it as it is everywhere."""
    if not exact and _terminal(err):
        from rag.cli.terminal import visible

        text = visible(text)
    click.echo(text, err=err, nl=nl)


def stream(text: str) -> None:
    """Write a chunk of a streamed answer."""
    out(text, nl=False)  # each control character is shown whole, split or not


def stderr_is_terminal() -> bool:
    """Whether someone watches stderr: the progress line and the 'Searching' line are for them."""
    return sys.stderr.isatty()


def json_notes(found: Retrieval, remembered: bool = False, quiet: bool = False) -> None:
    """text_notes without the semantic stage's install hint, which --json leaves out."""
    text_notes(found._replace(note=None) if found.note == NOT_INSTALLED else found, remembered, quiet)


def text_notes(found: Retrieval, remembered: bool = False, quiet: bool = False) -> None:
    """Print which index answers (unless `quiet`), what was corrected, refreshed or is stale, and
    the semantic stage's note, on stderr (one line each). `remembered`: the index was found as the
    one an ingest run from the current folder wrote (rag.store.paths.find_index)."""
    if found.note is not None:
        out(found.note, err=True)
    if not quiet:
        out(searching_line(found, remembered), err=True)
    for line in freshness_lines(found):
        out(line, err=True)


REMEMBERED = "last ingested from this folder"


def searching_line(found: Retrieval, remembered: bool = False) -> str:
    """'Searching REPO', then in parentheses the index when it is not REPO/.rag/index.sqlite, and
    whether it was chosen as the one last ingested from the current folder."""
    from rag.store.paths import default_index_file

    same = os.path.abspath(found.index_path) == os.path.abspath(default_index_file(found.repository))
    said = ([] if same else [f"index {one_line(found.index_path)}"]) + ([REMEMBERED] if remembered else [])
    return f"Searching {one_line(found.repository)}" + (f" ({', '.join(said)})" if said else "")


NO_HITS = "No passages match the question (none of its words occur in the index)."
NO_RELATED = "No other passage shares the words of this one."


def format_hits(hits: list[Hit], explain: bool = False, none: str = NO_HITS) -> str:
    """Return a readable ranked list: score, path:start-end, symbol, then the passage (`none`
    when there is no hit)."""
    if not hits:
        return none
    blocks = []
    for rank, hit in enumerate(hits, 1):
        c = hit.chunk
        label = f" {one_line(c.symbol)} ({c.kind})" if c.symbol else ""
        # so that a list not in score order explains itself
        ranked = f"  [{hit.demoted}: ranked at x{TEST_FACTOR:g} of its score]" if hit.demoted else ""
        if hit.boosted:
            ranked += f"  [ranked up: {hit.boosted}]"
        semantic = f"  [semantic {hit.semantic:.4f}, mix {hit.mix:.4f}]" if hit.semantic is not None else ""
        lines = [
            f"{rank}. {hit.score:.4f}  {one_line(c.path)}:{c.start_line}-{c.end_line}{label}{ranked}{semantic}"
        ]
        if explain and hit.semantic is not None and hit.mix is not None:
            from rag.semantic.rerank import LEXICAL_WEIGHT

            lexical = (
                (hit.mix - (1 - LEXICAL_WEIGHT) * hit.semantic) / LEXICAL_WEIGHT if LEXICAL_WEIGHT else 0.0
            )
            lines.append(
                f"     mix {hit.mix:.4f} = {LEXICAL_WEIGHT:g} x lexical {lexical:.4f} (of the best) + "
                f"{1 - LEXICAL_WEIGHT:g} x cosine {hit.semantic:.4f}"
            )
        if explain:
            lines.extend(
                f"     {t.label}: idf {t.idf:.3f} x tf {t.tf} -> weight {t.weight:.4f}, "
                f"score {t.score:.4f} ({t.score / hit.score:.0%})"
                for t in hit.contributions
            )
        body = f"{c.context}\n{c.text}" if c.context and not c.text.startswith(c.context) else c.text
        lines.extend("    " + line for line in body.splitlines())
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def format_hits_json(
    question: str, hits: list[Hit], explain: bool = False, extra: dict[str, Any] | None = None
) -> str:
    """Return the retrieval result as one JSON object; `extra` keys (about()) follow."""
    results = [passage_dict(i, h, explain) for i, h in enumerate(hits, 1)]
    return json.dumps({"question": question, "results": results, **(extra or {})}, ensure_ascii=False)


def source_line(source: Chunk) -> str:
    """'Like PATH:START-END SYMBOL': the passage `rag related` searched from, for stderr."""
    symbol = f" {one_line(source.symbol)} ({source.kind})" if source.symbol else ""
    return f"Like {one_line(source.path)}:{source.start_line}-{source.end_line}{symbol}"


def format_related_json(source: Chunk, hits: list[Hit], extra: dict[str, Any] | None = None) -> str:
    """Return `rag related`'s result as one JSON object: the source passage, then its related
    passages in search's shape; `extra` keys (about()) follow."""
    results = [passage_dict(i, h) for i, h in enumerate(hits, 1)]
    return json.dumps(
        {"source": source_dict(source), "results": results, **(extra or {})}, ensure_ascii=False
    )


def format_unanswered_json(
    question: str,
    hits: list[Hit],
    prompt: str | None,
    explain: bool = False,
    extra: dict[str, Any] | None = None,
) -> str:
    """Return the answer JSON shape for the `none` backend: passages and prompt (None without
    passages), no answer; `extra` keys (about()) follow."""
    from rag.answer.citations import NO_CONTEXT

    return json.dumps(
        {
            "question": question,
            "answer": None,
            "citations": [],
            "results": [passage_dict(i, h, explain) for i, h in enumerate(hits, 1)],
            "backend": "none",
            "model": None,
            "usage": None,
            "stop_reason": None if hits else NO_CONTEXT,
            "prompt": prompt,
            **(extra or {}),
        },
        ensure_ascii=False,
    )


def format_answer_json(result: Answer, explain: bool = False, extra: dict[str, Any] | None = None) -> str:
    """Return an answer as one JSON object: answer, checked citations, and the passages sent;
    `extra` keys (about()) follow."""
    return json.dumps(
        {
            "question": result.question,
            "answer": result.text,
            "citations": [c._asdict() for c in result.citations],
            "results": [passage_dict(i, h, explain) for i, h in enumerate(result.hits, 1)],
            "backend": result.backend,
            "model": result.model,
            "usage": result.usage,
            "stop_reason": result.stop_reason,
            **(extra or {}),
        },
        ensure_ascii=False,
    )


def format_sources(result: Answer) -> str:
    """Return what follows a streamed answer: its numbered sources, unverifiable ones flagged."""
    seen: dict[tuple[str, int, int], bool] = {}
    for c in result.citations:
        key = (c.path, c.start_line, c.end_line)
        seen[key] = seen.get(key, False) or c.valid
    if not seen:
        return "\n\nSources: none cited."
    lines = ["", "", "Sources:"]
    for n, ((path, start, end), valid) in enumerate(seen.items(), 1):
        where = f"{one_line(path)}:{start}-{end}" if path else "(a document that was not sent)"
        lines.append(f"  [{n}] {where}" + ("" if valid else "  (!) not among the passages sent: unverified"))
    return "\n".join(lines)


def format_usage(result: Answer) -> str:
    """Return one line naming the model, backend and tokens used."""
    tokens = result.usage
    used = (
        f"; {tokens['input_tokens']} input + {tokens['output_tokens']} output tokens"
        if "input_tokens" in tokens and "output_tokens" in tokens
        else ""
    )
    return f"({result.model} via {result.backend}{used})"


def format_status(report: Any, list_skipped: bool = False) -> str:
    """Return `rag status` as text."""

    def counts(d: dict[str, int]) -> str:
        return ", ".join(f"{n} {k}" for k, n in d.items()) or "none"

    lines = [
        f"Index:      {report.index_path} (format {report.format_version}, {report.tokenizer} tokenizer)",
        f"Repository: {report.repository}",
        f"Built:      {report.built_at}",
        f"Files:      {report.files} ({counts(report.files_by_chunker)})",
        f"Chunks:     {report.chunks} ({counts(report.chunks_by_chunker)})",
    ]
    if report.summary_recorded:
        lines.append(f"Skipped:    {counts(report.skipped)}")
        lines.append(f"Redacted:   {counts(report.redacted)}")
    else:
        lines.append(
            "Skipped:    not recorded by the ingest that built this index — re-run ingest to see them"
        )
    stale = ", ".join(report.stale[:5]) + (", ..." if len(report.stale) > 5 else "")
    lines.append(
        f"Stale:      {len(report.stale)} changed since ingest ({stale}) — re-run ingest"
        if report.stale
        else "Stale:      none"
    )
    if report.vectors is not None:
        lines.append(f"Vectors:    {report.vectors} of {report.chunks} passages (the semantic rerank's)")
    if list_skipped:
        for reason, paths in report.skipped_paths.items():
            more = report.skipped.get(reason, len(paths)) - len(paths)
            lines.append(f"\nSkipped, {reason} ({report.skipped.get(reason, len(paths))}):")
            lines.extend(f"  {p}" for p in paths)
            if more > 0:
                lines.append(f"  ... and {more} more")
    return "\n".join(lines)
