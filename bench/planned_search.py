"""The planned search measured as it runs: each question goes through the whole answering path,
offline. bench/messages_api.py serves the planning call from recorded model outputs and the answer
call with a fixed text; the passages sent to the answer call (the top 10: hit@4 is their first 4,
which are the same for every k up to 10) are scored as `rag eval` scores them.

    python bench/planned_search.py                                  # every recorded set, as a query runs
    python bench/planned_search.py --sets natural:generic,dev:generic --rerank none
    python bench/planned_search.py --sets natural:mine --recordings natural:mine=bench/data/searches/x.jsonl
    python bench/planned_search.py --sets natural:question          # no plan: the question alone

A SET:VARIANT is a question set (natural, dev) and a recorded variant: the files of
../shared/eval/searches/ (SET-questions.VARIANT.jsonl), bench/data/searches/ (SET.VARIANT.jsonl), or
`question` (planning off: the baseline). The indexes are bench/ranking.py's (built or brought up to
date first). For each, it prints hit@1/4/10, MRR@10 and the mean size of the top-4 passages, per
corpus, and how many planning calls found no recorded reply (those questions were searched alone,
as a failed plan is). With --json FILE, the per-question ranks go there.

    python bench/planned_search.py --time 16 --sets natural:passages

--stages N times, in process, the planning step's parts and a retrieval with and without it.

--time N measures what planning adds to a question's local time: N questions of each set (every
len/N-th), each asked through a whole `query.py --json` process with the plan and with
`--search question`, in turn, --repeat times after a warm-up of each; both get their answer from the
loopback server at once, so the difference is everything but a model's reply (the first look at
the index, the planning prompt, the call to the server, the reply's parsing, the longer search).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path[0] = str(Path(__file__).resolve().parent.parent)

from bench.common import SHARED  # noqa: E402
from bench.messages_api import ReplayApi, load_recordings  # noqa: E402
from bench.ranking import INDEXES, SETS, Indexes  # noqa: E402
from rag.answer.ask import Planning, ask  # noqa: E402
from rag.answer.backends import AnthropicBackend  # noqa: E402
from rag.evaluation import EVAL_DEPTH, evaluate, load_questions  # noqa: E402
from rag.retrieval.retrieve import Request  # noqa: E402

HERE = Path(__file__).resolve().parent
LANGUAGE = {
    "gin": "go",
    "tokio": "rust",
    "jackson-databind": "java",
    "vitest": "typescript",
    "sinatra": "ruby",
    "redis": "c",
    "guzzle": "php",
    "ktor": "kotlin",
}
DEFAULT_SETS = (
    "natural:question,natural:passages,natural:no-passages,natural:generic,natural:grounded,natural:named,"
    "dev:question,dev:passages,dev:no-passages,dev:generic,dev:named"
)


def recordings_file(set_name: str, variant: str, given: dict[str, Path]) -> Path:
    key = f"{set_name}:{variant}"
    if key in given:
        return given[key]
    shared = SHARED / "searches" / f"{SETS[set_name][0].removesuffix('.jsonl')}.{variant}.jsonl"
    if shared.exists():
        return shared
    own = HERE / "data" / "searches" / f"{set_name}.{variant}.jsonl"
    if own.exists():
        return own
    sys.exit(f"no recorded searches for {key}: {shared} and {own} do not exist — pass --recordings")


def run(set_name: str, variant: str, rerank: str, given: dict[str, Path]) -> dict[str, Any]:
    """Score one set with one variant through ask(); return the figures and the per-question ranks."""
    file, root = SETS[set_name]
    questions = load_questions(SHARED / file)
    indexes = Indexes()
    planned = variant != "question"
    recordings = load_recordings([recordings_file(set_name, variant, given)]) if planned else {}
    with ReplayApi(recordings) as api:
        import anthropic

        client = anthropic.Anthropic(base_url=api.url, api_key="offline", max_retries=0)
        backend = AnthropicBackend(client=client)
        sent: dict[str, list[str]] = {}

        def passages(q: Any) -> list[Any]:
            indexes.get(set_name, root / str(q.corpus))  # built or brought up to date
            index_name = "codesearch" if set_name == "natural" else set_name
            outcome = ask(
                INDEXES / f"{index_name}-{q.corpus}.idx",
                Request(q.question, EVAL_DEPTH, rerank=rerank),
                backend,
                planning=Planning(backend) if planned else None,
            )
            sent[q.id] = list(outcome.retrieval.searches)
            return list(outcome.answer.hits) if outcome.answer is not None else []

        t0 = time.perf_counter()
        report = evaluate(questions, passages)
        seconds = time.perf_counter() - t0
        unmatched = sum(1 for r in api.requests if r.kind == "plan" and r.question is None)
        plans = sum(1 for r in api.requests if r.kind == "plan")
    m = report.overall
    styles: dict[str, list[int | None]] = {}
    for line in (SHARED / file).read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            if row["id"] in {o.question.id for o in report.outcomes}:
                rank = next(o.rank for o in report.outcomes if o.question.id == row["id"])
                styles.setdefault(row.get("style", "all"), []).append(rank)
    by_style = {
        style: (
            sum(1 for r in ranks if r is not None and r <= 4) / len(ranks),
            sum(1 / r for r in ranks if r is not None and r <= EVAL_DEPTH) / len(ranks),
            len(ranks),
        )
        for style, ranks in sorted(styles.items())
    }
    return {
        "set": set_name,
        "variant": variant,
        "rerank": rerank,
        "hit_at_1": m.hit_at_1,
        "hit_at_4": m.hit_at_4,
        "hit_at_10": m.hit_at_10,
        "mrr_at_10": m.mrr_at_10,
        "top4_chars": m.mean_top4_chars,
        "per_corpus": {c: (v.hit_at_4, v.mrr_at_10) for c, v in report.per_corpus.items()},
        "per_style": by_style,
        "plans": plans,
        "unmatched": unmatched,
        "seconds": seconds,
        "ranks": {o.question.id: o.rank for o in report.outcomes},
        "searches": sent,
    }


def timing(set_name: str, variant: str, n: int, repeat: int, rerank: str, given: dict[str, Path]) -> None:
    """Print the median whole-process time of a query with and without planning, and their
    per-question differences."""
    import os
    import statistics

    from bench.common import PROJECT, run_isolated

    file, root = SETS[set_name]
    questions = load_questions(SHARED / file)
    chosen = questions[:: max(1, len(questions) // n)][:n]
    indexes = Indexes()
    recordings = load_recordings([recordings_file(set_name, variant, given)])
    with ReplayApi(recordings) as api:
        env = {**os.environ, "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "offline"}
        os.environ.update(env)  # the trampoline passes its environment on
        planned: list[float] = []
        alone: list[float] = []
        diffs: list[float] = []
        for q in chosen:
            indexes.get(set_name, root / str(q.corpus))
            index_name = "codesearch" if set_name == "natural" else set_name
            base = [
                sys.executable,
                str(PROJECT / "query.py"),
                "--json",
                "--backend",
                "anthropic",
                "--rerank",
                rerank,
                "--index",
                str(INDEXES / f"{index_name}-{q.corpus}.idx"),
            ]
            with_plan = [*base, "--search", "planned", q.question]
            without = [*base, "--search", "question", q.question]
            for cmd in (with_plan, without):  # warm-up: caches, vectors
                run_isolated(cmd)
            a, b = [], []
            for _ in range(repeat):
                a.append(run_isolated(with_plan).seconds)
                b.append(run_isolated(without).seconds)
            planned.append(statistics.median(a))
            alone.append(statistics.median(b))
            diffs.append(statistics.median(x - y for x, y in zip(a, b)))
    print(
        f"{set_name} {variant} rerank {rerank}: {len(chosen)} questions x {repeat}: planned median "
        f"{statistics.median(planned) * 1000:.0f} ms, question alone {statistics.median(alone) * 1000:.0f} ms; "
        f"added, median of the questions' medians {statistics.median(diffs) * 1000:.0f} ms "
        f"(min {min(diffs) * 1000:.0f}, max {max(diffs) * 1000:.0f})",
        flush=True,
    )


def stages(set_name: str, variant: str, n: int, repeat: int, rerank: str, given: dict[str, Path]) -> None:
    """Print, in process, the median time of a question's retrieval alone and with its plan, and of
    the planning step's parts: the first look (glance), the languages, the prompt, the call to the
    loopback server (the recorded reply: no model's time)."""
    import statistics

    import anthropic

    from rag.answer.plan import plan_search, planning_prompt
    from rag.retrieval.retrieve import glance, languages, retrieve
    from rag.store.reader import Index

    file, root = SETS[set_name]
    questions = load_questions(SHARED / file)
    chosen = questions[:: max(1, len(questions) // n)][:n]
    indexes = Indexes()
    index_name = "codesearch" if set_name == "natural" else set_name
    times: dict[str, list[float]] = {
        k: [] for k in ("question alone", "with the plan", "glance", "languages", "prompt", "call")
    }
    with ReplayApi(load_recordings([recordings_file(set_name, variant, given)])) as api:
        backend = AnthropicBackend(
            client=anthropic.Anthropic(base_url=api.url, api_key="offline", max_retries=0)
        )
        for _ in range(repeat):
            for q in chosen:
                indexes.get(set_name, root / str(q.corpus))
                path = INDEXES / f"{index_name}-{q.corpus}.idx"
                request = Request(q.question, 4, rerank=rerank)
                t = time.perf_counter()
                retrieve(path, request)
                times["question alone"].append(time.perf_counter() - t)

                def planner(seen: Any, question: str = q.question) -> tuple[str, ...]:
                    return plan_search(backend, planning_prompt(question, seen), "recorded").searches

                t = time.perf_counter()
                retrieve(path, request, planner)
                times["with the plan"].append(time.perf_counter() - t)
                with Index(path) as index:
                    t = time.perf_counter()
                    seen = glance(index, q.question)
                    times["glance"].append(time.perf_counter() - t)
                    t = time.perf_counter()
                    languages(index)
                    times["languages"].append(time.perf_counter() - t)
                    t = time.perf_counter()
                    prompt = planning_prompt(q.question, seen)
                    times["prompt"].append(time.perf_counter() - t)
                    t = time.perf_counter()
                    plan_search(backend, prompt, "recorded")
                    times["call"].append(time.perf_counter() - t)
    print(f"{set_name} {variant} rerank {rerank}, {len(chosen)} questions x {repeat}, in process:")
    for name, values in times.items():
        print(f"    {name:15} median {statistics.median(values) * 1000:6.1f} ms")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=DEFAULT_SETS, help=f"SET:VARIANT,... (default {DEFAULT_SETS})")
    ap.add_argument("--rerank", default="auto", choices=("auto", "semantic", "none"))
    ap.add_argument(
        "--recordings", action="append", default=[], metavar="SET:VARIANT=FILE", help="recorded outputs"
    )
    ap.add_argument("--json", type=Path, help="write every run's figures and per-question ranks here")
    ap.add_argument("--time", type=int, default=0, metavar="N", help="time N questions of each set instead")
    ap.add_argument("--repeat", type=int, default=5, help="with --time: runs of each question and mode")
    ap.add_argument(
        "--stages",
        type=int,
        default=0,
        metavar="N",
        help="time the planning step's parts on N questions, in process",
    )
    args = ap.parse_args(argv)
    given = {}
    for item in args.recordings:
        key, _, path = item.partition("=")
        given[key] = Path(path)
    if args.stages:
        for item in args.sets.split(","):
            set_name, _, variant = item.partition(":")
            stages(set_name, variant, args.stages, args.repeat, args.rerank, given)
        return
    if args.time:
        for item in args.sets.split(","):
            set_name, _, variant = item.partition(":")
            timing(set_name, variant, args.time, args.repeat, args.rerank, given)
        return
    runs = []
    for item in args.sets.split(","):
        set_name, _, variant = item.partition(":")
        r = run(set_name, variant or "question", args.rerank, given)
        runs.append(r)
        per = "  ".join(
            f"{LANGUAGE.get(c, c)} {h:.3f}/{mrr:.3f}" for c, (h, mrr) in sorted(r["per_corpus"].items())
        )
        per += "\n    " + "  ".join(
            f"{style} ({n}) {h:.3f}/{mrr:.3f}" for style, (h, mrr, n) in r["per_style"].items()
        )
        print(
            f"{set_name:8} {r['variant']:10} rerank {r['rerank']:8} hit@1 {r['hit_at_1']:.3f} hit@4 "
            f"{r['hit_at_4']:.3f} hit@10 {r['hit_at_10']:.3f} MRR@10 {r['mrr_at_10']:.3f} "
            f"top-4 {r['top4_chars']:,.0f} ch; plans {r['plans']}, unmatched {r['unmatched']}; "
            f"{r['seconds']:.0f} s\n    {per}",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))


if __name__ == "__main__":
    main()
