"""Every scoring number and formula, in one place: tf, idf, BM25's parameters and parts, the
L2 norms of TF-IDF vectors, the pruning bounds stored at ingest, and the weights a query ranks with.

The same functions serve the writer (norms, BM25 normalisers and bounds stored in the index)
and the scorer (a term's contribution to a chunk), so that pruned and exhaustive search, and
the bounds stored at ingest, agree to the last bit. An index records the BM25 parameters it was
built with (scoring_parameters(), in its manifest); a reader refuses an index built with others.

What a query ranks with beyond them (RankingWeights) is read at query time and stored nowhere: a
search takes it as an argument, DEFAULTS unless a benchmark passes DEFAULTS._replace(name=value).
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Callable, Iterator, Sequence
from itertools import repeat
from operator import add, mul, truediv
from typing import Any, NamedTuple, Union

# BM25's saturation and length normalisation, picked on the docstring set (bench/levers/bm25.py,
# docs/levers.md): hit@4 and MRR@10 plateau for k1 3-6 and b 0.9-1.0 with rag's fields
BM25_K1 = 4.0
BM25_B = 0.9


class RankingWeights(NamedTuple):
    """The numbers and switches a query is ranked with, besides the index's own BM25 parameters:
    read by rag.retrieval, rag.ranking and its semantic stage, each measured in docs/levers.md. A
    benchmark varies them by passing DEFAULTS._replace(name=value) to search() or rank_question()
    (an unknown name is a ValueError; mypy checks the types)."""

    # a corrected typo's share of a typed word's query weight (rag.retrieval.spelling): a guess, as a short
    # form is (rag.text.short_forms); at 1.0, real words the index lacks ("through" -> "though") cost all
    # three evaluation sets a little
    correction_weight: float = 0.3
    # how many scored candidates search() hands to the ranking for a top k: max(k x this, min_candidates).
    # Up to k = 10 it is the same pool whatever k, so that the first passages of a longer list are exactly
    # the shorter list (the prompt's top 4 is what `rag eval`, which asks for 10, scores as hit@4): with 12
    # for k = 4 and 30 for k = 10, a demoted test passage kept a place in the top 4 that a code passage
    # from the larger pool took from it (docstring set: hit@4 0.606 at k = 4 against 0.613)
    candidates_per_k: int = 3
    min_candidates: int = 30
    test_factor: float = 0.5  # tests, licences and change logs are ranked at this fraction of their score
    duplicate_jaccard: float = 0.8  # word-set overlap above which two passages count as the same text
    # the prompt's passages hold both a docs section and code when the best passage of the missing kind,
    # among ranks PROMPT_K + 1 to mix_depth, scores within mix_ratio of the last of them
    mix_ratio: float = 0.8
    mix_depth: int = 14
    # the code-aware stage (docs/levers.md, "ranking stack"); a boost is a fraction of the best candidate's
    # score, added to a candidate's; a multiplier scales the candidate's own
    definition_boost: float = 3.0  # a chunk that defines the identifier a question names
    definition_file: float = 1.5  # times that, for a definition in a file named like the identifier
    # of one definition's windows, those holding its definition line are the ones that define it
    definition_line: bool = True
    # a structured chunk whose text holds the definition (a class line above its first method) defines it too
    defines_in_text: bool = True
    definition_scan: int = 200  # a symbol question also looks, past the pool, in files named like the symbol
    # a plain-language question's passage scores x (1 + path_mult x the share of the question's words its
    # file name and folder hold), when that share is at least path_share
    path_mult: float = 0.5
    path_share: float = 0.1
    path_min: int = 5  # letters a question word and a file-name part must share at their start
    path_folder: bool = True  # the folder's name counts too
    # a file's best chunk scores x (1 + coherence_mult x the file's share of the pool's score)
    coherence_mult: float = 0.15
    coherence_rest: float = 0.25  # a file's other chunks get this fraction of its best chunk's factor
    coherence_code: bool = True  # only code files get the coherence boost: not prose sections, markup or data
    coherence_skip_demoted: bool = True  # tests, licences and change logs get no coherence boost
    # markup, data and config files (HTML, JSON, YAML, ...) are ranked at this fraction of their score
    data_factor: float = 0.5
    example_factor: float = 0.5  # example code (examples/, samples/, demos/, docs_src/)
    # the boosts are given each candidate's score after its demotions, raised to this power: BM25's gaps
    # between near answers shrink, so a file-level boost (coherence, the file's name) can overturn a narrow
    # lexical lead but not a wide one; the order without boosts is the same
    score_power: float = 0.8
    # after the first PROMPT_K passages, each next one is ranked at spread ** (passages of its file already
    # listed, less spread_free - 1): a top 10 covers more files, the prompt's top 4 is the same; code search
    # +0.017 (symbol 0.951 -> 0.961), docstring's answers at ranks 5-10, often the listed file's next
    # function, partly pushed out (hit@10 -0.03). 1 switches it off
    spread: float = 0.7
    spread_free: int = 2  # a file's passages listed before the spread applies to its next one
    # each passage of the final list grows over its file's neighbouring windows while its text stays
    # within this many characters (rag.ranking.passages; 0: the windows as ranked). On the four sets,
    # lexical: code search 0.8155 -> 0.8226, dev hit@4 0.771 -> 0.812, docstring 0.625 -> 0.708,
    # natural 0.594 -> 0.625, the top 4 about 2,000 characters a passage instead of 800 (docs/levers.md)
    grow_chars: int = 2400
    # a question's short forms (rag.text.short_forms): their share of a typed word's query weight
    short_form_weight: float = 0.3
    # `rag related`: the source passage's terms its query keeps, heaviest by tf-idf, so that a long
    # passage's query costs no more than a long question's
    passage_terms: int = 32
    # the semantic stage (rag.ranking.semantic), measured on the three sets together (bench/ranking.py
    # --semantic; docs/levers.md, "semantic rerank"). The lexical passages it reorders: 40, since the
    # quantized model made a cold query's 40 passages cost 1.1 s (at most 1.5 s wanted): code search
    # 0.8177 -> 0.8234, dev MRR 0.6075 -> 0.6235, docstring equal
    semantic_depth: int = 40
    lexical_weight: float = 0.5  # mix = lexical_weight x ranked / best ranked + (1 - lexical_weight) x cosine
    # a file many of whose passages are like the question ranks up, as the lexical coherence does: its best
    # passage's mix x (1 + semantic_coherence x the file's share of the pool's cosines, relative to the file
    # holding the most), its other passages semantic_coherence_rest of that
    semantic_coherence: float = 0.08
    semantic_coherence_rest: float = 0.1
    # as coherence_code: prose, markup and data files, tests, licences and change logs gain nothing
    semantic_coherence_code: bool = True


DEFAULTS = RankingWeights()

# a per-chunk float array by chunk id: an array when computed, a memoryview when read in blocks
FloatColumn = Union["array[float]", "memoryview[float]"]


def scoring_parameters() -> dict[str, float]:
    """The parameters baked into an index's stored arrays, as its manifest records them (read at
    call time, so a changed value is seen)."""
    return {"bm25_k1": BM25_K1, "bm25_b": BM25_B}


def tf_weight(tf: int) -> float:
    """Return the sublinear term-frequency weight 1 + ln(tf)."""
    return 1.0 + math.log(tf)


def idf_weight(n_docs: int, df: int) -> float:
    """Return the smoothed inverse document frequency ln((1 + N) / (1 + df)) + 1."""
    return math.log((1 + n_docs) / (1 + df)) + 1.0


def bm25_idf(n_docs: int, df: int) -> float:
    """Return BM25's inverse document frequency, ln(1 + (N - df + 0.5) / (df + 0.5)) (Lucene's form)."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


