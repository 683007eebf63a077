"""Reading an index: the query side. It loads only the manifest until asked for more, and reads
piecemeal: the postings of a query's own terms, the blocks of one per-chunk array that hold those
postings' chunks, and the text of the best candidates. Nothing here imports the writer side.

What it returns has been checked as it was read (lengths, id ranges, the types of rows): what
reading a damaged file raises is IndexFormatError here, in one line, so that a fault in the code
that uses these values is never mistaken for damage.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from array import array
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

from rag.chunking.base import Chunk
from rag.errors import IndexFormatError, NoIndexError, command
from rag.store.format import (
    FORMAT_VERSION,
    FileRecord,
    Manifest,
    check,
    damage_error,
    readable_classes,
    rebuild_hint,
    recorded_scoring,
    view_key,
    well_formed,
)
from rag.store.freshness import Freshness, _reads
from rag.store.packing import largest, unpack_postings, unpack_text
from rag.store.paths import file_uri, ingest_command
from rag.store.stats import forward_lists, view_df, view_length
from rag.store.views import DAMAGE_ERRORS, ChunkFloats, View, blocks_reader
from rag.text.tokenizer import Tokenizer, TokenizerSettings
from rag.weights import bm25_normalisers, scoring_parameters, view_norms

_T = TypeVar("_T")


class Index(Freshness):
    """A saved index opened for reading; loads only the manifest until asked for more."""

    def __init__(self, path: str | os.PathLike[str], read_only: bool = False) -> None:
        """Open the index at `path`; `read_only`: never read-write, so that this connection cannot
        roll back a journal (for a reader that may still hold a file an ingest has since replaced,
        whose path the new file's journal now shares)."""
        self.path = os.fspath(path)
        if not os.path.isfile(self.path):
            raise NoIndexError(f"No index at {self.path} — run `{command('ingest')} REPO` first")
        try:
            self._conn = _connect_for_reading(self.path, read_only)
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
                f"{FORMAT_VERSION} — re-run `{ingest_command(meta.get('root'), self.path)}`"
            )
        try:
            self.manifest = Manifest(
                format_version=version,
                tokenizer=TokenizerSettings.from_dict(meta["tokenizer"]),
                root=meta["root"],
                n_files=meta["n_files"],
                n_chunks=meta["n_chunks"],
                n_terms=meta["n_terms"],
                built_at=meta["built_at"],
                commit=meta.get("commit"),
                access=meta.get("access"),
                bound_scale=float(meta.get("bound_scale", 1.0)),
                bm25_avglen=float(meta["bm25_avglen"]),
                walk=meta.get("walk"),
                scoring=recorded_scoring(meta),
                chunkers=meta.get("chunkers"),
                summary=meta.get("summary") if isinstance(meta.get("summary"), dict) else None,
            )
            self._block = int(meta["array_block"])  # ids per stored block of a per-chunk array
            if (
                self._block <= 0
                or not self.manifest.bm25_avglen > 0
                or not isinstance(self.manifest.root, str)
            ):
                raise ValueError("array_block, bm25_avglen or root out of range")
        except (KeyError, TypeError, ValueError) as exc:
            raise IndexFormatError(
                f"The index at {self.path} has a damaged manifest ({exc}) — {rebuild_hint()}"
            ) from None
        if self.manifest.scoring != scoring_parameters():
            # the stored normalisers and bounds hold k1 and b: scoring with others would mix both
            raise IndexFormatError(
                f"The index at {self.path} was built with scoring parameters {self.manifest.scoring}, this tool "
                f"scores with {scoring_parameters()} — re-run `{ingest_command(self.manifest.root, self.path)}`"
            )
        self._swap: bool = meta.get("byteorder", sys.byteorder) != sys.byteorder
        self._n_ids = int(meta.get("next_chunk", 0))  # chunk ids in use are below this
        self._views: dict[str, View] = {}
        self._views_of: dict[frozenset[str], View] = {}  # by the caller's groups
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

    @_reads
    def term(self, term: str) -> tuple[array[int], array[int], float, float] | None:
        """Return a term's chunk ids, tfs and its two pruning bounds (see the terms table), or
        None if unseen."""
        row = self._query("SELECT postings, maxw, maxb FROM terms WHERE term = ?", (term,)).fetchone()
        return None if row is None else self._term_row(*row)

    @_reads
    def terms(self, terms: Iterable[str]) -> dict[str, tuple[array[int], array[int], float, float]]:
        """term() of many terms in one read; the terms the index has never seen are left out."""
        wanted = list(dict.fromkeys(terms))
        out = {}
        for start in range(0, len(wanted), 500):  # SQLite's limit on parameters
            part = wanted[start : start + 500]
            marks = ",".join("?" * len(part))
            for term, postings, maxw, maxb in self._query(
                f"SELECT term, postings, maxw, maxb FROM terms WHERE term IN ({marks})", tuple(part)
            ):
                out[term] = self._term_row(postings, maxw, maxb)
        return out

    def _term_row(
        self, postings: bytes, maxw: float, maxb: float
    ) -> tuple[array[int], array[int], float, float]:
        """A terms row's postings, checked to lie within the ids in use, and its two bounds."""
        ids, tfs = unpack_postings(postings)
        check(not ids or largest(ids) < self._n_ids, "postings out of range")
        return ids, tfs, float(maxw), float(maxb)

    @_reads
    def chunk_terms(self, cid: int, likely: Iterable[str] = ()) -> dict[str, int]:
        """Return one chunk's stored term frequencies (its forward row), term -> tf ({} for an id
        without one). `likely`: the terms it probably holds (its text tokenized again), looked up
        by the terms' key; the names of any others are found by reading every term's id."""
        row = self._query("SELECT postings FROM forward WHERE chunk_id = ?", (cid,)).fetchone()
        if row is None:
            return {}
        tids, tfs = unpack_postings(row[0])
        names = self._term_names or {}
        wanted = [t for t in dict.fromkeys(likely)] if self._term_names is None else []
        for start in range(0, len(wanted), 500):  # SQLite's limit on parameters
            part = wanted[start : start + 500]
            marks = ",".join("?" * len(part))
            names.update(self._query(f"SELECT id, term FROM terms WHERE term IN ({marks})", tuple(part)))
        if not all(t in names for t in tids):  # the terms table is keyed by term: a scan of its ids
            names = self._term_names = dict(self._query("SELECT id, term FROM terms"))
        check(all(t in names for t in tids), "forward row names unknown terms")
        return {names[t]: n for t, n in zip(tids, tfs)}

    @_reads
    def file_chunk_counts(self) -> list[tuple[str, int]]:
        """Return (path, number of chunks) of every indexed file, in path order."""
        rows = self._query("SELECT path, n_chunks FROM files ORDER BY path").fetchall()
        check(all(isinstance(p, str) and isinstance(n, int) for p, n in rows), "file rows out of range")
        return [(p, n) for p, n in rows]

    @_reads
    def postings_count(self, terms: Iterable[str]) -> int:
        """Return how many postings the given terms hold in all (their stored document
        frequencies: no list is read); terms the index has never seen hold none."""
        wanted = list(dict.fromkeys(terms))
        total = 0
        for start in range(0, len(wanted), 500):  # SQLite's limit on parameters
            part = wanted[start : start + 500]
            marks = ",".join("?" * len(part))
            for (df,) in self._query(f"SELECT df FROM terms WHERE term IN ({marks})", tuple(part)):
                check(isinstance(df, int) and df >= 0, "term rows out of range")
                total += df
        return total

    @_reads
    def has_term(self, term: str) -> bool:
        """Tell whether the index holds `term` (without reading its postings)."""
        return self._query("SELECT 1 FROM terms WHERE term = ?", (term,)).fetchone() is not None

    @_reads
    def vocabulary(self, first: str, shortest: int, longest: int) -> list[tuple[str, int]]:
        """Return (term, df) of the stored terms that begin with `first` and have between
        `shortest` and `longest` characters: one range of the terms' primary key (rag.retrieval.spelling)."""
        after = chr(ord(first) + 1)
        rows = self._query(
            "SELECT term, df FROM terms WHERE term >= ? AND term < ? AND length(term) BETWEEN ? AND ?",
            (first, after, shortest, longest),
        ).fetchall()
        check(all(isinstance(t, str) and isinstance(n, int) for t, n in rows), "term rows out of range")
        return [(t, n) for t, n in rows]

    @_reads
    def folder_entries(self, folder: str) -> dict[str, bool]:
        """Return the names directly inside `folder` ('' for the root) that the last ingest
        listed: indexed files, files read and skipped, and folders holding indexed files; each
        with whether it is a folder."""
        prefix = f"{folder}/" if folder else ""
        high = prefix + "\U0010ffff"
        names: dict[str, bool] = {}
        for table in ("files", "skipped", "dirs"):
            for (path,) in self._query(
                f"SELECT path FROM {table} WHERE path >= ? AND path < ?", (prefix, high)
            ):
                check(isinstance(path, str), "path rows out of range")
                rest = path[len(prefix) :]
                if rest:
                    name, slash, _ = rest.partition("/")
                    names[name] = names.get(name, False) or bool(slash) or table == "dirs"
        return names

    @_reads
    def view(self, caller_groups: frozenset[str] = frozenset()) -> View:
        """Return what a caller with these groups may see: its chunk count and norms.

        Scores computed through a view equal those of an index built without the files
        the caller may not read: N, document frequencies and norms are the view's own.
        """
        groups = frozenset(caller_groups)  # (a caller may pass a set)
        known = self._views_of.get(groups)
        if known is not None:
            return known
        view = self._view(groups)
        self._views_of[groups] = view
        return view

    def _view(self, caller_groups: frozenset[str]) -> View:
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
        check(chunk_class is None or len(chunk_class) >= self._n_ids, "access classes out of range")
        row = self._query("SELECT n_chunks, length FROM views WHERE key = ?", (key,)).fetchone()
        arrays: dict[str, array[float]] = {}
        if row is not None:
            n_view, length = row[0], row[1]
        else:  # a rare group combination: compute its statistics now
            assert chunk_class is not None
            forward_tids, forward_tfs, live = forward_lists(
                self._query("SELECT chunk_id, postings FROM forward"), len(chunk_class)
            )
            n_terms = self._query("SELECT MAX(id) FROM terms").fetchone()[0] + 1
            n_view, df = view_df(forward_tids, chunk_class, readable, n_terms, live)
            arrays["norms"] = view_norms(forward_tids, forward_tfs, chunk_class, readable, n_view, df, live)
            length = view_length(self.lengths(), chunk_class, readable)
            arrays["bm25k"] = bm25_normalisers(self.lengths(), length / n_view if length else 1.0)
        decode = (lambda data: self._decode("d", data)) if self._swap else None
        columns = {
            name: ChunkFloats(
                self._n_ids, self._block, blocks_reader(self._query, f"{name}:{key}"), decode, self.path
            )
            for name in ("norms", "bm25k")
        }
        check(
            isinstance(n_view, int) and isinstance(length, int) and n_view >= 0 and length >= 0,
            "view statistics out of range",
        )
        view = View(None if everything else readable, n_view, length, chunk_class, columns, arrays)
        self._views[key] = view
        return view

    @property
    def n_ids(self) -> int:
        """The chunk ids in use are below this."""
        return self._n_ids

    @property
    def block(self) -> int:
        """Ids per stored block of a per-chunk array."""
        return self._block

    @_reads
    def live_ids(self) -> array[int]:
        """Return the id of every chunk, ascending."""
        out = array("I", (cid for (cid,) in self._query("SELECT id FROM chunks ORDER BY id")))
        check(not out or out[-1] < self._n_ids, "chunk ids out of range")
        return out

    @_reads
    def acronyms(self, classes: frozenset[int] | None = None) -> list[tuple[str, str]]:
        """Return the (acronym, expansion) term pairs the indexed files define, from the files
        of readable access classes only (`classes`; None = all), without repeats."""
        if classes is None:
            rows = self._query("SELECT DISTINCT acronym, expansion FROM acronyms")
        else:
            marks = ",".join("?" * len(classes))
            rows = self._query(
                "SELECT DISTINCT a.acronym, a.expansion FROM acronyms a JOIN files f ON f.id = a.file_id"
                f" WHERE f.class IN ({marks})",
                tuple(classes),
            )
        pairs = [(a, e) for a, e in rows]
        check(all(isinstance(a, str) and isinstance(e, str) for a, e in pairs), "acronym rows out of range")
        return pairs

    @_reads
    def lengths(self) -> array[int]:
        """Return each chunk's length (the sum of its stored tfs), by chunk id; read once."""
        if self._lengths is None:
            self._lengths = self._array("lengths", "I")
        return self._lengths

    def _array(self, name: str, typecode: str) -> array[Any]:
        row = self._query("SELECT data FROM arrays WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise IndexFormatError(f"The index at {self.path} lacks {name!r} — {rebuild_hint()}")
        return self._decode(typecode, row[0])

    def _decode(self, typecode: str, data: bytes) -> array[Any]:
        out = array(typecode)
        out.frombytes(data)
        if self._swap:
            out.byteswap()
        return out

    @_reads
    def chunks(self, ids: list[int]) -> dict[int, Chunk]:
        """Fetch chunks by id (each must exist)."""
        marks = ",".join("?" * len(ids))
        rows = self._query(
            f"SELECT c.id, {_CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})",
            tuple(ids),
        )
        out = {r[0]: _chunk(*r[1:]) for r in rows}
        check(len(out) == len(set(ids)) and all(map(well_formed, out.values())), "chunk rows out of range")
        return out

    @_reads
    def chunk_ids(self) -> list[int]:
        """Return the id of every chunk, file by file in path order."""
        return self._chunk_ranges(self._query("SELECT first_chunk, n_chunks FROM files ORDER BY path"))

    @_reads
    def file_chunk_ids(self, path: str) -> list[int]:
        """Return the ids of one indexed file's chunks, in line order ([] for a path not indexed)."""
        where = "SELECT first_chunk, n_chunks FROM files WHERE path = ?"
        return self._chunk_ranges(self._query(where, (path,)))

    @_reads
    def files_named(self, key: str) -> list[int]:
        """Return the chunk ids of the files whose name_key is `key`, in path order (a symbol question's)."""
        where = "SELECT first_chunk, n_chunks FROM files WHERE name_key = ? ORDER BY path"
        return self._chunk_ranges(self._query(where, (key,)))

    def _chunk_ranges(self, spans: Iterable[tuple[int, int]]) -> list[int]:
        """The chunk ids of files' (first chunk, count) spans, checked to lie within the ids in use."""
        out: list[int] = []
        for first, n in spans:
            check(
                isinstance(first, int) and isinstance(n, int) and 0 <= first <= first + n <= self._n_ids,
                "file row out of range",
            )
            out.extend(range(first, first + n))
        return out

    @_reads
    def places(self, ids: list[int]) -> dict[int, tuple[str, int, int]]:
        """Return chunk id -> (path, start_line, end_line), without reading the texts (each must exist)."""
        marks = ",".join("?" * len(ids))
        rows = self._query(
            "SELECT c.id, f.path, c.start_line, c.end_line FROM chunks c JOIN files f ON f.id = c.file_id"
            f" WHERE c.id IN ({marks})",
            tuple(ids),
        )
        out = {r[0]: (r[1], r[2], r[3]) for r in rows}
        check(
            len(out) == len(set(ids))
            and all(
                isinstance(p, str) and isinstance(a, int) and isinstance(b, int) for p, a, b in out.values()
            ),
            "chunk rows out of range",
        )
        return out

    def all_chunks(self) -> Iterator[tuple[int, Chunk, dict[str, int]]]:
        """Yield every chunk with its id and stored term frequencies, in id order (for benches
        and checks that need the whole corpus; a query never does this)."""
        return self._reading(self._stored_chunks("", ()))

    def records(self, paths: Iterable[str]) -> Iterator[FileRecord]:
        """Yield the stored records (chunks and term counts) of indexed files, in path order."""
        return self._reading(self._records(paths))

    def _records(self, paths: Iterable[str]) -> Iterator[FileRecord]:
        for path in sorted(set(paths)):
            row = self._query(
                "SELECT id, size, mtime_ns, sha1, first_chunk, n_chunks FROM files WHERE path = ?", (path,)
            ).fetchone()
            if row is None:
                continue
            fid, size, mtime_ns, sha1, first, n = row
            # a file's chunks have consecutive ids: a range on the primary key, not a scan
            stored = list(self._stored_chunks("WHERE c.id >= ? AND c.id < ?", (first, first + n)))
            acronyms = tuple(
                self._query("SELECT acronym, expansion FROM acronyms WHERE file_id = ? ORDER BY 1, 2", (fid,))
            )
            yield FileRecord(
                path,
                size,
                mtime_ns,
                sha1,
                tuple(c for _, c, _ in stored),
                tuple(n for _, _, n in stored),
                acronyms=acronyms,
            )

    def _stored_chunks(
        self, where: str, args: tuple[object, ...]
    ) -> Iterator[tuple[int, Chunk, dict[str, int]]]:
        """Yield (id, chunk, term counts) of the chunks matching `where`, in id order."""
        if self._term_names is None:  # term id -> term, read once per Index
            self._term_names = dict(self._query("SELECT id, term FROM terms"))
        names = self._term_names
        rows = self._query(
            f"SELECT c.id, {_CHUNK_COLUMNS}, w.postings FROM chunks c JOIN files f ON f.id = c.file_id"
            f" JOIN forward w ON w.chunk_id = c.id {where} ORDER BY c.id",
            args,
        )
        for cid, *fields, postings in rows:
            tids, tfs = unpack_postings(postings)
            yield cid, _chunk(*fields), dict(zip(map(names.__getitem__, tids), tfs))

    def _reading(self, items: Iterator[_T]) -> Iterator[_T]:
        """Yield from a generator that reads the index, damage met in it being IndexFormatError."""
        try:
            yield from items
        except DAMAGE_ERRORS as exc:
            raise damage_error(self.path, exc) from None

    @_reads
    def files(self) -> dict[str, tuple[int, int, str]]:
        """Return path -> (size, mtime_ns, sha1) of every indexed file."""
        rows = self._query("SELECT path, size, mtime_ns, sha1 FROM files")
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    @_reads
    def readable_files(self, groups: frozenset[str] = frozenset()) -> set[str]:
        """Return the paths of the indexed files a caller with these groups may read."""
        groups_of_class = {
            i: frozenset(json.loads(g)) for i, g in self._query("SELECT id, groups FROM classes")
        }
        readable = readable_classes(groups_of_class, groups)
        return {path for path, c in self._query("SELECT path, class FROM files") if c in readable}

    @_reads
    def dir_mtimes(self) -> dict[str, int]:
        """Return folder -> mtime_ns of every folder holding an indexed file, as last ingested."""
        out = dict(self._query("SELECT path, mtime_ns FROM dirs").fetchall())
        check(
            all(isinstance(d, str) and isinstance(m, int) for d, m in out.items()), "folder rows out of range"
        )
        return out

    @_reads
    def skipped_files(self) -> dict[str, tuple[int, int, str]]:
        """Return path -> (size, mtime_ns, reason) of files read at ingest and passed over."""
        rows = self._query("SELECT path, size, mtime_ns, reason FROM skipped")
        out = {r[0]: (r[1], r[2], r[3]) for r in rows}
        check(all(isinstance(r, str) for _, _, r in out.values()), "skipped rows out of range")
        return out

    def _corrupt(self, exc: Exception) -> IndexFormatError:
        return IndexFormatError(f"The index at {self.path} is corrupt ({exc}) — {rebuild_hint()}")

    def _query(self, sql: str, args: tuple[object, ...] = ()) -> sqlite3.Cursor:
        try:
            return self._conn.execute(sql, args)
        except sqlite3.DatabaseError as exc:
            raise self._corrupt(exc) from None


# the columns _chunk() makes a Chunk of, from chunks c joined with files f
_CHUNK_COLUMNS = "f.path, c.start_line, c.end_line, c.kind, c.symbol, c.head, c.body, c.ordinal"


def _chunk(
    path: str,
    start_line: int,
    end_line: int,
    kind: str,
    symbol: str | None,
    head: int,
    body: bytes,
    ordinal: int,
) -> Chunk:
    """A chunk from its stored row (_CHUNK_COLUMNS), its text and context unpacked."""
    context, text = unpack_text(body, head)
    return Chunk(path, start_line, end_line, kind, symbol, text, context, ordinal)


MMAP_SIZE = 1 << 40  # bytes of an index a reader maps at most


def _connect_for_reading(path: str, read_only: bool = False) -> sqlite3.Connection:
    """Open an index to read it; read-write when allowed (and not `read_only`), so that SQLite
    can roll back the journal of an update that was killed, read-only otherwise. A query waits
    for an update that is committing rather than failing."""
    conn = None
    if not read_only:
        try:
            conn = sqlite3.connect(file_uri(path, "rw"), uri=True, timeout=30)
            conn.execute("PRAGMA query_only = ON")
        except sqlite3.OperationalError:
            conn = None
    if conn is None:
        conn = sqlite3.connect(file_uri(path, "ro"), uri=True, timeout=30)
    # read pages through a memory map (SQLite caps it at its compiled limit): a long postings
    # list then costs no copy through SQLite's page cache, ~10x faster to read at 1M chunks
    conn.execute(f"PRAGMA mmap_size = {MMAP_SIZE}")
    return conn
