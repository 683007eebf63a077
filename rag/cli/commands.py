"""The `rag` commands: each resolves its options, calls one library function and formats the result.

Modules a command alone needs (the ingest pipeline, the answer flow, the MCP server) are imported
inside it, so that `query.py` starts without them."""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import click
from click.core import ParameterSource

from rag.answer.defaults import (
    BACKENDS,
    DEFAULT_FOLLOW_UPS,
    DEFAULT_MODEL,
    DEFAULT_SEARCH,
    FOLLOW_UPS_ENV,
    MAX_FOLLOW_UPS,
    SEARCH_MODEL_ENV,
    SEARCH_MODES,
)
from rag.cli.options import (
    ASK_AS,
    RagGroup,
    as_option,
    cluster_option,
    index_option,
    indexes_option,
    quiet_option,
    rerank_option,
    scoring_option,
    top_k_option,
    version_option,
)
from rag.cli.output import (
    NO_CONTEXT_MESSAGE,
    NO_RELATED,
    AnswerStream,
    format_answer_json,
    format_explained,
    format_hits,
    format_hits_json,
    format_related_json,
    format_sources,
    format_status,
    format_unanswered_json,
    format_usage,
    no_backend_hint,
    out,
    plan_about,
    plan_note,
    searched_again_line,
    source_line,
    stderr_is_terminal,
    stdout_is_terminal,
    text_notes,
)
from rag.cli.progress import ProgressLine
from rag.cli.report import about, after_ingest_lines, format_ingest_report
from rag.errors import InputError, command, run_as
from rag.semantic.registry import install_hint
from rag.store.paths import find_indexes, locate_index
from rag.text.tokenizer import TOKENIZER_MODES, TokenizerSettings

if TYPE_CHECKING:
    from rag.answer.ask import Outcome
    from rag.answer.backends import Backend
    from rag.retrieval.retrieve import Retrieval


@click.group(cls=RagGroup)
@version_option
@click.pass_context
def main(ctx: click.Context) -> None:
    """Ask questions about a codebase, answered from its own code."""
    # the hints name commands as the user runs them: `python -m rag ingest` (click's name for
    # `python -m rag`), else `rag ingest`, whatever the console script's path
    run_as("python -m rag" if ctx.info_name == "python -m rag" else "rag")


@main.command("ingest")
@click.argument("repo", type=click.Path(), required=False)
@index_option
@click.option(
    "--workspace",
    type=click.Path(),
    envvar="RAG_WORKSPACE",
    help="Ingest each repository a workspace lists (a file of repository folders or index files, or a "
    "folder of them) instead of REPO.",
)
@cluster_option
@click.option(
    "--tokenizer",
    type=click.Choice(TOKENIZER_MODES),
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
    "--embed",
    is_flag=True,
    help="With the semantic extra: compute every passage's vector before returning, so that no query "
    "need embed any. [default: queries embed the passages they rank, once each]",
)
def ingest_cmd(
    repo: str | None,
    index_path: str | None,
    workspace: str | None,
    cluster: str | None,
    tokenizer: str | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    max_bytes: int | None,
    full: bool,
    workers: int | None,
    quiet: bool,
    embed: bool,
) -> None:
    """Index REPO so that questions can be asked about it (--workspace: each repository of a workspace)."""
    from rag.indexing.options import IngestOptions
    from rag.indexing.pipeline import ingest  # the pipeline is only loaded by the command that needs it
    from rag.store.state import remember_index

    if (repo is None) == (workspace is None):
        raise click.UsageError("Give REPO, or --workspace FILE to ingest each repository it lists")
    if workspace is not None:
        if index_path is not None:
            raise click.UsageError("--index names one index; a workspace names each repository's own")
        from rag.indexing.workspace import ingest_workspace, repositories

        if cluster:  # one Ray task a repository
            from rag.retrieval.cluster import ingest_on_cluster

            reports = ingest_on_cluster(cluster, repositories(workspace), full)
        else:
            reports = ingest_workspace(workspace, full=full, workers=workers)
        for report in reports:
            if not quiet:
                out(format_ingest_report(report))
        return
    if cluster and not from_environment("cluster"):
        raise click.UsageError("--cluster ingests a workspace's repositories in Ray tasks — pass --workspace")
    assert repo is not None
    options = IngestOptions(
        TokenizerSettings(mode=tokenizer) if tokenizer else None,
        include or None,
        exclude or None,
        max_bytes,
        workers,
        full,
    )
    line = None if quiet or not stderr_is_terminal() else ProgressLine(sys.stderr)
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
        out(format_ingest_report(report))
    from rag.semantic.embed import after_ingest

    after = after_ingest(report.index_path, embed)
    for text in [] if quiet else after_ingest_lines(after, report.chunks):
        out(text, err=text.startswith("Note:"))


