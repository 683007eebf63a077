"""Query words the index has never seen, matched to the nearest indexed terms.

A typo ("pasages") finds nothing, since a word the index has never seen drops out of a query.
Such a term is replaced by the indexed term nearest to it: an edit distance (Damerau-Levenshtein,
optimal string alignment) of at most 1 for words of 4-7 letters and 2 for longer ones, with the
same first letter, the most frequent term winning a tie. Only terms unknown to the caller's view
are corrected (a term in files the caller may not read is never suggested), so a query of known
words is scored exactly as before.

A word is corrected only when it is not a word: one of the common English words of
rag/data/english-words.txt.gz (SCOWL's American list, made by bench/english_words.py) is searched
as typed, found or not ("wire" is never "were", "agree" never "aree"). A word of the index's own
prose needs no list: it is a term the view holds, and known terms are never corrected (a word only
in files the caller may not read is unknown to the caller, as it would be to an index without
them, and is treated as such).

The cost is bounded: nothing runs for a query whose terms are all known; an unknown term reads
the stored terms sharing its first letter and nearly its length (one range of the terms table's
primary key, filtered in SQLite), and compares them with an early exit. The word list is read
(about 6 ms, once per process) only when an unknown word has a near term to be corrected to.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from rag.store.workspace import AnyView, Reader, WorkspaceView
from rag.words import is_english_word

CORRECT = True  # the lever (docs/levers.md); never under the plain tokenizer, where an unknown word drops out
MIN_LETTERS = 4  # shorter words are left as typed: too many terms are one edit from them
LONG_WORD = 8  # words of this many letters or more may be two edits from their term
_WORD = re.compile(r"[^\W\d_]+")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")  # a word's camelCase parts
_LETTERS = re.compile(r"[a-z]+")


class Correction(NamedTuple):
    """A query word the index has never seen, and what was searched instead."""

    word: str  # as typed, lowercased
    searched: str  # the word searched for, spelled out ("passages")
    term: str  # the indexed term it stands for ("passag")
    distance: int


def max_distance(letters: int) -> int:
    """Return how many edits a word of this many letters may be from its correction (0: none)."""
    if letters < MIN_LETTERS:
        return 0
    return 1 if letters < LONG_WORD else 2


def distance(a: str, b: str, limit: int) -> int:
    """Return the optimal-string-alignment distance of a and b, or limit + 1 once it exceeds limit."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                value = min(value, previous2[j - 2] + 1)
            current[j] = value
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1] if previous[-1] <= limit else limit + 1


def correct(
    index: Reader, view: AnyView, question: str, counts: dict[str, int]
) -> tuple[dict[str, int], dict[str, str], tuple[Correction, ...]]:
    """Return the query's term counts with each term the view has never seen replaced by its
    nearest term the view holds, corrected term -> the word typed (for --explain), and the
    corrections. Counts whose terms are all known are returned as they are."""
    if not CORRECT or index.manifest.tokenizer.mode == "plain":  # there, unknown terms drop out
        return counts, {}, ()
    known = _known_in(index, view)
    df_of = _df_in(index, view)
    unknown = [t for t in counts if not known(t)]
    by_term: dict[str, Correction] = {}  # unknown term -> its correction
    if unknown:
        typed = _typed_words(index, question)
        words: dict[str, set[str]] | None = None
        for term in unknown:
            found = _nearest(index, term, typed.get(term, term), known, df_of)
            if found is None or found.term in counts:
                continue
            if words is None:
                words = _words_of_terms(index, question)
            if not any(map(is_english_word, words.get(term, {term}))):
                by_term[term] = found
    if not by_term:
        return counts, {}, ()
    out: dict[str, int] = {}
    for term, n in counts.items():
        c = by_term.get(term)
        key = c.term if c is not None else term
        out[key] = out.get(key, 0) + n
    return out, {c.term: c.word for c in by_term.values()}, tuple(by_term.values())


def _known_in(index: Reader, view: AnyView) -> Callable[[str], bool]:
    """Whether a term occurs in a chunk the view may read (a key lookup when it reads everything)."""
    if view.classes is None:
        return index.has_term
    df_of = _df_in(index, view)
    return lambda term: df_of(term, 0) > 0


def _df_in(index: Reader, view: AnyView) -> Callable[[str, int], int]:
    """A term's document frequency in the view, from its stored one (the same when the view reads
    everything): files the caller may not read must not decide between two corrections."""
    if view.classes is None:
        return lambda term, df: df
    if isinstance(view, WorkspaceView):
        workspace = view.workspace
        return lambda term, df: workspace.prefetch(view, [term])[term]
    readable, chunk_class = view.classes, view.chunk_class

    def df_of(term: str, df: int) -> int:
        found = index.term(term)
        if found is None or chunk_class is None:
            return 0
        return sum(1 for i in found[0] if chunk_class[i] in readable)

    return df_of


def _words_of_terms(index: Reader, question: str) -> dict[str, set[str]]:
    """Term -> the lowercased words of the question, and the camelCase parts of its words, that
    are that one term alone (`wireFormat`: wire -> {"wire"}, format -> {"format"})."""
    out: dict[str, set[str]] = {}
    for word in _WORD.findall(question):
        for part in {word, *_PART.findall(word)}:
            terms = index.tokenizer.tokenize(part)
            if len(terms) == 1:
                out.setdefault(terms[0], set()).add(part.lower())
    return out


def _typed_words(index: Reader, question: str) -> dict[str, str]:
    """Term -> the lowercased word of the question that is that one term alone."""
    out: dict[str, str] = {}
    for word in _WORD.findall(question):
        terms = index.tokenizer.tokenize(word)
        if len(terms) == 1:
            out.setdefault(terms[0], word.lower())
    return out


def _nearest(
    index: Reader,
    term: str,
    word: str,
    known: Callable[[str], bool],
    df_of: Callable[[str, int], int] = lambda term, df: df,
) -> Correction | None:
    """The indexed term nearest to an unknown one that the view holds, the most frequent in the view
    on a tie (None if none is near enough)."""
    limit = max_distance(len(word))
    if not limit or not _LETTERS.fullmatch(term) or len(term) < MIN_LETTERS - 1:
        return None
    best: tuple[int, int, str] | None = None
    for candidate, df in index.vocabulary(term[0], len(term) - limit, len(term) + limit):
        d = distance(term, candidate, limit)
        if d > limit or candidate == term or not _LETTERS.fullmatch(candidate):
            continue
        if (best is None or d <= best[0]) and known(candidate):
            key = (d, -df_of(candidate, df), candidate)
            if best is None or key < best:
                best = key
    if best is None:
        return None
    d, _, found = best
    # the word as typed with its stem corrected: "pasages" (stem "pasag") -> "passag" + "es"
    searched = found + word[len(term) :] if word.startswith(term) else found
    return Correction(word, searched, found, d)
