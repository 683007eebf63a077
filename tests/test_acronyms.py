"""Acronyms a repository spells out: found at ingest, added to questions that use the words."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import write_tree

from rag import Index, IngestOptions, TokenizerSettings, ingest, search
from rag.text.acronyms import defined_terms, definitions, expand
from rag.text.tokenizer import Tokenizer

GLOSSARY = """# Glossary

## Streaming

Server-Sent Events (SSE) push messages from the server to a browser over one long response.

## Sessions

A session keeps what a user did between requests, signed so that it cannot be forged.
"""
REPO = {
    "docs/glossary.md": GLOSSARY,
    "app/sse.py": '"""Push streams to browsers."""\n\n\n'
    "def sse_retry_delay(attempt):\n"
    '    """Milliseconds an SSE client waits before reconnecting."""\n'
    "    return min(30_000, 500 * 2 ** attempt)\n",
    "app/websocket.py": '"""Two-way connections."""\n\n\n'
    "def reconnect_delay(attempt):\n"
    '    """Milliseconds a websocket client waits before reconnecting: each client backs off."""\n'
    "    return min(60_000, 1_000 * 2 ** attempt)\n",
}
QUESTION = "how long does a server-sent events client wait before reconnecting?"


def test_a_definition_counts_only_where_the_initials_spell_the_letters() -> None:
    text = (
        "Django ships Cross-Site Request Forgery (CSRF) protection.\n"
        "CSP (Content Security Policy) headers are set by the middleware.\n"
        "The public APIs (Application Programming Interfaces) are listed below.\n"  # plural letters
        "Distances in Nautical Miles (UK) are converted.\n"  # N M is not U K
        "Return the value as JSON (JavaScript Object Notation).\n"  # three words, four letters
        "Call it (ABC) or not.\n"  # the words before do not spell it
        "HTTP Strict Transport Security (HSTS)\n"  # the last four words count
        "an object-relational mapper\n(ORM) maps rows\n"  # a line break before the parenthesis
        "f(ABC) and Events(SSE) are calls, not definitions\n"
    )
    assert definitions(text) == {
        ("CSRF", "Cross Site Request Forgery"),
        ("CSP", "Content Security Policy"),
        ("API", "Application Programming Interfaces"),
        ("HSTS", "HTTP Strict Transport Security"),
        ("ORM", "object relational mapper"),
    }
    assert definitions("no parentheses at all") == set()


def test_definitions_are_stored_as_the_index_terms_of_both_sides() -> None:
    tokenizer = Tokenizer()
    text = "Server-Sent Events (SSE) stream.\nSee Heal The Breach (HTB), and ON (Over Night) too."
    # "the" is a stopword, so Heal The Breach is two terms; "on" is one, and "over night" do not
    # make its letters
    assert defined_terms(text, tokenizer) == (("htb", "heal breach"), ("sse", "server sent event"))


def test_a_question_gets_the_acronym_only_for_the_words_in_order() -> None:
    defined = [("sse", "server sent event"), ("csrf", "cross site request forgeri")]
    assert expand({"server": 1, "sent": 1, "event": 1}, ["server", "sent", "event"], defined) == (
        {"server": 1, "sent": 1, "event": 1, "sse": 1},
        {"sse": "server sent event"},
    )
    assert expand({"event": 1, "sent": 1, "server": 1}, ["event", "sent", "server"], defined) == (
        {"event": 1, "sent": 1, "server": 1},
        {},
    )  # the words out of order
    # the question asks for the acronym itself: its count stays, and nothing is explained as added
    assert expand({"sse": 2, "server": 1}, ["sse", "sse", "server", "sent", "event"], defined) == (
        {"sse": 2, "server": 1},
        {},
    )


def test_a_question_in_words_finds_the_code_named_by_the_letters(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "r", REPO)
    path = ingest(repo).index_path
    with Index(path) as index:
        assert index.acronyms() == [("sse", "server sent event")]
        assert next(index.records(["docs/glossary.md"])).acronyms == (("sse", "server sent event"),)
        code = [h for h in search(index, QUESTION, 10) if h.chunk.path.startswith("app/")]
    assert [h.chunk.path for h in code] == ["app/sse.py", "app/websocket.py"]
    assert code[0].score > 1.15 * code[1].score
    # the glossary goes, and with it the definition: the websocket file wins on its words
    (repo / "docs" / "glossary.md").unlink()
    report = ingest(repo)
    assert report.reused == 2  # an update in place, not a rebuild
    with Index(path) as index:
        assert index.acronyms() == []
        code = [h for h in search(index, QUESTION, 10, explain=True) if h.chunk.path.startswith("app/")]
    assert [h.chunk.path for h in code] == ["app/websocket.py", "app/sse.py"]
    assert "sse" not in {c.term for h in code for c in h.contributions}


def test_the_acronym_is_an_explained_term_of_the_hit(tmp_path: Path) -> None:
    path = ingest(write_tree(tmp_path / "r", REPO)).index_path
    with Index(path) as index:
        hit = next(h for h in search(index, QUESTION, 10, explain=True) if h.chunk.path == "app/sse.py")
    sse = next(c for c in hit.contributions if c.term == "sse")
    assert sse.expands == "server sent event"
    assert all(c.expands == "" for c in hit.contributions if c.term != "sse")
    assert sse.tf == 6  # in the text twice (the name, the docstring), the path and symbol fields twice each
    assert abs(sum(c.score for c in hit.contributions) - hit.score) < 1e-9


def test_definitions_in_files_a_caller_may_not_read_do_not_expand_its_questions(tmp_path: Path) -> None:
    files = {**REPO, "internal/glossary.md": GLOSSARY}
    del files["docs/glossary.md"]
    repo = write_tree(tmp_path / "r", {**files, ".rag-access": "internal/ staff\n"})
    path = ingest(repo).index_path

    def code(groups: frozenset[str]) -> list[str]:
        with Index(path) as index:
            return [
                h.chunk.path
                for h in search(index, QUESTION, 10, groups=groups)
                if h.chunk.path.startswith("app/")
            ]

    assert code(frozenset({"staff"})) == ["app/sse.py", "app/websocket.py"]
    assert code(frozenset()) == ["app/websocket.py", "app/sse.py"]


def test_the_plain_tokenizer_defines_no_acronyms(tmp_path: Path) -> None:
    path = ingest(
        write_tree(tmp_path / "r", REPO), options=IngestOptions(settings=TokenizerSettings(mode="plain"))
    ).index_path
    with Index(path) as index:
        assert index.acronyms() == []
        assert "sse" not in {
            c.term for h in search(index, QUESTION, 4, explain=True) for c in h.contributions
        }


def test_a_full_rebuild_reusing_stored_files_keeps_their_definitions(tmp_path: Path, mocker) -> None:
    repo = write_tree(tmp_path / "r", REPO)
    path = ingest(repo).index_path
    (repo / "app" / "extra.py").write_text("def extra():\n    return 1\n")
    (repo / "app" / "more.py").write_text("def more():\n    return 2\n")
    write = mocker.spy(sys.modules["rag.indexing.pipeline"], "write_index")
    report = ingest(repo)  # two new files of five: more than an update in place takes
    assert write.call_count == 1 and report.reused == 3
    with Index(path) as index:
        assert index.acronyms() == [("sse", "server sent event")]


def test_query_explain_says_which_words_an_added_acronym_stands_for(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from rag.cli import main

    path = ingest(write_tree(tmp_path / "r", REPO)).index_path
    result = CliRunner().invoke(
        main, ["query", "--index", str(path), "--no-llm", "--explain", "-k", "2", QUESTION]
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("1. ") and "docs/glossary.md" in lines[0]
    assert [line.split(":")[0].strip() for line in lines if "(for " in line] == [
        "sse (for 'server sent event')",
        "sse (for 'server sent event')",
    ]
