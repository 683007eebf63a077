"""Scoring and top-k over the inverted index: BM25, or cosine similarity of TF-IDF vectors, on the
same postings, with max-score pruning. The candidates go to rag.retrieval.ranking for the final top k; the
numbers and formulas are rag.weights' (those a query ranks with: the `weights` argument, a RankingWeights)."""

from __future__ import annotations

import heapq
import math
import sys
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from itertools import compress, islice, repeat
from operator import ge, truediv
from typing import Any, NamedTuple

from rag.numeric import numpy_or_none
from rag.retrieval.quoted import holding, quotes
from rag.retrieval.ranking import candidate_count, definitions, file_key, question_shape, rank_hits
from rag.retrieval.results import Hit, TermContribution
from rag.store.reader import Index
from rag.store.views import View
from rag.text.acronyms import expand
from rag.text.short_forms import WEIGHT as SHORT_FORM_WEIGHT
from rag.text.short_forms import short_forms
from rag.weights import BM25, DEFAULTS, Cosine, FloatColumn, RankingWeights, bm25_idf, idf_weight, tf_weight

DEFAULT_TOP_K = 4
# auto: BM25 on indexes built with the code tokenizer (it wins on both eval sets, see
# docs/levers.md); cosine TF-IDF on `--tokenizer plain` indexes, the original design exactly
SCORINGS = ("auto", "tfidf", "bm25")
DEFAULT_SCORING = "auto"


def search(
    index: Index,
    question: str,
    k: int = DEFAULT_TOP_K,
    explain: bool = False,
    groups: frozenset[str] = frozenset(),
    prune: bool = True,
    scoring: str = DEFAULT_SCORING,
    spread: bool = True,
    weights: RankingWeights = DEFAULTS,
) -> list[Hit]:
    """Return the top `k` chunks for `question` by BM25 or cosine similarity, best first (`spread`:
    the passages after the prompt's first ones cover more files, rag.retrieval.ranking.spread_files;
    `weights`: what the query is ranked with, rag.weights.RankingWeights).

    `scoring` is "bm25", "tfidf" (cosine of TF-IDF vectors) or "auto": BM25 unless the index
    was built with the plain tokenizer. Only chunks a caller with `groups` may read are
    scored, with the statistics of that view (see Index.view). Query terms the index (or the
    view) has never seen drop out; a query made only of them returns []. Ties are broken by
    chunk order (path, then line).

    Besides the question's own terms, a query asks for the acronyms the repository defines
    for words it contains (rag.text.acronyms); under BM25, the best candidate_count(k) candidates
    also score the short forms of its long words (rag.text.short_forms) before the ranking.
    """
    check_request(k, scoring)
    with index.snapshot():
        return _search(index, question, k, explain, groups, prune, scoring, spread, weights)


def check_request(k: int, scoring: str) -> None:
    """Raise ValueError for a top k or a scoring a search cannot take."""
    if k < 1:
        raise ValueError("k must be at least 1")
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {', '.join(SCORINGS)}")


class QueryTerm(NamedTuple):
    """A query term while scoring."""

    term: str
    idf: float
    weight: float  # its query weight: BM25 qtf * idf, cosine (1 + ln qtf) * idf
    ids: array[int]  # its postings: chunk ids, ascending
    tfs: array[int]
    bound: float  # the largest weight it has in a chunk (the stored pruning bound)


# a term as top_scores reads it: (scale, chunk ids, tfs, bound on what it adds to a chunk)
_Work = tuple[float, "array[int]", "array[int]", float]


