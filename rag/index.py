"""Building, saving, updating and loading the index: an SQLite file a query reads piecemeal.

Layout (FORMAT_VERSION 9):

    meta(key, value)            -- the manifest, one JSON value per key
    files(id, path, size, mtime_ns, sha1, first_chunk, n_chunks, class)
                                -- a file's chunks have consecutive ids first_chunk..+n_chunks
    chunks(id, file_id, ordinal, start_line, end_line, kind, symbol, context, text)
    terms(term, id, df, ids, tfs, maxw, maxb)  -- term -> chunk ids (uint32, ascending), raw
                                -- tfs (uint16), and two bounds for pruning in the everything-
                                -- readable view: maxw * meta.bound_scale >= its largest
                                -- tf_weight / norm; maxb >= its largest BM25 tf part
                                -- tf / (tf + k1 (1 - b + b len / meta.bm25_avglen))
    forward(chunk_id, tids, tfs)   -- chunk -> its term ids and tfs, to recompute norms on update
    arrays(name, data)          -- 'classes': uint16 access class of each chunk, by id;
                                -- 'norms:<view>#<block>': float64 L2 norm of each chunk's tf-idf
                                -- vector as seen by callers of that view, by id (0.0 for unused
                                -- ids), ARRAY_BLOCK ids per row: a query reads only the blocks
                                -- its postings fall in;
                                -- 'lengths': uint32 sum of each chunk's stored tfs;
                                -- 'bm25k:<view>#<block>': float64 k1 (1 - b + b len / avglen) of
                                -- each chunk, avglen being that view's (BM25's length
                                -- normaliser), in blocks like the norms
    classes(id, groups)         -- access class: the groups that may read it (JSON; [] = public)
    views(key, n_chunks, length)  -- a set of readable classes, e.g. "0,2", its chunk count and
                                -- the sum of its chunks' lengths
    skipped(path, size, mtime_ns, reason)  -- files read and passed over (empty, binary, ...),
                                -- so that re-ingest need not read them again while unchanged
    dirs(path, mtime_ns)        -- each indexed directory's mtime, to notice added/removed files
    acronyms(file_id, acronym, expansion)  -- acronyms a file spells out, as index terms
                                -- ("sse", "server sent event"): see rag.acronyms

A query reads the manifest, the postings of its own terms, the blocks of one per-chunk array
(norms or BM25 normalisers) that hold those postings' chunks, and the text of the best
candidates: what it reads grows with its postings, not with the index. A full build writes a
temporary file and moves it into place with os.replace; an update runs as one SQLite
transaction. Either way an interrupted ingest leaves the previous index intact, and a query
sees one or the other (Index.snapshot).
"""

from __future__ import annotations

import json
import math
import mmap
import os
import sqlite3
import sys
import time
from array import array
from bisect import bisect_left
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from itertools import repeat
from operator import add, mul, truediv
from typing import TYPE_CHECKING, Any, NamedTuple, Union

from .chunking.base import Chunk
from .errors import IndexFormatError, InputError, NoIndexError, NothingToIndexError
from .tokens import BM25_B, BM25_K1, Tokenizer, TokenizerSettings, idf_weight, tf_weight

if TYPE_CHECKING:
    from pathlib import Path

# A query must not pay for importing pathlib (3 ms of a ~45 ms process): what it runs here
# (Index, locate_index) works on str paths; building an index imports pathlib when it needs it.

# what every message about a damaged index says to do: a plain ingest may update the index in
# place without ever reading the damaged page
REBUILD_HINT = "re-run `python ingest.py REPO --full`"
# What reading a damaged index raises, beyond the checks that give their own messages: a file
# SQLite still opens, whose tables or values were damaged (a disk error, a hand edit), fails
# somewhere in the reading, in whatever way its bytes lead to
DAMAGE_ERRORS = (sqlite3.Error, ArithmeticError, LookupError, ValueError, TypeError, AssertionError)

# 9 (stop 15): same tables as 8, but files are chunked and redacted by newer rules; an index of 8
# may hold credentials these rules redact, and reusing its unchanged files would keep them
FORMAT_VERSION = 9
# SQLite's application id in the file header (bytes 68-71): "rag!" marks a file as a rag index,
# readable even when the rest of the file is damaged
APPLICATION_ID = int.from_bytes(b"rag!", "big")
_SQLITE_HEADER = b"SQLite format 3\x00"
INDEX_FILENAME = "index.sqlite"
INDEX_DIRNAME = ".rag"  # inside the indexed repository; holds a .gitignore of "*"
_TF_MAX = 65535  # tfs are stored as uint16; a term repeated more often in one chunk is capped
_BATCH = 2000  # rows per executemany while streaming

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, size INTEGER NOT NULL,
                   mtime_ns INTEGER NOT NULL, sha1 TEXT NOT NULL, first_chunk INTEGER NOT NULL,
                   n_chunks INTEGER NOT NULL, class INTEGER NOT NULL);
CREATE TABLE chunks(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, ordinal INTEGER NOT NULL,
                    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, kind TEXT NOT NULL,
                    symbol TEXT, context TEXT NOT NULL, text TEXT NOT NULL);