class TfTable(dict[int, float]):
    """f(tf) by stored tf, each computed on first use and looked up at C speed (a dict's
    __getitem__ in map): a full table of the 65,536 storable tfs took 20 ms to build, and
    few chunks repeat a term 256 times."""

    def __init__(self, f: Callable[[int], float]) -> None:
        super().__init__({0: 0.0})
        self._f = f

    def __missing__(self, tf: int) -> float:
        value = self[tf] = self._f(tf)
        return value


# the one tf table: tf_weight by stored tf (0.0 for 0), and its squares for the norms
TF_WEIGHTS = TfTable(tf_weight)
TF_WEIGHT_SQUARES = TfTable(lambda tf: tf_weight(tf) ** 2)
_LOW_TFS = [TF_WEIGHTS[n] for n in range(256)]  # the table's first 256 entries, as a list to scale
_HIGH_BYTE = 1 if sys.byteorder == "little" else 0  # of a uint16 tf, in memory


def bm25_normalisers(lengths: array[int], avglen: float) -> array[float]:
    """Return k1 (1 - b + b len / avglen) for each chunk length, as k1 (1 - b) + (k1 b / avglen) len:
    BM25's tf part of a posting is tf / (tf + this)."""
    base = BM25_K1 * (1.0 - BM25_B)
    per_length = BM25_K1 * BM25_B / avglen
    return array("d", map(add, repeat(base), map(mul, repeat(per_length), lengths)))


