"""Short forms of long question words (rag.text.short_forms) as a lever: on, off, or other settings.

    python bench/levers/short_forms.py [--min-word 6] [--lengths 3,4] [--weight 0.3] [--off]

Runs `rag eval`'s scoring on both sets (the docstring queries on the doc-stripped corpora, the
dev questions on the original ones) with the settings patched in for this process only; the
short forms are scored on the BM25 candidates, as rag.retrieval.search does. The corpus indexes are
brought up to date first, as `rag eval --corpus-root` does. Results go in docs/levers.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.common import eval_both_sets, require_corpora
from rag.weights import DEFAULTS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-word", type=int, default=6)
    parser.add_argument("--lengths", default="3,4", help="comma-separated beginnings' lengths")
    parser.add_argument("--weight", type=float, default=0.3)
    parser.add_argument("--off", action="store_true", help="no short forms at all")
    args = parser.parse_args()
    require_corpora()
    import importlib

    from rag.text import short_forms as abbreviations

    search_mod = importlib.import_module("rag.retrieval.search")
    abbreviations.MIN_WORD = args.min_word
    abbreviations.LENGTHS = tuple(int(n) for n in args.lengths.split(","))
    if args.off:
        search_mod.short_forms = lambda *_: {}  # type: ignore[attr-defined]
    label = "off" if args.off else f"min word {args.min_word}, lengths {args.lengths}, weight {args.weight}"
    eval_both_sets(label, weights=DEFAULTS._replace(short_form_weight=args.weight))


if __name__ == "__main__":
    main()