CREATE TABLE terms(term TEXT PRIMARY KEY, id INTEGER NOT NULL, df INTEGER NOT NULL,
                   ids BLOB NOT NULL, tfs BLOB NOT NULL, maxw REAL NOT NULL, maxb REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE forward(chunk_id INTEGER PRIMARY KEY, tids BLOB NOT NULL, tfs BLOB NOT NULL);
CREATE TABLE arrays(name TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE classes(id INTEGER PRIMARY KEY, groups TEXT NOT NULL);
CREATE TABLE views(key TEXT PRIMARY KEY, n_chunks INTEGER NOT NULL, length INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE skipped(path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
                     reason TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE dirs(path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE acronyms(file_id INTEGER NOT NULL, acronym TEXT NOT NULL, expansion TEXT NOT NULL);
CREATE INDEX acronyms_of_file ON acronyms(file_id);
"""


class FileRecord(NamedTuple):
    """One indexed file: where it is, how to tell it changed, and its chunks with their terms."""

    path: str
    size: int
    mtime_ns: int
    sha1: str
    chunks: tuple[Chunk, ...]
    counts: tuple[dict[str, int], ...]  # term -> tf, one per chunk
    groups: frozenset[str] = frozenset()  # who may read it (.rag-access); empty = public
    acronyms: tuple[tuple[str, str], ...] = ()  # (acronym term, expansion terms) it defines


class Manifest(NamedTuple):
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
    bound_scale: float = 1.0  # stored pruning bounds are multiplied by this (widened by updates)
    bm25_avglen: float = 1.0  # the average chunk length the stored BM25 bounds were computed with
    walk: dict[str, Any] | None = None  # the ingest's --include/--exclude/--max-file-size, for re-ingest


def default_index_path(root: str | os.PathLike[str]) -> Path:
    """Return where the index of `root` lives by default: ROOT/.rag/index.sqlite."""
    from pathlib import Path

    return Path(_default_index_file(os.fspath(root)))


def _default_index_file(root: str) -> str:
    return os.path.join(root, INDEX_DIRNAME, INDEX_FILENAME)


def _repository_holding(index_path: str) -> str | None:
    """The folder whose default place (FOLDER/.rag/index.sqlite) `index_path` is, or None."""
    folder, name = os.path.split(index_path)
    if name != INDEX_FILENAME or os.path.basename(folder) != INDEX_DIRNAME:
        return None
    return os.path.dirname(folder)


def _ingest_command(root: object, index_path: str) -> str:
    """The command that rebuilds the index at `index_path`, quoted for a shell: for the folder
    that holds it in its default place (a repository copied or moved with its index), else for
    `root` with --index."""
    import shlex  # only on this error's path

    holder = _repository_holding(os.path.realpath(index_path))
    if holder is not None:
        return "python ingest.py " + shlex.quote(holder)
    return f"python ingest.py {shlex.quote(root) if isinstance(root, str) else 'REPO'} --index {shlex.quote(index_path)}"


def index_file(path: str | os.PathLike[str]) -> Path:
    """Return the index file an --index value names: a file as given; a folder means the index
    inside it (DIR/.rag/index.sqlite, or DIR/index.sqlite for a .rag folder), for every command."""
    from pathlib import Path

    return Path(_index_file(os.fspath(path)))


def _index_file(path: str) -> str:
    path = os.path.expanduser(path)  # `--index=~/idx`: no shell expands a tilde after '='
    if os.path.isdir(path):
        if os.path.basename(os.path.normpath(path)) == INDEX_DIRNAME:
            return os.path.join(path, INDEX_FILENAME)
        return _default_index_file(path)
    return path


def _stored_tfs(counts: dict[str, int]) -> array[int]:
    """Return a chunk's tfs as stored: uint16, capped at _TF_MAX."""
    return array("H", [n if n <= _TF_MAX else _TF_MAX for n in counts.values()])


def _chunk_row(cid: int, fid: int, chunk: Chunk) -> tuple[Any, ...]:
    """Return the chunks-table row of a chunk, in column order."""
    return (cid, fid, chunk.ordinal, chunk.start_line, chunk.end_line, chunk.kind, chunk.symbol,
            chunk.context, chunk.text)


class _TermIdMap(dict[str, int]):
    """term -> term id; a new term gets the next id and empty postings lists on first lookup."""

    def __init__(self, ids: list[array[int]], tfs: list[array[int]]) -> None:
        super().__init__()
        self._ids, self._tfs = ids, tfs

    def __missing__(self, term: str) -> int:
        tid = self[term] = len(self._ids)
        self._ids.append(array("I"))
        self._tfs.append(array("H"))
        return tid


class _Postings:
    """In-memory postings and forward lists, by term id, while an index is written."""

    def __init__(self) -> None:
        self.ids: list[array[int]] = []  # term id -> chunk ids
        self.tfs: list[array[int]] = []  # term id -> tfs
        self.term_ids = _TermIdMap(self.ids, self.tfs)

    def add(self, cid: int, counts: dict[str, int]) -> tuple[array[int], array[int]]:
        """Add one chunk's terms; return its forward lists (term ids, tfs).

        Every step runs at C speed (a map over the terms, appends drained by a zero-length
        deque): this loop runs once per posting of the whole index.
        """
        tids = array("I", map(self.term_ids.__getitem__, counts))
        tfs = _stored_tfs(counts)
        deque(map(array.append, map(self.ids.__getitem__, tids), repeat(cid, len(tids))), 0)
        deque(map(array.append, map(self.tfs.__getitem__, tids), tfs), 0)
        return tids, tfs


class IndexWriter:
    """Write a new index from a stream of file records, then move it into place."""

    def __init__(self, path: Path, tokenizer: TokenizerSettings, root: Path) -> None:
        from pathlib import Path

        self.path = Path(path)
        self.tokenizer = tokenizer
        self.root = Path(root)
        _prepare_dir(self.path)
        self.tmp = self.path.with_name(f"{self.path.name}.tmp-{os.getpid()}")
        self.tmp.unlink(missing_ok=True)
        self.conn = sqlite3.connect(self.tmp)
        try:
            self.conn.execute("PRAGMA journal_mode=OFF")
            self.conn.execute("PRAGMA synchronous=OFF")
            self.conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # marks the file as ours
            self.conn.executescript(_SCHEMA)
        except BaseException:  # a full disk: no empty temporary file is left behind
            self.abort()
            raise
        self.postings = _Postings()
        self.forward_tids: list[array[int]] = []
        self.forward_tfs: list[array[int]] = []
        self.class_ids: dict[frozenset[str], int] = {frozenset(): 0}  # access class 0 is public
        self.chunk_class = array("H")
        self.paths: list[str] = []
        self._chunk_rows: list[tuple[Any, ...]] = []
        self._forward_rows: list[tuple[Any, ...]] = []

    def add(self, record: FileRecord) -> None:
        """Append one file's chunks (records must come in path order for a canonical index)."""
        fid = len(self.paths)
        first = len(self.chunk_class)
        klass = self.class_ids.setdefault(record.groups, len(self.class_ids))
        self.paths.append(record.path)
        self.conn.execute(
            "INSERT INTO files VALUES (?,?,?,?,?,?,?,?)",
            (fid, record.path, record.size, record.mtime_ns, record.sha1, first, len(record.chunks), klass),
        )
        if record.acronyms:
            self.conn.executemany("INSERT INTO acronyms VALUES (?,?,?)", ((fid, a, e) for a, e in record.acronyms))
        for offset, (chunk, counts) in enumerate(zip(record.chunks, record.counts)):
            cid = first + offset
            tids, tfs = self.postings.add(cid, counts)
            self.forward_tids.append(tids)
            self.forward_tfs.append(tfs)
            self.chunk_class.append(klass)
            self._chunk_rows.append(_chunk_row(cid, fid, chunk))
            self._forward_rows.append((cid, tids.tobytes(), tfs.tobytes()))
        if len(self._chunk_rows) >= _BATCH:
            self._flush()

    def _flush(self) -> None:
        self.conn.executemany("INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?)", self._chunk_rows)
        self.conn.executemany("INSERT INTO forward VALUES (?,?,?)", self._forward_rows)
        self._chunk_rows.clear()
        self._forward_rows.clear()

    def finish(
        self, commit: str | None = None, access: str | None = None,
        skipped: Iterable[tuple[str, int, int, str]] = (), walk: dict[str, Any] | None = None,
        dir_mtimes: Mapping[str, int] | None = None,
    ) -> Manifest:
        """Compute document frequencies and norms, write them, and replace the index atomically."""
        self._flush()
        conn, post = self.conn, self.postings
        terms = list(post.term_ids)
        df = array("I", [len(ids) for ids in post.ids])
        n_chunks = len(self.chunk_class)
        groups_of_class = {i: g for g, i in self.class_ids.items()}
        norms, lengths, avglen, normalisers = _write_views(
            conn, groups_of_class, self.chunk_class, self.forward_tids, self.forward_tfs, df, n_chunks,
        )
        conn.executemany(
            "INSERT INTO terms VALUES (?,?,?,?,?,?,?)",
            ((t, tid, df[tid], post.ids[tid].tobytes(), post.tfs[tid].tobytes(),
              max_weight(post.ids[tid], post.tfs[tid], norms), max_bm25(post.ids[tid], post.tfs[tid], normalisers))
             for t, tid in sorted(zip(terms, range(len(terms))))),  # in key order: B-tree appends
        )
        conn.execute("INSERT INTO arrays VALUES ('classes', ?)", (self.chunk_class.tobytes(),))
        conn.executemany("INSERT INTO classes VALUES (?,?)",
                         ((i, json.dumps(sorted(g))) for g, i in self.class_ids.items()))
        conn.executemany("INSERT INTO skipped VALUES (?,?,?,?)", skipped)
        conn.executemany("INSERT INTO dirs VALUES (?,?)", folder_mtimes(self.root, folders_of(self.paths), dir_mtimes))
        manifest = Manifest(FORMAT_VERSION, self.tokenizer, str(self.root), len(self.paths), n_chunks,
                            len(terms), time.time(), commit, access, bm25_avglen=avglen, walk=walk)
        _write_meta(conn, manifest, next_chunk=n_chunks)
        conn.commit()
        conn.close()
        _fsync(self.tmp)
        os.replace(self.tmp, self.path)
        return manifest

    def abort(self) -> None:
        """Discard the partly written index; the previous one stays."""
        self.conn.close()
        self.tmp.unlink(missing_ok=True)


def write_index(
    path: Path, records: Iterable[FileRecord], tokenizer: TokenizerSettings, root: Path,
    commit: str | None = None, access: str | None = None,
    skipped: Iterable[tuple[str, int, int, str]] = (), walk: dict[str, Any] | None = None,
    dir_mtimes: Mapping[str, int] | None = None,
) -> Manifest:
    """Build a new index from file records (in path order) and write it atomically to `path`.
    `dir_mtimes` are folder mtimes taken when the files were listed (else they are taken now)."""
    writer = IndexWriter(path, tokenizer, root)
    try:
        for record in records:
            writer.add(record)
        if not writer.paths:  # keep the previous index rather than replace it with nothing
            raise nothing_to_index(root)
        return writer.finish(commit, access, skipped, walk, dir_mtimes)
    except BaseException:
        writer.abort()
        raise


def nothing_to_index(root: Path) -> NothingToIndexError:
    """The error for a repository that leaves no file to index."""
    return NothingToIndexError(f"No indexable files in {root} — check --include, --exclude and --max-file-size, "
                               "or point at a directory with source files")


def check_replaceable(path: Path) -> None:
    """Raise InputError unless a new index may be written at `path`: nothing there, an empty
    file, or an index of this tool (of any format, damaged or not). Anything else, a mistyped
    --index naming notes.txt or an application's db.sqlite3, would be lost; nor a device or
    a pipe (/dev/null reads as empty; opening a FIFO waits for a writer)."""
    if os.path.exists(path) and not os.path.isfile(path):
        raise InputError(f"{path} is not a regular file — pass the path of an index file, or a folder to hold one")
    try:
        with open(path, "rb") as fh:
            head = fh.read(100)
    except (FileNotFoundError, NotADirectoryError):  # no index yet, or a repo path the walk refuses
        return
    except OSError as exc:
        raise InputError(f"Cannot read {path} ({exc.strerror}) — pass another --index path") from None
    if not head or (head.startswith(_SQLITE_HEADER) and head[68:72] == APPLICATION_ID.to_bytes(4, "big")):
        return
    if head.startswith(_SQLITE_HEADER):  # written before the id was (format 8 and older)?
        try:
            conn = sqlite3.connect(_read_only_uri(str(path)), uri=True)
            try:
                if conn.execute("SELECT 1 FROM meta WHERE key = 'format_version'").fetchone():
                    return
            finally:
                conn.close()
        except sqlite3.Error:
            pass
    raise InputError(f"{path} exists and is not a rag index — pass another --index path, "
                     "or delete the file if it is a damaged index")


def retime_files(path: Path, retimed: Sequence[tuple[str, int]], dirs: Sequence[tuple[str, int]] = ()) -> None:
    """Record new mtimes of files whose bytes did not change (e.g. after `touch`), and of
    indexed folders whose mtime moved while nothing indexed changed. Writes nothing when
    there is nothing to record."""
    if not retimed and not dirs:
        return
    conn = sqlite3.connect(path, timeout=60)
    try:
        with conn:
            conn.executemany("UPDATE files SET mtime_ns = ? WHERE path = ?", ((m, p) for p, m in retimed))
            conn.executemany("UPDATE dirs SET mtime_ns = ? WHERE path = ?", ((m, d) for d, m in dirs))
    finally:
        conn.close()


def folder_mtimes(root: Path, folders: Iterable[str], known: Mapping[str, int] | None = None) -> list[tuple[str, int]]:
    """(folder, mtime_ns) of the given folders below root that still exist, in order; `known`
    gives mtimes taken earlier (before the walk), used rather than a stat now."""
    out = []
    for d in sorted(folders):
        if known is not None and d in known:
            out.append((d, known[d]))
            continue
        try:
            out.append((d, os.stat(os.path.join(root, d)).st_mtime_ns))
        except OSError:
            continue
    return out


def folders_of(paths: Iterable[str]) -> set[str]:
    """The folders holding these files ('' for the root)."""
    return {p.rsplit("/", 1)[0] if "/" in p else "" for p in paths}


def update_index(
    path: Path, removed: Iterable[str], added: Iterable[FileRecord], root: Path,
    commit: str | None = None, skipped: Iterable[tuple[str, int, int, str]] = (),
    retimed: Iterable[tuple[str, int]] = (), walk: dict[str, Any] | None = None,
    dir_mtimes: Mapping[str, int] | None = None,
) -> Manifest:
    """Apply changed files to an existing index in one transaction.

    `removed` are the paths whose chunks go (deleted or changed files); `added` the new
    records of changed or new files. Postings of the affected terms are edited in place;
    N, document frequencies and norms are recomputed, so the result scores exactly as a
    full rebuild would. The access rules must be unchanged (a change means a full build).
    """
    conn = sqlite3.connect(path, timeout=60, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("UPDATE files SET mtime_ns = ? WHERE path = ?", ((m, p) for p, m in retimed))
        meta = {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM meta")}
        next_chunk = int(meta["next_chunk"])
        class_ids = {frozenset(json.loads(g)): i for i, g in conn.execute("SELECT id, groups FROM classes")}
        # term id -> removed chunk-id ranges, and -> added (chunk id, tf) pairs
        removed_ranges: dict[int, list[tuple[int, int]]] = {}
        for p in removed:
            row = conn.execute("SELECT id, first_chunk, n_chunks FROM files WHERE path = ?", (p,)).fetchone()
            if row is None:
                continue
            fid, first, n = row
            for (tids_blob,) in conn.execute(
                    "SELECT tids FROM forward WHERE chunk_id >= ? AND chunk_id < ?", (first, first + n)):
                tids = array("I")
                tids.frombytes(tids_blob)
                for tid in tids:
                    ranges = removed_ranges.setdefault(tid, [])
                    if not ranges or ranges[-1] != (first, first + n):
                        ranges.append((first, first + n))
            conn.execute("DELETE FROM chunks WHERE id >= ? AND id < ?", (first, first + n))
            conn.execute("DELETE FROM forward WHERE chunk_id >= ? AND chunk_id < ?", (first, first + n))
            conn.execute("DELETE FROM files WHERE id = ?", (fid,))
            conn.execute("DELETE FROM acronyms WHERE file_id = ?", (fid,))
        term_ids = _TermIds(conn)
        added_postings: dict[int, tuple[array[int], array[int]]] = {}
        new_classes: list[tuple[int, int, int]] = []  # (first chunk, count, class)
        fid = (conn.execute("SELECT MAX(id) FROM files").fetchone()[0] or 0) + 1
        for record in added:
            klass = class_ids.setdefault(record.groups, len(class_ids))
            first = next_chunk
            conn.execute("INSERT INTO files VALUES (?,?,?,?,?,?,?,?)",
                         (fid, record.path, record.size, record.mtime_ns, record.sha1, first,
                          len(record.chunks), klass))
            rows, fwd = [], []
            for chunk, counts in zip(record.chunks, record.counts):
                cid = next_chunk
                next_chunk += 1
                tids = array("I", [term_ids.get(t) for t in counts])
                tfs = _stored_tfs(counts)
                for tid, tf in zip(tids, tfs):
                    entry = added_postings.get(tid)
                    if entry is None:
                        entry = added_postings[tid] = (array("I"), array("H"))
                    entry[0].append(cid)
                    entry[1].append(tf)
                rows.append(_chunk_row(cid, fid, chunk))
                fwd.append((cid, tids.tobytes(), tfs.tobytes()))
            conn.executemany("INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?)", rows)
            conn.executemany("INSERT INTO forward VALUES (?,?,?)", fwd)
            conn.executemany("INSERT INTO acronyms VALUES (?,?,?)", ((fid, a, e) for a, e in record.acronyms))
            new_classes.append((first, len(record.chunks), klass))
            fid += 1
        edited = _edit_postings(conn, term_ids, removed_ranges, added_postings)
        # everything below is recomputed from the forward lists of the live chunks
        chunk_class = array("H", bytes(2 * next_chunk))
        for first, n, klass in conn.execute("SELECT first_chunk, n_chunks, class FROM files"):
            chunk_class[first:first + n] = array("H", [klass]) * n
        forward_tids: list[array[int]] = [array("I")] * next_chunk
        forward_tfs: list[array[int]] = [array("H")] * next_chunk
        for cid, tids_blob, tfs_blob in conn.execute("SELECT chunk_id, tids, tfs FROM forward"):
            forward_tids[cid] = array("I", tids_blob)  # bytes: read as the machine's values
            forward_tfs[cid] = array("H", tfs_blob)
        live = array("b", bytes(next_chunk))
        for first, n in conn.execute("SELECT first_chunk, n_chunks FROM files"):
            live[first:first + n] = array("b", [1]) * n
        df = term_ids.df_array()
        n_live = sum(live)
        everything_key = view_key(frozenset(class_ids.values()))
        old_norms = array("d")
        for (data,) in conn.execute("SELECT data FROM arrays WHERE name LIKE ? ORDER BY name",
                                    (f"norms:{everything_key}#%",)):
            old_norms.frombytes(data)
        conn.execute("DELETE FROM arrays")
        conn.execute("DELETE FROM views")
        conn.execute("DELETE FROM classes")
        groups_of_class = {i: g for g, i in class_ids.items()}
        norms, lengths, _, _ = _write_views(conn, groups_of_class, chunk_class, forward_tids, forward_tfs, df, n_live,
                                            live)
        # N and the norms moved. Rather than rescan every term's postings, widen all stored
        # bounds by the most any surviving chunk's norm shrank, and raise the bounds of the
        # terms that gained postings to cover those (a removed posting leaves a bound valid)
        shrink = max((o / n for o, n in zip(old_norms, norms) if o and n), default=1.0)
        scale = float(meta.get("bound_scale", 1.0)) * max(1.0, shrink)
        # a BM25 bound depends on chunk lengths, which never change, and on the average length:
        # the new postings' are computed with the one the others were (meta.bm25_avglen)
        avglen = float(meta["bm25_avglen"])
        normalisers = bm25_normalisers(lengths, avglen)
        conn.executemany("UPDATE terms SET maxw = ?, maxb = ? WHERE term = ?",
                         ((max(maxw, max_weight(ids, tfs, norms) / scale), max(maxb, max_bm25(ids, tfs, normalisers)),
                           term)
                          for term, (maxw, maxb, ids, tfs) in edited.items() if ids))
        conn.execute("INSERT INTO arrays VALUES ('classes', ?)", (chunk_class.tobytes(),))
        conn.executemany("INSERT INTO classes VALUES (?,?)",
                         ((i, json.dumps(sorted(g))) for g, i in class_ids.items()))
        conn.execute("DELETE FROM skipped")
        conn.executemany("INSERT INTO skipped VALUES (?,?,?,?)", skipped)
        paths = [p for (p,) in conn.execute("SELECT path FROM files")]
        conn.execute("DELETE FROM dirs")
        conn.executemany("INSERT INTO dirs VALUES (?,?)", folder_mtimes(root, folders_of(paths), dir_mtimes))
        n_terms = conn.execute("SELECT COUNT(*) FROM terms").fetchone()[0]
        manifest = Manifest(FORMAT_VERSION, TokenizerSettings.from_dict(meta["tokenizer"]), str(root),
                            len(paths), n_live, n_terms, time.time(), commit, meta.get("access"),
                            bm25_avglen=avglen, walk=walk if walk is not None else meta.get("walk"))
        conn.execute("DELETE FROM meta")
        _write_meta(conn, manifest, next_chunk, scale)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()
    return manifest


def _decode(typecode: str, data: bytes) -> array[Any]:
    out = array(typecode)
    out.frombytes(data)
    return out


class _TermIds:
    """Term ids of an index being updated, creating ids for terms it has not seen."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.known: dict[str, int] = {}
        self.next = (conn.execute("SELECT MAX(id) FROM terms").fetchone()[0] or 0) + 1
        self.new: dict[int, str] = {}

    def get(self, term: str) -> int:
        tid = self.known.get(term)
        if tid is None:
            row = self.conn.execute("SELECT id FROM terms WHERE term = ?", (term,)).fetchone()
            if row is None:
                tid = self.next
                self.next += 1
                self.new[tid] = term
            else:
                tid = row[0]
            self.known[term] = tid
        return tid

    def df_array(self) -> array[int]:
        """Return df by term id for every term in the index."""
        df = array("I", bytes(4 * self.next))
        for tid, n in self.conn.execute("SELECT id, df FROM terms"):
            df[tid] = n
        return df


def _edit_postings(
    conn: sqlite3.Connection, term_ids: _TermIds,
    removed: dict[int, list[tuple[int, int]]], added: dict[int, tuple[array[int], array[int]]],
) -> dict[str, tuple[float, float, array[int], array[int]]]:
    """Cut removed chunk-id ranges out of the affected postings and append the new chunks;
    return, for each term that remains, its stored bounds before the edit (0 for a new term)
    and its added postings."""
    edited: dict[str, tuple[float, float, array[int], array[int]]] = {}
    names = {tid: t for t, tid in term_ids.known.items()}
    for tid in removed.keys() - names.keys():
        (names[tid],) = conn.execute("SELECT term FROM terms WHERE id = ?", (tid,)).fetchone()
    for tid in removed.keys() | added.keys():
        term = names[tid]
        row = conn.execute("SELECT ids, tfs, maxw, maxb FROM terms WHERE term = ?", (term,)).fetchone()
        ids, tfs = array("I"), array("H")
        maxw = maxb = 0.0
        if row is not None:
            ids.frombytes(row[0])
            tfs.frombytes(row[1])
            maxw, maxb = row[2], row[3]
        for lo, hi in sorted(removed.get(tid, ()), reverse=True):
            i, j = bisect_left(ids, lo), bisect_left(ids, hi)
            del ids[i:j]
            del tfs[i:j]
        new_ids, new_tfs = added.get(tid, (array("I"), array("H")))
        ids.extend(new_ids)  # new chunk ids are above every existing one: order is kept
        tfs.extend(new_tfs)
        if ids:  # the bounds are updated once the norms are known
            conn.execute("INSERT OR REPLACE INTO terms VALUES (?,?,?,?,?,?,?)",
                         (term, tid, len(ids), ids.tobytes(), tfs.tobytes(), maxw, maxb))
            edited[term] = (maxw, maxb, new_ids, new_tfs)
        else:
            conn.execute("DELETE FROM terms WHERE term = ?", (term,))
    return edited


def _write_meta(conn: sqlite3.Connection, manifest: Manifest, next_chunk: int, bound_scale: float = 1.0) -> None:
    meta = {
        "format_version": FORMAT_VERSION, "tokenizer": manifest.tokenizer.to_dict(), "root": manifest.root,
        "n_files": manifest.n_files, "n_chunks": manifest.n_chunks, "n_terms": manifest.n_terms,
        "built_at": manifest.built_at, "commit": manifest.commit, "access": manifest.access,
        "next_chunk": next_chunk, "bound_scale": bound_scale, "bm25_avglen": manifest.bm25_avglen,
        "walk": manifest.walk, "byteorder": sys.byteorder, "array_block": ARRAY_BLOCK,
    }
    conn.executemany("INSERT INTO meta VALUES (?,?)", ((k, json.dumps(v)) for k, v in meta.items()))


def _write_views(
    conn: sqlite3.Connection, groups_of_class: dict[int, frozenset[str]], chunk_class: array[int],
    forward_tids: list[array[int]], forward_tfs: list[array[int]], df: array[int], n_live: int,
    live: array[int] | None = None,
) -> tuple[array[float], array[int], float, array[float]]:
    """Store each chunk's length, and the chunk count, total length, norms and BM25 length
    normalisers of every view a caller can have; return the lengths and, for the view that
    reads everything, its norms, average chunk length and BM25 normalisers."""
    everything: tuple[array[float], float, array[float]] = (array("d"), 1.0, array("d"))
    lengths = chunk_lengths(forward_tfs, live)
    conn.execute("INSERT INTO arrays VALUES ('lengths', ?)", (lengths.tobytes(),))
    for view in realizable_views(groups_of_class):
        if len(view) == len(groups_of_class):  # everything readable
            n_view, view_df = n_live, df
        else:
            n_view, view_df = _view_df(forward_tids, chunk_class, view, len(df), live)
        norms = view_norms(forward_tids, forward_tfs, chunk_class, view, n_view, view_df, live)
        length = view_length(lengths, chunk_class, view)
        avglen = length / n_view if length else 1.0
        normalisers = bm25_normalisers(lengths, avglen)
        if len(view) == len(groups_of_class):
            everything = (norms, avglen, normalisers)
        conn.execute("INSERT INTO views VALUES (?,?,?)", (view_key(view), n_view, length))
        _insert_blocks(conn, f"norms:{view_key(view)}", norms)
        _insert_blocks(conn, f"bm25k:{view_key(view)}", normalisers)
    return everything[0], lengths, everything[1], everything[2]


# Entries per stored block of a per-chunk float array (8 KB): a query reads the blocks that
# hold its postings' chunks, so a query with few postings reads little of a large index.
ARRAY_BLOCK = 1024


def _block_name(name: str, block: int) -> str:
    return f"{name}#{block:06d}"


def _insert_blocks(conn: sqlite3.Connection, name: str, values: array[float]) -> None:
    conn.executemany("INSERT INTO arrays VALUES (?,?)",
                     ((_block_name(name, b), values[b * ARRAY_BLOCK:(b + 1) * ARRAY_BLOCK].tobytes())
                      for b in range(-(-len(values) // ARRAY_BLOCK))))


def blocks_of(ids: array[int], size: int) -> list[int]:
    """Return the blocks of `size` ids that sorted chunk ids fall in (a binary search a block)."""
    out: list[int] = []
    i, n = 0, len(ids)
    while i < n:
        block = ids[i] // size
        out.append(block)
        i = bisect_left(ids, (block + 1) * size, i)
    return out


class ChunkFloats:
    """A per-chunk float64 array of a view, read from the index block by block as needed.

    Values live in an anonymous memory map, so blocks never read cost no memory and no time;
    `values` indexes like an array (0.0 where nothing was read).
    """

    def __init__(self, n_ids: int, size: int, fetch: Callable[[list[int]], list[tuple[int, bytes]]],
                 decode: Callable[[bytes], array[float]] | None, where: str) -> None:
        self.size = size  # ids per block, as the index was written (meta.array_block)
        self.n_blocks = -(-n_ids // size)
        self._map = mmap.mmap(-1, 8 * max(n_ids, 1))
        self.values = memoryview(self._map).cast("d")[:n_ids]
        self._loaded: set[int] = set()
        self._fetch = fetch
        self._decode = decode  # stored bytes -> this machine's floats; None when they already are
        self._where = where

    def load(self, blocks: Iterable[int] | None = None) -> memoryview[float]:
        """Read the given blocks (None: all) if not read yet; return the values."""
        missing = sorted(set(range(self.n_blocks) if blocks is None else blocks) - self._loaded)
        if missing:
            found = self._fetch(missing)
            if len(found) != len(missing):
                raise IndexFormatError(f"The index at {self._where} lacks blocks of a per-chunk array — {REBUILD_HINT}")
            for block, data in found:
                if self._decode is not None:
                    data = self._decode(data).tobytes()
                # stored bytes go straight into the map: no array per block
                self._map[8 * block * self.size:8 * block * self.size + len(data)] = data
            self._loaded.update(missing)
        return self.values


def bm25_normalisers(lengths: array[int], avglen: float) -> array[float]:
    """Return k1 (1 - b + b len / avglen) for each chunk length, as k1 (1 - b) + (k1 b / avglen) len:
    BM25's tf part of a posting is tf / (tf + this)."""
    base = BM25_K1 * (1.0 - BM25_B)
    per_length = BM25_K1 * BM25_B / avglen
    return array("d", map(add, repeat(base), map(mul, repeat(per_length), lengths)))


def chunk_lengths(forward_tfs: list[array[int]], live: array[int] | None = None) -> array[int]:
    """Return each chunk's length, the sum of its stored tfs (0 for unused ids)."""
    if live is None:
        return array("I", map(sum, forward_tfs))
    return array("I", [sum(tfs) if alive else 0 for tfs, alive in zip(forward_tfs, live)])


def view_length(lengths: array[int], chunk_class: array[int], view: frozenset[int]) -> int:
    """Return the total length of the chunks a view can read (unused ids have length 0)."""
    if set(chunk_class) <= view:
        return sum(lengths)
    return sum(n for n, klass in zip(lengths, chunk_class) if klass in view)


def prepare_index_dir(path: Path) -> None:
    """Create the index's folder (and a .rag folder's .gitignore) before the repository's folders'
    mtimes are taken: creating .rag/ moves the root's mtime."""
    _prepare_dir(path)


def _prepare_dir(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.parent.name == INDEX_DIRNAME and not (path.parent / ".gitignore").exists():
        # keep the index out of the repository's `git status`
        (path.parent / ".gitignore").write_text("# written by rag: ignore the index\n*\n")
    _remove_stale_temps(path)


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
    forward_tids: list[array[int]], chunk_class: array[int], view: frozenset[int], n_terms: int,
    live: array[int] | None = None,
) -> tuple[int, array[int]]:
    """Count the chunks and each term's document frequency within a view."""
    counts: Counter[int] = Counter()
    n = 0
    for cid, (tids, klass) in enumerate(zip(forward_tids, chunk_class)):
        if klass in view and (live is None or live[cid]):
            counts.update(tids)
            n += 1
    df = array("I", bytes(4 * n_terms))
    for tid, c in counts.items():
        df[tid] = c
    return n, df


def max_weight(ids: array[int], tfs: array[int], norms: array[float]) -> float:
    """Return a term's largest tf_weight / norm over its postings (at C speed); times the
    term's idf, that bounds its normalised weight in any chunk."""
    if not ids:
        return 0.0
    largest: float = max(map(truediv, map(_TF_WEIGHTS.__getitem__, tfs), map(norms.__getitem__, ids)))
    return largest


def max_bm25(ids: array[int], tfs: array[int], normalisers: array[float]) -> float:
    """Return a term's largest BM25 tf part, tf / (tf + normaliser), over its postings (at C
    speed); it is below 1."""
    if not ids:
        return 0.0
    largest: float = max(map(truediv, tfs, map(add, tfs, map(normalisers.__getitem__, ids))))
    return largest


class _TfTable(dict[int, float]):
    """f(tf) by stored tf, each computed on first use and looked up at C speed (a dict's
    __getitem__ in map): a full table of the 65,536 storable tfs took 20 ms to build, and
    few chunks repeat a term 256 times."""

    def __init__(self, f: Callable[[int], float]) -> None:
        super().__init__({0: 0.0})
        self._f = f

    def __missing__(self, tf: int) -> float:
        value = self[tf] = self._f(tf)
        return value


_TF_WEIGHTS = _TfTable(tf_weight)
_TF_WEIGHT_SQUARES = _TfTable(lambda tf: tf_weight(tf) ** 2)


def view_norms(
    forward_tids: list[array[int]], forward_tfs: list[array[int]], chunk_class: array[int],
    view: frozenset[int], n_view: int, df: array[int], live: array[int] | None = None,
) -> array[float]:
    """Return each chunk's L2 norm under the IDF of a view (0.0 for chunks outside it).

    Per chunk the sum runs at C speed: map/sum over its forward lists.
    """
    # one idf per distinct df (most terms share a small df), then a list by term id
    idf_sq_of = {d: idf_weight(n_view, d) ** 2 for d in set(df) if d}
    idf_sq_of[0] = 0.0
    idf_sq = list(map(idf_sq_of.__getitem__, df))
    w_sq = _TF_WEIGHT_SQUARES.__getitem__
    get_idf = idf_sq.__getitem__
    out = array("d", bytes(8 * len(forward_tids)))
    for cid, (tids, tfs) in enumerate(zip(forward_tids, forward_tfs)):
        if chunk_class[cid] in view and (live is None or live[cid]):
            out[cid] = math.sqrt(sum(map(mul, map(w_sq, tfs), map(get_idf, tids))))
    return out


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


# a per-chunk float array by chunk id: an array when computed, a memoryview when read in blocks
FloatColumn = Union["array[float]", "memoryview[float]"]


class View:
    """The part of an index one caller may read. Its per-chunk arrays (norms for cosine, BM25
    normalisers) are read on first use, and only the blocks asked for."""

    __slots__ = ("classes", "n_chunks", "length", "chunk_class", "_columns", "_computed")

    def __init__(
        self, classes: frozenset[int] | None, n_chunks: int, length: int, chunk_class: array[int] | None,
        columns: dict[str, ChunkFloats], computed: dict[str, array[float]] | None = None,
    ) -> None:
        self.classes = classes  # readable access classes; None = all (nothing to filter)
        self.n_chunks = n_chunks  # N for the IDF
        self.length = length  # the total length of its chunks (BM25's average length is length / n_chunks)
        self.chunk_class = chunk_class  # access class by chunk id, when filtering is needed
        self._columns = columns
        self._computed = computed or {}

    @property
    def norms(self) -> FloatColumn:
        """Each chunk's L2 norm under this view's IDF, by chunk id (0.0 outside the view)."""
        return self.column("norms")

    def column(self, name: str, postings: Iterable[array[int]] | None = None) -> FloatColumn:
        """Return the per-chunk array `name` ("norms" or "bm25k"), read in full, or, given
        postings (sorted chunk ids), only where they fall."""
        computed = self._computed.get(name)
        if computed is not None:
            return computed
        column = self._columns[name]
        if postings is None:
            return column.load(None)
        blocks: set[int] = set()
        for ids in sorted(postings, key=len, reverse=True):  # a long list alone often covers every block
            blocks.update(blocks_of(ids, column.size))
            if len(blocks) == column.n_blocks:
                break
        return column.load(blocks)


class Index:
    """A saved index opened for reading; loads only the manifest until asked for more."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        if not os.path.isfile(self.path):
            raise NoIndexError(f"No index at {self.path} — run `python ingest.py REPO` first")
        try:
            self._conn = _connect_for_reading(self.path)
        except sqlite3.DatabaseError as exc:
            raise self._corrupt(exc) from None
        self._read_manifest()
        # the ingest-time tokenizer, kept so its per-word cache serves every query on this index
        self.tokenizer = Tokenizer(self.manifest.tokenizer)

    def _read_manifest(self) -> None:
        """Read the manifest, and forget everything read after it (views, lengths, names)."""
        try:
            self._data_version = self._conn.execute("PRAGMA data_version").fetchone()[0]
            meta = {k: json.loads(v) for k, v in self._conn.execute("SELECT key, value FROM meta")}
        except (sqlite3.DatabaseError, ValueError, TypeError) as exc:  # TypeError: a value damaged to NULL
            raise self._corrupt(exc) from None
        version = meta.get("format_version")
        if version != FORMAT_VERSION:
            raise IndexFormatError(
                f"The index at {self.path} has format version {version!r}, this tool reads version "
                f"{FORMAT_VERSION} — re-run `{_ingest_command(meta.get('root'), self.path)}`"
            )
        try:
            self.manifest = Manifest(
                format_version=version,
                tokenizer=TokenizerSettings.from_dict(meta["tokenizer"]),
                root=meta["root"], n_files=meta["n_files"], n_chunks=meta["n_chunks"],
                n_terms=meta["n_terms"], built_at=meta["built_at"], commit=meta.get("commit"),
                access=meta.get("access"), bound_scale=float(meta.get("bound_scale", 1.0)),
                bm25_avglen=float(meta["bm25_avglen"]),
                walk=meta.get("walk"),
            )
            self._block = int(meta["array_block"])  # ids per stored block of a per-chunk array
            if self._block <= 0 or not self.manifest.bm25_avglen > 0 or not isinstance(self.manifest.root, str):
                raise ValueError("array_block, bm25_avglen or root out of range")
        except (KeyError, TypeError, ValueError) as exc:
            raise IndexFormatError(
                f"The index at {self.path} has a damaged manifest ({exc}) — {REBUILD_HINT}"
            ) from None
        self._swap: bool = meta.get("byteorder", sys.byteorder) != sys.byteorder
        self._n_ids = int(meta.get("next_chunk", 0))  # chunk ids in use are below this
        self._views: dict[str, View] = {}
        self._lengths: array[int] | None = None
        self._term_names: dict[int, str] | None = None  # read on first need, by ingest and benches

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Read everything inside from one state of the index, even while an update commits.

        The reads run in one transaction. If another connection changed the index since this
        one last read it, the manifest is read again and the views, blocks and lengths read
        before are dropped, so that nothing old is mixed with the new."""
        if self._conn.in_transaction:  # already inside a snapshot
            yield
            return
        self._query("BEGIN")
        try:
            if self._query("PRAGMA data_version").fetchone()[0] != self._data_version:
                self._read_manifest()
            yield
        except BaseException:
            with suppress(sqlite3.Error):  # a damaged file may fail this too: keep the first error
                self._conn.execute("COMMIT")
            raise
        self._query("COMMIT")

    @property
    def foreign_byte_order(self) -> bool:
        """Whether a machine of the other byte order wrote the index: it reads correctly, but
        only a rebuild may write to it (update_index writes this machine's order)."""
        return self._swap

    def close(self) -> None:
        """Close the database connection."""
        self._conn.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def postings(self, term: str) -> tuple[array[int], array[int]] | None:
        """Return (chunk ids, tfs) of a term, or None if the index has never seen it."""
        found = self.term(term)
        return None if found is None else (found[0], found[1])

    def term(self, term: str) -> tuple[array[int], array[int], float, float] | None:
        """Return a term's chunk ids, tfs and its two pruning bounds (see the terms table), or
        None if unseen."""
        row = self._query("SELECT ids, tfs, maxw, maxb FROM terms WHERE term = ?", (term,)).fetchone()
        if row is None:
            return None
        return self._decode("I", row[0]), self._decode("H", row[1]), row[2], row[3]

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
        row = self._query("SELECT n_chunks, length FROM views WHERE key = ?", (key,)).fetchone()
        arrays: dict[str, array[float]] = {}
        if row is not None:
            n_view, length = row[0], row[1]
        else:  # a rare group combination: compute its statistics now
            assert chunk_class is not None
            n_ids = len(chunk_class)
            forward_tids: list[array[int]] = [array("I")] * n_ids
            forward_tfs: list[array[int]] = [array("H")] * n_ids
            live = array("b", bytes(n_ids))
            for cid, tids_blob, tfs_blob in self._query("SELECT chunk_id, tids, tfs FROM forward"):
                forward_tids[cid], forward_tfs[cid] = self._decode("I", tids_blob), self._decode("H", tfs_blob)
                live[cid] = 1
            n_terms = self._query("SELECT MAX(id) FROM terms").fetchone()[0] + 1
            n_view, df = _view_df(forward_tids, chunk_class, readable, n_terms, live)
            arrays["norms"] = view_norms(forward_tids, forward_tfs, chunk_class, readable, n_view, df, live)
            length = view_length(self.lengths(), chunk_class, readable)
            arrays["bm25k"] = bm25_normalisers(self.lengths(), length / n_view if length else 1.0)
        decode = (lambda data: self._decode("d", data)) if self._swap else None
        columns = {name: ChunkFloats(self._n_ids, self._block, self._blocks_reader(f"{name}:{key}"), decode, self.path)
                   for name in ("norms", "bm25k")}
        view = View(None if everything else readable, n_view, length, chunk_class, columns, arrays)
        self._views[key] = view
        return view

    def _blocks_reader(self, name: str) -> Callable[[list[int]], list[tuple[int, bytes]]]:
        def fetch(blocks: list[int]) -> list[tuple[int, bytes]]:
            out: list[tuple[int, bytes]] = []
            for start in range(0, len(blocks), 500):  # SQLite's limit on parameters
                part = blocks[start:start + 500]
                names = [_block_name(name, b) for b in part]
                rows = self._query(f"SELECT name, data FROM arrays WHERE name IN ({','.join('?' * len(names))})",
                                   tuple(names))
                out.extend((int(n.rsplit("#", 1)[1]), data) for n, data in rows)
            return out

        return fetch

    def acronyms(self, classes: frozenset[int] | None = None) -> list[tuple[str, str]]:
        """Return the (acronym, expansion) term pairs the indexed files define, from the files
        of readable access classes only (`classes`; None = all), without repeats."""
        if classes is None:
            rows = self._query("SELECT DISTINCT acronym, expansion FROM acronyms")
        else:
            marks = ",".join("?" * len(classes))
            rows = self._query("SELECT DISTINCT a.acronym, a.expansion FROM acronyms a JOIN files f ON f.id = a.file_id"
                               f" WHERE f.class IN ({marks})", tuple(classes))
        return [(a, e) for a, e in rows]

    def lengths(self) -> array[int]:
        """Return each chunk's length (the sum of its stored tfs), by chunk id; read once."""
        if self._lengths is None:
            self._lengths = self._array("lengths", "I")
        return self._lengths

    def _array(self, name: str, typecode: str) -> array[Any]:
        row = self._query("SELECT data FROM arrays WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise IndexFormatError(f"The index at {self.path} lacks {name!r} — {REBUILD_HINT}")
        return self._decode(typecode, row[0])

    def _decode(self, typecode: str, data: bytes) -> array[Any]:
        out = array(typecode)
        out.frombytes(data)
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

    def places(self, ids: list[int]) -> dict[int, tuple[str, int, int]]:
        """Return chunk id -> (path, start_line, end_line), without reading the texts."""
        marks = ",".join("?" * len(ids))
        rows = self._query(
            "SELECT c.id, f.path, c.start_line, c.end_line FROM chunks c JOIN files f ON f.id = c.file_id"
            f" WHERE c.id IN ({marks})", tuple(ids),
        )
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def all_chunks(self) -> Iterator[tuple[int, Chunk, dict[str, int]]]:
        """Yield every chunk with its id and stored term frequencies, in id order (for benches
        and checks that need the whole corpus; a query never does this)."""
        return self._stored_chunks("", ())

    def records(self, paths: Iterable[str]) -> Iterator[FileRecord]:
        """Yield the stored records (chunks and term counts) of indexed files, in path order."""
        for path in sorted(set(paths)):
            row = self._query("SELECT id, size, mtime_ns, sha1, first_chunk, n_chunks FROM files WHERE path = ?",
                              (path,)).fetchone()
            if row is None:
                continue
            fid, size, mtime_ns, sha1, first, n = row
            # a file's chunks have consecutive ids: a range on the primary key, not a scan
            stored = list(self._stored_chunks("WHERE c.id >= ? AND c.id < ?", (first, first + n)))
            acronyms = tuple(self._query("SELECT acronym, expansion FROM acronyms WHERE file_id = ? ORDER BY 1, 2",
                                         (fid,)))
            yield FileRecord(path, size, mtime_ns, sha1, tuple(c for _, c, _ in stored),
                             tuple(n for _, _, n in stored), acronyms=acronyms)

    def _stored_chunks(self, where: str, args: tuple[object, ...]) -> Iterator[tuple[int, Chunk, dict[str, int]]]:
        """Yield (id, chunk, term counts) of the chunks matching `where`, in id order."""
        if self._term_names is None:  # term id -> term, read once per Index
            self._term_names = dict(self._query("SELECT id, term FROM terms"))
        names = self._term_names
        rows = self._query(
            "SELECT c.id, f.path, c.start_line, c.end_line, c.kind, c.symbol, c.text, c.context, c.ordinal,"
            " w.tids, w.tfs FROM chunks c JOIN files f ON f.id = c.file_id JOIN forward w ON w.chunk_id = c.id"
            f" {where} ORDER BY c.id", args,
        )
        for cid, *fields, tids, tfs in rows:
            counts = {names[t]: n for t, n in zip(self._decode("I", tids), self._decode("H", tfs))}
            yield cid, Chunk(*fields), counts

    def files(self) -> dict[str, tuple[int, int, str]]:
        """Return path -> (size, mtime_ns, sha1) of every indexed file."""
        rows = self._query("SELECT path, size, mtime_ns, sha1 FROM files")
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def moved_repository(self) -> str | None:
        """Return the folder that now holds this index in its default place (REPO/.rag/index.sqlite)
        and the indexed files, when that is not the root the index was built from: the
        repository was copied or moved with its index. Otherwise None (an index kept elsewhere
        with --index, in a parent folder of its repository, or in a folder that is not a copy of
        the repository, is not moved)."""
        owner = _repository_holding(os.path.abspath(self.path))
        if owner is None:
            return None
        real = os.path.realpath(owner)
        root = self.manifest.root
        if real == root or root.startswith(real.rstrip(os.sep) + os.sep):
            return None  # its own place, or written into a parent folder of the repository (--index)
        # a copy holds the indexed files, but for those edited, added or removed since: nine in ten
        # of a sample spread over them. One file first: a folder that only stores the index
        # (--index DIR) fails there, at the cost of one stat per query
        first = self._query("SELECT path FROM files LIMIT 1").fetchone()
        if first is None or not os.path.isfile(os.path.join(owner, first[0])):
            return None
        paths = [path for (path,) in self._query("SELECT path FROM files ORDER BY path")]
        sample = paths[:: max(1, len(paths) // 50)]
        found = sum(os.path.isfile(os.path.join(owner, path)) for path in sample)
        return owner if sample and found >= 0.9 * len(sample) else None

    def dir_mtimes(self) -> dict[str, int]:
        """Return folder -> mtime_ns of every folder holding an indexed file, as last ingested."""
        return dict(self._query("SELECT path, mtime_ns FROM dirs").fetchall())

    def skipped_files(self) -> dict[str, tuple[int, int, str]]:
        """Return path -> (size, mtime_ns, reason) of files read at ingest and passed over."""
        rows = self._query("SELECT path, size, mtime_ns, reason FROM skipped")
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def changed_files(self, paths: Iterable[str] = (), everywhere: bool = True) -> list[str]:
        """Return what changed since ingest, cheaply: the given files by size and mtime, and
        indexed directories by mtime (which moves when a file in it is added, removed,
        renamed, or saved by an editor that writes a new file). `everywhere` checks every
        indexed directory; otherwise only those holding the given files and their ancestors,
        so that the cost depends on the files asked about, not on the size of the repository.
        Empty if the root is gone."""
        root = self.manifest.root
        if not os.path.isdir(root):
            return []
        stat = os.stat
        changed: list[str] = []
        wanted = list(dict.fromkeys(paths))
        if wanted:
            marks = ",".join("?" * len(wanted))
            rows = self._query(f"SELECT path, size, mtime_ns FROM files WHERE path IN ({marks})", tuple(wanted))
            for path, size, mtime_ns in rows:
                try:
                    st = stat(f"{root}/{path}")
                except OSError:
                    changed.append(path)
                    continue
                if st.st_size != size or st.st_mtime_ns != mtime_ns:
                    changed.append(path)
        if everywhere:
            dirs = self._query("SELECT path, mtime_ns FROM dirs")
        else:
            near = sorted({d for path in wanted for d in _ancestors(path)})
            marks = ",".join("?" * len(near))
            dirs = self._query(f"SELECT path, mtime_ns FROM dirs WHERE path IN ({marks}) ORDER BY path", tuple(near))
        for path, mtime_ns in dirs:
            try:
                if stat(f"{root}/{path}").st_mtime_ns != mtime_ns:
                    changed.append(f"{path or '.'}/")
            except OSError:
                changed.append(f"{path or '.'}/")
        return changed

    def access_changed(self) -> bool:
        """Tell whether the repository's .rag-access differs from the one the index was built
        with (added, removed or edited: who may read what is decided at ingest). False if the
        root is gone."""
        root = self.manifest.root
        try:
            with open(os.path.join(root, ACCESS_FILE), encoding="utf-8") as fh:
                text = fh.read()
        except FileNotFoundError:
            return self.manifest.access is not None and os.path.isdir(root)
        except (OSError, UnicodeDecodeError):
            return True  # unreadable now: the next ingest will say why
        return access_digest(text) != self.manifest.access

    def _corrupt(self, exc: Exception) -> IndexFormatError:
        return IndexFormatError(f"The index at {self.path} is corrupt ({exc}) — {REBUILD_HINT}")

    def _query(self, sql: str, args: tuple[object, ...] = ()) -> sqlite3.Cursor:
        try:
            return self._conn.execute(sql, args)
        except sqlite3.DatabaseError as exc:
            raise self._corrupt(exc) from None


# the access list's file name, and the digest of its text an index records (rag.access uses
# both): here, so that a query's check loads neither rag.access's ignore rules nor, without an
# access list, hashlib
ACCESS_FILE = ".rag-access"


def access_digest(text: str) -> str:
    """The digest of an access list's text, as the index records it."""
    import hashlib

    return hashlib.sha1(text.encode()).hexdigest()


def _ancestors(path: str) -> Iterator[str]:
    """Yield the folders above a relative path, innermost first, ending with the root ('')."""
    while "/" in path:
        path = path.rsplit("/", 1)[0]
        yield path
    yield ""


def _connect_for_reading(path: str) -> sqlite3.Connection:
    """Open an index to read it; read-write when allowed, so that SQLite can roll back the
    journal of an update that was killed, read-only otherwise. A query waits for an update
    that is committing rather than failing."""
    try:
        conn = sqlite3.connect(_file_uri(path, "rw"), uri=True, timeout=30)
        conn.execute("PRAGMA query_only = ON")
        return conn
    except sqlite3.OperationalError:
        return sqlite3.connect(_read_only_uri(path), uri=True, timeout=30)


def _file_uri(path: str, mode: str) -> str:
    """An SQLite URI for a path: '#', '?' and '%' in a folder name (C#proj) are escaped, as a
    URI needs them to be, or SQLite opens another file."""
    from urllib.parse import quote

    return f"file:{quote(os.path.abspath(path))}?mode={mode}"


def _read_only_uri(path: str) -> str:
    return _file_uri(path, "ro")


def _state_file() -> str:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "rag", "indexes.json")


def remember_index(cwd: str | os.PathLike[str], index_path: str | os.PathLike[str]) -> None:
    """Record that an ingest run from `cwd` wrote `index_path`, so a query from there finds it."""
    from pathlib import Path

    state = Path(_state_file())
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


def locate_index(explicit: str | os.PathLike[str] | None = None, cwd: str | os.PathLike[str] | None = None) -> str:
    """Find the index to query: `explicit`, else ./.rag in cwd or a parent, else the one ingested from cwd."""
    if explicit is not None:
        path = _index_file(os.fspath(explicit))
        if not os.path.isfile(path):
            raise NoIndexError(f"No index at {explicit} — run `python ingest.py REPO --index {explicit}` first")
        return path
    here = folder = os.path.realpath(os.fspath(cwd) if cwd is not None else os.getcwd())
    while True:
        candidate = _default_index_file(folder)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    try:
        with open(_state_file(), encoding="utf-8") as fh:
            remembered = json.load(fh)[here]
        if os.path.isfile(remembered):
            return str(remembered)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    raise NoIndexError(f"No index found for {here} — run `python ingest.py REPO` first (or pass --index PATH)")
