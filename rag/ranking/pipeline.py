"""The rank pipeline every list goes through (a question's, a passage's `rag related`, `rag eval`'s,
the MCP tools', the benches'): the candidates a search scored and ordered lexically
(rag.ranking.order), then the semantic stage when it runs (rag.ranking.semantic), then the passages
shaped for answers (rag.ranking.passages), ranked deeper while their distinct matches fall short of k.

The search is the caller's (rag.retrieval.search: a question's terms, or a passage's): it is
handed in as a function of the depth asked for, so that this room never reaches back up into the
scoring that feeds it."""

from __future__ import annotations

from collections.abc import Callable

from rag.chunking.base import Chunk
from rag.ranking.hits import Hit
from rag.ranking.passages import distinct_passages
from rag.semantic.registry import DEFAULT_MODE, active
from rag.store.workspace import Reader, Workspace
from rag.weights import DEFAULTS, RankingWeights

# a search of the caller's: (depth, spread) -> its lexical top `depth`, ordered by rag.ranking.order;
# `spread` False when the semantic stage reorders it (the stage spreads its own order)
Candidates = Callable[[int, bool], list[Hit]]

MAX_DEPTH = 160  # the deepest a list is ranked to find k distinct matches


def rank(
    index: Reader,
    candidates: Candidates,
    k: int,
    *,
    rerank: str = DEFAULT_MODE,
    semantic: bool = True,
    compare: str = "",
    like: Chunk | None = None,
    weights: RankingWeights = DEFAULTS,
) -> tuple[list[Hit], str | None]:
    """Return the top k of `candidates` as every list is ranked, with the note for stderr the semantic
    stage leaves (its model failed), or None. That the extra is not installed is said by an ingest
    and `rag eval` (rag.semantic.registry.install_hint), not by every list.

    The stage runs when `rerank` asks for it and the extra is installed, unless `semantic` is False
    (a question that is one identifier: a lookup the definition boost answers). It compares the
    passages' meaning with `compare` (a question and its searches), or with the passage `like`
    (`rag related`), whose own lines no passage is grown over."""
    available = active(rerank)  # one look for the extra (find_spec) per call
    stage = available and semantic
    clear = (like,) if like is not None else ()

    def ranked(want: int) -> tuple[list[Hit], str | None]:
        if not stage:
            return candidates(want, True), None
        from rag.ranking.semantic import lexical_depth, safe_rerank  # the stage's model side, when it runs
        from rag.semantic.vectors import workspace_cache

        hits = candidates(lexical_depth(want, weights), False)
        # the vectors cached beside the index, or a workspace's in the user cache
        cache = workspace_cache([i.path for i in index.infos]) if isinstance(index, Workspace) else index.path
        return safe_rerank(cache, compare, hits, want, weights, like=like)

    if index.manifest.tokenizer.mode == "plain":  # plain-mode passages stay the indexed windows
        return ranked(k)
    want = passage_depth(k, weights)
    hits, note = ranked(want)
    out = distinct_passages(index, hits, k, weights.grow_chars, clear=clear)
    # distinct matches short of k while more were ranked: rank deeper, the results so far kept
    while len(out) < k and len(hits) >= want and want < MAX_DEPTH:
        want *= 2
        deeper, note = ranked(want)
        listed = {h.chunk[:3] for h in hits}
        more = [h for h in deeper if h.chunk[:3] not in listed]
        hits = hits + more
        out = distinct_passages(index, more, k, weights.grow_chars, before=out, clear=clear)
    return out, note


def passage_depth(k: int, weights: RankingWeights = DEFAULTS) -> int:
    """Return how many ranked hits the passages of a top k are shaped from first. Up to k = 10 it is
    10, whose lexical pool is that of every such k (RankingWeights.min_candidates), so that the first
    passages are the same for all of them; past 10, half as many again. When the distinct matches of
    those fall short of k, rank() ranks deeper."""
    fixed = weights.min_candidates // weights.candidates_per_k
    return fixed if k <= fixed else k + k // 2
