"""Docstring -> code retrieval with the paragraph chunker against the structure-aware chunkers.

    python bench/chunkers_eval.py [--corpora flask,django] [--set docstring|dev]

Builds a temporary index of every corpus twice, once with every file chunked by paragraphs
and once with rag.chunking.chunk_file, and scores both with rag.evaluation. Prints hit@1,
hit@4, MRR@10, mean top-4 passage size, chunk count and ingest seconds per corpus.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import CORPORA, SHARED, require_corpora, versions
from rag import Index, IngestOptions, ingest, search
from rag.chunking.text import chunk_text
from rag.evaluation import evaluate, load_questions


def paragraph_chunks(path: str, text: str, on_fallback: object = None) -> list:
    return [c._replace(ordinal=i) for i, c in enumerate(chunk_text(path, text))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default="")
    parser.add_argument("--set", choices=("docstring", "dev"), default="docstring")
    args = parser.parse_args()
    require_corpora()
    questions_file = SHARED / (
        "docstring-queries.jsonl" if args.set == "docstring" else "dev-questions.jsonl"
    )
    root = CORPORA / "docstring-stripped" if args.set == "docstring" else CORPORA
    questions = load_questions(questions_file)
    corpora = sorted({q.corpus for q in questions if q.corpus}, key=[q.corpus for q in questions].index)
    if args.corpora:
        corpora = [c for c in corpora if any(c.startswith(p) for p in args.corpora.split(","))]
    print(versions())
    print(f"{questions_file.name} on {root}\n")
    print(
        f"{'corpus':30} {'chunker':10} {'hit@1':>6} {'hit@4':>6} {'MRR@10':>7} {'top4 ch':>7} {'chunks':>7} {'ingest s':>8}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        totals: dict[str, list] = {}
        for corpus in corpora:
            qs = [q for q in questions if q.corpus == corpus]
            for name in ("paragraph", "structure"):
                index_path = Path(tmp) / f"{corpus}-{name}.sqlite"
                patch = (
                    mock.patch("rag.indexing.pipeline.chunk_file", paragraph_chunks)
                    if name == "paragraph"
                    else mock.patch.dict({})
                )
                with patch:
                    start = time.perf_counter()
                    report = ingest(root / corpus, index_path, options=IngestOptions(full=True))
                    seconds = time.perf_counter() - start
                with Index(index_path) as index:
                    paths = frozenset(index.files())
                    result = evaluate(qs, lambda q: search(index, q.question, 10), 4, indexed=lambda q: paths)
                m = result.overall
                totals.setdefault(name, []).extend(result.outcomes)
                print(
                    f"{corpus:30} {name:10} {m.hit_at_1:6.3f} {m.hit_at_4:6.3f} {m.mrr_at_10:7.3f} "
                    f"{m.mean_top4_chars:7.0f} {report.chunks:7d} {seconds:8.1f}"
                )
        from rag.evaluation import metrics

        for name, outcomes in totals.items():
            m = metrics(outcomes)
            print(
                f"{'overall':30} {name:10} {m.hit_at_1:6.3f} {m.hit_at_4:6.3f} {m.mrr_at_10:7.3f} {m.mean_top4_chars:7.0f}"
            )


if __name__ == "__main__":
    main()
