"""Command-line interface: `rag` and its commands (rag.cli.commands), and the two scripts'
entry points (ingest.py, query.py)."""

from __future__ import annotations

from rag.cli.commands import ingest_main, main, query_main

__all__ = ["ingest_main", "main", "query_main"]
