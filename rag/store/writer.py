"""Writing an index: a full build into a temporary file moved into place, and the row and view
writers that an update in place (rag.store.update) reuses."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any

from rag.chunking.base import Chunk
from rag.errors import InputError, NothingToIndexError
from rag.sources.folders import folder_mtimes, folders_of
from rag.store import format as store_format  # ARRAY_BLOCK by module: tests shrink it
from rag.store.folder import prepare_index_dir
from rag.store.format import (
    APPLICATION_ID,
    FORMAT_VERSION,
    SCHEMA,
    SQLITE_HEADER,
    TF_MAX,
    FileRecord,
    Manifest,
    PackedChunk,
    block_name,
    meta_rows,
    name_key,
    realizable_views,
    view_key,
)
from rag.store.packing import pack_postings, pack_text
from rag.store.paths import file_uri
from rag.store.stats import chunk_lengths, view_df, view_length
from rag.text.tokenizer import TokenizerSettings
from rag.weights import bm25_normalisers, score_bounds, scoring_parameters, view_norms

if TYPE_CHECKING:
    from pathlib import Path

_BATCH = 2000  # rows per executemany while streaming

# skipped-table rows: (path, size, mtime_ns, reason)
SkippedRow = tuple[str, int, int, str]


def stored_tfs(counts: dict[str, int]) -> array[int]:
    """Return a chunk's tfs as stored: uint16, capped at TF_MAX."""
    return array("H", [n if n <= TF_MAX else TF_MAX for n in counts.values()])


def pack_chunks(chunks: Sequence[Chunk], counts: Sequence[dict[str, int]]) -> tuple[PackedChunk, ...]:
    """Return a file's chunks packed as they are stored (FileRecord.packed): a worker process
    makes them, sparing the process that writes the index the deflating and the tf arrays."""
    out = []
    for chunk, terms in zip(chunks, counts):
        body, head = pack_text(chunk.context, chunk.text)
        tfs = stored_tfs(terms)
        out.append(PackedChunk(body, head, tfs, sum(tfs)))
    return tuple(out)


def packed_of(record: FileRecord) -> tuple[PackedChunk, ...]:
    """Return a record's packed chunks, packing them here when the record came without."""
    if len(record.packed) == len(record.chunks):
        return record.packed
    return pack_chunks(record.chunks, record.counts)


def chunk_row(cid: int, fid: int, chunk: Chunk, packed: PackedChunk | None = None) -> tuple[Any, ...]:
    """Return the chunks-table row of a chunk, in column order (`packed`: the chunk's, else it
    is packed here)."""
    if packed is None:
        body, head = pack_text(chunk.context, chunk.text)
    else:
        body, head = packed.body, packed.head
    return (cid, fid, chunk.ordinal, chunk.start_line, chunk.end_line, chunk.kind, chunk.symbol, head, body)


def insert_file(conn: sqlite3.Connection, fid: int, record: FileRecord, first: int, klass: int) -> None:
    """Write a file's row and the acronyms it defines (its chunks are written by the caller)."""
    conn.execute(
        "INSERT INTO files VALUES (?,?,?,?,?,?,?,?,?)",
        (
            fid,
            record.path,
            record.size,
            record.mtime_ns,
            record.sha1,
            first,
            len(record.chunks),
            klass,
            name_key(record.path),
        ),
    )
    if record.acronyms:
        conn.executemany("INSERT INTO acronyms VALUES (?,?,?)", ((fid, a, e) for a, e in record.acronyms))


def insert_chunks(
    conn: sqlite3.Connection, chunk_rows: list[tuple[Any, ...]], forward_rows: list[tuple[Any, ...]]
) -> None:
    """Write chunk rows and their forward rows (chunk id, packed term ids and tfs)."""
    conn.executemany("INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?)", chunk_rows)
    conn.executemany("INSERT INTO forward VALUES (?,?)", forward_rows)


