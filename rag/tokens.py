"""The tokenizer: text to index terms. Pure functions, no I/O.

Two modes, chosen at ingest and saved with the index so that a query is always
tokenized exactly as the passages were:

* ``plain``: lowercased runs of letters and digits in any script (``[^\\W_]+``),
  minus PLAIN_STOPWORDS. No splitting, no stemming.
* ``code`` (default): the same runs, each also split at snake_case, camelCase,
  PascalCase and acronym boundaries (``parseHTTPResponse`` -> parse, http,
  response), lowercased, conservatively stemmed (see ``stem``), minus stopwords.
  With ``identifiers`` on, a compound identifier is also kept whole
  (``validateToken`` -> validatetoken, validate, token) so an exact name ranks first.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import asdict, dataclass
from functools import lru_cache

PLAIN_STOPWORDS = frozenset("the a an and or of to in is for on with".split())

# Identifier runs: letters, digits and underscores, so snake_case stays one run to split.
_RUN = re.compile(r"[^\W_]+(?:_+[^\W_]+)*")
_PLAIN = re.compile(r"[^\W_]+")
# Parts of an ASCII identifier: an acronym (HTTP in HTTPResponse), a capitalised or
# lowercase word, or a number.
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_NON_ASCII_PART = re.compile(r"[^\W_]+")

MODES = ("code", "plain")


@dataclass(frozen=True, slots=True)
class TokenizerSettings:
    """How text becomes terms; saved in the index manifest."""

    mode: str = "code"
    stem: bool = True
    identifiers: bool = True

    def to_dict(self) -> dict[str, object]:
        """Return the settings as a JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> TokenizerSettings:
        """Build settings from a manifest dict, rejecting unknown keys or modes."""
        settings = cls(**data)  # type: ignore[arg-type]
        if settings.mode not in MODES:
            raise ValueError(f"unknown tokenizer mode {settings.mode!r}")
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
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("ied") and len(w) > 4:
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
        if self.settings.mode not in MODES:
            raise ValueError(f"unknown tokenizer mode {self.settings.mode!r}")
        self._cache: dict[str, tuple[str, ...]] = {}
        self._plain = self.settings.mode == "plain"
        self._finder = _PLAIN.findall if self._plain else _RUN.findall

    def tokenize(self, text: str) -> list[str]:
        """Return the terms of `text` in order, with repeats."""
        cache = self._cache
        out: list[str] = []
        for run in self._finder(text):
            terms = cache.get(run)
            if terms is None:
                terms = cache[run] = self._terms_of(run)
            out.extend(terms)
        return out

    def counts(self, text: str) -> dict[str, int]:
        """Return term -> frequency for `text`; equal to Counter(self.tokenize(text))."""
        cache = self._cache
        out: dict[str, int] = {}
        get = out.get
        for run, n in Counter(self._finder(text)).items():
            terms = cache.get(run)
            if terms is None:
                terms = cache[run] = self._terms_of(run)
            for t in terms:
                out[t] = get(t, 0) + n
        return out

    def query_counts(self, question: str) -> dict[str, int]:
        """Return term -> frequency for a question (the query side of the tokenizer)."""
        return self.counts(question)

    def _terms_of(self, run: str) -> tuple[str, ...]:
        if self._plain:
            low = run.lower()
            return () if low in PLAIN_STOPWORDS else (low,)
        return _code_terms(run, self.settings.stem, self.settings.identifiers)


@lru_cache(maxsize=None)
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


def _code_terms(run: str, use_stem: bool, identifiers: bool) -> tuple[str, ...]:
    parts = _split_identifier(run)
    terms = [stem(p) if use_stem else p for p in parts if p not in PLAIN_STOPWORDS]
    if identifiers and len(parts) > 1:
        whole = "".join(parts)
        terms.append(whole)
    return tuple(terms)


def tf_weight(tf: int) -> float:
    """Return the sublinear term-frequency weight 1 + ln(tf)."""
    return 1.0 + math.log(tf)


def idf_weight(n_docs: int, df: int) -> float:
    """Return the smoothed inverse document frequency ln((1 + N) / (1 + df)) + 1."""
    return math.log((1 + n_docs) / (1 + df)) + 1.0
