"""After scoring: choose the final top k from the best-scored candidates."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .search import Hit

# How many scored candidates search() hands to rerank() for a top k.
CANDIDATES_PER_K = 3
MIN_CANDIDATES = 12


def candidate_count(k: int) -> int:
    """Return how many of the best-scored chunks to fetch for a final top k."""
    return max(k * CANDIDATES_PER_K, MIN_CANDIDATES)


def rerank(hits: list[Hit], k: int) -> list[Hit]:
    """Return the final top k from candidates sorted best first (today: the first k)."""
    return hits[:k]