def write_tail(
    conn: sqlite3.Connection,
    chunk_class: array[int],
    class_ids: Mapping[frozenset[str], int],
    skipped: Iterable[SkippedRow],
    root: Path,
    paths: Iterable[str],
    dir_mtimes: Mapping[str, int] | None,
) -> None:
    """Write what follows the postings: each chunk's access class, the classes, the skipped files
    and the indexed folders' mtimes (into tables the caller has emptied)."""
    conn.execute("INSERT INTO arrays VALUES ('classes', ?)", (chunk_class.tobytes(),))
    conn.executemany(
        "INSERT INTO classes VALUES (?,?)", ((i, json.dumps(sorted(g))) for g, i in class_ids.items())
    )
    conn.executemany("INSERT INTO skipped VALUES (?,?,?,?)", skipped)
    conn.executemany("INSERT INTO dirs VALUES (?,?)", folder_mtimes(root, folders_of(paths), dir_mtimes))


def write_meta(
    conn: sqlite3.Connection, manifest: Manifest, next_chunk: int, bound_scale: float = 1.0
) -> None:
    """Write the manifest into the (empty) meta table."""
    rows = meta_rows(manifest, next_chunk, bound_scale)
    conn.executemany("INSERT INTO meta VALUES (?,?)", ((k, json.dumps(v)) for k, v in rows.items()))


def write_views(
    conn: sqlite3.Connection,
    groups_of_class: dict[int, frozenset[str]],
    chunk_class: array[int],
    forward_tids: list[array[int]],
    forward_tfs: list[array[int]],
    df: array[int],
    n_live: int,
    live: array[int] | None = None,
    lengths: array[int] | None = None,
) -> tuple[array[float], array[int], float, array[float]]:
    """Store each chunk's length, and the chunk count, total length, norms and BM25 length
    normalisers of every view a caller can have; return the lengths and, for the view that
    reads everything, its norms, average chunk length and BM25 normalisers. `lengths`: each
    chunk's, summed already (else from the forward lists)."""
    everything: tuple[array[float], float, array[float]] = (array("d"), 1.0, array("d"))
    if lengths is None:
        lengths = chunk_lengths(forward_tfs, live)
    conn.execute("INSERT INTO arrays VALUES ('lengths', ?)", (lengths.tobytes(),))
    for view in realizable_views(groups_of_class):
        if len(view) == len(groups_of_class):  # everything readable
            n_view, df_of_view = n_live, df
        else:
            n_view, df_of_view = view_df(forward_tids, chunk_class, view, len(df), live)
        norms = view_norms(forward_tids, forward_tfs, chunk_class, view, n_view, df_of_view, live)
        length = view_length(lengths, chunk_class, view)
        avglen = length / n_view if length else 1.0
        normalisers = bm25_normalisers(lengths, avglen)
        if len(view) == len(groups_of_class):
            everything = (norms, avglen, normalisers)
        conn.execute("INSERT INTO views VALUES (?,?,?)", (view_key(view), n_view, length))
        _insert_blocks(conn, f"norms:{view_key(view)}", norms)
        _insert_blocks(conn, f"bm25k:{view_key(view)}", normalisers)
    return everything[0], lengths, everything[1], everything[2]


