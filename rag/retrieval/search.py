"""Scoring over the inverted index: a question's terms and their weights under BM25, or cosine similarity
of TF-IDF vectors, on the same postings; the best chunks found by rag.retrieval.topk's max-score pruning
go to rag.ranking.order for the final top k. The numbers and formulas are rag.weights' (those a query
ranks with: the `weights` argument, a RankingWeights)."""

from __future__ import annotations

import math
import sys
from array import array
from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from rag.ranking.hits import Hit, TermContribution
from rag.ranking.order import (
    PROMPT_K,
    Shape,
    candidate_count,
    definitions,
    file_key,
    question_shape,
    rank_hits,
)
from rag.ranking.quoted import holding, quotes
from rag.retrieval.topk import Work, keep_best, numpy_ahead, top_scores
from rag.store.reader import Index
from rag.store.workspace import AnyView, Postings, Reader, Workspace, WorkspaceView
from rag.text.acronyms import expand
from rag.text.short_forms import short_forms
from rag.weights import BM25, DEFAULTS, Cosine, FloatColumn, RankingWeights, bm25_idf, idf_weight, tf_weight

if TYPE_CHECKING:
    from rag.retrieval.spelling import Correction

DEFAULT_TOP_K = PROMPT_K  # as many passages as a prompt gets
# auto: BM25 on indexes built with the code tokenizer (it wins on both eval sets, see
# docs/levers.md); cosine TF-IDF on `--tokenizer plain` indexes, whose words are only lowercased
SCORINGS = ("auto", "tfidf", "bm25")
DEFAULT_SCORING = "auto"


def search(
    index: Reader,
    question: str,
    k: int = DEFAULT_TOP_K,
    explain: bool = False,
    groups: frozenset[str] = frozenset(),
    prune: bool = True,
    scoring: str = DEFAULT_SCORING,
    spread: bool = True,
    weights: RankingWeights = DEFAULTS,
    searches: Sequence[str] = (),
) -> list[Hit]:
    """Return the top `k` chunks for `question` by BM25 or cosine similarity, best first (`spread`:
    the passages after the prompt's first ones cover more files, rag.ranking.order.spread_files;
    `weights`: what the query is ranked with, rag.weights.RankingWeights).

    `scoring` is "bm25", "tfidf" (cosine of TF-IDF vectors) or "auto": BM25 unless the index
    was built with the plain tokenizer. Only chunks a caller with `groups` may read are
    scored, with the statistics of that view (see Index.view). Query terms the index (or the
    view) has never seen drop out; a query made only of them returns []. Ties are broken by
    chunk order (path, then line).

    Besides the question's own terms, a query asks for the acronyms the repository defines
    for words it contains (rag.text.acronyms); under BM25, the best candidate_count(k) candidates
    also score the short forms of its long words (rag.text.short_forms) before the ranking.

    `searches` are more words to search with the question's, in one query: the keyword searches a
    model wrote for it (rag.answer.plan). Their terms add to the question's counts; a term of theirs
    the index lacks drops out, uncorrected (a guessed name is not a typo), and the ranking sees their
    words as the question's.
    """
    check_request(k, scoring)
    with index.snapshot():
        query = analyse(index, question, groups, searches)
        return _search(index, query, k, explain, groups, prune, scoring, spread, weights)


def search_query(
    index: Reader,
    query: Query,
    k: int = DEFAULT_TOP_K,
    *,
    explain: bool = False,
    groups: frozenset[str] = frozenset(),
    prune: bool = True,
    scoring: str = DEFAULT_SCORING,
    spread: bool = True,
    weights: RankingWeights = DEFAULTS,
) -> list[Hit]:
    """search() for a question analysed already (analyse(), for the same `groups`): a list ranked
    deeper scores it again without analysing it again."""
    check_request(k, scoring)
    with index.snapshot():
        return _search(index, query, k, explain, groups, prune, scoring, spread, weights)


def _bm25_by_default(index: Reader) -> bool:
    """What `auto` scores with: BM25, but cosine TF-IDF on a plain-tokenizer index; a workspace
    always BM25 (TF-IDF's norms are per index)."""
    return index.manifest.tokenizer.mode != "plain" or isinstance(index, Workspace)


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


