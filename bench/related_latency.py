"""Time `rag related` in process against a question's search on the same index, interleaved: for each of
N passages drawn at random (seeded), the related search with the query kept to its 32 heaviest terms,
the same with every term of the passage, and a dev question of the corpus (the reference).

    python bench/related_latency.py INDEX [--passages N] [--corpus NAME]

Lexical order only (--rerank none): the semantic stage costs the same for both. Prints medians and
90th percentiles in ms, and the share of related passages from the source's own file.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)

from bench.common import SHARED  # noqa: E402
from rag.retrieval import related  # noqa: E402
from rag.retrieval.retrieve import rank_question  # noqa: E402
from rag.store.reader import Index  # noqa: E402
from rag.weights import DEFAULTS  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("index")
    ap.add_argument("--passages", type=int, default=60)
    ap.add_argument("--corpus", default="django-5.2.19", help="whose dev questions are the reference")
    args = ap.parse_args()
    rows = [json.loads(line) for line in (SHARED / "dev-questions.jsonl").read_text().splitlines() if line]
    questions = [r["question"] for r in rows if r["corpus"] == args.corpus] or ["how is a request handled?"]
    times: dict[str, list[float]] = {"related (32 terms)": [], "related (all terms)": [], "question": []}
    same = listed = 0
    with Index(args.index) as index:
        ids = random.Random(7).sample(index.chunk_ids(), args.passages)
        for n, cid in enumerate(ids):
            source = index.chunks([cid])[cid]
            spans = index.places(index.file_chunk_ids(source.path))
            overlapping = frozenset(
                o for o, (_, a, b) in spans.items() if a <= source.end_line and source.start_line <= b
            )
            for label, limit in (("related (32 terms)", 32), ("related (all terms)", 1 << 30)):
                weights = DEFAULTS._replace(passage_terms=limit)
                t = time.perf_counter()
                hits, _ = related.rank_like(
                    index, cid, source, overlapping, 4, rerank="none", weights=weights
                )
                times[label].append(time.perf_counter() - t)
                if limit == 32:
                    same += sum(h.chunk.path == source.path for h in hits)
                    listed += len(hits)
            t = time.perf_counter()
            rank_question(index, questions[n % len(questions)], 4, rerank="none")
            times["question"].append(time.perf_counter() - t)
    for label, values in times.items():
        values.sort()
        p90 = values[int(0.9 * (len(values) - 1))]
        print(f"{label:20s} median {statistics.median(values) * 1000:6.1f} ms  p90 {p90 * 1000:6.1f} ms")
    print(f"related passages from the source's own file: {same}/{listed}")


if __name__ == "__main__":
    main()
