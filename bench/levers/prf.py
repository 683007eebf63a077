"""Pseudo-relevance feedback (Rocchio) on top of bench/levers/retrieval.py's in-memory search: tried, rejected.

    python bench/levers/prf.py --beta 0.3 [--terms 10] [--passages 3] [--sets docstring,dev]

The normalised query vector gets `beta` times the centroid of the top `passages` passages,
cut to its `terms` strongest terms and normalised, then every chunk is scored again; the
rest (candidates, rerank) is as in bench/levers/retrieval.py. Results are recorded in docs/levers.md.
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path
from typing import Any

import numpy as np

LEVERS = Path(__file__).resolve().parent / "retrieval.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beta", type=float, required=True)
    parser.add_argument("--terms", type=int, default=10)
    parser.add_argument("--passages", type=int, default=3)
    parser.add_argument("--sets", default="docstring,dev")
    args = parser.parse_args()
    levers = runpy.run_path(str(LEVERS), run_name="levers")
    rerank_module, hit_type = levers["rerank_module"], levers["Hit"]
    defaults = levers["DEFAULTS"]  # the ranking's weights, unless a configuration passes its own

    def search(self: Any, question: str, k: int, rerank_kwargs: dict[str, object]) -> list[Any]:
        cols, weights = self.query_vector(question)
        if not cols:
            return []
        q = np.zeros(self.matrix.shape[1])
        q[cols] = weights
        scores = self.matrix[:, cols] @ q[cols]
        top = [i for i in np.argsort(-scores)[: args.passages] if scores[i] > 0]
        if args.beta > 0 and top:
            centroid = np.asarray(self.matrix[top].mean(axis=0)).ravel()
            expansion = np.zeros_like(q)
            strongest = np.argsort(-centroid)[: args.terms]
            expansion[strongest] = centroid[strongest]
            if np.linalg.norm(expansion) > 0:
                q = q + args.beta * expansion / np.linalg.norm(expansion)
                q /= np.linalg.norm(q)
                used = np.flatnonzero(q)
                scores = self.matrix[:, used] @ q[used]
        candidates = np.flatnonzero(scores > 0)
        order = candidates[np.lexsort((candidates, -scores[candidates]))][
            : rerank_module.candidate_count(k, rerank_kwargs.get("weights", defaults))
        ]
        hits = [hit_type(float(scores[i]), self.chunks[i]) for i in order]
        return list(rerank_module.rank_hits(hits, k, **rerank_kwargs))

    levers["MemoryIndex"].search = search
    sys.argv = [str(LEVERS), "--config", f"prf beta={args.beta}:", "--sets", args.sets]
    levers["main"]()


if __name__ == "__main__":
    main()
