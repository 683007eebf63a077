"""Tests for rag.evaluation and its table (rag.cli.eval_output): known-answer metrics, the overlap rule,
question loading, labelling errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.chunking import Chunk
from rag.cli.eval_output import format_table
from rag.errors import InputError
from rag.evaluation import (
    EVAL_DEPTH,
    EvalReport,
    Metrics,
    Question,
    Span,
    evaluate,
    first_hit_rank,
    load_questions,
    overlaps,
    report_dict,
)
from rag.ranking.hits import Hit


def hit(path: str, start: int, end: int, chars: int = 10, score: float = 1.0) -> Hit:
    """A retrieved passage of `chars` characters."""
    return Hit(score, Chunk(path, start, end, "function", None, "x" * chars))


def question(qid: str, path: str, start: int, end: int, corpus: str | None = None) -> Question:
    return Question(qid, f"question {qid}", (Span(path, start, end),), corpus)


def filler(n: int, chars: int = 10) -> list[Hit]:
    """Passages that hit nothing."""
    return [hit(f"other{i}.py", 1, 5, chars) for i in range(n)]


# Four questions whose first hits are at ranks 1, 2, 5 and none.
RANKED = {
    "q1": [hit("a.py", 1, 10, 100), *filler(9)],
    "q2": [*filler(1, 200), hit("a.py", 30, 40, 300), *filler(8)],
    "q3": [*filler(4), hit("b.py", 5, 5), *filler(5)],
    "q4": filler(10),
}
QUESTIONS = [
    question("q1", "a.py", 5, 8, "alpha"),
    question("q2", "a.py", 40, 50, "alpha"),
    question("q3", "b.py", 1, 9, "beta"),
    question("q4", "b.py", 1, 9, "beta"),
]


def ranked(q: Question) -> list[Hit]:
    return RANKED[q.id]


def test_known_metrics() -> None:
    report = evaluate(QUESTIONS, ranked)
    assert [o.rank for o in report.outcomes] == [1, 2, 5, None]
    # top-4 chars: q1 100+10+10+10, q2 200+300+10+10, q3 and q4 4 x 10 -> 16 passages
    chars = (130 + 520 + 40 + 40) / 16
    mrr = pytest.approx((1 + 0.5 + 0.2 + 0) / 4)
    # the passages are their matches (no context grown): the match figures are the same
    assert report.overall == Metrics(4, 0.25, 0.5, 0.75, mrr, chars, 0.5, mrr)
    assert report.per_corpus == {
        "alpha": Metrics(2, 0.5, 1.0, 1.0, 0.75, (130 + 520) / 8, 1.0, 0.75),
        "beta": Metrics(2, 0.0, 0.0, 0.5, pytest.approx(0.1), 10.0, 0.0, pytest.approx(0.1)),
    }


def test_a_context_that_shows_the_answer_counts_and_its_match_alone_does_not() -> None:
    match = Chunk("a.py", 20, 29, "function", "neighbour", "x" * 10)
    grown = Hit(1.0, match, context=match._replace(start_line=1, end_line=29, text="y" * 50))
    report = evaluate([question("q", "a.py", 5, 8)], lambda q: [grown, *filler(9)])
    m = report.overall
    assert (m.hit_at_1, m.match_hit_at_4, m.match_mrr_at_10) == (1.0, 0.0, 0.0)
    assert m.mean_top4_chars == (50 + 3 * 10) / 4  # the size of what is shown


@pytest.mark.parametrize(("k", "missed"), [(1, ["q2", "q3", "q4"]), (4, ["q3", "q4"]), (10, ["q4"])])
def test_misses_depend_on_k(k: int, missed: list[str]) -> None:
    assert [o.question.id for o in evaluate(QUESTIONS, ranked, k=k).misses] == missed


def test_only_the_top_ten_count() -> None:
    hits = [*filler(EVAL_DEPTH), hit("a.py", 1, 1)]
    assert first_hit_rank(hits, [Span("a.py", 1, 1)]) is None
    report = evaluate([question("q", "a.py", 1, 1)], lambda q: hits)
    assert report.overall.hit_at_10 == 0.0
    assert len(report.outcomes[0].hits) == EVAL_DEPTH


def test_any_answer_counts() -> None:
    q = Question("q", "?", (Span("a.py", 1, 2), Span("b.py", 7, 9)))
    assert first_hit_rank([hit("c.py", 1, 9), hit("b.py", 9, 12)], q.answers) == 2


def test_no_questions_no_division_by_zero() -> None:
    report = evaluate([], ranked)
    assert report.overall == Metrics(0, 0.0, 0.0, 0.0, 0.0, 0.0)


def test_k_is_checked() -> None:
    with pytest.raises(ValueError):
        evaluate(QUESTIONS, ranked, k=EVAL_DEPTH + 1)


@pytest.mark.parametrize(
    ("path", "start", "end", "expected"),
    [
        ("a.py", 21, 30, False),
        ("a.py", 1, 9, False),
        ("a.py", 20, 30, True),
        ("a.py", 1, 10, True),
        ("a.py", 12, 15, True),
        ("a.py", 5, 25, True),
        ("b.py", 10, 20, False),
        ("a.py", 10, 10, True),
    ],
    ids=[
        "adjacent-after",
        "adjacent-before",
        "touching-last-line",
        "touching-first-line",
        "inside",
        "containing",
        "other-path",
        "one-line",
    ],
)
def test_overlap_rule(path: str, start: int, end: int, expected: bool) -> None:
    assert overlaps(hit(path, start, end), Span("a.py", 10, 20)) is expected


def test_labelling_errors_are_not_misses() -> None:
    questions = [
        question("ok", "a.py", 1, 10),
        Question("half", "?", (Span("gone.py", 1, 2), Span("a.py", 1, 10)), line=2),
        Question("bad", "?", (Span("gone.py", 1, 2),), "alpha", line=3),
    ]
    asked: list[str] = []

    def retrieve(q: Question) -> list[Hit]:
        asked.append(q.id)
        return [hit("a.py", 1, 3)]

    report = evaluate(questions, retrieve, indexed=lambda q: {"a.py"})
    assert asked == ["ok", "half"]
    assert [o.question.id for o in report.outcomes] == ["ok", "half"]
    assert report.overall.questions == 2 and report.overall.hit_at_1 == 1.0
    assert [(e.id, e.line, e.answer.path) for e in report.label_errors] == [
        ("half", 2, "gone.py"),
        ("bad", 3, "gone.py"),
    ]
    assert [q.id for q in report.unscored] == ["bad"]
    assert report.misses == ()
    assert "alpha" not in report.per_corpus
    assert format_table(report).splitlines()[-3:] == [
        "Labelling errors: 2 answer path(s) in 2 question(s) are not in the index; 1 question(s) not scored:",
        "  half (line 2): gone.py:1-2",
        "  bad (line 3): gone.py:1-2",
    ]
    data = report_dict(report)
    assert data["label_errors"][1] == {
        "id": "bad",
        "corpus": "alpha",
        "line": 3,
        "path": "gone.py",
        "start_line": 1,
        "end_line": 2,
    }
    assert data["unscored"] == ["bad"]


def test_format_table() -> None:
    report = evaluate(QUESTIONS, ranked)
    assert format_table(report) == "\n".join(
        [
            "corpus   questions  hit@1  hit@4  hit@10  MRR@10  top-4 chars  match hit@4  MRR@10",
            "alpha            2  0.500  1.000   1.000   0.750           81        1.000   0.750",
            "beta             2  0.000  0.000   0.500   0.100           10        0.000   0.100",
            "-" * 82,
            "overall          4  0.250  0.500   0.750   0.425           46        0.500   0.425",
            "A passage counts by the lines it shows; match: by the lines that matched alone",
        ]
    )


def test_format_table_flags_long_passages() -> None:
    report = evaluate([question("q", "a.py", 1, 1)], lambda q: [hit("a.py", 1, 1, 3001)])
    assert format_table(report).splitlines() == [
        "corpus   questions  hit@1  hit@4  hit@10  MRR@10  top-4 chars  match hit@4  MRR@10",
        "overall          1  1.000  1.000   1.000   1.000        3,001        1.000   1.000 !",
        "A passage counts by the lines it shows; match: by the lines that matched alone",
        "! top-4 passages average over the 3,000-character budget",
    ]


def test_report_dict_is_json() -> None:
    data = json.loads(json.dumps(report_dict(evaluate(QUESTIONS, ranked, k=4), misses=True)))
    assert data["overall"]["hit_at_4"] == 0.5
    assert set(data["per_corpus"]) == {"alpha", "beta"}
    assert [m["id"] for m in data["misses"]] == ["q3", "q4"]
    assert data["misses"][0]["rank"] == 5 and len(data["misses"][0]["results"]) == 4


def write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return path


GOOD = json.dumps(
    {
        "id": "q1",
        "question": "how?",
        "answers": [{"path": "a.py", "start_line": 1, "end_line": 2}],
    }
)


def test_load_questions(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        GOOD,
        "",
        json.dumps(
            {
                "id": 7,
                "corpus": "flask-3.1.3",
                "question": "why?",
                "style": "natural",
                "answers": [{"path": "./b.py", "start_line": 3, "end_line": 3, "symbol": "f"}],
            }
        ),
    )
    assert load_questions(path) == [
        Question("q1", "how?", (Span("a.py", 1, 2),), None, 1),
        Question("7", "why?", (Span("b.py", 3, 3),), "flask-3.1.3", 3),
    ]


def test_load_questions_from_a_file_with_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(GOOD + "\n", encoding="utf-8-sig")  # as Windows editors save UTF-8
    assert load_questions(path) == [Question("q1", "how?", (Span("a.py", 1, 2),), None, 1)]


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ([GOOD, "{not json"], ":2: not valid JSON"),
        (["[" * 100_000 + "]" * 100_000], ":1: JSON nested too deeply to read"),
        (["[1, 2]"], ":1: expected a JSON object, got list"),
        (
            [GOOD, GOOD.replace('"id": "q1"', '"id": "q2"'), '{"id": "q3", "question": "?"}'],
            ":3: missing field 'answers'",
        ),
        (['{"question": "?", "answers": []}'], ":1: missing field 'id'"),
        ([GOOD.replace('"end_line": 2', '"end": 2')], ":1: answers[0] is missing field 'end_line'"),
        ([GOOD.replace('"end_line": 2', '"end_line": 0')], ":1: answers[0] needs whole-number lines"),
        ([GOOD.replace('"start_line": 1', '"start_line": "1"')], ":1: answers[0] needs whole-number lines"),
        (['{"id": "q1", "question": "?", "answers": []}'], ":1: 'answers' must be a non-empty list"),
        ([GOOD.replace('"how?"', '""')], ":1: 'question' must be a non-empty string"),
        ([GOOD, GOOD], ":2: id 'q1' is also on line 1"),
        (["", "  "], " has no questions"),
    ],
    ids=[
        "not-json",
        "too-deep",
        "not-object",
        "missing-answers",
        "missing-id",
        "answer-missing-end",
        "bad-span",
        "string-line",
        "empty-answers",
        "empty-question",
        "duplicate-id",
        "empty-file",
    ],
)
def test_bad_questions_name_file_and_line(tmp_path: Path, lines: list[str], expected: str) -> None:
    path = write(tmp_path, *lines)
    with pytest.raises(InputError) as info:
        load_questions(path)
    message = str(info.value)
    assert message.startswith(f"{path}{expected}")
    assert "\n" not in message


def test_missing_questions_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope\.jsonl does not exist — pass a JSONL file"):
        load_questions(tmp_path / "nope.jsonl")


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InputError, match="is not UTF-8 text"):
        load_questions(path)


def test_report_is_frozen() -> None:
    report = evaluate(QUESTIONS, ranked)
    assert isinstance(report, EvalReport)
    with pytest.raises(AttributeError):
        report.k = 3  # type: ignore[misc]
