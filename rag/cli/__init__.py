"""Command-line interface: parse options, call one library function, format the result."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from rag.answer.defaults import BACKENDS, DEFAULT_MODEL
from rag.errors import InputError, RagError
from rag.retrieval.ranking import TEST_FACTOR
from rag.retrieval.results import Hit
from rag.retrieval.search import DEFAULT_SCORING, DEFAULT_TOP_K, SCORINGS
from rag.semantic.registry import DEFAULT_MODE as DEFAULT_RERANK
from rag.semantic.registry import MODES as RERANK_MODES
from rag.semantic.registry import NOT_INSTALLED
from rag.store.paths import locate_index
from rag.text.tokenizer import MODES, TokenizerSettings

if TYPE_CHECKING:
    from rag.answer.citations import Answer
    from rag.indexing.pipeline import IngestReport
    from rag.retrieval.retrieve import Retrieval
    from rag.semantic.background import Followup

# RAG_DEBUG=1: every error prints its full traceback (a user-facing one too)
DEBUG_ENV = "RAG_DEBUG"
INTERNAL_ERROR = (
    "Internal error ({}) — this is a bug in rag, please report it (RAG_DEBUG=1 shows the traceback)"
)


def _terminal(err: bool) -> bool:
    """Whether stderr (`err`) or stdout is a terminal."""
    stream = sys.stderr if err else sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no stream, or a closed one
        return False


def _out(text: str, err: bool = False, nl: bool = True, exact: bool = False) -> None:
    """Write `text` (which may hold file-derived or model-derived text) to stdout or stderr: to a
    terminal with its control characters shown visibly (see rag.cli.terminal), elsewhere as it is.
    `exact` (JSON: its escapes already make it safe) writes it as it is everywhere."""
    if not exact and _terminal(err):
        from rag.cli.terminal import visible

        text = visible(text)
    click.echo(text, err=err, nl=nl)


def one_line(text: str) -> str:
    """rag.cli.terminal.one_line, imported on first use (JSON output never needs it)."""
    from rag.cli.terminal import one_line as escape

    return escape(text)


def _debug() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def _one_line(exc: click.UsageError) -> click.UsageError:
    """The same usage error (exit 2), shown as one line that names the help instead of
    click's usage block; a command run bare (`rag`) still prints its help."""
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):
        return exc
    where = f" — see `{exc.ctx.command_path} --help`" if exc.ctx is not None else ""
    return click.UsageError(exc.format_message().rstrip(".") + where)


class _OneLineUsage(click.Command):
    """Usage errors found while parsing the command line, shown as one line (_one_line)."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:
            raise _one_line(exc) from None


class RagCommand(_OneLineUsage):
    """A command whose user-fixable errors print one line and exit 1 (a bad option: 2), without
    a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            if _debug():
                raise
            raise _one_line(exc) from None
        except RagError as exc:
            if _debug():
                raise
            raise click.ClickException(one_line(str(exc))) from None  # may quote a file's line
        except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as Python's docs advise
            # and keep the interpreter's last flush of stdout from failing again (unless stdout is
            # not a file: a test runner's buffer)
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            ctx.exit(1)
        except OSError as exc:  # the disk said no: a path, a permission, a full disk
            if _debug():
                raise
            where = f": {exc.filename}" if exc.filename else ""
            raise click.ClickException(
                f"{exc.strerror or exc}{where} — check that the path exists and is writable"
            ) from None
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            ctx.exit(130)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException, SystemExit):
            raise
        except Exception as exc:  # not an error a user can cause: a fault in rag itself
            if _debug():
                raise
            detail = (str(exc).splitlines() or [""])[0][:200]
            raise click.ClickException(
                INTERNAL_ERROR.format(f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__)
            ) from None


class RagGroup(_OneLineUsage, click.Group):
    """The `rag` command group; its commands use RagCommand."""

    command_class = RagCommand

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:  # `rag nosuch`
            raise _one_line(exc) from None


index_option = click.option(
    "--index",
    "index_path",
    type=click.Path(),
    envvar="RAG_INDEX",
    help="Index file to use (default: REPO/.rag/index.sqlite, found from the current directory).",
)


