"""Words a question uses to talk about code ("function", "argument", "return"), dropped like the
question words: a lever, measured on both sets.

    python bench/levers/meta_words.py GROUP[+GROUP] ...     (groups: nouns, calls, self)

Each run adds the groups' words to rag.text.tokenizer.QUERY_STOPWORDS for this process only (standalone
words of the question, never parts of an identifier, as the shipped list) and scores both sets as
`rag eval` does, per corpus too. The groups were written from what such words mean, before any
run. Results go in docs/levers.md ("words about code").
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.common import eval_both_sets, require_corpora

GROUPS = {
    "nouns": "function functions method methods class classes argument arguments parameter parameters param params "
    "variable variables object objects value values code",
    "calls": "call calls called calling return returns returned returning pass passes passed passing",
    "self": "framework library package module modules",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("groups", nargs="+", help="a group, or groups joined by +: " + ", ".join(GROUPS))
    args = parser.parse_args()
    require_corpora()

    tokens = importlib.import_module("rag.text.tokenizer")
    shipped = tokens.QUERY_STOPWORDS
    eval_both_sets("shipped", per_corpus=True)
    for spec in args.groups:
        words = " ".join(GROUPS[g] for g in spec.split("+"))
        tokens.QUERY_STOPWORDS = shipped | frozenset(words.split())  # read at each call of Tokenizer.query
        eval_both_sets(f"+ {spec}", per_corpus=True)


if __name__ == "__main__":
    main()
