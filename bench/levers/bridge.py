"""The vocabulary bridge as BM25 query terms, on bench/ranking.py's four sets.

    python bench/levers/bridge.py --languages "off:" "w0.2 top3:bridge.WEIGHT=0.2" \\
        "w0.3 top10:bridge.WEIGHT=0.3,bridge.TOP=10" "w0.3 candidates:bridge.WEIGHT=0.3,bridge.EVERYWHERE=0"

Questions say "retry" or "variable" where code says `attempt`, `backoff` or `getenv`. The table
(bench/data/bridge.tsv.gz, mined by bench/levers/train_bridge.py from doc comments of repositories none of
which is evaluated on) maps a question word, stemmed as the tokenizer's query side makes it, to the
code terms found with it beyond chance. A lowercase question word (not an identifier, not a
capitalised name: those are the code's own names) asks for its TOP terms at WEIGHT x their score
(a normalised PMI, at most 1) of a typed word's weight, when the index holds them; terms the question
asks for already are left alone. EVERYWHERE: scored over the whole index, as the question's own terms
are, so they can find a passage none of its words is in; 0: on the BM25 candidates only, as the short
forms are (rag.text.short_forms).

The product has no bridge (measured, it was left off), so this script patches it into
rag.retrieval.search for the run: after the spelling correction (rag.retrieval.search._corrected,
which every question passes through; it leaves known terms as they are) the bridged
terms join the query's term counts, with WEIGHT x score as their count, or (EVERYWHERE=0) join the
short forms' terms. --explain does not name the word a bridged term stands for.

bench/ranking.py's arguments, and `bridge.NAME=VALUE` setting this module's WEIGHT, TOP, EVERYWHERE
for a run; `--table PATH` reads another table (bench/levers/train_bridge.py --out).
"""

from __future__ import annotations

import gzip
import re
import sys
from collections.abc import Container, Iterable
from functools import cache
from pathlib import Path
from typing import Any

sys.path[0] = str(Path(__file__).resolve().parents[2])

from bench import ranking  # noqa: E402
from rag.retrieval import search  # noqa: E402
from rag.store.reader import Index  # noqa: E402
from rag.store.views import View  # noqa: E402
from rag.text.tokenizer import QUERY_STOPWORDS, Tokenizer  # noqa: E402
from rag.weights import bm25_idf  # noqa: E402

WEIGHT = 0.0  # of a typed word's query weight, times the term's score; 0 turns the bridge off
TOP = 3  # terms per question word, best first
EVERYWHERE = True  # scored over the whole index (True) or on the BM25 candidates only
STEM = "porter2"  # the stemmer the table's words and terms were made with; other indexes skip it
PATH = str(Path(__file__).resolve().parents[1] / "data" / "bridge.tsv.gz")

_WORD = re.compile(r"\w+")


def table() -> dict[str, tuple[tuple[str, float], ...]]:
    """Return word -> its (code term, score) pairs, best first; {} if the table is missing."""
    return _read(PATH)


@cache
def _read(path: str) -> dict[str, tuple[tuple[str, float], ...]]:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return {}
    out: dict[str, tuple[tuple[str, float], ...]] = {}
    for line in lines:
        if line.startswith("#") or "\t" not in line:
            continue
        word, terms = line.split("\t", 1)
        pairs = (t.rsplit(":", 1) for t in terms.split(","))
        out[word] = tuple((term, float(score)) for term, score in pairs)
    return out


def prose_words(question: str, tokenizer: Tokenizer) -> list[str]:
    """Return the terms of the question's plain words, in order: lowercase words (`workers`), not
    identifiers (`stealWork`, `task_id`, `HTTP`) or capitalised words (`Status`, `Visitor`), most
    often the code's own names already. Question words ("why", "does") are left out."""
    out: list[str] = []
    for word in _WORD.findall(question):
        if word.isalpha() and word.islower() and word not in QUERY_STOPWORDS:
            out.extend(t for t in tokenizer.tokenize(word) if t not in out)
    return out


def bridge_terms(words: Iterable[str], asked: Container[str]) -> dict[str, tuple[str, float]]:
    """Return code term -> (the question word it stands for, its score) for the question's terms
    `words` (their TOP best terms each), leaving out terms in `asked`; a term two words ask for
    keeps its best score."""
    known = table()
    out: dict[str, tuple[str, float]] = {}
    for word in words:
        for term, score in known.get(word, ())[:TOP]:
            if term not in asked and (term not in out or out[term][1] < score):
                out[term] = (word, score)
    return out


# the search being run: whether it scores by BM25 (the bridge's only scoring), and the bridged
# terms waiting for the short forms (EVERYWHERE=0)
_bm25 = False
_waiting: dict[str, tuple[str, float]] = {}

_analyse = search._analyse
_corrected = search._corrected
_short_forms = search.short_forms
_short_form_terms = search._short_form_terms


