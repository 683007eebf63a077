"""What a ranked list holds: a hit (a scored passage), how each query term contributed to its
score, and why it was ranked above or below its score."""

from __future__ import annotations

from typing import NamedTuple

from rag.chunking.base import Chunk


class TermContribution(NamedTuple):
    """How one query term contributed to a hit's score."""

    term: str
    idf: float
    tf: int  # occurrences of the term in the passage
    weight: float  # the term's normalised tf-idf weight in the passage (BM25: idf times tf part)
    score: float  # its share of the hit's score (the contributions sum to the score)
    expands: str = ""  # for an acronym or short form the question did not contain: what it stands for

    @property
    def label(self) -> str:
        """The term as an explanation names it: `sse (for 'server sent event')` when it was added."""
        return f"{self.term} (for {self.expands!r})" if self.expands else self.term


class Hit(NamedTuple):
    """A retrieved chunk, its score and, when asked for, why it scored. `chunk` is the match, the
    chunk that scored; `context`, when the passage was shaped (rag.ranking.passages), the lines
    shown and sent around it: `passage` is whichever a reader sees."""

    score: float  # cosine in [0, 1] under tfidf scoring; BM25's sum under bm25
    chunk: Chunk
    contributions: tuple[TermContribution, ...] = ()
    # why the ranking ranked it at a fraction of its score ("test", "licence or change log"), so
    # that a list not in score order explains itself; None when it was not demoted
    demoted: str | None = None
    boosted: str | None = None  # why the code-aware ranking put it above its score ("defines Router")
    # the value the lexical order is by: the score at its demotion factor, raised to
    # RankingWeights.score_power (rag.weights), plus the code-aware boosts; the semantic stage mixes this, not
    # the bare score; None before the ranking
    ranked: float | None = None
    # the semantic rerank's (rag.ranking.semantic): the passage's cosine with the question, and the
    # mix of it with the lexical score the final order is by; None when the stage did not run
    semantic: float | None = None
    mix: float | None = None
    # with a model's searches: which searches' words it matched, most of its score first
    # ("question", "search 1", ...)
    found_by: tuple[str, ...] = ()
    context: Chunk | None = None  # the match grown over its neighbours: path, lines and text shown
    words: tuple[str, ...] = ()  # the words of the question (and searches) it matched, as written
    marks: tuple[int, ...] = ()  # the lines of its passage that hold a matched term
    repository: str = ""  # in a workspace, the repository it is from (its path's first folder)

    @property
    def passage(self) -> Chunk:
        """What a reader is shown and a model is sent: the context, else the match itself."""
        return self.context if self.context is not None else self.chunk