def _question(words: tuple[str, ...]) -> str:
    # bytes that are not UTF-8 (a Latin-1 terminal) reach Python as lone surrogates, which
    # nothing downstream can encode: they become U+FFFD, as in indexed files
    question = " ".join(words).encode("utf-8", "surrogateescape").decode("utf-8", "replace").strip()
    if not question:
        raise InputError(
            f'The question is empty — ask something, e.g. {command("query")} "how are passages scored?"'
        )
    return question


@main.command("query")
@click.argument("question", nargs=-1)
@indexes_option
@top_k_option("How many passages to retrieve.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--no-llm", is_flag=True, help="Retrieve passages only; do not call a model.")
@click.option("--explain", is_flag=True, help="Show which query terms matched each passage and how much.")
@click.option(
    "--brief/--full",
    default=None,
    help="Show each passage's matched lines and those beside them, or its whole context. "
    "[default: --brief on a terminal, --full in a pipe]",
)
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
    help="Print only the prompt, for a pipe into a model: --prompt-only QUESTION | claude -p",
)
@click.option(
    "--search",
    type=click.Choice(SEARCH_MODES),
    default=DEFAULT_SEARCH,
    show_default=True,
    envvar="RAG_SEARCH",
    help="Who writes the search: planned = the model that answers turns the question into keyword "
    "searches first (one short call); question = the question's own words alone.",
)
@click.option(
    "--search-model",
    default=None,
    envvar=SEARCH_MODEL_ENV,
    help="Model that plans the search. [default: the newest Claude Haiku the installed SDK lists]",
)
@click.option(
    "--follow-ups",
    type=click.IntRange(0, MAX_FOLLOW_UPS),
    default=DEFAULT_FOLLOW_UPS,
    show_default=True,
    envvar=FOLLOW_UPS_ENV,
    help="Searches the answering model may make of its own before it answers, when the passages lack "
    "something (0: answer from the first passages alone).",
)
@as_option(ASK_AS)
@click.option(
    "--refresh", is_flag=True, help="Re-ingest files changed since the index was built, then answer."
)
@scoring_option
@rerank_option
@quiet_option
def query_cmd(
    question: tuple[str, ...],
    index_paths: tuple[str, ...],
    workspace: str | None,
    cluster: str | None,
    top_k: int,
    as_json: bool,
    no_llm: bool,
    explain: bool,
    brief: bool | None,
    backend_name: str,
    model: str,
    show_prompt: bool,
    prompt_only: bool,
    search: str,
    search_model: str | None,
    follow_ups: int,
    groups: tuple[str, ...],
    refresh: bool,
    scoring: str,
    rerank: str,
    quiet: bool,
) -> None:
    """Answer QUESTION from the indexed code, citing the passages the answer rests on. When a model
    answers, it first turns the question into keyword searches (--search)."""
    from rag.retrieval.retrieve import Request

    request = Request(_question(question), top_k, explain, frozenset(groups), refresh, scoring, rerank)
    located = find_indexes(index_paths, workspace, cluster=cluster_asked(cluster, index_paths, workspace))
    retrieved: list[Retrieval] = []

    def notes(found: Retrieval) -> None:
        retrieved.append(found)
        text_notes(found, located.remembered, quiet)

    _check_modes(no_llm, show_prompt, prompt_only, as_json, explain)
    from rag.answer.ask import ask

    text = request.question
    if no_llm:
        found = ask(located.path, request, build_prompt=False, on_retrieved=notes).retrieval
        out(_passages(text, found, as_json, explain, brief), exact=as_json)
        return
    from rag.answer.ask import Planning
    from rag.answer.backends import resolve_backend
    from rag.errors import BackendError

    # resolved before searching, so that a missing key or `claude` fails fast
    backend = None if prompt_only else resolve_backend(backend_name, model)
    generates = backend is not None and not show_prompt
    planning = None
    if search == "planned" and (generates or show_prompt):
        # --show-prompt shows the planning prompt, even with no model to send it to
        planning = Planning(backend if generates else None, search_model)
    answer_stream = AnswerStream()
    try:
        outcome = ask(
            located.path,
            request,
            backend if generates else None,
            planning=planning,
            on_retrieved=notes,
            on_planned=lambda plan: out(plan_note(plan), err=True),
            on_text=None if as_json else answer_stream.write,
            # --prompt-only prints the single round's prompt, for a model that has no tool
            follow_ups=0 if backend is None else follow_ups,
            on_search=lambda words: out(searched_again_line(words), err=True),
            # the answer shows at once: what precedes a search is erased again, or set apart
            on_retract=None if as_json else answer_stream.retract,
        )
    except BackendError:
        # the search succeeded and the model did not answer (unreachable, refused the key, ...): the
        # passages are still worth reading, before the error (--json: stdout stays empty)
        if retrieved and retrieved[0].hits and not as_json:
            out(
                ("\n\n" if answer_stream.started else "")
                + format_hits(retrieved[0].hits, explain, brief=_brief(brief, explain))
            )
        raise
    _show_outcome(outcome, text, as_json, explain, brief, prompt_only, show_prompt, backend, search_model)


