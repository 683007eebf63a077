"""Building, saving and loading the index: an SQLite file a query reads piecemeal.

Layout (FORMAT_VERSION 2):

    meta(key, value)            -- the manifest, one JSON value per key
    files(id, path, size, mtime_ns, sha1, n_chunks)
    chunks(id, file_id, ordinal, start_line, end_line, kind, symbol, context, text, terms)
                                -- terms: "term tf term tf ..." for re-ingest without re-reading
    postings(term, df, ids, tfs)  -- term -> chunk ids (uint32, ascending) and raw tfs (uint16)
    arrays(name, data)          -- 'classes': uint16 access class of each chunk, by id;
                                -- 'norms:<view>': float64 L2 norm of each chunk's tf-idf vector
                                -- as seen by callers of that view, by id
    classes(id, groups)         -- access class: the groups that may read it (JSON; [] = public)
    views(key, classes, n_chunks)  -- a set of readable classes, e.g. "0,2", and its chunk count
    dirs(path, mtime_ns)        -- each indexed directory's mtime, to notice added/removed files
    skipped(path, size, mtime_ns, reason)  -- files read and passed over (empty, binary, ...),
                                -- so that re-ingest need not read them again while unchanged

A query reads the manifest, the postings of its own terms, the norms array, and the
text of the top k chunks: never the whole corpus. The file is written under a temporary
name and moved into place with os.replace, so an interrupted ingest leaves the previous
index untouched and a query running meanwhile keeps reading a consistent file.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import sys
import time
from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from operator import mul
from pathlib import Path
from typing import Any

from .chunking.base import Chunk
from .errors import IndexFormatError, NoIndexError
from .tokens import TokenizerSettings, idf_weight, tf_weight

FORMAT_VERSION = 2
INDEX_FILENAME = "index.sqlite"
INDEX_DIRNAME = ".rag"  # inside the indexed repository; holds a .gitignore of "*"
_TF_MAX = 65535  # tfs are stored as uint16; a term repeated more often in one chunk is capped

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, size INTEGER NOT NULL,
                   mtime_ns INTEGER NOT NULL, sha1 TEXT NOT NULL, n_chunks INTEGER NOT NULL);
CREATE TABLE chunks(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, ordinal INTEGER NOT NULL,
                    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, kind TEXT NOT NULL,
                    symbol TEXT, context TEXT NOT NULL, text TEXT NOT NULL, terms TEXT NOT NULL);
CREATE TABLE postings(term TEXT PRIMARY KEY, df INTEGER NOT NULL, ids BLOB NOT NULL,
                      tfs BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE arrays(name TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE classes(id INTEGER PRIMARY KEY, groups TEXT NOT NULL);
CREATE TABLE views(key TEXT PRIMARY KEY, n_chunks INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE skipped(path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
                     reason TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE dirs(path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL) WITHOUT ROWID;
"""


@dataclass(frozen=True, slots=True)
class FileRecord:
    """One indexed file: where it is, how to tell it changed, and its chunks with their terms."""

    path: str
    size: int
    mtime_ns: int
    sha1: str
    chunks: tuple[Chunk, ...]
    counts: tuple[dict[str, int], ...]  # term -> tf, one per chunk
    groups: frozenset[str] = frozenset()  # who may read it (.rag-access); empty = public


@dataclass(frozen=True, slots=True)
class Manifest:
    """What an index is: format, tokenizer, counts and where it came from."""

    format_version: int
    tokenizer: TokenizerSettings
    root: str
    n_files: int
    n_chunks: int
    n_terms: int
    built_at: float
    commit: str | None = None
    access: str | None = None  # sha1 of the .rag-access rules the index was built with


def default_index_path(root: Path) -> Path:
    """Return where the index of `root` lives by default: ROOT/.rag/index.sqlite."""
    return Path(root) / INDEX_DIRNAME / INDEX_FILENAME


