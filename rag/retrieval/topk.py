"""The top n chunks of a query from its terms' postings, with max-score pruning: the sums kept in a
dict of the chunks touched, in a float array over every chunk id, or in numpy arrays when numpy is
installed and the postings are many enough to pay for it; each gives the same (score, chunk id)
pairs, to the last bit. rag.retrieval.search turns a question into the terms it passes here."""

from __future__ import annotations

import heapq
import math
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from itertools import compress, islice, repeat
from operator import ge, truediv
from typing import Any

from rag.numeric import numpy_for
from rag.weights import BM25, Cosine, FloatColumn

# a term as top_scores reads it: (scale, chunk ids, tfs, bound on what it adds to a chunk)
Work = tuple[float, "array[int]", "array[int]", float]

_EPSILON = 1e-12  # slack for rounding when comparing score bounds
_THRESHOLD_SAMPLE = 20_000


# Postings per chunk id above which scores add up in one float array over all chunk ids
# (8 bytes a chunk) rather than in a dict of the chunks touched (about 100 bytes each).
DENSE_RATIO = 0.25
# Postings from which a query adds up with numpy, when it is installed (the semantic extra
# installs it): every posting, at C speed, with the same bits as the standard library's sums.
# From NUMPY_POSTINGS in a process that has loaded numpy already (after its first long questions,
# or for the semantic stage). A process that has not must import it first, 148 ms of CPU on a
# 2-core machine, against about 0.5 us saved a posting (523 ns at a million chunks, 436 ns on
# django's 38,670 chunks): repaid from about 300,000 postings (`python bench/numpy_import.py`),
# which a question on a mid-sized repository does not reach
NUMPY_POSTINGS = 50_000
NUMPY_IMPORT_POSTINGS = 300_000
# the postings of NUMPY_POSTINGS or more this process has added up without numpy: they count
# towards repaying its import, so that a process that keeps asking questions too small to repay
# it alone (a server, an evaluation) loads it once, when their sum would have
_added_without_numpy = 0


def _numpy(postings: int) -> Any:
    """numpy for a query of `postings`, when it pays (rag.numeric.numpy_for), else None."""
    repaid_from = max(NUMPY_POSTINGS, NUMPY_IMPORT_POSTINGS - _added_without_numpy)
    return numpy_for(postings, NUMPY_POSTINGS, repaid_from)


def numpy_ahead(postings: int) -> None:
    """Import numpy now when top_scores will add up `postings` in it, so that reading them can
    use it too: their range checks (rag.store.packing.largest) cost max() 61 ns a value."""
    _numpy(postings)


