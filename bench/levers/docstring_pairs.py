"""A repository's own docstrings as a dictionary from question words to code terms: a lever, measured.

    python bench/levers/docstring_pairs.py [--source name|body] [--min-pairs 3] [--lift 5]
                                           [--top 3] [--weight 0.3]

Every function, method or class passage that still has its docstring (Python) or JSDoc block is a
pair: the doc's first paragraph, tokenized as a question, and the code's terms (`name`: the
symbol's last part; `body`: the passage without its doc, and the name). A question word w then
also asks for a code term c when c is in at least --min-pairs of w's pairs, in --lift times more
of them than of all pairs, and among w's --top most frequent such terms; at --weight x P(c | w) of
a typed word's weight. The terms are scored on the BM25 candidates only, as the short forms are
(rag.retrieval.search). The doc-stripped corpora have lost the docs of the questions' answers, so a pair
never holds a question's own answer. Nothing keys on a corpus or question. Results go in
docs/levers.md ("docstring pairs").
"""

from __future__ import annotations

import argparse
import importlib
import math
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.common import eval_both_sets, require_corpora

_JS_DOC = re.compile(r"/\*\*([\s\S]*?)\*/")
_PY_DOC = re.compile(r"(\"\"\"|''')([\s\S]*?)\1")
_FIRST_PARAGRAPH = re.compile(r"\n\s*\n|:param|@param|Args:|@returns?")


def pairs(index: Any, source: str) -> list[tuple[set[str], set[str]]]:
    """(question terms of the doc, code terms) for each documented definition in the index."""
    tokenizer = index.tokenizer
    out = []
    for _, chunk, _ in index.all_chunks():
        if chunk.kind not in ("function", "method", "class"):
            continue
        found = (_PY_DOC if chunk.path.endswith(".py") else _JS_DOC).search(chunk.text)
        if found is None:
            continue
        doc = _FIRST_PARAGRAPH.split(found.group(found.lastindex or 0))[0]
        words = set(tokenizer.query_counts(re.sub(r"^\s*\*", " ", doc, flags=re.M)))
        code = set(tokenizer.tokenize((chunk.symbol or "").split(".")[-1]))
        if source == "body":
            code |= set(tokenizer.tokenize(chunk.text[: found.start()] + chunk.text[found.end() :]))
        if words and code:
            out.append((words, code))
    return out


def dictionary(
    found: list[tuple[set[str], set[str]]], min_pairs: int, lift: float, top: int
) -> dict[str, list[tuple[float, str]]]:
    """question word -> [(P(code term | word), code term)], the most likely first."""
    n_word: Counter[str] = Counter()
    n_code: Counter[str] = Counter()
    both: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for words, code in found:
        n_word.update(words)
        n_code.update(code)
        for w in words:
            both[w].update(code)
    out = {}
    for w, codes in both.items():
        best = sorted(
            (
                (n / n_word[w], c)
                for c, n in codes.items()
                if n >= min_pairs and c != w and n / n_word[w] >= lift * n_code[c] / len(found)
            ),
            reverse=True,
        )
        if best:
            out[w] = best[:top]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", choices=("name", "body"), default="name")
    parser.add_argument("--min-pairs", type=int, default=3)
    parser.add_argument("--lift", type=float, default=5.0)
    parser.add_argument("--top", type=int, default=3)
    parser.add_argument("--weight", type=float, default=0.3, help="0: off")
    args = parser.parse_args()
    require_corpora()

    search_mod = importlib.import_module("rag.retrieval.search")
    models: dict[int, tuple[Any, dict[str, list[tuple[float, str]]]]] = {}
    asked: dict[str, int] = {}
    short_forms, short_form_terms = search_mod.short_forms, search_mod._short_form_terms

    def remember(question: str, tokenizer: Any, terms: dict[str, int]) -> dict[str, str]:
        asked.clear()
        asked.update(terms)
        return short_forms(question, tokenizer, terms)  # type: ignore[no-any-return]

    def with_pairs(index: Any, view: Any, forms: dict[str, str], n_docs: int) -> list[Any]:
        out = short_form_terms(index, view, forms, n_docs)
        if id(index) not in models or models[id(index)][0] is not index:
            models[id(index)] = (
                index,
                dictionary(pairs(index, args.source), args.min_pairs, args.lift, args.top),
            )
        words = models[id(index)][1]
        added: dict[str, float] = {}
        for w in asked:
            for p, c in words.get(w, ()):
                if c not in asked and c not in forms:
                    added[c] = max(added.get(c, 0.0), p)
        for c, p in added.items():
            postings = search_mod._postings(index, view, c)
            if postings is not None:
                idf = search_mod.bm25_idf(n_docs, len(postings[0]))
                out.append(
                    search_mod.QueryTerm(c, idf, args.weight * p * idf, postings[0], postings[1], math.inf)
                )
                forms[c] = "docstring pairs"
        out.sort(key=lambda t: (-t[2], t[0]))
        return out  # type: ignore[no-any-return]

    if args.weight > 0:
        search_mod.short_forms = remember
        search_mod._short_form_terms = with_pairs
    label = (
        "off"
        if args.weight <= 0
        else f"{args.source}, {args.min_pairs}, {args.lift}, {args.top}, {args.weight}"
    )
    eval_both_sets(label)


if __name__ == "__main__":
    main()
