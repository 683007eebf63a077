"""Every scoring number and formula, in one place: tf, idf, BM25's parameters and parts, the
L2 norms of TF-IDF vectors, and the pruning bounds stored at ingest.

The same functions serve the writer (norms, BM25 normalisers and bounds stored in the index)
and the scorer (a term's contribution to a chunk), so that pruned and exhaustive search, and
the bounds stored at ingest, agree to the last bit. An index records the BM25 parameters it was
built with (scoring_parameters(), in its manifest); a reader refuses an index built with others.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Callable, Iterator
from itertools import repeat
from operator import add, mul, truediv
from typing import Union

# BM25's saturation and length normalisation, picked on the docstring set (bench/levers_bm25.py,
# bench/LEVERS.md): hit@4 and MRR@10 plateau for k1 3-6 and b 0.9-1.0 with rag's fields
BM25_K1 = 4.0
BM25_B = 0.9

# a corrected typo's share of a typed word's query weight (rag.retrieval.spelling): a guess, as a short form
# is (rag.text.short_forms); at 1.0, real words the index lacks ("through" -> "though") cost all three
# evaluation sets a little (bench/LEVERS.md)
CORRECTION_WEIGHT = 0.3

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


class Cosine:
    """scale * (1 + ln tf): the unnormalised tf-idf part (divided by the chunk's norm later)."""

    def many(self, scale: float, ids: array[int], tfs: array[int]) -> Iterator[float]:
        """The contributions of all of a term's postings, at C speed."""
        if not tfs.tobytes()[_HIGH_BYTE::2].strip(b"\0"):  # no tf above 255: nearly always
            return map([scale * w for w in _LOW_TFS].__getitem__, tfs)
        return map(mul, repeat(scale), map(add, repeat(1.0), map(math.log, tfs)))

    def one(self, scale: float, cid: int, tf: int) -> float:
        """The contribution of one probed posting, in the same floating-point order."""
        return scale * (_LOW_TFS[tf] if tf < 256 else tf_weight(tf))


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

    @staticmethod
    def query_scale(query_weight: float) -> float:
        """A term's scale from its query weight (qtf * idf): it adds scale * tf part, the tf part below 1."""
        return query_weight * (BM25_K1 + 1.0)