scoring_option = click.option(
    "--scoring",
    type=click.Choice(SCORINGS),
    default=DEFAULT_SCORING,
    show_default=True,
    envvar="RAG_SCORING",
    help="How passages are scored: bm25 = BM25 (k1 4, b 0.9); tfidf = cosine of TF-IDF vectors; "
    "auto = bm25, or tfidf for an index built with --tokenizer plain.",
)


rerank_option = click.option(
    "--rerank",
    type=click.Choice(RERANK_MODES),
    default=DEFAULT_RERANK,
    show_default=True,
    envvar="RAG_RERANK",
    help="The semantic rerank of the lexical top passages: auto = on when rag-code[semantic] is "
    "installed; none = lexical order only.",
)


as_option = click.option(
    "--as",
    "groups",
    multiple=True,
    metavar="GROUP",
    envvar="RAG_GROUPS",
    help="Ask as a member of GROUP, seeing files .rag-access grants it (repeatable; "
    "RAG_GROUPS takes a space-separated list).",
)


@click.group(cls=RagGroup)
def main() -> None:
    """Ask questions about a codebase, answered from its own code."""


@main.command("ingest")
@click.argument("repo", type=click.Path())
@index_option
@click.option(
    "--tokenizer",
    type=click.Choice(MODES),
    default=None,
    help=f"code: split identifiers and stem; plain: lowercase words only. [default: the existing "
    f"index's, else {TokenizerSettings().mode}]",
)
@click.option(
    "--include",
    multiple=True,
    metavar="GLOB",
    help="Index only paths matching GLOB (repeatable). [default: the existing index's, else all]",
)
@click.option(
    "--exclude",
    multiple=True,
    metavar="GLOB",
    help="Skip paths matching GLOB (repeatable). [default: the existing index's, else none]",
)
@click.option(
    "--max-file-size",
    "max_bytes",
    type=click.IntRange(1),
    default=None,
    help="Skip files larger than this many bytes. [default: the existing index's, else 1 MB]",
)
@click.option("--full", is_flag=True, help="Rebuild from scratch instead of reusing unchanged files.")
@click.option(
    "--workers", type=click.IntRange(1), default=None, help="Processes to use (default: all cores)."
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Print nothing unless it fails: no progress line, no summary (errors still print, exit 1).",
)
@click.option(
    "--embed/--no-embed",
    default=None,
    help="With the semantic extra: compute every passage's vector now, before returning / not at all "
    "(queries embed what they use). [default: RAG_EMBED, else in the background, after the ingest]",
)
def ingest_cmd(
    repo: str,
    index_path: str | None,
    tokenizer: str | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    max_bytes: int | None,
    full: bool,
    workers: int | None,
    quiet: bool,
    embed: bool | None,
) -> None:
    """Index REPO so that questions can be asked about it."""
    from rag.indexing.pipeline import (  # the pipeline is only loaded by the command that needs it
        IngestOptions,
        ingest,
    )
    from rag.store.paths import remember_index

    if embed is None:
        from rag.semantic.background import setting

        embed = setting()  # before the ingest: a bad value must not fail a finished one
    options = IngestOptions(
        TokenizerSettings(mode=tokenizer) if tokenizer else None,
        include or None,
        exclude or None,
        max_bytes,
        workers,
        full,
    )
    line = None if quiet or not _stderr_is_terminal() else ProgressLine(sys.stderr)
    try:
        report = ingest(
            repo,
            index_path,
            options,
            progress=line.advance if line else None,
            on_start=line.start if line else None,
        )
    finally:
        if line is not None:
            line.clear()
    remember_index(os.getcwd(), report.index_path)
    if not quiet:
        _out(format_ingest_report(report))
    from rag.semantic.background import after_ingest

    followup = after_ingest(report.index_path, embed)
    if followup is not None and not quiet:
        for text in followup_lines(followup):
            _out(text, err=text.startswith("Note:"))


