"""The ranking levers on all four sets at once, in process: codesearch (43 repositories, NDCG@10 as
../shared/codesearch/run scores it, per language and category), dev, docstring and natural (the plain
questions over eight codesearch repositories; hit@4, MRR@10), with the mean size of the top-4 passages
beside each.

    python bench/ranking.py                                   # the defaults
    python bench/ranking.py "off:definition_boost=0,path_mult=0" "power 1:score_power=1"
    python bench/ranking.py --semantic "0.5:LEXICAL_WEIGHT=0.5" "n20:DEPTH=20"   # the semantic stage

Each argument is LABEL:NAME=VALUE,... for that run (LABEL: alone runs the defaults). A NAME that is a
field of rag.weights.RankingWeights, in either case (`score_power`, `SCORE_POWER`, `semantic_depth`), or
one of the semantic stage's names of the records (DEPTH, FILE_COHERENCE, FILE_COHERENCE_REST,
FILE_COHERENCE_CODE), is passed in DEFAULTS._replace(...) to rank_question. PASSAGE_TOKENS, the model's
(it is part of its vectors' identity), is set on rag.semantic.model for the run and put back after it.
The indexes are built (or brought up to date) with this checkout's ingest in
${RAG_BENCH_INDEXES:-~/.cache/rag-bench-indexes}: the docstring set's on the doc-stripped corpora,
dev's on the originals, codesearch's on the extracted repositories (run ../shared/codesearch/run
once first to extract them). The metric is the runner's own (imported from it), so the figures
equal a full `../shared/codesearch/run`, which asks each question through a query.py process.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from importlib.machinery import SourceFileLoader
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path[0] = str(Path(__file__).resolve().parent.parent)

from bench.common import CORPORA, SHARED  # noqa: E402
from rag.evaluation import EVAL_DEPTH, evaluate, load_questions  # noqa: E402
from rag.indexing.pipeline import ingest  # noqa: E402
from rag.retrieval.retrieve import rank_question  # noqa: E402
from rag.semantic import model as semantic  # noqa: E402
from rag.store.reader import Index  # noqa: E402
from rag.weights import DEFAULTS, RankingWeights  # noqa: E402

CODESEARCH = SHARED.parent / "codesearch"
REPOS = Path(os.environ.get("RAG_CODESEARCH_CACHE", Path.home() / ".cache" / "rag-codesearch")) / "dev"
INDEXES = Path(os.environ.get("RAG_BENCH_INDEXES", Path.home() / ".cache" / "rag-bench-indexes"))
SETS = {
    "docstring": ("docstring-queries.jsonl", CORPORA / "docstring-stripped"),
    "dev": ("dev-questions.jsonl", CORPORA),
    "natural": ("natural-questions.jsonl", REPOS),  # plain questions over eight codesearch repositories
}


def runner() -> ModuleType:
    """The codesearch runner as a module, for its metric and aggregation."""
    return SourceFileLoader("codesearch_run", str(CODESEARCH / "run")).load_module()


class Indexes:
    """One open index per (set, corpus), built or brought up to date on first use."""

    def __init__(self) -> None:
        self.open: dict[tuple[str, str], Index] = {}

    def get(self, set_name: str, folder: Path) -> Index:
        set_name = "codesearch" if set_name == "natural" else set_name  # the same repositories
        key = (set_name, folder.name)
        if key not in self.open:
            path = INDEXES / f"{set_name}-{folder.name}.idx"
            ingest(folder, path)
            self.open[key] = Index(path)
        return self.open[key]


def _typed(old: object, value: str) -> object:
    """A lever's value from the command line, of the type of its default (a bool is 1 or 0)."""
    return value == "1" if isinstance(old, bool) else type(old)(float(value))


# the semantic stage's settings by the names docs/levers.md records them with
ALIASES = {
    "depth": "semantic_depth",
    "file_coherence": "semantic_coherence",
    "file_coherence_rest": "semantic_coherence_rest",
    "file_coherence_code": "semantic_coherence_code",
}


