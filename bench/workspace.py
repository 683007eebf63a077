"""The 43 code-search repositories as one workspace: every benchmark query asked of all of them, the
repository not named.

    python bench/workspace.py                 # all 847 queries: identity, NDCG@10, in-process latency
    python bench/workspace.py --sample 4      # every 4th query
    python bench/workspace.py --processes 12  # also whole `query.py` processes against `import click`
    python bench/workspace.py --sample 847 --processes 36 --repeat 3   # the processes alone, more of them

Reports, for each query ranked as a query ranks it (the lexical order, rerank none):
- identity: the workspace's result list (paths, lines, scores) against that of one index built
  over the folder that holds the 43 repositories (the union: each path begins with its repository's
  name); every list must be equal, to the last bit of each score;
- NDCG@10 (../shared/codesearch/run's metric) against the same query asked of its own repository's
  index: of the workspace's list with only the query's own repository's files (read from its top
  OWN_DEPTH), and of its top 10 as it stands (another repository's file counting as a miss where it
  stands); the queries whose first result comes from another repository;
- in-process latency (median, p95) of the workspace and of the union index, and the repositories
  scored and passed over by the fan-out's pruning;
- with --processes N: whole `query.py --no-llm` processes on the workspace (N questions) against
  `python -c "import click"` run between them.

The indexes are those of bench/ranking.py (${RAG_BENCH_INDEXES:-~/.cache/rag-bench-indexes}), brought up
to date with this checkout's ingest; the union is built there too (codesearch-union.idx).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path[0] = str(Path(__file__).resolve().parent.parent)

from bench.common import percentile, run_isolated  # noqa: E402
from bench.ranking import INDEXES, REPOS, codesearch_tasks, repository_indexes, runner  # noqa: E402
from rag.evaluation import EVAL_DEPTH  # noqa: E402
from rag.indexing.pipeline import ingest  # noqa: E402
from rag.retrieval.opening import open_index  # noqa: E402
from rag.retrieval.retrieve import rank_question  # noqa: E402
from rag.store.reader import Index  # noqa: E402
from rag.store.workspace import FanOut, Workspace  # noqa: E402

PROJECT = Path(__file__).resolve().parent.parent
OWN_DEPTH = 50  # how deep the workspace's list is read for the query's own repository's files


def listed(hits: list[Any]) -> list[tuple[str, int, int, int, int, float]]:
    return [
        (
            h.chunk.path,
            h.chunk.start_line,
            h.chunk.end_line,
            h.passage.start_line,
            h.passage.end_line,
            h.score,
        )
        for h in hits
    ]


def as_results(hits: list[Any], strip: str = "") -> list[dict[str, Any]]:
    """The runner's result rows of the passages shown; a path of another repository keeps its prefix
    (it matches none of the task's files, and counts as a miss where it stands)."""
    out = []
    for h in hits:
        path = h.passage.path
        out.append(
            {
                "path": path[len(strip) :] if strip and path.startswith(strip) else path,
                "start_line": h.passage.start_line,
                "end_line": h.passage.end_line,
            }
        )
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", type=int, default=1, help="every K-th query")
    ap.add_argument("--processes", type=int, default=0, help="time N whole query.py processes")
    ap.add_argument("--repeat", type=int, default=1, help="time each of those processes this many times")
    ap.add_argument("--out", type=Path, help="write per-query rows here (JSON)")
    args = ap.parse_args(argv)
    run = runner()
    every = codesearch_tasks()
    tasks = every[:: args.sample]
    paths = repository_indexes()
    union_path = INDEXES / "codesearch-union.idx"
    ingest(REPOS, union_path)
    own: dict[str, Index] = {}

    # count what the fan-out scores: wrap it, leaving its result as it is
    counts = {"scored": 0, "skipped": 0}
    inner = Workspace.top

    def counted(*a: Any, **k: Any) -> FanOut:
        found = inner(*a, **k)
        counts["scored"] += found.members_scored
        counts["skipped"] += found.members_skipped
        return found

    Workspace.top = counted  # type: ignore[method-assign]

    rows, own_rows, filtered_rows, differ, wrong = [], [], [], [], []
    ws_times: list[float] = []
    union_times: list[float] = []
    ws = open_index(paths)
    assert isinstance(ws, Workspace)
    with ws, Index(union_path) as union:
        print(f"workspace: {len(ws.names)} repositories, {ws.manifest.n_chunks} chunks", file=sys.stderr)
        for q in ("warm up", "router"):  # first reads of each index's pages
            rank_question(ws, q, EVAL_DEPTH, rerank="none")
            rank_question(union, q, EVAL_DEPTH, rerank="none")
        for i, t in enumerate(tasks):
            start = time.perf_counter()
            mine = rank_question(ws, t["query"], EVAL_DEPTH, rerank="none")[0]
            ws_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            theirs = rank_question(union, t["query"], EVAL_DEPTH, rerank="none")[0]
            union_times.append(time.perf_counter() - start)
            if listed(mine) != listed(theirs):
                differ.append(t["query"])
            prefix = t["repo"] + "/"
            rows.append({**t, **run.score_task(t, as_results(mine, prefix))})
            deep = rank_question(ws, t["query"], OWN_DEPTH, rerank="none")[0]
            own_only = [h for h in deep if h.passage.path.startswith(prefix)][:EVAL_DEPTH]
            filtered_rows.append({**t, **run.score_task(t, as_results(own_only, prefix))})
            if mine and not mine[0].passage.path.startswith(prefix):
                wrong.append((t["repo"], t["query"], mine[0].passage.path))
            if t["repo"] not in own:
                own[t["repo"]] = Index(INDEXES / f"codesearch-{t['repo']}.idx")
            alone = rank_question(own[t["repo"]], t["query"], EVAL_DEPTH, rerank="none")[0]
            own_rows.append({**t, **run.score_task(t, as_results(alone))})
            if (i + 1) % 100 == 0:
                print(f"  {i + 1}/{len(tasks)}", file=sys.stderr)
    for index in own.values():
        index.close()
    ws_score = run.aggregate(run.per_repo(rows, lambda r: r["ndcg10"]), sorted({t["repo"] for t in tasks}))
    own_score = run.aggregate(
        run.per_repo(own_rows, lambda r: r["ndcg10"]), sorted({t["repo"] for t in tasks})
    )
    filtered = run.aggregate(
        run.per_repo(filtered_rows, lambda r: r["ndcg10"]), sorted({t["repo"] for t in tasks})
    )
    n = len(tasks)
    print(f"queries: {n} (every {args.sample})")
    print(f"identical to the union index: {n - len(differ)}/{n}")
    for q in differ[:10]:
        print(f"  differs: {q!r}")
    alone = own_score["overall"]
    print(f"NDCG@10, each repository's index alone: {alone:.4f}")
    print(
        f"NDCG@10, the workspace's list with only the query's own repository's files (its top {OWN_DEPTH} "
        f"filtered): {filtered['overall']:.4f} (drop {alone - filtered['overall']:.4f})"
    )
    print(
        f"NDCG@10, the workspace's top 10 as it stands (other repositories' files count as misses): "
        f"{ws_score['overall']:.4f} (drop {alone - ws_score['overall']:.4f})"
    )
    print(f"first result from another repository: {len(wrong)}/{n}")
    for repo, q, path in wrong[:15]:
        print(f"  [{repo}] {q!r} -> {path}")
    ms = lambda xs: 1000 * statistics.median(xs)  # noqa: E731
    p95 = lambda xs: 1000 * percentile(xs, 95)  # noqa: E731
    print(
        f"in process: workspace median {ms(ws_times):.1f} ms, p95 {p95(ws_times):.1f} ms | "
        f"union index median {ms(union_times):.1f} ms, p95 {p95(union_times):.1f} ms"
    )
    searches = counts["scored"] + counts["skipped"]
    print(
        f"fan-out: {counts['scored'] / max(1, searches):.1%} of repository searches scored, "
        f"{counts['skipped']} of {searches} passed over by their bound"
    )
    if args.processes:
        # spread over all the queries, whatever --sample
        questions = [t["query"] for t in every[:: max(1, len(every) // args.processes)]][: args.processes]
        query = [sys.executable, str(PROJECT / "query.py"), "--json", "--no-llm", "--rerank", "none"]
        query += [f"--index={p}" for p in paths]
        times, clicks = [], []
        for _ in range(args.repeat):
            for q in questions:
                one = run_isolated([*query, q])
                if one.returncode != 0:
                    sys.exit(f"query failed (exit {one.returncode}): {q!r}")
                times.append(one.seconds)
                clicks.append(run_isolated([sys.executable, "-c", "import click"]).seconds)
        ratio = statistics.median(times) / statistics.median(clicks)
        print(
            f"whole process ({len(questions)} questions x {args.repeat}): query.py {ms(times):.0f} ms, import click "
            f"{ms(clicks):.0f} ms: {ratio:.2f}x"
        )
    if args.out:
        rows_of = {"workspace": rows, "own_only": filtered_rows, "alone": own_rows, "differ": differ}
        args.out.write_text(json.dumps(rows_of, indent=1))


if __name__ == "__main__":
    main()
