"""Scoring and top-k over the inverted index: cosine similarity of TF-IDF vectors (the
default), or BM25 on the same postings."""

from __future__ import annotations

import heapq
import math
from array import array
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from .chunking.base import Chunk
from .index import Index
from .rerank import candidate_count, rerank
from .tokens import idf_weight, tf_weight

DEFAULT_TOP_K = 4
SCORINGS = ("tfidf", "bm25")
DEFAULT_SCORING = "tfidf"
# BM25's saturation and length normalisation, picked on the docstring set (bench/levers_bm25.py,
# bench/LEVERS.md): hit@4 and MRR@10 plateau for k1 3-6 and b 0.9-1.0 with rag's fields
BM25_K1 = 4.0
BM25_B = 0.9


@dataclass(frozen=True, slots=True)
class TermContribution:
    """How one query term contributed to a hit's score."""

    term: str
    idf: float
    tf: int  # occurrences of the term in the passage
    weight: float  # the term's normalised tf-idf weight in the passage (BM25: idf times tf part)
    score: float  # its share of the hit's score (the contributions sum to the score)


@dataclass(frozen=True, slots=True)
class Hit:
    """A retrieved chunk, its cosine score and, when asked for, why it scored."""

    score: float  # cosine in [0, 1] under tfidf scoring; BM25's sum under bm25
    chunk: Chunk
    contributions: tuple[TermContribution, ...] = ()


@dataclass(frozen=True, slots=True)
class Retrieval:
    """The hits for a question, and the files that changed since the index was built."""

    hits: list[Hit]
    changed: list[str]  # paths (directories end in '/') that look newer than the index


def retrieve(
    index_path: Path, question: str, k: int = DEFAULT_TOP_K, explain: bool = False,
    groups: frozenset[str] = frozenset(), refresh: bool = False, scoring: str = DEFAULT_SCORING,
) -> Retrieval:
    """Open the index, re-ingest changed files first if asked, search, and check freshness.

    The freshness check is cheap, and does not grow with the repository: stat calls on the
    hits' own files and the folders that hold them, up to the root (Index.changed_files).
    A refresh checks every file and folder.
    """
    if refresh:
        with Index(index_path) as index:
            root, settings = Path(index.manifest.root), index.manifest.tokenizer
            stale = bool(index.changed_files(index.files()))
        if stale:
            from .pipeline import ingest  # only a refresh needs the ingest pipeline

            ingest(root, index_path, settings)
    with Index(index_path) as index:
        hits = search(index, question, k, explain=explain, groups=groups, scoring=scoring)
        changed = index.changed_files((h.chunk.path for h in hits), everywhere=False)
    return Retrieval(hits, changed)