def weights_of(levers: dict[str, str]) -> tuple[RankingWeights, dict[str, str]]:
    """The weights for a run (DEFAULTS with the levers that name RankingWeights fields replaced), and
    the other levers: the model's."""
    changes = {}
    rest = {}
    for name, value in levers.items():
        field = ALIASES.get(name.lower(), name.lower())
        if field in RankingWeights._fields:
            changes[field] = _typed(RankingWeights._field_defaults[field], value)
        else:
            rest[name] = value
    return DEFAULTS._replace(**changes), rest


def apply(levers: dict[str, str]) -> dict[str, str]:
    """Set the model's settings (rag.semantic.model's PASSAGE_TOKENS); return the previous values, to
    put back with apply()."""
    before = {}
    for name, value in levers.items():
        if name != "PASSAGE_TOKENS":
            sys.exit(f"unknown lever {name}: not a field of rag.weights.RankingWeights nor PASSAGE_TOKENS")
        old = getattr(semantic, name)
        before[name] = str(old)
        setattr(semantic, name, _typed(old, value))
    return before


SAMPLE = 1  # --sample K: every K-th codesearch task and docstring question (dev is whole)
SEMANTIC = False  # --semantic: the semantic stage after the lexical ranking, as a query runs it


def ranked(index: Index, question: str, weights: RankingWeights) -> list[Any]:
    """The top EVAL_DEPTH for a question as a query ranks it: lexical, then (--semantic) reranked."""
    hits, note = rank_question(
        index, question, EVAL_DEPTH, rerank="semantic" if SEMANTIC else "none", weights=weights
    )
    if note is not None:  # the model failed: these figures would be the lexical order's
        sys.exit(note)
    return hits


def codesearch_tasks() -> list[dict[str, Any]]:
    """The code-search benchmark's tasks (query, repo, the lines that answer it), in its order."""
    return [
        json.loads(line) for line in (CODESEARCH / "tasks.jsonl").read_text().splitlines() if line.strip()
    ]


def repository_indexes() -> list[str]:
    """The index file of each extracted code-search repository, in name order, built or brought up
    to date with this checkout's ingest (the files Indexes.get opens)."""
    paths = []
    for folder in sorted(p for p in REPOS.iterdir() if p.is_dir() and not p.name.startswith(".")):
        path = INDEXES / f"codesearch-{folder.name}.idx"
        ingest(folder, path)
        paths.append(str(path))
    return paths


def codesearch(indexes: Indexes, run: ModuleType, weights: RankingWeights) -> dict[str, Any]:
    tasks = codesearch_tasks()
    rows, match_rows, sizes = [], [], []
    for t in tasks[::SAMPLE]:
        hits = ranked(indexes.get("codesearch", REPOS / t["repo"]), t["query"], weights)
        # scored on the lines a reader is shown (the context), and on the match lines alone
        results = [
            {"path": h.passage.path, "start_line": h.passage.start_line, "end_line": h.passage.end_line}
            for h in hits
        ]
        matches = [
            {"path": h.chunk.path, "start_line": h.chunk.start_line, "end_line": h.chunk.end_line}
            for h in hits
        ]
        rows.append({**t, **run.score_task(t, results)})
        match_rows.append({**t, **run.score_task(t, matches)})
        sizes.extend(len(h.passage.text) for h in hits[:4])
    scores = run.per_repo(rows, lambda r: r["ndcg10"])
    agg = run.aggregate(scores, sorted(scores))
    match_scores = run.per_repo(match_rows, lambda r: r["ndcg10"])
    agg["match"] = run.aggregate(match_scores, sorted(match_scores))["overall"]
    agg["top4_chars"] = sum(sizes) / len(sizes) if sizes else 0.0
    agg["rows"] = rows
    return agg


