"""What retrieval shows a planner of the index before the search it plans."""

from __future__ import annotations

from typing import NamedTuple

from rag.chunking.base import Chunk


class Glance(NamedTuple):
    """What a planner is shown of an index for a question (rag.retrieval.retrieve.glance)."""

    repository: str  # the repository's folder name
    languages: tuple[str, ...]  # the main languages of its readable files, most files first
    candidates: tuple[Chunk, ...]  # the question's own lexical top passages, best first
