"""Many ingests in a row, each starting the background embedding (rag/semantic/background.py), as a script or a
benchmark makes them: how many embedding processes run and how much memory they hold, sampled after
each ingest and every 0.5 s until the last one ends, and how long until every index is embedded.

    python bench/embedding_queue.py REPO [REPO ...] [--checkout DIR]

--checkout runs another checkout's ingest.py (an older revision, for a before/after). The indexes go
to a temporary folder; the vectors are computed anew (a fresh vector cache beside each index).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT)

from bench.common import _tree_rss_kb  # noqa: E402


def embedding_processes() -> list[tuple[int, int]]:
    """The (pid, RSS kB) of every `python -m rag.semantic.background` process running now, from /proc."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                args = fh.read().split(b"\0")
        except OSError:  # ended while we looked
            continue
        if b"rag.semantic.background" in args:
            found.append((int(name), _tree_rss_kb(int(name))))
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the checkout whose ingest.py runs")
    args = parser.parse_args(argv)
    if embedding_processes():
        sys.exit("Another embedding process is running: wait for it to end, then run this again")
    env = {**os.environ, "RAG_EMBED": "background"}
    env.pop("RAG_RERANK", None)
    most, most_rss = 0, 0
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        for repo in args.repos:
            index = Path(out) / f"{repo.name}.idx"
            subprocess.run(
                [sys.executable, str(args.checkout / "ingest.py"), str(repo), "--index", str(index), "-q"],
                check=True,
                env=env,
            )
            running = embedding_processes()
            most, most_rss = max(most, len(running)), max(most_rss, sum(rss for _, rss in running))
        ingested = time.perf_counter() - start
        after_last = embedding_processes()
        while running := embedding_processes():
            most, most_rss = max(most, len(running)), max(most_rss, sum(rss for _, rss in running))
            time.sleep(0.5)
        done = time.perf_counter() - start
    print(f"checkout {args.checkout}: {len(args.repos)} ingests in {ingested:.1f} s")
    print(
        f"right after the last: {len(after_last)} embedding processes, "
        f"{sum(rss for _, rss in after_last) / 1024:.0f} MB"
    )
    print(f"at the most: {most} processes, {most_rss / 1024:.0f} MB")
    print(f"every index embedded {done:.1f} s after the first ingest began")


if __name__ == "__main__":
    main()
