"""What an ingest is asked to do: the options a command or a library caller passes to ingest()."""

from __future__ import annotations

from dataclasses import dataclass

from rag.text.tokenizer import TokenizerSettings


@dataclass(frozen=True, slots=True)
class IngestOptions:
    """How to ingest. None keeps what the existing index was built with, else the default."""

    settings: TokenizerSettings | None = None
    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    max_bytes: int | None = None
    workers: int | None = None  # processes; None: all cores
    full: bool = False  # reuse nothing of the previous index
