"""Dump every result list of the three evaluation sets, so two versions of the code can be diffed.

Each question is asked through the CLI, in-process (`query --index IDX --json --no-llm -k 10`), so
what is compared is exactly what a user (and the benchmark runner) reads: paths, lines, symbols and
scores of the top 10. Indexes are built with this checkout's own ingest into OUT/indexes/, one per
corpus; a refactor that must not change behaviour is checked by running this before and after it and
diffing the two files:

    python bench/result_lists.py --out /tmp/before      # on the old commit
    python bench/result_lists.py --out /tmp/after       # on the new one
    cmp /tmp/before/lists.jsonl /tmp/after/lists.jsonl

Sets: docstring (the doc-stripped corpora), dev (the original corpora), codesearch (the 43 repositories
of ../shared/codesearch, extracted by its runner into ${RAG_CODESEARCH_CACHE:-~/.cache/rag-codesearch}/dev)
and natural (the plain questions of natural-questions.jsonl, over eight of those repositories).
Usage: python bench/result_lists.py --out DIR [--sets docstring,dev,codesearch,natural] [--rerank none]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)

from click.testing import CliRunner  # noqa: E402

from bench.common import CORPORA, SHARED  # noqa: E402
from rag.cli import main  # noqa: E402

CODESEARCH = Path(os.environ.get("RAG_CODESEARCH_CACHE", Path.home() / ".cache" / "rag-codesearch")) / "dev"
TASKS = SHARED.parent / "codesearch" / "tasks.jsonl"


def questions(set_name: str) -> list[tuple[str, str, Path]]:
    """(id, question, corpus folder) for every question of a set."""
    if set_name == "codesearch":
        rows = [json.loads(line) for line in TASKS.read_text(encoding="utf-8").splitlines() if line.strip()]
        return [(r["qid"], r["query"], CODESEARCH / r["repo"]) for r in rows]
    file, root = {
        "docstring": ("docstring-queries.jsonl", CORPORA / "docstring-stripped"),
        "dev": ("dev-questions.jsonl", CORPORA),
        "natural": ("natural-questions.jsonl", CODESEARCH),
    }[set_name]
    rows = [
        json.loads(line) for line in (SHARED / file).read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    return [(r["id"], r["question"], root / r["corpus"]) for r in rows]


def run(args: list[str]) -> str:
    """One CLI invocation in-process; its stdout, or an exit with its output on failure."""
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    if result.exit_code != 0:
        sys.exit(f"rag {' '.join(args)} failed ({result.exit_code}): {result.output}")
    return result.stdout


def main_(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--sets", default="docstring,dev,codesearch,natural")
    ap.add_argument("--rerank", default="auto", choices=["auto", "semantic", "none"])
    args = ap.parse_args(argv)
    (args.out / "indexes").mkdir(parents=True, exist_ok=True)
    with (args.out / "lists.jsonl").open("w", encoding="utf-8") as out:
        for set_name in args.sets.split(","):
            built: dict[Path, Path] = {}
            for qid, question, folder in questions(set_name):
                if folder not in built:
                    index = args.out / "indexes" / f"{set_name}-{folder.name}.idx"
                    run(["ingest", str(folder), "--index", str(index)])
                    built[folder] = index
                stdout = run(
                    [
                        "query",
                        "--index",
                        str(built[folder]),
                        "--json",
                        "--no-llm",
                        "-k",
                        "10",
                        "--rerank",
                        args.rerank,
                    ]
                    + [question]
                )
                results = json.loads(stdout)["results"]
                keep = [
                    {k: r[k] for k in ("path", "start_line", "end_line", "symbol", "score")} for r in results
                ]
                out.write(json.dumps({"set": set_name, "id": qid, "results": keep}, sort_keys=True) + "\n")
            print(f"{set_name}: {len(built)} corpora", flush=True)


if __name__ == "__main__":
    main_()
