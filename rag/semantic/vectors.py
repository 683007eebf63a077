"""The passage-vector cache: an SQLite file beside the index (`index.sqlite.vectors`), keyed by the
sha1 of the text a passage is embedded as and by the model's identity; beside them the vectors of
the last QUESTIONS_KEPT questions asked, by the sha1 of the question, so that a question asked again
with every passage's vector cached needs no model at all.

Beside the index, not in it: a full rebuild replaces the index file (os.replace) and the vectors of
unchanged passages survive it; an incremental ingest changes nothing here, so unchanged passages
keep theirs; and a query may write vectors while the index itself is only read. WAL and a busy
timeout keep concurrent queries safe; a cache that cannot be written (read-only folder, locked past
the timeout, damaged) is skipped, never an error: vectors are then computed for that query only."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rag.chunking.base import Chunk

SUFFIX = ".vectors"
DIMENSIONS = 384
_BUSY_MS = 5000
QUESTIONS_KEPT = 1000  # the most recently embedded questions; older ones are dropped
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, key BLOB NOT NULL, vec BLOB NOT NULL,"
    " PRIMARY KEY (model, key)) WITHOUT ROWID",
    # a rowid table: REPLACE gives a row a new rowid, so the rowid orders the questions by when last embedded
    "CREATE TABLE IF NOT EXISTS questions (model TEXT NOT NULL, key BLOB NOT NULL, vec BLOB NOT NULL,"
    " PRIMARY KEY (model, key))",
)


def cache_path(index_path: str | os.PathLike[str]) -> str:
    """Return where the vectors of the index at `index_path` are kept."""
    return os.fspath(index_path) + SUFFIX


def workspace_cache(index_paths: list[str]) -> str:
    """Return where the vectors of a workspace's passages are kept (its passages' paths begin with
    their repository's name, so its members' own vectors are not theirs): in the user cache, one file
    per set of member indexes; cache_path() of the returned path."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    key = hashlib.sha1("\n".join(sorted(index_paths)).encode("utf-8", "surrogatepass")).hexdigest()[:20]
    folder = os.path.join(base, "rag", "workspaces")
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, key)


def content_key(text: str) -> bytes:
    """Return the cache key of a passage's embedded text (or of a question)."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).digest()


class VectorCache:
    """Vectors by (model identity, content key), as float32 bytes of DIMENSIONS values."""

    def __init__(self, path: str, model: str) -> None:
        self.path, self.model = path, model
        self._conn: sqlite3.Connection | None = None
        try:
            conn = sqlite3.connect(path, timeout=_BUSY_MS / 1000, isolation_level=None)
            conn.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            for statement in _SCHEMA:
                conn.execute(statement)
            self._conn = conn
        except sqlite3.Error:  # read-only folder, damaged file: no cache
            self._conn = None

    def get(self, keys: Iterable[bytes]) -> dict[bytes, bytes]:
        """Return the cached vectors among `keys`."""
        if self._conn is None:
            return {}
        wanted = list(dict.fromkeys(keys))
        out: dict[bytes, bytes] = {}
        try:
            for start in range(0, len(wanted), 500):  # SQLite's limit on parameters
                part = wanted[start : start + 500]
                rows = self._conn.execute(
                    f"SELECT key, vec FROM vectors WHERE model = ? AND key IN ({','.join('?' * len(part))})",
                    (self.model, *part),
                )
                out.update((k, v) for k, v in rows if len(v) == 4 * DIMENSIONS)
        except sqlite3.Error:
            return {}
        return out

    def put(self, items: Iterable[tuple[bytes, bytes]]) -> bool:
        """Store vectors in one transaction; return False when the cache could not be written."""
        if self._conn is None:
            return False
        try:
            with self._conn:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.executemany(
                    "INSERT OR REPLACE INTO vectors (model, key, vec) VALUES (?, ?, ?)",
                    ((self.model, k, v) for k, v in items),
                )
        except sqlite3.Error:
            return False
        return True

    def question(self, key: bytes) -> bytes | None:
        """Return the cached vector of the question whose content key is `key`, or None."""
        if self._conn is None:
            return None
        try:
            row = self._conn.execute(
                "SELECT vec FROM questions WHERE model = ? AND key = ?", (self.model, key)
            ).fetchone()
        except sqlite3.Error:
            return None
        return row[0] if row is not None and len(row[0]) == 4 * DIMENSIONS else None

    def put_question(self, key: bytes, vec: bytes) -> bool:
        """Store a question's vector, dropping the oldest beyond QUESTIONS_KEPT; False when not written."""
        if self._conn is None:
            return False
        try:
            with self._conn:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.execute(
                    "INSERT OR REPLACE INTO questions (model, key, vec) VALUES (?, ?, ?)",
                    (self.model, key, vec),
                )
                self._conn.execute(
                    "DELETE FROM questions WHERE rowid <= (SELECT MAX(rowid) FROM questions) - ?",
                    (QUESTIONS_KEPT,),
                )
        except sqlite3.Error:
            return False
        return True

    def close(self) -> None:
        """Close the database connection."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def passage_text(c: Chunk) -> str:
    """The text a passage is embedded as: its path, symbol and breadcrumb, then its text."""
    head = " ".join(p for p in (c.path, c.symbol or "", c.context) if p)
    return f"{head}\n{c.text}"