def top_scores(
    terms: list[Work],
    n: int,
    weights: Cosine | BM25,
    norms: FloatColumn | None,
    n_ids: int,
    prune: bool = True,
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
    postings = sum(len(t[1]) for t in terms)
    np = _numpy(postings)
    if np is not None:
        return _top_numpy(np, terms, n, weights, norms, n_ids, prune, remaining)
    if postings >= NUMPY_POSTINGS:
        global _added_without_numpy
        _added_without_numpy += postings
    if postings > DENSE_RATIO * n_ids:
        return keep_best(_top_dense(terms, n, weights, norms, n_ids, prune, remaining), n)
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
        candidates = _probe(
            acc, candidates, terms[done:], weights, scores, n, threshold, remaining[done + 1 :]
        )
    return keep_best(list(zip(scores(candidates), candidates)), n)


def _top_numpy(
    np: Any,
    terms: list[Work],
    n: int,
    weights: Cosine | BM25,
    norms: FloatColumn | None,
    n_ids: int,
    prune: bool,
    remaining: list[float],
) -> list[tuple[float, int]]:
    """top_scores in numpy arrays, with the same pruning: the terms read in full are added to
    every chunk, those after the break only to the candidates, masked at C speed. Each chunk's
    contributions are added in the terms' order, as the standard library adds them, so the sums
    have the same bits."""
    acc = np.zeros(n_ids)
    norm = None if norms is None else np.frombuffer(norms, dtype=np.float64)
    # every posting adds more than 0 when every scale is positive: then the chunks touched are
    # those with a sum, found without a mask of their own
    positive = all(scale > 0.0 for scale, _, _, _ in terms)
    touched = None if positive else np.zeros(n_ids, dtype=bool)

    def scores(ids: Any) -> Any:
        return acc.take(ids) if norm is None else acc.take(ids) / norm.take(ids)

    def nth_best(ids: Any) -> float:  # of a sample: the least of them when it holds fewer than n
        found = scores(ids[:_THRESHOLD_SAMPLE])
        at = max(len(found) - n, 0)
        return float(np.partition(found, at)[at])

    def postings(ids: array[int], tfs: array[int]) -> tuple[Any, Any]:
        # ids as numpy's own index type: indexing with any other converts them at every use
        at = np.frombuffer(ids, dtype=np.dtype(ids.typecode)).astype(np.intp)
        return at, np.frombuffer(tfs, dtype=np.dtype(tfs.typecode))

    def add(at: Any, contributions: Any) -> None:  # acc[at] += contributions, gathering by take
        sums = acc.take(at)
        sums += contributions
        acc[at] = sums

    sample = None  # the first postings read that hold n chunks: a threshold's sample
    threshold = 0.0
    done = 0
    for scale, ids, tfs, _ in terms:
        if prune and sample is not None:
            threshold = nth_best(sample)
            if remaining[done] + _EPSILON < threshold:
                break
        at, tf = postings(ids, tfs)
        if done:
            add(at, weights.vector(np, scale, at, tf))
        else:  # 0.0 + x is x: the first term's weights are the sums
            acc[at] = weights.vector(np, scale, at, tf)
        if touched is not None:
            touched[at] = True
        if sample is None and len(at) >= n:
            sample = at
        done += 1
    floor = threshold - remaining[done] - _EPSILON if done < len(terms) else 0.0
    if touched is not None:
        candidates = np.flatnonzero(touched)
        if done < len(terms):
            candidates = candidates[scores(candidates) >= floor]
    elif floor > 0.0:  # only chunks with a sum reach it: every chunk's score at once (0/0, nan, does not)
        with np.errstate(divide="ignore", invalid="ignore"):
            candidates = np.flatnonzero((acc if norm is None else acc / norm) >= floor)
    else:  # every chunk with a sum, the floor being no higher than any score
        candidates = np.flatnonzero(acc > 0.0)
    if done < len(terms):
        wanted = np.zeros(n_ids, dtype=bool)
        wanted[candidates] = True
        for i, (scale, ids, tfs, _) in enumerate(terms[done:], done + 1):
            at, tf = postings(ids, tfs)
            held = wanted.take(at)
            at, tf = at.compress(held), tf.compress(held)
            add(at, weights.vector(np, scale, at, tf))
            if len(candidates) > n:  # candidates that can no longer reach the threshold drop out
                threshold = max(threshold, nth_best(candidates))
                kept = scores(candidates) >= threshold - remaining[i] - _EPSILON
                wanted[candidates[~kept]] = False
                candidates = candidates[kept]
    found = scores(candidates)
    if len(found) > n:  # the n best, plus any tied with the n-th
        best = found >= np.partition(found, len(found) - n)[len(found) - n]
        candidates, found = candidates[best], found[best]
    return list(zip(found.tolist(), candidates.tolist()))


def _scorer(
    acc: dict[int, float] | array[float], norms: FloatColumn | None
) -> Callable[[Sequence[int]], Iterator[float]]:
    """Return a function from chunk ids to their scores so far, at C speed. The ids are read
    twice under cosine (sums and norms), so they must be a sequence, not an iterator."""
    total = acc.__getitem__

    def scores(ids: Sequence[int]) -> Iterator[float]:
        if norms is None:
            return map(total, ids)
        return map(truediv, map(total, ids), map(norms.__getitem__, ids))

    return scores


def _top_dense(
    terms: list[Work],
    n: int,
    weights: Cosine | BM25,
    norms: FloatColumn | None,
    n_ids: int,
    prune: bool,
    remaining: list[float],
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
        candidates = _probe(
            acc, candidates, terms[done:], weights, scores, n, threshold, remaining[done + 1 :]
        )
    return list(zip(scores(candidates), candidates))


def _probe(
    acc: dict[int, float] | array[float],
    candidates: list[int],
    terms: list[Work],
    weights: Cosine | BM25,
    scores: Callable[[Sequence[int]], Iterator[float]],
    n: int,
    threshold: float,
    remaining: list[float],
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


def keep_best(scored: list[tuple[float, int]], n: int) -> list[tuple[float, int]]:
    """Return the n best (score, chunk id) pairs, plus any tied with the n-th."""
    if len(scored) <= n:
        return scored
    best = heapq.nlargest(n + 8, scored)
    last = best[n - 1][0]
    if best[-1][0] == last and len(scored) > len(best):  # many ties at the boundary: take them all
        return [sc for sc in scored if sc[0] >= last]
    return [sc for sc in best if sc[0] >= last]
