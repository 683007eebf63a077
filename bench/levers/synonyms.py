"""A small vocabulary of code synonyms, expanded at query time, on top of bench/levers/retrieval.py's search.

    python bench/levers/synonyms.py --beta 0.5 [--sets docstring,dev]

Each query term in a group below adds the group's other words (through the index's own
tokenizer, so they are stemmed like everything else) with `beta` times the weight they would
have as typed query words; words already in the question keep their own weight. The groups
were written from general programming vocabulary before looking at any question, and the
same list applies to every corpus. Scoring is the default cosine. Results go in docs/levers.md.
"""

from __future__ import annotations

import argparse
import math
import runpy
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
GROUPS = [
    "auth authentication authenticate login credential",
    "authorization permission access role",
    "delete remove destroy drop",
    "config configuration settings options conf",
    "create make new build construct",
    "error exception fail failure raise",
    "start begin init initialize setup",
    "stop end close shutdown teardown",
    "fetch retrieve read load",
    "store save write persist",
    "send emit dispatch",
    "check validate verify",
    "find search lookup",
    "run execute invoke call",
    "url uri link",
    "directory dir folder",
    "message msg",
    "database db",
    "function func fn callback handler",
    "argument arg param parameter",
    "retry attempt backoff",
    "cancel abort",
    "serialize encode dump",
    "deserialize decode parse",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beta", type=float, required=True)
    parser.add_argument("--sets", default="docstring,dev")
    args = parser.parse_args()
    levers = runpy.run_path(str(HERE / "retrieval.py"), run_name="levers")
    memory_index = levers["MemoryIndex"]

    def expanded(self: Any, question: str) -> dict[str, float]:
        """Query term -> weight multiplier on its typed-word weight (1 for typed words)."""
        counts = self.tokenizer.query_counts(question)
        if not hasattr(self, "_synonyms"):
            self._synonyms = {}
            for group in GROUPS:
                stems = [t for w in group.split() for t in self.tokenizer.tokenize(w)]
                for s in stems:
                    self._synonyms.setdefault(s, set()).update(x for x in stems if x != s)
        out = {t: 1.0 + math.log(n) for t, n in counts.items()}
        for t in list(counts):
            for s in self._synonyms.get(t, ()):
                out.setdefault(s, args.beta)
        return out

    def query_vector(self: Any, question: str) -> tuple[list[int], np.ndarray]:
        cols, qw = [], []
        for term, mult in expanded(self, question).items():
            c = self.vocab.get(term)
            if c is not None:
                cols.append(c)
                qw.append(mult * self.idf[c])
        q = np.asarray(qw, dtype=np.float64)
        return cols, q / np.sqrt((q * q).sum()) if cols else q

    memory_index.query_vector = query_vector
    label = f"synonyms beta={args.beta}:"
    sys.argv = [str(HERE / "retrieval.py"), "--config", label, "--sets", args.sets]
    levers["main"]()


if __name__ == "__main__":
    main()
