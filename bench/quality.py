"""Retrieval quality on the shared eval sets: our index next to public reference methods on the same chunks.

For each set (docstring: the doc-stripped corpora; dev: the original corpora) and corpus,
the corpus index is built or brought up to date with rag's own ingest, and then three
methods rank the SAME chunks, read out of that index, with the SAME tokens (the terms our
tokenizer stored for each chunk, and our tokenizer on the question):

  rag          rag.retrieval.search, the default: BM25 (k1=4, b=0.9) with rag's fields and rerank (what
               `rag eval` measures)
  rag-tfidf    rag.retrieval.search(scoring="tfidf"): cosine of sublinear tf-idf vectors, same index
  sklearn      TfidfVectorizer(sublinear_tf=True, smooth_idf=True), cosine; also an oracle:
               its scores must equal ours to 1e-9 (asserted, max difference printed)
  bm25s        bm25s.BM25() defaults (lucene, k1=1.5, b=0.75)

and two more references as their libraries ship them, on the same chunks' text (no path or
symbol fields) and the question as typed, each with its own tokenizer:

  sklearn-own  TfidfVectorizer() defaults: lowercased words of 2+ word characters, raw tf, smooth idf, cosine
  bm25s-own    bm25s.tokenize() defaults (the same words, English stopwords, no stemmer), BM25()

The first two references isolate the scoring (they get every gain of our chunks and tokens);
the last two measure the tool against the methods as people run them.

Scoring is rag.evaluation's (one implementation for `rag eval` and this script).

Usage: python bench/quality.py [--sets docstring,dev] [--corpora flask,django] [--out results.json] [--full]
Needs the bench extra: pip install -e '.[bench]'. Corpora in ${RAG_CORPORA:-~/.cache/rag-corpora}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

# The script's own folder comes first on sys.path, and bench/secrets.py would shadow the standard
# library's `secrets` (numpy imports it): put the repository root there instead.
sys.path[0] = str(Path(__file__).resolve().parent.parent)

import bm25s  # noqa: E402
import numpy as np  # noqa: E402
import scipy  # noqa: E402
import sklearn  # noqa: E402
from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: E402

from rag.chunking import Chunk  # noqa: E402
from rag.evaluation import (  # noqa: E402
    EVAL_DEPTH,
    MAX_PASSAGE_CHARS,
    EvalReport,
    Metrics,
    Question,
    QuestionOutcome,
    corpus_index,
    evaluate,
    load_questions,
    metrics,
    report_dict,
)
from rag.ranking.hits import Hit  # noqa: E402
from rag.retrieval.search import query_counts, search  # noqa: E402
from rag.store.reader import Index  # noqa: E402
from rag.text.terms import chunk_counts  # noqa: E402
from rag.text.tokenizer import Tokenizer  # noqa: E402

CORPORA = Path(os.environ.get("RAG_CORPORA", Path.home() / ".cache" / "rag-corpora"))
EVAL_DIR = Path(__file__).resolve().parents[2] / "shared" / "eval"
SETS = {  # name -> (questions file, corpus root)
    "docstring": ("docstring-queries.jsonl", CORPORA / "docstring-stripped"),
    "dev": ("dev-questions.jsonl", CORPORA),
}
METHODS = ("rag", "rag-tfidf", "sklearn", "bm25s", "sklearn-own", "bm25s-own")
TOLERANCE = 1e-9
TOKEN_SAMPLE = 300  # chunks per corpus re-tokenized to check the stored terms are our tokenizer's


@dataclass(frozen=True, slots=True)
class CorpusRun:
    """What one corpus contributed to a set: outcomes by method, index facts, cross-check, timings."""

    corpus: str
    outcomes: dict[str, tuple[QuestionOutcome, ...]]
    files: int
    chunks: int
    mean_chunk_chars: float
    max_score_diff: float
    scores_compared: int
    top10_same: int  # questions whose top-10 chunk ids are identical in rag and sklearn
    seconds: dict[str, float]


def _identity(tokens: list[str]) -> list[str]:
    return tokens


def load_chunks(index: Index) -> tuple[list[Chunk], list[list[str]]]:
    """Read every chunk of the index, in id order, with its stored terms expanded to a token list."""
    chunks: list[Chunk] = []
    tokens = []
    for _, chunk, counts in index.all_chunks():
        chunks.append(chunk)
        tokens.append([t for t, tf in counts.items() for _ in range(tf)])
    return chunks, tokens


def check_tokens(chunks: Sequence[Chunk], tokens: Sequence[list[str]], tokenizer: Tokenizer) -> None:
    """Assert that a sample of stored terms is exactly what our tokenizer makes of the chunk."""
    rng = random.Random(0)
    for cid in rng.sample(range(len(chunks)), min(TOKEN_SAMPLE, len(chunks))):
        expected = chunk_counts(chunks[cid], tokenizer)
        got: dict[str, int] = {}
        for t in tokens[cid]:
            got[t] = got.get(t, 0) + 1
        assert got == expected, f"stored terms of chunk {cid} ({chunks[cid].path}) are not the tokenizer's"


def top_ids(scores: np.ndarray, k: int = EVAL_DEPTH) -> np.ndarray:
    """Return the ids of the k best positive scores, ties broken by id (as rag.retrieval.search does)."""
    cand = np.flatnonzero(scores > 0)
    return cand[np.lexsort((cand, -scores[cand]))][:k]


def run_corpus(corpus: str, root: Path, questions: list[Question], full: bool) -> CorpusRun:
    """Index one corpus with rag, then rank its questions with each method on the same chunks and tokens."""
    report = corpus_index(root / corpus, full)
    seconds: dict[str, float] = {"ingest": report.seconds}
    with Index(report.index_path) as index:
        t0 = time.perf_counter()
        chunks, tokens = load_chunks(index)
        seconds["read chunks"] = time.perf_counter() - t0
        tokenizer = Tokenizer(index.manifest.tokenizer)
        check_tokens(chunks, tokens, tokenizer)
        paths = frozenset(index.files())
        ids = {(c.path, c.ordinal): i for i, c in enumerate(chunks)}
        # the query side as rag.retrieval.search sees it (query stopwords dropped, defined acronyms added)
        qtokens = {
            q.id: [t for t, n in query_counts(index, q.question).items() for _ in range(n)] for q in questions
        }

        t0 = time.perf_counter()
        tfidf = TfidfVectorizer(sublinear_tf=True, smooth_idf=True, analyzer=_identity, lowercase=False)
        matrix = tfidf.fit_transform(tokens)
        seconds["sklearn fit"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        bm25 = bm25s.BM25(k1=1.5, b=0.75)
        bm25.index(tokens, show_progress=False)
        seconds["bm25s index"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        texts = [c.text for c in chunks]
        own_tfidf = TfidfVectorizer()
        own_matrix = own_tfidf.fit_transform(texts)
        own_bm25 = bm25s.BM25()
        own_bm25.index(bm25s.tokenize(texts, show_progress=False), show_progress=False)
        seconds["own references"] = time.perf_counter() - t0

        sk_scores: dict[str, np.ndarray] = {}

        def sklearn_scores(q: Question) -> np.ndarray:
            if q.id not in sk_scores:
                sk_scores[q.id] = (matrix @ tfidf.transform([qtokens[q.id]]).T).toarray().ravel()
            return sk_scores[q.id]

        def hits(scores: np.ndarray) -> list[Hit]:
            return [Hit(float(scores[i]), chunks[i]) for i in top_ids(scores)]

        def bm25_hits(q: Question) -> list[Hit]:
            known = [t for t in qtokens[q.id] if t in bm25.vocab_dict]
            return hits(bm25.get_scores(known)) if known else []

        def own_bm25_hits(q: Question) -> list[Hit]:
            words = bm25s.tokenize(q.question, return_ids=False, show_progress=False)[0]
            known = [t for t in words if t in own_bm25.vocab_dict]
            return hits(own_bm25.get_scores(known)) if known else []

        retrievers: dict[str, Callable[[Question], Sequence[Hit]]] = {
            "rag": lambda q: search(index, q.question, EVAL_DEPTH),
            "rag-tfidf": lambda q: search(index, q.question, EVAL_DEPTH, scoring="tfidf"),
            "sklearn": lambda q: hits(sklearn_scores(q)),
            "bm25s": bm25_hits,
            "sklearn-own": lambda q: hits(
                (own_matrix @ own_tfidf.transform([q.question]).T).toarray().ravel()
            ),
            "bm25s-own": own_bm25_hits,
        }
        outcomes: dict[str, tuple[QuestionOutcome, ...]] = {}
        for method, retrieve in retrievers.items():
            t0 = time.perf_counter()
            outcomes[method] = evaluate(questions, retrieve, indexed=lambda q: paths).outcomes
            seconds[f"{method} queries"] = time.perf_counter() - t0

        # the oracle: with the same tokens, our cosine scores are sklearn's
        max_diff, compared, same = 0.0, 0, 0
        for ours, theirs in zip(outcomes["rag-tfidf"], outcomes["sklearn"]):
            scores = sklearn_scores(ours.question)
            for hit in ours.hits:
                theirs_score = float(scores[ids[hit.chunk.path, hit.chunk.ordinal]])
                max_diff = max(max_diff, abs(hit.score - theirs_score))
                compared += 1
            same += [(h.chunk.path, h.chunk.ordinal) for h in ours.hits] == [
                (h.chunk.path, h.chunk.ordinal) for h in theirs.hits
            ]
        assert max_diff <= TOLERANCE, f"{corpus}: rag and sklearn scores differ by {max_diff:.3g}"
        mean_chars = sum(len(c.text) for c in chunks) / len(chunks) if chunks else 0.0
        return CorpusRun(
            corpus,
            outcomes,
            index.manifest.n_files,
            len(chunks),
            mean_chars,
            max_diff,
            compared,
            same,
            seconds,
        )


def combine(runs: Sequence[CorpusRun], method: str) -> EvalReport:
    """Pool one method's outcomes over the corpora of a set."""
    per = {r.corpus: metrics(r.outcomes[method]) for r in runs}
    pooled = tuple(o for r in runs for o in r.outcomes[method])
    return EvalReport(metrics(pooled), per, pooled)


