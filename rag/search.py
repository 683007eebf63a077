"""Scoring and top-k over the inverted index: BM25, or cosine similarity of TF-IDF vectors,
on the same postings."""

from __future__ import annotations

import heapq
import math
import os
import sys
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from itertools import compress, islice, repeat
from operator import add, ge, mul, truediv
from typing import NamedTuple

from .abbreviations import WEIGHT as SHORT_FORM_WEIGHT
from .abbreviations import short_forms
from .acronyms import expand
from .chunking.base import Chunk
from .errors import IndexFormatError, InputError
from .index import ACCESS_FILE, DAMAGE_ERRORS, REBUILD_HINT, FloatColumn, Index, View
from .rerank import candidate_count, rerank
from .tokens import BM25_K1, bm25_idf, idf_weight, tf_weight

DEFAULT_TOP_K = 4
# auto: BM25 on indexes built with the code tokenizer (it wins on both eval sets, see
# bench/LEVERS.md); cosine TF-IDF on `--tokenizer plain` indexes, the original design exactly
SCORINGS = ("auto", "tfidf", "bm25")
DEFAULT_SCORING = "auto"


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
    """A retrieved chunk, its cosine score and, when asked for, why it scored."""

    score: float  # cosine in [0, 1] under tfidf scoring; BM25's sum under bm25
    chunk: Chunk
    contributions: tuple[TermContribution, ...] = ()


class Retrieval(NamedTuple):
    """The hits for a question, and the files that changed since the index was built."""

    hits: list[Hit]
    changed: list[str]  # paths (directories end in '/') that look newer than the index
    gone: str | None = None  # the repository the index was built from, when it no longer exists


def retrieve(
    index_path: str | os.PathLike[str], question: str, k: int = DEFAULT_TOP_K, explain: bool = False,
    groups: frozenset[str] = frozenset(), refresh: bool = False, scoring: str = DEFAULT_SCORING,
) -> Retrieval:
    """Open the index, re-ingest changed files first if asked, search, and check freshness.

    The freshness check is cheap, and does not grow with the repository: stat calls on the
    hits' own files and the folders that hold them, up to the root (Index.changed_files);
    with no hit, on every indexed folder. A refresh checks every file and folder.
    """
    _check(k, scoring)  # the caller's mistakes, before anything that reads the index
    with damage_reported(index_path):
        return _retrieve(index_path, question, k, explain, groups, refresh, scoring)


@contextmanager
def damage_reported(index_path: str | os.PathLike[str]) -> Iterator[None]:
    """Turn what reading a damaged index raises into IndexFormatError, in one line.

    A file that SQLite still opens but whose tables or values were damaged (a disk error, a
    hand edit) fails somewhere in the reading, in whatever way its bytes lead to."""
    try:
        yield
    except DAMAGE_ERRORS as exc:
        detail = (str(exc).splitlines() or [""])[0][:120]  # a decoding error quotes the damaged bytes
        raise IndexFormatError(f"The index at {index_path} could not be read ({type(exc).__name__}: "
                               f"{detail}); it may be damaged — {REBUILD_HINT}") from None


def _retrieve(
    index_path: str | os.PathLike[str], question: str, k: int, explain: bool,
    groups: frozenset[str], refresh: bool, scoring: str,
) -> Retrieval:
    if refresh:
        with Index(index_path) as index:
            root, settings = index.manifest.root, index.manifest.tokenizer
            # a copied or moved repository: re-read the new folder, not the old one
            moved = index.moved_repository()
            stale = moved is not None or index.access_changed() or bool(index.changed_files(index.files()))
        if stale:
            from .pipeline import ingest  # only a refresh needs the ingest pipeline

            ingest(moved or root, index_path, settings)
    with Index(index_path) as index:  # opened once for a query without --refresh: its cost is the query's
        root = index.manifest.root
        moved = index.moved_repository()
        if moved is not None:  # its files and freshness would be the old folder's
            raise InputError(f"The index at {index_path} was built for {root}, and this repository is {moved} — "
                             f"re-run `python ingest.py {moved}`, or pass --refresh")
        gone = None if os.path.isdir(root) else root  # answered from the passages as indexed
        if index.access_changed():
            # who may read what was decided at ingest: answering under the old rules could show a
            # file to a caller the new ones shut out
            raise InputError(f"{ACCESS_FILE} changed since the index was built — re-run "
                             f"`python ingest.py {root}`, or pass --refresh")
        hits = search(index, question, k, explain=explain, groups=groups, scoring=scoring)
        # no hit: the answer may be in a file added since, so every indexed folder is checked
        changed = index.changed_files((h.chunk.path for h in hits), everywhere=not hits)
    return Retrieval(hits, changed, gone)


