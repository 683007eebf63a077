"""Command-line interface: parse options, call one library function, format the result."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .errors import RagError
from .index import Index, locate_index, remember_index
from .search import DEFAULT_TOP_K, Hit, search
from .tokens import MODES, TokenizerSettings

if TYPE_CHECKING:
    from .pipeline import IngestReport


class RagCommand(click.Command):
    """A command whose user-fixable errors print one line and exit 1, without a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RagError as exc:
            raise click.ClickException(str(exc)) from None
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            ctx.exit(130)


class RagGroup(click.Group):
    """The `rag` command group; its commands use RagCommand."""

    command_class = RagCommand


index_option = click.option(
    "--index", "index_path", type=click.Path(path_type=Path), envvar="RAG_INDEX",
    help="Index file to use (default: REPO/.rag/index.sqlite, found from the current directory).",
)


@click.group(cls=RagGroup)
def main() -> None:
    """Ask questions about a codebase, answered from its own code."""


@main.command("ingest")
@click.argument("repo", type=click.Path(path_type=Path))
@index_option
@click.option("--tokenizer", type=click.Choice(MODES), default=TokenizerSettings().mode, show_default=True,
              help="code: split identifiers and stem; plain: lowercase words only.")
@click.option("--include", multiple=True, metavar="GLOB", help="Index only paths matching GLOB (repeatable).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip paths matching GLOB (repeatable).")
@click.option("--max-file-size", "max_bytes", type=click.IntRange(1), default=lambda: _files().DEFAULT_MAX_BYTES,
              show_default="1 MB", help="Skip files larger than this many bytes.")
@click.option("--full", is_flag=True, help="Rebuild from scratch instead of reusing unchanged files.")
@click.option("--workers", type=click.IntRange(1), default=None, help="Processes to use (default: all cores).")
def ingest_cmd(
    repo: Path, index_path: Path | None, tokenizer: str, include: tuple[str, ...],
    exclude: tuple[str, ...], max_bytes: int, full: bool, workers: int | None,
) -> None:
    """Index REPO so that questions can be asked about it."""
    from .pipeline import ingest  # the pipeline is only loaded by the command that needs it

    settings = TokenizerSettings(mode=tokenizer)
    bar: Any = None

    def on_start(total: int) -> None:
        nonlocal bar
        if sys.stderr.isatty() and total:
            bar = click.progressbar(length=total, label="Indexing", file=sys.stderr)
            bar.__enter__()

    def progress(n: int) -> None:
        if bar is not None:
            bar.update(n)

    try:
        report = ingest(repo, index_path, settings, include, exclude, max_bytes, workers, full,
                        progress, on_start)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    remember_index(Path.cwd(), report.index_path)
    click.echo(format_ingest_report(report))


def _files() -> Any:
    from . import files  # imported when the ingest command runs, not by every query

    return files


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
    return f"{line} -> {report.index_path}"


def _question(words: tuple[str, ...]) -> str:
    question = " ".join(words).strip()
    if not question:
        raise click.BadParameter("the question is empty — ask something, e.g. \"how are passages scored?\"",
                                 param_hint="QUESTION")
    return question


@main.command("query")
@click.argument("question", nargs=-1)
@index_option
@click.option("-k", "--top-k", type=click.IntRange(1), default=DEFAULT_TOP_K, show_default=True,
              help="How many passages to retrieve.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--no-llm", is_flag=True, help="Retrieve passages only; do not call a model.")
@click.option("--explain", is_flag=True, help="Show which query terms matched each passage and how much.")
def query_cmd(
    question: tuple[str, ...], index_path: Path | None, top_k: int, as_json: bool, no_llm: bool,
    explain: bool,
) -> None:
    """Answer QUESTION from the indexed code (retrieval: the top passages with scores)."""
    text = _question(question)
    with Index(locate_index(index_path)) as index:
        hits = search(index, text, top_k, explain=explain)
    click.echo(format_hits_json(text, hits, explain) if as_json else format_hits(hits, explain))


def hit_dict(rank: int, hit: Hit, explain: bool = False) -> dict[str, Any]:
    """Return a hit in the JSON shape scripts rely on."""
    c = hit.chunk
    out: dict[str, Any] = {
        "rank": rank, "score": hit.score, "path": c.path, "start_line": c.start_line,
        "end_line": c.end_line, "chunk": c.ordinal, "kind": c.kind, "symbol": c.symbol, "text": c.text,
    }
    if explain:
        out["explain"] = [asdict(t) for t in hit.contributions]
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
        label = f" {c.symbol} ({c.kind})" if c.symbol else ""
        lines = [f"{rank}. {hit.score:.4f}  {c.path}:{c.start_line}-{c.end_line}{label}"]
        if explain:
            lines.extend(
                f"     {t.term}: idf {t.idf:.3f} x tf {t.tf} -> weight {t.weight:.4f}, "
                f"score {t.score:.4f} ({t.score / hit.score:.0%})"
                for t in hit.contributions
            )
        body = f"{c.context}\n{c.text}" if c.context and not c.text.startswith(c.context) else c.text
        lines.extend("    " + line for line in body.splitlines())
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _standalone(command: click.Command) -> Callable[[], None]:
    def run() -> None:
        command.main(prog_name=Path(sys.argv[0]).name)

    return run


ingest_main = _standalone(ingest_cmd)
query_main = _standalone(query_cmd)