def format_set(name: str, runs: Sequence[CorpusRun], reports: dict[str, EvalReport]) -> str:
    """Return one set's table: corpus x method rows of hit@k, MRR@10 and top-4 passage size."""
    width = max(len("corpus"), len("overall"), *(len(r.corpus) for r in runs))
    head = f"{'corpus':<{width}}  {'method':<11} questions  hit@1  hit@4  hit@10  MRR@10  top-4 chars"

    def row(label: str, method: str, m: Metrics) -> str:
        flag = " !" if m.mean_top4_chars > MAX_PASSAGE_CHARS else ""
        return (
            f"{label:<{width}}  {method:<11} {m.questions:>9}  {m.hit_at_1:.3f}  {m.hit_at_4:.3f}"
            f"  {m.hit_at_10:>6.3f}  {m.mrr_at_10:>6.3f}  {m.mean_top4_chars:>11,.0f}{flag}"
        )

    lines = [head]
    for r in runs:
        for i, method in enumerate(METHODS):
            lines.append(row(r.corpus if i == 0 else "", method, reports[method].per_corpus[r.corpus]))
    lines.append("-" * len(head))
    for i, method in enumerate(METHODS):
        lines.append(row("overall" if i == 0 else "", method, reports[method].overall))
    return "\n".join(lines)


