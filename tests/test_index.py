"""The saved index: format, atomic replacement, errors, and incremental re-ingest."""

from __future__ import annotations

import os
import sqlite3
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import write_tree

from rag import (
    Index,
    IndexFormatError,
    InputError,
    NoIndexError,
    NothingToIndexError,
    TokenizerSettings,
    ingest,
    locate_index,
    search,
)
from rag.chunking import languages_available
from rag.indexing.pipeline import IngestOptions
from rag.ranking.order import candidate_count
from rag.store.format import FORMAT_VERSION
from rag.store.state import remember_index


def snapshot(index_path: Path, questions: list[str]) -> list[list[tuple[str, int, int, float]]]:
    with Index(index_path) as index:
        return [
            [(h.chunk.path, h.chunk.start_line, h.chunk.end_line, h.score) for h in search(index, q, k=10)]
            for q in questions
        ]


def code_repo(root: Path) -> Path:
    return write_tree(
        root,
        {
            "app/auth.py": "def login(user, password):\n    return check_password(user, password)\n\n\n"
            "def logout(session):\n    session.clear()\n",
            "app/db.py": "def connect(url):\n    return Engine(url, pool_size=5)\n",
            "docs/guide.md": "# Guide\n\nLog in with your password; log out to clear the session.\n",
            "notes.txt": "Connection pool sizes are tuned per deployment.\n",
        },
    )


QUESTIONS = ["login password", "session clear", "connection pool size", "guide"]