def qa_set(
    indexes: Indexes, set_name: str, weights: RankingWeights
) -> tuple[float, float, float, dict[str, int | None], dict[str, float], float, float]:
    file, root = SETS[set_name]
    questions = load_questions(SHARED / file)
    if set_name == "docstring":
        questions = questions[::SAMPLE]
    report = evaluate(
        questions, lambda q: ranked(indexes.get(set_name, root / str(q.corpus)), q.question, weights)
    )
    m = report.overall
    ranks = {o.question.id: o.rank for o in report.outcomes}
    per_corpus = {c: v.hit_at_4 for c, v in report.per_corpus.items()}
    return m.hit_at_4, m.mrr_at_10, m.mean_top4_chars, ranks, per_corpus, m.match_hit_at_4, m.match_mrr_at_10


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("configs", nargs="*", default=["defaults:"])
    ap.add_argument("--languages", action="store_true", help="print codesearch per language for each config")
    ap.add_argument("--out", type=Path, help="write each config's per-query codesearch rows here (JSON)")
    ap.add_argument(
        "--semantic",
        action="store_true",
        help="rerank with the semantic stage (its levers: DEPTH, LEXICAL_WEIGHT, PASSAGE_TOKENS; "
        "the model: RAG_SEMANTIC_MODEL); the vectors are cached beside each index",
    )
    ap.add_argument(
        "--sample",
        type=int,
        default=1,
        metavar="K",
        help="score every K-th codesearch task and docstring question only (dev whole)",
    )
    args = ap.parse_args(argv)
    global SAMPLE, SEMANTIC
    SEMANTIC, SAMPLE = args.semantic, args.sample
    run = runner()
    indexes = Indexes()
    t0 = time.perf_counter()
    for s in (
        "codesearch",
        "dev",
        "docstring",
        "natural",
    ):  # build or update every index before timing anything
        if s == "codesearch":
            for repo in sorted(
                {json.loads(x)["repo"] for x in (CODESEARCH / "tasks.jsonl").read_text().splitlines() if x}
            ):
                indexes.get(s, REPOS / repo)
        else:
            file, root = SETS[s]
            for corpus in sorted({q.corpus for q in load_questions(SHARED / file)}):
                indexes.get(s, root / str(corpus))
    print(f"indexes ready in {time.perf_counter() - t0:.0f} s", flush=True)
    dumps: dict[str, Any] = {}
    for config in args.configs:
        label, _, spec = config.partition(":")
        levers = dict(item.split("=", 1) for item in spec.split(",") if item)
        weights, semantic_levers = weights_of(levers)
        before = apply(semantic_levers)
        try:
            t0 = time.perf_counter()
            cs = codesearch(indexes, run, weights)
            dev = qa_set(indexes, "dev", weights)
            doc = qa_set(indexes, "docstring", weights)
            nat = qa_set(indexes, "natural", weights)
            cats = cs["by_category"]
            print(
                f"{label:28} codesearch {cs['overall']:.4f} (arch {cats['architecture']:.3f} sem {cats['semantic']:.3f} "
                f"sym {cats['symbol']:.3f}; {cs['top4_chars']:.0f} ch) | dev {dev[0]:.3f}/{dev[1]:.4f} ({dev[2]:.0f} ch) "
                f"| docstring {doc[0]:.3f}/{doc[1]:.4f} ({doc[2]:.0f} ch) "
                f"| natural {nat[0]:.3f}/{nat[1]:.4f} ({nat[2]:.0f} ch)  [{time.perf_counter() - t0:.0f} s]\n"
                f"{'  match lines alone':28} codesearch {cs['match']:.4f} | dev {dev[5]:.3f}/{dev[6]:.4f} "
                f"| docstring {doc[5]:.3f}/{doc[6]:.4f} | natural {nat[5]:.3f}/{nat[6]:.4f}",
                flush=True,
            )
            if args.languages:
                print(
                    "    " + " ".join(f"{lang} {v:.3f}" for lang, v in cs["by_language"].items()), flush=True
                )
                print("    natural hit@4: " + " ".join(f"{c} {v:.3f}" for c, v in nat[4].items()), flush=True)
            dumps[label] = {
                "codesearch": [
                    {"qid": r["qid"], "ndcg10": r["ndcg10"], "ranks": r["ranks"]} for r in cs["rows"]
                ],
                "dev": dev[3],
                "docstring": doc[3],
                "natural": nat[3],
            }
        finally:
            apply(before)
    if args.out:
        args.out.write_text(json.dumps(dumps))


if __name__ == "__main__":
    main()