def search(
    index: Index, question: str, k: int = DEFAULT_TOP_K, explain: bool = False,
    groups: frozenset[str] = frozenset(), prune: bool = True, scoring: str = DEFAULT_SCORING,
) -> list[Hit]:
    """Return the top `k` chunks for `question` by BM25 or cosine similarity, best first.

    `scoring` is "bm25", "tfidf" (cosine of TF-IDF vectors) or "auto": BM25 unless the index
    was built with the plain tokenizer. Only chunks a caller with `groups` may read are
    scored, with the statistics of that view (see Index.view). Query terms the index (or the
    view) has never seen drop out; a query made only of them returns []. Ties are broken by
    chunk order (path, then line).

    Besides the question's own terms, a query asks for the acronyms the repository defines
    for words it contains (rag.acronyms); under BM25, the best candidate_count(k) candidates
    also score the short forms of its long words (rag.abbreviations) before the rerank.
    """
    _check(k, scoring)
    with index.snapshot():
        return _search(index, question, k, explain, groups, prune, scoring)


def _check(k: int, scoring: str) -> None:
    if k < 1:
        raise ValueError("k must be at least 1")
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {', '.join(SCORINGS)}")


def _search(
    index: Index, question: str, k: int, explain: bool, groups: frozenset[str], prune: bool, scoring: str,
) -> list[Hit]:
    bm25 = scoring == "bm25" or (scoring == "auto" and index.manifest.tokenizer.mode != "plain")
    view = index.view(groups)
    qtf, stands_for = _query_counts(index, question, view.classes)  # added term -> what it stands for
    n_docs = view.n_chunks
    avglen = view.length / n_docs if view.length else 1.0
    # the stored BM25 bounds hold for the average length they were computed with; a larger
    # one (after updates) raises every tf part by at most the ratio
    bm25_scale = max(1.0, avglen / index.manifest.bm25_avglen)
    terms: list[_QueryTerm] = []
    for term, n in qtf.items():
        found = _postings(index, view, term)
        if found is None:
            continue
        ids, tfs, maxw, maxb = found
        bound = maxb * bm25_scale if bm25 else maxw * index.manifest.bound_scale
        if bm25:
            idf = bm25_idf(n_docs, len(ids))
            terms.append((term, idf, n * idf, ids, tfs, bound))
        else:
            idf = idf_weight(n_docs, len(ids))
            terms.append((term, idf, tf_weight(n) * idf, ids, tfs, bound))
    if not terms:
        return []
    # heaviest query terms first: the order scores are summed in, pruned or not. It depends
    # only on the view's statistics, so equal views give bit-identical scores
    terms.sort(key=lambda t: (-t[2], t[0]))
    want = candidate_count(k)
    if bm25:
        # a term adds qtf * idf * (k1 + 1) * tf part, the tf part being below 1
        normalisers = view.column("bm25k", (t[3] for t in terms))
        weights = _BM25(normalisers)
        work = [(qw * (BM25_K1 + 1.0), ids, tfs, qw * (BM25_K1 + 1.0) * min(1.0, bound))
                for _, _, qw, ids, tfs, bound in terms]
        scored = top_scores(work, want, weights, None, len(normalisers), prune)
        extra: list[_QueryTerm] = []
        if index.manifest.tokenizer.mode != "plain":
            forms = short_forms(question, index.tokenizer, qtf)
            extra = _short_form_terms(index, view, forms, n_docs)
            scored = _add_terms(scored, extra, weights)
            stands_for = {**stands_for, **{t[0]: forms[t[0]] for t in extra}}

        def bm25_part(idf: float, qw: float, cid: int, tf: int) -> tuple[float, float]:
            score = weights.one(qw * (BM25_K1 + 1.0), cid, tf)
            return score * idf / qw, score

        explained = terms + extra
        return _hits(index, scored, k, lambda cid: _explain(cid, explained, bm25_part, stands_for) if explain else ())
    qnorm = math.sqrt(sum(t[2] * t[2] for t in terms))
    norms = view.column("norms", (t[3] for t in terms))
    work = [(qw / qnorm * idf, ids, tfs, qw / qnorm * min(1.0, idf * bound)) for _, idf, qw, ids, tfs, bound in terms]
    scored = top_scores(work, want, _Cosine(), norms, len(norms), prune)

    def cosine_part(idf: float, qw: float, cid: int, tf: int) -> tuple[float, float]:
        weight = tf_weight(tf) * idf / norms[cid]
        return weight, weight * qw / qnorm

    return _hits(index, scored, k, lambda cid: _explain(cid, terms, cosine_part, stands_for) if explain else ())


