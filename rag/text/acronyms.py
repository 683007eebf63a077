"""Acronyms a repository defines in its own text, so that a question in words finds code
named by the letters.

A user asks about "server-sent events" or "cross-site request forgery"; the code says
`sse.py` and `CsrfViewMiddleware`. Where the repository itself spells an acronym out,
as "Server-Sent Events (SSE)" or "CSRF (Cross-Site Request Forgery)", ingest records the
pair, and a question that contains the words gets the acronym as one more query term.
Only definitions whose initials match the letters count, and nothing is assumed beyond
what the repository says. Measured in docs/levers.md ("acronyms").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rag.text.tokenizer import Tokenizer

_LOOKBEHIND = 120  # characters before "(ABC)" searched for its words


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The patterns of a definition, compiled on first use: by ingest, never by a query (1 ms)."""
    return (
        # Both forms put a space (or a line break) before "(": "Server-Sent Events (SSE)" and
        # "SSE (Server-Sent Events)". The pattern starts at the parenthesis and looks back for the
        # space, which keeps the scan at C speed (a pattern starting with [A-Z] or \s took 8x longer).
        re.compile(r"\((?<=\s\()([^()\n]{2,80})\)"),
        re.compile(r"([A-Z]{2,6})s?"),  # the letters, a plural s allowed: "(APIs)"
        re.compile(r"(?<![A-Za-z0-9_])([A-Z]{2,6})s?$"),  # the letters before the parenthesis
        re.compile(r"[A-Za-z][A-Za-z0-9']*"),  # a word
    )


def definitions(text: str) -> set[tuple[str, str]]:
    """Return the (ACRONYM, expansion words) pairs `text` defines, where the initials of the
    words spell the acronym: "Cross-Site Request Forgery (CSRF)" -> ("CSRF", "Cross Site
    Request Forgery")."""
    found: set[tuple[str, str]] = set()
    parens, letters_inside, letters_before, word = _patterns()
    for m in parens.finditer(text):
        inside, start = m.group(1), m.start()
        letters = letters_inside.fullmatch(inside)
        if letters:  # the words come before
            acronym = letters.group(1)
            words = word.findall(text, max(0, start - _LOOKBEHIND), start)[-len(acronym) :]
        else:  # the letters come before, the words inside
            before = letters_before.search(text, max(0, start - 8), start - 1)
            if before is None:
                continue
            acronym, words = before.group(1), word.findall(inside)
        if _spells(words, acronym):
            found.add((acronym, " ".join(words)))
    return found


def _spells(words: list[str], letters: str) -> bool:
    return len(words) == len(letters) and "".join(w[0] for w in words).upper() == letters


def defined_terms(text: str, tokenizer: Tokenizer) -> tuple[tuple[str, str], ...]:
    """Return the definitions of `text` as index terms: (the acronym's term, the expansion's
    terms joined by spaces), sorted. Pairs whose acronym is not one term, or whose expansion
    is under two terms (stopwords drop out), are left out."""
    out: set[tuple[str, str]] = set()
    for letters, words in definitions(text):
        acronym, expansion = tokenizer.tokenize(letters), tokenizer.tokenize(words)
        if len(acronym) == 1 and len(expansion) >= 2 and acronym[0] not in expansion:
            out.add((acronym[0], " ".join(expansion)))
    return tuple(sorted(out))


def expand(
    counts: dict[str, int],
    question_terms: list[str],
    defined: Iterable[tuple[str, str]],
) -> tuple[dict[str, int], dict[str, str]]:
    """Add the acronym of each defined expansion that the question's terms contain, in order
    and adjacent, once (unless the question already asks for it). Return the new counts, and
    acronym -> the expansion it was added for (to explain where the term came from)."""
    sequence = f" {' '.join(question_terms)} "
    added: dict[str, str] = {}
    for acronym, expansion in defined:
        if acronym not in counts and acronym not in added and f" {expansion} " in sequence:
            added[acronym] = expansion
    if not added:
        return counts, added
    return {**counts, **dict.fromkeys(added, 1)}, added