def versions() -> dict[str, str]:
    """Return the exact versions of everything that produced the figures."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "bm25s": version("bm25s"),
        "rag-code": version("rag-code") if _installed("rag-code") else "source tree",
    }


def _installed(dist: str) -> bool:
    try:
        version(dist)
    except Exception:
        return False
    return True


def pick(names: list[str], wanted: list[str]) -> list[str]:
    """Keep the corpora matching a filter entry exactly or by name prefix (`flask` -> flask-3.1.3)."""
    if not wanted:
        return names
    return [n for n in names if any(n.startswith(w) for w in wanted)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="docstring,dev", help="comma-separated: docstring,dev")
    ap.add_argument("--corpora", default="", help="comma-separated corpus names or prefixes (default: all)")
    ap.add_argument(
        "--eval-dir", type=Path, default=EVAL_DIR, help=f"folder of the question files ({EVAL_DIR})"
    )
    ap.add_argument("--out", type=Path, help="also write the results as JSON to this file")
    ap.add_argument("--full", action="store_true", help="rebuild the corpus indexes from scratch")
    args = ap.parse_args()
    sets = [s for s in args.sets.split(",") if s]
    unknown = [s for s in sets if s not in SETS]
    if unknown:
        ap.error(f"unknown set {unknown[0]!r}; choose from {', '.join(SETS)}")
    wanted = [c for c in args.corpora.split(",") if c]

    env = versions()
    print("versions: " + ", ".join(f"{k} {v}" for k, v in env.items()))
    print(
        "methods: rag = rag.retrieval.search (default: BM25, k1=4, b=0.9); rag-tfidf = rag.retrieval.search(scoring='tfidf') (cosine);\n"
        "         sklearn = TfidfVectorizer(sublinear_tf=True, "
        "smooth_idf=True, analyzer=<our tokens>);\n         bm25s = BM25(k1=1.5, b=0.75, method='lucene'), "
        "same tokens;\n"
        "         sklearn-own = TfidfVectorizer() defaults, bm25s-own = bm25s.tokenize() defaults + BM25(),\n"
        "         both on the chunks' text and the question as typed"
    )
    print(
        f"top-4 chars: mean characters of the top-4 passages (budget {MAX_PASSAGE_CHARS:,}; ! marks over)\n"
    )
    results: dict[str, object] = {"versions": env, "sets": {}}
    for name in sets:
        filename, root = SETS[name]
        qpath = args.eval_dir / filename
        questions = load_questions(qpath)
        corpora = pick(list(dict.fromkeys(q.corpus for q in questions if q.corpus)), wanted)
        if not corpora:
            print(f"{name}: no corpus matches --corpora {args.corpora}\n")
            continue
        started = time.perf_counter()
        runs = []
        for corpus in corpora:
            runs.append(run_corpus(corpus, root, [q for q in questions if q.corpus == corpus], args.full))
        reports = {m: combine(runs, m) for m in METHODS}
        n = sum(len(r.outcomes["rag"]) for r in runs)
        print(
            f"== {name} set: {n} questions from {qpath}, corpora in {root} "
            f"({time.perf_counter() - started:.0f} s)"
        )
        print(format_set(name, runs, reports))
        diff = max(r.max_score_diff for r in runs)
        compared = sum(r.scores_compared for r in runs)
        same = sum(r.top10_same for r in runs)
        print(
            f"tf-idf oracle: max |rag-tfidf - sklearn| score = {diff:.3g} over {compared:,} scores "
            f"(tolerance {TOLERANCE:g}); identical top-10 lists for {same}/{n} questions"
        )
        print(
            "index: "
            + "; ".join(
                f"{r.corpus} {r.files:,} files, {r.chunks:,} chunks of {r.mean_chunk_chars:,.0f} chars"
                for r in runs
            )
        )
        print(
            "seconds: "
            + "; ".join(
                f"{r.corpus} " + ", ".join(f"{k} {v:.1f}" for k, v in r.seconds.items()) for r in runs
            )
            + "\n"
        )
        results["sets"][name] = {  # type: ignore[index]
            "questions_file": str(qpath),
            "corpus_root": str(root),
            "methods": {m: report_dict(reports[m]) for m in METHODS},
            "oracle": {
                "max_abs_diff": diff,
                "scores_compared": compared,
                "identical_top10": same,
                "questions": n,
            },
            "corpora": {
                r.corpus: {
                    "files": r.files,
                    "chunks": r.chunks,
                    "mean_chunk_chars": r.mean_chunk_chars,
                    "max_abs_diff": r.max_score_diff,
                    "identical_top10": r.top10_same,
                    "seconds": r.seconds,
                }
                for r in runs
            },
        }
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
