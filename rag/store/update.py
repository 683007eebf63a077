"""Updating an index in place, in one SQLite transaction, so that it scores exactly as a full
rebuild would. The rows are written by the writer's own functions; what is read of the previous
index is checked as it is read, and damage found there is IndexFormatError (the ingest then
builds afresh), never confused with a fault in this code."""

from __future__ import annotations

import json
import sqlite3
import time
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple

from rag.store import writer  # its row and view writers, by module: one place to patch them in tests
from rag.store.format import (
    FORMAT_VERSION,
    FileRecord,
    Manifest,
    check,
    damage_error,
    recorded_scoring,
    view_key,
)
from rag.store.packing import pack_postings, unpack_postings, widened
from rag.store.stats import forward_lists
from rag.store.writer import SkippedRow
from rag.text.tokenizer import TokenizerSettings
from rag.weights import bm25_normalisers, max_bm25, max_weight

if TYPE_CHECKING:
    from pathlib import Path

# What reading damaged tables raises: a file SQLite still opens, whose values were damaged,
# fails in whatever way its bytes lead to
_DAMAGE = (sqlite3.DatabaseError, ArithmeticError, LookupError, ValueError, TypeError)


@contextmanager
def _reading(path: Path) -> Iterator[None]:
    """Report damage met while reading the previous index as IndexFormatError."""
    try:
        yield
    except _DAMAGE as exc:
        raise damage_error(path, exc, "updated") from None


class _Previous(NamedTuple):
    """What an update reads of the index before changing it, checked."""

    meta: dict[str, Any]
    tokenizer: TokenizerSettings
    next_chunk: int
    class_ids: dict[frozenset[str], int]