def write_index(
    path: Path, records: Iterable[FileRecord], tokenizer: TokenizerSettings, root: Path,
    commit: str | None = None, access: str | None = None,
    skipped: Iterable[tuple[str, int, int, str]] = (),
) -> Manifest:
    """Build postings and norms from file records and write them atomically to `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.parent.name == INDEX_DIRNAME and not (path.parent / ".gitignore").exists():
        # keep the index out of the repository's `git status`
        (path.parent / ".gitignore").write_text("# written by rag: ignore the index\n*\n")
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    _remove_stale_temps(path)
    tmp.unlink(missing_ok=True)
    conn = sqlite3.connect(tmp)
    try:
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        conn.executescript(_SCHEMA)
        manifest = _fill(conn, records, tokenizer, root, commit, access)
        conn.executemany("INSERT INTO skipped VALUES (?,?,?,?)", skipped)
        conn.commit()
        conn.close()
        _fsync(tmp)
        os.replace(tmp, path)
    except BaseException:
        conn.close()
        tmp.unlink(missing_ok=True)
        raise
    return manifest


def _fill(
    conn: sqlite3.Connection, records: Iterable[FileRecord], tokenizer: TokenizerSettings,
    root: Path, commit: str | None, access: str | None,
) -> Manifest:
    postings: dict[str, list[int]] = {}  # term -> [chunk id, tf, chunk id, tf, ...]
    forward: list[tuple[list[str], list[int]]] = []  # chunk id -> (terms, tfs)
    file_rows = []
    chunk_rows = []
    class_ids: dict[frozenset[str], int] = {frozenset(): 0}  # access class 0 is public
    chunk_class = array("H")
    cid = 0
    for fid, rec in enumerate(records):
        file_rows.append((fid, rec.path, rec.size, rec.mtime_ns, rec.sha1, len(rec.chunks)))
        klass = class_ids.setdefault(rec.groups, len(class_ids))
        for chunk, counts in zip(rec.chunks, rec.counts):
            chunk_class.append(klass)
            terms = list(counts)
            tfs = [min(n, _TF_MAX) for n in counts.values()]
            for term, tf in zip(terms, tfs):
                plist = postings.get(term)
                if plist is None:
                    postings[term] = [cid, tf]
                else:
                    plist.append(cid)
                    plist.append(tf)
            forward.append((terms, tfs))
            chunk_rows.append(
                (cid, fid, chunk.ordinal, chunk.start_line, chunk.end_line, chunk.kind,
                 chunk.symbol, chunk.context, chunk.text,
                 " ".join(f"{t} {n}" for t, n in zip(terms, tfs)))
            )
            cid += 1
    n_chunks = cid
    groups_of_class = {i: g for g, i in class_ids.items()}
    conn.executemany("INSERT INTO files VALUES (?,?,?,?,?,?)", file_rows)
    conn.executemany("INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?)", chunk_rows)
    conn.executemany(
        "INSERT INTO postings VALUES (?,?,?,?)",
        ((t, len(p) // 2, array("I", p[0::2]).tobytes(), array("H", p[1::2]).tobytes())
         for t, p in postings.items()),
    )
    conn.execute("INSERT INTO arrays VALUES ('classes', ?)", (chunk_class.tobytes(),))
    conn.executemany("INSERT INTO classes VALUES (?,?)",
                     ((i, json.dumps(sorted(g))) for g, i in class_ids.items()))
    for view in realizable_views(groups_of_class):
        if len(view) == len(class_ids):  # everything readable: df straight from the postings
            df = {t: len(p) // 2 for t, p in postings.items()}
            n_view = n_chunks
        else:
            n_view, df = _view_df(forward, chunk_class, view)
        norms = view_norms(forward, chunk_class, view, n_view, df)
        conn.execute("INSERT INTO views VALUES (?,?)", (view_key(view), n_view))
        conn.execute("INSERT INTO arrays VALUES (?,?)", (f"norms:{view_key(view)}", norms.tobytes()))
    conn.executemany("INSERT INTO dirs VALUES (?,?)", _dir_mtimes(root, [r[1] for r in file_rows]))
    manifest = Manifest(
        format_version=FORMAT_VERSION, tokenizer=tokenizer, root=str(root),
        n_files=len(file_rows), n_chunks=n_chunks, n_terms=len(postings),
        built_at=time.time(), commit=commit, access=access,
    )
    meta = {
        "format_version": FORMAT_VERSION, "tokenizer": tokenizer.to_dict(), "root": str(root),
        "n_files": manifest.n_files, "n_chunks": n_chunks, "n_terms": manifest.n_terms,
        "built_at": manifest.built_at, "commit": commit, "access": access, "byteorder": sys.byteorder,
    }
    conn.executemany("INSERT INTO meta VALUES (?,?)", ((k, json.dumps(v)) for k, v in meta.items()))
    return manifest


# Precompute the norms of at most this many views; rarer combinations are computed per query.
MAX_STORED_VIEWS = 64


def view_key(view: frozenset[int]) -> str:
    """Return the storage key of a set of readable access classes."""
    return ",".join(map(str, sorted(view)))


def readable_classes(groups_of_class: dict[int, frozenset[str]], caller: frozenset[str]) -> frozenset[int]:
    """Return the access classes a caller with these groups may read."""
    return frozenset(c for c, g in groups_of_class.items() if not g or g & caller)


def realizable_views(groups_of_class: dict[int, frozenset[str]]) -> list[frozenset[int]]:
    """List the distinct sets of readable classes that some caller can have (public first).

    A caller's view depends only on which of the named groups it holds, so enumerate those
    subsets while there are few; the rest are computed at query time.
    """
    named = sorted(set().union(*groups_of_class.values()))
    views: dict[frozenset[int], None] = {readable_classes(groups_of_class, frozenset()): None}
    views[frozenset(groups_of_class)] = None
    if len(named) <= 12:
        for mask in range(1, 1 << len(named)):
            caller = frozenset(g for i, g in enumerate(named) if mask >> i & 1)
            views[readable_classes(groups_of_class, caller)] = None
            if len(views) >= MAX_STORED_VIEWS:
                break
    return list(views)


def _view_df(
    forward: list[tuple[list[str], list[int]]], chunk_class: array[int], view: frozenset[int]
) -> tuple[int, dict[str, int]]:
    """Count the chunks and each term's document frequency within a view."""
    df: Counter[str] = Counter()
    n = 0
    for (terms, _), klass in zip(forward, chunk_class):
        if klass in view:
            df.update(terms)
            n += 1
    return n, df