def view_norms(
    forward_tids: list[array[int]],
    forward_tfs: list[array[int]],
    chunk_class: array[int],
    view: frozenset[int],
    n_view: int,
    df: array[int],
    live: array[int] | None = None,
) -> array[float]:
    """Return each chunk's L2 norm under the IDF of a view (0.0 for chunks outside it).

    Per chunk the sum runs at C speed: map/sum over its forward lists.
    """
    # one idf per distinct df (most terms share a small df), then a list by term id
    idf_sq_of = {d: idf_weight(n_view, d) ** 2 for d in set(df) if d}
    idf_sq_of[0] = 0.0
    idf_sq = list(map(idf_sq_of.__getitem__, df))
    w_sq = TF_WEIGHT_SQUARES.__getitem__
    get_idf = idf_sq.__getitem__
    out = array("d", bytes(8 * len(forward_tids)))
    for cid, (tids, tfs) in enumerate(zip(forward_tids, forward_tfs)):
        if chunk_class[cid] in view and (live is None or live[cid]):
            out[cid] = math.sqrt(sum(map(mul, map(w_sq, tfs), map(get_idf, tids))))
    return out


def max_weight(ids: array[int], tfs: array[int], norms: FloatColumn) -> float:
    """Return a term's largest tf_weight / norm over its postings (at C speed); times the
    term's idf, that bounds its normalised weight in any chunk."""
    if not ids:
        return 0.0
    largest: float = max(map(truediv, map(TF_WEIGHTS.__getitem__, tfs), map(norms.__getitem__, ids)))
    return largest


def max_bm25(ids: array[int], tfs: array[int], normalisers: FloatColumn) -> float:
    """Return a term's largest BM25 tf part, tf / (tf + normaliser), over its postings (at C
    speed); it is below 1."""
    if not ids:
        return 0.0
    largest: float = max(map(truediv, tfs, map(add, tfs, map(normalisers.__getitem__, ids))))
    return largest


def score_bounds(
    ids_of: Sequence[array[int]], tfs_of: Sequence[array[int]], norms: FloatColumn, normalisers: FloatColumn
) -> tuple[list[float], list[float]]:
    """Return max_weight and max_bm25 of every term, by term id, from its postings: the same
    values, in one loop rather than two Python calls per term (in numpy when it is installed)."""
    np = _numpy_for(ids_of, tfs_of)
    if np is not None:
        return _score_bounds_numpy(np, ids_of, tfs_of, norms, normalisers)
    weight_of, norm_of, normaliser_of = TF_WEIGHTS.__getitem__, norms.__getitem__, normalisers.__getitem__
    maxw: list[float] = []
    maxb: list[float] = []
    for ids, tfs in zip(ids_of, tfs_of):
        if ids:
            maxw.append(max(map(truediv, map(weight_of, tfs), map(norm_of, ids))))
            maxb.append(max(map(truediv, tfs, map(add, tfs, map(normaliser_of, ids)))))
        else:
            maxw.append(0.0)
            maxb.append(0.0)
    return maxw, maxb


# values a batch of score_bounds' numpy arrays holds (about 50 bytes each while they are worked on)
_BOUNDS_BATCH = 1 << 20


def _numpy_for(ids_of: Sequence[array[int]], tfs_of: Sequence[array[int]]) -> Any:
    """numpy, when it is installed and the lists are the writer's (uint32 ids, uint16 tfs)."""
    from rag.numeric import numpy_or_none

    np = numpy_or_none()
    if np is None or not {ids.typecode for ids in ids_of} | {"/" + t.typecode for t in tfs_of} <= {"I", "/H"}:
        return None
    return np


def _batches(np: Any, lengths: Any) -> Iterator[tuple[int, int]]:
    """(start, stop) of consecutive lists holding about _BOUNDS_BATCH values, at least one list."""
    ends = np.cumsum(lengths)  # the values up to each list's last
    start = 0
    while start < len(lengths):
        before = int(ends[start - 1]) if start else 0
        stop = max(start + 1, int(np.searchsorted(ends, before + _BOUNDS_BATCH, "right")))
        yield start, stop
        start = stop


def _joined(np: Any, lists: Sequence[array[int]]) -> Any:
    """The lists (at least one), end to end, as one numpy array of their typecode."""
    return np.frombuffer(b"".join(lists), dtype=np.dtype(lists[0].typecode))


