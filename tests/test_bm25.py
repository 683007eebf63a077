"""BM25 scoring (`--scoring bm25`): the formula checked by an oracle, and known rankings."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import WORKED_EXAMPLE, write_tree

from rag import Index, IngestOptions, TokenizerSettings, ingest, search
from rag.cli import main
from rag.text.tokenizer import Tokenizer
from rag.weights import BM25_B, BM25_K1

PLAIN = TokenizerSettings(mode="plain")


def bm25_oracle(docs: dict[str, str], question: str, tokenizer: Tokenizer) -> dict[str, float]:
    """Lucene's BM25 straight from the formulas, one document per file, a query term per occurrence."""
    counts = {name: Counter(tokenizer.tokenize(text)) for name, text in docs.items()}
    n = len(docs)
    df = Counter(t for c in counts.values() for t in c)
    avgdl = sum(sum(c.values()) for c in counts.values()) / n
    out = {}
    for name, c in counts.items():
        dl = sum(c.values())
        score = 0.0
        for t, qtf in Counter(tokenizer.tokenize(question)).items():
            if c[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += (
                    qtf * idf * c[t] * (BM25_K1 + 1) / (c[t] + BM25_K1 * (1 - BM25_B + BM25_B * dl / avgdl))
                )
        out[name] = score
    return out


@pytest.mark.parametrize(
    "question", ["billing refunds", "billing billing team", "original card", "plans renew"]
)
def test_scores_equal_the_formula(worked_repo: Path, question: str) -> None:
    ingest(worked_repo, options=IngestOptions(settings=PLAIN))
    with Index(worked_repo / ".rag" / "index.sqlite") as index:
        hits = search(index, question, k=4, scoring="bm25")
    want = {p: s for p, s in bm25_oracle(WORKED_EXAMPLE, question, Tokenizer(PLAIN)).items() if s > 0}
    assert {h.chunk.path: h.score for h in hits} == pytest.approx(want, abs=1e-12)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_worked_example_known_figures(worked_repo: Path) -> None:
    ingest(worked_repo, options=IngestOptions(settings=PLAIN))
    with Index(worked_repo / ".rag" / "index.sqlite") as index:
        hits = search(index, "billing refunds", k=4, scoring="bm25")
    # refunds.txt holds the one rare word: it wins by far, although team.txt says "billing" thrice
    assert [(h.chunk.path, round(h.score, 4)) for h in hits] == [
        ("refunds.txt", 0.9627),
        ("team.txt", 0.2258),
        ("invoices.txt", 0.1386),
        ("plans.txt", 0.1197),
    ]
    assert hits[0].score > 4 * hits[1].score


def test_saturation_and_length(tmp_path: Path) -> None:
    """A term said often in a long passage does not beat a short passage that is about it."""
    repo = write_tree(
        tmp_path / "r",
        {
            "pool.txt": "The connection pool keeps idle connections open.\n",
            "log.txt": " ".join(
                ["connection"] * 12 + ["retry", "timeout", "socket", "backoff", "request"] * 40
            )
            + "\n",
            "other.txt": "Templates render pages.\n",
        },
    )
    ingest(repo, options=IngestOptions(settings=PLAIN))
    with Index(repo / ".rag" / "index.sqlite") as index:
        hits = search(index, "connection pool", k=3, scoring="bm25")
        assert [h.chunk.path for h in hits] == ["pool.txt", "log.txt"]
        assert hits[0].score > 2.5 * hits[1].score
        assert search(index, "chargeback", scoring="bm25") == []  # unknown words drop out


def test_explain_contributions_sum_to_the_score(worked_repo: Path) -> None:
    ingest(worked_repo, options=IngestOptions(settings=PLAIN))
    with Index(worked_repo / ".rag" / "index.sqlite") as index:
        top = search(index, "billing refunds refunds", k=1, explain=True, scoring="bm25")[0]
    assert top.chunk.path == "refunds.txt"
    assert [c.term for c in top.contributions] == ["refunds", "billing"]
    assert sum(c.score for c in top.contributions) == pytest.approx(top.score, abs=1e-12)
    refunds = top.contributions[0]
    assert refunds.score == pytest.approx(2 * refunds.weight)  # said twice in the question
    assert refunds.idf == pytest.approx(math.log(1 + 3.5 / 1.5))


def test_unknown_scoring_is_refused(worked_repo: Path) -> None:
    ingest(worked_repo, options=IngestOptions(settings=PLAIN))
    with (
        Index(worked_repo / ".rag" / "index.sqlite") as index,
        pytest.raises(ValueError, match="tfidf, bm25"),
    ):
        search(index, "billing", scoring="bm26")


def test_query_and_eval_take_scoring(worked_repo: Path, tmp_path: Path, monkeypatch) -> None:
    runner = CliRunner()
    ingest(worked_repo, options=IngestOptions(settings=PLAIN))
    index = str(worked_repo / ".rag" / "index.sqlite")
    args = ["query", "--json", "--no-llm", "--index", index, "billing refunds"]
    bm25 = json.loads(runner.invoke(main, [*args, "--scoring", "bm25"]).stdout)["results"]
    tfidf = json.loads(runner.invoke(main, args).stdout)["results"]
    assert round(bm25[0]["score"], 4) == 0.9627 and round(tfidf[0]["score"], 4) == 0.3922
    monkeypatch.setenv("RAG_SCORING", "bm25")
    assert json.loads(runner.invoke(main, args).stdout)["results"] == bm25
    bad = runner.invoke(main, [*args, "--scoring", "bm26"])
    assert bad.exit_code == 2 and "'bm26' is not one of 'auto', 'tfidf', 'bm25'" in bad.output
    questions = tmp_path / "q.jsonl"  # a miss: its listing shows the scores of the chosen scoring
    questions.write_text(
        json.dumps(
            {
                "id": "q",
                "question": "billing",
                "answers": [{"path": "plans.txt", "start_line": 1, "end_line": 1}],
            }
        )
        + "\n"
    )
    for scoring, top in (("tfidf", 0.5344), ("bm25", 0.2258)):
        result = runner.invoke(
            main,
            ["eval", str(questions), "--index", index, "--json", "--misses", "-k", "1", "--scoring", scoring],
        )
        (miss,) = json.loads(result.output)["misses"]
        assert (miss["results"][0]["path"], round(miss["results"][0]["score"], 4)) == ("team.txt", top)


def test_auto_is_bm25_except_on_plain_indexes(worked_repo: Path, tmp_path: Path) -> None:
    """The default: BM25 (better on both eval sets), but `--tokenizer plain` keeps cosine TF-IDF."""
    plain, code = tmp_path / "plain.sqlite", tmp_path / "code.sqlite"
    ingest(worked_repo, plain, IngestOptions(settings=PLAIN))
    ingest(worked_repo, code)

    def scores(path: Path, scoring: str) -> list[tuple[str, float]]:
        with Index(path) as index:
            return [
                (h.chunk.path, h.score) for h in search(index, "billing team refunds", 4, scoring=scoring)
            ]

    assert scores(plain, "auto") == scores(plain, "tfidf") != scores(plain, "bm25")
    assert scores(code, "auto") == scores(code, "bm25") != scores(code, "tfidf")