def view_norms(
    forward: list[tuple[list[str], list[int]]], chunk_class: array[int], view: frozenset[int],
    n_view: int, df: dict[str, int],
) -> array[float]:
    """Return each chunk's L2 norm under the IDF of a view (0.0 for chunks outside it)."""
    idf = {t: idf_weight(n_view, d) for t, d in df.items() if d}
    return array("d", (
        _norm(terms, tfs, idf) if klass in view else 0.0
        for (terms, tfs), klass in zip(forward, chunk_class)
    ))


def _dir_mtimes(root: Path, paths: list[str]) -> list[tuple[str, int]]:
    dirs = {p.rsplit("/", 1)[0] if "/" in p else "" for p in paths}
    out = []
    for d in sorted(dirs):
        try:
            out.append((d, os.stat(Path(root) / d).st_mtime_ns))
        except OSError:
            continue
    return out


_TF_WEIGHT_SQ = [0.0] + [tf_weight(n) ** 2 for n in range(1, 256)]


def _norm(terms: list[str], tfs: list[int], idf: dict[str, float]) -> float:
    """Return the L2 norm of a chunk's tf-idf vector (C-speed map/sum over its terms)."""
    weights = [_TF_WEIGHT_SQ[n] if n < 256 else tf_weight(n) ** 2 for n in tfs]
    idfs = [idf[t] for t in terms]
    return math.sqrt(sum(map(mul, weights, map(mul, idfs, idfs))))


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_stale_temps(path: Path) -> None:
    """Delete temp files left by ingests that were killed (their process is gone)."""
    for stale in path.parent.glob(f"{path.name}.tmp-*"):
        pid = stale.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _pid_alive(int(pid)):
            stale.unlink(missing_ok=True)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True, slots=True)
class View:
    """The part of an index one caller may read."""

    classes: frozenset[int] | None  # readable access classes; None = all (nothing to filter)
    n_chunks: int  # N for the IDF
    norms: array[float]  # by chunk id, under this view's IDF
    chunk_class: array[int] | None  # access class by chunk id, when filtering is needed


