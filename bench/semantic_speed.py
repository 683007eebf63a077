"""Whole `query.py --json --no-llm` processes, interleaved: lexical only (--rerank none), the semantic
stage with a cold vector cache (its sidecar removed first), warm (the same question again: every vector
cached, the question's too), and warm with a question the cache has not seen (the passages' vectors
cached, the question's forgotten: the model must run); then `ingest --embed` passages/s on REPO, and
how long the background process an ingest starts takes to cache every passage's vector.

    python bench/semantic_speed.py [REPO] [--index INDEX] [--rounds 7] [--models minilm-l6-int8,minilm-l6-q8]

--index queries an existing index (its vector sidecar is removed and rebuilt) instead of one built
from REPO. The optimized-model cache in the user cache folder is left as it is: remove
~/.cache/rag/onnx first to time a first use.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("RAG_EMBED", "off")  # no background embedding during the timed runs (bench/common.py)
QUESTIONS = [
    "how are passages scored?",
    "where is the index written atomically",
    "what happens when a file is renamed",
    "how does the session cookie get signed",
    "retry a request after a timeout",
    "where are default headers merged into the request config",
    "how is a form validated before saving",
    "parse the query string of a url",
    "which errors are raised for a bad status code",
]


def run(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, capture_output=True)
    return time.perf_counter() - start


def remove_sidecar(index: Path) -> None:
    for suffix in (".vectors", ".vectors-wal", ".vectors-shm"):
        Path(str(index) + suffix).unlink(missing_ok=True)


def forget_questions(index: Path) -> None:
    """Drop the cached question vectors (a version without that cache has nothing to drop)."""
    sidecar = str(index) + ".vectors"
    if not os.path.exists(sidecar):
        return
    with sqlite3.connect(sidecar) as conn:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'questions'").fetchone():
            conn.execute("DELETE FROM questions")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repo", nargs="?", default=str(ROOT))
    ap.add_argument("--index", type=Path, help="an existing index to query (default: one built from REPO)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument(
        "--models",
        default="",
        help="comma-separated models whose `ingest --embed` rates are measured interleaved, --embed-rounds "
        "times each (default: only the configured model, once)",
    )
    ap.add_argument("--embed-rounds", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp())
    index = work / "index.sqlite"
    subprocess.run(
        [sys.executable, str(ROOT / "ingest.py"), args.repo, "--index", str(index)],
        check=True,
        capture_output=True,
    )
    queried = args.index or index
    names = ("lexical", "semantic cold", "semantic warm", "warm, new question")
    times: dict[str, list[float]] = {name: [] for name in names}
    query = [str(ROOT / "query.py"), "--json", "--no-llm", "--index", str(queried)]
    for r in range(args.rounds):
        q = QUESTIONS[r % len(QUESTIONS)]
        times["lexical"].append(run([*query, "--rerank", "none", q]))
        remove_sidecar(queried)
        times["semantic cold"].append(run([*query, "--rerank", "semantic", q]))
        times["semantic warm"].append(run([*query, "--rerank", "semantic", q]))
        forget_questions(queried)
        times["warm, new question"].append(run([*query, "--rerank", "semantic", q]))
    lexical = statistics.median(times["lexical"])
    for name, values in times.items():
        median = statistics.median(values)
        print(
            f"{name:19} median {median:.3f} s  {median / lexical:4.2f} x lexical  (min {min(values):.3f}, "
            f"max {max(values):.3f}, {len(values)} runs)"
        )
    remove_sidecar(queried)
    models = [m for m in args.models.split(",") if m] or [None]
    rates: dict[str | None, list[float]] = {m: [] for m in models}
    for _ in range(args.embed_rounds if args.models else 1):
        for model in models:
            remove_sidecar(index)
            env = {**os.environ, **({"RAG_SEMANTIC_MODEL": model} if model else {})}
            out = subprocess.run(
                [sys.executable, str(ROOT / "ingest.py"), args.repo, "--index", str(index), "--embed"],
                check=True,
                capture_output=True,
                text=True,
                env=env,
            ).stdout
            last = out.strip().splitlines()[-1]  # "Embedded N passages (0 cached) in S s, R passages/s"
            rates[model].append(float(last.rsplit(", ", 1)[1].split()[0]))
            if not args.models:
                print(last)
    if args.models:
        first = statistics.median(rates[models[0]])
        for model, values in rates.items():
            median = statistics.median(values)
            print(
                f"ingest --embed {model}: median {median:.1f} passages/s, {median / first:.2f} x {models[0]} "
                f"({', '.join(f'{v:.0f}' for v in values)})"
            )
    # the background process an ingest starts (rag/semantic/background.py): from the ingest's end until every
    # passage's vector is cached
    remove_sidecar(index)
    with sqlite3.connect(index) as conn:
        total = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    began = time.perf_counter()
    subprocess.run(
        [sys.executable, str(ROOT / "ingest.py"), args.repo, "--index", str(index)],
        check=True,
        capture_output=True,
        env={**os.environ, "RAG_EMBED": "background"},
    )
    ingested = time.perf_counter()
    with open(str(index) + ".vectors.embedding", "a+b") as lock:
        time.sleep(0.5)  # the process has taken its lock by then
        fcntl.flock(lock, fcntl.LOCK_EX)  # it has ended
        done = time.perf_counter()
    with sqlite3.connect(str(index) + ".vectors") as conn:
        cached = conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
    print(
        f"background embedding after an ingest: {cached} vectors for {total} passages in {done - ingested:.1f} s "
        f"({cached / (done - ingested):.0f} passages/s; the ingest itself {ingested - began:.2f} s)"
    )
    # what starting that process costs an ingest: an up-to-date ingest with it and without it,
    # interleaved (every vector cached: the process it starts finds nothing to do and ends)
    ingest = [str(ROOT / "ingest.py"), args.repo, "--index", str(index)]
    costs: dict[str, list[float]] = {"background": [], "off": []}
    for _ in range(args.rounds):
        for setting, values in costs.items():
            os.environ["RAG_EMBED"] = setting
            values.append(run(ingest))
            time.sleep(1.0)  # the started process has ended
    os.environ["RAG_EMBED"] = "off"
    off = statistics.median(costs["off"])
    on = statistics.median(costs["background"])
    print(
        f"ingest, up to date: {on:.3f} s starting the background embedding against {off:.3f} s without ({on / off:.2f} x)"
    )
    shutil.rmtree(work)
    os.sync()


if __name__ == "__main__":
    main()
