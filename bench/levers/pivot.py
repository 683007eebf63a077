"""Pivoted length normalisation on top of bench/levers/retrieval.py's in-memory search: measured, not adopted.

    python bench/levers/pivot.py --slope 0.8 [--sets docstring,dev]

Each chunk's tf-idf vector is divided by (1 - slope) * mean norm + slope * its norm instead of its
norm (Singhal et al.'s pivoted normalisation; slope 1 is cosine). Long passages are penalised less.
Everything else is as in bench/levers/retrieval.py. Results are recorded in docs/levers.md.
"""

from __future__ import annotations

import argparse
import math
import runpy
import sys
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

LEVERS = Path(__file__).resolve().parent / "retrieval.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slope", type=float, required=True)
    parser.add_argument("--sets", default="docstring,dev")
    args = parser.parse_args()
    levers = runpy.run_path(str(LEVERS), run_name="levers")
    memory_index = levers["MemoryIndex"]
    cosine_init = memory_index.__init__

    def pivoted_init(self: Any, chunks: list[Any], settings: Any) -> None:
        cosine_init(self, chunks, settings)
        norms = np.array(
            [
                math.sqrt(
                    sum(
                        ((1 + math.log(min(tf, 65535))) * self.idf[self.vocab[t]]) ** 2
                        for t, tf in counts.items()
                    )
                )
                or 1.0
                for counts in self.counts
            ]
        )
        pivot = (1 - args.slope) * norms.mean() + args.slope * norms
        self.matrix = sparse.csc_matrix(sparse.diags(norms / pivot) @ self.matrix.tocsr())

    memory_index.__init__ = pivoted_init
    sys.argv = [str(LEVERS), "--config", f"pivot slope={args.slope}:", "--sets", args.sets]
    levers["main"]()


if __name__ == "__main__":
    main()