class Index:
    """A saved index opened for reading; loads only the manifest until asked for more."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise NoIndexError(f"No index at {self.path} — run `python ingest.py REPO` first")
        try:
            self._conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
            meta = {k: json.loads(v) for k, v in self._conn.execute("SELECT key, value FROM meta")}
        except (sqlite3.DatabaseError, ValueError) as exc:
            raise IndexFormatError(
                f"The index at {self.path} is corrupt ({exc}) — re-run `python ingest.py REPO`"
            ) from None
        version = meta.get("format_version")
        if version != FORMAT_VERSION:
            raise IndexFormatError(
                f"The index at {self.path} has format version {version}, this tool reads version "
                f"{FORMAT_VERSION} — re-run `python ingest.py {meta.get('root', 'REPO')}`"
            )
        try:
            self.manifest = Manifest(
                format_version=version,
                tokenizer=TokenizerSettings.from_dict(meta["tokenizer"]),
                root=meta["root"], n_files=meta["n_files"], n_chunks=meta["n_chunks"],
                n_terms=meta["n_terms"], built_at=meta["built_at"], commit=meta.get("commit"),
                access=meta.get("access"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise IndexFormatError(
                f"The index at {self.path} has a damaged manifest ({exc}) — re-run `python ingest.py REPO`"
            ) from None
        self._swap = meta.get("byteorder", sys.byteorder) != sys.byteorder
        self._views: dict[str, View] = {}

    def close(self) -> None:
        """Close the database connection."""
        self._conn.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def postings(self, term: str) -> tuple[array[int], array[int]] | None:
        """Return (chunk ids, tfs) of a term, or None if the index has never seen it."""
        row = self._query("SELECT ids, tfs FROM postings WHERE term = ?", (term,)).fetchone()
        if row is None:
            return None
        ids, tfs = array("I"), array("H")
        ids.frombytes(row[0])
        tfs.frombytes(row[1])
        if self._swap:
            ids.byteswap()
            tfs.byteswap()
        return ids, tfs

    def view(self, caller_groups: frozenset[str] = frozenset()) -> View:
        """Return what a caller with these groups may see: its chunk count and norms.

        Scores computed through a view equal those of an index built without the files
        the caller may not read: N, document frequencies and norms are the view's own.
        """
        groups_of_class = {
            i: frozenset(json.loads(g)) for i, g in self._query("SELECT id, groups FROM classes")
        }
        readable = readable_classes(groups_of_class, frozenset(caller_groups))
        key = view_key(readable)
        cached = self._views.get(key)
        if cached is not None:
            return cached
        everything = len(readable) == len(groups_of_class)
        chunk_class = None if everything else self._array("classes", "H")
        row = self._query("SELECT n_chunks FROM views WHERE key = ?", (key,)).fetchone()
        if row is not None:
            n_view, norms = row[0], self._array(f"norms:{key}", "d")
        else:  # a rare group combination: compute its statistics now
            assert chunk_class is not None
            forward = [
                (parts[0::2], [int(n) for n in parts[1::2]])
                for parts in (t.split(" ") if t else [] for (t,) in self._query("SELECT terms FROM chunks ORDER BY id"))
            ]
            n_view, df = _view_df(forward, chunk_class, readable)
            norms = view_norms(forward, chunk_class, readable, n_view, df)
        view = View(None if everything else readable, n_view, norms, chunk_class)
        self._views[key] = view
        return view

    def _array(self, name: str, typecode: str) -> array[Any]:
        row = self._query("SELECT data FROM arrays WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise IndexFormatError(f"The index at {self.path} lacks {name!r} — re-run `python ingest.py REPO`")
        out = array(typecode)
        out.frombytes(row[0])
        if self._swap:
            out.byteswap()
        return out

    def chunks(self, ids: list[int]) -> dict[int, Chunk]:
        """Fetch chunks by id."""
        marks = ",".join("?" * len(ids))
        rows = self._query(
            "SELECT c.id, f.path, c.start_line, c.end_line, c.kind, c.symbol, c.text, c.context,"
            f" c.ordinal FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})",
            tuple(ids),
        )
        return {r[0]: Chunk(*r[1:]) for r in rows}

    def chunk_terms(self, chunk_id: int) -> dict[str, int]:
        """Return a chunk's term frequencies."""
        row = self._query("SELECT terms FROM chunks WHERE id = ?", (chunk_id,)).fetchone()
        parts = row[0].split(" ") if row and row[0] else []
        return {parts[i]: int(parts[i + 1]) for i in range(0, len(parts), 2)}

    def files(self) -> dict[str, tuple[int, int, str]]:
        """Return path -> (size, mtime_ns, sha1) of every indexed file."""
        rows = self._query("SELECT path, size, mtime_ns, sha1 FROM files")
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def skipped_files(self) -> dict[str, tuple[int, int, str]]:
        """Return path -> (size, mtime_ns, reason) of files read at ingest and passed over."""
        rows = self._query("SELECT path, size, mtime_ns, reason FROM skipped")
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def changed_files(self, paths: Iterable[str] = ()) -> list[str]:
        """Return what changed since ingest, cheaply: the given files by size and mtime, and
        every indexed directory by mtime (which moves when a file in it is added, removed,
        renamed, or saved by an editor that writes a new file). Empty if the root is gone."""
        root = Path(self.manifest.root)
        if not root.is_dir():
            return []
        changed: list[str] = []
        wanted = list(dict.fromkeys(paths))
        if wanted:
            marks = ",".join("?" * len(wanted))
            rows = self._query(f"SELECT path, size, mtime_ns FROM files WHERE path IN ({marks})", tuple(wanted))
            for path, size, mtime_ns in rows:
                try:
                    st = os.stat(root / path)
                except OSError:
                    changed.append(path)
                    continue
                if st.st_size != size or st.st_mtime_ns != mtime_ns:
                    changed.append(path)
        for path, mtime_ns in self._query("SELECT path, mtime_ns FROM dirs"):
            try:
                if os.stat(root / path).st_mtime_ns != mtime_ns:
                    changed.append(f"{path or '.'}/")
            except OSError:
                changed.append(f"{path or '.'}/")
        return changed

    def _query(self, sql: str, args: tuple[object, ...] = ()) -> sqlite3.Cursor:
        try:
            return self._conn.execute(sql, args)
        except sqlite3.DatabaseError as exc:
            raise IndexFormatError(
                f"The index at {self.path} is corrupt ({exc}) — re-run `python ingest.py REPO`"
            ) from None


