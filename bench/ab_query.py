"""In-process query latency of two versions of the code on the same index, run interleaved.

    python bench/ab_query.py --index DIR/index-1000000.sqlite --old 1440692 [--rounds 2]
                             [--queries 200] [--scoring auto] [--old-index PATH]
                             [--clock wall|cpu] [--repeat 1]

The old version is the package `rag/` at git revision --old, extracted to a temporary
directory; the new one is this working tree. Each round runs each version in its own child
process: the questions once to warm up (the view's arrays, SQLite's page cache), then timed,
as bench/scale.py does. The questions are bench/scale.py's (all dev questions, then docstring
queries spread evenly). The machine drifts, so compare versions within a round.
Build an index with `python bench/scale.py --keep DIR`. When the two versions store an index
differently, --old-index names the old version's index of the same files (built by that version).
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


def child(root: str, index: str, n_questions: int, scoring: str, clock: str, repeat: int) -> None:
    sys.path.insert(0, root)
    import rag  # from `root`, before bench.scale puts the working tree on the path
    from rag import Index, search

    assert Path(rag.__file__).resolve().is_relative_to(Path(root).resolve()), rag.__file__
    sys.path.insert(1, str(PROJECT))
    from bench.common import percentile
    from bench.scale import eval_questions

    questions = eval_questions(n_questions)
    now = time.process_time if clock == "cpu" else time.perf_counter
    with Index(index) as idx:
        for q in questions:
            search(idx, q, 4, scoring=scoring)
        times = []
        for q in questions:
            best = float("inf")
            for _ in range(repeat):  # the fastest of `repeat` runs: what the machine's load added least to
                start = now()
                search(idx, q, 4, scoring=scoring)
                best = min(best, now() - start)
            times.append(best)
    print(json.dumps({"median_ms": statistics.median(times) * 1000, "p95_ms": percentile(times, 95) * 1000}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--old", required=True, help="git revision of the old version")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--scoring", default="auto", choices=["auto", "bm25", "tfidf"])
    parser.add_argument("--old-index", help="the old version's index of the same files (default: --index)")
    parser.add_argument(
        "--clock",
        default="wall",
        choices=["wall", "cpu"],
        help="cpu: the process's CPU time, steadier on a busy machine",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="time each question this many times, keep the fastest"
    )
    parser.add_argument(
        "--child",
        nargs=6,
        metavar=("ROOT", "INDEX", "N", "SCORING", "CLOCK", "REPEAT"),
        help=argparse.SUPPRESS,
    )
    args = parser.parse_args()
    if args.child:
        root, index, n, scoring, clock, repeat = args.child
        child(root, index, int(n), scoring, clock, int(repeat))
        return
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(PROJECT), "archive", args.old, "rag"], capture_output=True, check=True
        ).stdout
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        versions = {
            f"old ({args.old})": (tmp, args.old_index or args.index),
            "new (working tree)": (str(PROJECT), args.index),
        }
        print(f"{args.queries} questions, scoring {args.scoring}, {args.clock} clock, index {args.index}")
        for r in range(args.rounds):
            for name, (root, index) in versions.items():
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
                        index,
                        str(args.queries),
                        args.scoring,
                        args.clock,
                        str(args.repeat),
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