def _search(
    index: Index,
    question: str,
    k: int,
    explain: bool,
    groups: frozenset[str],
    prune: bool,
    scoring: str,
    spread: bool,
    weights: RankingWeights,
) -> list[Hit]:
    bm25 = scoring == "bm25" or (scoring == "auto" and index.manifest.tokenizer.mode != "plain")
    view = index.view(groups)
    qtf, stands_for = _query_counts(index, question, view.classes)  # added term -> what it stands for
    found_of = {term: _postings(index, view, term) for term in qtf}
    corrected: dict[str, str] = {}
    # words the view has never seen -> their nearest indexed terms (known words are left alone);
    # rag.retrieval.spelling is loaded only for such a question (or once loaded, to record that none was made)
    if None in found_of.values() or "rag.retrieval.spelling" in sys.modules:
        from rag.retrieval.spelling import correct as correct_spelling

        qtf, corrected = correct_spelling(index, view, question, qtf)
        found_of = {
            term: found_of[term] if term in found_of else _postings(index, view, term) for term in qtf
        }
    stands_for = {**stands_for, **corrected} if corrected else stands_for
    # each term's query tf part (BM25: its count; cosine: 1 + ln count), a corrected typo's scaled
    # down: it is a guess
    parts = {
        term: (weights.correction_weight if term in corrected else 1.0) * (n if bm25 else tf_weight(n))
        for term, n in qtf.items()
    }
    terms = _query_terms(index, view, parts, found_of, bm25)
    if not terms:
        return []
    want = candidate_count(k, weights)
    if bm25:
        scored, per_posting = _bm25_scores(view, terms, want, prune)
        n_docs = view.n_chunks
        extra: list[QueryTerm] = []
        if index.manifest.tokenizer.mode != "plain":
            forms = short_forms(question, index.tokenizer, qtf)
            extra = _short_form_terms(index, view, forms, n_docs)
            scored = _add_terms(scored, extra, per_posting)
            stands_for = {**stands_for, **{t.term: forms[t.term] for t in extra}}
        quoted: dict[int, TermContribution] = {}
        spans = quotes(question) if index.manifest.tokenizer.mode != "plain" else []
        if spans:
            own = lambda new: _add_terms(new, terms + extra, per_posting)  # noqa: E731
            scored, quoted = _with_quoted(index, view, spans, scored, own)

        def bm25_part(idf: float, qw: float, cid: int, tf: int) -> tuple[float, float]:
            score = per_posting.one(BM25.query_scale(qw), cid, tf)
            return score * idf / qw, score

        explained = terms + extra
        return _hits(
            index,
            view,
            scored,
            k,
            lambda cid: (
                _explain(cid, explained, bm25_part, stands_for) + ((quoted[cid],) if cid in quoted else ())
            ),
            explain,
            question,
            spread,
            weights,
        )
    scored, norms, qnorm = _cosine_scores(view, terms, want, prune)

    def cosine_part(idf: float, qw: float, cid: int, tf: int) -> tuple[float, float]:
        weight = tf_weight(tf) * idf / norms[cid]
        return weight, weight * qw / qnorm

    return _hits(
        index,
        view,
        scored,
        k,
        lambda cid: _explain(cid, terms, cosine_part, stands_for),
        explain,
        question,
        spread,
        weights,
    )


def search_passage(
    index: Index,
    counts: dict[str, int],
    k: int = DEFAULT_TOP_K,
    *,
    exclude: frozenset[int] = frozenset(),
    groups: frozenset[str] = frozenset(),
    scoring: str = DEFAULT_SCORING,
    limit: int = 32,
    spread: bool = True,
    prune: bool = True,
    weights: RankingWeights = DEFAULTS,
) -> list[Hit]:
    """Return the top `k` chunks most like a passage, given its stored term counts (`counts`:
    term -> tf), leaving out the chunk ids in `exclude` (the passage itself, and what overlaps it).

    The query is the passage's `limit` heaviest terms by tf-idf, (1 + ln tf) x idf, the idf being
    the view's (`groups`, as for a question); each weighs that much, and the chunks are scored,
    pruned and ranked as a question's are (without a question's shape: no symbol lookup, no
    file-name words)."""
    check_request(k, scoring)
    with index.snapshot():
        bm25 = scoring == "bm25" or (scoring == "auto" and index.manifest.tokenizer.mode != "plain")
        view = index.view(groups)
        found_of = {term: _postings(index, view, term) for term in counts}
        parts = {term: tf_weight(tf) for term, tf in counts.items() if tf > 0}
        terms = _query_terms(index, view, parts, found_of, bm25)[:limit]
        if not terms:
            return []
        # the excluded chunks hold the passage's words: they may take up to that many of the best places
        want = candidate_count(k, weights) + len(exclude)
        if bm25:
            scored = _bm25_scores(view, terms, want, prune)[0]
        else:
            scored = _cosine_scores(view, terms, want, prune)[0]
        scored = [sc for sc in scored if sc[1] not in exclude]
        return _hits(index, view, scored, k, lambda cid: (), False, "", spread, weights)