class Query(NamedTuple):
    """A question analysed once, before it is scored: its terms and their counts (typos corrected,
    acronyms added, a model's searches counted in), its quoted spans, its shape, the short forms of
    its long words, and the corrections made. (A NamedTuple: a query must not pay for dataclasses.)"""

    question: str
    searches: tuple[str, ...]  # more words searched with the question's (a model's searches)
    text: str  # the question and the searches, the words the ranking reads
    counts: dict[str, int]  # term -> its count in the query, in the order scores are summed in
    stands_for: dict[str, str]  # a term the query added (an acronym, a correction) -> what it stands for
    corrected: frozenset[str]  # the terms that replaced a typo: a guess, weighted down
    corrections: tuple[
        Correction, ...
    ]  # the question's words the index has never seen, and what was searched
    forms: dict[str, str]  # short form -> the long word it shortens (BM25 scores them on the candidates)
    quoted: tuple[str, ...]  # spans quoted in the question, looked up as written
    shape: Shape  # the form of the text: one identifier, file-name words (rag.ranking.order)


def analyse(
    index: Reader, question: str, groups: frozenset[str] = frozenset(), searches: Sequence[str] = ()
) -> Query:
    """Return `question` analysed for the view of a caller with `groups`: its terms (and the acronyms
    the readable files define for its words), the words the view has never seen corrected to its
    nearest terms (rag.retrieval.spelling), `searches` counted in (never corrected: a guessed name is
    not a typo), and, under the code tokenizer, its quoted spans and the short forms of its long words."""
    with index.snapshot():
        if isinstance(index, Workspace):  # what analysing reads of its hosts, read at once
            words = index.tokenizer.query_counts("\n".join((question, *searches)))
            index.prepare(frozenset(groups), list(words))
        return _analyse(index, question, index.view(groups), tuple(searches))


def _analyse(index: Reader, question: str, view: AnyView, searches: tuple[str, ...]) -> Query:
    qtf, stands_for = _query_counts(index, question, view.classes)  # added term -> what it stands for
    if isinstance(view, WorkspaceView):  # the members' document frequencies of every term, at once
        held = view.workspace.prefetch(view, qtf)
        if "numpy" not in sys.modules:
            numpy_ahead(sum(held.values()))
    elif isinstance(index, Index) and "numpy" not in sys.modules:
        numpy_ahead(index.postings_count(qtf))  # a query long enough to add up in numpy loads it first
    qtf, corrected, corrections = _corrected(index, view, question, qtf)
    stands_for = {**stands_for, **corrected} if corrected else stands_for
    text = question
    if searches:  # a model's words, counted with the question's (never corrected)
        more, more_for = _query_counts(index, "\n".join(searches), view.classes)
        qtf = dict(qtf)
        for term, n in more.items():
            qtf[term] = qtf.get(term, 0) + n
        stands_for = {**more_for, **stands_for}
        text = "\n".join((question, *searches))  # the ranking reads the words of all of them
    code = index.manifest.tokenizer.mode != "plain"
    return Query(
        question,
        searches,
        text,
        qtf,
        stands_for,
        frozenset(corrected),
        corrections,
        short_forms(text, index.tokenizer, qtf) if code else {},
        tuple(quotes(text)) if code else (),
        question_shape(text),
    )


def _corrected(
    index: Reader, view: AnyView, question: str, counts: dict[str, int]
) -> tuple[dict[str, int], dict[str, str], tuple[Correction, ...]]:
    """The counts with each term the view has never seen corrected (rag.retrieval.spelling, loaded
    only for such a question), corrected term -> the word typed, and the corrections."""
    if all(_known(index, view, term) for term in counts):
        return counts, {}, ()
    from rag.retrieval.spelling import correct

    return correct(index, view, question, counts)


def _known(index: Reader, view: AnyView, term: str) -> bool:
    """Whether a chunk the view may read holds `term` (a key lookup when it reads everything)."""
    return index.has_term(term) if view.classes is None else _postings(index, view, term) is not None


