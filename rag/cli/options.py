"""The options commands share, and the exit policy: a user's mistake is one line and exit 1, a bad
flag one line and exit 2, a fault in rag one line naming it (RAG_DEBUG=1: the traceback)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from rag.cli.report import internal_error
from rag.cli.terminal import one_line
from rag.errors import RagError
from rag.retrieval.search import DEFAULT_SCORING, DEFAULT_TOP_K, SCORINGS
from rag.semantic.registry import DEFAULT_MODE as DEFAULT_RERANK
from rag.semantic.registry import RERANK_MODES

FC = TypeVar("FC", bound=Callable[..., Any] | click.Command)  # what click.option decorates

# RAG_DEBUG=1: every error prints its full traceback (a user-facing one too)
DEBUG_ENV = "RAG_DEBUG"


def _debug() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def usage_line(exc: click.UsageError) -> click.UsageError:
    """The same usage error (exit 2), shown as one line that names the help instead of
    click's usage block; a command run bare (`rag`) still prints its help."""
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):
        return exc
    where = f" — see `{exc.ctx.command_path} --help`" if exc.ctx is not None else ""
    return click.UsageError(exc.format_message().rstrip(".") + where)


class _OneLineUsage(click.Command):
    """Usage errors found while parsing the command line, shown as one line (usage_line)."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:
            raise usage_line(exc) from None


class RagCommand(_OneLineUsage):
    """A command whose user-fixable errors print one line and exit 1 (a bad option: 2), without
    a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            if _debug():
                raise
            raise usage_line(exc) from None
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
            raise click.ClickException(internal_error(exc)) from None


class RagGroup(_OneLineUsage, click.Group):
    """The `rag` command group; its commands use RagCommand."""

    command_class = RagCommand

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:  # `rag nosuch`
            raise usage_line(exc) from None


DISTRIBUTION = "rag-code"  # the name rag is installed under (pyproject.toml)


def rag_version() -> str:
    """Return rag's version: the installed distribution's, else that of the checkout's pyproject.toml
    beside the package (run from a checkout that was never installed), else "unknown"."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        pass
    import tomllib

    pyproject = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "pyproject.toml")
    try:
        with open(pyproject, "rb") as fh:
            project = tomllib.load(fh)["project"]
        if project["name"] == DISTRIBUTION:
            return f"{project['version']} (a checkout, not installed)"
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return "unknown"


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"rag {rag_version()}")
        ctx.exit()


version_option = click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Print rag's version and exit.",
)


index_option = click.option(
    "--index",
    "index_path",
    type=click.Path(),
    envvar="RAG_INDEX",
    help="Index file to use (default: REPO/.rag/index.sqlite, found from the current directory).",
)


def indexes_option(function: FC) -> FC:
    """--index, repeatable (RAG_INDEX: a list split like PATH), --workspace (RAG_WORKSPACE) and
    --cluster (RAG_CLUSTER): the indexes a reading command searches as one
    (rag.store.paths.find_indexes)."""
    function = cluster_option(function)
    function = click.option(
        "--workspace",
        type=click.Path(),
        envvar="RAG_WORKSPACE",
        help="Search many repositories as one: a file listing repository folders or index files "
        "(one a line), or a folder of them.",
    )(function)
    return click.option(
        "--index",
        "index_paths",
        type=click.Path(),
        multiple=True,
        envvar="RAG_INDEX",
        help="Index file to use (default: REPO/.rag/index.sqlite, found from the current directory); "
        "repeat it to search several repositories as one.",
    )(function)


cluster_option = click.option(
    "--cluster",
    metavar="ADDRESS",
    envvar="RAG_CLUSTER",
    help="Search the workspace `rag serve` placed on the Ray cluster at ADDRESS (HOST:PORT).",
)


quiet_option = click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Do not name the index that answered on stderr (other notes and errors still print).",
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


ASK_AS = "Ask as a member of GROUP, seeing files .rag-access grants it"  # query and eval


def top_k_option(help: str) -> Callable[[FC], FC]:
    """-k/--top-k: how many passages, at least 1 (default DEFAULT_TOP_K, the prompt's passages)."""
    return click.option(
        "-k", "--top-k", type=click.IntRange(1), default=DEFAULT_TOP_K, show_default=True, help=help
    )


def as_option(what: str) -> Callable[[FC], FC]:
    """The caller's access groups (.rag-access): --as GROUP, repeatable, or RAG_GROUPS; `what`
    begins the help text."""
    return click.option(
        "--as",
        "groups",
        multiple=True,
        metavar="GROUP",
        envvar="RAG_GROUPS",
        help=f"{what} (repeatable; RAG_GROUPS takes a space-separated list).",
    )
