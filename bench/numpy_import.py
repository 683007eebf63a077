"""When numpy repays its import in a query: what importing it costs a process, against what it saves
a question, by the question's postings.

    python bench/numpy_import.py --index IDX [--index IDX ...] [--queries 200] [--runs 11]

Measured on this machine, in one run:

* the import, as a query process pays it: a process adding up one small query in numpy (imported
  as rag.numeric imports it, with its first calls) against one adding it up in the standard
  library, `--runs` of each in turn; the difference of the medians;
* the saving: on each index, each question's own call of top_scores (its terms, as search() passes
  them) through the standard library's sums and through numpy's, numpy already loaded, the
  fastest of 3 runs each, and the two results compared to the last bit; and the range check of its
  postings lists (rag.store.packing.largest) by max() and by numpy.

Every figure is CPU time (time.process_time), which other work on a shared machine changes far
less than it changes wall time; both sides of the comparison are measured alike.

It prints the import's cost, the saving by range of postings, a least-squares saving per posting
and the postings from which the saving repays the import: rag.retrieval.topk.NUMPY_IMPORT_POSTINGS
and rag.store.packing._NUMPY_IMPORT_VALUES are chosen from it. The questions are
bench/scale.py's (the dev questions, then docstring queries spread evenly).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)

from bench.common import PROJECT, versions  # noqa: E402
from bench.scale import eval_questions  # noqa: E402

# one small query's work, added up in numpy (imported by rag.numeric) or by the standard library:
# the CPU seconds it took, its first calls and any import included
_SMALL = """
import sys, time
from array import array
import rag.retrieval.topk as topk
from rag.weights import Cosine
if sys.argv[1] == "numpy":
    topk.NUMPY_POSTINGS = topk.NUMPY_IMPORT_POSTINGS = 0
else:
    topk.NUMPY_POSTINGS = topk.NUMPY_IMPORT_POSTINGS = 10**12
ids = array("I", range(0, 2000, 3))
work = [(1.0, ids, array("H", [1] * len(ids)), 1.0), (0.5, ids[::2], array("H", [2] * len(ids[::2])), 1.0)]
start = time.process_time()
topk.top_scores(work, 10, Cosine(), array("d", [1.0]) * 2000, 2000)
print(time.process_time() - start)
assert ("numpy" in sys.modules) == (sys.argv[1] == "numpy")
"""


def import_cost(runs: int) -> tuple[float, float]:
    """Median CPU seconds of the small query in numpy and in the standard library, in turn."""
    with_numpy, without = [], []
    for _ in range(runs):
        for label, out in (("numpy", with_numpy), ("stdlib", without)):
            done = subprocess.run(
                [sys.executable, "-c", _SMALL, label], cwd=PROJECT, capture_output=True, text=True
            )
            if done.returncode != 0:
                sys.exit(f"the small query failed ({label}): {done.stderr[-300:]}")
            out.append(float(done.stdout))
    return statistics.median(with_numpy), statistics.median(without)


def fastest(call, repeat: int = 3) -> float:
    """The least CPU seconds of `repeat` calls (CPU time: other work on the machine adds little)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        call()
        best = min(best, time.process_time() - start)
    return best


def savings(index_path: Path, questions: list[str]) -> list[tuple[int, int, float, float, float, float]]:
    """Per question: (postings, longest list, stdlib s, numpy s, max() s, numpy max s) of its
    top_scores call and its lists' range checks."""
    import numpy as np

    import rag.retrieval.search as search_module
    import rag.retrieval.topk as topk
    from rag import Index, search

    calls: list[tuple] = []
    real = search_module.top_scores

    def record(*args, **kwargs):
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    rows = []
    with Index(index_path) as index:
        for q in questions:
            calls.clear()
            search_module.top_scores = record
            try:
                search(index, q, 4)
            finally:
                search_module.top_scores = real
            if not calls:
                continue  # no term of the question is in the index
            args, kwargs = calls[0]
            terms = args[0]
            postings = sum(len(t[1]) for t in terms)
            longest = max(len(t[1]) for t in terms)
            results = {}

            def through(path: str, args=args, kwargs=kwargs, results=results):
                size = 0 if path == "numpy" else 10**12
                topk.NUMPY_POSTINGS = topk.NUMPY_IMPORT_POSTINGS = size
                results[path] = topk.top_scores(*args, **kwargs)

            stdlib_s = fastest(lambda: through("stdlib"))
            numpy_s = fastest(lambda: through("numpy"))
            # the same (score, chunk id) pairs, in whatever order, the scores to the last bit
            exact = sorted((s.hex(), c) for s, c in results["stdlib"]) == sorted(
                (s.hex(), c) for s, c in results["numpy"]
            )
            if not exact:
                sys.exit(f"numpy and the standard library differ on {q!r}")
            lists = [t[1] for t in terms]
            max_s = fastest(lambda lists=lists: [max(ids) for ids in lists])
            np_max_s = fastest(
                lambda lists=lists: [np.frombuffer(ids, dtype=np.dtype(ids.typecode)).max() for ids in lists]
            )
            rows.append((postings, longest, stdlib_s, numpy_s, max_s, np_max_s))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, action="append", required=True)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--runs", type=int, default=11, help="processes of each kind, for the import")
    args = parser.parse_args()
    print(versions(), "| load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    with_numpy, without = import_cost(args.runs)
    cost = with_numpy - without
    print(
        f"the import: a small query in numpy {with_numpy * 1000:.1f} ms of CPU, in the standard library "
        f"{without * 1000:.1f} ms (medians of {args.runs} processes each, in turn): {cost * 1000:.1f} ms"
    )
    questions = eval_questions(args.queries)
    for index in args.index:
        rows = savings(index, questions)
        print(f"\n{index}: {len(rows)} questions")
        print(f"{'postings':>19} {'questions':>9} {'stdlib ms':>9} {'numpy ms':>8} {'saved ms':>8}")
        edges = [0, 10_000, 50_000, 100_000, 200_000, 400_000, 800_000, 10**12]
        for low, high in zip(edges, edges[1:]):
            inside = [r for r in rows if low <= r[0] < high]
            if not inside:
                continue
            std = statistics.median(r[2] for r in inside) * 1000
            num = statistics.median(r[3] for r in inside) * 1000
            saved = statistics.median(r[2] - r[3] for r in inside) * 1000
            label = f"{low:,}-{high:,}" if high < 10**12 else f"{low:,}-"
            print(f"{label:>19} {len(inside):9d} {std:9.2f} {num:8.2f} {saved:8.2f}")
        many = [r for r in rows if r[0] >= 50_000]
        if many:
            # the saving through the origin, per posting: sum(x y) / sum(x x)
            per_posting = sum(r[0] * (r[2] - r[3]) for r in many) / sum(r[0] * r[0] for r in many)
            print(
                f"saving per posting (least squares, {len(many)} questions of 50,000 postings or more): "
                f"{per_posting * 1e9:.0f} ns; the import ({cost * 1000:.0f} ms) is repaid from "
                f"{cost / per_posting:,.0f} postings"
                if per_posting > 0
                else "numpy saves nothing here"
            )
        values = sum(r[0] for r in rows)
        by_max = sum(r[4] for r in rows) / values
        by_numpy = sum(r[5] for r in rows) / values
        print(
            f"range check: max() {by_max * 1e9:.1f} ns a value, numpy {by_numpy * 1e9:.1f} ns; the import is "
            f"repaid from {cost / max(by_max - by_numpy, 1e-12):,.0f} values in one list; "
            f"the longest list here {max(r[1] for r in rows):,}"
        )
    print("\nload average at the end: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