def _query_terms(
    index: Index,
    view: View,
    parts: dict[str, float],
    found_of: dict[str, tuple[array[int], array[int], float, float] | None],
    bm25: bool,
) -> list[QueryTerm]:
    """The query terms the view holds (their postings: `found_of`), heaviest first, each weighing
    its query tf part (`parts`) times its idf in the view. The order depends only on the view's
    statistics, so equal views give bit-identical scores: it is the order scores are summed in."""
    n_docs = view.n_chunks
    avglen = view.length / n_docs if view.length else 1.0
    # the stored BM25 bounds hold for the average length they were computed with; a larger
    # one (after updates) raises every tf part by at most the ratio
    bm25_scale = max(1.0, avglen / index.manifest.bm25_avglen)
    terms: list[QueryTerm] = []
    for term, part in parts.items():
        found = found_of[term]
        if found is None:
            continue
        ids, tfs, maxw, maxb = found
        bound = maxb * bm25_scale if bm25 else maxw * index.manifest.bound_scale
        idf = bm25_idf(n_docs, len(ids)) if bm25 else idf_weight(n_docs, len(ids))
        terms.append(QueryTerm(term, idf, part * idf, ids, tfs, bound))
    terms.sort(key=lambda t: (-t.weight, t.term))
    return terms


def _bm25_scores(
    view: View, terms: list[QueryTerm], want: int, prune: bool
) -> tuple[list[tuple[float, int]], BM25]:
    """The `want` best (score, chunk id) pairs under BM25, and the per-posting scorer."""
    # a term adds qtf * idf * (k1 + 1) * tf part, the tf part being below 1
    normalisers = view.column("bm25k", (t.ids for t in terms))
    per_posting = BM25(normalisers)
    work: list[_Work] = [
        (BM25.query_scale(t.weight), t.ids, t.tfs, BM25.query_scale(t.weight) * min(1.0, t.bound))
        for t in terms
    ]
    return top_scores(work, want, per_posting, None, len(normalisers), prune), per_posting


def _cosine_scores(
    view: View, terms: list[QueryTerm], want: int, prune: bool
) -> tuple[list[tuple[float, int]], FloatColumn, float]:
    """The `want` best (score, chunk id) pairs by cosine, the chunks' norms and the query's norm."""
    qnorm = math.sqrt(sum(t.weight * t.weight for t in terms))
    norms = view.column("norms", (t.ids for t in terms))
    work = [
        (t.weight / qnorm * t.idf, t.ids, t.tfs, t.weight / qnorm * min(1.0, t.idf * t.bound)) for t in terms
    ]
    return top_scores(work, want, Cosine(), norms, len(norms), prune), norms, qnorm


def _postings(index: Index, view: View, term: str) -> tuple[array[int], array[int], float, float] | None:
    """A term's postings (chunk ids, tfs) within the view, and its two stored bounds (maxw,
    maxb): infinite when the view leaves chunks out, as they are for the full view. None if
    no readable chunk holds the term."""
    found = index.term(term)
    if found is None or view.classes is None:
        return found
    ids, tfs = _readable(found[0], found[1], view.chunk_class, view.classes)
    return (ids, tfs, math.inf, math.inf) if ids else None


def _short_form_terms(index: Index, view: View, forms: dict[str, str], n_docs: int) -> list[QueryTerm]:
    """The short forms the index (the view) holds, as BM25 query terms of SHORT_FORM_WEIGHT,
    heaviest first (rag.text.short_forms)."""
    out: list[QueryTerm] = []
    for term in forms:
        found = _postings(index, view, term)
        if found is None:
            continue
        ids, tfs = found[0], found[1]
        idf = bm25_idf(n_docs, len(ids))
        out.append(QueryTerm(term, idf, SHORT_FORM_WEIGHT * idf, ids, tfs, math.inf))
    out.sort(key=lambda t: (-t.weight, t.term))
    return out


def _with_quoted(
    index: Index,
    view: View,
    spans: list[str],
    scored: list[tuple[float, int]],
    own: Callable[[list[tuple[float, int]]], list[tuple[float, int]]],
) -> tuple[list[tuple[float, int]], dict[int, TermContribution]]:
    """Raise the chunks that hold a quoted span verbatim by the best candidate's score, adding those
    the pool lacks at their `own` scores (rag.retrieval.quoted); with what each gained, for --explain."""
    found = holding(index, spans, lambda term: (_postings(index, view, term) or (None,))[0])
    if not found:
        return scored, {}
    top = max((score for score, _ in scored), default=1.0)
    label = " / ".join(f'"{s}"' for s in spans)
    missing = sorted(found - {cid for _, cid in scored})
    out = scored + own([(0.0, cid) for cid in missing])
    out = [(score + top if cid in found else score, cid) for score, cid in out]
    gained = TermContribution(label, 0.0, 1, 0.0, top, expands="the quoted text, as written")
    return out, dict.fromkeys(found, gained)