def _postings(index: Index, view: View, term: str) -> tuple[array[int], array[int], float, float] | None:
    """A term's postings (chunk ids, tfs) within the view, and its two stored bounds (maxw,
    maxb): infinite when the view leaves chunks out, as they are for the full view. None if
    no readable chunk holds the term."""
    found = index.term(term)
    if found is None or view.classes is None:
        return found
    ids, tfs = _readable(found[0], found[1], view.chunk_class, view.classes)
    return (ids, tfs, math.inf, math.inf) if ids else None


def _short_form_terms(index: Index, view: View, forms: dict[str, str], n_docs: int) -> list[_QueryTerm]:
    """The short forms the index (the view) holds, as BM25 query terms of SHORT_FORM_WEIGHT,
    heaviest first (rag.abbreviations)."""
    out: list[_QueryTerm] = []
    for term in forms:
        found = _postings(index, view, term)
        if found is None:
            continue
        ids, tfs = found[0], found[1]
        idf = bm25_idf(n_docs, len(ids))
        out.append((term, idf, SHORT_FORM_WEIGHT * idf, ids, tfs, math.inf))
    out.sort(key=lambda t: (-t[2], t[0]))
    return out


def _add_terms(scored: list[tuple[float, int]], terms: list[_QueryTerm], weights: _BM25) -> list[tuple[float, int]]:
    """Add more query terms to the scores of candidates only, looking each up by binary search."""
    if not terms:
        return scored
    out = []
    for score, cid in scored:
        for _, _, qw, ids, tfs, _ in terms:
            i = bisect_left(ids, cid)
            if i < len(ids) and ids[i] == cid:
                score += weights.one(qw * (BM25_K1 + 1.0), cid, tfs[i])
        out.append((score, cid))
    return out


def query_counts(index: Index, question: str, classes: frozenset[int] | None = None) -> dict[str, int]:
    """Return the terms a question is scored with, and their counts: the tokenizer's query
    side, plus the acronyms the readable files (`classes`; None = all) define for words the
    question contains (rag.acronyms; not under the plain tokenizer, the original design)."""
    return _query_counts(index, question, classes)[0]


def _query_counts(index: Index, question: str, classes: frozenset[int] | None) -> tuple[dict[str, int], dict[str, str]]:
    """query_counts, and acronym -> the words of the question it was added for."""
    counts = index.tokenizer.query_counts(question)
    if index.manifest.tokenizer.mode == "plain":
        return counts, {}
    return expand(counts, index.tokenizer.tokenize(question), index.acronyms(classes))


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


# How a term contributes to a chunk, given the term's scale and its tf there: for all of a
# term's postings at once (at C speed: a table or chains of map) or for one probed posting,
# in the same floating-point order either way, so that pruned and exhaustive search, and the
# bounds stored at ingest, agree to the last bit.
_TF_WEIGHTS = [tf_weight(n) if n else 0.0 for n in range(256)]
_HIGH_BYTE = 1 if sys.byteorder == "little" else 0  # of a uint16 tf, in memory


class _Cosine:
    """scale * (1 + ln tf): the unnormalised tf-idf part (divided by the chunk's norm later)."""

    def many(self, scale: float, ids: array[int], tfs: array[int]) -> Iterator[float]:
        if not tfs.tobytes()[_HIGH_BYTE::2].strip(b"\0"):  # no tf above 255: nearly always
            return map([scale * w for w in _TF_WEIGHTS].__getitem__, tfs)
        return map(mul, repeat(scale), map(add, repeat(1.0), map(math.log, tfs)))

    def one(self, scale: float, cid: int, tf: int) -> float:
        return scale * (_TF_WEIGHTS[tf] if tf < 256 else tf_weight(tf))