def followup_lines(followup: Followup) -> list[str]:
    """What an ingest did for the semantic stage's vectors, in lines (a note first: for stderr)."""
    lines = [followup.note] if followup.note else []
    if followup.prepared is not None:
        lines.append(
            f"Prepared the semantic model for queries in {followup.prepared:.1f} s (once per machine)"
        )
    if followup.pid is not None:
        lines.append(
            f"Embedding the passages for the semantic rerank in the background (pid {followup.pid}): "
            "queries get faster as it goes"
        )
    done = followup.embedded
    if done is not None:
        rate = (
            f", {done.computed / done.seconds:.0f} passages/s" if done.computed and done.seconds > 0 else ""
        )
        lines.append(
            f"Embedded {done.computed} passages ({done.chunks - done.computed} cached) in {done.seconds:.1f} s{rate}"
        )
    return lines


def _stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


class ProgressLine:
    """One line on a terminal, rewritten in place: files done / total, MB read, seconds."""

    def __init__(self, stream: Any, every: float = 0.1) -> None:
        import time

        self._stream, self._every, self._clock = stream, every, time.monotonic
        self._began = self._shown = self._clock()
        self.total = self.done = self.total_bytes = self.done_bytes = 0

    def start(self, total: int, total_bytes: int) -> None:
        """Begin counting (again, when an ingest restarts as a full build)."""
        self.total, self.total_bytes, self.done, self.done_bytes = total, total_bytes, 0, 0
        self._show()

    def advance(self, files: int, n_bytes: int) -> None:
        """Count files and bytes done; redraw at most every `every` seconds, and at the end."""
        self.done += files
        self.done_bytes += n_bytes
        if self.done >= self.total or self._clock() - self._shown >= self._every:
            self._show()

    def text(self) -> str:
        """The line as it is shown now."""
        return (
            f"Indexing: {self.done:,}/{self.total:,} files, {self.done_bytes / 1e6:.1f}/"
            f"{self.total_bytes / 1e6:.1f} MB, {self._clock() - self._began:.1f} s"
        )

    def _show(self) -> None:
        self._shown = self._clock()
        self._stream.write("\r\x1b[K" + self.text())
        self._stream.flush()

    def clear(self) -> None:
        """Erase the line, so that the summary (or an error) starts on a clean one."""
        if self.total:
            self._stream.write("\r\x1b[K")
            self._stream.flush()


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


def _question(words: tuple[str, ...]) -> str:
    # bytes that are not UTF-8 (a Latin-1 terminal) reach Python as lone surrogates, which
    # nothing downstream can encode: they become U+FFFD, as in indexed files
    question = " ".join(words).encode("utf-8", "surrogateescape").decode("utf-8", "replace").strip()
    if not question:
        raise InputError('The question is empty — ask something, e.g. query.py "how are passages scored?"')
    return question


@main.command("query")
@click.argument("question", nargs=-1)
@index_option
@click.option(
    "-k",
    "--top-k",
    type=click.IntRange(1),
    default=DEFAULT_TOP_K,
    show_default=True,
    help="How many passages to retrieve.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--no-llm", is_flag=True, help="Retrieve passages only; do not call a model.")
