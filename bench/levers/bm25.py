"""BM25 scoring on top of bench/levers/retrieval.py's in-memory search: rag's chunks, fields and rerank kept.

    python bench/levers/bm25.py --k1 1.2 --b 0.75 [--sets docstring,dev] [--mix M]
    python bench/levers/bm25.py --k1 4 --b 0.9 --lever fields [--record --title T]   # levers under BM25

Each chunk's stored terms (text, path and symbol fields, as rag.text.terms.chunk_counts weighs them)
are scored with Lucene's BM25: idf = ln(1 + (N - df + 0.5) / (df + 0.5)), tf part
tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl)), dl = the chunk's term count. A query term counts
once per occurrence. Candidates and rerank are as in bench/levers/retrieval.py. This differs from the
bench's `ref bm25s` row, which has no query stopwords and no rerank. With --lever/--record/--title
the arguments go to bench/levers/retrieval.py: its lever tables, every configuration scored with BM25.
Results go in docs/levers.md.
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

LEVERS = Path(__file__).resolve().parent / "retrieval.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k1", type=float, default=1.2)
    parser.add_argument("--b", type=float, default=0.75)
    parser.add_argument("--sets", default="docstring,dev")
    parser.add_argument("--corpora", default="")
    parser.add_argument(
        "--mix",
        type=float,
        default=0.0,
        help="score = (1 - mix) * bm25 / its best + mix * cosine / its best (0: BM25 only)",
    )
    args, passed_on = parser.parse_known_args()
    levers = runpy.run_path(str(LEVERS), run_name="levers")
    memory_index = levers["MemoryIndex"]
    cosine_init = memory_index.__init__
    tf_max = levers["TF_MAX"]

    def bm25_init(self: Any, chunks: list[Any], settings: Any) -> None:
        cosine_init(self, chunks, settings)
        rows, cols, tfs = [], [], []
        for cid, counts in enumerate(self.counts):
            for term, tf in counts.items():
                rows.append(cid)
                cols.append(self.vocab[term])
                tfs.append(min(tf, tf_max))
        n = len(chunks)
        col = np.asarray(cols, dtype=np.int64)
        row = np.asarray(rows, dtype=np.int64)
        tf = np.asarray(tfs, dtype=np.float64)
        df = np.bincount(col, minlength=len(self.vocab))
        idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
        dl = np.bincount(row, weights=tf, minlength=n)
        norm = args.k1 * (1 - args.b + args.b * dl / max(dl.mean(), 1e-9))
        w = idf[col] * tf * (args.k1 + 1) / (tf + norm[row])
        self.cosine = self.matrix
        self.matrix = sparse.csc_matrix(sparse.csr_matrix((w, (row, col)), shape=(n, len(self.vocab))))

    def query_vector(self: Any, question: str) -> tuple[list[int], np.ndarray]:
        cols, qw = [], []
        for term, count in self.tokenizer.query_counts(question).items():
            c = self.vocab.get(term)
            if c is not None:
                cols.append(c)
                qw.append(float(count))
        return cols, np.asarray(qw, dtype=np.float64)

    cosine_vector = memory_index.query_vector
    rerank_module, hit_type = levers["rerank_module"], levers["Hit"]
    defaults = levers["DEFAULTS"]  # the ranking's weights, unless a configuration passes its own

    def search(self: Any, question: str, k: int, rerank_kwargs: dict[str, object]) -> list[Any]:
        cols, q = query_vector(self, question)
        if not cols:
            return []
        scores = self.matrix[:, cols] @ q
        if args.mix:
            ccols, cq = cosine_vector(self, question)
            cos = self.cosine[:, ccols] @ cq
            scores = (1 - args.mix) * scores / scores.max() + args.mix * cos / max(cos.max(), 1e-12)
        cand = np.flatnonzero(scores > 0)
        order = cand[np.lexsort((cand, -scores[cand]))][
            : rerank_module.candidate_count(k, rerank_kwargs.get("weights", defaults))
        ]
        hits = [hit_type(float(scores[i]), self.chunks[i]) for i in order]
        return list(rerank_module.rank_hits(hits, k, **rerank_kwargs))

    memory_index.__init__ = bm25_init
    memory_index.search = search
    configs = [] if "--lever" in passed_on else ["--config", f"bm25 k1={args.k1} b={args.b} mix={args.mix}:"]
    sys.argv = [str(LEVERS), *configs, "--sets", args.sets, "--corpora", args.corpora, *passed_on]
    levers["main"]()


if __name__ == "__main__":
    main()