def _add_terms(
    scored: list[tuple[float, int]], terms: list[QueryTerm], weights: BM25
) -> list[tuple[float, int]]:
    """Add more query terms to the scores of candidates only, looking each up by binary search."""
    if not terms:
        return scored
    out = []
    for score, cid in scored:
        for t in terms:
            i = bisect_left(t.ids, cid)
            if i < len(t.ids) and t.ids[i] == cid:
                score += weights.one(BM25.query_scale(t.weight), cid, t.tfs[i])
        out.append((score, cid))
    return out


def query_counts(index: Index, question: str, classes: frozenset[int] | None = None) -> dict[str, int]:
    """Return the terms a question is scored with, and their counts: the tokenizer's query
    side, plus the acronyms the readable files (`classes`; None = all) define for words the
    question contains (rag.text.acronyms; not under the plain tokenizer, the original design)."""
    return _query_counts(index, question, classes)[0]


def _query_counts(
    index: Index, question: str, classes: frozenset[int] | None
) -> tuple[dict[str, int], dict[str, str]]:
    """query_counts, and acronym -> the words of the question it was added for."""
    counts = index.tokenizer.query_counts(question)
    if index.manifest.tokenizer.mode == "plain":
        return counts, {}
    return expand(counts, index.tokenizer.tokenize(question), index.acronyms(classes))


def _hits(
    index: Index,
    view: View,
    scored: list[tuple[float, int]],
    k: int,
    contributions: Callable[[int], tuple[TermContribution, ...]],
    explain: bool,
    question: str,
    spread: bool,
    weights: RankingWeights,
) -> list[Hit]:
    """Order scored chunk ids, fetch the best candidates' text and rank them to the top k."""
    # equal scores are ordered by place (path, then line), not by chunk id, so that an index
    # updated in place ranks exactly as a fresh build would
    places = index.places([cid for _, cid in scored])
    scored.sort(key=lambda sc: (-sc[0], places[sc[1]]))
    scored = scored[: candidate_count(k, weights)]
    chunks = index.chunks([cid for _, cid in scored])
    hits = [
        Hit(score=score, chunk=chunks[cid], contributions=contributions(cid) if explain else ())
        for score, cid in scored
    ]
    if index.manifest.tokenizer.mode == "plain":  # the original design exactly: no code-aware stage
        return rank_hits(hits, k, weights=weights)
    shape = question_shape(question)
    if shape.symbol is not None and weights.definition_scan:
        pool = {cid for _, cid in scored}
        hits.extend(_definitions_beyond(index, view, shape.symbol, pool, contributions, explain, weights))
    return rank_hits(hits, k, question=question, spread=spread, weights=weights)


def _definitions_beyond(
    index: Index,
    view: View,
    symbol: str,
    pool: set[int],
    contributions: Callable[[int], tuple[TermContribution, ...]],
    explain: bool,
    weights: RankingWeights,
) -> list[Hit]:
    """The passages outside the pool, in files named like `symbol`, that define it, with their own
    score (the sum of their terms' contributions; the ranking's definition boost places them)."""
    ids = [
        cid
        for cid in index.files_named(file_key(symbol))
        if cid not in pool
        and (view.classes is None or (view.chunk_class is not None and view.chunk_class[cid] in view.classes))
    ]
    if not ids:
        return []
    chunks = index.chunks(ids[: weights.definition_scan])
    candidates = {cid: Hit(0.0, chunks[cid]) for cid in sorted(chunks)}
    defining = {id(h) for h in definitions(list(candidates.values()), symbol, weights)}
    out = []
    for cid, hit in candidates.items():
        if id(hit) in defining:
            parts = contributions(cid)
            out.append(Hit(sum(c.score for c in parts), hit.chunk, parts if explain else ()))
    return out


_EPSILON = 1e-12  # slack for rounding when comparing score bounds
_THRESHOLD_SAMPLE = 20_000


