"""A fault in rag is reported as one, never as index damage and never by a silent rebuild; an index
built with other scoring parameters is refused, not mixed; a query loads no writer-side module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write_tree

import rag.store.update
import rag.weights
from rag.cli import main

REPO = {
    f"app/m{i}.py": f"def handler_{i}(request):\n    '''Handle {i} login requests'''\n    return {i}\n"
    for i in range(12)
}


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Path, Path]:
    repo = write_tree(tmp_path / "repo", REPO)
    result = CliRunner().invoke(main, ["ingest", str(repo)])
    assert result.exit_code == 0, result.output
    return repo, repo / ".rag" / "index.sqlite"


def test_a_fault_in_the_rerank_is_an_internal_error_not_damage(indexed, monkeypatch) -> None:
    _, index = indexed

    def broken(hits, k, **kwargs):
        raise IndexError("list index out of range")

    monkeypatch.setattr(
        sys.modules["rag.retrieval.search"], "rank_hits", broken
    )  # rag.retrieval.search is the function
    before = index.read_bytes()
    result = CliRunner().invoke(main, ["query", "--index", str(index), "--no-llm", "login handler"])
    assert result.exit_code == 1
    assert result.output == (
        "Error: Internal error (IndexError: list index out of range) — this is a bug in rag, "
        "please report it (RAG_DEBUG=1 shows the traceback)\n"
    )
    assert "damaged" not in result.output and "ingest" not in result.output
    assert index.read_bytes() == before


def test_a_fault_in_the_updater_is_an_internal_error_and_nothing_is_rebuilt(indexed, monkeypatch) -> None:
    repo, index = indexed
    before = index.read_bytes()
    inode = index.stat().st_ino

    def broken(*args, **kwargs):
        raise TypeError("unsupported operand type(s) for +: 'int' and 'NoneType'")

    monkeypatch.setattr(rag.store.update, "_edit_postings", broken)
    (repo / "app" / "m3.py").write_text(
        "def handler_3(request):\n    return 'changed'\n"
    )  # one file: in place
    result = CliRunner().invoke(main, ["ingest", str(repo)])
    assert result.exit_code == 1
    assert result.output.startswith("Error: Internal error (TypeError: unsupported operand type(s)")
    assert "Indexed" not in result.output  # was: a silent full rebuild that reported success
    assert index.stat().st_ino == inode and index.read_bytes() == before  # the update rolled back, no rebuild
    assert [p.name for p in index.parent.iterdir() if ".tmp-" in p.name] == []


def test_rag_debug_shows_the_traceback(indexed, monkeypatch) -> None:
    _, index = indexed

    def broken(hits, k, **kwargs):
        raise IndexError("list index out of range")

    monkeypatch.setattr(
        sys.modules["rag.retrieval.search"], "rank_hits", broken
    )  # rag.retrieval.search is the function
    monkeypatch.setenv("RAG_DEBUG", "1")
    result = CliRunner().invoke(main, ["query", "--index", str(index), "--no-llm", "login handler"])
    assert result.exit_code == 1 and isinstance(result.exception, IndexError)  # raised as it is
    monkeypatch.setenv("RAG_DEBUG", "1")
    missing = CliRunner().invoke(main, ["query", "--index", str(index.parent / "nothing.sqlite"), "q"])
    assert type(missing.exception).__name__ == "NoIndexError"  # a user-facing error too


def test_an_index_built_with_another_k1_is_refused_then_rebuilt_whole(indexed, monkeypatch) -> None:
    repo, index = indexed
    runner = CliRunner()
    monkeypatch.setattr(rag.weights, "BM25_K1", 2.0)
    refused = runner.invoke(main, ["query", "--index", str(index), "--no-llm", "login handler"])
    assert refused.exit_code == 1
    assert refused.output == (
        f"Error: The index at {index} was built with scoring parameters {{'bm25_k1': 4.0, 'bm25_b': 0.9}}, "
        f"this tool scores with {{'bm25_k1': 2.0, 'bm25_b': 0.9}} — re-run `rag ingest {repo.resolve()}`\n"
    )
    rebuilt = runner.invoke(main, ["ingest", str(repo)])
    assert rebuilt.exit_code == 0 and rebuilt.output.startswith("Indexed 12 files"), (
        rebuilt.output
    )  # none reused
    fresh = repo.parent / "fresh.sqlite"
    assert runner.invoke(main, ["ingest", str(repo), "--index", str(fresh)]).exit_code == 0

    def scores(path: Path) -> list[tuple[str, float]]:
        out = runner.invoke(
            main, ["query", "--index", str(path), "--json", "--no-llm", "-k", "10", "login handler 7"]
        )
        return [(r["path"], r["score"]) for r in json.loads(out.stdout)["results"]]

    assert scores(index) == scores(fresh)  # exactly a build with k1 = 2
    monkeypatch.setattr(rag.weights, "BM25_K1", 4.0)
    assert runner.invoke(main, ["query", "--index", str(fresh), "--no-llm", "q"]).exit_code == 1  # and back


def test_a_query_loads_no_writer_side_module(indexed) -> None:
    _, index = indexed
    code = (
        "import sys, json\nfrom click.testing import CliRunner\nfrom rag.cli import main\n"
        f"r = CliRunner().invoke(main, ['query', '--index', {str(index)!r}, '--json', '--no-llm', 'login'])\n"
        "assert r.exit_code == 0, r.output\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('rag'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )
    loaded = set(json.loads(out.stdout))
    assert {"rag.store.reader", "rag.retrieval.search", "rag.retrieval.retrieve"} <= loaded
    assert loaded.isdisjoint(
        {
            "rag.store.writer",
            "rag.store.update",
            "rag.indexing.pipeline",
            "rag.indexing.plan",
            "rag.sources.walk",
            "rag.sources.reading",
            "rag.sources.exclusions",
            "rag.secrets",
            "rag.chunking.python",
            "rag.answer.backends",
            "rag.answer.prompts",
        }
    )
