"""The 43 code-search repositories served on a local Ray cluster (2 cores, loopback): identical results to
the same workspace in process, the fan-out's overhead per query, and ingest in Ray tasks.

    python bench/cluster.py                  # all 847 queries, 2 actors
    python bench/cluster.py --sample 4 --actors 4
    python bench/cluster.py --ingest         # also: ingest the 43 repositories through Ray tasks and locally

A cluster is started for the run (`ray start --head` on 127.0.0.1, in a temporary folder) and stopped
after it, `rag serve` placing the workspace on its actors. Each query is ranked as a query ranks it
(explained, rerank none) in process and on the cluster, in turn; the overhead is the difference of
the two times, query by query (median and p95), and the round trips to the actors are counted.
With --ingest, the 43 repositories are ingested from scratch into a temporary folder twice: one Ray
task a repository (`rag ingest --workspace --cluster`), and in this process one after the other,
each with the local parallel ingest (`rag ingest --workspace`), both on the same 2 cores.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path[0] = str(Path(__file__).resolve().parent.parent)

from bench.common import percentile  # noqa: E402
from bench.ranking import REPOS, codesearch_tasks, repository_indexes  # noqa: E402
from rag.evaluation import EVAL_DEPTH  # noqa: E402
from rag.indexing.pipeline import ingest  # noqa: E402
from rag.retrieval import cluster  # noqa: E402
from rag.retrieval.opening import open_index  # noqa: E402
from rag.retrieval.retrieve import rank_question  # noqa: E402
from rag.store.workspace import Workspace  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listed(hits: list[Any]) -> list[tuple[str, int, int, float]]:
    return [(h.passage.path, h.passage.start_line, h.passage.end_line, h.score) for h in hits]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", type=int, default=1, help="every K-th query")
    ap.add_argument("--actors", type=int, default=2)
    ap.add_argument("--ingest", action="store_true", help="also time ingest through Ray tasks and locally")
    args = ap.parse_args(argv)
    tasks = codesearch_tasks()[:: args.sample]
    paths = repository_indexes()
    temp = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))
    listing = temp / "workspace.txt"
    listing.write_text("".join(f"{p}\n" for p in paths))
    port = free_port()
    address = f"127.0.0.1:{port}"
    ray_cli = [sys.executable, "-m", "ray.scripts.scripts"]
    server = None
    try:
        start = [*ray_cli, "start", "--head", f"--port={port}", "--num-cpus=2", "--node-ip-address=127.0.0.1"]
        start += ["--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp / 'ray'}"]
        subprocess.run(start, check=True, capture_output=True, timeout=300)
        server = subprocess.Popen(
            [sys.executable, "-m", "rag", "serve", "--workspace", str(listing), "--cluster", address]
            + [f"--actors={args.actors}"],
            stderr=subprocess.PIPE,
            text=True,
        )
        assert server.stderr is not None
        print(server.stderr.readline().strip(), file=sys.stderr)
        remote = cluster.connect(address)
        here = open_index(paths)
        assert isinstance(here, Workspace)
        calls = count_calls(remote)
        for q in ("warm up", "router"):
            rank_question(here, q, EVAL_DEPTH, explain=True, rerank="none")
            rank_question(remote, q, EVAL_DEPTH, explain=True, rerank="none")
        differ, local_times, remote_times, overheads, round_trips = [], [], [], [], []
        for t in tasks:
            start_at = time.perf_counter()
            mine = rank_question(here, t["query"], EVAL_DEPTH, explain=True, rerank="none")[0]
            local_times.append(time.perf_counter() - start_at)
            before = calls[0]
            start_at = time.perf_counter()
            theirs = rank_question(remote, t["query"], EVAL_DEPTH, explain=True, rerank="none")[0]
            remote_times.append(time.perf_counter() - start_at)
            round_trips.append(calls[0] - before)
            overheads.append(remote_times[-1] - local_times[-1])
            if listed(mine) != listed(theirs):
                differ.append(t["query"])
        here.close()
        n = len(tasks)
        ms = lambda xs: 1000 * statistics.median(xs)  # noqa: E731
        p95 = lambda xs: 1000 * percentile(xs, 95)  # noqa: E731
        print(f"queries: {n} (every {args.sample}); {len(remote.hosts)} actors")
        print(f"identical to the workspace in process: {n - len(differ)}/{n}")
        for q in differ[:10]:
            print(f"  differs: {q!r}")
        print(
            f"in process median {ms(local_times):.1f} ms (p95 {p95(local_times):.1f}) | on the cluster "
            f"median {ms(remote_times):.1f} ms (p95 {p95(remote_times):.1f})"
        )
        print(
            f"fan-out overhead per query: median {ms(overheads):.1f} ms, p95 {p95(overheads):.1f} ms; "
            f"round trips to the actors a query: median {statistics.median(round_trips):.0f}"
        )
        if args.ingest:
            time_ingest(paths, address, temp)
    finally:
        ray = sys.modules.get("ray")
        if ray is not None and ray.is_initialized():
            ray.shutdown()
        if server is not None:
            server.terminate()
            server.wait(timeout=60)
            assert server.stderr is not None
            server.stderr.close()
        subprocess.run([*ray_cli, "stop", "--force"], capture_output=True, timeout=300)
        shutil.rmtree(temp, ignore_errors=True)


def count_calls(workspace: Workspace) -> list[int]:
    """Count the requests the workspace's hosts are sent (a one-element list, updated in place)."""
    count = [0]
    for host in workspace.hosts:
        submit = host.submit

        def counted(method: str, *args: Any, submit: Any = submit) -> Any:
            count[0] += 1
            return submit(method, *args)

        host.submit = counted  # type: ignore[method-assign]
    return count


def time_ingest(indexes: list[str], address: str, temp: Path) -> None:
    """Ingest the repositories of `indexes` from scratch into `temp`, through Ray tasks and locally."""
    repos = [Path(p).stem.removeprefix("codesearch-") for p in indexes]
    for how in ("ray", "local"):
        folder = temp / f"indexes-{how}"
        folder.mkdir()
        pairs = [(str(REPOS / name), str(folder / f"{name}.idx")) for name in repos]  # none exists yet
        start = time.perf_counter()
        if how == "ray":
            cluster.ingest_on_cluster(address, pairs, full=True)
        else:
            for root, path in pairs:
                ingest(root, path)
        seconds = time.perf_counter() - start
        print(f"ingest of {len(repos)} repositories ({how}): {seconds:.1f} s")


if __name__ == "__main__":
    main()