@click.option("--explain", is_flag=True, help="Show which query terms matched each passage and how much.")
@click.option(
    "--backend",
    "backend_name",
    type=click.Choice(BACKENDS),
    default="auto",
    show_default=True,
    envvar="RAG_BACKEND",
    help="Who answers: auto = anthropic if ANTHROPIC_API_KEY is set, else claude if on PATH, else none.",
)
@click.option(
    "--model",
    default=DEFAULT_MODEL,
    show_default=True,
    envvar="RAG_MODEL",
    help="Model that answers (anthropic and claude backends).",
)
@click.option(
    "--show-prompt", is_flag=True, help="Print exactly what would be sent to the backend, then stop."
)
@click.option(
    "--prompt-only",
    is_flag=True,
    help="Print only the prompt, for a pipe: query.py --prompt-only QUESTION | claude -p",
)
@as_option
@click.option(
    "--refresh", is_flag=True, help="Re-ingest files changed since the index was built, then answer."
)
@scoring_option
@rerank_option
def query_cmd(
    question: tuple[str, ...],
    index_path: str | None,
    top_k: int,
    as_json: bool,
    no_llm: bool,
    explain: bool,
    backend_name: str,
    model: str,
    show_prompt: bool,
    prompt_only: bool,
    groups: tuple[str, ...],
    refresh: bool,
    scoring: str,
    rerank: str,
) -> None:
    """Answer QUESTION from the indexed code, citing the passages the answer rests on."""
    from rag.retrieval.retrieve import Request

    request = Request(_question(question), top_k, explain, frozenset(groups), refresh, scoring, rerank)
    notes = json_notes if as_json else text_notes
    if no_llm + show_prompt + prompt_only > 1:
        raise click.UsageError("--no-llm, --show-prompt and --prompt-only do not combine — pick one")
    if (show_prompt or prompt_only) and (as_json or explain):
        raise click.UsageError(
            "--show-prompt and --prompt-only print the prompt alone, without --json or "
            "--explain — drop one, or use --no-llm for passages as JSON or explained"
        )
    from rag.answer.ask import ask

    text = request.question
    if no_llm:
        found = ask(locate_index(index_path), request, build_prompt=False, on_retrieved=notes).retrieval
        _out(
            format_hits_json(text, found.hits, explain, about(found))
            if as_json
            else format_hits(found.hits, explain),
            exact=as_json,
        )
        return
    from rag.answer.backends import render_text_prompt, resolve_backend
    from rag.answer.citations import INCOMPLETE
    from rag.errors import BackendError

    # resolved before searching, so that a missing key or `claude` fails fast
    backend = None if prompt_only else resolve_backend(backend_name, model)
    generates = backend is not None and not show_prompt
    outcome = ask(
        locate_index(index_path),
        request,
        backend if generates else None,
        on_retrieved=notes,
        on_text=None if as_json else _stream,
    )
    hits, prompt, result = outcome.retrieval.hits, outcome.prompt, outcome.answer
    extra = about(outcome.retrieval)
    if prompt is None:  # nothing retrieved
        if prompt_only:
            _out(NO_CONTEXT_MESSAGE, err=True)
        elif as_json and result is not None:
            _out(format_answer_json(result, False, extra), exact=True)
        elif as_json:
            _out(format_unanswered_json(text, [], None, explain, extra), exact=True)
        else:
            _out(NO_CONTEXT_MESSAGE)
        return
    if prompt_only:
        _out(prompt.text)  # exact through a pipe (`| claude -p`), visible on a terminal
    elif show_prompt:
        _out(backend.render(prompt) if backend else render_text_prompt(prompt))
    elif result is None:
        # the passages alone: the prompt repeats them (--show-prompt prints it; JSON keeps "prompt")
        if as_json:
            _out(format_unanswered_json(text, hits, prompt.text, explain, extra), exact=True)
        else:
            _out(format_hits(hits, explain))
        _out(NO_BACKEND_HINT, err=True)
    else:
        _out(format_answer_json(result, explain, extra) if as_json else format_sources(result), exact=as_json)
        if not as_json:
            _out(format_usage(result), err=True)
        if result.stop_reason in INCOMPLETE:
            raise BackendError(INCOMPLETE[result.stop_reason])


def json_notes(found: Retrieval) -> None:
    """text_notes without the semantic stage's install hint, which --json leaves out."""
    text_notes(found._replace(note=None) if found.note == NOT_INSTALLED else found)


def text_notes(found: Retrieval) -> None:
    """Print which index answers (on a terminal), what was corrected, refreshed or is stale, and
    the semantic stage's note, on stderr (one line each). Scripts read the index from --json."""
    if found.note is not None:
        _out(found.note, err=True)
    if _stderr_is_terminal():
        _out(searching_line(found), err=True)
    for line in freshness_lines(found):
        _out(line, err=True)


