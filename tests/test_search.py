"""Ranking with known answers: the worked example, an independent oracle, and edge cases."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest
from conftest import WORKED_EXAMPLE, write_tree

from rag import Index, IngestOptions, TokenizerSettings, ingest, search
from rag.text.tokenizer import Tokenizer

PLAIN = TokenizerSettings(mode="plain")


def ranked(index: Index, question: str, k: int = 4) -> list[tuple[float, str, int]]:
    return [(round(h.score, 4), h.chunk.path, h.chunk.ordinal) for h in search(index, question, k)]


def oracle(
    docs: dict[str, str], question: str, tokenizer: Tokenizer, use_idf: bool = True
) -> dict[str, float]:
    """Cosine TF-IDF computed straight from the formulas, one document per file."""
    counts = {name: Counter(tokenizer.tokenize(text)) for name, text in docs.items()}
    n = len(docs)
    df = Counter(t for c in counts.values() for t in c)

    def idf(t: str) -> float:
        return math.log((1 + n) / (1 + df[t])) + 1 if use_idf else 1.0

    def vec(c: Counter[str]) -> dict[str, float]:
        v = {t: (1 + math.log(tf)) * idf(t) for t, tf in c.items() if t in df}
        norm = math.sqrt(sum(x * x for x in v.values()))
        return {t: x / norm for t, x in v.items()} if norm else {}

    q = vec(Counter(tokenizer.tokenize(question)))
    return {name: sum(w * vec(c).get(t, 0.0) for t, w in q.items()) for name, c in counts.items()}


def test_worked_example_exact_figures(worked_repo: Path) -> None:
    ingest(worked_repo, options=IngestOptions(settings=PLAIN))
    with Index(worked_repo / ".rag" / "index.sqlite") as index:
        assert ranked(index, "billing refunds", k=2) == [(0.3922, "refunds.txt", 0), (0.2472, "team.txt", 0)]
        assert search(index, "chargeback") == []


def test_idf_ranks_the_rare_word_above_the_repetitive_file(worked_repo: Path) -> None:
    # Without IDF (every weight 1.0) team.txt's three "billing"s would beat the rare "refunds";
    # the index weighs terms by IDF, so refunds.txt comes first.
    flat = oracle(WORKED_EXAMPLE, "billing refunds", Tokenizer(PLAIN), use_idf=False)
    assert (round(flat["team.txt"], 4), round(flat["refunds.txt"], 4)) == (0.5454, 0.4714)
    ingest(worked_repo, options=IngestOptions(settings=PLAIN))
    with Index(worked_repo / ".rag" / "index.sqlite") as index:
        assert [h.chunk.path for h in search(index, "billing refunds", k=2)] == ["refunds.txt", "team.txt"]


def test_scores_match_the_formula_oracle(worked_repo: Path) -> None:
    ingest(worked_repo, options=IngestOptions(settings=PLAIN))
    expected = oracle(WORKED_EXAMPLE, "billing team invoices renew", Tokenizer(PLAIN))
    with Index(worked_repo / ".rag" / "index.sqlite") as index:
        got = {h.chunk.path: h.score for h in search(index, "billing team invoices renew", k=4)}
    assert got.keys() == expected.keys()
    for name, score in expected.items():
        assert got[name] == pytest.approx(score, abs=1e-12)


def test_code_tokenizer_keeps_the_order_with_a_clear_margin(worked_repo: Path) -> None:
    ingest(worked_repo)
    with Index(worked_repo / ".rag" / "index.sqlite") as index:
        hits = search(index, "billing refunds", k=2)
    assert [h.chunk.path for h in hits] == ["refunds.txt", "team.txt"]
    assert hits[0].score > 1.5 * hits[1].score


def test_unknown_terms_drop_out(worked_repo: Path) -> None:
    ingest(worked_repo, options=IngestOptions(settings=PLAIN))
    with Index(worked_repo / ".rag" / "index.sqlite") as index:
        assert ranked(index, "billing refunds chargeback xyzzy", k=2) == ranked(index, "billing refunds", k=2)
        assert search(index, "the of and") == []  # stopwords only


def test_explain_contributions_sum_to_the_score(worked_repo: Path) -> None:
    ingest(worked_repo, options=IngestOptions(settings=PLAIN))
    with Index(worked_repo / ".rag" / "index.sqlite") as index:
        top = search(index, "billing refunds", k=1, explain=True)[0]
    assert [c.term for c in top.contributions] == ["refunds", "billing"]
    assert sum(c.score for c in top.contributions) == pytest.approx(top.score, abs=1e-12)
    assert top.contributions[0].idf == pytest.approx(math.log(5 / 2) + 1)


def test_identifier_question_finds_the_defining_file(tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "app",
        {
            "auth/tokens.py": 'def validate_token(token):\n    """Check a session token\'s signature."""\n'
            "    return verify_signature(token.payload, token.signature)\n",
            "auth/users.py": "def load_user(user_id):\n    return db.get(User, user_id)\n",
            "README.md": "# App\n\nUsers log in and get a session token that is checked on every request.\n",
        },
    )
    ingest(repo)
    with Index(repo / ".rag" / "index.sqlite") as index:
        hits = search(index, "validateToken signature", k=3)
    assert hits[0].chunk.path == "auth/tokens.py"
    assert hits[0].score > 2 * hits[1].score


def test_ties_break_by_file_order(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "r", {"b.txt": "alpha beta\n", "a.txt": "alpha gamma\n"})  # equal scores
    ingest(repo, options=IngestOptions(settings=PLAIN))
    with Index(repo / ".rag" / "index.sqlite") as index:
        assert [h.chunk.path for h in search(index, "alpha", k=2)] == ["a.txt", "b.txt"]


def test_k_below_one_is_rejected(worked_repo: Path) -> None:
    ingest(worked_repo)
    with Index(worked_repo / ".rag" / "index.sqlite") as index, pytest.raises(ValueError):
        search(index, "billing", k=0)