def _check_modes(no_llm: bool, show_prompt: bool, prompt_only: bool, as_json: bool, explain: bool) -> None:
    """Refuse the options of `rag query` that do not combine."""
    if no_llm + show_prompt + prompt_only > 1:
        raise click.UsageError("--no-llm, --show-prompt and --prompt-only do not combine — pick one")
    if (show_prompt or prompt_only) and (as_json or explain):
        raise click.UsageError(
            "--show-prompt and --prompt-only print the prompt alone, without --json or "
            "--explain — drop one, or use --no-llm for passages as JSON or explained"
        )


def _show_outcome(
    outcome: Outcome,
    text: str,
    as_json: bool,
    explain: bool,
    brief: bool | None,
    prompt_only: bool,
    show_prompt: bool,
    backend: Backend | None,
    search_model: str | None,
) -> None:
    """Print what `rag query` answered: the answer and its sources, the passages alone, or the prompt."""
    from rag.answer.backends import render_text_prompt
    from rag.answer.citations import INCOMPLETE
    from rag.errors import BackendError

    hits, prompt, result = outcome.retrieval.hits, outcome.prompt, outcome.answer
    extra = {**about(outcome.retrieval), **plan_about(outcome.plan)}
    if prompt is None:  # nothing retrieved
        if prompt_only:
            out(NO_CONTEXT_MESSAGE, err=True)
        elif as_json and result is not None:
            out(format_answer_json(result, False, extra), exact=True)
        elif as_json:
            out(format_unanswered_json(text, [], None, explain, extra), exact=True)
        else:
            out(NO_CONTEXT_MESSAGE)
        return
    if prompt_only:
        out(prompt.text)  # exact through a pipe (`| claude -p`), visible on a terminal
    elif show_prompt:
        if outcome.plan_prompt is not None:
            from rag.answer.plan import PLAN_MAX_TOKENS
            from rag.answer.plan import search_model as default_search_model

            name = search_model or default_search_model()
            out(f"=== search planning: sent first, to {name} ===")
            out(
                backend.render_completion(outcome.plan_prompt, model=name, max_tokens=PLAN_MAX_TOKENS)
                if backend
                else render_text_prompt(outcome.plan_prompt)
            )
            out("=== answer: its passages are those of the planned search; here, the question's own ===")
        out(backend.render(prompt) if backend else render_text_prompt(prompt))
    elif result is None:
        # the passages alone: the prompt repeats them (--show-prompt prints it; JSON keeps "prompt")
        if as_json:
            out(format_unanswered_json(text, hits, prompt.text, explain, extra), exact=True)
        else:
            out(format_hits(hits, explain, brief=_brief(brief, explain)))
        out(no_backend_hint(), err=True)
    else:
        out(format_answer_json(result, explain, extra) if as_json else format_sources(result), exact=as_json)
        if explain and not as_json:
            out(format_explained(result.sent))
        if not as_json:
            out(format_usage(result, outcome.plan), err=True)
        if result.stop_reason in INCOMPLETE:
            raise BackendError(INCOMPLETE[result.stop_reason])


def _passages(text: str, found: Retrieval, as_json: bool, explain: bool, brief: bool | None) -> str:
    """The passages `rag query --no-llm` prints: JSON, or text, brief or full."""
    if as_json:
        return format_hits_json(text, found.hits, explain, about(found))
    return format_hits(found.hits, explain, brief=_brief(brief, explain))


def _brief(brief: bool | None, explain: bool) -> bool:
    """--brief/--full as asked; unasked, brief on a terminal (a reader) and full in a pipe (a
    script), and full with --explain."""
    if brief is not None:
        return brief
    return not explain and stdout_is_terminal()


