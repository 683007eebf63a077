"""How a model's search is combined with the question, on the shared recorded searches (in process,
lexical order): the question's terms weighted, a term in both counted once, and the definitions of the
identifiers the model named boosted. docs/benchmarks.md, "The planned search", has the figures.

    python bench/levers/plan_combination.py
    python bench/levers/plan_combination.py --semantic-text   # what the semantic stage compares with

Each row ranks every question of natural (generic, grounded) and dev (generic) with
rank_question(question, searches=[the recorded search]) under the lever, and prints hit@4 / MRR@10.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path[0] = str(Path(__file__).resolve().parents[2])

import rag.ranking.order as ranking  # noqa: E402
import rag.retrieval.search as search  # noqa: E402
from bench.common import SHARED  # noqa: E402
from bench.ranking import SETS, Indexes  # noqa: E402
from rag.evaluation import EVAL_DEPTH, evaluate, load_questions  # noqa: E402
from rag.retrieval.retrieve import rank_question  # noqa: E402

RUNS = (("natural", "generic"), ("natural", "grounded"), ("dev", "generic"))
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*(?:(?:::|\.|#|->)[A-Za-z_$][\w$]*)*")


def identifiers(text: str) -> list[str]:
    """The words of a search that look like code names: camelCase, snake_case, qualified."""
    out = []
    for word in _IDENTIFIER.findall(text):
        last = re.split(r"::|\.|#|->", word)[-1]
        if word != last or re.search(r"[a-z][A-Z]|_|^[A-Z][a-z]+[A-Z]", last):
            out.append(word)
    return list(dict.fromkeys(out))


def score(indexes: Indexes, patch: Callable[[], Callable[[], None]]) -> str:
    undo = patch()
    try:
        cells = []
        for set_name, variant in RUNS:
            file, root = SETS[set_name]
            recorded = {
                json.loads(line)["id"]: json.loads(line)["search"]
                for line in (SHARED / "searches" / f"{file.removesuffix('.jsonl')}.{variant}.jsonl")
                .read_text()
                .splitlines()
                if line.strip()
            }

            def ranked(q: Any, set_name: str = set_name, root: Path = root) -> list[Any]:
                NAMES[:] = identifiers(recorded[q.id])
                QUESTION[0], SEARCH[0] = q.question, recorded[q.id]
                index = indexes.get(set_name, root / str(q.corpus))
                return rank_question(index, q.question, EVAL_DEPTH, rerank="none", searches=[recorded[q.id]])[
                    0
                ]

            m = evaluate(load_questions(SHARED / file), ranked).overall
            cells.append(f"{m.hit_at_4:.3f} / {m.mrr_at_10:.3f}")
        return " | ".join(cells)
    finally:
        undo()


NAMES: list[str] = []


def weighted(question_weight: float, once: bool) -> Callable[[], Callable[[], None]]:
    """The question's terms at `question_weight` of the model's (the model's counts scaled by its
    inverse: BM25 scores are linear in the query's counts, so the order is the same); with `once`, a
    term in both counted once, at the larger count."""

    def patch() -> Callable[[], None]:
        original = search._query_counts

        def counts(index: Any, text: str, classes: Any) -> Any:
            found, stands_for = original(index, text, classes)
            if text != SEARCH[0]:
                return found, stands_for
            if once:
                asked = original(index, QUESTION[0], classes)[0]
                found = {t: max(n, asked.get(t, 0)) - asked.get(t, 0) for t, n in found.items()}
                found = {t: n for t, n in found.items() if n}
            return {t: n / question_weight for t, n in found.items()}, stands_for

        search._query_counts = counts
        return lambda: setattr(search, "_query_counts", original)

    return patch


QUESTION = [""]  # the question being ranked, and its recorded search, for the levers
SEARCH = [""]


def named_definitions(boost: float, decay: float) -> Callable[[], Callable[[], None]]:
    """The candidates that define an identifier the model named gain `boost` x the best score, times
    `decay` per place in the model's order."""

    def patch() -> Callable[[], None]:
        original = ranking.boost

        def boosted(
            hits: Any, shape: Any, demoted: Any, reasons: Any, weights: Any = ranking.DEFAULTS
        ) -> Any:
            out, why = original(hits, shape, demoted, reasons, weights)
            if not NAMES or not out:
                return out, why
            top = max(max(s, 0.0) ** weights.score_power for s in demoted)
            for place, name in enumerate(NAMES):
                names = tuple(dict.fromkeys((name, ranking._last_name(name))))
                for i, hit in enumerate(hits):
                    if ranking._defines(hit, names, weights):
                        out[i] += top * boost * decay**place
            return out, why

        ranking.boost = boosted
        return lambda: setattr(ranking, "boost", original)

    return patch


def semantic_text() -> None:
    """The semantic stage comparing the passages with the question and the searches (adopted), the
    question alone, or the searches alone: through bench/planned_search.py's whole answering path."""
    import rag.ranking.semantic as rerank
    from bench.planned_search import run

    original = rerank.safe_rerank
    for label in ("question and searches (adopted)", "the question alone", "the searches alone"):

        def compared(path: Any, text: str, hits: Any, want: int, weights: Any, label: str = label) -> Any:
            question, _, searches = text.partition("\n")
            chosen = {"the question alone": question, "the searches alone": searches or question}
            return original(path, chosen.get(label, text), hits, want, weights)

        rerank.safe_rerank = compared
        try:
            cells = []
            for item in (
                "natural:passages",
                "dev:passages",
                "natural:generic",
                "natural:grounded",
                "dev:generic",
            ):
                set_name, variant = item.split(":")
                r = run(set_name, variant, "semantic", {})
                cells.append(f"{item} {r['hit_at_4']:.3f} / {r['mrr_at_10']:.3f}")
            print(f"{label} | " + " | ".join(cells), flush=True)
        finally:
            rerank.safe_rerank = original


def main() -> None:
    if sys.argv[1:] == ["--semantic-text"]:
        semantic_text()
        return
    indexes = Indexes()
    rows = [
        ("one query, counts summed (adopted)", weighted(1.0, False)),
        ("the question's terms at half weight", weighted(0.5, False)),
        ("the question's terms at a quarter", weighted(0.25, False)),
        ("a term in both counted once (max)", weighted(1.0, True)),
        ("+ named definitions boosted 0.25, 0.8 a place", named_definitions(0.25, 0.8)),
        ("+ named definitions boosted 1.0, 0.8 a place", named_definitions(1.0, 0.8)),
    ]
    print("combination | " + " | ".join(f"{s} {v}" for s, v in RUNS))
    for label, patch in rows:
        print(f"{label} | {score(indexes, patch)}", flush=True)


if __name__ == "__main__":
    main()
