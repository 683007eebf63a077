"""The long version of the hostile-repository and kill tests.

    python bench/hostile.py [--trials 20] [--corpus flask-3.1.3]

Builds the hostile tree with a 50 MB single-line file, ingests it, checks every readable
line is in some chunk; then SIGKILLs `ingest.py --full` on a real corpus at random points
and checks after each kill that the previous index still loads and answers identically.
"""

from __future__ import annotations

import argparse
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from hostile import build_hostile_repo, readable_lines

from bench.common import CORPORA, PROJECT, versions

QUESTIONS = ["how is the session cookie signed", "register a blueprint", "json response", "url_for"]


def answers(index_path: Path) -> list[list[tuple[str, int, float]]]:
    from rag import Index, search

    with Index(index_path) as index:
        return [[(h.chunk.path, h.chunk.start_line, h.score) for h in search(index, q, k=10)] for q in QUESTIONS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--corpus", default="flask-3.1.3")
    args = parser.parse_args()
    from rag import Index, ingest

    print(versions())
    with tempfile.TemporaryDirectory() as tmp:
        repo = build_hostile_repo(Path(tmp) / "hostile", big_line_mb=50)
        start = time.perf_counter()
        report = ingest(repo)
        print(f"hostile repo: {report.files} files, {report.chunks} chunks in {time.perf_counter() - start:.2f} s; "
              f"skipped {dict(sorted(report.skipped.items()))}")
        covered: dict[str, set[int]] = {}
        with Index(report.index_path) as index:
            for path, s, e in index._query(
                    "SELECT f.path, c.start_line, c.end_line FROM chunks c JOIN files f ON f.id = c.file_id"):
                covered.setdefault(path, set()).update(range(s, e + 1))
        expected = readable_lines(repo)
        lost = {p: len(lines - covered.get(p, set())) for p, lines in expected.items()}
        lost = {p: n for p, n in lost.items() if n}
        print(f"readable text files: {len(expected)}; files with lines in no chunk: {lost or 'none'}")

        corpus = CORPORA / args.corpus
        index_path = Path(tmp) / "kill.sqlite"
        ingest_cmd = [sys.executable, str(PROJECT / "ingest.py"), str(corpus), "--index", str(index_path), "--full"]
        subprocess.run(ingest_cmd, check=True, capture_output=True)
        before = answers(index_path)
        start = time.perf_counter()
        subprocess.run(ingest_cmd, check=True, capture_output=True)
        duration = time.perf_counter() - start
        rng = random.Random(0)
        killed = intact = 0
        for _ in range(args.trials):
            proc = subprocess.Popen(ingest_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0, duration))
            proc.send_signal(signal.SIGKILL)
            killed += proc.wait() == -signal.SIGKILL
            intact += answers(index_path) == before
        print(f"kill trials on {args.corpus} (full ingest {duration:.2f} s): {args.trials} trials, "
              f"{killed} killed mid-run, previous index intact and identical after {intact}/{args.trials}")


if __name__ == "__main__":
    main()
