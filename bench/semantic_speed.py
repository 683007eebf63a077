"""Whole `query.py --json --no-llm` processes, interleaved: lexical only (--rerank none), the semantic
stage with a cold vector cache (its sidecar removed first), warm (the same question again: every vector
cached, the question's too), and warm with a question the cache has not seen (the passages' vectors
cached, the question's forgotten: the model must run); then `ingest --embed` passages/s on REPO; then,
interleaved, a new index built by a plain ingest and by `ingest --embed`, each followed by new
questions (after the plain one no vector is cached, after --embed every passage's is).

    python bench/semantic_speed.py [REPO] [--index INDEX] [--rounds 7] [--models minilm-l6-int8,minilm-l6-q8]

--index queries an existing index (its vector sidecar is removed and rebuilt) instead of one built
from REPO. The optimized-model cache in the user cache folder is left as it is: remove
~/.cache/rag/onnx first to time a first use.
"""

from __future__ import annotations

import argparse
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
    # a new index, plain or --embed, then the first new questions asked of it (whole processes)
    build = [str(ROOT / "ingest.py"), args.repo, "--index", str(index)]
    asked = [str(ROOT / "query.py"), "--json", "--no-llm", "--rerank", "semantic", "--index", str(index)]
    new: dict[str, list[float]] = {
        name: [] for name in ("plain ingest", "ingest --embed", "after plain: 1st", "after plain: 2nd-3rd")
    }
    new |= {"after --embed: 1st": [], "after --embed: 2nd-3rd": []}
    for r in range(args.rounds):
        questions = [QUESTIONS[(3 * r + i) % len(QUESTIONS)] for i in range(3)]
        for kind, flags in (("plain", []), ("--embed", ["--embed"])):
            index.unlink(missing_ok=True)
            remove_sidecar(index)
            new["plain ingest" if kind == "plain" else "ingest --embed"].append(run([*build, *flags]))
            forget_questions(index)  # --embed caches no question: nothing to forget, kept for symmetry
            first, *rest = (run([*asked, q]) for q in questions)
            new[f"after {kind}: 1st"].append(first)
            new[f"after {kind}: 2nd-3rd"].extend(rest)
    for name, values in new.items():
        print(
            f"{name:22} median {statistics.median(values):.3f} s  (min {min(values):.3f}, max {max(values):.3f}, "
            f"{len(values)} runs)"
        )
    shutil.rmtree(work)
    os.sync()


if __name__ == "__main__":
    main()