def _location(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, int]:
    """PATH:LINE, a line of a file (counted from 1), as (path, line)."""
    path, colon, line = value.rpartition(":")
    if not colon:
        raise click.BadParameter(f"{value!r} names no line; give PATH:LINE, e.g. {value}:1")
    if not path:
        raise click.BadParameter(f"{value!r} names no file; give PATH:LINE, e.g. src/app.py{value}")
    if not line.isdecimal() or int(line) < 1:
        raise click.BadParameter(f"{line!r} in {value!r} is not a line number; lines count from 1")
    return path, int(line)


@main.command("related")
@click.argument("location", metavar="PATH:LINE", callback=_location)
@indexes_option
@top_k_option("How many passages to return.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--brief/--full",
    default=None,
    help="Show each passage's first lines, or its whole context. [default: --brief on a terminal]",
)
@as_option("Search as a member of GROUP, seeing files .rag-access grants it")
@click.option(
    "--refresh", is_flag=True, help="Re-ingest files changed since the index was built, then search."
)
@scoring_option
@rerank_option
@quiet_option
def related_cmd(
    location: tuple[str, int],
    index_paths: tuple[str, ...],
    workspace: str | None,
    cluster: str | None,
    top_k: int,
    as_json: bool,
    brief: bool | None,
    groups: tuple[str, ...],
    refresh: bool,
    scoring: str,
    rerank: str,
    quiet: bool,
) -> None:
    """List the passages most like the one that holds LINE of PATH (PATH relative to the indexed
    repository, or a path inside it), that passage and those overlapping it left out."""
    from rag.retrieval.related import related

    path, line = location
    located = find_indexes(index_paths, workspace, cluster=cluster_asked(cluster, index_paths, workspace))
    result = related(
        located.path,
        path,
        line,
        top_k,
        groups=frozenset(groups),
        scoring=scoring,
        rerank=rerank,
        refresh_first=refresh,
    )
    found = result.found
    text_notes(found, located.remembered, quiet)
    if as_json:
        out(format_related_json(result.source, found.hits, about(found)), exact=True)
        return
    out(source_line(result.source), err=True)
    out(format_hits(found.hits, none=NO_RELATED, brief=_brief(brief, False)))


