"""Command-line interface: parse options, call one library function, format the result."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from .backend_choices import BACKENDS, DEFAULT_MODEL
from .errors import InputError, RagError
from .hits import Hit
from .rerank import TEST_FACTOR
from .search import DEFAULT_SCORING, DEFAULT_TOP_K, SCORINGS
from .store.paths import locate_index
from .terminal import one_line, visible
from .tokens import MODES, TokenizerSettings

if TYPE_CHECKING:
    from .answer import Answer
    from .pipeline import IngestReport
    from .retrieve import Retrieval

# RAG_DEBUG=1: every error prints its full traceback (a user-facing one too)
DEBUG_ENV = "RAG_DEBUG"
INTERNAL_ERROR = "Internal error ({}) — this is a bug in rag, please report it (RAG_DEBUG=1 shows the traceback)"


def _terminal(err: bool) -> bool:
    """Whether stderr (`err`) or stdout is a terminal."""
    stream = sys.stderr if err else sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no stream, or a closed one
        return False


def _out(text: str, err: bool = False, nl: bool = True, exact: bool = False) -> None:
    """Write `text` (which may hold file-derived or model-derived text) to stdout or stderr: to a
    terminal with its control characters shown visibly (see rag.terminal), elsewhere as it is.
    `exact` (JSON: its escapes already make it safe) writes it as it is everywhere."""
    click.echo(text if exact or not _terminal(err) else visible(text), err=err, nl=nl)


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

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
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
            raise click.ClickException(INTERNAL_ERROR.format(f"{type(exc).__name__}: {detail}" if detail
                                                             else type(exc).__name__)) from None


class RagGroup(_OneLineUsage, click.Group):
    """The `rag` command group; its commands use RagCommand."""

    command_class = RagCommand

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:  # `rag nosuch`
            raise _one_line(exc) from None


index_option = click.option(
    "--index", "index_path", type=click.Path(), envvar="RAG_INDEX",
    help="Index file to use (default: REPO/.rag/index.sqlite, found from the current directory).",
)


scoring_option = click.option(
    "--scoring", type=click.Choice(SCORINGS), default=DEFAULT_SCORING, show_default=True, envvar="RAG_SCORING",
    help="How passages are scored: bm25 = BM25 (k1 4, b 0.9); tfidf = cosine of TF-IDF vectors; "
         "auto = bm25, or tfidf for an index built with --tokenizer plain.",
)


as_option = click.option(
    "--as", "groups", multiple=True, metavar="GROUP", envvar="RAG_GROUPS",
    help="Ask as a member of GROUP, seeing files .rag-access grants it (repeatable; "
         "RAG_GROUPS takes a space-separated list).",
)


@click.group(cls=RagGroup)
def main() -> None:
    """Ask questions about a codebase, answered from its own code."""


@main.command("ingest")
@click.argument("repo", type=click.Path())
@index_option
@click.option("--tokenizer", type=click.Choice(MODES), default=None,
              help=f"code: split identifiers and stem; plain: lowercase words only. [default: the existing "
                   f"index's, else {TokenizerSettings().mode}]")
@click.option("--include", multiple=True, metavar="GLOB",
              help="Index only paths matching GLOB (repeatable). [default: the existing index's, else all]")
@click.option("--exclude", multiple=True, metavar="GLOB",
              help="Skip paths matching GLOB (repeatable). [default: the existing index's, else none]")
@click.option("--max-file-size", "max_bytes", type=click.IntRange(1), default=None,
              help="Skip files larger than this many bytes. [default: the existing index's, else 1 MB]")
@click.option("--full", is_flag=True, help="Rebuild from scratch instead of reusing unchanged files.")
@click.option("--workers", type=click.IntRange(1), default=None, help="Processes to use (default: all cores).")
def ingest_cmd(
    repo: str, index_path: str | None, tokenizer: str | None, include: tuple[str, ...],
    exclude: tuple[str, ...], max_bytes: int | None, full: bool, workers: int | None,
) -> None:
    """Index REPO so that questions can be asked about it."""
    from .pipeline import IngestOptions, ingest  # the pipeline is only loaded by the command that needs it
    from .store.paths import remember_index

    options = IngestOptions(TokenizerSettings(mode=tokenizer) if tokenizer else None, include or None,
                            exclude or None, max_bytes, workers, full)
    bar: Any = None

    def on_start(total: int) -> None:
        nonlocal bar
        if bar is not None:  # a second start: the ingest began again as a full build
            bar.__exit__(None, None, None)
            bar = None
        if sys.stderr.isatty() and total:
            bar = click.progressbar(length=total, label="Indexing", file=sys.stderr)
            bar.__enter__()

    def progress(n: int) -> None:
        if bar is not None:
            bar.update(n)

    try:
        report = ingest(repo, index_path, options, progress=progress, on_start=on_start)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    remember_index(os.getcwd(), report.index_path)
    _out(format_ingest_report(report))


def format_ingest_report(report: IngestReport) -> str:
    """Return the one-line ingest summary."""
    if report.up_to_date:
        return f"Index is up to date: {report.files} files, {report.chunks} chunks ({report.index_path})"
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
    line += f" -> {report.index_path}"
    if report.unstructured:
        languages = ", ".join(sorted(report.unstructured, key=lambda k: (-report.unstructured[k], k)))
        line += (f"\n{sum(report.unstructured.values())} files chunked as paragraphs: "
                 f"pip install 'rag-code[languages]' for {languages} structure (the next ingest then re-chunks them)")
    return line


def _question(words: tuple[str, ...]) -> str:
    # bytes that are not UTF-8 (a Latin-1 terminal) reach Python as lone surrogates, which
    # nothing downstream can encode: they become U+FFFD, as in indexed files
    question = " ".join(words).encode("utf-8", "surrogateescape").decode("utf-8", "replace").strip()
    if not question:
        raise InputError("The question is empty — ask something, e.g. query.py \"how are passages scored?\"")
    return question


@main.command("query")
@click.argument("question", nargs=-1)
@index_option
@click.option("-k", "--top-k", type=click.IntRange(1), default=DEFAULT_TOP_K, show_default=True,
              help="How many passages to retrieve.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--no-llm", is_flag=True, help="Retrieve passages only; do not call a model.")
@click.option("--explain", is_flag=True, help="Show which query terms matched each passage and how much.")
@click.option("--backend", "backend_name", type=click.Choice(BACKENDS), default="auto", show_default=True,
              envvar="RAG_BACKEND",
              help="Who answers: auto = anthropic if ANTHROPIC_API_KEY is set, else claude if on PATH, "
                   "else none.")
@click.option("--model", default=DEFAULT_MODEL, show_default=True, envvar="RAG_MODEL",
              help="Model that answers (anthropic and claude backends).")
@click.option("--show-prompt", is_flag=True,
              help="Print exactly what would be sent to the backend, then stop.")
@click.option("--prompt-only", is_flag=True,
              help="Print only the prompt, for a pipe: query.py --prompt-only QUESTION | claude -p")
@as_option
@click.option("--refresh", is_flag=True, help="Re-ingest files changed since the index was built, then answer.")
@scoring_option
def query_cmd(
    question: tuple[str, ...], index_path: str | None, top_k: int, as_json: bool, no_llm: bool,
    explain: bool, backend_name: str, model: str, show_prompt: bool, prompt_only: bool,
    groups: tuple[str, ...], refresh: bool, scoring: str,
) -> None:
    """Answer QUESTION from the indexed code, citing the passages the answer rests on."""
    from .retrieve import Request

    request = Request(_question(question), top_k, explain, frozenset(groups), refresh, scoring)
    if no_llm + show_prompt + prompt_only > 1:
        raise click.UsageError("--no-llm, --show-prompt and --prompt-only do not combine — pick one")
    if (show_prompt or prompt_only) and (as_json or explain):
        raise click.UsageError("--show-prompt and --prompt-only print the prompt alone, without --json or "
                               "--explain — drop one, or use --no-llm for passages as JSON or explained")
    from .answer import ask

    text = request.question
    if no_llm:
        hits = ask(locate_index(index_path), request, build_prompt=False, on_retrieved=_notes).retrieval.hits
        _out(format_hits_json(text, hits, explain) if as_json else format_hits(hits, explain), exact=as_json)
        return
    from .answer import INCOMPLETE
    from .backends import render_text_prompt, resolve_backend
    from .errors import BackendError

    # resolved before searching, so that a missing key or `claude` fails fast
    backend = None if prompt_only else resolve_backend(backend_name, model)
    generates = backend is not None and not show_prompt
    outcome = ask(locate_index(index_path), request, backend if generates else None, on_retrieved=_notes,
                  on_text=None if as_json else _stream)
    hits, prompt, result = outcome.retrieval.hits, outcome.prompt, outcome.answer
    if prompt is None:  # nothing retrieved
        if prompt_only:
            _out(NO_CONTEXT_MESSAGE, err=True)
        elif as_json and result is not None:
            _out(format_answer_json(result), exact=True)
        elif as_json:
            _out(format_unanswered_json(text, [], None, explain), exact=True)
        else:
            _out(NO_CONTEXT_MESSAGE)
        return
    if prompt_only:
        _out(prompt.text)  # exact through a pipe (`| claude -p`), visible on a terminal
    elif show_prompt:
        _out(backend.render(prompt) if backend else render_text_prompt(prompt))
    elif result is None:
        if as_json:
            _out(format_unanswered_json(text, hits, prompt.text, explain), exact=True)
        else:
            _out(f"{format_hits(hits, explain)}\n\n--- prompt ---\n{prompt.text}\n")
        _out(NO_BACKEND_HINT, err=True)
    else:
        _out(format_answer_json(result, explain) if as_json else format_sources(result), exact=as_json)
        if not as_json:
            _out(format_usage(result), err=True)
        if result.stop_reason in INCOMPLETE:
            raise BackendError(INCOMPLETE[result.stop_reason])


def _notes(found: Retrieval) -> None:
    """Print what the caller should know about the index's freshness, on stderr."""
    if found.gone is not None:
        _out(f"Note: {one_line(found.gone)}, the repository this index was built from, is gone: the passages are "
                   "as indexed — re-run `python ingest.py REPO` with its new path", err=True)
    if found.changed:
        shown = ", ".join(map(one_line, found.changed[:3])) + (", ..." if len(found.changed) > 3 else "")
        _out(f"Note: {len(found.changed)} indexed file(s) or folder(s) changed since ingest ({shown}) "
                   "— re-run ingest or pass --refresh", err=True)


