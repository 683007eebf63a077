"""`rag mcp` through the SDK's own client over stdio, against a real small index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_tree

pytest.importorskip("mcp")

from click.testing import CliRunner  # noqa: E402
from mcp_client import PROJECT, payload, server, session_run  # noqa: E402

from rag.cli import main  # noqa: E402
from rag.indexing.pipeline import IngestOptions, ingest  # noqa: E402


def test_tools_search_status_and_reindex(tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "r",
        {
            "score.py": 'def score(passages):\n    """Rank passages by BM25."""\n',
            "walk.py": "def walk(root):\n    return []\n",
        },
    )
    index = ingest(repo, options=IngestOptions(workers=1)).index_path
    described: dict[str, str] = {}
    tools, (found, typo, nothing, status, reindexed, bad_k) = session_run(
        server("--index", str(index)),
        [
            ("search", {"query": "how are passages ranked", "k": 2}),
            ("search", {"query": "pasages"}),
            ("search", {"query": "xylophone quagga"}),
            ("status", {}),
            ("reindex", {}),
            ("search", {"query": "rank", "k": 0}),
        ],
        described,
    )
    assert sorted(tools) == ["reindex", "related", "search", "status"]
    # the agent is the one that writes the search: the tool says how a query finds code
    assert all(words in described["search"] for words in ("identifiers", "camelCase", "error message"))
    hits = payload(found)
    assert hits["repository"] == str(repo.resolve()) and hits["index"] == str(index)
    first = hits["results"][0]
    assert (
        f"{first['path']}:{first['start_line']}-{first['end_line']} {first['symbol']}" == "score.py:1-2 score"
    )
    # what `query --no-llm --json` prints, key for key, and the notes it prints on stderr (the server
    # ranks as RAG_RERANK unset does)
    question = ["--rerank", "auto", "-k", "2", "how are passages ranked"]
    cli = CliRunner().invoke(main, ["query", "--no-llm", "--json", "--index", str(index), *question])
    assert hits == {**json.loads(cli.stdout), "notes": []}
    assert list(hits) == ["question", "results", "index", "repository", "corrections", "notes"]
    assert payload(typo)["notes"] == [
        "Note: searched 'passages' for 'pasages' (words the index has never seen)"
    ]
    assert payload(nothing)["results"] == []
    assert payload(nothing)["notes"] == [
        "No passage matches: none of the query's words occur in the index (question words such as 'how' "
        "are not searched) — search for words the code or its docs would contain"
    ]
    assert payload(status)["files"] == 2
    assert payload(reindexed)["up_to_date"] is True
    # the SDK may prefix "Error executing tool search: "; the message is ours, in one line
    assert bad_k.is_error and bad_k.content[0].text.endswith(
        ": k must be between 1 and 50 — ask for fewer passages"
    )


def test_reindex_leaves_the_vectors_to_the_queries(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")  # the semantic extra
    from rag.semantic.vectors import cache_path

    repo = write_tree(
        tmp_path / "r", {"score.py": 'def score(passages):\n    """Rank passages by BM25."""\n'}
    )
    index = ingest(repo, options=IngestOptions(workers=1)).index_path
    (repo / "walk.py").write_text("def walk(root):\n    return []\n")
    # the semantic stage on (RAG_RERANK unset: auto): a reindex re-indexes, and embeds nothing
    _, (reindexed,) = session_run(server("--index", str(index), unset=("RAG_RERANK",)), [("reindex", {})])
    done = payload(reindexed)
    assert done["changed"] == 1 and done["summary"].startswith("Indexed 2 files")
    assert "\n" not in done["summary"] and not Path(cache_path(index)).exists()


def test_status_counts_what_the_servers_groups_may_read(tmp_path: Path) -> None:
    from restricted_repo import HR, PLACE, PUBLIC, build, change_files

    from rag.indexing.pipeline import reingest
    from rag.status import status, status_dict

    full, without, opened = (
        build(tmp_path / "full", {**PUBLIC, **HR}),
        build(tmp_path / "without", PUBLIC),
        build(tmp_path / "open", {**PUBLIC, **HR}, "hr/ public\n"),
    )
    change_files(full, without, opened)
    _, (member,) = session_run(server("--index", str(full), "--as", "hr"), [("status", {})])
    _, (public, reindexed) = session_run(server("--index", str(full)), [("status", {}), ("reindex", {})])
    for got, reference in ((public, without), (member, opened)):
        got_dict, want = payload(got), status_dict(status(reference))
        assert {k: v for k, v in got_dict.items() if k not in PLACE} == {
            k: v for k, v in want.items() if k not in PLACE
        }
    assert payload(member)["files"] > payload(public)["files"]
    # the reindex that follows counts what the index without the folder would (a file of it changed too)
    done, reference = payload(reindexed), reingest(without)
    counts = ("files", "chunks", "changed", "deleted", "up_to_date")
    assert [done[k] for k in counts] == [getattr(reference, k) for k in counts] == [4, 4, 2, 0, False]


def test_the_server_module_loads_without_the_commands() -> None:
    # it shares rag.cli.report (and the escapes of rag.cli.terminal) with the commands; they import
    # it, never the other way round
    code = "import sys, rag.cli.mcp_server; print(sorted(m for m in sys.modules if m.startswith('rag.cli')))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
        check=True,
    )
    assert done.stdout.strip() == "['rag.cli', 'rag.cli.mcp_server', 'rag.cli.report', 'rag.cli.terminal']"


def test_an_index_deleted_while_serving_is_a_tool_error_not_a_crash(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "r", {"score.py": "def score(passages):\n    return 1\n"})
    index = ingest(repo, options=IngestOptions(workers=1)).index_path
    _, (before, first, second) = session_run(
        server("--index", str(index)),
        [("search", {"query": "score"}), index.unlink, ("search", {"query": "score"}), ("status", {})],
    )
    assert payload(before)["results"][0]["path"] == "score.py"
    for result in (first, second):
        assert result.is_error
        assert result.content[0].text.endswith(
            f"No index at {index} — run `python -m rag ingest REPO --index {index}` first"
        )


@pytest.mark.parametrize("given", [None, "none.sqlite"], ids=["found-from-the-folder", "index-option"])
def test_without_an_index_it_refuses_to_start(tmp_path: Path, given: str | None) -> None:
    args = [] if given is None else ["--index", given]
    done = subprocess.run(
        [sys.executable, "-m", "rag", "mcp", *args],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"Error: No index found for {tmp_path.resolve()} — run `python -m rag ingest REPO` first "
        "(or pass --index PATH)\n"
        if given is None
        else f"Error: No index at {given} — run `python -m rag ingest REPO --index {given}` first\n"
    )


def test_without_the_extra_it_says_what_to_install(tmp_path: Path) -> None:
    # a module named mcp that fails to import stands for the SDK not being installed
    write_tree(tmp_path / "shadow", {"mcp/__init__.py": "raise ImportError('no mcp here')\n"})
    done = subprocess.run(
        [sys.executable, "-m", "rag", "mcp"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": f"{tmp_path / 'shadow'}:{PROJECT}"},
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "Error: rag mcp needs the MCP SDK — pip install 'rag-code[mcp]'\n"