@main.command("eval")
@click.argument("questions", type=click.Path())
@indexes_option
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
# its default is evaluate.MISS_K
@top_k_option("A question is a miss when no hit is in its top K passages (at most 10).")
@click.option("--full", is_flag=True, help="Rebuild corpus indexes from scratch (with --corpus-root).")
@as_option(ASK_AS)
@scoring_option
@rerank_option
def eval_cmd(
    questions: str,
    index_paths: tuple[str, ...],
    workspace: str | None,
    cluster: str | None,
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

    from rag.cli.eval_output import format_misses, format_table
    from rag.evaluation import EVAL_DEPTH, report_dict, run_eval

    if top_k > EVAL_DEPTH:
        raise click.BadParameter(
            f"{top_k} is more than the {EVAL_DEPTH} passages scored — use 1 to {EVAL_DEPTH}",
            param_hint="'-k'",
        )
    if corpus_root and (index_paths or workspace or cluster):
        raise click.UsageError("--corpus-root finds each corpus's index, --index names one — pick one")
    if full and not corpus_root:
        raise click.UsageError(
            "--full rebuilds the corpus indexes of --corpus-root — pass it, or run "
            f"`{command('ingest')} REPO --full` for another index"
        )
    report = run_eval(
        Path(questions),
        find_indexes(index_paths, workspace, cluster=cluster_asked(cluster, index_paths, workspace)).path
        if index_paths or workspace or cluster
        else None,
        Path(corpus_root) if corpus_root else None,
        top_k,
        explain=misses,
        full=full,
        scoring=scoring,
        groups=frozenset(groups),
        rerank=rerank,
        on_ingest=lambda r: out(format_ingest_report(r), err=True),
    )
    if not as_json and (hint := install_hint(rerank)) is not None:  # figures without the stage
        out(hint, err=True)
    for note in report.notes:
        out(note, err=True)
    if not report.outcomes:  # figures over no question would read as a retrieval that finds nothing
        first = report.label_errors[0]
        raise InputError(
            f"No question could be scored: none of the {len(report.unscored)} has an answer whose path is in "
            f"the index (the first: {first.answer.path}, line {first.line} of {questions}) — give paths "
            "relative to the repository root, or pass the index of that repository"
        )
    if as_json:
        out(json.dumps(report_dict(report, misses), ensure_ascii=False), exact=True)
    else:
        out(format_table(report))
        if misses:
            out("\n" + format_misses(report))


@main.command("status")
@indexes_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--skipped", "list_skipped", is_flag=True, help="Also list the skipped files, by reason.")
@as_option("Count what a member of GROUP may read: public files and those .rag-access grants it")
def status_cmd(
    index_paths: tuple[str, ...],
    workspace: str | None,
    cluster: str | None,
    as_json: bool,
    list_skipped: bool,
    groups: tuple[str, ...],
) -> None:
    """Describe the index: repository, format, files and chunks by chunker, skips, redactions, stale
    files (a workspace: each repository's index in turn)."""
    from rag.status import statuses, statuses_dict

    if cluster and not from_environment("cluster"):  # (RAG_CLUSTER is for the commands that search)
        raise InputError(
            "`status` reads the indexes where they are — run it with --workspace on the machine that holds them"
        )
    reports = statuses(find_indexes(index_paths, workspace).path, frozenset(groups))
    if as_json:
        out(json.dumps(statuses_dict(reports, list_skipped), ensure_ascii=False), exact=True)
    else:
        out("\n\n".join(format_status(report, list_skipped) for report in reports))


@main.command("mcp")
@indexes_option
@as_option("Search as a member of GROUP")
def mcp_cmd(
    index_paths: tuple[str, ...], workspace: str | None, cluster: str | None, groups: tuple[str, ...]
) -> None:
    """Serve the index to an MCP client (Claude Code, ...) over stdio: tools search, related, status,
    reindex."""
    from rag.cli.mcp_server import INSTALL_HINT, available, serve
    from rag.retrieval.opening import open_index

    if not available():
        raise click.ClickException(INSTALL_HINT)
    # every tool would fail without an index: refuse to start, in the one line a query would print
    where = (
        find_indexes(index_paths, workspace, cluster=cluster_asked(cluster, index_paths, workspace)).path
        if index_paths or workspace or cluster
        else None
    )
    with open_index(where if where is not None else locate_index(None)):
        pass
    serve(where, frozenset(groups))


@main.command("serve")
@indexes_option
@click.option(
    "--actors",
    type=click.IntRange(1),
    default=2,
    show_default=True,
    help="Ray actors to hold the repositories, each some of them (balanced by their chunks).",
)
def serve_cmd(index_paths: tuple[str, ...], workspace: str | None, cluster: str | None, actors: int) -> None:
    """Place a workspace's indexes on the actors of the Ray cluster at --cluster, for `query --cluster`
    and `mcp --cluster`; serve until interrupted (the actors end with this command)."""
    if not cluster:
        raise click.UsageError("Name the Ray cluster to serve on: --cluster HOST:PORT (or RAG_CLUSTER)")
    where = find_indexes(index_paths, workspace).path
    from rag.retrieval.cluster import serve, wait_forever

    served, stop = serve((where,) if isinstance(where, str) else where, cluster, actors)
    held = sum(len(names) for _, names in served.actors)
    out(
        f"Serving {held} repositories on {len(served.actors)} actors of the Ray cluster at {cluster} — "
        "stop with Ctrl-C",
        err=True,
    )
    for name, names in served.actors:
        out(f"  {name}: {', '.join(names)}", err=True)
    signal.signal(signal.SIGTERM, lambda *_: _interrupt())
    try:
        wait_forever()
    except KeyboardInterrupt:
        pass
    finally:
        stop()


def _interrupt() -> None:
    raise KeyboardInterrupt


def from_environment(name: str) -> bool:
    """Whether the current command's option `name` took its value from its environment variable."""
    return click.get_current_context().get_parameter_source(name) is ParameterSource.ENVIRONMENT


def cluster_asked(cluster: str | None, index_paths: tuple[str, ...], workspace: str | None) -> str | None:
    """The cluster a reading command asks: --cluster, or RAG_CLUSTER unless indexes are named here."""
    if cluster and (index_paths or workspace) and from_environment("cluster"):
        return None
    return cluster


def _standalone(script: click.Command) -> Callable[[], None]:
    def run() -> None:
        run_as(sys.argv[0])  # the script's path as typed: its hints name the script beside it
        try:
            script.main(prog_name=os.path.basename(sys.argv[0]))
        finally:
            # the process ends next: the interpreter's last garbage collection would walk every
            # object its imports made (click's, rag's, numpy's) only to free what the exit frees
            # anyway; frozen objects are not walked (docs/benchmarks.md: 16 ms of a 200 ms query)
            gc.freeze()

    return run


ingest_main = _standalone(ingest_cmd)
query_main = _standalone(query_cmd)
