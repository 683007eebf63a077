"""Extra rerank features on rag's own pipeline (default scoring, fields and rerank).

    python bench/levers/rerank_features.py --feature proximity --gamma 0.2 --window 2 [--pool 12]
    python bench/levers/rerank_features.py --feature coverage --gamma 1
    python bench/levers/rerank_features.py --feature docs-cap --cap 2 --gamma 0.5
    python bench/levers/rerank_features.py --feature file-cap --cap 1 --gamma 0.5

proximity: candidates whose text holds the question's words side by side move up. The question's content words (the query tokenizer, question words dropped) give the pairs of
neighbouring terms; a candidate's pairs are those of its indexed text within `window` tokens,
unordered. Each of the `pool` best-scored candidates is scored times (1 + gamma x the share of
the question's pairs it holds) before rag's own rerank. The eval runs search() with k = 10, so
the pool is at least 30 there, as `rag eval` does.

coverage: each candidate is scored times c ** gamma, c being the share of the question's
idf (BM25's, over the whole index) carried by the query terms the candidate holds.

docs-cap: after rag's rerank, at most `cap` docs sections stay in the first four passages: a
further one is replaced by the best code passage left that scores at least gamma times it.

file-cap: the same with files: at most `cap` passages of one file stay in the first four; a
further one is replaced by the best passage left from a file not yet at the cap that scores at
least gamma times it.

named: the question names code, as a call (`Response.json()`, `.brand()`), a dotted name
(`QuerySet.get_or_create`) or in backticks; each candidate whose symbol is that name, or ends in
its last part (`ZodType.brand` for `.brand()`), is scored times (1 + gamma).

Results go in docs/levers.md.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.common import CORPORA, SHARED, require_corpora
from rag.evaluation import EVAL_DEPTH, Indexes, evaluate, load_questions
from rag.text.terms import chunk_counts, indexed_text
from rag.text.tokenizer import QUERY_STOPWORDS
from rag.weights import DEFAULTS, bm25_idf


def pairs(terms: list[str], window: int) -> set[tuple[str, str]]:
    """Unordered pairs of distinct terms at most window - 1 positions apart."""
    out = set()
    for i, a in enumerate(terms):
        for b in terms[i + 1 : i + window]:
            if a != b:
                out.add((a, b) if a < b else (b, a))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--feature",
        choices=["proximity", "coverage", "docs-cap", "file-cap", "file-prior", "named"],
        default="proximity",
    )
    parser.add_argument("--cap", type=int, default=2)
    parser.add_argument("--gamma", type=float, required=True)
    parser.add_argument("--window", type=int, default=2)
    parser.add_argument("--pool", type=int, default=12)
    args = parser.parse_args()
    require_corpora()
    import importlib

    search_mod = importlib.import_module("rag.retrieval.search")
    rerank_mod = importlib.import_module("rag.ranking.order")
    weights = DEFAULTS._replace(min_candidates=args.pool)
    state: dict[str, Any] = {}
    original_search, original_rank_hits = search_mod.search, search_mod.rank_hits

    def search(index: Any, question: str, k: int = 4, **kw: Any) -> Any:
        state["index"], state["tokenizer"], state["question"] = index, index.tokenizer, question
        return original_search(index, question, k, weights=weights, **kw)

    def proximity(hits: list[Any]) -> list[Any]:
        tok = state["tokenizer"]
        words = " ".join(r for r in tok._finder(state["question"]) if r.lower() not in QUERY_STOPWORDS)
        wanted = pairs(tok.tokenize(words), 2)
        if not wanted:
            return hits
        return [
            h._replace(
                score=h.score
                * (
                    1
                    + args.gamma
                    * len(wanted & pairs(tok.tokenize(indexed_text(h.chunk)), args.window))
                    / len(wanted)
                )
            )
            for h in hits
        ]

    def coverage(hits: list[Any]) -> list[Any]:
        index, tok = state["index"], state["tokenizer"]
        n = index.view(frozenset()).n_chunks
        idf = {
            t: bm25_idf(n, len(found[0]))
            for t in tok.query_counts(state["question"])
            if (found := index.term(t)) is not None
        }
        total = sum(idf.values())
        if not total:
            return hits
        return [
            h._replace(
                score=h.score
                * (sum(v for t, v in idf.items() if t in chunk_counts(h.chunk, tok)) / total) ** args.gamma
            )
            for h in hits
        ]

    def file_prior(hits: list[Any]) -> list[Any]:
        best: dict[str, list[float]] = {}
        for h in hits[:12]:  # the 12 best-scored, whatever k is
            best.setdefault(h.chunk.path, []).append(h.score)
        out = []
        for h in hits:
            others = [x for x in best.get(h.chunk.path, []) if x != h.score] or [0.0]
            out.append(h._replace(score=h.score + args.gamma * max(others)))
        return out

    call = re.compile(r"([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\(\)")
    dotted = re.compile(r"(?<![\w.])([A-Za-z_$][\w$]+(?:\.[A-Za-z_$][\w$]+)+)")
    ticked = re.compile(r"`([^`\s]+)`")

    def named(hits: list[Any]) -> list[Any]:
        q = state["question"]
        names = {m.strip(".") for m in call.findall(q) + dotted.findall(q) + ticked.findall(q)}
        names = {n for n in names if n}
        if not names:
            return hits
        lasts = {n.rsplit(".", 1)[-1].rstrip("()") for n in names}

        def hit(h: Any) -> bool:
            sym = h.chunk.symbol or ""
            return bool(sym) and (sym in names or sym.rsplit(".", 1)[-1] in lasts)

        return [h._replace(score=h.score * (1 + args.gamma)) if hit(h) else h for h in hits]

    original_mix = rerank_mod._mix

    def group(h: Any) -> Any:  # what the cap counts: docs sections, or passages of a file
        return h.chunk.path if args.feature == "file-cap" else rerank_mod._is_doc(h)

    def capped(h: Any, counts: dict[Any, int]) -> bool:
        if args.feature == "file-cap":
            return counts.get(group(h), 0) >= args.cap
        return bool(group(h)) and counts.get(True, 0) >= args.cap

    def cap(top: list[Any], rest: list[Any], weights: Any) -> list[Any]:
        top = original_mix(top, rest, weights)
        pool, head, used, counts = top[4:] + rest, [], set(), {}
        for h in top[:4]:
            if capped(h, counts):
                other = next(
                    (
                        p
                        for p in pool
                        if not capped(p, counts) and id(p) not in used and p.score >= args.gamma * h.score
                    ),
                    None,
                )
                if other is not None:
                    used.add(id(other))
                    head.append(other)
                    counts[group(other)] = counts.get(group(other), 0) + 1
                    continue
            counts[group(h)] = counts.get(group(h), 0) + 1
            head.append(h)
        return (head + [h for h in top if h not in head])[: len(top)]

    def rank_hits(hits: list[Any], k: int, **kw: Any) -> Any:
        if args.gamma and args.feature not in ("docs-cap", "file-cap"):
            feature = {
                "proximity": proximity,
                "coverage": coverage,
                "file-prior": file_prior,
                "named": named,
            }[args.feature]
            hits = sorted(feature(hits), key=lambda h: -h.score)
        return original_rank_hits(hits, k, **kw)

    if args.feature in ("docs-cap", "file-cap"):
        rerank_mod._mix = cap

    search_mod.rank_hits = rank_hits
    for name, root in (("docstring", CORPORA / "docstring-stripped"), ("dev", CORPORA)):
        questions = load_questions(
            SHARED / f"{name}-queries.jsonl" if name == "docstring" else SHARED / "dev-questions.jsonl"
        )
        with Indexes(None, root, False, None) as indexes:
            report = evaluate(
                questions,
                lambda q: search(indexes.get(q)[0], q.question, EVAL_DEPTH),
                4,
                indexed=lambda q: indexes.get(q)[1],
            )
        m = report.overall
        print(
            f"{name}: {args.feature} gamma {args.gamma} window {args.window} pool {args.pool} cap {args.cap}: hit@4 {m.hit_at_4:.3f}"
            f" MRR@10 {m.mrr_at_10:.3f} top-4 chars {m.mean_top4_chars:,.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
