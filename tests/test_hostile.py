"""Ingest survives a hostile repository, and a killed ingest never damages the previous index."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import write_tree
from hostile import build_hostile_repo, readable_lines

from rag import Index, ingest, search

PROJECT = Path(__file__).resolve().parent.parent


def test_hostile_repo_ingests_and_every_readable_line_is_findable(tmp_path: Path) -> None:
    repo = build_hostile_repo(tmp_path / "hostile")
    report = ingest(repo)
    assert report.skipped["too-large"] == 1  # the 5 MB single-line file
    assert report.skipped["binary"] >= 4
    assert report.skipped["symlink"] == 2
    assert report.skipped["empty"] == 1  # 100,000 empty lines
    assert report.skipped["non-utf8-name"] == 1  # could not be stored, cited or checked for freshness
    covered: dict[str, set[int]] = {}
    with Index(report.index_path) as index:
        rows = index._query(
            "SELECT f.path, c.start_line, c.end_line FROM chunks c JOIN files f ON f.id = c.file_id"
        )
        for path, start, end in rows:
            covered.setdefault(path, set()).update(range(start, end + 1))
        for path, lines in readable_lines(repo).items():
            if path in ("one_line.txt",):
                continue
            assert lines <= covered.get(path, set()), path
        assert search(index, "needle")[0].chunk.path == "sparse.txt"
        assert search(index, "needle")[0].chunk.start_line == 50_001
        assert search(index, "buried treasure")[0].chunk.path.endswith("d59/deep.md")
        assert search(index, "still findable")[0].chunk.path == "broken.js"
        assert "new\nline.txt" in {h.chunk.path for h in search(index, "file whose name", k=4)}


def test_a_file_that_vanishes_during_ingest_is_counted_not_fatal(tmp_path: Path, mocker) -> None:
    repo = write_tree(tmp_path / "r", {"a.txt": "alpha text\n", "b.txt": "beta text\n"})
    from rag.sources import walk as files

    real = files.walk

    def walk_then_delete(*args, **kwargs):
        listing = real(*args, **kwargs)
        (repo / "b.txt").unlink()
        return listing

    mocker.patch("rag.indexing.plan.walk", side_effect=walk_then_delete)
    report = ingest(repo)
    assert (report.files, report.skipped) == (1, {"unreadable": 1})


def _results(index_path: Path) -> list[tuple[str, int, float]]:
    with Index(index_path) as index:
        return [
            (h.chunk.path, h.chunk.start_line, h.score)
            for h in search(index, "alpha beta gamma module", k=10)
        ]


@pytest.mark.slow
def test_sigkill_at_random_points_always_leaves_the_previous_index(tmp_path: Path) -> None:
    files = {
        f"pkg/m{i}.py": f"def f{i}(x):\n    return alpha(x) + beta({i}) * gamma\n" * 40 for i in range(300)
    }
    repo = write_tree(tmp_path / "r", files)
    index_path = ingest(repo).index_path
    before = _results(index_path)
    rng = random.Random(1)
    durations = []
    for _ in range(2):
        started = time.perf_counter()
        full = subprocess.run(
            [sys.executable, str(PROJECT / "ingest.py"), str(repo), "--full"], capture_output=True
        )
        durations.append(time.perf_counter() - started)
        assert full.returncode == 0
        assert _results(index_path) == before  # a full rebuild of the same files gives the same index
    duration = min(durations)
    killed = 0
    for _ in range(20):
        proc = subprocess.Popen(
            [sys.executable, str(PROJECT / "ingest.py"), str(repo), "--full"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0, 0.8 * duration))
        proc.send_signal(signal.SIGKILL)
        killed += proc.wait() == -signal.SIGKILL
        assert _results(index_path) == before
    assert killed >= 10  # most runs were really killed mid-way, not after finishing