def searching_line(found: Retrieval) -> str:
    """'Searching REPO' (and the index, when it is not REPO/.rag/index.sqlite)."""
    from rag.store.paths import default_index_file

    same = os.path.abspath(found.index_path) == os.path.abspath(default_index_file(found.repository))
    return f"Searching {one_line(found.repository)}" + (
        "" if same else f" (index {one_line(found.index_path)})"
    )


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
    if found.followup is not None:
        lines += followup_lines(found.followup)
    if found.gone is not None:
        lines.append(
            f"Note: {one_line(found.gone)}, the repository this index was built from, is gone: the passages are "
            "as indexed — re-run `python ingest.py REPO` with its new path"
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


def about(found: Retrieval) -> dict[str, Any]:
    """The JSON keys that say which index answered, and what was corrected."""
    return {
        "index": found.index_path,
        "repository": found.repository,
        "corrections": [c._asdict() for c in found.corrections],
    }


@main.command("eval")
@click.argument("questions", type=click.Path())
@index_option
@click.option(
    "--corpus-root",
    type=click.Path(exists=True, file_okay=False),
    help="Run a question that names a corpus against DIR/<corpus> (indexed first if needed).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--misses",
    is_flag=True,
    help="Also list questions with no hit in the top K, what came back instead, and why.",
)
@click.option(
    "-k",
    "--top-k",
    type=click.IntRange(1),
    default=DEFAULT_TOP_K,
    show_default=True,  # = evaluate.MISS_K
    help="A question is a miss when no hit is in its top K passages (at most 10).",
)
@click.option("--full", is_flag=True, help="Rebuild corpus indexes from scratch (with --corpus-root).")
@as_option
@scoring_option
@rerank_option
def eval_cmd(
    questions: str,
    index_path: str | None,
    corpus_root: str | None,
    as_json: bool,
    misses: bool,
    top_k: int,
    full: bool,
    groups: tuple[str, ...],
    scoring: str,
    rerank: str,
) -> None:
    """Score retrieval on QUESTIONS.jsonl: hit@1/4/10, MRR@10 and top-4 passage size, per corpus."""
    from pathlib import Path

    from rag.cli.evaluate import DEPTH, format_misses, format_table, report_dict, run_eval

    if top_k > DEPTH:
        raise click.BadParameter(
            f"{top_k} is more than the {DEPTH} passages scored — use 1 to {DEPTH}", param_hint="'-k'"
        )
    if corpus_root and index_path:
        raise click.UsageError("--corpus-root finds each corpus's index, --index names one — pick one")
    if full and not corpus_root:
        raise click.UsageError(
            "--full rebuilds the corpus indexes of --corpus-root — pass it, or run "
            "`python ingest.py REPO --full` for another index"
        )
    report = run_eval(
        Path(questions),
        Path(index_path) if index_path else None,
        Path(corpus_root) if corpus_root else None,
        top_k,
        explain=misses,
        full=full,
        scoring=scoring,
        groups=frozenset(groups),
        rerank=rerank,
        on_ingest=lambda r: _out(format_ingest_report(r), err=True),
    )
    for note in report.notes:  # as a query's: --json leaves out the install hint
        if not (as_json and note == NOT_INSTALLED):
            _out(note, err=True)
    if as_json:
        _out(json.dumps(report_dict(report, misses), ensure_ascii=False), exact=True)
    else:
        _out(format_table(report))
        if misses:
            _out("\n" + format_misses(report))


@main.command("status")
@index_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--skipped", "list_skipped", is_flag=True, help="Also list the skipped files, by reason.")
def status_cmd(index_path: str | None, as_json: bool, list_skipped: bool) -> None:
    """Describe the index: repository, format, files and chunks by chunker, skips, redactions, stale files."""
    from rag.cli.status import status, status_dict

    report = status(locate_index(index_path))
    if as_json:
        _out(json.dumps(status_dict(report, list_skipped), ensure_ascii=False), exact=True)
    else:
        _out(format_status(report, list_skipped))


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
        now = (
            "; embedding in the background now"
            if report.embedding
            else "; queued for the background embedding"
            if report.queued
            else ""
        )
        lines.append(f"Vectors:    {report.vectors} of {report.chunks} passages (the semantic rerank's{now})")
    if list_skipped:
        for reason, paths in report.skipped_paths.items():
            more = report.skipped.get(reason, len(paths)) - len(paths)
            lines.append(f"\nSkipped, {reason} ({report.skipped.get(reason, len(paths))}):")
            lines.extend(f"  {p}" for p in paths)
            if more > 0:
                lines.append(f"  ... and {more} more")
    return "\n".join(lines)


@main.command("mcp")
@index_option
@click.option(
    "--as",
    "groups",
    multiple=True,
    metavar="GROUP",
    envvar="RAG_GROUPS",
    help="Search as a member of GROUP (repeatable; RAG_GROUPS takes a space-separated list).",
)
def mcp_cmd(index_path: str | None, groups: tuple[str, ...]) -> None:
    """Serve the index to an MCP client (Claude Code, ...) over stdio: tools search, status, reindex."""
    from rag.cli.mcp_server import INSTALL_HINT, available, serve

    if not available():
        raise click.ClickException(INSTALL_HINT)
    serve(index_path, frozenset(groups))


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
            "results": [hit_dict(i, h, explain) for i, h in enumerate(hits, 1)],
            "backend": "none",
            "model": None,
            "usage": None,
            "stop_reason": None if hits else NO_CONTEXT,
            "prompt": prompt,
            **(extra or {}),
        },
        ensure_ascii=False,
    )


