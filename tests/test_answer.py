"""Tests for rag.answer.ask: retrieve -> prompt -> generate with a FakeBackend, and the citation check."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FakeBackend, write_tree

from rag import Request, ingest
from rag.answer.ask import ask, generate
from rag.answer.backends import ApiCitation
from rag.answer.citations import NO_CONTEXT, Citation, bracket_citations, check_citations
from rag.chunking import Chunk
from rag.ranking.hits import Hit

HITS = [
    Hit(
        0.9,
        Chunk(
            "rag/auth.py",
            10,
            13,
            "function",
            "check_password",
            "def check_password(user, password):\n    stored = load_hash(user)\n"
            "    return verify(stored, password)\n    # end",
            "",
            0,
        ),
    ),
    Hit(0.5, Chunk("rag/session.py", 1, 2, "class", "Session", "class Session:\n    token: str", "", 0)),
]


def test_answer_sends_the_hits_and_checks_the_citations(fake_backend: FakeBackend) -> None:
    fake_backend.queue("It verifies a stored hash [rag/auth.py:11-12], see also [rag/other.py:1-3].")
    streamed: list[str] = []
    from rag.answer.prompts import build_prompt

    result = generate(build_prompt("how does auth work?", HITS), fake_backend, on_text=streamed.append)
    [prompt] = fake_backend.prompts
    assert prompt.hits == tuple(HITS) and prompt.question == "how does auth work?"
    assert "".join(streamed) == result.text
    assert result.citations == (
        Citation(
            "rag/auth.py", 11, 12, "    stored = load_hash(user)\n    return verify(stored, password)", True
        ),
        Citation("rag/other.py", 1, 3, "", False),
    )
    assert (result.backend, result.model, result.stop_reason) == ("fake", "fake-model", "end_turn")
    assert result.hits == tuple(HITS)


def test_no_hits_means_no_call(tmp_path: Path, fake_backend: FakeBackend) -> None:
    report = ingest(
        write_tree(tmp_path / "repo", {"auth.py": "def login(user):\n    return user\n"}),
        tmp_path / "index.sqlite",
    )
    outcome = ask(report.index_path, Request("what is the meaning of life?"), fake_backend)
    assert fake_backend.prompts == [] and outcome.prompt is None and outcome.retrieval.hits == []
    result = outcome.answer
    assert result is not None
    assert (result.text, result.hits, result.stop_reason) == ("", (), NO_CONTEXT)


def test_answer_searches_an_index(tmp_path: Path, fake_backend: FakeBackend) -> None:
    repo = write_tree(
        tmp_path / "repo",
        {
            "auth.py": "def login(user):\n    return check_password(user)\n",
            "notes.md": "# Notes\n\nNothing about that here at all.\n",
        },
    )
    report = ingest(repo, tmp_path / "index.sqlite")
    fake_backend.queue("Login checks the password [auth.py:1-2].")
    seen = []
    outcome = ask(
        report.index_path, Request("how does login work?", k=1), fake_backend, on_retrieved=seen.append
    )
    result = outcome.answer
    assert result is not None and seen == [outcome.retrieval]
    assert [h.chunk.path for h in result.hits] == ["auth.py"]
    assert [c.valid for c in result.citations] == [True]
    assert fake_backend.prepared == 1  # told before retrieval that an answer would be asked for


def test_a_backend_is_told_to_prepare_only_when_it_will_answer(
    tmp_path: Path, fake_backend: FakeBackend
) -> None:
    repo = write_tree(tmp_path / "repo", {"auth.py": "def login(user):\n    return check_password(user)\n"})
    report = ingest(repo, tmp_path / "index.sqlite")
    ask(report.index_path, Request("how does login work?"), fake_backend, build_prompt=False)
    assert fake_backend.prepared == 0  # passages only: nothing of the model's side loads


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see [a.py:1-5]", [("a.py", 1, 5)]),
        ("see [a.py:7]", [("a.py", 7, 7)]),
        ("see [./a.py:1–5]", [("a.py", 1, 5)]),
        ("see [a.py:1-5, b/c.py:3-4; d.md:9]", [("a.py", 1, 5), ("b/c.py", 3, 4), ("d.md", 9, 9)]),
        ("see [`a.py`:2-3]", [("a.py", 2, 3)]),
        ("markers [1][2] and lists [a, b] and [x](http://y:80)", []),
        ("[src/my file.py:3-4]", [("src/my file.py", 3, 4)]),
    ],
    ids=[
        "span",
        "one-line",
        "dot-slash-en-dash",
        "several-in-one-bracket",
        "backticks",
        "not-citations",
        "space-in-path",
    ],
)
def test_bracket_citations(text: str, expected: list[tuple[str, int, int]]) -> None:
    assert bracket_citations(text) == expected


@pytest.mark.parametrize(
    ("cited", "valid"),
    [
        ("[rag/auth.py:10-13]", True),  # the whole passage
        ("[rag/auth.py:12]", True),  # inside it
        ("[rag/auth.py:9-11]", False),  # starts before it: overlap is not enough
        ("[rag/auth.py:12-14]", False),  # runs past it
        ("[rag/session.py:1-2]", True),
        ("[rag/session.py:3-4]", False),  # right file, lines never sent
        ("[rag/login.py:1-2]", False),  # a file never sent
        ("[auth.py:10-13]", False),  # paths must match exactly
    ],
    ids=[
        "whole",
        "inside",
        "overlap-before",
        "overlap-after",
        "second-hit",
        "outside",
        "other-file",
        "partial-path",
    ],
)
def test_a_bracket_citation_is_valid_only_inside_a_sent_passage(cited: str, valid: bool) -> None:
    [citation] = check_citations(f"Claim {cited}.", (), HITS)
    assert citation.valid is valid


def test_repeated_bracket_citations_are_checked_once() -> None:
    got = check_citations("A [rag/auth.py:10-11]. B [rag/auth.py:10-11]. C [x.py:1].", (), HITS)
    assert [(c.path, c.valid) for c in got] == [("rag/auth.py", True), ("x.py", False)]


def test_api_citations_are_checked_against_the_documents_sent() -> None:
    text = HITS[0].chunk.text
    quoted = "    stored = load_hash(user)\n"
    start = text.index(quoted)
    got = check_citations(
        "",
        [
            ApiCitation(0, quoted, start, start + len(quoted)),  # right offsets
            ApiCitation(1, "token: str", None, None),  # no offsets: found by search
            ApiCitation(0, "something the passage never said", 0, 10),
            ApiCitation(5, "a document that was not sent", 0, 5),
        ],
        HITS,
    )
    assert got == [
        Citation("rag/auth.py", 10, 13, quoted, True),
        Citation("rag/session.py", 1, 2, "token: str", True),
        Citation("rag/auth.py", 10, 13, "something the passage never said", False),
        Citation("", 0, 0, "a document that was not sent", False),
    ]


def test_a_citation_may_point_at_any_line_of_the_context_sent() -> None:
    from rag.answer.citations import check_citations

    match = Chunk("widget.ts", 13, 15, "function", "renderWidget", "a\nb\nc", "", 2)
    context = match._replace(start_line=1, text="\n".join(f"line {n}" for n in range(1, 16)))
    hit = Hit(1.0, match, context=context)
    cited = check_citations("See [widget.ts:2-3] and [widget.ts:14-16].", (), [hit])
    assert [(c.start_line, c.end_line, c.valid, c.cited_text) for c in cited] == [
        (2, 3, True, "line 2\nline 3"),
        (14, 16, False, ""),  # line 16 was never sent
    ]
