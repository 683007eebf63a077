"""Two ingests on one index, and an ingest killed with its workers running: real processes."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

WORDS = [
    "refund",
    "invoice",
    "session",
    "token",
    "parser",
    "lexer",
    "chunk",
    "index",
    "query",
    "answer",
    "bank",
    "payroll",
    "vault",
    "cache",
    "stream",
    "buffer",
    "socket",
    "thread",
    "process",
    "worker",
    "signal",
    "handler",
    "config",
    "loader",
    "schema",
    "record",
]


@pytest.fixture(scope="module")
def big_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 2.3 MB of text in 36 files: enough for ingest to start its worker processes."""
    root = tmp_path_factory.mktemp("big")
    rng = random.Random(0)
    for i in range(36):
        paragraphs = (
            "\n".join(
                " ".join(rng.choice(WORDS) + str(rng.randrange(500)) for _ in range(12)) for _ in range(6)
            )
            for _ in range(110)
        )
        (root / f"doc{i:02}.txt").write_text("\n\n".join(paragraphs) + "\n")
    return root


def rag(*args: str, **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "rag", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )  # type: ignore[call-overload]


def holds_flock(pid: int, path: Path) -> bool:
    """Whether process `pid` holds an flock on `path` (/proc/locks: id, FLOCK, ..., pid, dev:inode)."""
    if not path.exists():
        return False
    inode = path.stat().st_ino
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "FLOCK" in fields and fields[4] == str(pid) and fields[5].rsplit(":", 1)[-1] == str(inode):
            return True
    return False


def children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for PID 1 to reap it has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_second_ingest_on_one_index_fails_while_a_rebuild_runs(big_repo: Path, tmp_path: Path) -> None:
    index = tmp_path / "index.sqlite"
    first = rag("ingest", str(big_repo), "--index", str(index))
    assert first.communicate(timeout=120)[1] == "" and first.returncode == 0
    (big_repo / "doc00.txt").write_text("a changed file: the next plain ingest updates the index in place\n")
    rebuild = rag("ingest", str(big_repo), "--index", str(index), "--full")
    try:
        deadline = time.monotonic() + 60
        while not holds_flock(rebuild.pid, Path(f"{index}.lock")):
            assert rebuild.poll() is None and time.monotonic() < deadline, "the rebuild never took the lock"
            time.sleep(0.01)
        update = rag("ingest", str(big_repo), "--index", str(index))  # an update in place, while it rebuilds
        out, err = update.communicate(timeout=60)
        assert update.returncode == 1
        assert (
            err
            == f"Error: another ingest is running on this index ({index}) — wait for it to finish, then run "
            "this one again\n"
        )
        assert rebuild.poll() is None  # the refusal came while the rebuild still ran: they overlapped
        assert rebuild.communicate(timeout=120)[1] == "" and rebuild.returncode == 0
    finally:
        if rebuild.poll() is None:
            rebuild.kill()
        rebuild.communicate()
    assert not Path(f"{index}-journal").exists()
    query = rag("query", "--no-llm", "--json", "--index", str(index), "changed file updates")
    out, err = query.communicate(timeout=60)
    assert query.returncode == 0, err
    assert '"path": "doc00.txt"' in out  # the rebuild read the changed file; the index reads whole
    again = rag("ingest", str(big_repo), "--index", str(index))  # once the lock is free, the next ingest runs
    assert again.communicate(timeout=60)[1] == "" and again.returncode == 0


def test_the_workers_of_a_killed_ingest_end_with_it(big_repo: Path, tmp_path: Path) -> None:
    # its output to a file: orphaned workers would hold a pipe open, and reading it would never end
    log = (tmp_path / "ingest.log").open("w")
    index = tmp_path / "index.sqlite"
    command = [
        sys.executable,
        "-m",
        "rag",
        "ingest",
        str(big_repo),
        "--index",
        str(index),
        "--full",
        "--workers",
        "2",
    ]
    ingest = subprocess.Popen(command, stdout=log, stderr=log)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while len(workers := children(ingest.pid)) < 2:
            assert ingest.poll() is None and time.monotonic() < deadline, "the ingest started no workers"
            time.sleep(0.01)
        time.sleep(0.2)  # their initializers have run
        ingest.send_signal(signal.SIGKILL)
        ingest.wait()
        deadline = time.monotonic() + 5
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [pid for pid in workers if alive(pid)]
    finally:
        for pid in workers:  # the ones this test started, should they have outlived it
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        if ingest.poll() is None:
            ingest.kill()
        ingest.wait()
        log.close()
