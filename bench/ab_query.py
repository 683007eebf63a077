"""In-process query latency of two versions of the code on the same index, run interleaved.

    python bench/ab_query.py --index DIR/index-1000000.sqlite --old 1440692 [--rounds 2]
                             [--queries 200] [--scoring auto]

The old version is the package `rag/` at git revision --old, extracted to a temporary
directory; the new one is this working tree. Each round runs each version in its own child
process: the questions once to warm up (the view's arrays, SQLite's page cache), then timed,
as bench/scale.py does. The questions are bench/scale.py's (all dev questions, then docstring
queries spread evenly). The machine drifts, so compare versions within a round.
Build an index with `python bench/scale.py --keep DIR`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent


def child(root: str, index: str, n_questions: int, scoring: str) -> None:
    sys.path.insert(0, root)
    import rag  # from `root`, before bench.scale puts the working tree on the path
    from rag import Index, search

    assert Path(rag.__file__).resolve().is_relative_to(Path(root).resolve()), rag.__file__
    sys.path.insert(1, str(PROJECT))
    from bench.common import percentile
    from bench.scale import eval_questions

    questions = eval_questions(n_questions)
    with Index(index) as idx:
        for q in questions:
            search(idx, q, 4, scoring=scoring)
        times = []
        for q in questions:
            start = time.perf_counter()
            search(idx, q, 4, scoring=scoring)
            times.append(time.perf_counter() - start)
    print(json.dumps({"median_ms": statistics.median(times) * 1000, "p95_ms": percentile(times, 95) * 1000}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--old", required=True, help="git revision of the old version")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--scoring", default="auto", choices=["auto", "bm25", "tfidf"])
    parser.add_argument("--child", nargs=4, metavar=("ROOT", "INDEX", "N", "SCORING"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        root, index, n, scoring = args.child
        child(root, index, int(n), scoring)
        return
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(PROJECT), "archive", args.old, "rag"], capture_output=True, check=True
        ).stdout
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        versions = {f"old ({args.old})": tmp, "new (working tree)": str(PROJECT)}
        print(f"{args.queries} questions, scoring {args.scoring}, index {args.index}")
        for r in range(args.rounds):
            for name, root in versions.items():
                out = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--index",
                        args.index,
                        "--old",
                        args.old,
                        "--child",
                        root,
                        args.index,
                        str(args.queries),
                        args.scoring,
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                figures = json.loads(out)
                print(
                    f"round {r + 1}  {name:28} median {figures['median_ms']:6.1f} ms   "
                    f"p95 {figures['p95_ms']:6.1f} ms",
                    flush=True,
                )


if __name__ == "__main__":
    main()
