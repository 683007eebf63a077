"""Scoring and top-k: cosine similarity of TF-IDF vectors over the inverted index."""

from __future__ import annotations

import heapq
import math
from array import array
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path

from .chunking.base import Chunk
from .index import Index
from .rerank import candidate_count, rerank
from .tokens import Tokenizer, idf_weight, tf_weight

DEFAULT_TOP_K = 4


@dataclass(frozen=True, slots=True)
class TermContribution:
    """How one query term contributed to a hit's score."""

    term: str
    idf: float
    tf: int  # occurrences of the term in the passage
    weight: float  # the term's normalised tf-idf weight in the passage
    score: float  # its share of the hit's score (the contributions sum to the score)


@dataclass(frozen=True, slots=True)
class Hit:
    """A retrieved chunk, its cosine score and, when asked for, why it scored."""

    score: float
    chunk: Chunk
    contributions: tuple[TermContribution, ...] = ()


@dataclass(frozen=True, slots=True)
class Retrieval:
    """The hits for a question, and the files that changed since the index was built."""

    hits: list[Hit]
    changed: list[str]  # paths (directories end in '/') that look newer than the index
    refreshed: bool = False


def retrieve(
    index_path: Path, question: str, k: int = DEFAULT_TOP_K, explain: bool = False,
    groups: frozenset[str] = frozenset(), refresh: bool = False,
) -> Retrieval:
    """Open the index, re-ingest changed files first if asked, search, and check freshness.

    The freshness check is cheap (stat calls, see Index.changed_files): the hits' own
    files and every indexed directory.
    """
    if refresh:
        with Index(index_path) as index:
            root, settings = Path(index.manifest.root), index.manifest.tokenizer
            stale = bool(index.changed_files(index.files()))
        if stale:
            from .pipeline import ingest  # only a refresh needs the ingest pipeline

            ingest(root, index_path, settings)
    with Index(index_path) as index:
        hits = search(index, question, k, explain=explain, groups=groups)
        changed = index.changed_files(h.chunk.path for h in hits)
    return Retrieval(hits, changed, refreshed=refresh)


def search(
    index: Index, question: str, k: int = DEFAULT_TOP_K, explain: bool = False,
    groups: frozenset[str] = frozenset(),
) -> list[Hit]:
    """Return the top `k` chunks for `question` by cosine similarity, best first.

    Only chunks a caller with `groups` may read are scored, with the statistics of that
    view (see Index.view). Query terms the index (or the view) has never seen drop out; a
    query made only of them returns []. Ties are broken by chunk order (path, then line).
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    tokenizer = Tokenizer(index.manifest.tokenizer)
    qtf = tokenizer.query_counts(question)
    view = index.view(groups)
    n_docs = view.n_chunks
    terms = []  # (term, idf, query weight, ids, tfs)
    for term, n in qtf.items():
        plist = index.postings(term)
        if plist is None:
            continue
        ids, tfs = plist
        if view.classes is not None:
            ids, tfs = _readable(ids, tfs, view.chunk_class, view.classes)
            if not ids:
                continue
        idf = idf_weight(n_docs, len(ids))
        terms.append((term, idf, tf_weight(n) * idf, ids, tfs))
    if not terms:
        return []
    qnorm = math.sqrt(sum(w * w for _, _, w, _, _ in terms))
    tfw = [0.0] + [tf_weight(n) for n in range(1, 256)]
    acc: dict[int, float] = {}
    get = acc.get
    for _, idf, qw, ids, tfs in terms:
        scale = qw * idf / qnorm
        for cid, tf in zip(ids, tfs):
            w = tfw[tf] if tf < 256 else tf_weight(tf)
            acc[cid] = get(cid, 0.0) + scale * w
    norms = view.norms
    best = heapq.nlargest(candidate_count(k), ((s / norms[c], -c) for c, s in acc.items()))
    chunks = index.chunks([-neg for _, neg in best])
    hits = []
    for score, neg in best:
        cid = -neg
        contributions = _explain(cid, terms, qnorm, norms[cid]) if explain else ()
        hits.append(Hit(score=score, chunk=chunks[cid], contributions=contributions))
    return rerank(hits, k)


def _readable(ids: array[int], tfs: array[int], chunk_class: array[int] | None,
              classes: frozenset[int]) -> tuple[array[int], array[int]]:
    """Keep the postings of chunks in readable access classes, before any scoring."""
    assert chunk_class is not None
    keep = [i for i, cid in enumerate(ids) if chunk_class[cid] in classes]
    return array("I", [ids[i] for i in keep]), array("H", [tfs[i] for i in keep])


def _explain(cid: int, terms: list, qnorm: float, norm: float) -> tuple[TermContribution, ...]:
    out = []
    for term, idf, qw, ids, tfs in terms:
        i = bisect_left(ids, cid)
        if i < len(ids) and ids[i] == cid:
            tf = tfs[i]
            weight = tf_weight(tf) * idf / norm
            out.append(TermContribution(term, idf, tf, weight, weight * qw / qnorm))
    out.sort(key=lambda c: -c.score)
    return tuple(out)