def _analysing(index: Index, question: str, view: View, searches: tuple[str, ...]) -> Any:
    """search._analyse, noting whether this query scores by BM25 (bench/ranking.py's scoring is
    auto: BM25 unless the index was built with the plain tokenizer); the bridged terms it leaves for
    the short forms stay until the next question is analysed."""
    global _bm25
    _bm25 = index.manifest.tokenizer.mode != "plain"
    _waiting.clear()
    return _analyse(index, question, view, searches)


def _bridged(index: Index, view: View, question: str, counts: dict[str, int]) -> dict[str, tuple[str, float]]:
    """The bridged terms the view holds, for a query of these (corrected) term counts: none when
    the bridge is off, the scoring is not BM25, the index's tokenizer is not the table's, or the
    question's own terms find nothing (the search returns nothing then)."""
    settings = index.manifest.tokenizer
    if WEIGHT <= 0 or not _bm25 or settings.mode == "plain" or settings.stem != STEM:
        return {}
    if all(search._postings(index, view, t) is None for t in counts):
        return {}
    found = bridge_terms(prose_words(question, index.tokenizer), counts)
    return {t: v for t, v in found.items() if search._postings(index, view, t) is not None}


def _correcting(
    index: Index, view: View, question: str, counts: dict[str, int]
) -> tuple[dict[str, int], dict[str, str], tuple[Any, ...]]:
    """search._corrected (the spelling correction), then the bridged terms: in the counts at WEIGHT x
    score (a BM25 query term's weight is its count x idf), or (EVERYWHERE=0) kept for the short forms."""
    counts, corrected, corrections = _corrected(index, view, question, counts)
    bridged = _bridged(index, view, question, counts)
    if not bridged:
        return counts, corrected, corrections
    if not EVERYWHERE:
        _waiting.update(bridged)
        return counts, corrected, corrections
    weighted: dict[str, Any] = {**counts, **{t: WEIGHT * score for t, (_, score) in bridged.items()}}
    return weighted, corrected, corrections


def _forms(question: str, tokenizer: Tokenizer, asked: Container[str]) -> dict[str, str]:
    """short_forms, with the waiting bridged terms asked for already, then added (as term -> word)."""
    if not _waiting:
        return _short_forms(question, tokenizer, asked)
    forms = _short_forms(question, tokenizer, _Either(asked, _waiting))
    return {**forms, **{t: word for t, (word, _) in _waiting.items() if t not in forms}}


class _Either:
    """The terms in either of two containers."""

    def __init__(self, a: Container[str], b: Container[str]) -> None:
        self.a, self.b = a, b

    def __contains__(self, term: object) -> bool:
        return term in self.a or term in self.b


def _form_terms(index: Index, view: View, forms: dict[str, str], n_docs: int) -> list[search.QueryTerm]:
    """_short_form_terms of the true short forms, then the waiting bridged terms at WEIGHT x score."""
    if not _waiting:
        return _short_form_terms(index, view, forms, n_docs)
    out = _short_form_terms(index, view, {t: w for t, w in forms.items() if t not in _waiting}, n_docs)
    avglen = view.length / n_docs if view.length else 1.0
    bm25_scale = max(1.0, avglen / index.manifest.bm25_avglen)
    for term, (_, score) in _waiting.items():
        found = search._postings(index, view, term)
        if found is None:
            continue
        ids, tfs, _, maxb = found
        idf = bm25_idf(n_docs, len(ids))
        out.append(search.QueryTerm(term, idf, WEIGHT * score * idf, ids, tfs, maxb * bm25_scale))
    return out


_LEVERS = ("WEIGHT", "TOP", "EVERYWHERE")
_apply = ranking.apply


def apply(levers: dict[str, str]) -> dict[str, str]:
    """Set the bridge's levers (bridge.NAME), then bench/ranking.py's; return the previous values."""
    before: dict[str, str] = {}
    rest = {}
    for name, value in levers.items():
        attr = name.removeprefix("bridge.")
        if not name.startswith("bridge."):
            rest[name] = value
            continue
        if attr not in _LEVERS:
            sys.exit(f"unknown lever {name}: the bridge's are {', '.join('bridge.' + n for n in _LEVERS)}")
        old = globals()[attr]
        before[name] = str(int(old) if isinstance(old, bool) else old)
        globals()[attr] = ranking._typed(old, value)
    return {**before, **_apply(rest)}


def main() -> None:
    global PATH
    argv = sys.argv[1:]
    if "--table" in argv:
        i = argv.index("--table")
        PATH = argv[i + 1]
        del argv[i : i + 2]
    search._analyse = _analysing
    search._corrected = _correcting
    search.short_forms = _forms
    search._short_form_terms = _form_terms
    ranking.apply = apply
    ranking.main(argv)


if __name__ == "__main__":
    main()