def _search(
    index: Reader,
    query: Query,
    k: int,
    explain: bool,
    groups: frozenset[str],
    prune: bool,
    scoring: str,
    spread: bool,
    weights: RankingWeights,
) -> list[Hit]:
    bm25 = scoring == "bm25" or (scoring == "auto" and _bm25_by_default(index))
    view = index.view(groups)
    qtf, stands_for, question = query.counts, query.stands_for, query.text
    if isinstance(view, WorkspaceView):  # the members' document frequencies of every term, at once
        view.workspace.prefetch(view, [*qtf, *query.forms])
    found_of = {term: _postings(index, view, term) for term in qtf}
    # each term's query tf part (BM25: its count; cosine: 1 + ln count), a corrected typo's scaled
    # down: it is a guess
    parts = {
        term: (weights.correction_weight if term in query.corrected else 1.0) * (n if bm25 else tf_weight(n))
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
            forms = query.forms
            extra = _short_form_terms(index, view, forms, n_docs, weights.short_form_weight)
            scored = _add_terms(scored, extra, per_posting)
            stands_for = {**stands_for, **{t.term: forms[t.term] for t in extra}}
        quoted: dict[int, TermContribution] = {}
        spans = list(query.quoted)
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
            query.shape,
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
        query.shape,
        spread,
        weights,
    )