@main.command("eval")
@click.argument("questions", type=click.Path())
@index_option
@click.option("--corpus-root", type=click.Path(exists=True, file_okay=False),
              help="Run a question that names a corpus against DIR/<corpus> (indexed first if needed).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--misses", is_flag=True,
              help="Also list questions with no hit in the top K, what came back instead, and why.")
@click.option("-k", "--top-k", type=click.IntRange(1), default=DEFAULT_TOP_K, show_default=True,  # = evaluate.MISS_K
              help="A question is a miss when no hit is in its top K passages (at most 10).")
@click.option("--full", is_flag=True, help="Rebuild corpus indexes from scratch (with --corpus-root).")
@as_option
@scoring_option
def eval_cmd(
    questions: str, index_path: str | None, corpus_root: str | None, as_json: bool, misses: bool,
    top_k: int, full: bool, groups: tuple[str, ...], scoring: str,
) -> None:
    """Score retrieval on QUESTIONS.jsonl: hit@1/4/10, MRR@10 and top-4 passage size, per corpus."""
    from pathlib import Path

    from .evaluate import DEPTH, format_misses, format_table, report_dict, run_eval

    if top_k > DEPTH:
        raise click.BadParameter(f"{top_k} is more than the {DEPTH} passages scored — use 1 to {DEPTH}",
                                 param_hint="'-k'")
    if corpus_root and index_path:
        raise click.UsageError("--corpus-root finds each corpus's index, --index names one — pick one")
    if full and not corpus_root:
        raise click.UsageError("--full rebuilds the corpus indexes of --corpus-root — pass it, or run "
                               "`python ingest.py REPO --full` for another index")
    report = run_eval(Path(questions), Path(index_path) if index_path else None,
                      Path(corpus_root) if corpus_root else None, top_k, explain=misses, full=full, scoring=scoring,
                      groups=frozenset(groups), on_ingest=lambda r: _out(format_ingest_report(r), err=True))
    if as_json:
        _out(json.dumps(report_dict(report, misses), ensure_ascii=False), exact=True)
    else:
        _out(format_table(report))
        if misses:
            _out("\n" + format_misses(report))


