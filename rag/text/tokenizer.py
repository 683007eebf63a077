"""The tokenizer: text to index terms. Pure functions, no I/O.

Two modes, chosen at ingest and saved with the index so that a query is always
tokenized exactly as the passages were:

* ``plain``: lowercased runs of letters and digits in any script (``[^\\W_]+``),
  minus PLAIN_STOPWORDS. No splitting, no stemming.
* ``code`` (default): the same runs, each also split at snake_case, camelCase,
  PascalCase and acronym boundaries (``parseHTTPResponse`` -> parse, http,
  response), lowercased, stemmed (``stem``: none, the conservative ``suffix`` stemmer,
  or ``porter2``, the Snowball English stemmer), minus stopwords and terms shorter
  than ``min_length``. With ``identifiers`` on, a compound identifier is also kept
  whole (``validateToken`` -> validatetoken, validate, token) so an exact name ranks
  first. On the query side only, ``query_stopwords`` drops words that ask rather than
  name (how, does, what, ...; see QUERY_STOPWORDS) when they stand alone.

The ``path_weight`` and ``symbol_weight`` settings are read by rag.text.terms (what is
indexed for a chunk); they live here so that they are saved with the index too.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from functools import cache
from itertools import chain
from typing import NamedTuple

PLAIN_STOPWORDS = frozenset(["the", "a", "an", "and", "or", "of", "to", "in", "is", "for", "on", "with"])
# Words of a question that ask rather than name: dropped from a query (code mode,
# query_stopwords on) when they stand alone as a word, never as part of an identifier
# (`get_or_create` keeps get). Question words, auxiliaries, pronouns, determiners and
# prepositions: none says which code is meant.
QUERY_STOPWORDS = frozenset(
    [
        "how",
        "does",
        "do",
        "did",
        "doing",
        "done",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "whether",
        "happens",
        "happen",
        "happened",
        "work",
        "works",
        "use",
        "used",
        "uses",
        "using",
        "get",
        "gets",
        "got",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "am",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "has",
        "have",
        "had",
        "i",
        "me",
        "my",
        "mine",
        "we",
        "us",
        "our",
        "you",
        "your",
        "he",
        "she",
        "they",
        "them",
        "their",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "if",
        "not",
        "no",
        "so",
        "as",
        "at",
        "by",
        "from",
        "into",
        "onto",
        "about",
        "any",
        "some",
        "than",
        "then",
        "but",
        "also",
        "just",
        "still",
        "instead",
        "way",
        "want",
        "wants",
        "need",
        "needs",
        "something",
        "anything",
        "thing",
        "things",
    ]
)

# Identifier runs: letters, digits and underscores, so snake_case stays one run to split.
# Underscores at either end (`__init__`) split off as empty parts, so the terms are those of
# the run without them; \w+ finds the runs 20% faster than a pattern that leaves them out.
_RUN = re.compile(r"\w+")
_PLAIN = re.compile(r"[^\W_]+")
# Parts of an ASCII identifier: an acronym (HTTP in HTTPResponse), a capitalised or
# lowercase word, or a number.
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_NON_ASCII_PART = re.compile(r"[^\W_]+")
# The same runs in ASCII text, found at C speed without a regex: the bytes of every character
# that cannot be part of a run become spaces, and bytes.split() cuts at them (3 times faster
# than findall, docs/benchmarks.md "Where ingest time goes"). For ASCII, \w is [A-Za-z0-9_].
_ASCII_RUN_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_RUN_TABLE = bytes(c if c in _ASCII_RUN_BYTES else 32 for c in range(256))
_PLAIN_TABLE = bytes(c if c in _ASCII_RUN_BYTES and c != 95 else 32 for c in range(256))  # 95: "_"

TOKENIZER_MODES = ("code", "plain")
STEMMERS = ("none", "suffix", "porter2")


class TokenizerSettings(NamedTuple):
    """How text becomes terms; saved in the index manifest."""

    mode: str = "code"
    stem: str = "porter2"  # one of STEMMERS
    identifiers: bool = True
    min_length: int = 2  # shorter terms (`t` of isn't, `i`) are dropped, index and query side
    query_stopwords: bool = True
    path_weight: int = 2  # tf added per path term (rag.text.terms); 0: the path is not indexed
    symbol_weight: int = 2  # tf added per symbol/heading term (rag.text.terms)

    def to_dict(self) -> dict[str, object]:
        """Return the settings as a JSON-ready dict."""
        return dict(self._asdict())

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> TokenizerSettings:
        """Build settings from a manifest dict, rejecting unknown keys or modes.

        A setting missing from an older manifest takes the value that reproduces the
        older tokenizer (no new lever on), so an old index still reads the same.
        """
        old = {
            "stem": "suffix",
            "min_length": 1,
            "query_stopwords": False,
            "path_weight": 0,
            "symbol_weight": 0,
        }
        data = {**old, **data}
        if isinstance(data["stem"], bool):  # manifests before STEMMERS: true meant the suffix stemmer
            data["stem"] = "suffix" if data["stem"] else "none"
        settings = cls(**data)  # type: ignore[arg-type]
        if settings.mode not in TOKENIZER_MODES:
            raise ValueError(f"unknown tokenizer mode {settings.mode!r}")
        if settings.stem not in STEMMERS:
            raise ValueError(f"unknown stemmer {settings.stem!r}")
        return settings


def stem(word: str) -> str:
    """Strip common English inflections, conservatively.

    Only inflections that rarely change what a code word means are removed, and never
    below a 3-letter stem: plurals (``queries`` -> query, ``classes`` -> class,
    ``tokens`` -> token; not ``status``, ``class``, ``axis``), ``-ing`` and ``-ed``
    (``running`` -> run, ``created`` -> creat), then a final ``e`` so the base form
    meets its inflections (``create``, ``creates``, ``created``, ``creating`` ->
    creat; ``calculating`` -> calculat). Derivational suffixes (-er, -ion, -ly) are
    kept: ``handler`` and ``handle`` stay apart.
    """
    if len(word) < 4 or not word.isalpha():
        return word
    w = word
    if w.endswith("ies") and len(w) > 4 or w.endswith("ied") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "shes", "ches", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if w.endswith("ing") and len(w) - 3 >= 3 and _has_vowel(w[:-3]):
        w = _undouble(w[:-3])
    elif w.endswith("ed") and len(w) - 2 >= 3 and _has_vowel(w[:-2]):
        w = _undouble(w[:-2])
    if w.endswith("e") and len(w) - 1 >= 3 and not w.endswith(("ee", "ie", "ye")):
        w = w[:-1]
    return w


def _has_vowel(s: str) -> bool:
    return any(c in "aeiouy" for c in s)


def _undouble(s: str) -> str:
    # running -> runn -> run; but keep ll, ss, zz (calling -> call, passing -> pass)
    if len(s) >= 4 and s[-1] == s[-2] and s[-1] not in "lsz" and s[-1] not in "aeiou":
        return s[:-1]
    return s


class Tokenizer:
    """Turn text into index terms with fixed settings; memoises per distinct word."""

    def __init__(self, settings: TokenizerSettings | None = None) -> None:
        self.settings = settings or TokenizerSettings()
        if self.settings.mode not in TOKENIZER_MODES:
            raise ValueError(f"unknown tokenizer mode {self.settings.mode!r}")
        if self.settings.stem not in STEMMERS:
            raise ValueError(f"unknown stemmer {self.settings.stem!r}")
        self._plain = self.settings.mode == "plain"
        self._finder = _PLAIN.findall if self._plain else _RUN.findall
        self._table = _PLAIN_TABLE if self._plain else _RUN_TABLE
        self._terms = _Memo(self._terms_of)
        # the same memo keyed by the ASCII bytes of a word, for the runs of ASCII text
        self._ascii_terms = _AsciiMemo(self._terms)

    def _word_terms(self, text: str) -> Iterator[tuple[str, ...]]:
        """Yield the terms of each run of `text`, in order."""
        if text.isascii():
            return map(self._ascii_terms.__getitem__, text.encode("ascii").translate(self._table).split())
        return map(self._terms.__getitem__, self._finder(text))

    def tokenize(self, text: str) -> list[str]:
        """Return the terms of `text` in order, with repeats."""
        return list(chain.from_iterable(self._word_terms(text)))

    def counts(self, text: str, *more: str) -> dict[str, int]:
        """Return term -> frequency for `text`; equal to Counter(self.tokenize(text)).

        With `more` texts, those of "\\n".join((text, *more)), without joining them.
        Every step runs at C speed (find the words, look up each word's terms, count them);
        Python code runs only for a word seen for the first time. A plain dict, not the
        Counter: ingest workers pickle these to the parent, which unpickles a Counter in Python.
        """
        if not more:
            return dict(Counter(chain.from_iterable(self._word_terms(text))))
        words = chain.from_iterable(map(self._word_terms, (text, *more)))
        return dict(Counter(chain.from_iterable(words)))

    def query_counts(self, question: str) -> dict[str, int]:
        """Return term -> frequency for a question (the query side of the tokenizer).

        In code mode with query_stopwords on, a word of QUERY_STOPWORDS standing alone
        is dropped first.
        """
        if self._plain or not self.settings.query_stopwords:
            return self.counts(question)
        return self.counts(" ".join(r for r in self._finder(question) if r.lower() not in QUERY_STOPWORDS))

    def _terms_of(self, run: str) -> tuple[str, ...]:
        if self._plain:
            low = run.lower()
            return () if low in PLAIN_STOPWORDS else (low,)
        s = self.settings
        return _code_terms(run, s.stem, s.identifiers, s.min_length)


class _Memo(dict[str, tuple[str, ...]]):
    """word -> its terms, computed by `terms_of` on the first lookup of a word, then kept."""

    def __init__(self, terms_of: Callable[[str], tuple[str, ...]]) -> None:
        super().__init__()
        self._terms_of = terms_of

    def __missing__(self, word: str) -> tuple[str, ...]:
        terms = self[word] = self._terms_of(word)
        return terms


class _AsciiMemo(dict[bytes, tuple[str, ...]]):
    """The ASCII bytes of a word -> its terms, taken from (and kept in) the memo of its text."""

    def __init__(self, terms: _Memo) -> None:
        super().__init__()
        self._terms = terms

    def __missing__(self, word: bytes) -> tuple[str, ...]:
        terms = self[word] = self._terms[word.decode("ascii")]
        return terms


@cache
def _split_identifier(run: str) -> tuple[str, ...]:
    parts: list[str] = []
    for piece in run.split("_"):
        if not piece:
            continue
        if piece.isascii():
            parts.extend(p.lower() for p in _PART.findall(piece))
        else:
            parts.append(piece.lower())
    return tuple(parts)


def _code_terms(run: str, stemmer: str, identifiers: bool, min_length: int) -> tuple[str, ...]:
    parts = _split_identifier(run)
    fn = _STEMMERS[stemmer]
    terms = [fn(p) for p in parts if p not in PLAIN_STOPWORDS and len(p) >= min_length]
    if identifiers and len(parts) > 1:
        whole = "".join(parts)
        terms.append(whole)
    return tuple(terms)


def _no_stem(word: str) -> str:
    return word


def _porter2_term(word: str) -> str:
    # Porter2 is defined on English letters; numbers and other scripts pass unchanged
    return porter2(word) if word.isascii() and word.isalpha() else word


# Porter2, the Snowball English stemmer (https://snowballstem.org/algorithms/english/stemmer.html),
# as Snowball 3.1 generates it; tests/test_tokenizer.py checks it against the snowballstemmer package.
_V = frozenset("aeiouy")
_V_WXY = frozenset("aeiouywxY")
_VALID_LI = frozenset("cdeghkmnrt")
_EXCEPTIONS = {
    "skis": "ski",
    "skies": "sky",
    "idly": "idl",
    "gently": "gentl",
    "ugly": "ugli",
    "early": "earli",
    "only": "onli",
    "singly": "singl",
    "sky": "sky",
    "news": "news",
    "howe": "howe",
    "atlas": "atlas",
    "cosmos": "cosmos",
    "bias": "bias",
    "andes": "andes",
}
_R1_PREFIXES = ("arsen", "commun", "emerg", "gener", "inter", "later", "organ", "past", "univers")
_STEP2 = (  # longest first: suffix -> replacement (None: see _porter2)
    ("ational", "ate"),
    ("ization", "ize"),
    ("iveness", "ive"),
    ("fulness", "ful"),
    ("ousness", "ous"),
    ("biliti", "ble"),
    ("lessli", "less"),
    ("tional", "tion"),
    ("aliti", "al"),
    ("iviti", "ive"),
    ("fulli", "ful"),
    ("ousli", "ous"),
    ("entli", "ent"),
    ("alism", "al"),
    ("ation", "ate"),
    ("ogist", "og"),
    ("anci", "ance"),
    ("enci", "ence"),
    ("abli", "able"),
    ("alli", "al"),
    ("izer", "ize"),
    ("ator", "ate"),
    ("bli", "ble"),
    ("ogi", None),
    ("li", None),
)
_STEP3 = (
    ("ational", "ate"),
    ("tional", "tion"),
    ("alize", "al"),
    ("icate", "ic"),
    ("iciti", "ic"),
    ("ative", None),
    ("ical", "ic"),
    ("ness", ""),
    ("ful", ""),
)
_STEP4 = (
    "ement",
    "ment",
    "able",
    "ible",
    "ance",
    "ence",
    "ate",
    "iti",
    "ion",
    "ism",
    "ive",
    "ize",
    "ous",
    "ant",
    "ent",
    "al",
    "er",
    "ic",
)
_STEP2_SUFFIXES = tuple(suffix for suffix, _ in _STEP2)
_STEP3_SUFFIXES = tuple(suffix for suffix, _ in _STEP3)
_DOUBLES = ("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")


def _regions(w: str) -> tuple[int, int]:
    n = len(w)
    p1 = n
    for prefix in _R1_PREFIXES:
        if w.startswith(prefix):
            p1 = len(prefix)
            break
    else:
        p1 = _after_vc(w, 0)
    return p1, _after_vc(w, p1)


def _after_vc(w: str, start: int) -> int:
    """Return the index after the first non-vowel that follows a vowel, from `start`."""
    for i in range(start + 1, len(w)):
        if w[i] not in _V and w[i - 1] in _V:
            return i + 1
    return len(w)


def _short_v(w: str) -> bool:
    """Return whether `w` ends in a short syllable (Snowball's shortv)."""
    n = len(w)
    if n >= 3 and w[-1] not in _V_WXY and w[-2] in _V and w[-3] not in _V:
        return True
    if n == 2 and w[0] in _V and w[1] not in _V:
        return True
    return w.endswith("past")


def porter2(word: str) -> str:
    """Stem an English word as the Snowball English (Porter2) stemmer does.

    `word` is lowercase; apostrophes are not handled (the tokenizer never keeps them).
    """
    if word in _EXCEPTIONS:
        return _EXCEPTIONS[word]
    if len(word) < 3:
        return word
    w = word
    y_found = "y" in w
    if y_found:  # initial y, and y after a vowel, are consonants: mark them Y
        chars = list(w)
        if chars[0] == "y":
            chars[0] = "Y"
        for i in range(1, len(chars)):
            if chars[i] == "y" and chars[i - 1] in _V:
                chars[i] = "Y"
        w = "".join(chars)
    p1, p2 = _regions(w)
    # Step 1a
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith(("ied", "ies")):
        w = w[:-3] + ("i" if len(w) > 4 else "ie")
    elif w.endswith("s") and not w.endswith(("ss", "us")) and any(c in _V for c in w[:-2]):
        w = w[:-1]
    # Step 1b
    w = _step1b(w, p1)
    # Step 1c
    if len(w) > 2 and w[-1] in "yY" and w[-2] not in _V:
        w = w[:-1] + "i"
    # Steps 2-4 scan suffix lists in order; one tuple endswith first skips the scan for the
    # many words that end in none of them
    # Step 2
    for suffix, repl in _STEP2 if w.endswith(_STEP2_SUFFIXES) else ():
        if w.endswith(suffix):
            start = len(w) - len(suffix)
            if start >= p1:
                if suffix == "ogi":
                    if w[start - 1 : start] == "l":
                        w = w[:start] + "og"
                elif suffix == "li":
                    if start > 0 and w[start - 1] in _VALID_LI:
                        w = w[:start]
                else:
                    w = w[:start] + repl  # type: ignore[operator]
            break
    # Step 3
    for suffix, repl in _STEP3 if w.endswith(_STEP3_SUFFIXES) else ():
        if w.endswith(suffix):
            start = len(w) - len(suffix)
            if start >= p1:
                if repl is None:
                    if start >= p2:
                        w = w[:start]
                else:
                    w = w[:start] + repl
            break
    # Step 4
    for suffix in _STEP4 if w.endswith(_STEP4) else ():
        if w.endswith(suffix):
            start = len(w) - len(suffix)
            if start >= p2 and (suffix != "ion" or start > 0 and w[start - 1] in "st"):
                w = w[:start]
            break
    # Step 5
    if w.endswith("e"):
        start = len(w) - 1
        if start >= p2 or (start >= p1 and not _short_v(w[:start])):
            w = w[:start]
    elif w.endswith("l"):
        start = len(w) - 1
        if start >= p2 and w[start - 1] == "l":
            w = w[:start]
    return w.replace("Y", "y") if y_found else w


def _step1b(w: str, p1: int) -> str:
    if w.endswith(("eedly", "eed")):
        start = len(w) - (5 if w.endswith("eedly") else 3)
        if start >= p1 and w[:start] not in ("succ", "proc", "exc"):
            return w[:start] + "ee"
        return w
    for suffix in ("ingly", "edly", "ing", "ed"):
        if w.endswith(suffix):
            break
    else:
        return w
    start = len(w) - len(suffix)
    stem_ = w[:start]
    if suffix == "ing":
        if stem_.endswith("y") and len(stem_) == 2 and stem_[0] not in _V:
            return stem_[0] + "ie"
        if stem_ in ("even", "cann", "inn", "earr", "herr", "out"):
            return w
    if not any(c in _V for c in stem_):
        return w
    if stem_.endswith(("at", "bl", "iz")):
        return stem_ + "e"
    if stem_.endswith(_DOUBLES):
        if len(stem_) == 3 and stem_[0] in "aeo":
            return stem_
        return stem_[:-1]
    if len(stem_) == p1 and _short_v(stem_):
        return stem_ + "e"
    return stem_


# memoised per distinct word part: the same part recurs in many identifiers
_STEMMERS: dict[str, Callable[[str], str]] = {
    "none": _no_stem,
    "suffix": cache(stem),
    "porter2": cache(_porter2_term),
}