def search_passage(
    index: Reader,
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
        bm25 = scoring == "bm25" or (scoring == "auto" and _bm25_by_default(index))
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
        return _hits(index, view, scored, k, lambda cid: (), False, "", question_shape(""), spread, weights)


def _query_terms(
    index: Reader,
    view: AnyView,
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
    view: AnyView, terms: list[QueryTerm], want: int, prune: bool
) -> tuple[list[tuple[float, int]], BM25]:
    """The `want` best (score, chunk id) pairs under BM25, and the per-posting scorer."""
    # a term adds qtf * idf * (k1 + 1) * tf part, the tf part being below 1
    normalisers = view.column("bm25k", (t.ids for t in terms))
    per_posting = BM25(normalisers)
    if isinstance(view, WorkspaceView):  # many repositories: each scored where it is held
        scales = [(t.term, BM25.query_scale(t.weight)) for t in terms]
        return keep_best(view.workspace.top(view, scales, want, prune).scored, want), per_posting
    work: list[Work] = [
        (BM25.query_scale(t.weight), t.ids, t.tfs, BM25.query_scale(t.weight) * min(1.0, t.bound))
        for t in terms
    ]
    return top_scores(work, want, per_posting, None, len(normalisers), prune), per_posting


def _cosine_scores(
    view: AnyView, terms: list[QueryTerm], want: int, prune: bool
) -> tuple[list[tuple[float, int]], FloatColumn, float]:
    """The `want` best (score, chunk id) pairs by cosine, the chunks' norms and the query's norm."""
    qnorm = math.sqrt(sum(t.weight * t.weight for t in terms))
    norms = view.column("norms", (t.ids for t in terms))
    work = [
        (t.weight / qnorm * t.idf, t.ids, t.tfs, t.weight / qnorm * min(1.0, t.idf * t.bound)) for t in terms
    ]
    return top_scores(work, want, Cosine(), norms, len(norms), prune), norms, qnorm


def _postings(index: Reader, view: AnyView, term: str) -> tuple[array[int], array[int], float, float] | None:
    """A term's postings (chunk ids, tfs) within the view, and its two stored bounds (maxw,
    maxb): infinite when the view leaves chunks out, as they are for the full view. None if
    no readable chunk holds the term."""
    if isinstance(view, WorkspaceView):
        return view.workspace.view_term(view, term)
    found = index.term(term)
    if found is None or view.classes is None:
        return found
    ids, tfs = readable_postings(found[0], found[1], view.chunk_class, view.classes)
    return (ids, tfs, math.inf, math.inf) if ids else None


def _short_form_terms(
    index: Reader, view: AnyView, forms: dict[str, str], n_docs: int, weight: float
) -> list[QueryTerm]:
    """The short forms the index (the view) holds, as BM25 query terms of `weight` (a typed word's 1),
    heaviest first (rag.text.short_forms)."""
    out: list[QueryTerm] = []
    for term in forms:
        found = _postings(index, view, term)
        if found is None:
            continue
        ids, tfs = found[0], found[1]
        idf = bm25_idf(n_docs, len(ids))
        out.append(QueryTerm(term, idf, weight * idf, ids, tfs, math.inf))
    out.sort(key=lambda t: (-t.weight, t.term))
    return out


def _with_quoted(
    index: Reader,
    view: AnyView,
    spans: list[str],
    scored: list[tuple[float, int]],
    own: Callable[[list[tuple[float, int]]], list[tuple[float, int]]],
) -> tuple[list[tuple[float, int]], dict[int, TermContribution]]:
    """Raise the chunks that hold a quoted span verbatim by the best candidate's score, adding those
    the pool lacks at their `own` scores (rag.ranking.quoted); with what each gained, for --explain."""
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
    postings = [(BM25.query_scale(t.weight), tf_lookup(t.ids, t.tfs)) for t in terms]
    for score, cid in scored:
        for scale, tf_of in postings:
            tf = tf_of(cid)
            if tf is not None:
                score += weights.one(scale, cid, tf)
        out.append((score, cid))
    return out


def query_counts(index: Reader, question: str, classes: frozenset[int] | None = None) -> dict[str, int]:
    """Return the terms a question is scored with, and their counts: the tokenizer's query
    side, plus the acronyms the readable files (`classes`; None = all) define for words the
    question contains (rag.text.acronyms; not under the plain tokenizer, which adds no term to a question's words)."""
    return _query_counts(index, question, classes)[0]


def _query_counts(
    index: Reader, question: str, classes: frozenset[int] | None
) -> tuple[dict[str, int], dict[str, str]]:
    """query_counts, and acronym -> the words of the question it was added for."""
    counts = index.tokenizer.query_counts(question)
    if index.manifest.tokenizer.mode == "plain":
        return counts, {}
    return expand(counts, index.tokenizer.tokenize(question), index.acronyms(classes))


def _hits(
    index: Reader,
    view: AnyView,
    scored: list[tuple[float, int]],
    k: int,
    contributions: Callable[[int], tuple[TermContribution, ...]],
    explain: bool,
    question: str,
    shape: Shape,
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
    if (
        index.manifest.tokenizer.mode == "plain"
    ):  # plain: the scores and the demotions alone, no code-aware stage
        return rank_hits(hits, k, weights=weights)
    if shape.symbol is not None and weights.definition_scan:
        pool = {cid for _, cid in scored}
        hits.extend(_definitions_beyond(index, view, shape.symbol, pool, contributions, explain, weights))
    return rank_hits(hits, k, question=question, spread=spread, weights=weights)


def _definitions_beyond(
    index: Reader,
    view: AnyView,
    symbol: str,
    pool: set[int],
    contributions: Callable[[int], tuple[TermContribution, ...]],
    explain: bool,
    weights: RankingWeights,
) -> list[Hit]:
    """The passages outside the pool, in files named like `symbol`, that define it, with their own
    score (the sum of their terms' contributions; the ranking's definition boost places them)."""
    ids = readable(index, view, [cid for cid in index.files_named(file_key(symbol)) if cid not in pool])
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


def readable(index: Reader, view: AnyView, ids: list[int]) -> list[int]:
    """The chunk ids of `ids` the view's caller may read, in order."""
    if view.classes is None:
        return ids
    if isinstance(view, WorkspaceView):
        return view.workspace.readable(view, ids)
    classes, chunk_class = view.classes, view.chunk_class
    return [cid for cid in ids if chunk_class is not None and chunk_class[cid] in classes]


def tf_lookup(ids: array[int], tfs: array[int]) -> Callable[[int], int | None]:
    """A term's tf in a chunk (None: the chunk does not hold it), from its postings; a workspace's
    are looked up on its hosts for the chunks it has read (Postings.tf_of), not fetched whole."""
    if isinstance(ids, Postings):
        return ids.tf_of

    def tf_of(cid: int) -> int | None:
        i = bisect_left(ids, cid)
        return tfs[i] if i < len(ids) and ids[i] == cid else None

    return tf_of


def readable_postings(
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
        tf = tf_lookup(t.ids, t.tfs)(cid)
        if tf is not None:
            weight, score = contribution(t.idf, t.weight, cid, tf)
            out.append(TermContribution(t.term, t.idf, tf, weight, score, stands_for.get(t.term, "")))
    out.sort(key=lambda c: -c.score)
    return tuple(out)
