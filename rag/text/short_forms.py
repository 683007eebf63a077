"""Short forms of a question's long words: code abbreviates what questions spell out.

Code writes `req`, `res`, `func`, `env`, `auth`, `doc`, `arg`, `dict`. Questions say request,
response, function, environment, authentication, documentation, argument, dictionary. A question
word of MIN_WORD letters or more also asks for its first three and four letters, when the index
holds them as terms, at a share of a typed word's weight (rag.weights.RankingWeights.short_form_weight).

They are scored only on the candidates the question's own terms found (rag.retrieval.search), not over the
whole index. Short terms are common: reading their postings in full made a query at a million
chunks 30-40% slower, and ranked the same. Scoring them under BM25 only: BM25 is a sum over terms,
so a term can be added to a candidate's score afterwards; a cosine's query norm cannot. Measured
in docs/levers.md ("short forms").
"""

from __future__ import annotations

import re
from collections.abc import Container
from typing import TYPE_CHECKING

from rag.text.tokenizer import QUERY_STOPWORDS

if TYPE_CHECKING:
    from rag.text.tokenizer import Tokenizer

MIN_WORD = 6  # letters in a question word whose beginnings are also asked for
LENGTHS = (3, 4)  # the beginnings: `req`, `func`; each leaves at least 3 letters of the word

_WORD = re.compile(r"[A-Za-z]+")


def short_forms(question: str, tokenizer: Tokenizer, asked: Container[str]) -> dict[str, str]:
    """Return term -> the question word it begins, for the beginnings of the question's long
    words (question words such as "because" left out) that are not terms the question asks
    for already. Whether the index holds them is for the caller to check."""
    out: dict[str, str] = {}
    for word in _WORD.findall(question):
        low = word.lower()
        if len(low) < MIN_WORD or low in QUERY_STOPWORDS:
            continue
        for n in LENGTHS:
            if n > len(low) - 3:
                break
            terms = tokenizer.tokenize(low[:n])
            if len(terms) == 1 and terms[0] not in asked and terms[0] not in out:
                out[terms[0]] = low
    return out