def hit_dict(rank: int, hit: Hit, explain: bool = False) -> dict[str, Any]:
    """Return a hit in the JSON shape scripts rely on."""
    c = hit.chunk
    out: dict[str, Any] = {
        "rank": rank,
        "score": hit.score,
        "path": c.path,
        "start_line": c.start_line,
        "end_line": c.end_line,
        "chunk": c.ordinal,
        "kind": c.kind,
        "symbol": c.symbol,
        "text": c.text,
        "demoted": hit.demoted,  # ranked at rerank.TEST_FACTOR of its score, and why
        "boosted": hit.boosted,  # ranked above its score by the code-aware rerank, and why
    }
    if hit.semantic is not None:  # the semantic stage ran (absent otherwise: the lexical output is unchanged)
        out["semantic"] = hit.semantic
        out["mix"] = hit.mix
    if explain:
        out["explain"] = [t._asdict() for t in hit.contributions]
    return out


def format_hits_json(
    question: str, hits: list[Hit], explain: bool = False, extra: dict[str, Any] | None = None
) -> str:
    """Return the retrieval result as one JSON object; `extra` keys (about()) follow."""
    results = [hit_dict(i, h, explain) for i, h in enumerate(hits, 1)]
    return json.dumps({"question": question, "results": results, **(extra or {})}, ensure_ascii=False)


def format_hits(hits: list[Hit], explain: bool = False) -> str:
    """Return a readable ranked list: score, path:start-end, symbol, then the passage."""
    if not hits:
        return "No passages match the question (none of its words occur in the index)."
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


def _standalone(command: click.Command) -> Callable[[], None]:
    def run() -> None:
        command.main(prog_name=os.path.basename(sys.argv[0]))

    return run


ingest_main = _standalone(ingest_cmd)
query_main = _standalone(query_cmd)


# --- query: answers ------------------------------------------------------------------------------------

NO_CONTEXT_MESSAGE = (
    "The indexed code does not seem to cover this question: no passage matches its words, "
    "so no model was asked."
)
NO_BACKEND_HINT = (
    "No model was asked: set ANTHROPIC_API_KEY, install Claude Code (`claude`), or pipe "
    "`python query.py --prompt-only QUESTION | claude -p`."
)


def _stream(text: str) -> None:
    _out(text, nl=False)  # a chunk of the answer: each control character is shown whole, split or not


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


def format_answer_json(result: Answer, explain: bool = False, extra: dict[str, Any] | None = None) -> str:
    """Return an answer as one JSON object: answer, checked citations, and the passages sent;
    `extra` keys (about()) follow."""
    return json.dumps(
        {
            "question": result.question,
            "answer": result.text,
            "citations": [c._asdict() for c in result.citations],
            "results": [hit_dict(i, h, explain) for i, h in enumerate(result.hits, 1)],
            "backend": result.backend,
            "model": result.model,
            "usage": result.usage,
            "stop_reason": result.stop_reason,
            **(extra or {}),
        },
        ensure_ascii=False,
    )
