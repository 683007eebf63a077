"""Whole `query.py --json --no-llm` processes, interleaved: lexical only (--rerank none), the semantic
stage with a cold vector cache (its sidecar removed first) and warm; then `ingest --embed` passages/s.

    python bench/semantic_speed.py [REPO] [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = [
    "how are passages scored?",
    "where is the index written atomically",
    "what happens when a file is renamed",
]


def run(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repo", nargs="?", default=str(ROOT))
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp())
    index = work / "index.sqlite"
    subprocess.run(
        [sys.executable, str(ROOT / "ingest.py"), args.repo, "--index", str(index)],
        check=True,
        capture_output=True,
    )
    sidecar = Path(str(index) + ".vectors")
    times: dict[str, list[float]] = {"lexical": [], "semantic cold": [], "semantic warm": []}
    query = [str(ROOT / "query.py"), "--json", "--no-llm", "--index", str(index)]
    for r in range(args.rounds):
        q = QUESTIONS[r % len(QUESTIONS)]
        times["lexical"].append(run([*query, "--rerank", "none", q]))
        for suffix in ("", "-wal", "-shm"):
            Path(str(sidecar) + suffix).unlink(missing_ok=True)
        times["semantic cold"].append(run([*query, "--rerank", "semantic", q]))
        times["semantic warm"].append(run([*query, "--rerank", "semantic", q]))
    for name, values in times.items():
        print(
            f"{name:14} median {statistics.median(values):.3f} s  (min {min(values):.3f}, max {max(values):.3f}, "
            f"{len(values)} runs)"
        )
    for suffix in ("", "-wal", "-shm"):
        Path(str(sidecar) + suffix).unlink(missing_ok=True)
    out = subprocess.run(
        [sys.executable, str(ROOT / "ingest.py"), args.repo, "--index", str(index), "--embed"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    print(out.strip().splitlines()[-1])
    shutil.rmtree(work)
    os.sync()


if __name__ == "__main__":
    main()
