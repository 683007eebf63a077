"""First use: what a newcomer meets on the first ingest and query."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write_tree

from rag.cli import main
from rag.cli.progress import ProgressLine
from rag.indexing.pipeline import IngestOptions, ingest
from rag.retrieval.retrieve import Request, retrieve
from rag.retrieval.search import search
from rag.retrieval.spelling import distance
from rag.sources.reading import looks_binary, read_text
from rag.sources.walk import walk
from rag.store.format import FORMAT_VERSION
from rag.store.reader import Index

PROJECT = Path(__file__).resolve().parents[1]
CODE = {
    "rag/score.py": 'def score_passages(passages):\n    """Score passages by BM25 and rank them."""\n    return sorted(passages)\n',
    "rag/walk.py": 'def list_files(root):\n    """List the files of a repository to index."""\n    return []\n',
    "README.md": "# Demo\n\nPassages are scored, then ranked.\n",
}


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "demo", CODE)


def one_ingest(repo: Path, **options: object) -> Path:
    return ingest(repo, options=IngestOptions(workers=1, **options)).index_path  # type: ignore[arg-type]


# --- 3. freshness counts only changes that would change the index; --refresh says what it did -------------


def test_ignored_folders_created_after_ingest_are_not_a_change(repo: Path) -> None:
    path = one_ingest(repo)
    for folder in ("__pycache__", ".pytest_cache", "rag/__pycache__"):
        (repo / folder).mkdir()
        (repo / folder / "x.pyc").write_bytes(b"\0")
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")  # skipped by name whatever its content
    found = retrieve(path, Request("list files"))
    assert found.hits and found.changed == []
    write_tree(repo, {"rag/new.py": "def fresh():\n    pass\n"})
    assert retrieve(path, Request("list files")).changed == ["rag/"]


def test_a_gitignored_new_file_is_not_a_change(repo: Path) -> None:
    write_tree(repo, {".gitignore": "*.log\n"})
    path = one_ingest(repo)
    write_tree(repo, {"debug.log": "noise\n"})
    assert retrieve(path, Request("readme", refresh=False)).changed == []


def test_refresh_says_what_it_reindexed(runner: CliRunner, repo: Path) -> None:
    index = str(one_ingest(repo))
    result = runner.invoke(main, ["query", "--no-llm", "--refresh", "--index", index, "score"])
    assert result.exit_code == 0, result.output
    assert "Refreshed: the index is up to date\n" in result.stderr
    write_tree(repo, {"rag/walk.py": "def list_files(root, deep):\n    return [root]\n"})
    os.utime(repo / "rag/walk.py", ns=(1, 1))
    result = runner.invoke(main, ["query", "--no-llm", "--refresh", "--index", index, "score"])
    (line,) = [ln for ln in result.stderr.splitlines() if ln.startswith("Refreshed")]
    assert line.startswith("Refreshed: re-indexed 1 changed or new file(s), 2 unchanged, in ")


# --- 4. a progress line on a terminal, nothing otherwise; --quiet ------------------------------------------


def test_ingest_shows_progress_on_one_line_on_a_terminal(repo: Path) -> None:
    import pty

    leader, follower = pty.openpty()
    done = subprocess.run(
        [sys.executable, "-m", "rag", "ingest", str(repo), "--workers", "1"],
        stderr=follower,
        stdout=subprocess.PIPE,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
    )
    os.close(follower)
    seen = os.read(leader, 65536).decode()
    os.close(leader)
    assert done.returncode == 0 and done.stdout.startswith("Indexed 3 files")
    assert "\r\x1b[KIndexing: 3/3 files, 0.0/0.0 MB, " in seen
    assert seen.endswith("\r\x1b[K")  # erased before the summary


def test_ingest_prints_no_progress_when_not_a_terminal_and_nothing_when_quiet(
    runner: CliRunner, repo: Path
) -> None:
    result = runner.invoke(main, ["ingest", str(repo), "--workers", "1"])
    assert result.stderr == "" and result.stdout.startswith("Indexed 3 files")
    (repo / "rag/walk.py").write_text("def other():\n    pass\n")
    quiet = runner.invoke(main, ["ingest", str(repo), "--quiet"])
    assert (quiet.exit_code, quiet.output) == (0, "")


def test_the_progress_line_counts_files_and_megabytes() -> None:
    import io

    out = io.StringIO()
    line = ProgressLine(out, every=0.0)
    line.start(2, 3_000_000)
    line.advance(1, 1_500_000)
    assert line.text().startswith("Indexing: 1/2 files, 1.5/3.0 MB, ")
    line.clear()
    assert out.getvalue().count("\r\x1b[K") == 3


# --- 5. skipped files named; --include wins over built-in folder rules ------------------------------------


def test_status_skipped_lists_skipped_files_by_reason(runner: CliRunner, repo: Path) -> None:
    write_tree(repo, {"empty.py": "", "build/out.py": "x = 1\n", "blob.dat": b"\0\1"})
    index = str(one_ingest(repo))
    result = runner.invoke(main, ["status", "--index", index, "--skipped"])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "\nSkipped, empty (1):\n  empty.py\n" in text
    assert "\nSkipped, binary (1):\n  blob.dat\n" in text
    assert "\nSkipped, excluded-dir (1):\n  build/" in text
    data = json.loads(runner.invoke(main, ["status", "--index", index, "--json", "--skipped"]).stdout)
    assert data["skipped_paths"]["empty"] == ["empty.py"]


def test_an_include_naming_a_built_in_excluded_folder_brings_it_back(repo: Path) -> None:
    write_tree(repo, {"build/gen.py": "def generated_thing():\n    pass\n"})
    assert "build/gen.py" not in {f.path for f in walk(repo).files}
    assert {f.path for f in walk(repo, include=("build/**",)).files} == {"build/gen.py"}
    write_tree(repo, {"build/.env": "TOKEN=x\n"})  # never over the secret-file rules
    assert "build/.env" not in {f.path for f in walk(repo, include=("build/*",)).files}


def test_the_summary_says_when_an_include_matched_only_built_in_excluded_files(
    runner: CliRunner, repo: Path
) -> None:
    write_tree(repo, {"build/gen.py": "def generated_thing():\n    pass\n", "app.js": "function f() {}\n"})
    result = runner.invoke(main, ["ingest", str(repo), "--include", "*.py", "--include", "gen.py"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == (
        "--include 'gen.py' matched only files in folders excluded by a built-in rule (build/gen.py): name the "
        "folder in the pattern to index them, e.g. --include 'build/**'"
    )


# --- 6. binary by content -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "binary"),
    [
        (b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n1 0 obj\n", True),
        (b"\x89PNG\r\n\x1a\n....", True),
        (b"PK\x03\x04\x14\x00", True),
        (b"\x1f\x8b\x08\x00", True),
        (b"\x7fELF\x02\x01\x01", True),
        (bytes(range(1, 32)) * 4 + b"text", True),
        (b"BMW makes cars\n", False),
        (b"def f():\n\treturn '\x1b[31m'\n", False),
        ("caf\u00e9 na\u00efve\n".encode(), False),
    ],
    ids=["pdf", "png", "zip", "gzip", "elf", "control-bytes", "bm-text", "tab-escape", "utf8"],
)
def test_binary_is_told_by_content(head: bytes, binary: bool) -> None:
    assert looks_binary(head) is binary


def test_an_illustrator_file_is_skipped_as_binary(tmp_path: Path) -> None:
    art = write_tree(
        tmp_path, {"logo.ai": b"%PDF-1.6\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >>\nendobj\n"}
    )
    assert read_text(str(art / "logo.ai")).skip_reason == "binary"


# --- 7. which index answered -------------------------------------------------------------------------------


def test_a_query_names_the_repository_it_searched(
    runner: CliRunner, repo: Path, tmp_path: Path, monkeypatch
) -> None:
    index = one_ingest(repo)
    monkeypatch.chdir(repo)
    result = runner.invoke(main, ["query", "--no-llm", "score"])  # stderr is not a terminal here
    assert result.stderr == f"Searching {repo.resolve()}\n"
    elsewhere = tmp_path / "idx.sqlite"
    ingest(repo, elsewhere, IngestOptions(workers=1))
    result = runner.invoke(main, ["query", "--no-llm", "--index", str(elsewhere), "score"])
    assert result.stderr == f"Searching {repo.resolve()} (index {elsewhere})\n"
    result = runner.invoke(main, ["query", "--json", "--no-llm", "score"])
    assert result.stderr == f"Searching {repo.resolve()}\n"
    data = json.loads(result.stdout)
    assert (data["index"], data["repository"]) == (str(index), str(repo.resolve()))
    for quiet in ("-q", "--quiet"):
        result = runner.invoke(main, ["query", quiet, "--no-llm", "score"])
        assert (result.exit_code, result.stderr) == (0, "")
        assert result.stdout == runner.invoke(main, ["query", "--no-llm", "score"]).stdout


def test_related_names_the_repository_it_searched_unless_quiet(
    runner: CliRunner, repo: Path, monkeypatch
) -> None:
    one_ingest(repo)
    monkeypatch.chdir(repo)
    result = runner.invoke(main, ["related", "rag/score.py:2"])
    assert result.stderr.splitlines()[0] == f"Searching {repo.resolve()}"
    result = runner.invoke(main, ["related", "-q", "rag/score.py:2"])
    assert result.stderr.splitlines()[0].startswith("Like rag/score.py:")


def test_a_query_says_when_the_index_is_the_one_last_ingested_from_its_folder(
    tmp_path: Path, monkeypatch
) -> None:
    """Three repositories ingested from one folder: its queries go to the last, and say so."""
    runner = CliRunner()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    repos = [
        write_tree(tmp_path / name, {"notes.md": f"# {name}\n\nThe score of {name}.\n"}) for name in "abc"
    ]
    for r in repos:
        assert runner.invoke(main, ["ingest", "-q", str(r)]).exit_code == 0
    result = runner.invoke(main, ["query", "--no-llm", "score"])
    assert result.exit_code == 0
    assert result.stderr == f"Searching {repos[2].resolve()} (last ingested from this folder)\n"
    assert "notes.md" in result.stdout
    # a query from inside a repository uses that repository's index, however it was ingested
    monkeypatch.chdir(repos[0])
    assert runner.invoke(main, ["query", "--no-llm", "score"]).stderr == f"Searching {repos[0].resolve()}\n"


def test_remembered_indexes_that_are_gone_are_forgotten(tmp_path: Path, monkeypatch) -> None:
    import shutil

    runner = CliRunner()
    state = Path(os.environ["XDG_STATE_HOME"]) / "rag" / "indexes.json"
    here, there, gone = (tmp_path / name for name in ("here", "there", "gone"))
    for folder in (here, there, gone):
        folder.mkdir()
    first = write_tree(tmp_path / "first", CODE)
    second = write_tree(tmp_path / "second", CODE)
    for cwd, r in ((here, first), (there, second), (gone, second)):
        monkeypatch.chdir(cwd)
        assert runner.invoke(main, ["ingest", "-q", str(r)]).exit_code == 0
    assert set(json.loads(state.read_text())) == {
        str(here.resolve()),
        str(there.resolve()),
        str(gone.resolve()),
    }
    # the index of `here` is deleted: a query from there forgets it, and says how to make one
    shutil.rmtree(first / ".rag")
    monkeypatch.chdir(here)
    result = runner.invoke(main, ["query", "--no-llm", "score"])
    assert result.exit_code == 1 and result.stderr.startswith(f"Error: No index found for {here.resolve()}")
    assert set(json.loads(state.read_text())) == {str(there.resolve()), str(gone.resolve())}
    # a folder deleted: the next ingest forgets it
    monkeypatch.chdir(tmp_path)
    gone.rmdir()
    assert runner.invoke(main, ["ingest", "-q", str(first)]).exit_code == 0
    assert json.loads(state.read_text()) == {
        str(there.resolve()): str((second / ".rag" / "index.sqlite").resolve()),
        str(tmp_path.resolve()): str((first / ".rag" / "index.sqlite").resolve()),
    }


# --- 8. messages that name the real cause -----------------------------------------------------------------


def test_a_folder_the_enclosing_repository_ignores_says_so(runner: CliRunner, tmp_path: Path) -> None:
    outer = write_tree(tmp_path / "outer", {".gitignore": "scratch/\n", "scratch/notes.py": "x = 1\n"})
    subprocess.run(["git", "init", "-q", str(outer)], check=True)
    result = runner.invoke(main, ["ingest", str(outer / "scratch")])
    assert result.exit_code == 1
    assert (
        f"the repository {outer.resolve()} holds it and its ignore rules (.gitignore) exclude it"
        in result.output
    )
    assert f"`git -C {(outer / 'scratch').resolve()} init`" in result.output


def test_index_naming_a_folder_without_an_index_suggests_a_command_that_works(
    runner: CliRunner, repo: Path
) -> None:
    result = runner.invoke(main, ["query", "--no-llm", "--index", str(repo), "score"])
    assert result.exit_code == 1
    assert result.output == (
        f"Error: No index in {repo} (no {repo}/.rag/index.sqlite) — run `rag ingest {repo}` "
        "to index that folder, or pass --index the index file itself\n"
    )


# --- 9. spelling ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("pasag", "passag", 1),
        ("scord", "score", 1),
        ("abcd", "abdc", 1),
        ("kitten", "sitting", 3),
    ],
    ids=["insert", "substitute", "transpose", "over-limit"],
)
def test_distance(a: str, b: str, expected: int) -> None:
    assert distance(a, b, 2) == min(expected, 3)


def test_a_typo_finds_the_passages_and_says_what_was_searched(runner: CliRunner, repo: Path) -> None:
    index = str(one_ingest(repo))
    result = runner.invoke(main, ["query", "--no-llm", "--index", index, "how are pasages scord?"])
    assert result.exit_code == 0
    assert (
        "Note: searched 'passages' for 'pasages', 'score' for 'scord' (words the index has never seen)\n"
        in result.stderr
    )
    assert "rag/score.py" in result.stdout
    data = json.loads(
        runner.invoke(main, ["query", "--json", "--no-llm", "--index", index, "pasages"]).stdout
    )
    assert data["corrections"] == [
        {"word": "pasages", "searched": "passages", "term": "passag", "distance": 1}
    ]
    explained = runner.invoke(main, ["query", "--no-llm", "--explain", "--index", index, "pasages"]).stdout
    assert "passag (for 'pasages'): idf" in explained


@pytest.mark.parametrize(
    "question", ["score passages", "list files repository", "rank them", "scored", "demo bm25"]
)
def test_known_word_queries_rank_identically_with_or_without_spelling(
    repo: Path, question: str, monkeypatch
) -> None:
    path = one_ingest(repo)
    with Index(path) as index:
        with_spelling = search(index, question, 10, explain=True)
    monkeypatch.setattr("rag.retrieval.spelling.CORRECT", False)
    with Index(path) as index:
        assert search(index, question, 10, explain=True) == with_spelling


def test_short_words_and_far_words_are_not_corrected(repo: Path) -> None:
    path = one_ingest(repo)
    assert retrieve(path, Request("scr")).corrections == ()  # under four letters
    assert retrieve(path, Request("zzzzzz")).hits == []


# --- 10. status --------------------------------------------------------------------------------------------


def test_status_reports_the_index(runner: CliRunner, repo: Path) -> None:
    write_tree(repo, {"conf.py": 'password = "hunter2-very-secret"\n'})
    index = str(one_ingest(repo))
    (repo / "README.md").write_text("# Changed\n")
    data = json.loads(runner.invoke(main, ["status", "--index", index, "--json"]).stdout)
    assert (data["index"], data["repository"], data["format_version"]) == (
        index,
        str(repo.resolve()),
        FORMAT_VERSION,
    )
    assert data["files_by_chunker"] == {"python": 3, "markdown": 1}
    assert data["redacted"] == {"password-assignment": 1}
    assert data["stale"] == ["README.md"]
    assert "skipped_paths" not in data
    text = runner.invoke(main, ["status", "--index", index]).stdout
    assert (
        "Redacted:   1 password-assignment\n" in text
        and "Stale:      1 changed since ingest (README.md)" in text
    )


def test_status_keeps_redactions_of_unchanged_files_across_an_update(repo: Path) -> None:
    from rag.status import status

    write_tree(repo, {"conf.py": 'password = "hunter2-very-secret"\n'})
    path = one_ingest(repo)
    write_tree(repo, {"rag/walk.py": "def list_files(root):\n    return [root]\n"})
    one_ingest(repo)
    assert status(path).redacted == {"password-assignment": 1}


def test_a_plain_index_keeps_unknown_words_out(tmp_path: Path) -> None:
    # the plain tokenizer: unknown terms drop out and a query of only unknown terms returns nothing
    from rag import Index, IngestOptions, TokenizerSettings, ingest, search

    repo = write_tree(tmp_path / "r", {"a.txt": "passages are scored by cosine similarity\n"})
    report = ingest(repo, options=IngestOptions(settings=TokenizerSettings(mode="plain")))
    with Index(report.index_path) as index:
        assert search(index, "pasages scord") == []