class _BM25:
    """scale * tf / (tf + k1 (1 - b + b len / avglen)), the normaliser being stored per chunk."""

    def __init__(self, normalisers: FloatColumn) -> None:
        self.normalisers = normalisers

    def many(self, scale: float, ids: array[int], tfs: array[int]) -> Iterator[float]:
        return map(truediv, map(mul, repeat(scale), tfs), map(add, tfs, map(self.normalisers.__getitem__, ids)))

    def one(self, scale: float, cid: int, tf: int) -> float:
        return scale * tf / (tf + self.normalisers[cid])


_EPSILON = 1e-12  # slack for rounding when comparing score bounds
_THRESHOLD_SAMPLE = 20_000


# Postings per chunk id above which scores add up in one float array over all chunk ids
# (8 bytes a chunk) rather than in a dict of the chunks touched (about 100 bytes each).
DENSE_RATIO = 0.25


def top_scores(
    terms: list[tuple[float, array[int], array[int], float]], n: int, weights: _Cosine | _BM25,
    norms: FloatColumn | None, n_ids: int, prune: bool = True,
) -> list[tuple[float, int]]:
    """Return the (score, chunk id) pairs of the n best chunks, plus any tied with the last.

    `terms` are (scale, chunk ids, tfs, bound), in summing order; `weights` turns a term's
    postings into its contribution to each chunk, divided by the chunk's norm at the end when
    `norms` are given (cosine). A term adds at most its bound to any chunk. So once the bounds
    of the terms not yet read add up to less than the n-th best score so far, no chunk outside
    the current candidates can reach the top n (max-score pruning): the remaining terms are
    only looked up, by binary search, for the candidates that can still make it. With `prune`
    off every posting is read; the result is the same. Queries with many postings (for
    `n_ids` chunk ids) add up in an array, which bounds their memory; others in a dict.
    """
    remaining = [0.0] * (len(terms) + 1)
    for i in range(len(terms) - 1, -1, -1):
        remaining[i] = remaining[i + 1] + terms[i][3]
    if sum(len(t[1]) for t in terms) > DENSE_RATIO * n_ids:
        return _best(_top_dense(terms, n, weights, norms, n_ids, prune, remaining), n)
    acc: dict[int, float] = {}  # chunk id -> sum of its contributions so far
    scores = _scorer(acc, norms)
    threshold = 0.0
    done = 0
    for scale, ids, tfs, _ in terms:
        if prune and len(acc) >= n:
            # any n candidates give a lower bound on the n-th best: look at no more than a sample
            threshold = heapq.nlargest(n, scores(list(islice(acc, _THRESHOLD_SAMPLE))))[-1]
            if remaining[done] + _EPSILON < threshold:
                break
        if not acc:
            acc.update(zip(ids, weights.many(scale, ids, tfs)))
        else:
            get = acc.get
            for cid, w in zip(ids, weights.many(scale, ids, tfs)):
                acc[cid] = get(cid, 0.0) + w
        done += 1
    candidates = list(acc)
    if done < len(terms):
        floor = threshold - remaining[done] - _EPSILON
        candidates = list(compress(candidates, map(ge, scores(candidates), repeat(floor))))
        candidates = _probe(acc, candidates, terms[done:], weights, scores, n, threshold, remaining[done + 1:])
    return _best(list(zip(scores(candidates), candidates)), n)


def _scorer(acc: dict[int, float] | array[float], norms: FloatColumn | None) -> Callable[[Sequence[int]], Iterator[float]]:
    """Return a function from chunk ids to their scores so far, at C speed. The ids are read
    twice under cosine (sums and norms), so they must be a sequence, not an iterator."""
    total = acc.__getitem__

    def scores(ids: Sequence[int]) -> Iterator[float]:
        if norms is None:
            return map(total, ids)
        return map(truediv, map(total, ids), map(norms.__getitem__, ids))

    return scores


