"""`rag eval` through click's CliRunner: a small repository with known answers, exact output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write_tree

from rag import ingest
from rag.cli import main

FILES = {
    "refunds.txt": "Refunds return to the original card after billing approves them.\n",
    "invoices.txt": "Invoices arrive monthly by email.\n",
    "passwords.txt": "Passwords get hashed with bcrypt before storage.\n",
}
REFUNDS, INVOICES, PASSWORDS = (len(text) - 1 for text in FILES.values())  # passages drop the newline


def q(qid: str, text: str, path: str, corpus: str | None = None) -> str:
    row: dict[str, object] = {
        "id": qid,
        "question": text,
        "answers": [{"path": path, "start_line": 1, "end_line": 1}],
    }
    if corpus:
        row["corpus"] = corpus
    return json.dumps(row)


QUESTIONS = [
    q("q1", "refunds to the original card", "refunds.txt", "billing"),
    q("q2", "monthly invoices by email", "invoices.txt", "billing"),
    q("q3", "bcrypt hashing", "invoices.txt", "auth"),  # mislabelled: a miss, with passwords.txt instead
    q("q4", "where are tokens stored", "tokens.txt", "auth"),  # not in the index: a labelling error
]


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    """A three-file repository, its index, and a questions file; return (questions, index)."""
    repo = write_tree(tmp_path / "repo", FILES)
    index = tmp_path / "index.sqlite"
    ingest(repo, index)
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(QUESTIONS) + "\n")
    return questions, index


def test_eval_table(runner: CliRunner, setup: tuple[Path, Path]) -> None:
    questions, index = setup
    result = runner.invoke(main, ["eval", str(questions), "--index", str(index)])
    assert result.exit_code == 0, result.output
    billing = (REFUNDS + INVOICES) / 2
    overall = (REFUNDS + INVOICES + PASSWORDS) / 3
    assert (
        result.stdout
        == "\n".join(
            [
                "corpus   questions  hit@1  hit@4  hit@10  MRR@10  top-4 chars  match hit@4  MRR@10",
                f"billing          2  1.000  1.000   1.000   1.000  {billing:>11,.0f}        1.000   1.000",
                f"auth             1  0.000  0.000   0.000   0.000  {PASSWORDS:>11,.0f}        0.000   0.000",
                "-" * 82,
                f"overall          3  0.667  0.667   0.667   0.667  {overall:>11,.0f}        0.667   0.667",
                "A passage counts by the lines it shows; match: by the lines that matched alone",
                "Labelling errors: 1 answer path(s) in 1 question(s) are not in the index; 1 question(s) not scored:",
                "  q4 (line 4): tokens.txt:1-1",
            ]
        )
        + "\n"
    )


def test_eval_misses_show_what_came_back_and_why(runner: CliRunner, setup: tuple[Path, Path]) -> None:
    questions, index = setup
    result = runner.invoke(main, ["eval", str(questions), "--index", str(index), "--misses"])
    assert result.exit_code == 0, result.output
    misses = result.stdout.split("\n\nMisses: ", 1)[1].splitlines()
    assert misses[:4] == [
        "1 of 3 questions have no hit in the top 4.",
        "",
        "q3 [auth] (line 3, no hit in the top 10): bcrypt hashing",
        "  answer: invoices.txt:1-1",
    ]
    assert (
        misses[4] == "  1. 2.0198  passwords.txt:1-1 (text)"
    )  # a BM25 score: the index has the code tokenizer
    assert misses[5].lstrip().startswith("bcrypt ")  # the --explain term contributions
    assert "hash" in misses[5]
    assert len(misses) == 6


def test_eval_json(runner: CliRunner, setup: tuple[Path, Path]) -> None:
    questions, index = setup
    args = ["eval", str(questions), "--index", str(index), "--json", "--misses", "-k", "1"]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {
        "overall",
        "per_corpus",
        "label_errors",
        "unscored",
        "indexes",
        "semantic_rerank",
        "k",
        "misses",
    }
    assert data["semantic_rerank"] is False  # the suite pins the lexical order (RAG_RERANK=none)
    assert data["overall"] == {
        "questions": 3,
        "hit_at_1": pytest.approx(2 / 3),
        "hit_at_4": pytest.approx(2 / 3),
        "hit_at_10": pytest.approx(2 / 3),
        "mrr_at_10": pytest.approx(2 / 3),
        "mean_top4_chars": pytest.approx((REFUNDS + INVOICES + PASSWORDS) / 3),
        "match_hit_at_4": pytest.approx(2 / 3),
        "match_mrr_at_10": pytest.approx(2 / 3),
    }
    assert list(data["per_corpus"]) == ["billing", "auth"]
    assert data["label_errors"] == [
        {"id": "q4", "corpus": "auth", "line": 4, "path": "tokens.txt", "start_line": 1, "end_line": 1}
    ]
    assert data["unscored"] == ["q4"]
    assert data["indexes"] == {"": str(index)}
    (miss,) = data["misses"]
    assert miss["id"] == "q3" and miss["rank"] is None
    (top,) = miss["results"]
    assert (top["rank"], top["path"], top["start_line"], top["end_line"]) == (1, "passwords.txt", 1, 1)
    assert top["explain"][0]["term"] == "bcrypt"


def test_eval_without_misses_json_has_no_misses(runner: CliRunner, setup: tuple[Path, Path]) -> None:
    questions, index = setup
    data = json.loads(runner.invoke(main, ["eval", str(questions), "--index", str(index), "--json"]).stdout)
    assert "misses" not in data


def test_eval_corpus_root_builds_then_reuses(runner: CliRunner, tmp_path: Path) -> None:
    root = tmp_path / "corpora"
    write_tree(root / "billing", {k: v for k, v in FILES.items() if k != "passwords.txt"})
    write_tree(root / "auth", {"passwords.txt": FILES["passwords.txt"]})
    questions = tmp_path / "q.jsonl"
    q3 = q("q3", "bcrypt hashing", "passwords.txt", "auth")
    questions.write_text("\n".join([QUESTIONS[0], QUESTIONS[1], q3]))
    args = ["eval", str(questions), "--corpus-root", str(root)]
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    assert (root / "billing" / ".rag" / "index.sqlite").is_file()
    assert (root / "auth" / ".rag" / "index.sqlite").is_file()
    assert first.stderr.count("Indexed ") == 2
    assert first.stdout.splitlines()[-2].startswith("overall          3  1.000  1.000   1.000   1.000")
    again = runner.invoke(main, args + ["--json"])
    assert again.exit_code == 0, again.output
    assert again.stderr.count("Index is up to date") == 2
    assert json.loads(again.stdout)["indexes"] == {
        "billing": str(root.resolve() / "billing" / ".rag" / "index.sqlite"),
        "auth": str(root.resolve() / "auth" / ".rag" / "index.sqlite"),
    }


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, " does not exist — pass a JSONL file of labelled questions"),
        ("{oops\n", ":1: not valid JSON"),
        (QUESTIONS[0] + "\n" + '{"id": "q2", "answers": []}\n', ":2: missing field 'question'"),
    ],
    ids=["missing-file", "not-jsonl", "missing-field"],
)
def test_eval_bad_questions_exit_1(
    runner: CliRunner, setup: tuple[Path, Path], content: str | None, expected: str
) -> None:
    questions, index = setup
    if content is None:
        questions.unlink()
    else:
        questions.write_text(content)
    result = runner.invoke(main, ["eval", str(questions), "--index", str(index)])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {questions}{expected}")
    assert result.stderr.count("\n") == 1
    assert result.stdout == ""


def test_eval_unknown_corpus_names_the_line(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "corpora").mkdir()
    questions = tmp_path / "q.jsonl"
    questions.write_text(q("q1", "anything", "a.py", "flask-0.0") + "\n")
    result = runner.invoke(main, ["eval", str(questions), "--corpus-root", str(tmp_path / "corpora")])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {questions}:1: corpus 'flask-0.0' is not a folder of ")


def test_eval_k_out_of_range_is_a_usage_error(runner: CliRunner, setup: tuple[Path, Path]) -> None:
    questions, index = setup
    result = runner.invoke(main, ["eval", str(questions), "--index", str(index), "-k", "11"])
    assert result.exit_code == 2


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_eval_with_no_question_to_score_is_an_error(
    runner: CliRunner, setup: tuple[Path, Path], as_json: bool
) -> None:
    _, index = setup
    questions = setup[0].with_name("elsewhere.jsonl")
    # answers labelled with paths of another checkout: none is in the index
    questions.write_text(
        q("a", "refunds to the original card", "src/refunds.txt")
        + "\n"
        + q("b", "bcrypt", "src/auth.txt")
        + "\n"
    )
    result = runner.invoke(
        main, ["eval", str(questions), "--index", str(index), *(["--json"] if as_json else [])]
    )
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        "Error: No question could be scored: none of the 2 has an answer whose path is in the index (the "
        f"first: src/refunds.txt, line 1 of {questions}) — give paths relative to the repository root, or "
        "pass the index of that repository\n"
    )
