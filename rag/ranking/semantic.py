"""The semantic stage after the lexical ranking: the top semantic_depth passages are reordered by a mix of
their lexical score as the lexical order weighed it (Hit.ranked, divided by the best one's) and the
cosine similarity of their vector with the question's (rag.semantic.model's model; the vectors cached by rag.semantic.vectors)."""

from __future__ import annotations

import operator
import os
from array import array
from collections.abc import Sequence

from rag.chunking.base import Chunk
from rag.errors import ModelError
from rag.ranking.hits import Hit
from rag.ranking.order import file_shares, is_code, spread_files
from rag.semantic.model import identity, load
from rag.semantic.vectors import VectorCache, cache_path, content_key, passage_text
from rag.weights import DEFAULTS, RankingWeights


def lexical_depth(k: int, weights: RankingWeights = DEFAULTS) -> int:
    """Return how many lexical passages to retrieve for a final top k."""
    return max(k, weights.semantic_depth)


def rerank(
    index_path: str | os.PathLike[str] | None,
    question: str,
    hits: Sequence[Hit],
    k: int,
    weights: RankingWeights = DEFAULTS,
    like: Chunk | None = None,
) -> list[Hit]:
    """Return the top k of the first semantic_depth `hits` (lexical order) by the mix; each carries its
    cosine (Hit.semantic) and mix (Hit.mix). The passages' vectors, and the question's, are read from
    the cache beside the index (`index_path`; None: no cache) and the missing ones computed and
    stored: with none missing, the model is not loaded at all. `weights`: the lexical ranking's,
    whose spread and test factor the mix uses too. `like`: a passage whose vector stands for the
    question's (`rag related`), cached as the passages' are."""
    pool = list(hits[: max(k, weights.semantic_depth)])
    if not pool:
        return []
    texts = [passage_text(h.chunk) for h in pool]
    if like is not None:  # embedded, and cached, as one more passage
        texts.append(passage_text(like))
    keys = [content_key(t) for t in texts]
    asked_key = content_key(question)
    cache = VectorCache(cache_path(index_path), identity()) if index_path is not None else None
    try:
        found = cache.get(keys) if cache is not None else {}
        asked = cache.question(asked_key) if cache is not None and like is None else None
        missing = list(dict.fromkeys(key for key in keys if key not in found))
        if missing or (asked is None and like is None):
            embedder = load()
            if missing:
                todo = dict(zip(keys, texts))
                computed = embedder.embed([todo[key] for key in missing])
                new = {key: computed[row].tobytes() for row, key in enumerate(missing)}
                found.update(new)
                if cache is not None:
                    cache.put(new.items())
            if asked is None and like is None:
                asked = embedder.embed([question])[0].tobytes()
                if cache is not None:
                    cache.put_question(asked_key, asked)
    finally:
        if cache is not None:
            cache.close()
    if like is not None:
        asked, keys = found[keys[-1]], keys[:-1]
    assert asked is not None
    q = _floats(asked)
    # in float64 from the stored float32 values, without numpy: a query whose vectors are all
    # cached imports neither it nor onnxruntime (each product of two float32 is exact in a float64)
    cosines = [sum(map(operator.mul, _floats(found[key]), q)) for key in keys]
    return mix(pool, cosines, k, weights)


def _floats(vector: bytes) -> array[float]:
    values = array("f")
    values.frombytes(vector)
    return values


def mix(
    pool: Sequence[Hit], cosines: Sequence[float], k: int, weights: RankingWeights = DEFAULTS
) -> list[Hit]:
    """Return the top k of `pool` by lexical_weight * lexical share + the rest * cosine (ties: lexical order)."""
    # the lexical score as the lexical order weighed it: demoted, raised to RankingWeights.score_power, and
    # with the code-aware boosts
    lexical = [
        h.ranked if h.ranked is not None else h.score * (weights.test_factor if h.demoted else 1.0)
        for h in pool
    ]
    best = max(lexical) or 1.0
    w = weights.lexical_weight
    mixed = [w * s / best + (1 - w) * c for s, c in zip(lexical, cosines)]
    if weights.semantic_coherence:
        mixed = _coherent(pool, cosines, mixed, weights)
    order = sorted(range(len(pool)), key=lambda i: (-mixed[i], i))
    # after the prompt's passages, a longer list covers more files (rag.ranking.order.spread_files)
    ordered = [pool[i]._replace(semantic=cosines[i], mix=mixed[i]) for i in order]
    return spread_files(ordered, k, [mixed[i] for i in order], weights)


def _coherent(
    pool: Sequence[Hit], cosines: Sequence[float], mixed: list[float], weights: RankingWeights
) -> list[float]:
    """The mix with the semantic file coherence applied (RankingWeights.semantic_coherence)."""
    found = file_shares([h.chunk.path for h in pool], [max(c, 0.0) for c in cosines], mixed)
    if found is None:
        return mixed
    share_of, best = found
    out = list(mixed)
    for i, h in enumerate(pool):
        path = h.chunk.path
        if mixed[i] <= 0 or (weights.semantic_coherence_code and (h.demoted or not is_code(h))):
            continue
        rest = 1.0 if best[path] == i else weights.semantic_coherence_rest
        out[i] *= 1 + weights.semantic_coherence * share_of[path] * rest
    return out


def safe_rerank(
    index_path: str | os.PathLike[str] | None,
    question: str,
    hits: Sequence[Hit],
    k: int,
    weights: RankingWeights = DEFAULTS,
    like: Chunk | None = None,
) -> tuple[list[Hit], str | None]:
    """The stage as a query runs it: (hits, a note for stderr or None); a model that cannot be
    loaded gives the lexical top k and one line saying why. `like`: as for rerank."""
    try:
        return rerank(index_path, question, hits, k, weights, like), None
    except ModelError as exc:
        return spread_files(hits, k, weights=weights), f"Note: {exc}; the passages are in lexical order"