def format_unanswered_json(question: str, hits: list[Hit], prompt: str | None, explain: bool = False) -> str:
    """Return the answer JSON shape for the `none` backend: passages and prompt (None without
    passages), no answer."""
    from .answer import NO_CONTEXT

    return json.dumps({"question": question, "answer": None, "citations": [],
                       "results": [hit_dict(i, h, explain) for i, h in enumerate(hits, 1)],
                       "backend": "none", "model": None, "usage": None,
                       "stop_reason": None if hits else NO_CONTEXT, "prompt": prompt}, ensure_ascii=False)


def hit_dict(rank: int, hit: Hit, explain: bool = False) -> dict[str, Any]:
    """Return a hit in the JSON shape scripts rely on."""
    c = hit.chunk
    out: dict[str, Any] = {
        "rank": rank, "score": hit.score, "path": c.path, "start_line": c.start_line,
        "end_line": c.end_line, "chunk": c.ordinal, "kind": c.kind, "symbol": c.symbol, "text": c.text,
        "demoted": hit.demoted,  # ranked at rerank.TEST_FACTOR of its score, and why
    }
    if explain:
        out["explain"] = [t._asdict() for t in hit.contributions]
    return out


def format_hits_json(question: str, hits: list[Hit], explain: bool = False) -> str:
    """Return the retrieval result as one JSON object."""
    results = [hit_dict(i, h, explain) for i, h in enumerate(hits, 1)]
    return json.dumps({"question": question, "results": results}, ensure_ascii=False)


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
        lines = [f"{rank}. {hit.score:.4f}  {one_line(c.path)}:{c.start_line}-{c.end_line}{label}{ranked}"]
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
    used = (f"; {tokens['input_tokens']} input + {tokens['output_tokens']} output tokens"
            if "input_tokens" in tokens and "output_tokens" in tokens else "")
    return f"({result.model} via {result.backend}{used})"


def format_answer_json(result: Answer, explain: bool = False) -> str:
    """Return an answer as one JSON object: answer, checked citations, and the passages sent."""
    return json.dumps({
        "question": result.question,
        "answer": result.text,
        "citations": [c._asdict() for c in result.citations],
        "results": [hit_dict(i, h, explain) for i, h in enumerate(result.hits, 1)],
        "backend": result.backend,
        "model": result.model,
        "usage": result.usage,
        "stop_reason": result.stop_reason,
    }, ensure_ascii=False)
