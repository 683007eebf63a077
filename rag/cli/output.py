"""What the commands print: passages, answers and the index's status as text or JSON, made safe
for a terminal, and the notes that go to stderr."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from rag.cli.report import freshness_lines, passage_dict, source_dict
from rag.cli.terminal import one_line
from rag.ranking.hits import Hit
from rag.ranking.order import TEST_FACTOR

if TYPE_CHECKING:
    from rag.answer.citations import Answer
    from rag.answer.plan import Plan
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


class AnswerStream:
    """Writes a streamed answer to stdout as it comes. The model may write a sentence before it
    searches ("Let me look for the default."): on a terminal it is erased again; through a pipe
    nothing can be taken back, so it stays, and the answer starts a new paragraph below it."""

    def __init__(self) -> None:
        self.started = False  # something was written
        self._terminal = stdout_is_terminal()
        self._paragraph = False  # the next text follows a sentence that preceded a search

    def write(self, text: str) -> None:
        """Write a chunk of the answer."""
        if self._paragraph:
            text, self._paragraph = "\n\n" + text.lstrip("\n"), False
        self.started = True
        out(text, nl=False)  # each control character is shown whole, split or not

    def retract(self, text: str) -> None:
        """Take back `text`, just written from column 0, because a search follows it."""
        if not self._terminal:
            self._paragraph = True
            return
        import shutil

        from rag.cli.terminal import erase_sequence, visible

        size = shutil.get_terminal_size()
        click.echo(erase_sequence(visible(text), size.columns, size.lines), nl=False)


def stdout_is_terminal() -> bool:
    """Whether a person reads stdout: the passages are then shown brief by default."""
    return _terminal(False)


def stderr_is_terminal() -> bool:
    """Whether someone watches stderr: the progress line and the 'Searching' line are for them."""
    return sys.stderr.isatty()


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
SEARCHING_NAMED = 8  # the repositories of a workspace the searching line names


def searching_line(found: Retrieval, remembered: bool = False) -> str:
    """'Searching REPO', then in parentheses the index when it is not REPO/.rag/index.sqlite, and
    whether it was chosen as the one last ingested from the current folder."""
    from rag.store.paths import default_index_file

    if found.repositories:  # a workspace
        names = found.repositories
        listed = ", ".join(names[:SEARCHING_NAMED]) + (
            f" and {len(names) - SEARCHING_NAMED} more" if len(names) > SEARCHING_NAMED else ""
        )
        return f"Searching {len(names)} repositories: {one_line(listed)}" + (
            f" ({REMEMBERED})" if remembered else ""
        )
    same = os.path.abspath(found.index_path) == os.path.abspath(default_index_file(found.repository))
    said = ([] if same else [f"index {one_line(found.index_path)}"]) + ([REMEMBERED] if remembered else [])
    return f"Searching {one_line(found.repository)}" + (f" ({', '.join(said)})" if said else "")


def plan_about(plan: Plan | None) -> dict[str, Any]:
    """The JSON keys of a search plan: the model's searches (what each result's `found_by`
    numbers), the model that wrote them, its tokens, and why there are none (`search_note`)."""
    if plan is None:
        return {"searches": []}
    return {
        "searches": list(plan.searches),
        "search_model": plan.model,
        "search_usage": plan.usage,
        "search_note": plan.note,
    }


def plan_note(plan: Plan) -> str:
    """The stderr line of a plan: what was searched, or why the question was searched alone."""
    from rag.answer.plan import searched_line

    return plan.note if plan.note is not None else searched_line(plan.searches)


def searched_again_line(words: str) -> str:
    """The stderr line of a search the answering model made before answering."""
    return f"searched again: {one_line(words)}"


NO_HITS = "No passages match the question (none of its words occur in the index)."
NO_RELATED = "No other passage shares the words of this one."


WIDTH = 80  # a header line fits a terminal this wide
BRIEF_LINES = 8  # the most lines of a match --brief shows


def format_hits(hits: list[Hit], explain: bool = False, none: str = NO_HITS, brief: bool = False) -> str:
    """Return a readable ranked list (`none` when there is no hit): for each result, in the order
    ranked, a header naming its match (path:start-end symbol (kind)) within WIDTH columns, a line of
    what it matched and why it was ranked where it is, then its context with line numbers, the
    lines that hold a matched word marked `>`. `brief`: only the match's marked lines and those
    beside them. `explain`: also the scores and each term's part."""
    if not hits:
        return none
    blocks = []
    for rank, hit in enumerate(hits, 1):
        c = hit.chunk
        lines = [_header(f"{rank}. ", c)]
        notes = []
        if hit.words:
            notes.append("matched " + ", ".join(one_line(w) for w in hit.words))
        if hit.demoted:  # so that a list not in score order explains itself
            notes.append(f"{hit.demoted}: ranked at x{TEST_FACTOR:g} of its score")
        if hit.boosted:
            notes.append(f"ranked up: {hit.boosted}")
        if hit.found_by:
            notes.append("found by " + ", ".join(hit.found_by))
        lines.extend(_wrapped(" · ".join(notes), "   "))
        if explain:
            lines.append(_scores(hit))
            lines.extend(_explanation(hit, with_found_by=False))
        lines.extend(_numbered(hit, brief))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _header(lead: str, c: Chunk) -> str:
    """`lead` path:start-end symbol (kind), the path shortened in its middle to fit WIDTH."""
    where = f":{c.start_line}-{c.end_line}"
    label = f" {one_line(c.symbol)} ({c.kind})" if c.symbol else f" ({c.kind})"
    path = one_line(c.path)
    room = WIDTH - len(lead) - len(where) - len(label)
    if len(path) > room:
        if room < 12:  # a symbol too long to leave the path room: the symbol gives way
            label = label[: max(0, WIDTH - len(lead) - len(where) - 13)] + "…"
            room = WIDTH - len(lead) - len(where) - len(label)
        keep = max(room - 1, 4)
        path = path[: keep // 2] + "…" + path[len(path) - (keep - keep // 2) :]
    return f"{lead}{path}{where}{label}"[: WIDTH + 1]


def _wrapped(text: str, indent: str) -> list[str]:
    """`text` in lines of at most WIDTH columns, each after `indent`."""
    if not text:
        return []
    out: list[str] = []
    line = indent
    for word in text.split(" "):
        if len(line) + len(word) + 1 > WIDTH and line.strip():
            out.append(line.rstrip())
            line = indent
        line += word + " "
    out.append(line.rstrip())
    return out


def _scores(hit: Hit) -> str:
    parts = [f"score {hit.score:.4f}"]
    if hit.ranked is not None:
        parts.append(f"ranked by {hit.ranked:.4f}")
    if hit.semantic is not None and hit.mix is not None:
        from rag.weights import DEFAULTS

        w = DEFAULTS.lexical_weight
        parts.append(
            f"semantic {hit.semantic:.4f}, order by mix {hit.mix:.4f} = {w:g} x lexical share"
            f" + {1 - w:g} x cosine"
        )
    return "     " + "; ".join(parts)


def _numbered(hit: Hit, brief: bool) -> list[str]:
    """The passage's lines, numbered, the marked ones flagged `>`; `brief`: the match's marked lines
    and one line each side (its first lines when none is marked), at most BRIEF_LINES, gaps shown."""
    c = hit.chunk
    shown = hit.passage
    body = shown.text.split("\n")
    if c.context and not shown.text.startswith(c.context):
        body = [f"({one_line(c.context)})", *body]  # the breadcrumb: where the match sits
        first = shown.start_line - 1
    else:
        first = shown.start_line
    numbered = list(enumerate(body, first))
    marks = set(hit.marks)
    width = len(str(shown.end_line))
    if brief:
        inside = [(n, t) for n, t in numbered if c.start_line <= n <= c.end_line]
        near = {m + d for m in marks for d in (-1, 0, 1)}
        picked = [(n, t) for n, t in inside if n in near] or inside[:4]
        if len(picked) > BRIEF_LINES:
            picked = picked[:BRIEF_LINES]
        numbered = picked
    out: list[str] = []
    previous: int | None = None
    for n, text in numbered:
        if previous is not None and n > previous + 1:
            out.append(f"  {'⋮':>{width}}")
        flag = ">" if n in marks else " "
        number = f"{n:>{width}}" if n >= shown.start_line else " " * width
        out.append(f"{flag} {number} | {text}".rstrip())
        previous = n
    return out


def _explanation(hit: Hit, with_found_by: bool = True) -> list[str]:
    """The --explain lines of a hit: the searches that found it, and each term's part of its score."""
    lines = [f"     found by {', '.join(hit.found_by)}"] if hit.found_by and with_found_by else []
    lines.extend(
        f"     {t.label}: idf {t.idf:.3f} x tf {t.tf} -> weight {t.weight:.4f}, "
        f"score {t.score:.4f} ({t.score / hit.score:.0%})"
        for t in hit.contributions
    )
    return lines


def format_explained(hits: Sequence[Hit]) -> str:
    """Return, after an answer, why each passage sent was chosen: its place, the searches that found
    it and its terms' parts (--explain), without its text (the answer cites it)."""
    blocks = ["", "Passages sent:"]
    for rank, hit in enumerate(hits, 1):
        blocks.append(_header(f"{rank}. ", hit.chunk))
        blocks.append(_scores(hit))
        blocks.extend(_explanation(hit))
    return "\n".join(blocks)


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
            "calls": result.calls,
            "stop_reason": result.stop_reason,
            "rounds": rounds_json(result, explain),
            **(extra or {}),
        },
        ensure_ascii=False,
    )


def rounds_json(result: Answer, explain: bool = False) -> list[dict[str, Any]]:
    """The searches the answering model made, each with the passages it was sent back (ranked on
    from those before it) or the error it read instead."""
    out: list[dict[str, Any]] = []
    rank = len(result.hits)
    for found in result.rounds:
        results = [passage_dict(rank + i, h, explain) for i, h in enumerate(found.hits, 1)]
        rank += len(found.hits)
        out.append({"search": found.search, "results": results, "error": found.error})
    return out


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


def format_usage(result: Answer, plan: Plan | None = None) -> str:
    """Return one line naming the model, backend and tokens used (with a search plan: the model
    that wrote it; the tokens of every call)."""
    tokens = result.usage
    calls = f" in {result.calls} calls" if result.calls > 1 else ""
    used = (
        f"; {tokens['input_tokens']} input + {tokens['output_tokens']} output tokens{calls}"
        if "input_tokens" in tokens and "output_tokens" in tokens
        else ""
    )
    by = f", search by {plan.model}" if plan is not None else ""
    return f"({result.model} via {result.backend}{by}{used})"


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