def _insert_blocks(conn: sqlite3.Connection, name: str, values: array[float]) -> None:
    block = store_format.ARRAY_BLOCK
    conn.executemany(
        "INSERT INTO arrays VALUES (?,?)",
        (
            (block_name(name, b), values[b * block : (b + 1) * block].tobytes())
            for b in range(-(-len(values) // block))
        ),
    )


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

    def add(self, cid: int, counts: dict[str, int], tfs: array[int]) -> array[int]:
        """Add one chunk's terms and their stored tfs (stored_tfs); return its term ids.

        Every step runs at C speed (a map over the terms, appends drained by a zero-length
        deque): this loop runs once per posting of the whole index.
        """
        tids = array("I", map(self.term_ids.__getitem__, counts))
        deque(map(array.append, map(self.ids.__getitem__, tids), repeat(cid, len(tids))), 0)
        deque(map(array.append, map(self.tfs.__getitem__, tids), tfs), 0)
        return tids


class IndexWriter:
    """Write a new index from a stream of file records, then move it into place."""

    def __init__(
        self, path: Path, tokenizer: TokenizerSettings, root: Path, chunkers: str | None = None
    ) -> None:
        from pathlib import Path

        self.path = Path(path)
        self.tokenizer = tokenizer
        self.chunkers = chunkers
        self.root = Path(root)
        prepare_index_dir(self.path)
        self.tmp = self.path.with_name(f"{self.path.name}.tmp-{os.getpid()}")
        self.tmp.unlink(missing_ok=True)
        self.conn = sqlite3.connect(self.tmp)
        try:
            self.conn.execute("PRAGMA journal_mode=OFF")
            self.conn.execute("PRAGMA synchronous=OFF")
            self.conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # marks the file as ours
            self.conn.executescript(SCHEMA)
        except BaseException:  # a full disk: no empty temporary file is left behind
            self.abort()
            raise
        self.postings = _Postings()
        self.forward_tids: list[array[int]] = []
        self.forward_tfs: list[array[int]] = []
        self.class_ids: dict[frozenset[str], int] = {frozenset(): 0}  # access class 0 is public
        self.chunk_class = array("H")
        self.lengths = array("I")  # each chunk's, summed as it comes
        self.paths: list[str] = []
        self._chunk_rows: list[tuple[Any, ...]] = []
        self._forward_rows: list[tuple[Any, ...]] = []

    def add(self, record: FileRecord) -> None:
        """Append one file's chunks (records must come in path order for a canonical index)."""
        fid = len(self.paths)
        first = len(self.chunk_class)
        klass = self.class_ids.setdefault(record.groups, len(self.class_ids))
        self.paths.append(record.path)
        insert_file(self.conn, fid, record, first, klass)
        for offset, (chunk, counts, packed) in enumerate(
            zip(record.chunks, record.counts, packed_of(record))
        ):
            cid = first + offset
            tfs = packed.tfs
            tids = self.postings.add(cid, counts, tfs)
            self.forward_tids.append(tids)
            self.forward_tfs.append(tfs)
            self.chunk_class.append(klass)
            self.lengths.append(packed.length)
            self._chunk_rows.append(chunk_row(cid, fid, chunk, packed))
            self._forward_rows.append((cid, pack_postings(tids, tfs)))
        if len(self._chunk_rows) >= _BATCH:
            self._flush()

    def _flush(self) -> None:
        insert_chunks(self.conn, self._chunk_rows, self._forward_rows)
        self._chunk_rows.clear()
        self._forward_rows.clear()

    def finish(
        self,
        commit: str | None = None,
        access: str | None = None,
        skipped: Iterable[SkippedRow] = (),
        walk: dict[str, Any] | None = None,
        dir_mtimes: Mapping[str, int] | None = None,
        summary: Callable[[], dict[str, Any]] | None = None,
    ) -> Manifest:
        """Compute document frequencies and norms, write them, and replace the index atomically.
        `summary` makes the manifest's summary once every record is in."""
        self._flush()
        conn, post = self.conn, self.postings
        terms = list(post.term_ids)
        df = array("I", [len(ids) for ids in post.ids])
        n_chunks = len(self.chunk_class)
        groups_of_class = {i: g for g, i in self.class_ids.items()}
        norms, lengths, avglen, normalisers = write_views(
            conn,
            groups_of_class,
            self.chunk_class,
            self.forward_tids,
            self.forward_tfs,
            df,
            n_chunks,
            lengths=self.lengths,
        )
        maxw, maxb = score_bounds(post.ids, post.tfs, norms, normalisers)
        conn.executemany(
            "INSERT INTO terms VALUES (?,?,?,?,?,?)",
            (
                (
                    t,
                    tid,
                    df[tid],
                    pack_postings(post.ids[tid], post.tfs[tid]),
                    maxw[tid],
                    maxb[tid],
                )
                for t, tid in sorted(zip(terms, range(len(terms))))
            ),  # in key order: B-tree appends
        )
        write_tail(conn, self.chunk_class, self.class_ids, skipped, self.root, self.paths, dir_mtimes)
        manifest = Manifest(
            FORMAT_VERSION,
            self.tokenizer,
            str(self.root),
            len(self.paths),
            n_chunks,
            len(terms),
            time.time(),
            commit,
            access,
            bm25_avglen=avglen,
            walk=walk,
            scoring=scoring_parameters(),
            chunkers=self.chunkers,
            summary=summary() if summary is not None else None,
        )
        write_meta(conn, manifest, next_chunk=n_chunks)
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
    path: Path,
    records: Iterable[FileRecord],
    tokenizer: TokenizerSettings,
    root: Path,
    commit: str | None = None,
    access: str | None = None,
    skipped: Iterable[SkippedRow] = (),
    walk: dict[str, Any] | None = None,
    dir_mtimes: Mapping[str, int] | None = None,
    chunkers: str | None = None,
    summary: Callable[[], dict[str, Any]] | None = None,
) -> Manifest:
    """Build a new index from file records (in path order) and write it atomically to `path`.
    `dir_mtimes` are folder mtimes taken when the files were listed (else they are taken now);
    `chunkers` names the chunkers that made the records (rag.chunking.chunkers_in_use)."""
    writer = IndexWriter(path, tokenizer, root, chunkers)
    try:
        for record in records:
            writer.add(record)
        if not writer.paths:  # keep the previous index rather than replace it with nothing
            raise nothing_to_index(root)
        return writer.finish(commit, access, skipped, walk, dir_mtimes, summary)
    except BaseException:
        writer.abort()
        raise


def nothing_to_index(root: Path) -> NothingToIndexError:
    """The error for a repository that leaves no file to index."""
    return NothingToIndexError(
        f"No indexable files in {root} — check --include, --exclude and --max-file-size, "
        "or point at a directory with source files"
    )


def check_replaceable(path: Path) -> None:
    """Raise InputError unless a new index may be written at `path`: nothing there, an empty
    file, or an index of this tool (of any format, damaged or not). Anything else, a mistyped
    --index naming notes.txt or an application's db.sqlite3, would be lost; nor a device or
    a pipe (/dev/null reads as empty; opening a FIFO waits for a writer)."""
    if os.path.exists(path) and not os.path.isfile(path):
        raise InputError(
            f"{path} is not a regular file — pass the path of an index file, or a folder to hold one"
        )
    try:
        with open(path, "rb") as fh:
            head = fh.read(100)
    except (FileNotFoundError, NotADirectoryError):  # no index yet, or a repo path the walk refuses
        return
    except OSError as exc:
        raise InputError(f"Cannot read {path} ({exc.strerror}) — pass another --index path") from None
    if not head or (head.startswith(SQLITE_HEADER) and head[68:72] == APPLICATION_ID.to_bytes(4, "big")):
        return
    if head.startswith(SQLITE_HEADER):  # written before the id was (format 8 and older)?
        try:
            conn = sqlite3.connect(file_uri(str(path), "ro"), uri=True)
            try:
                if conn.execute("SELECT 1 FROM meta WHERE key = 'format_version'").fetchone():
                    return
            finally:
                conn.close()
        except sqlite3.Error:
            pass
    raise InputError(
        f"{path} exists and is not a rag index — pass another --index path, "
        "or delete the file if it is a damaged index"
    )


def retime_files(
    path: Path,
    retimed: Sequence[tuple[str, int]],
    dirs: Sequence[tuple[str, int]] = (),
    summary: dict[str, Any] | None = None,
) -> None:
    """Record new mtimes of files whose bytes did not change (e.g. after `touch`), and of
    indexed folders whose mtime moved while nothing indexed changed, and a new summary (None:
    unchanged). Writes nothing when there is nothing to record."""
    if not retimed and not dirs and summary is None:
        return
    conn = sqlite3.connect(path, timeout=60)
    try:
        with conn:
            conn.executemany("UPDATE files SET mtime_ns = ? WHERE path = ?", ((m, p) for p, m in retimed))
            conn.executemany("UPDATE dirs SET mtime_ns = ? WHERE path = ?", ((m, d) for d, m in dirs))
            if summary is not None:
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('summary', ?)", (json.dumps(summary),))
    finally:
        conn.close()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