# Postings per chunk id above which scores add up in one float array over all chunk ids
# (8 bytes a chunk) rather than in a dict of the chunks touched (about 100 bytes each).
DENSE_RATIO = 0.25
# Postings from which a query adds up with numpy, when it is importable (the semantic extra
# installs it): every posting, at C speed, with the same bits as the standard library's sums
NUMPY_POSTINGS = 50_000


def top_scores(
    terms: list[_Work],
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
    if postings >= NUMPY_POSTINGS and numpy_or_none() is not None:
        return _top_numpy(numpy_or_none(), terms, n, weights, norms, n_ids, prune, remaining)
    if postings > DENSE_RATIO * n_ids:
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
        candidates = _probe(
            acc, candidates, terms[done:], weights, scores, n, threshold, remaining[done + 1 :]
        )
    return _best(list(zip(scores(candidates), candidates)), n)


def _top_numpy(
    np: Any,
    terms: list[_Work],
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
    touched = np.zeros(n_ids, dtype=bool)
    norm = None if norms is None else np.frombuffer(norms, dtype=np.float64)

    def scores(ids: Any) -> Any:
        return acc[ids] if norm is None else acc[ids] / norm[ids]

    def nth_best(ids: Any) -> float:  # of a sample: the least of them when it holds fewer than n
        found = scores(ids[:_THRESHOLD_SAMPLE])
        at = max(len(found) - n, 0)
        return float(np.partition(found, at)[at])

    def postings(ids: array[int], tfs: array[int]) -> tuple[Any, Any]:
        return np.frombuffer(ids, dtype=np.dtype(ids.typecode)), np.frombuffer(
            tfs, dtype=np.dtype(tfs.typecode)
        )

    sample = None  # the first postings read that hold n chunks: a threshold's sample
    threshold = 0.0
    done = 0
    for scale, ids, tfs, _ in terms:
        if prune and sample is not None:
            threshold = nth_best(sample)
            if remaining[done] + _EPSILON < threshold:
                break
        at, tf = postings(ids, tfs)
        acc[at] += weights.vector(np, scale, at, tf)
        touched[at] = True
        if sample is None and len(at) >= n:
            sample = at
        done += 1
    candidates = np.flatnonzero(touched)
    if done < len(terms):
        candidates = candidates[scores(candidates) >= threshold - remaining[done] - _EPSILON]
        wanted = np.zeros(n_ids, dtype=bool)
        wanted[candidates] = True
        for i, (scale, ids, tfs, _) in enumerate(terms[done:], done + 1):
            at, tf = postings(ids, tfs)
            held = wanted[at]
            at, tf = at[held], tf[held]
            acc[at] += weights.vector(np, scale, at, tf)
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
    terms: list[_Work],
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
    terms: list[_Work],
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


def _best(scored: list[tuple[float, int]], n: int) -> list[tuple[float, int]]:
    """Return the n best (score, chunk id) pairs, plus any tied with the n-th."""
    if len(scored) <= n:
        return scored
    best = heapq.nlargest(n + 8, scored)
    last = best[n - 1][0]
    if best[-1][0] == last and len(scored) > len(best):  # many ties at the boundary: take them all
        return [sc for sc in scored if sc[0] >= last]
    return [sc for sc in best if sc[0] >= last]


def _readable(
    ids: array[int], tfs: array[int], chunk_class: array[int] | None, classes: frozenset[int]
) -> tuple[array[int], array[int]]:
    """Keep the postings of chunks in readable access classes, before any scoring."""
    assert chunk_class is not None
    keep = [i for i, cid in enumerate(ids) if chunk_class[cid] in classes]
    return array("I", [ids[i] for i in keep]), array("H", [tfs[i] for i in keep])


def _explain(
    cid: int,
    terms: list[QueryTerm],
    contribution: Callable[[float, float, int, int], tuple[float, float]],
    stands_for: dict[str, str],
) -> tuple[TermContribution, ...]:
    """Each matching query term's (weight, score) in chunk `cid`, from contribution(idf, query
    weight, cid, tf), best first; a term the query added (an acronym, a short form) names what
    it stands for."""
    out = []
    for t in terms:
        i = bisect_left(t.ids, cid)
        if i < len(t.ids) and t.ids[i] == cid:
            weight, score = contribution(t.idf, t.weight, cid, t.tfs[i])
            out.append(TermContribution(t.term, t.idf, t.tfs[i], weight, score, stands_for.get(t.term, "")))
    out.sort(key=lambda c: -c.score)
    return tuple(out)
