"""The commands through click's CliRunner: exit codes and exact output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write_tree

from rag.cli import main


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def ingest_plain(runner: CliRunner, repo: Path):
    return runner.invoke(main, ["ingest", str(repo), "--tokenizer", "plain"])


def test_ingest_prints_one_summary_line(runner: CliRunner, worked_repo: Path) -> None:
    write_tree(worked_repo, {"logo.png": b"\x89PNG\0", "blob.bin": b"\0\1\2"})
    result = ingest_plain(runner, worked_repo)
    assert result.exit_code == 0, result.output
    (line,) = result.output.splitlines()
    assert line.startswith("Indexed 4 files (4 chunks) in ")
    assert line.endswith(f"MB read; skipped: 2 binary -> {worked_repo.resolve()}/.rag/index.sqlite")
    again = ingest_plain(runner, worked_repo)
    assert again.output.startswith("Index is up to date: 4 files, 4 chunks")


def test_ingest_without_the_languages_extra_says_what_to_install(
    runner: CliRunner, worked_repo: Path, monkeypatch
) -> None:
    import rag.indexing.pipeline

    monkeypatch.setattr(rag.indexing.pipeline, "languages_available", lambda: False)
    write_tree(
        worked_repo,
        {"main.go": "package main\n\nfunc main() {}\n", "lib.rs": "fn f() {}\n", "util.go": "package main\n"},
    )
    result = ingest_plain(runner, worked_repo)
    assert result.exit_code == 0, result.output
    summary, hint = result.output.splitlines()
    assert summary.startswith("Indexed 7 files")
    assert hint == (
        "3 files chunked as paragraphs: pip install 'rag-code[languages]' for Go, Rust structure "
        "(the next ingest then re-chunks them)"
    )


def test_query_prints_ranked_passages(runner: CliRunner, worked_repo: Path, monkeypatch) -> None:
    ingest_plain(runner, worked_repo)
    monkeypatch.chdir(worked_repo)
    result = runner.invoke(main, ["query", "--no-llm", "-k", "2", "billing refunds"])
    assert result.exit_code == 0, result.output
    assert result.stderr == f"Searching {worked_repo.resolve()}\n"
    # each result: its match, then its lines numbered (the worked example's plain design marks none)
    assert result.stdout == (
        "1. refunds.txt:1-1 (text)\n"
        "  1 | Refunds go back to the original card after billing approves them.\n"
        "\n"
        "2. team.txt:1-1 (text)\n"
        "  1 | For billing, ask billing support or the billing team.\n"
    )


def test_query_json_has_the_documented_shape(runner: CliRunner, worked_repo: Path) -> None:
    ingest_plain(runner, worked_repo)
    index = str(worked_repo / ".rag" / "index.sqlite")
    result = runner.invoke(
        main, ["query", "--json", "--no-llm", "--index", index, "-k", "1", "billing refunds"]
    )
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data == {
        "question": "billing refunds",
        "results": [
            {
                "rank": 1,
                "score": pytest.approx(0.392179, abs=1e-6),
                "path": "refunds.txt",
                "start_line": 1,
                "end_line": 1,
                "chunk": 0,
                "kind": "text",
                "symbol": None,
                "context_start_line": 1,
                "context_end_line": 1,
                "text": "Refunds go back to the original card after billing approves them.",
                "matched": [],
                "marked_lines": [],
                "demoted": None,
                "boosted": None,
            }
        ],
        "index": index,
        "repository": str(worked_repo.resolve()),
        "corrections": [],
    }


def test_query_with_only_unknown_words_is_empty_not_an_error(runner: CliRunner, worked_repo: Path) -> None:
    ingest_plain(runner, worked_repo)
    index = str(worked_repo / ".rag" / "index.sqlite")
    result = runner.invoke(main, ["query", "--json", "--no-llm", "--index", index, "chargeback"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {
        "question": "chargeback",
        "results": [],
        "index": index,
        "repository": str(worked_repo.resolve()),
        "corrections": [],
    }


def test_index_from_environment(runner: CliRunner, worked_repo: Path, tmp_path: Path, monkeypatch) -> None:
    index = tmp_path / "elsewhere" / "idx.sqlite"
    assert runner.invoke(main, ["ingest", str(worked_repo), "--index", str(index)]).exit_code == 0
    monkeypatch.setenv("RAG_INDEX", str(index))
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, ["query", "--no-llm", "-k", "1", "refunds"])
    assert result.exit_code == 0 and "refunds.txt:1-1" in result.output


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["ingest", "{missing}"], 1, "does not exist — pass the path of a repository directory"),
        (["ingest", "{file}"], 1, "is not a directory — pass the path of a repository directory"),
        (["ingest", "{empty}"], 1, "No indexable files in"),
        (["query", "--no-llm", "--index", "{missing}", "q"], 1, "run `rag ingest REPO --index"),
        (["query", "--no-llm", "--index", "{corrupt}", "q"], 1, "is corrupt"),
        (["query", "--no-llm", "--index", "{index}", "   "], 1, "The question is empty — ask something"),
        (["query", "--no-llm", "--index", "{index}"], 1, "The question is empty — ask something"),
        (
            ["query", "--no-llm", "--index", "{index}", "-k", "0", "q"],
            2,
            "0 is not in the range x>=1 — see `main query --help`",
        ),
        (["ingest", "{repo}", "--tokenizer", "fancy"], 2, "'fancy' is not one of 'code', 'plain'"),
        (
            ["query", "--json", "--prompt-only", "--index", "{index}", "q"],
            2,
            "print the prompt alone, without --json",
        ),
        (
            ["query", "--explain", "--show-prompt", "--index", "{index}", "q"],
            2,
            "without --json or --explain",
        ),
        (
            ["eval", "{file}", "--index", "{index}", "--corpus-root", "{empty}"],
            2,
            "--index names one — pick one",
        ),
        (["eval", "{file}", "--full"], 2, "--full rebuilds the corpus indexes of --corpus-root"),
        (["nosuch"], 2, "No such command 'nosuch' — see `main --help`"),
        # a socket, not /dev/null: a regression must not replace a device of the machine running the tests
        (["ingest", "{repo}", "--index", "{socket}"], 1, "socket is not a regular file"),
    ],
    ids=[
        "missing-repo",
        "repo-is-file",
        "empty-repo",
        "no-index",
        "corrupt-index",
        "blank-question",
        "no-question",
        "k-zero",
        "bad-tokenizer",
        "json-prompt-only",
        "explain-show-prompt",
        "eval-index-and-corpus-root",
        "eval-full-alone",
        "no-such-command",
        "index-is-a-device",
    ],
)
def test_bad_input_exit_codes(
    runner: CliRunner, worked_repo: Path, tmp_path: Path, args, code, message
) -> None:
    ingest_plain(runner, worked_repo)
    (tmp_path / "afile").write_text("x")
    (tmp_path / "empty").mkdir()
    (tmp_path / "corrupt.sqlite").write_bytes(b"garbage" * 50)
    names = {
        "missing": str(tmp_path / "missing"),
        "file": str(tmp_path / "afile"),
        "empty": str(tmp_path / "empty"),
        "corrupt": str(tmp_path / "corrupt.sqlite"),
        "index": str(worked_repo / ".rag" / "index.sqlite"),
        "repo": str(worked_repo),
        "socket": str(tmp_path / "socket"),
    }
    import socket

    with socket.socket(socket.AF_UNIX) as server:
        server.bind(names["socket"])
        result = runner.invoke(main, [a.format(**names) for a in args])
    assert result.exit_code == code, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert result.output.strip().count("\n") == 0  # one line, bad options too: no usage block


def test_every_command_has_help(runner: CliRunner) -> None:
    for name, command in main.commands.items():
        assert command.help, name
        assert runner.invoke(main, [name, "--help"]).exit_code == 0


def test_query_warns_when_files_changed_and_refresh_updates(
    runner: CliRunner, tmp_path: Path, monkeypatch
) -> None:
    repo = write_tree(tmp_path / "r", {"a.txt": "alpha beta\n", "docs/b.txt": "gamma delta\n"})
    assert runner.invoke(main, ["ingest", str(repo)]).exit_code == 0
    monkeypatch.chdir(repo)
    fresh = runner.invoke(main, ["query", "--no-llm", "alpha"])
    assert "Note:" not in fresh.output
    (repo / "a.txt").write_text("alpha beta epsilon, edited in place\n")
    (repo / "docs" / "new.txt").write_text("zeta eta\n")
    stale = runner.invoke(main, ["query", "--no-llm", "alpha"])
    assert stale.exit_code == 0
    # a query checks the files it returns and the folders above them, not the whole tree
    assert (
        "Note: 1 indexed file(s) or folder(s) changed since ingest (a.txt) — re-run ingest or pass --refresh"
        in stale.output
    )
    near = runner.invoke(main, ["query", "--no-llm", "gamma"])
    assert (
        "Note: 1 indexed file(s) or folder(s) changed since ingest (docs/) — re-run ingest or pass --refresh"
        in near.output
    )
    unseen = runner.invoke(main, ["query", "--no-llm", "zeta"])  # only in the new file: no hit, but a hint
    assert "No passages" in unseen.output and "changed since ingest (docs/)" in unseen.output
    refreshed = runner.invoke(main, ["query", "--no-llm", "--refresh", "zeta"])
    assert refreshed.exit_code == 0
    assert "docs/new.txt:1-1" in refreshed.output and "Note:" not in refreshed.output


def test_query_as_group(runner: CliRunner, tmp_path: Path, monkeypatch) -> None:
    repo = write_tree(
        tmp_path / "r",
        {
            ".rag-access": "hr/ people\n",
            "hr/salaries.txt": "salary bands for engineers\n",
            "README.md": "engineers write code\n",
        },
    )
    runner.invoke(main, ["ingest", str(repo)])
    monkeypatch.chdir(repo)
    public = runner.invoke(main, ["query", "--no-llm", "--json", "salary engineers"])
    assert [r["path"] for r in json.loads(public.stdout)["results"]] == ["README.md"]
    member = runner.invoke(main, ["query", "--no-llm", "--json", "--as", "people", "salary engineers"])
    assert [r["path"] for r in json.loads(member.stdout)["results"]] == ["hr/salaries.txt", "README.md"]
    monkeypatch.setenv("RAG_GROUPS", "finance people")
    env = runner.invoke(main, ["query", "--no-llm", "--json", "salary engineers"])
    assert json.loads(env.stdout)["results"][0]["path"] == "hr/salaries.txt"


def test_index_option_may_name_a_folder(runner: CliRunner, worked_repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "indexes"
    folder.mkdir()
    assert runner.invoke(main, ["ingest", str(worked_repo), "--index", str(folder)]).exit_code == 0
    assert (folder / ".rag" / "index.sqlite").is_file()
    result = runner.invoke(main, ["query", "--no-llm", "--index", str(folder), "-k", "1", "refunds"])
    assert result.exit_code == 0 and "refunds.txt:1-1" in result.output


def test_unwritable_index_location_is_one_line(runner: CliRunner, worked_repo: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = runner.invoke(
        main, ["ingest", str(worked_repo), "--index", str(blocker / "sub" / "index.sqlite")]
    )
    assert result.exit_code == 1
    assert (
        result.output.startswith("Error: ") and "check that the path exists and is writable" in result.output
    )
    assert "Traceback" not in result.output and result.output.count("\n") == 1


def test_a_demoted_passage_says_why_it_ranks_below_lower_scores(runner: CliRunner, tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "r",
        {
            "tests/test_refunds.py": "def test_refund_invoice():\n    refund(invoice); refund(invoice); refund(invoice)\n",
            "billing.py": "def refund(invoice):\n    # Send the money back.\n    return gateway.send(invoice.charge_id)\n",
        },
    )
    assert runner.invoke(main, ["ingest", str(repo)]).exit_code == 0
    index = str(repo / ".rag" / "index.sqlite")
    text = runner.invoke(main, ["query", "--no-llm", "--index", index, "refund invoice"]).stdout
    blocks = text.split("\n\n")
    assert blocks[0].startswith("1. billing.py:1-3 refund (function)\n   matched refund, invoice\n")
    assert blocks[1].startswith(
        "2. tests/test_refunds.py:1-2 test_refund_invoice (function)\n"
        "   matched refund, invoice · test: ranked at x0.5 of its score\n"
    )
    results = json.loads(
        runner.invoke(main, ["query", "--no-llm", "--json", "--index", index, "refund invoice"]).stdout
    )
    assert [r["demoted"] for r in results["results"]] == [None, "test"]
    first, second = results["results"]
    assert second["score"] > first["score"]  # a higher score, ranked second


def test_a_question_in_bytes_that_are_not_utf8(runner: CliRunner, worked_repo: Path, monkeypatch) -> None:
    # `query.py $'refunds \xff policy'` from a Latin-1 terminal: Python hands the byte over as a
    # lone surrogate, which the prompt, the SDK and JSON could not encode
    ingest_plain(runner, worked_repo)
    monkeypatch.chdir(worked_repo)
    result = runner.invoke(main, ["query", "--no-llm", "--json", "refunds \udcff policy"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["question"] == "refunds \ufffd policy"
    shown = runner.invoke(main, ["query", "--show-prompt", "--backend", "none", "refunds \udcff policy"])
    assert shown.exit_code == 0 and "refunds \ufffd policy" in shown.output


def test_index_option_expands_a_tilde(
    runner: CliRunner, worked_repo: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert (
        runner.invoke(main, ["ingest", str(worked_repo), "--index=~/idx.sqlite"]).exit_code == 0
    )  # not ./~/
    assert (tmp_path / "idx.sqlite").is_file()
    result = runner.invoke(main, ["query", "--no-llm", "--index=~/idx.sqlite", "-k", "1", "refunds"])
    assert result.exit_code == 0 and "refunds.txt:1-1" in result.output


def test_the_group_run_bare_prints_its_help(runner: CliRunner) -> None:
    result = runner.invoke(main, [])
    assert (
        result.output.startswith("Usage: ") and "Commands:" in result.output and "Error" not in result.output
    )


def test_a_terminated_ingest_leaves_no_temporary_index(
    runner: CliRunner, worked_repo: Path, monkeypatch
) -> None:
    import os
    import signal

    import rag.store.writer

    assert runner.invoke(main, ["ingest", str(worked_repo)]).exit_code == 0
    index = worked_repo / ".rag" / "index.sqlite"
    before = index.read_bytes()
    add = rag.store.writer.IndexWriter.add

    def terminated_while_writing(self, record) -> None:  # as `kill` would, during the write
        os.kill(os.getpid(), signal.SIGTERM)
        add(self, record)

    def not_handled(signum: int, frame: object) -> None:  # instead of ending the test run
        raise LookupError("SIGTERM reached the default handler")

    monkeypatch.setattr(rag.store.writer.IndexWriter, "add", terminated_while_writing)
    previous = signal.signal(signal.SIGTERM, not_handled)
    try:
        result = runner.invoke(main, ["ingest", str(worked_repo), "--full"])
        assert signal.getsignal(signal.SIGTERM) is not_handled  # the ingest put the handler back
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert result.exit_code == 128 + signal.SIGTERM, result.exception
    assert sorted(p.name for p in index.parent.iterdir()) == [
        ".gitignore",
        "index.sqlite",
        "index.sqlite.lock",
    ]  # the lock stays (rag.indexing.lock)
    assert index.read_bytes() == before


def test_query_notes_a_repository_that_is_gone(runner: CliRunner, worked_repo: Path, tmp_path: Path) -> None:
    import shutil

    index = tmp_path / "kept" / "index.sqlite"
    assert runner.invoke(main, ["ingest", str(worked_repo), "--index", str(index)]).exit_code == 0
    shutil.rmtree(worked_repo)
    result = runner.invoke(main, ["query", "--no-llm", "--index", str(index), "-k", "1", "refunds"])
    assert result.exit_code == 0 and "refunds.txt:1-1" in result.stdout
    assert result.stderr == (
        f"Searching {worked_repo.resolve()} (index {index})\n"
        f"Note: {worked_repo.resolve()}, the repository this index was built from, is gone: the "
        "passages are as indexed — re-run `rag ingest REPO` with its new path\n"
    )


def test_the_summary_counts_files_whose_structure_could_not_be_read(
    runner: CliRunner, tmp_path: Path
) -> None:
    repo = write_tree(
        tmp_path / "r",
        {
            "ok.py": "def f():\n    return 1\n",
            "broken.py": "def f(:\n    return 1\n",
            "notes.md": "# Notes\n\nSome words here.\n",
        },
    )
    result = runner.invoke(main, ["ingest", str(repo)])
    assert result.exit_code == 0, result.output
    assert "; chunked as paragraphs, their structure unreadable: 1 python -> " in result.output