def search(
    index: Index, question: str, k: int = DEFAULT_TOP_K, explain: bool = False,
    groups: frozenset[str] = frozenset(), prune: bool = True, scoring: str = DEFAULT_SCORING,
) -> list[Hit]:
    """Return the top `k` chunks for `question` by cosine similarity (or BM25), best first.

    Only chunks a caller with `groups` may read are scored, with the statistics of that
    view (see Index.view). Query terms the index (or the view) has never seen drop out; a
    query made only of them returns []. Ties are broken by chunk order (path, then line).
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {', '.join(SCORINGS)}")
    qtf = index.tokenizer.query_counts(question)
    view = index.view(groups)
    n_docs = view.n_chunks
    terms: list[_QueryTerm] = []
    for term, n in qtf.items():
        found = index.term(term)
        if found is None:
            continue
        ids, tfs, maxw = found
        maxw *= index.manifest.bound_scale
        if view.classes is not None:  # the stored bound is for the full view; 1 always holds
            ids, tfs = _readable(ids, tfs, view.chunk_class, view.classes)
            maxw = math.inf
            if not ids:
                continue
        if scoring == "bm25":
            idf = bm25_idf(n_docs, len(ids))
            terms.append((term, idf, n * idf, ids, tfs, maxw))
        else:
            idf = idf_weight(n_docs, len(ids))
            terms.append((term, idf, tf_weight(n) * idf, ids, tfs, maxw))
    if not terms:
        return []
    # heaviest query terms first: the order scores are summed in, pruned or not. It depends
    # only on the view's statistics, so equal views give bit-identical scores
    terms.sort(key=lambda t: (-t[2], t[0]))
    if scoring == "bm25":
        return _search_bm25(index, view.n_chunks, view.length, terms, k, explain)
    qnorm = math.sqrt(sum(t[2] * t[2] for t in terms))
    norms = view.norms
    scored = top_scores(
        [(qw / qnorm, idf, ids, tfs, qw / qnorm * min(1.0, idf * maxw)) for _, idf, qw, ids, tfs, maxw in terms],
        norms, candidate_count(k), prune,
    )
    return _hits(index, scored, k, lambda cid: _explain(cid, terms, qnorm, norms[cid]) if explain else ())


def _hits(
    index: Index, scored: list[tuple[float, int]], k: int,
    explain: Callable[[int], tuple[TermContribution, ...]],
) -> list[Hit]:
    """Order scored chunk ids, fetch the best candidates' text and rerank them to the top k."""
    # equal scores are ordered by place (path, then line), not by chunk id, so that an index
    # updated in place ranks exactly as a fresh build would
    places = index.places([cid for _, cid in scored])
    scored.sort(key=lambda sc: (-sc[0], places[sc[1]]))
    scored = scored[: candidate_count(k)]
    chunks = index.chunks([cid for _, cid in scored])
    hits = [Hit(score=score, chunk=chunks[cid], contributions=explain(cid)) for score, cid in scored]
    return rerank(hits, k)


