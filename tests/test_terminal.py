"""What the CLI shows of file-derived and model-derived text: visible control characters on a
terminal, exact JSON, and a `path:start-end` line that stays one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FakeBackend, write_tree

from rag import ingest
from rag.cli import main
from rag.cli.terminal import one_line, visible

OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # writes "echo pwned" to the clipboard
TITLE = "\x1b]0;owned\x07"
RED = "\x1b[31m"
EVIL_NAME = f"evil{RED}\n1. 9.9999  app/safe.py:1-1.txt"
TEXT = f"refund the invoice {OSC52} now {TITLE}{RED}red\x08over\x9b2J\u202eevil\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\x1b[31mred", "\\x1b[31mred"),
        (OSC52, "\\x1b]52;c;ZWNobyBwd25lZA==\\x07"),
        ("a\tb\nc", "a\tb\nc"),
        ("\x9b2J", "\\x9b2J"),
        ("\u202eabc", "\\u202eabc"),
        ("café ＜", "café ＜"),
        ("a\rb\x7f", "a\\rb\\x7f"),
    ],
    ids=["csi", "osc52", "tab-newline-kept", "c1-csi", "bidi", "printable-unicode", "cr-del"],
)
def test_visible(text: str, expected: str) -> None:
    assert visible(text) == expected


def test_one_line() -> None:
    assert one_line("a\nb\tc\u2028d\x1b") == "a\\nb\\tc\\u2028d\\x1b"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "r", {EVIL_NAME: TEXT, "app/safe.py": "def safe():\n    return 1\n"})


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("rag.cli.output._terminal", lambda err: True)


def no_raw_controls(text: str) -> bool:
    return not any(c in text for c in ("\x1b", "\x07", "\x9b", "\r", "\x08", "\u202e"))


def test_passages_file_names_and_the_stale_note_show_controls_visibly(repo: Path, terminal: None) -> None:
    index = ingest(repo).index_path
    (repo / EVIL_NAME).write_text(TEXT + "more\n")  # the stale note names it
    result = CliRunner().invoke(main, ["query", "-q", "--no-llm", "--index", str(index), "refund invoice"])
    assert result.exit_code == 0
    assert no_raw_controls(result.output)
    assert "\\x1b]52;c;ZWNobyBwd25lZA==\\x07" in result.stdout
    lines = result.stdout.splitlines()
    assert lines[0] == "1. evil\\x1b[31m\\n1. 9.9999  app/safe.py:1-1.txt:1-1 (text)"
    assert not any(
        line.startswith("1. 9.9999") for line in lines
    )  # the forged line did not get one of its own
    assert result.stderr.startswith(
        "Note: 1 indexed file(s) or folder(s) changed since ingest "
        "(evil\\x1b[31m\\n1. 9.9999  app/safe.py:1-1.txt)"
    )


def test_json_stays_exact(repo: Path, terminal: None) -> None:
    index = ingest(repo).index_path
    result = CliRunner().invoke(
        main, ["query", "--no-llm", "--json", "--index", str(index), "refund invoice"]
    )
    hit = json.loads(result.stdout)["results"][0]
    assert (hit["path"], hit["text"]) == (EVIL_NAME, TEXT.rstrip("\n"))


def test_through_a_pipe_passages_are_exact_but_a_path_line_stays_one_line(repo: Path) -> None:
    index = ingest(repo).index_path
    result = CliRunner().invoke(main, ["query", "--no-llm", "--index", str(index), "refund invoice"])
    assert OSC52 in result.stdout  # not a terminal: the bytes as they are (a pager or a file decides)
    assert result.stdout.splitlines()[0] == "1. evil\\x1b[31m\\n1. 9.9999  app/safe.py:1-1.txt:1-1 (text)"


def test_the_streamed_answer_and_its_sources_show_controls_visibly(
    repo: Path, terminal: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeBackend().queue(f"Refunds {OSC52}go\rback {TITLE}[{EVIL_NAME.splitlines()[0]}:1-1].")
    fake.plans.append(f"refund {OSC52}invoice")  # a plan's words reach the terminal too
    monkeypatch.setattr("rag.answer.backends.resolve_backend", lambda name, model, env=None: fake)
    index = ingest(repo).index_path
    result = CliRunner().invoke(main, ["query", "--index", str(index), "refund invoice"])
    assert result.exit_code == 0, result.output
    assert no_raw_controls(result.output)
    assert "Refunds \\x1b]52;c;ZWNobyBwd25lZA==\\x07go\\rback \\x1b]0;owned\\x07" in result.stdout
    assert "searched: refund \\x1b]52;c;ZWNobyBwd25lZA==\\x07invoice" in result.stderr


def test_eval_shows_paths_on_one_line(repo: Path, terminal: None, tmp_path: Path) -> None:
    index = ingest(repo).index_path
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps(
            {
                "id": "q\x1b]0;t\x07",
                "question": "nothing here matches safe",
                "answers": [
                    {"path": "gone\x1b[2J\n.py", "start_line": 1, "end_line": 1},
                    {"path": "app/safe.py", "start_line": 9, "end_line": 9},
                ],
            }
        )
        + "\n"
    )
    result = CliRunner().invoke(main, ["eval", str(questions), "--index", str(index), "--misses", "-k", "1"])
    assert result.exit_code == 0, result.output
    assert no_raw_controls(result.output)
    assert "  q\\x1b]0;t\\x07 (line 1): gone\\x1b[2J\\n.py:1-1\n" in result.stdout


def test_an_error_naming_a_path_shows_it_visibly(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / f"r{TITLE}", {"a.txt": "refund the invoice\n"})
    index = ingest(repo).index_path
    (repo / ".rag-access").write_text("docs/ ops\n")
    result = CliRunner().invoke(main, ["query", "--no-llm", "--index", str(index), "refund"])
    assert result.exit_code == 1
    assert no_raw_controls(result.output) and "\\x1b]0;owned\\x07" in result.output


@pytest.mark.parametrize(
    ("shown", "columns", "up"),
    [
        ("Let me look.", 80, 0),
        ("a" * 80, 80, 0),  # fills its row: the cursor waits at its end, on the same row
        ("a" * 81, 80, 1),
        ("a" * 80 + "\n", 80, 1),
        ("one\ntwo\n\nthree", 80, 3),
        ("\u4e2d" * 41, 80, 1),  # wide characters take two columns each
        ("e\u0301" * 80, 80, 0),  # a combining accent takes none
        ("\tx" * 10, 80, 1),  # tabs reach the next multiple of 8: 10 x 9 columns
    ],
    ids=["short", "full-row", "wrapped", "full-row-then-newline", "lines", "wide", "combining", "tabs"],
)
def test_rows_up_counts_the_rows_a_text_took(shown: str, columns: int, up: int) -> None:
    from rag.cli.terminal import rows_up

    assert rows_up(shown, columns) == up


def test_erase_goes_back_no_further_than_the_screen() -> None:
    from rag.cli.terminal import erase_sequence

    assert erase_sequence("Let me look.", 80, 24) == "\r\x1b[J"  # no ESC[0A: terminals move one row on it
    assert erase_sequence("one\ntwo", 80, 24) == "\r\x1b[1A\x1b[J"
    assert erase_sequence("x\n" * 50, 80, 24) == "\r\x1b[23A\x1b[J"