def _read_previous(conn: sqlite3.Connection) -> _Previous:
    meta = {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM meta")}
    next_chunk = meta["next_chunk"]
    check(isinstance(next_chunk, int) and next_chunk >= 0, "next_chunk out of range")
    check(float(meta["bm25_avglen"]) > 0 and float(meta.get("bound_scale", 1.0)) > 0, "manifest out of range")
    recorded_scoring(meta)
    class_ids: dict[frozenset[str], int] = {}
    for i, g in conn.execute("SELECT id, groups FROM classes"):
        groups = json.loads(g)
        check(
            isinstance(i, int) and isinstance(groups, list) and all(isinstance(x, str) for x in groups),
            "access class out of range",
        )
        class_ids[frozenset(groups)] = i
    return _Previous(meta, TokenizerSettings.from_dict(meta["tokenizer"]), next_chunk, class_ids)


def _file_spans(
    conn: sqlite3.Connection, next_chunk: int, classes: Iterable[int]
) -> list[tuple[int, int, int]]:
    """(first chunk, count, class) of every file, checked to lie within the chunk ids in use."""
    known = set(classes)
    spans = conn.execute("SELECT first_chunk, n_chunks, class FROM files").fetchall()
    for first, n, klass in spans:
        check(
            isinstance(first, int)
            and isinstance(n, int)
            and first >= 0
            and n >= 0
            and first + n <= next_chunk
            and klass in known,
            "file row out of range",
        )
    return spans


class _TermIds:
    """Term ids of an index being updated, creating ids for terms it has not seen."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self.known: dict[str, int] = {}
        with _reading(path):
            top = conn.execute("SELECT MAX(id) FROM terms").fetchone()[0] or 0
            check(isinstance(top, int) and top >= 0, "term id out of range")
        self.next = top + 1
        self.new: dict[int, str] = {}

    def get(self, term: str) -> int:
        """The id of a term, a new one if the index has not seen it."""
        tid = self.known.get(term)
        if tid is None:
            with _reading(self.path):
                row = self.conn.execute("SELECT id FROM terms WHERE term = ?", (term,)).fetchone()
                check(
                    row is None or (isinstance(row[0], int) and 0 <= row[0] < self.next),
                    "term id out of range",
                )
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
        with _reading(self.path):
            for tid, n in self.conn.execute("SELECT id, df FROM terms"):
                df[tid] = n
        return df


def update_index(
    path: Path,
    removed: Iterable[str],
    added: Iterable[FileRecord],
    root: Path,
    commit: str | None = None,
    skipped: Iterable[SkippedRow] = (),
    retimed: Iterable[tuple[str, int]] = (),
    walk: dict[str, Any] | None = None,
    dir_mtimes: Mapping[str, int] | None = None,
    summary: dict[str, Any] | None = None,
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
        manifest = _update(
            conn, path, removed, added, root, commit, skipped, retimed, walk, dir_mtimes, summary
        )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()
    return manifest


def _update(
    conn: sqlite3.Connection,
    path: Path,
    removed: Iterable[str],
    added: Iterable[FileRecord],
    root: Path,
    commit: str | None,
    skipped: Iterable[SkippedRow],
    retimed: Iterable[tuple[str, int]],
    walk: dict[str, Any] | None,
    dir_mtimes: Mapping[str, int] | None,
    summary: dict[str, Any] | None = None,
) -> Manifest:
    conn.executemany("UPDATE files SET mtime_ns = ? WHERE path = ?", ((m, p) for p, m in retimed))
    with _reading(path):
        previous = _read_previous(conn)
    meta, next_chunk, class_ids = previous.meta, previous.next_chunk, previous.class_ids
    removed_ranges = _remove_files(conn, path, removed, next_chunk)
    term_ids = _TermIds(conn, path)
    added_postings: dict[int, tuple[array[int], array[int]]] = {}
    with _reading(path):
        fid = (conn.execute("SELECT MAX(id) FROM files").fetchone()[0] or 0) + 1
    for record in added:
        klass = class_ids.setdefault(record.groups, len(class_ids))
        first = next_chunk
        writer.insert_file(conn, fid, record, first, klass)
        rows, fwd = [], []
        for chunk, counts, packed in zip(record.chunks, record.counts, writer.packed_of(record)):
            cid = next_chunk
            next_chunk += 1
            tids = array("I", [term_ids.get(t) for t in counts])
            tfs = packed.tfs
            for tid, tf in zip(tids, tfs):
                entry = added_postings.get(tid)
                if entry is None:
                    entry = added_postings[tid] = (array("I"), array("H"))
                entry[0].append(cid)
                entry[1].append(tf)
            rows.append(writer.chunk_row(cid, fid, chunk, packed))
            fwd.append((cid, pack_postings(tids, tfs)))
        writer.insert_chunks(conn, rows, fwd)
        fid += 1
    edited = _edit_postings(conn, path, term_ids, removed_ranges, added_postings, next_chunk)
    df = term_ids.df_array()
    # everything below is recomputed from the forward lists of the live chunks
    with _reading(path):
        spans = _file_spans(conn, next_chunk, class_ids.values())
        forward_tids, forward_tfs, _ = forward_lists(
            conn.execute("SELECT chunk_id, postings FROM forward"), next_chunk
        )
        check(all(not tids or max(tids) < len(df) for tids in forward_tids), "forward term id out of range")
        everything_key = view_key(frozenset(class_ids.values()))
        old_norms = array("d")
        for (data,) in conn.execute(
            "SELECT data FROM arrays WHERE name LIKE ? ORDER BY name", (f"norms:{everything_key}#%",)
        ):
            old_norms.frombytes(data)
        scale = float(meta.get("bound_scale", 1.0))
        avglen = float(meta["bm25_avglen"])
    chunk_class = array("H", bytes(2 * next_chunk))
    live = array("b", bytes(next_chunk))
    for first, n, klass in spans:
        chunk_class[first : first + n] = array("H", [klass]) * n
        live[first : first + n] = array("b", [1]) * n
    n_live = sum(live)
    for table in ("arrays", "views", "classes", "skipped", "dirs"):
        conn.execute(f"DELETE FROM {table}")
    groups_of_class = {i: g for g, i in class_ids.items()}
    norms, lengths, _, _ = writer.write_views(
        conn, groups_of_class, chunk_class, forward_tids, forward_tfs, df, n_live, live
    )
    # N and the norms moved. Rather than rescan every term's postings, widen all stored
    # bounds by the most any surviving chunk's norm shrank, and raise the bounds of the
    # terms that gained postings to cover those (a removed posting leaves a bound valid)
    shrink = max((o / n for o, n in zip(old_norms, norms) if o and n), default=1.0)
    scale *= max(1.0, shrink)
    # a BM25 bound depends on chunk lengths, which never change, and on the average length:
    # the new postings' are computed with the one the others were (meta.bm25_avglen)
    normalisers = bm25_normalisers(lengths, avglen)
    conn.executemany(
        "UPDATE terms SET maxw = ?, maxb = ? WHERE term = ?",
        (
            (max(maxw, max_weight(ids, tfs, norms) / scale), max(maxb, max_bm25(ids, tfs, normalisers)), term)
            for term, (maxw, maxb, ids, tfs) in edited.items()
            if ids
        ),
    )
    paths = [p for (p,) in conn.execute("SELECT path FROM files")]
    writer.write_tail(conn, chunk_class, class_ids, skipped, root, paths, dir_mtimes)
    n_terms = conn.execute("SELECT COUNT(*) FROM terms").fetchone()[0]
    manifest = Manifest(
        FORMAT_VERSION,
        previous.tokenizer,
        str(root),
        len(paths),
        n_live,
        n_terms,
        time.time(),
        commit,
        meta.get("access"),
        bm25_avglen=avglen,
        walk=walk if walk is not None else meta.get("walk"),
        scoring=recorded_scoring(meta),
        chunkers=meta.get("chunkers"),
        summary=summary if summary is not None else meta.get("summary"),
    )
    conn.execute("DELETE FROM meta")
    writer.write_meta(conn, manifest, next_chunk, scale)
    return manifest


def _remove_files(
    conn: sqlite3.Connection, path: Path, removed: Iterable[str], next_chunk: int
) -> dict[int, list[tuple[int, int]]]:
    """Delete the rows of removed files; return term id -> the removed chunk-id ranges holding it."""
    removed_ranges: dict[int, list[tuple[int, int]]] = {}
    for p in removed:
        with _reading(path):
            row = conn.execute("SELECT id, first_chunk, n_chunks FROM files WHERE path = ?", (p,)).fetchone()
            if row is None:
                continue
            fid, first, n = row
            check(
                all(isinstance(v, int) for v in row) and 0 <= first <= first + n <= next_chunk,
                "file row out of range",
            )
            for (blob,) in conn.execute(
                "SELECT postings FROM forward WHERE chunk_id >= ? AND chunk_id < ?", (first, first + n)
            ):
                for tid in unpack_postings(blob)[0]:
                    ranges = removed_ranges.setdefault(tid, [])
                    if not ranges or ranges[-1] != (first, first + n):
                        ranges.append((first, first + n))
        conn.execute("DELETE FROM chunks WHERE id >= ? AND id < ?", (first, first + n))
        conn.execute("DELETE FROM forward WHERE chunk_id >= ? AND chunk_id < ?", (first, first + n))
        conn.execute("DELETE FROM files WHERE id = ?", (fid,))
        conn.execute("DELETE FROM acronyms WHERE file_id = ?", (fid,))
    return removed_ranges


def _edit_postings(
    conn: sqlite3.Connection,
    path: Path,
    term_ids: _TermIds,
    removed: dict[int, list[tuple[int, int]]],
    added: dict[int, tuple[array[int], array[int]]],
    next_chunk: int,
) -> dict[str, tuple[float, float, array[int], array[int]]]:
    """Cut removed chunk-id ranges out of the affected postings and append the new chunks;
    return, for each term that remains, its stored bounds before the edit (0 for a new term)
    and its added postings."""
    edited: dict[str, tuple[float, float, array[int], array[int]]] = {}
    names = {tid: t for t, tid in term_ids.known.items()}
    read: Callable[[str], tuple[array[int], array[int], float, float]] = _postings_reader(
        conn, path, next_chunk
    )
    with _reading(path):
        for tid in removed.keys() - names.keys():
            row = conn.execute("SELECT term FROM terms WHERE id = ?", (tid,)).fetchone()
            check(row is not None and isinstance(row[0], str), "term id without a term")
            names[tid] = row[0]
    for tid in removed.keys() | added.keys():
        term = names[tid]
        ids, tfs, maxw, maxb = read(term)
        for lo, hi in sorted(removed.get(tid, ()), reverse=True):
            i, j = bisect_left(ids, lo), bisect_left(ids, hi)
            del ids[i:j]
            del tfs[i:j]
        new_ids, new_tfs = added.get(tid, (array("I"), array("H")))
        ids.extend(new_ids)  # new chunk ids are above every existing one: order is kept
        tfs.extend(new_tfs)
        if ids:  # the bounds are updated once the norms are known
            conn.execute(
                "INSERT OR REPLACE INTO terms VALUES (?,?,?,?,?,?)",
                (term, tid, len(ids), pack_postings(ids, tfs), maxw, maxb),
            )
            edited[term] = (maxw, maxb, new_ids, new_tfs)
        else:
            conn.execute("DELETE FROM terms WHERE term = ?", (term,))
    return edited


def _postings_reader(
    conn: sqlite3.Connection, path: Path, next_chunk: int
) -> Callable[[str], tuple[array[int], array[int], float, float]]:
    """A function from a term to its stored postings and bounds (empty and 0 for a new term), checked."""

    def read(term: str) -> tuple[array[int], array[int], float, float]:
        with _reading(path):
            row = conn.execute("SELECT postings, maxw, maxb FROM terms WHERE term = ?", (term,)).fetchone()
            if row is None:
                return array("I"), array("H"), 0.0, 0.0
            ids, tfs = unpack_postings(row[0])
            check(not ids or max(ids) < next_chunk, "postings out of range")
            # the widths an update edits them in (stored again in the narrowest that hold them)
            return widened(ids, "I"), widened(tfs, "H"), float(row[1]), float(row[2])

    return read