def bm25_idf(n_docs: int, df: int) -> float:
    """Return BM25's inverse document frequency, ln(1 + (N - df + 0.5) / (df + 0.5)) (Lucene's form)."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def _search_bm25(
    index: Index, n_docs: int, total_length: int, terms: list[_QueryTerm], k: int, explain: bool,
) -> list[Hit]:
    """Score every posting of the query terms with BM25 (k1 = BM25_K1, b = BM25_B).

    A term adds qtf * idf * tf (k1 + 1) / (tf + k1 (1 - b + b len / avglen)) to a chunk,
    where len is the chunk's length (the sum of its stored tfs, fields included). Every
    posting is read: BM25's bound per term, idf (k1 + 1), is too loose to prune with.
    """
    lengths = index.lengths()
    k1 = BM25_K1
    base = k1 * (1.0 - BM25_B)
    per_length = k1 * BM25_B / (total_length / n_docs) if total_length else 0.0
    acc: dict[int, float] = {}
    get = acc.get
    for _, _, qw, ids, tfs, _ in terms:
        scale = qw * (k1 + 1.0)
        for cid, tf in zip(ids, tfs):
            acc[cid] = get(cid, 0.0) + scale * tf / (tf + base + per_length * lengths[cid])

    def contributions(cid: int) -> tuple[TermContribution, ...]:
        out = []
        for term, idf, qw, ids, tfs, _ in terms:
            i = bisect_left(ids, cid)
            if i < len(ids) and ids[i] == cid:
                tf = tfs[i]
                weight = idf * tf * (k1 + 1.0) / (tf + base + per_length * lengths[cid])
                out.append(TermContribution(term, idf, tf, weight, weight * qw / idf))
        out.sort(key=lambda c: -c.score)
        return tuple(out)

    scored = _best([(s, c) for c, s in acc.items()], candidate_count(k))
    return _hits(index, scored, k, contributions if explain else lambda cid: ())


_EPSILON = 1e-12  # slack for rounding when comparing score bounds
_THRESHOLD_SAMPLE = 20_000
_TF_WEIGHTS = [0.0] + [tf_weight(n) for n in range(1, 256)]


def top_scores(
    terms: list[tuple[float, float, array[int], array[int], float]], norms: array[float], n: int,
    prune: bool = True,
) -> list[tuple[float, int]]:
    """Return the (cosine, chunk id) pairs of the n best chunks, plus any tied with the last.

    `terms` are (normalised query weight q, idf, chunk ids, tfs, bound), in summing order. A
    term adds q * idf * tf_weight / norm to a chunk, at most its bound: q times its largest
    normalised weight in any chunk (never more than q, one component of a unit vector). So
    once the bounds of the terms not yet read add up to less than the n-th best score so far,
    no chunk outside the current candidates can reach the top n (max-score pruning): the
    remaining terms are only looked up, by binary search, for the candidates that can still
    make it. With `prune` off every posting is read; the result is the same.
    """
    remaining = [0.0] * (len(terms) + 1)
    for i in range(len(terms) - 1, -1, -1):
        remaining[i] = remaining[i + 1] + terms[i][4]
    acc: dict[int, float] = {}  # chunk id -> sum of q * idf * tf_weight (divided by norm at the end)
    threshold = 0.0
    done = 0
    for q, idf, ids, tfs, _ in terms:
        if prune and len(acc) >= n:
            # any n candidates give a lower bound on the n-th best: look at no more than a sample
            sample = islice(acc.items(), _THRESHOLD_SAMPLE)
            threshold = heapq.nlargest(n, (s / norms[c] for c, s in sample))[-1]
            if remaining[done] + _EPSILON < threshold:
                break
        scale = q * idf
        if not acc:
            acc = dict(zip(ids, [scale * (_TF_WEIGHTS[tf] if tf < 256 else tf_weight(tf)) for tf in tfs]))
        else:
            get = acc.get
            for cid, tf in zip(ids, tfs):
                acc[cid] = get(cid, 0.0) + scale * (_TF_WEIGHTS[tf] if tf < 256 else tf_weight(tf))
        done += 1
    if done < len(terms):
        rest = remaining[done]
        candidates = [c for c, s in acc.items() if s / norms[c] + rest + _EPSILON >= threshold]
        for q, idf, ids, tfs, _ in terms[done:]:
            scale = q * idf
            if len(candidates) * 8 < len(ids):
                for cid in candidates:
                    j = bisect_left(ids, cid)
                    if j < len(ids) and ids[j] == cid:
                        tf = tfs[j]
                        acc[cid] += scale * (_TF_WEIGHTS[tf] if tf < 256 else tf_weight(tf))
            else:
                wanted = set(candidates)
                for cid, tf in zip(ids, tfs):
                    if cid in wanted:
                        acc[cid] += scale * (_TF_WEIGHTS[tf] if tf < 256 else tf_weight(tf))
        acc = {c: acc[c] for c in candidates}
    return _best([(s / norms[c], c) for c, s in acc.items()], n)


def _best(scored: list[tuple[float, int]], n: int) -> list[tuple[float, int]]:
    """Return the n best (score, chunk id) pairs, plus any tied with the n-th."""
    if len(scored) <= n:
        return scored
    best = heapq.nlargest(n + 8, scored)
    last = best[n - 1][0]
    if best[-1][0] == last and len(scored) > len(best):  # many ties at the boundary: take them all
        return [sc for sc in scored if sc[0] >= last]
    return [sc for sc in best if sc[0] >= last]


def _readable(ids: array[int], tfs: array[int], chunk_class: array[int] | None,
              classes: frozenset[int]) -> tuple[array[int], array[int]]:
    """Keep the postings of chunks in readable access classes, before any scoring."""
    assert chunk_class is not None
    keep = [i for i, cid in enumerate(ids) if chunk_class[cid] in classes]
    return array("I", [ids[i] for i in keep]), array("H", [tfs[i] for i in keep])


# a query term while scoring: (term, idf, query weight, chunk ids, tfs, largest weight in a chunk)
_QueryTerm = tuple[str, float, float, "array[int]", "array[int]", float]


def _explain(cid: int, terms: list[_QueryTerm], qnorm: float, norm: float) -> tuple[TermContribution, ...]:
    out = []
    for term, idf, qw, ids, tfs, _ in terms:
        i = bisect_left(ids, cid)
        if i < len(ids) and ids[i] == cid:
            tf = tfs[i]
            weight = tf_weight(tf) * idf / norm
            out.append(TermContribution(term, idf, tf, weight, weight * qw / qnorm))
    out.sort(key=lambda c: -c.score)
    return tuple(out)
