"""Stylesheets ranked at half their score, as tests and licences are: a lever, measured on both sets.

    python bench/levers/stylesheets.py [REGEX]    (default: \\.(css|scss|sass|less)$)

Paths matching REGEX join rag.ranking.order's licence/change-log demotion (x TEST_FACTOR) for this process
only; both sets are scored as `rag eval` does, per corpus too. Results go in docs/levers.md
("stylesheets").
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.common import eval_both_sets, require_corpora


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("regex", nargs="?", default=r"\.(css|scss|sass|less)$")
    args = parser.parse_args()
    require_corpora()

    rerank = importlib.import_module("rag.ranking.order")
    shipped = rerank.is_boilerplate_path
    eval_both_sets("shipped", per_corpus=True)
    pattern = re.compile(args.regex, re.IGNORECASE)
    rerank.is_boilerplate_path = lambda path: shipped(path) or pattern.search(path) is not None
    eval_both_sets(f"+ {args.regex} demoted", per_corpus=True)


if __name__ == "__main__":
    main()