def _state_file() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "rag" / "indexes.json"


def remember_index(cwd: Path, index_path: Path) -> None:
    """Record that an ingest run from `cwd` wrote `index_path`, so a query from there finds it."""
    state = _state_file()
    try:
        known = json.loads(state.read_text())
        if not isinstance(known, dict):
            known = {}
    except (OSError, ValueError):
        known = {}
    known[str(Path(cwd).resolve())] = str(Path(index_path).resolve())
    try:
        state.parent.mkdir(parents=True, exist_ok=True)
        tmp = state.with_name(f"{state.name}.tmp-{os.getpid()}")
        tmp.write_text(json.dumps(known, indent=1))
        os.replace(tmp, state)
    except OSError:
        pass  # remembering is a convenience; --index and the upward search still work


def locate_index(explicit: Path | None = None, cwd: Path | None = None) -> Path:
    """Find the index to query: `explicit`, else ./.rag in cwd or a parent, else the one ingested from cwd."""
    if explicit is not None:
        path = Path(explicit)
        if path.is_dir():
            path = path / INDEX_FILENAME if path.name == INDEX_DIRNAME else default_index_path(path)
        if not path.is_file():
            raise NoIndexError(f"No index at {explicit} — run `python ingest.py REPO --index {explicit}` first")
        return path
    here = Path(cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = default_index_path(folder)
        if candidate.is_file():
            return candidate
    try:
        known = json.loads(_state_file().read_text())
        remembered = Path(known[str(here)])
        if remembered.is_file():
            return remembered
    except (OSError, ValueError, KeyError, TypeError):
        pass
    raise NoIndexError(f"No index found for {here} — run `python ingest.py REPO` first (or pass --index PATH)")
