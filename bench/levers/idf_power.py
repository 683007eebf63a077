"""BM25's idf raised to a power: flatter (< 1) or steeper (> 1) term weights, measured on both sets.

    python bench/levers/idf_power.py POWER [POWER ...]

Each power runs `rag eval`'s scoring on both sets (the docstring queries on the doc-stripped
corpora, the dev questions on the original ones) with rag.retrieval.search's `bm25_idf` patched for this
process only. 1 is the shipped scoring. The stored bounds are of the tf part alone, so pruning
stays exact. Results go in docs/levers.md ("idf power").
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.common import eval_both_sets, require_corpora


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("powers", nargs="+", type=float)
    args = parser.parse_args()
    require_corpora()

    search_mod = importlib.import_module("rag.retrieval.search")
    idf = search_mod.bm25_idf
    for power in args.powers:
        search_mod.bm25_idf = lambda n, df, p=power: idf(n, df) ** p
        eval_both_sets(f"idf ** {power}")


if __name__ == "__main__":
    main()
