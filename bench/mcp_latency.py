"""Time `rag mcp`: start-up until initialize returns, and one search's round trip, over stdio
with the SDK's own client (medians of several runs).

    python bench/mcp_latency.py [REPO] [--runs N]

REPO (default: this repository) is indexed first if it has no index.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from rag.indexing.pipeline import IngestOptions, ingest
from rag.store.paths import default_index_path

QUESTIONS = ["how are passages scored?", "where is the index written", "what does the freshness note check"]


async def one_run(params: StdioServerParameters) -> tuple[float, list[float]]:
    started = time.perf_counter()
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            startup = time.perf_counter() - started
            searches = []
            for question in QUESTIONS:
                t = time.perf_counter()
                result = await session.call_tool("search", {"query": question, "k": 4})
                searches.append(time.perf_counter() - t)
                assert not result.is_error, result.content
    return startup, searches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", nargs="?", default=str(Path(__file__).resolve().parents[1]))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    index = default_index_path(Path(args.repo).resolve())
    if not index.exists():
        ingest(args.repo, options=IngestOptions(workers=1))
    params = StdioServerParameters(command=sys.executable, args=["-m", "rag", "mcp", "--index", str(index)])
    startups, first, later = [], [], []
    for _ in range(args.runs):
        startup, searches = anyio.run(one_run, params)
        startups.append(startup)
        first.append(searches[0])
        later.extend(searches[1:])
    print(f"index: {index}, {args.runs} runs")
    print(f"start-up until initialize returns: median {statistics.median(startups) * 1000:.0f} ms")
    print(f"first search: median {statistics.median(first) * 1000:.1f} ms")
    print(f"later searches: median {statistics.median(later) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
