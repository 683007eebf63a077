"""Command-line interface: `rag` and its commands (rag.cli.commands), and the two scripts'
entry points (ingest.py, query.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag.cli.commands import ingest_main, main, query_main

__all__ = ["ingest_main", "main", "query_main"]


def __getattr__(name: str) -> Any:
    """Load the commands on first use: the MCP server, `rag eval`'s scoring and the status
    report live in this package and import without them."""
    if name in __all__:
        from rag.cli import commands

        return getattr(commands, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