def _top_dense(
    terms: list[tuple[float, array[int], array[int], float]], n: int, weights: _Cosine | _BM25,
    norms: FloatColumn | None, n_ids: int, prune: bool, remaining: list[float],
) -> list[tuple[float, int]]:
    """top_scores with the sums in a float array indexed by chunk id: the same pruning, and
    candidates found at C speed (compress) in the postings that were read."""
    acc = array("d", [0.0]) * n_ids
    scores = _scorer(acc, norms)
    read: list[array[int]] = []  # the postings read in full: every chunk with a score is in one
    # distinct chunks to sample a threshold from: the heaviest term's postings that hold n
    sample: array[int] | None = None
    threshold = 0.0
    done = 0
    for scale, ids, tfs, _ in terms:
        if prune and sample is not None:
            threshold = heapq.nlargest(n, scores(sample[:_THRESHOLD_SAMPLE]))[-1]
            if remaining[done] + _EPSILON < threshold:
                break
        for cid, w in zip(ids, weights.many(scale, ids, tfs)):
            acc[cid] += w
        read.append(ids)
        if sample is None and len(ids) >= n:
            sample = ids
        done += 1
    if done < len(terms):
        floor = threshold - remaining[done] - _EPSILON
    elif sample is not None:  # all read: a sample's n-th best is a floor under the n-th best
        floor = heapq.nlargest(n, scores(sample[:_THRESHOLD_SAMPLE]))[-1]
    else:
        floor = -math.inf
    found: set[int] = set()
    for ids in read:
        found.update(compress(ids, map(ge, scores(ids), repeat(floor))))
    candidates = list(found)
    if done < len(terms):
        candidates = _probe(acc, candidates, terms[done:], weights, scores, n, threshold, remaining[done + 1:])
    return list(zip(scores(candidates), candidates))


def _probe(
    acc: dict[int, float] | array[float], candidates: list[int],
    terms: list[tuple[float, array[int], array[int], float]], weights: _Cosine | _BM25,
    scores: Callable[[Sequence[int]], Iterator[float]], n: int, threshold: float, remaining: list[float],
) -> list[int]:
    """Add the terms not read in full to the candidates' sums, in summing order, and return
    the candidates that can still reach the top n.

    A term is looked up by binary search when there are few candidates, else its postings
    are filtered by set membership at C speed. After each term the candidates' own partial
    sums raise the threshold (they only grow), and the bounds left (`remaining[i]` after the
    i-th term) shrink: candidates that can no longer reach it are dropped, so the later,
    usually longer, postings lists are matched against fewer and fewer chunks.
    """
    wanted: set[int] | None = None  # the candidates as a set, built when first needed
    for i, (scale, ids, tfs, _) in enumerate(terms):
        if len(candidates) * 8 < len(ids):
            for cid in candidates:
                j = bisect_left(ids, cid)
                if j < len(ids) and ids[j] == cid:
                    acc[cid] += weights.one(scale, cid, tfs[j])
        else:
            if wanted is None:
                wanted = set(candidates)
            for cid, tf in compress(zip(ids, tfs), map(wanted.__contains__, ids)):
                acc[cid] += weights.one(scale, cid, tf)
        if len(candidates) > n:
            threshold = max(threshold, heapq.nlargest(n, scores(candidates[:_THRESHOLD_SAMPLE]))[-1])
            floor = threshold - remaining[i] - _EPSILON
            kept = list(compress(candidates, map(ge, scores(candidates), repeat(floor))))
            if len(kept) < len(candidates):
                candidates, wanted = kept, None
    return candidates


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


def _explain(
    cid: int, terms: list[_QueryTerm], contribution: Callable[[float, float, int, int], tuple[float, float]],
    stands_for: dict[str, str],
) -> tuple[TermContribution, ...]:
    """Each matching query term's (weight, score) in chunk `cid`, from contribution(idf, query
    weight, cid, tf), best first; a term the query added (an acronym, a short form) names what
    it stands for."""
    out = []
    for term, idf, qw, ids, tfs, _ in terms:
        i = bisect_left(ids, cid)
        if i < len(ids) and ids[i] == cid:
            weight, score = contribution(idf, qw, cid, tfs[i])
            out.append(TermContribution(term, idf, tfs[i], weight, score, stands_for.get(term, "")))
    out.sort(key=lambda c: -c.score)
    return tuple(out)