def _table(np: Any, table: TfTable, tfs: Any) -> Any:
    """The table's values for tfs 0 to the largest of `tfs`, as Python computes them."""
    return np.array([table[tf] for tf in range(int(tfs.max(initial=0)) + 1)])


def _score_bounds_numpy(
    np: Any,
    ids_of: Sequence[array[int]],
    tfs_of: Sequence[array[int]],
    norms: FloatColumn,
    normalisers: FloatColumn,
) -> tuple[list[float], list[float]]:
    """score_bounds over numpy arrays, a batch of terms at a time: each posting's two ratios
    are the same divisions of the same doubles, and a maximum is exact, so the bounds keep
    their bits."""
    norm = np.frombuffer(norms, dtype=np.float64)
    normaliser = np.frombuffer(normalisers, dtype=np.float64)
    lengths = np.array([len(ids) for ids in ids_of], dtype=np.intp)
    maxw = np.zeros(len(ids_of))
    maxb = np.zeros(len(ids_of))
    for start, stop in _batches(np, lengths):
        ids = _joined(np, ids_of[start:stop]).astype(np.intp)
        tfs = _joined(np, tfs_of[start:stop])
        if len(ids):
            tf = tfs.astype(np.float64)
            held = lengths[start:stop] > 0  # a term without postings keeps 0.0
            offsets = (np.cumsum(lengths[start:stop]) - lengths[start:stop])[held]
            weights = _table(np, TF_WEIGHTS, tfs).take(tfs) / norm.take(ids)
            maxw[start:stop][held] = np.maximum.reduceat(weights, offsets)
            maxb[start:stop][held] = np.maximum.reduceat(tf / (tf + normaliser.take(ids)), offsets)
    return maxw.tolist(), maxb.tolist()


class Cosine:
    """scale * (1 + ln tf): the unnormalised tf-idf part (divided by the chunk's norm later)."""

    def many(self, scale: float, ids: array[int], tfs: array[int]) -> Iterator[float]:
        """The contributions of all of a term's postings, at C speed."""
        # no tf above 255: nearly always (an index stores such tfs in one byte, rag.store.packing)
        if tfs.itemsize == 1 or not tfs.tobytes()[_HIGH_BYTE::2].strip(b"\0"):
            return map([scale * w for w in _LOW_TFS].__getitem__, tfs)
        return map(mul, repeat(scale), map(add, repeat(1.0), map(math.log, tfs)))

    def one(self, scale: float, cid: int, tf: int) -> float:
        """The contribution of one probed posting, in the same floating-point order."""
        return scale * (_LOW_TFS[tf] if tf < 256 else tf_weight(tf))

    def vector(self, np: Any, scale: float, ids: Any, tfs: Any) -> Any:
        """many() as a numpy array, given numpy and the postings as numpy arrays: the same bits."""
        one_byte = tfs.itemsize == 1  # such a tf is never above 255: nothing to cap or look for
        # the table taken by numpy's own index type: indexing by any other converts it at each use
        out = np.array(_LOW_TFS).take((tfs if one_byte else np.minimum(tfs, 255)).astype(np.intp))
        out *= scale
        if not one_byte:
            high = np.flatnonzero(tfs > 255)
            if len(high):
                out[high] = [scale * tf_weight(tf) for tf in tfs[high].tolist()]
        return out


class BM25:
    """scale * tf / (tf + k1 (1 - b + b len / avglen)), the normaliser being stored per chunk."""

    def __init__(self, normalisers: FloatColumn) -> None:
        self.normalisers = normalisers

    def many(self, scale: float, ids: array[int], tfs: array[int]) -> Iterator[float]:
        """The contributions of all of a term's postings, at C speed."""
        return map(
            truediv, map(mul, repeat(scale), tfs), map(add, tfs, map(self.normalisers.__getitem__, ids))
        )

    def one(self, scale: float, cid: int, tf: int) -> float:
        """The contribution of one probed posting, in the same floating-point order."""
        return scale * tf / (tf + self.normalisers[cid])

    def vector(self, np: Any, scale: float, ids: Any, tfs: Any) -> Any:
        """many() as a numpy array, given numpy and the postings as numpy arrays: the same bits."""
        tf = tfs.astype(np.float64)
        below = np.frombuffer(self.normalisers, dtype=np.float64).take(ids)  # tf + the normaliser, in place
        below += tf
        tf *= scale
        tf /= below
        return tf

    @staticmethod
    def query_scale(query_weight: float) -> float:
        """A term's scale from its query weight (qtf * idf): it adds scale * tf part, the tf part below 1."""
        return query_weight * (BM25_K1 + 1.0)