def test_index_lives_in_dot_rag_and_is_ignored_by_git(tmp_path: Path) -> None:
    repo = code_repo(tmp_path / "r")
    report = ingest(repo)
    assert report.index_path == repo.resolve() / ".rag" / "index.sqlite"
    assert (repo / ".rag" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert report.files == 4


def test_incremental_reingest_equals_full_rebuild(tmp_path: Path) -> None:
    repo = code_repo(tmp_path / "r")
    ingest(repo)
    again = ingest(repo)
    assert again.up_to_date
    (repo / "app" / "db.py").write_text(
        "def connect(url, pool_size=10):\n    return Engine(url, pool_size)\n"
    )
    (repo / "notes.txt").unlink()
    (repo / "app" / "cache.py").write_text("def clear_cache():\n    CACHE.clear()\n")
    inc = ingest(repo)
    assert (inc.reused, inc.files) == (2, 4)
    incremental = snapshot(inc.index_path, QUESTIONS)
    full_path = tmp_path / "full.sqlite"
    ingest(repo, index_path=full_path, options=IngestOptions(full=True))
    assert incremental == snapshot(full_path, QUESTIONS)


def test_worker_processes_build_the_index_one_process_builds(tmp_path: Path, monkeypatch) -> None:
    import gc

    import rag.indexing.pipeline

    monkeypatch.setattr(rag.indexing.pipeline, "_PARALLEL_MIN_BYTES", 0)  # the pool even for a small repo
    monkeypatch.setattr(
        rag.indexing.pipeline, "_BATCH_BYTES", 1
    )  # one file per batch: results arrive in turn
    repo = code_repo(tmp_path / "r")
    (repo / "app" / "blob.py").write_bytes(b"\x00\x01\x02 not text")  # read, then skipped as binary
    threshold = gc.get_threshold()
    pooled = ingest(repo, index_path=tmp_path / "pooled.sqlite", options=IngestOptions(workers=2))
    assert gc.get_threshold() == threshold  # ingest collects garbage less often, then restores
    single = ingest(repo, index_path=tmp_path / "single.sqlite", options=IngestOptions(workers=1))
    assert (pooled.files, pooled.chunks) == (single.files, single.chunks) == (4, 5)
    assert snapshot(pooled.index_path, QUESTIONS) == snapshot(single.index_path, QUESTIONS)
    with Index(pooled.index_path) as a, Index(single.index_path) as b:
        assert list(a.records(a.files())) == list(b.records(b.files()))
        assert a.skipped_files() == b.skipped_files() and "app/blob.py" in a.skipped_files()


def table_rows(index_path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows, ordered, but for the moment the index was built."""
    conn = sqlite3.connect(index_path)
    try:
        names = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {
            name: conn.execute(f"SELECT * FROM {name} ORDER BY 1, 2").fetchall()
            if name != "meta"
            else conn.execute("SELECT * FROM meta WHERE key != 'built_at' ORDER BY key").fetchall()
            for name in names
        }
    finally:
        conn.close()


def test_chunks_packed_while_read_are_stored_as_the_writer_packs_them(tmp_path: Path) -> None:
    from rag.store.writer import write_index

    repo = code_repo(tmp_path / "r")
    (repo / "app" / "big.py").write_text(
        "".join(f"def f{i}(x):\n    return x * {i} * x\n\n" for i in range(300))
    )
    read = ingest(repo, index_path=tmp_path / "read.sqlite", options=IngestOptions(workers=1))
    with Index(read.index_path) as index:
        records = list(index.records(index.files()))  # stored ones: nothing packed
        manifest = index.manifest
    assert records and not any(r.packed for r in records)
    write_index(
        tmp_path / "written.sqlite",
        records,
        manifest.tokenizer,
        repo.resolve(),
        manifest.commit,
        manifest.access,
        [],
        manifest.walk,
        None,
        manifest.chunkers,
        lambda: manifest.summary or {},
    )
    assert table_rows(read.index_path) == table_rows(tmp_path / "written.sqlite")


def test_interrupted_ingest_leaves_previous_index_intact(tmp_path: Path, mocker) -> None:
    repo = code_repo(tmp_path / "r")
    report = ingest(repo)
    before = snapshot(report.index_path, QUESTIONS)
    (repo / "app" / "db.py").write_text("def connect(url):\n    raise NotImplementedError\n")
    mocker.patch("rag.store.writer.write_views", side_effect=KeyboardInterrupt)
    with pytest.raises(KeyboardInterrupt):
        ingest(repo)
    assert snapshot(report.index_path, QUESTIONS) == before
    assert [p.name for p in (repo / ".rag").iterdir() if ".tmp-" in p.name] == []


def test_stale_temp_file_of_a_killed_ingest_is_cleaned(tmp_path: Path) -> None:
    repo = code_repo(tmp_path / "r")
    (repo / ".rag").mkdir()
    stale = repo / ".rag" / "index.sqlite.tmp-999999999"
    stale.write_bytes(b"half-written")
    ingest(repo)
    assert not stale.exists()


def test_missing_index_says_which_command_to_run(tmp_path: Path) -> None:
    with pytest.raises(NoIndexError, match=r"run `rag ingest REPO` first"):
        Index(tmp_path / "nope.sqlite")
    with pytest.raises(NoIndexError, match="No index found for"):
        locate_index(None, tmp_path)


def test_corrupt_index_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "index.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(IndexFormatError, match="corrupt .* re-run `rag ingest"):
        Index(bad)


def test_old_format_version_says_to_reingest(tmp_path: Path) -> None:
    repo = code_repo(tmp_path / "r")
    path = ingest(repo).index_path
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'format_version'")
    with pytest.raises(IndexFormatError, match=f"format version 0, this tool reads version {FORMAT_VERSION}"):
        Index(path)


def test_an_index_of_an_older_format_is_rebuilt_not_reused(tmp_path: Path) -> None:
    # format 8 indexes were chunked and redacted by older rules: their unchanged files may hold
    # credentials that the rules of format 9 redact, so nothing of them is reused
    repo = code_repo(tmp_path / "r")
    path = ingest(repo).index_path
    with sqlite3.connect(path) as conn:
        conn.execute(f"UPDATE meta SET value = '{FORMAT_VERSION - 1}' WHERE key = 'format_version'")
    report = ingest(repo)
    assert not report.up_to_date and report.reused == 0 and report.files == 4
    with Index(path) as index:
        assert index.manifest.format_version == FORMAT_VERSION


def test_truncated_index_fails_cleanly_at_query_time(tmp_path: Path) -> None:
    repo = code_repo(tmp_path / "r")
    path = ingest(repo).index_path
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(IndexFormatError), Index(path) as index:
        search(index, "login password")


def test_repo_without_indexable_files(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "r", {"logo.png": b"\x89PNG\r\n\x1a\n\0\0", "empty.txt": ""})
    with pytest.raises(NothingToIndexError, match="No indexable files"):
        ingest(repo)


def test_index_found_from_a_subdirectory_and_from_where_ingest_ran(tmp_path: Path) -> None:
    repo = code_repo(tmp_path / "r")
    path = ingest(repo).index_path
    assert locate_index(None, repo / "app") == str(path)  # a str: a query does not import pathlib
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    remember_index(elsewhere, path)
    assert locate_index(None, elsewhere) == str(path)
    assert locate_index(repo, tmp_path) == str(path)  # --index may name the repo
    assert locate_index(repo / ".rag", tmp_path) == str(path)  # or its .rag folder


@pytest.mark.parametrize(("scoring", "column"), [("tfidf", "norms"), ("bm25", "bm25k")])
def test_query_reads_only_what_it_needs(
    tmp_path: Path, scoring: str, column: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A query fetches the postings of its terms, the blocks of one per-chunk array (cosine:
    # norms, BM25: its length normalisers) that hold their chunks, and the text of the top k,
    # not every chunk. With blocks of 8 chunks, the 50 chunks make 7 blocks.
    monkeypatch.setattr(sys.modules["rag.store.format"], "ARRAY_BLOCK", 8)
    repo = write_tree(tmp_path / "r", {f"f{i}.txt": f"topic{i} shared words here\n" for i in range(50)})
    path = ingest(repo, options=IngestOptions(settings=TokenizerSettings(mode="plain"))).index_path
    statements: list[str] = []

    def blocks_read() -> int:
        return sum(s.count(f"'{column}:0#") for s in statements if "FROM arrays" in s)

    with Index(path) as index:
        index._conn.set_trace_callback(statements.append)
        search(index, "topic7", k=2, scoring=scoring)  # one chunk: one block
        assert blocks_read() == 1
        statements.clear()
        search(index, "topic7 shared", k=2, scoring=scoring)  # "shared" is in every chunk
        assert blocks_read() == 6  # the other six; the first is kept
    # postings are read for the two terms; rag.retrieval.spelling's known-term checks read keys, no postings
    assert sum("SELECT postings, maxw, maxb FROM terms WHERE term" in s for s in statements) == 2
    chunk_reads = [s for s in statements if "c.body" in s]
    assert len(chunk_reads) == 1
    # only the candidates for the top 2, not the 50 chunks that share a term with the query
    assert len(chunk_reads[0].split(" IN (")[1].split(",")) == candidate_count(2) < 50


def test_the_postings_of_terms_are_counted_without_reading_them(worked_repo: Path) -> None:
    # the count a query decides numpy by: each known term's postings once, an unknown term none
    path = ingest(worked_repo).index_path
    with Index(path) as index:
        billing = index.tokenizer.query_counts("billing")
        assert len(billing) == 1
        term = next(iter(billing))
        card = next(iter(index.tokenizer.query_counts("card")))
        held = len(index.postings(term)[0]) + len(index.postings(card)[0])
        assert held == 5  # billing in all four files, card in one
        assert index.postings_count([term, card, term, "neverseenword"]) == held
        assert index.postings_count([]) == 0


def test_files_skipped_after_reading_are_not_read_again(tmp_path: Path, mocker) -> None:
    repo = code_repo(tmp_path / "r")
    write_tree(repo, {"empty.txt": "", "blob.dat": b"\0\1\2"})
    first = ingest(repo)
    assert first.skipped == {"empty": 1, "binary": 1}
    reads = mocker.patch("rag.indexing.pipeline.read_text", side_effect=AssertionError("re-read"))
    again = ingest(repo)
    assert again.up_to_date and again.skipped == {"empty": 1, "binary": 1}
    assert reads.call_count == 0


def big_repo(root: Path) -> Path:
    files = {
        f"pkg/mod{i:02d}.py": f'def handler_{i}(request):\n    """Handle request {i} with the session."""\n'
        f"    return render(request, 'page{i}.html', session=request.session)\n\n\n"
        f"class Model{i}:\n    table = 'table_{i}'\n"
        for i in range(40)
    }
    files["README.md"] = "# Pages\n\nEvery handler renders a page with the session of the request.\n"
    files["secret/keys.md"] = "# Rotation\n\nRotate the session signing key every month.\n"
    files[".rag-access"] = "secret/ ops\n"
    return write_tree(root, files)


BIG_QUESTIONS = [
    "handler session request",
    "render page",
    "model table",
    "rotate signing key",
    "brandnewterm",
    "handle request 7",
    "Model39",
]


@pytest.mark.parametrize("scoring", ["tfidf", "bm25"])
def test_update_in_place_equals_full_rebuild(tmp_path: Path, mocker, scoring: str) -> None:
    repo = big_repo(tmp_path / "r")
    ingest(repo)
    (repo / "pkg" / "mod03.py").write_text("def handler_3(request):\n    return brandnewterm(request)\n")
    (repo / "pkg" / "mod07.py").unlink()
    (repo / "pkg" / "extra.py").write_text(
        'def extra(session):\n    """Rotate the session."""\n    return 1\n'
    )
    (repo / "pkg" / "mod39.py").write_text("")  # now empty: its chunks and its unique terms go
    update = mocker.spy(sys.modules["rag.indexing.pipeline"], "update_index")
    report = ingest(repo)
    assert update.call_count == 1 and report.reused == 39
    full = tmp_path / "full.sqlite"
    ingest(repo, index_path=full, options=IngestOptions(full=True))
    for groups in (frozenset(), frozenset({"ops"})):
        with Index(report.index_path) as a, Index(full) as b:
            for q in BIG_QUESTIONS:
                got = [
                    (h.chunk.path, h.chunk.start_line, h.chunk.end_line, h.score)
                    for h in search(a, q, 10, groups=groups, scoring=scoring)
                ]
                want = [
                    (h.chunk.path, h.chunk.start_line, h.chunk.end_line, h.score)
                    for h in search(b, q, 10, groups=groups, scoring=scoring)
                ]
                assert [g[:3] for g in got] == [w[:3] for w in want], q
                assert all(abs(g[3] - w[3]) < 1e-12 for g, w in zip(got, want)), q
            assert a.manifest.n_chunks == b.manifest.n_chunks and a.manifest.n_terms == b.manifest.n_terms
    with Index(report.index_path) as a:
        assert a.postings("model39") is None  # a term whose last chunk went is gone


@pytest.mark.parametrize("scoring", ["tfidf", "bm25"])
def test_an_index_kept_open_sees_an_update_whole(tmp_path: Path, mocker, scoring: str) -> None:
    # a long-lived reader (a server, `rag eval`) searches, the index is updated in place by
    # another connection, and it searches again: it must answer as a fresh reader does, not
    # mix the old views, blocks and manifest with the new postings
    repo = big_repo(tmp_path / "r")
    path = ingest(repo).index_path
    update = mocker.spy(sys.modules["rag.indexing.pipeline"], "update_index")
    with Index(path) as kept:
        for q in BIG_QUESTIONS:
            search(kept, q, 10, scoring=scoring)
        before = kept.manifest.n_chunks
        (repo / "pkg" / "extra.py").write_text("def extra(session):\n    return brandnewterm(session)\n")
        (repo / "pkg" / "mod07.py").unlink()
        ingest(repo)
        assert update.call_count == 1
        with Index(path) as fresh:
            for q in BIG_QUESTIONS:
                got = [
                    (h.chunk.path, h.chunk.start_line, h.score) for h in search(kept, q, 10, scoring=scoring)
                ]
                want = [
                    (h.chunk.path, h.chunk.start_line, h.score) for h in search(fresh, q, 10, scoring=scoring)
                ]
                assert got == want, q
        assert kept.manifest.n_chunks == fresh.manifest.n_chunks != before


def test_update_killed_mid_transaction_leaves_previous_index(tmp_path: Path, mocker) -> None:
    repo = big_repo(tmp_path / "r")
    path = ingest(repo).index_path
    before = snapshot(path, BIG_QUESTIONS)
    (repo / "pkg" / "mod05.py").write_text("def changed():\n    return 'brandnewterm'\n")
    mocker.patch("rag.store.writer.write_views", side_effect=KeyboardInterrupt)
    with pytest.raises(KeyboardInterrupt):
        ingest(repo)
    assert snapshot(path, BIG_QUESTIONS) == before


def test_touched_file_is_not_rechunked_and_renamed_file_reuses_its_chunks(tmp_path: Path, mocker) -> None:
    repo = big_repo(tmp_path / "r")
    ingest(repo)
    os.utime(repo / "pkg" / "mod01.py", ns=(1, 1))  # same bytes, new mtime
    chunked = mocker.spy(sys.modules["rag.indexing.pipeline"], "chunk_file")
    assert ingest(repo).up_to_date
    assert chunked.call_count == 0
    assert ingest(repo).up_to_date  # the new mtime was remembered: nothing is hashed again
    (repo / "pkg" / "mod02.py").rename(repo / "pkg" / "renamed.py")
    report = ingest(repo)
    assert chunked.call_count == 0 and not report.up_to_date
    with Index(report.index_path) as index:
        assert search(index, "handler_2")[0].chunk.path == "pkg/renamed.py"
    full = tmp_path / "full.sqlite"
    ingest(repo, index_path=full, options=IngestOptions(full=True))
    assert snapshot(report.index_path, BIG_QUESTIONS) == snapshot(full, BIG_QUESTIONS)


def test_reingest_keeps_the_tokenizer_the_index_was_built_with(worked_repo: Path) -> None:
    ingest(worked_repo, options=IngestOptions(settings=TokenizerSettings(mode="plain")))
    (worked_repo / "new.txt").write_text("Refund requests are handled by billing.\n")
    report = ingest(worked_repo)  # no tokenizer given: keep plain, and so reuse the unchanged files
    assert report.reused == 4
    with Index(report.index_path) as index:
        assert index.manifest.tokenizer.mode == "plain"


def test_reingest_and_refresh_keep_the_walk_options(tmp_path: Path) -> None:
    repo = code_repo(tmp_path / "r")
    first = ingest(repo, options=IngestOptions(include=("*.py",), max_bytes=10_000))
    assert first.files == 2
    (repo / "app" / "db.py").write_text("def connect(url):\n    return Engine(url, pool_size=7)\n")
    again = ingest(repo)  # nothing given: --include *.py and the size limit still apply
    assert (again.files, again.reused) == (2, 1)
    from rag.retrieval.retrieve import Request, retrieve

    (repo / "app" / "auth.py").write_text("def login(user):\n    return True\n")
    found = retrieve(first.index_path, Request("guide log session", 10, refresh=True))
    assert {h.chunk.path for h in found.hits} <= {"app/auth.py", "app/db.py"}
    with Index(first.index_path) as index:
        assert index.manifest.walk == {"include": ["*.py"], "exclude": [], "max_bytes": 10_000}
    wider = ingest(repo, options=IngestOptions(include=("*",)))
    assert wider.files == 4


def test_raising_the_size_limit_indexes_files_that_were_too_large(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "r", {"small.txt": "alpha words\n", "big.txt": "beta words " * 200 + "\n"})
    assert ingest(repo, options=IngestOptions(max_bytes=1000)).files == 1
    assert ingest(repo, options=IngestOptions(max_bytes=100_000)).files == 2


def test_query_freshness_checks_only_the_folders_above_its_files(tmp_path: Path, mocker) -> None:
    repo = write_tree(
        tmp_path / "r", {f"pkg{i}/sub/m.py": f"def f{i}():\n    return {i}\n" for i in range(30)}
    )
    path = ingest(repo).index_path
    (repo / "pkg3" / "sub" / "new.py").write_text("def g():\n    return 0\n")
    with Index(path) as index:
        stat = mocker.spy(os, "stat")
        assert index.changed_files(["pkg3/sub/m.py"], everywhere=False) == ["pkg3/sub/"]
        assert stat.call_count == 3  # the root exists, the file, its folder: not the 29 other folders
        assert index.changed_files(["pkg4/sub/m.py"], everywhere=False) == []
        assert index.changed_files(everywhere=True) == ["pkg3/sub/"]


def as_other_byte_order(path: Path) -> None:
    """Rewrite an index as a machine of the other byte order would have written it: every stored
    array swapped, and the manifest saying so."""
    from array import array

    def swapped(typecode: str, data: bytes) -> bytes:
        values = array(typecode, data)
        values.byteswap()
        return values.tobytes()

    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = 'byteorder'",
            ('"big"' if sys.byteorder == "little" else '"little"',),
        )
        # postings and forward lists are packed little-endian on every machine: only the arrays differ
        typecodes = {"classes": "H", "lengths": "I"}
        conn.executemany(
            "UPDATE arrays SET data = ? WHERE name = ?",
            [
                (swapped(typecodes.get(name, "d"), data), name)
                for name, data in conn.execute("SELECT name, data FROM arrays").fetchall()
            ],
        )


@pytest.mark.parametrize("scoring", ["tfidf", "bm25"])
def test_an_index_written_in_the_other_byte_order_reads_the_same(tmp_path: Path, scoring: str) -> None:
    # an index copied from a machine of the other byte order: results, scores and explanations
    # must not change
    repo = big_repo(tmp_path / "r")
    path = ingest(repo).index_path
    other = tmp_path / "other.sqlite"
    other.write_bytes(path.read_bytes())
    as_other_byte_order(other)
    for groups in (frozenset(), frozenset({"ops"})):
        with Index(path) as a, Index(other) as b:
            for q in BIG_QUESTIONS:
                want = search(a, q, 10, explain=True, groups=groups, scoring=scoring)
                assert search(b, q, 10, explain=True, groups=groups, scoring=scoring) == want, q


def test_an_index_in_the_other_byte_order_is_rebuilt_not_updated_in_place(tmp_path: Path, mocker) -> None:
    # updating it in place would mix the two byte orders in one file
    repo = big_repo(tmp_path / "r")
    path = ingest(repo).index_path
    as_other_byte_order(path)
    (repo / "pkg" / "mod03.py").write_text("def handler_3(request):\n    return brandnewterm(request)\n")
    update = mocker.spy(sys.modules["rag.indexing.pipeline"], "update_index")
    report = ingest(repo)
    assert update.call_count == 0 and report.reused == 41  # the unchanged files' chunks, read back
    with sqlite3.connect(path) as conn:
        assert (
            conn.execute("SELECT value FROM meta WHERE key = 'byteorder'").fetchone()[0]
            == f'"{sys.byteorder}"'
        )
    full = tmp_path / "full.sqlite"
    ingest(repo, index_path=full, options=IngestOptions(full=True))
    assert snapshot(path, BIG_QUESTIONS) == snapshot(full, BIG_QUESTIONS)


def test_an_empty_repository_argument_is_an_error_not_the_current_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(code_repo(tmp_path / "r"))
    with pytest.raises(InputError, match="No repository path given"):
        ingest("")
    assert not (tmp_path / "r" / ".rag").exists()


def test_ingest_will_not_write_over_a_file_that_is_not_an_index(tmp_path: Path) -> None:
    repo = code_repo(tmp_path / "r")
    notes = tmp_path / "notes.txt"
    notes.write_text("my important notes\n")
    with pytest.raises(InputError, match="exists and is not a rag index"):
        ingest(repo, index_path=notes)
    assert notes.read_text() == "my important notes\n"
    app_db = tmp_path / "db.sqlite3"  # an application's database: SQLite, but not ours
    conn = sqlite3.connect(app_db)
    with conn:
        conn.execute("CREATE TABLE users(name TEXT)")
        conn.execute("INSERT INTO users VALUES ('ada')")
    conn.close()
    with pytest.raises(InputError, match="exists and is not a rag index"):
        ingest(repo, index_path=app_db)
    conn = sqlite3.connect(app_db)
    assert conn.execute("SELECT name FROM users").fetchall() == [("ada",)]
    conn.close()
    old = tmp_path / "old.sqlite"  # an index written before the application id: rebuilt
    ingest(repo, index_path=old)
    conn = sqlite3.connect(old)
    conn.execute("PRAGMA application_id = 0")
    conn.close()
    assert ingest(repo, index_path=old, options=IngestOptions(full=True)).files == 4
    damaged = tmp_path / "damaged.sqlite"  # an index whose pages were overwritten: rebuilt
    ingest(repo, index_path=damaged)
    with open(damaged, "r+b") as fh:  # every page after the header page
        fh.seek(4096)
        fh.write(b"\xff" * (os.path.getsize(damaged) - 4096))
    assert ingest(repo, index_path=damaged).files == 4
    assert snapshot(damaged, QUESTIONS)[0][0][0] == "app/auth.py"


def test_an_ingest_with_nothing_to_index_clears_the_stale_note(tmp_path: Path) -> None:
    repo = code_repo(tmp_path / "r")
    (repo / ".gitignore").write_text("*.log\n")
    ingest(repo)
    (repo / "app" / "debug.log").write_text("ignored, but it moves the folder's mtime\n")
    os.utime(repo / "app", ns=(5, 5))  # whatever the file system's mtime granularity
    with Index(repo / ".rag" / "index.sqlite") as index:
        assert index.changed_files() == ["app/"]
    assert ingest(repo).up_to_date
    with Index(repo / ".rag" / "index.sqlite") as index:
        assert index.changed_files() == []


def test_a_rename_that_changes_how_a_file_is_chunked_is_chunked_again(tmp_path: Path) -> None:
    repo = code_repo(tmp_path / "r")
    (repo / "tool").write_text(
        "#!/usr/bin/env python3\ndef alpha_function():\n    return 1\n\n\n"
        "class Beta:\n    def run(self):\n        return alpha_function()\n"
    )
    ingest(repo)
    (repo / "tool").rename(repo / "tool.cfg")  # same bytes; an extension: plain text, not python
    report = ingest(repo)
    full = tmp_path / "full.sqlite"
    ingest(repo, index_path=full, options=IngestOptions(full=True))
    for path in (report.index_path, full):
        with Index(path) as index:
            assert [(c.start_line, c.kind) for _, c, _ in index.all_chunks() if c.path == "tool.cfg"] == [
                (1, "text")
            ]
    assert snapshot(report.index_path, QUESTIONS + ["alpha function beta"]) == snapshot(
        full, QUESTIONS + ["alpha function beta"]
    )


def _damaged_copies(tmp_path: Path, good: Path) -> Iterator[Path]:
    """Copies of the index with each page in turn damaged: its b-tree header overwritten by 64
    bytes of 0xff, or the whole page."""
    data = good.read_bytes()
    page = 4096
    for n in range(1, len(data) // page):  # page 0 holds the header: its damage is "not a database"
        for start, length in ((8, 64), (0, page)):
            bad = tmp_path / f"bad{n}-{start}.sqlite"
            at = n * page + start
            bad.write_bytes(data[:at] + b"\xff" * length + data[at + length :])
            yield bad


def test_a_damaged_index_is_one_error_whatever_page_was_hit(tmp_path: Path) -> None:
    from rag.retrieval.retrieve import Request, retrieve

    good = ingest(code_repo(tmp_path / "r")).index_path
    outcomes = {"answered": 0, "refused": 0}
    for bad in _damaged_copies(tmp_path, good):
        try:
            for question in QUESTIONS:
                retrieve(bad, Request(question, k=4, explain=True))
            outcomes["answered"] += 1
        except (IndexFormatError, NoIndexError):  # never a traceback of another kind
            outcomes["refused"] += 1
        bad.unlink()
    assert outcomes["refused"] > 0


def test_eval_on_a_damaged_index_is_one_line_whatever_page_was_hit(tmp_path: Path) -> None:
    import json

    from rag.evaluation import run_eval

    good = ingest(code_repo(tmp_path / "r")).index_path
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"q{i}",
                    "question": q,
                    "answers": [{"path": "app/auth.py", "start_line": 1, "end_line": 2}],
                }
            )
            + "\n"
            for i, q in enumerate(QUESTIONS)
        )
    )
    refused = []
    for bad in _damaged_copies(tmp_path, good):
        try:
            run_eval(questions, index_path=bad, explain=True)
        except (IndexFormatError, NoIndexError) as exc:  # was: OperationalError from the search
            refused.append(str(exc))
        bad.unlink()
    assert refused and all("\n" not in message and message.endswith("--full`") for message in refused)


@pytest.mark.parametrize(
    "edit",
    [
        "UPDATE meta SET value = '0' WHERE key = 'bm25_avglen'",
        "UPDATE meta SET value = '0' WHERE key = 'array_block'",
        "UPDATE meta SET value = 'null' WHERE key = 'root'",
        "UPDATE meta SET value = '\"8\"' WHERE key = 'format_version'",
        "UPDATE chunks SET body = x'6bf80f00'",  # deflates b"\x80\xff"
        "UPDATE chunks SET body = x'ffff'",
        "UPDATE chunks SET head = 1000000",
        "UPDATE terms SET postings = x'09ff'",
        "DELETE FROM chunks",
        "DELETE FROM views",
        "DELETE FROM classes",
    ],
    ids=[
        "avglen-0",
        "block-0",
        "root-null",
        "version-text",
        "text-not-utf8",
        "text-not-deflated",
        "context-beyond-text",
        "postings-unknown-form",
        "no-chunks",
        "no-views",
        "no-classes",
    ],
)
def test_an_index_with_impossible_contents_is_one_error(tmp_path: Path, edit: str) -> None:
    from rag.retrieval.retrieve import Request, retrieve

    index_path = ingest(code_repo(tmp_path / "r")).index_path
    conn = sqlite3.connect(index_path)
    with conn:
        conn.execute(edit)
    conn.close()
    with pytest.raises(IndexFormatError, match=r"re-run `rag ingest"):
        retrieve(index_path, Request("login password", k=4))


def test_a_rename_reads_the_first_line_as_chunking_does_with_old_mac_line_ends(tmp_path: Path) -> None:
    repo = code_repo(tmp_path / "r")
    (repo / "tool.py").write_bytes(b"#!/bin/sh\rexec python3 -c 'print(1)'\rdef helper():\r    return 2\r")
    ingest(repo)
    (repo / "tool.py").rename(repo / "tool")  # no extension: the shebang (sh) decides: shell, not Python
    report = ingest(repo)
    full = tmp_path / "full.sqlite"
    ingest(repo, index_path=full, options=IngestOptions(full=True))
    for path in (report.index_path, full):
        with Index(path) as index:
            chunks = [c for _, c, _ in index.all_chunks() if c.path == "tool"]
            assert [c.kind for c in chunks] == (["module"] if languages_available() else ["text"])
            assert "helper" not in [c.symbol for c in chunks]


def test_an_index_in_a_folder_whose_name_holds_uri_characters(tmp_path: Path) -> None:
    repo = code_repo(tmp_path / "C#proj?v=1%20")  # '#', '?' and '%' mean something in a URI
    report = ingest(repo)
    assert snapshot(report.index_path, QUESTIONS)[0][0][0] == "app/auth.py"
    conn = sqlite3.connect(report.index_path)
    conn.execute("PRAGMA application_id = 0")  # as an index written before the id
    conn.close()
    assert (
        ingest(repo, options=IngestOptions(full=True)).files == 4
    )  # recognised by its meta table, and rebuilt


def test_a_file_that_only_looks_marked_is_not_an_index(tmp_path: Path) -> None:
    fake = tmp_path / "notes.txt"
    fake.write_bytes(b"x" * 68 + b"rag!" + b" my notes\n")  # the id's bytes, but no SQLite header
    with pytest.raises(InputError, match="exists and is not a rag index"):
        ingest(code_repo(tmp_path / "r"), index_path=fake)
    assert fake.read_bytes().endswith(b"my notes\n")


def test_a_rename_strips_one_byte_order_mark_as_reading_does(tmp_path: Path) -> None:
    repo = code_repo(tmp_path / "r")
    (repo / "tool.py").write_bytes(
        "\ufeff\ufeff#!/usr/bin/env python3\ndef helper():\n    return 2\n".encode()
    )
    ingest(repo)
    (repo / "tool.py").rename(repo / "tool")  # the text starts with a BOM: no shebang, so text
    report = ingest(repo)
    full = tmp_path / "full.sqlite"
    ingest(repo, index_path=full, options=IngestOptions(full=True))
    kinds = []
    for path in (report.index_path, full):
        with Index(path) as index:
            kinds.append([c.kind for _, c, _ in index.all_chunks() if c.path == "tool"])
    assert kinds[0] == kinds[1] == ["text"]


@pytest.mark.parametrize("build", ["up to date", "update", "full"])
def test_a_file_added_after_the_walk_leaves_its_folder_stale(tmp_path: Path, mocker, build: str) -> None:
    repo = code_repo(tmp_path / "r")
    report = ingest(repo)
    if build != "up to date":
        (repo / "app" / "db.py").write_text("def connect(url):\n    return Engine(url, pool_size=9)\n")
    from rag.sources import walk as files

    real = files.walk

    def walk_then_add(*args, **kwargs):
        listing = real(*args, **kwargs)
        (repo / "app" / "late.py").write_text("def late():\n    return 1\n")
        os.utime(repo / "app", ns=(7, 7))  # a distinct mtime, whatever the file system's granularity
        return listing

    mocker.patch("rag.indexing.plan.walk", side_effect=walk_then_add)
    again = ingest(repo, options=IngestOptions(full=build == "full"))
    if build == "up to date":
        assert again.up_to_date  # the walk saw nothing new
    else:
        assert not again.up_to_date and again.files == 4  # late.py came after the listing
    with Index(report.index_path) as index:
        assert index.changed_files() == ["app/"]  # so a query says so, until the next ingest


@pytest.mark.parametrize("how", ["copy", "move"])
def test_a_repository_copied_or_moved_with_its_index(tmp_path: Path, how: str) -> None:
    import shutil

    from rag.retrieval.retrieve import Request, retrieve

    original = code_repo(tmp_path / "orig")
    ingest(original)
    moved = tmp_path / "moved"
    (shutil.copytree if how == "copy" else shutil.move)(original, moved)
    (moved / "app" / "db.py").write_text(
        "def connect(url):\n    return Engine(url, pool_size=5, giraffe=True)\n"
    )
    index_path = moved / ".rag" / "index.sqlite"
    # its index still names the old folder: a query refuses rather than check (or --refresh
    # re-read) that folder's files, which may be gone, or another repository's
    with pytest.raises(InputError, match=f"built for {original.resolve()}.*re-run `rag ingest {moved}"):
        retrieve(index_path, Request("giraffe pool", 4))
    found = retrieve(index_path, Request("giraffe pool", 4, refresh=True))  # re-reads the new folder
    assert [h.chunk.path for h in found.hits][:1] == ["app/db.py"] and found.changed == []
    with Index(index_path) as index:
        assert index.manifest.root == str(moved.resolve())


def test_reingest_of_a_copied_repository_stores_its_new_root(tmp_path: Path) -> None:
    import shutil

    original = code_repo(tmp_path / "orig")
    ingest(original)
    copy = Path(shutil.copytree(original, tmp_path / "copy", copy_function=shutil.copy2))  # mtimes kept
    report = ingest(copy)
    assert (report.files, report.reused) == (4, 4)  # nothing re-read, and yet not "up to date"
    with Index(report.index_path) as index:
        assert index.manifest.root == str(copy.resolve())
    assert ingest(copy).up_to_date


def test_a_query_answers_from_the_index_when_the_repository_is_gone_and_says_so(tmp_path: Path) -> None:
    import shutil

    from rag.retrieval.retrieve import Request, retrieve

    repo = code_repo(tmp_path / "r")
    report = ingest(repo, tmp_path / "elsewhere.sqlite")
    shutil.rmtree(repo)
    found = retrieve(report.index_path, Request("login password", 4))  # the passages are in the index
    assert found.hits[0].chunk.path == "app/auth.py" and found.gone == str(repo.resolve())
    assert retrieve(report.index_path, Request("zzyzx", 4)).gone == str(repo.resolve())


def test_ingest_over_a_damaged_index(tmp_path: Path) -> None:
    # SQLite opens a file with a damaged page and fails only when the page is read: listing
    # the files, reading chunks to reuse, updating postings. Each page in turn is damaged.
    # An ingest that meets the damage builds afresh; one that does not (an update in place)
    # leaves it where it was, for a query to report with the fix that works: --full.
    repo = code_repo(tmp_path / "r")
    index_path = ingest(repo).index_path
    good = index_path.read_bytes()
    page = 4096
    assert len(good) // page >= 8
    questions = QUESTIONS + ["pool size"]
    outcomes = set()
    for number in range(1, len(good) // page):  # page 0 holds the header that marks the file as ours
        damaged = bytearray(good)
        damaged[number * page : (number + 1) * page] = b"\xff" * page
        index_path.write_bytes(bytes(damaged))
        (repo / "app" / "db.py").write_text(
            f"def connect(url):\n    return Engine(url, pool_size={number + 10})\n"
        )
        report = ingest(repo)  # was: DatabaseError, or "corrupt — re-run ingest" (which did not help)
        assert report.files == 4, number
        expected = tmp_path / f"fresh{number}.sqlite"
        ingest(repo, expected, options=IngestOptions(full=True))
        try:
            assert snapshot(index_path, questions) == snapshot(expected, questions), number
            outcomes.add("rebuilt" if report.reused == 0 else "updated")
        except IndexFormatError as exc:
            assert str(exc).endswith("— re-run `rag ingest REPO --full`"), number
            outcomes.add("reported")
            ingest(repo, options=IngestOptions(full=True))
            assert snapshot(index_path, questions) == snapshot(expected, questions), number
    assert "rebuilt" in outcomes  # most pages: the ingest met the damage


def test_an_index_that_cannot_be_written_is_one_line_and_the_old_one_stays(
    tmp_path: Path, monkeypatch
) -> None:
    import rag.indexing.pipeline
    import rag.store.writer
    from rag import IndexWriteError

    repo = code_repo(tmp_path / "r")
    index_path = ingest(repo).index_path
    before = snapshot(index_path, QUESTIONS)

    def full_disk(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(rag.indexing.pipeline, "update_index", full_disk)  # an update in place
    monkeypatch.setattr(
        rag.store.writer.IndexWriter, "finish", full_disk
    )  # and the full build it falls back to
    (repo / "app" / "db.py").write_text("def connect(url):\n    return Engine(url, pool_size=9)\n")
    with pytest.raises(
        IndexWriteError, match=r"^Could not write the index at .*\(database or disk is full\) — check"
    ):
        ingest(repo)
    assert snapshot(index_path, QUESTIONS) == before
    assert [p.name for p in index_path.parent.iterdir() if ".tmp-" in p.name] == []


def test_a_chunker_that_overflows_the_stack_does_not_end_the_ingest(tmp_path: Path, monkeypatch) -> None:
    import rag.chunking.python

    chunk_python = rag.chunking.python.chunk_python

    def overflowing(path: str, text: str, on_fallback=None) -> list:
        if path == "app/db.py":
            raise RecursionError("maximum recursion depth exceeded")
        return chunk_python(path, text, on_fallback)

    monkeypatch.setattr(rag.chunking.python, "chunk_python", overflowing)
    report = ingest(code_repo(tmp_path / "r"), options=IngestOptions(workers=1))
    assert report.files == 4
    with Index(report.index_path) as index:
        hits = search(index, "connect engine pool size", k=1)
    assert [(h.chunk.path, h.chunk.kind, h.chunk.symbol, h.chunk.start_line) for h in hits] == [
        ("app/db.py", "text", None, 1)
    ]  # indexed as paragraphs


def test_ingest_over_random_byte_damage_is_never_a_traceback(tmp_path: Path) -> None:
    # a few bytes changed anywhere past the header: what SQLite reads without complaint can still
    # come back as the wrong type or size (TypeError, IndexError) in an update in place
    import random

    repo = write_tree(
        tmp_path / "r",
        {
            f"app/m{i}.py": f"def handler_{i}(request):\n    '''Handle {i} requests for the login page'''\n"
            f"    return render(request, 'page{i}.html')\n\n\nclass Service{i}:\n    def run(self):\n"
            f"        return {i}\n"
            for i in range(30)
        },
    )
    index_path = ingest(repo).index_path
    good = index_path.read_bytes()
    rng = random.Random(1)
    outcomes: Counter[str] = Counter()
    for trial in range(150):
        damaged = bytearray(good)
        for _ in range(rng.randint(1, 8)):
            damaged[rng.randrange(100, len(damaged))] = rng.randrange(256)
        index_path.write_bytes(bytes(damaged))
        (repo / "app" / "m3.py").write_text(f"def handler_3(request):\n    return {trial}\n")
        try:
            outcomes["indexed" if ingest(repo).files == 30 else "short"] += 1
        except (IndexFormatError, InputError) as exc:  # one line, the CLI's exit 1
            outcomes[type(exc).__name__] += 1
    assert outcomes == {"indexed": 150}


def test_an_index_written_into_a_parent_folder_is_not_taken_for_a_moved_one(tmp_path: Path) -> None:
    from rag.retrieval.retrieve import Request, retrieve

    parent = write_tree(tmp_path / "r3", {name: f"top-level {name}\n" for name in ("README.md", "setup.py")})
    package = write_tree(
        parent / "pkg",
        {name: f"the package's own {name}, with more words in it\n" for name in ("README.md", "setup.py")},
    )
    report = ingest(package, parent / ".rag" / "index.sqlite")  # REPO/.rag/index.sqlite of another REPO
    found = retrieve(
        report.index_path, Request("package words", 4, refresh=True, rerank="none")
    )  # was: refused, or re-read r3
    assert sorted(h.chunk.path for h in found.hits) == ["README.md", "setup.py"]  # pkg's, not r3's
    with Index(report.index_path) as index:
        assert index.manifest.root == str(package.resolve()) and index.moved_repository() is None


def test_ingest_puts_the_signal_handlers_back_however_it_ends(tmp_path: Path, monkeypatch) -> None:
    import signal

    import rag.indexing.pipeline
    from rag.errors import terminations_as_exit

    def mine(signum: int, frame: object) -> None:
        pass

    def failing_write(path, records, *args, **kwargs):
        next(iter(records))
        raise RuntimeError("disk hiccup")

    repo = code_repo(tmp_path / "r")
    monkeypatch.setattr(rag.indexing.pipeline, "_PARALLEL_MIN_BYTES", 0)  # worker processes even for 4 files
    previous = signal.signal(signal.SIGTERM, mine)
    try:
        ingest(repo, options=IngestOptions(workers=2))
        assert signal.getsignal(signal.SIGTERM) is mine
        monkeypatch.setattr(rag.indexing.pipeline, "write_index", failing_write)
        with pytest.raises(RuntimeError, match="disk hiccup"), terminations_as_exit():  # a caller's own, too
            ingest(repo, options=IngestOptions(full=True, workers=2))
        # was: the ingest's handler, put back by its worker generator after the caller's context had ended
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_the_old_format_message_names_the_command_that_rebuilds_that_index(tmp_path: Path) -> None:
    repo = code_repo(tmp_path / "my repo")
    for index_path in (None, tmp_path / "kept elsewhere" / "index.db"):
        path = ingest(repo, index_path).index_path
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE meta SET value = '0' WHERE key = 'format_version'")
        with pytest.raises(IndexFormatError) as caught:
            Index(path)
        root = str(repo.resolve())
        expected = f"rag ingest '{root}'" + ("" if index_path is None else f" --index '{path}'")
        assert str(caught.value).endswith(f"re-run `{expected}`")  # quoted: the paths hold a blank
        path.unlink()


def test_a_query_on_an_index_kept_in_a_folder_of_its_own_does_not_list_the_files(
    tmp_path: Path, monkeypatch
) -> None:
    from rag.retrieval.retrieve import Request, retrieve

    repo = code_repo(tmp_path / "r")
    (tmp_path / "store").mkdir()
    report = ingest(repo, tmp_path / "store")  # --index DIR: DIR/.rag/index.sqlite, DIR not a copy
    assert report.index_path == tmp_path / "store" / ".rag" / "index.sqlite"
    asked: list[str] = []
    query = Index._query

    def recorded(self: Index, sql: str, args: tuple[object, ...] = ()) -> sqlite3.Cursor:
        asked.append(sql)
        return query(self, sql, args)

    monkeypatch.setattr(Index, "_query", recorded)
    assert retrieve(report.index_path, Request("login password", 4)).hits
    assert not any(sql.startswith("SELECT path FROM files ORDER BY") for sql in asked)


def test_the_old_format_message_of_a_copied_repository_names_the_copy(tmp_path: Path) -> None:
    import shutil

    original = code_repo(tmp_path / "orig")
    ingest(original)
    copy = Path(shutil.copytree(original, tmp_path / "copy"))
    with sqlite3.connect(copy / ".rag" / "index.sqlite") as conn:
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'format_version'")
    with pytest.raises(IndexFormatError, match=f"re-run `rag ingest {copy.resolve()}`$"):
        Index(copy / ".rag" / "index.sqlite")


def test_a_callers_error_is_not_taken_for_damage_without_an_index(tmp_path: Path) -> None:
    starts: list[int] = []

    def broken_progress(n: int, n_bytes: int) -> None:
        raise ValueError("a bug in the caller's progress bar")

    with pytest.raises(ValueError, match="progress bar"):
        ingest(
            code_repo(tmp_path / "r"),
            progress=broken_progress,
            on_start=lambda n, b: starts.append(n),
            options=IngestOptions(workers=1),
        )
    assert starts == [4]  # raised at once: no second, full build of a first index


def test_a_manifest_value_damaged_to_null_is_one_error(tmp_path: Path) -> None:
    # the schema forbids NULL, but a damaged page can still hold one (json.loads(None): TypeError)
    index_path = ingest(code_repo(tmp_path / "r")).index_path
    conn = sqlite3.connect(index_path)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute(
        "UPDATE sqlite_master SET sql = 'CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)' "
        "WHERE name = 'meta'"
    )
    conn.commit()
    conn.close()
    with sqlite3.connect(index_path) as conn:
        conn.execute("UPDATE meta SET value = NULL WHERE key = 'tokenizer'")
    conn.close()
    with pytest.raises(IndexFormatError, match=r"is corrupt .* re-run `rag ingest REPO --full`"):
        Index(index_path)


def test_an_index_made_by_other_chunkers_is_rechunked_whole(tmp_path: Path, monkeypatch) -> None:
    # the languages extra installed since the last ingest: unchanged files must not keep their
    # paragraph chunks
    import rag.indexing.plan

    repo = code_repo(tmp_path / "r")
    monkeypatch.setattr(rag.indexing.plan, "chunkers_in_use", lambda: "paragraphs")
    ingest(repo)
    assert ingest(repo).up_to_date
    monkeypatch.setattr(rag.indexing.plan, "chunkers_in_use", lambda: "definitions")
    report = ingest(repo)
    assert (report.up_to_date, report.reused, report.files) == (False, 0, 4)
    with Index(report.index_path) as index:
        assert index.manifest.chunkers == "definitions"
    assert ingest(repo).up_to_date


@pytest.mark.parametrize("link", [".rag", ".rag/.gitignore", ".rag/index.sqlite"])
def test_ingest_never_writes_through_a_committed_rag_link(tmp_path: Path, link: str) -> None:
    from click.testing import CliRunner

    from rag.cli import main

    repo = write_tree(tmp_path / "r", {"a.txt": "some text\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "x"
    (repo / ".rag").mkdir(exist_ok=link != ".rag") if link != ".rag" else None
    (repo / link).symlink_to(outside if link == ".rag" else target)
    result = CliRunner().invoke(main, ["ingest", str(repo)])
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {repo / link} is a symbolic link, and rag writes its index only into a real "
        "folder — remove the link, or pass --index PATH to keep the index elsewhere\n"
    )
    assert list(outside.iterdir()) == []
