"""Ingest: walk -> read -> redact -> chunk -> tokenize -> index, reusing unchanged files.

An ingest is planned first (rag.indexing.plan: the listing diffed against the previous index,
what is unchanged, renamed, changed, deleted), then applied here by one store call: a retime
when nothing indexed changed, an update in place when few files did, else a full build. The
files to read are read, redacted, chunked and tokenized here too, in worker processes for a
large ingest."""

from __future__ import annotations

import gc
import heapq
import os
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from rag.chunking import chunk_file, chunker_for, languages_available, structured_languages
from rag.errors import IndexFormatError, IndexWriteError, InputError, NoIndexError, terminations_as_exit
from rag.indexing.lock import ingest_lock
from rag.indexing.options import IngestOptions as IngestOptions  # callers of ingest() take it from here too
from rag.indexing.plan import Plan, make_plan
from rag.secrets import redact
from rag.sources.access import AccessList
from rag.sources.reading import read_text
from rag.sources.walk import SourceFile, check_root
from rag.store.format import SKIPPED_LISTED, FileRecord
from rag.store.paths import default_index_path, index_file
from rag.store.reader import Index
from rag.store.update import update_index
from rag.store.writer import (
    SkippedRow,
    check_replaceable,
    nothing_to_index,
    pack_chunks,
    retime_files,
    write_index,
)
from rag.text.acronyms import defined_terms
from rag.text.terms import chunk_counts
from rag.text.tokenizer import Tokenizer, TokenizerSettings

# Below this many bytes to read, worker processes cost more than they save.
_PARALLEL_MIN_BYTES = 2_000_000
_BATCH_BYTES = 256_000
# Allocations between young-generation garbage collections while ingesting (Python's default
# is 700). Parsing and chunking allocate millions of short-lived acyclic objects (ast nodes,
# chunk tuples), which reference counting frees; collecting every 700 of them cost 11% of a
# full ingest of the eight corpora, 20% in one process (docs/benchmarks.md).
_GC_GEN0 = 50_000


class FileRead(NamedTuple):
    """What reading one file gave, kept so that a report can be counted as a caller sees it."""

    path: str
    n_bytes: int
    skipped: str | None  # why it was passed over after reading, or None: indexed
    redacted: dict[str, int]
    fell_back: str | None  # the chunker that could not read its structure
    unstructured: str | None  # its language, chunked as paragraphs for want of the languages extra


@dataclass(frozen=True, slots=True)
class IngestReport:
    """What an ingest did: counts for the summary line, and the paths behind them (as_seen_by)."""

    root: Path
    index_path: Path
    files: int
    chunks: int
    skipped: dict[str, int]
    bytes_read: int
    seconds: float
    reused: int = 0  # files whose chunks were taken from the previous index unchanged
    redacted: dict[str, int] = field(default_factory=dict)
    up_to_date: bool = False  # nothing changed: the index was left as it was
    # language label -> files chunked as paragraphs because the languages extra is missing
    unstructured: dict[str, int] = field(default_factory=dict)
    # chunker -> files it could not read the structure of (syntax errors, a grammar that failed),
    # chunked as paragraphs instead; a missing languages extra is `unstructured`, not here
    fell_back: dict[str, int] = field(default_factory=dict)
    # --include patterns that matched nothing but files in a built-in excluded folder -> one of them
    blocked_includes: dict[str, str] = field(default_factory=dict)
    changed: int = 0  # files read and indexed anew (changed or added)
    deleted: int = 0  # files that left the index
    access: AccessList = field(default_factory=AccessList)  # the rules the index was built with
    read: tuple[FileRead, ...] = ()  # the files read (changed or added)
    unchanged_paths: tuple[str, ...] = ()  # the files whose chunks were kept
    moved_paths: tuple[str, ...] = ()  # renamed files, under their new paths
    deleted_paths: tuple[str, ...] = ()
    skipped_paths: tuple[tuple[str, str], ...] = ()  # (path, reason) of the skips not read now
    # the access rules, the walk's options or the root changed: every file is re-indexed
    rules_changed: bool = False


def as_seen_by(report: IngestReport, groups: frozenset[str]) -> IngestReport:
    """Return `report` as an ingest of the repository without the files a caller with `groups`
    may not read would have made it: its counts and paths those of the readable files, and up
    to date when none of those changed (the index itself is every caller's, updated for all)."""
    access = report.access
    if not access.rules:
        return report

    def readable(path: str) -> bool:
        return access.may_read(path, groups)

    read = [r for r in report.read if readable(r.path)]
    changed, deleted = len(read), sum(map(readable, report.deleted_paths))
    moved, reused = sum(map(readable, report.moved_paths)), sum(map(readable, report.unchanged_paths))
    skipped = Counter(report.skipped)
    hidden = [reason for path, reason in report.skipped_paths if not readable(path)]
    skipped.subtract(hidden + [r.skipped for r in report.read if r.skipped and not readable(r.path)])
    with Index(report.index_path) as index:
        mine = index.readable_files(groups)
        chunks = sum(n for path, n in index.file_chunk_counts() if path in mine)
    up_to_date = report.up_to_date or not (report.rules_changed or changed or deleted or moved)
    redacted: Counter[str] = Counter()
    for r in read:
        redacted.update(r.redacted)
    return replace(
        report,
        files=len(mine),
        chunks=chunks,
        skipped={k: n for k, n in sorted(skipped.items()) if n > 0},
        bytes_read=0 if up_to_date else sum(r.n_bytes for r in read),
        reused=reused,
        redacted={} if up_to_date else dict(redacted),
        up_to_date=up_to_date,
        unstructured={} if up_to_date else dict(Counter(r.unstructured for r in read if r.unstructured)),
        fell_back={} if up_to_date else dict(Counter(r.fell_back for r in read if r.fell_back)),
        blocked_includes={p: e for p, e in report.blocked_includes.items() if readable(e)},
        changed=0 if up_to_date else changed,
        deleted=0 if up_to_date else deleted,
        read=tuple(read),
        unchanged_paths=tuple(filter(readable, report.unchanged_paths)),
        moved_paths=tuple(filter(readable, report.moved_paths)),
        deleted_paths=tuple(filter(readable, report.deleted_paths)),
        skipped_paths=tuple((p, r) for p, r in report.skipped_paths if readable(p)),
    )


def reingest(
    index_path: str | os.PathLike[str], groups: frozenset[str] = frozenset(), workers: int | None = None
) -> IngestReport:
    """Re-ingest the repository of the index at `index_path` with the options it was built with;
    return the report as a caller with `groups` sees it (as_seen_by)."""
    with Index(index_path) as index:
        root, settings = index.manifest.root, index.manifest.tokenizer
    return as_seen_by(ingest(root, index_path, IngestOptions(settings, workers=workers)), groups)


@dataclass(frozen=True, slots=True)
class _Processed:
    record: FileRecord | None
    skip_reason: str | None
    n_bytes: int
    redacted: dict[str, int]
    fallback: str | None = None  # why its chunker fell back to paragraphs


def process_file(source: SourceFile, tokenizer: Tokenizer, max_bytes: int) -> _Processed:
    """Read, redact, chunk and tokenize one file."""
    read = read_text(source.abspath, max_bytes, source.identity)
    if read.text is None:
        return _Processed(None, read.skip_reason, read.n_bytes, {})
    text, redacted = redact(read.text)
    reasons: list[str] = []
    chunks = tuple(chunk_file(source.path, text, reasons.append))
    counts = tuple(chunk_counts(c, tokenizer) for c in chunks)
    # the plain tokenizer indexes the words alone: no acronyms
    acronyms = defined_terms(text, tokenizer) if tokenizer.settings.mode != "plain" else ()
    record = FileRecord(
        source.path,
        source.size,
        source.mtime_ns,
        read.sha1,
        chunks,
        counts,
        acronyms=acronyms,
        packed=pack_chunks(chunks, counts),  # here: in a worker process when there are several
    )
    fallback = reasons[0] if reasons and "not installed" not in reasons[0] else None
    return _Processed(record, None, read.n_bytes, redacted, fallback)


def _collect_less() -> tuple[int, int, int]:
    """Collect the young generation every _GC_GEN0 allocations; return the thresholds before.
    (Also each worker process's initializer.)"""
    old = gc.get_threshold()
    gc.set_threshold(_GC_GEN0, old[1], old[2])
    return old


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _worker_init(parent: int) -> None:
    """Each worker process's initializer: collect less (_collect_less), and die with the ingest.

    A SIGKILLed ingest cannot shut its pool down: its workers, reparented to PID 1, would wait on
    their queue for ever (holding the index's lock, inherited across fork). On Linux the kernel
    sends them SIGKILL when the ingest ends (PR_SET_PDEATHSIG); elsewhere a thread checks."""
    import signal
    import sys

    _collect_less()
    armed = False
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent:  # the ingest died before the signal was armed
        os._exit(1)
    if not armed:
        import threading

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(1)

        threading.Thread(target=watch, daemon=True).start()


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Collect less while ingesting, then restore the thresholds (wraps ingest())."""
    old = _collect_less()
    try:
        yield
    finally:
        gc.set_threshold(*old)


_worker_tokenizer: Tokenizer | None = None


def _process_batch(batch: list[SourceFile], settings: TokenizerSettings, max_bytes: int) -> list[_Processed]:
    global _worker_tokenizer
    if _worker_tokenizer is None or _worker_tokenizer.settings != settings:
        _worker_tokenizer = Tokenizer(settings)
    return [process_file(f, _worker_tokenizer, max_bytes) for f in batch]


def _batches(files: list[SourceFile]) -> Iterator[list[SourceFile]]:
    batch: list[SourceFile] = []
    size = 0
    for f in files:
        batch.append(f)
        size += f.size
        if size >= _BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _process_all(
    files: list[SourceFile],
    settings: TokenizerSettings,
    max_bytes: int,
    workers: int,
    progress: Callable[[int, int], None],
) -> Iterator[_Processed]:
    total = sum(f.size for f in files)
    if workers <= 1 or total < _PARALLEL_MIN_BYTES:
        tokenizer = Tokenizer(settings)
        for f in files:
            done = process_file(f, tokenizer, max_bytes)
            progress(1, f.size)  # before the yield: the caller stops pulling after the last file
            yield done
        return
    from concurrent.futures import ProcessPoolExecutor  # 11 ms to import: not for a small update

    pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_init, initargs=(os.getpid(),))
    try:
        batches = list(_batches(files))
        results = pool.map(_process_batch, batches, [settings] * len(batches), [max_bytes] * len(batches))
        for batch, sources in zip(results, batches):
            progress(len(batch), sum(f.size for f in sources))
            yield from batch
    finally:  # interrupted too (see ingest): the batches not started are dropped, the running ones end
        pool.shutdown(wait=True, cancel_futures=True)


def _moved_records(
    previous: Index | None,
    moved: list[tuple[str, SourceFile]],
    access: AccessList,
    settings: TokenizerSettings,
) -> list[FileRecord]:
    """Reuse the chunks of renamed files under their new paths (the terms are recounted: a
    chunk's path is part of what is indexed)."""
    if previous is None or not moved:
        return []
    new_of = {old: f for old, f in moved}
    tokenizer = Tokenizer(settings)
    out = []
    for record in previous.records(new_of):
        f = new_of[record.path]
        chunks = tuple(c._replace(path=f.path) for c in record.chunks)
        out.append(
            record._replace(
                path=f.path,
                size=f.size,
                mtime_ns=f.mtime_ns,
                chunks=chunks,
                counts=tuple(chunk_counts(c, tokenizer) for c in chunks),
                groups=access.groups_of(f.path),
                packed=(),
            )
        )
    return out


def _open_previous(index_path: Path) -> Index | None:
    """Open the existing index, or None when there is none this tool can read."""
    try:
        return Index(index_path)
    except (NoIndexError, IndexFormatError):
        return None


@_fewer_collections()  # a fresh one for each call
def ingest(
    root: str | os.PathLike[str],
    index_path: str | os.PathLike[str] | None = None,
    options: IngestOptions | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> IngestReport:
    """Index the repository at `root`, re-reading only files that changed since the last ingest.

    Options that are not given (None) are those the existing index was built with, else the
    defaults: re-ingest and --refresh keep them. Unchanged files (same size and mtime) keep
    their chunks. When few files changed, the index is updated in place in one transaction;
    otherwise it is rebuilt into a new file that replaces the old one. Either way the result
    equals a full rebuild. `on_start` gets the number of files and bytes to read, `progress`
    each increment of both.

    Damage met while the previous index is read or updated (IndexFormatError from the store, or
    SQLite failing: damaged pages, a read-only file) makes a full build, which reads none of it;
    if that fails too (a full disk, a read-only folder), IndexWriteError says so, and the previous
    index is left as it was. Any other exception is a fault, raised as it is.
    """
    options = options or IngestOptions()
    if not os.fspath(root).strip():
        raise InputError("No repository path given — pass the path of a repository directory")
    index_path = index_file(index_path) if index_path else default_index_path(Path(root).resolve())
    check_root(root)  # before the lock's folder is made in it
    check_replaceable(index_path)  # before its lock file is made beside it (a device, a pipe)
    # one ingest at a time on one index: a second one fails at once (IngestRunningError)
    with ingest_lock(index_path):
        for rebuild in (False, True) if not options.full else (True,):
            try:
                # SIGTERM or SIGHUP would end this process alone: its workers would go on with their
                # queued batches, and a new index's temporary file would stay
                with terminations_as_exit():
                    return _ingest(Path(root), index_path, options, rebuild, progress, on_start)
            except (sqlite3.Error, IndexFormatError) as exc:  # the latter: damage found reading the index
                error = exc
    raise IndexWriteError(
        f"Could not write the index at {index_path} ({error}) — check the free disk space and "
        "that its folder is writable, or pass --index to keep it elsewhere"
    ) from None


def _ingest(
    root: Path,
    index_path: Path,
    options: IngestOptions,
    full: bool,
    progress: Callable[[int, int], None] | None,
    on_start: Callable[[int, int], None] | None,
) -> IngestReport:
    started = time.perf_counter()
    check_replaceable(index_path)
    previous = _open_previous(index_path)
    try:
        plan = make_plan(root, index_path, options, full, previous)
        if previous is not None and not plan.reusable:
            previous.close()  # nothing of it can be reused
            previous = None
        return _apply(plan, previous, options.workers, started, progress, on_start)
    finally:
        if previous is not None:
            previous.close()


def _summary(
    plan: Plan,
    previous: Index | None,
    skipped: Counter[str],
    skips: list[SkippedRow],
    redacted: dict[str, dict[str, int]],
) -> dict[str, object]:
    """The manifest's summary (format.Manifest.summary): skipped files by reason, with their
    paths, and the secrets redacted in each indexed file (kept for files whose chunks are)."""
    paths: dict[str, list[str]] = {}
    for path, reason in [*plan.skipped_paths, *((row[0], row[3]) for row in skips)]:
        listed = paths.setdefault(reason, [])
        if len(listed) < SKIPPED_LISTED:
            listed.append(path)
    old = (previous.manifest.summary or {}).get("redacted", {}) if previous is not None else {}
    kept: dict[str, dict[str, int]] = {p: old[p] for p in plan.unchanged if p in old}
    kept.update({f.path: old[o] for o, f in plan.moved if o in old})
    kept.update(redacted)
    return {
        "skipped": dict(sorted(skipped.items())),
        "skipped_paths": {r: sorted(p) for r, p in sorted(paths.items())},
        "redacted": dict(sorted(kept.items())),
    }


def _apply(
    plan: Plan,
    previous: Index | None,
    workers: int | None,
    started: float,
    progress: Callable[[int, int], None] | None,
    on_start: Callable[[int, int], None] | None,
) -> IngestReport:
    """Carry out a plan with one store call: retime, update in place, or write a new index."""
    if plan.up_to_date:
        assert previous is not None
        n_chunks = previous.manifest.n_chunks
        summary = _summary(plan, previous, plan.skipped, plan.skips, {})
        previous.close()
        # same bytes, new mtime: remember the mtime so the file is not hashed again; and the
        # folders' mtimes, moved by files that are not indexed (ignored, skipped, saved again)
        # so that a query stops saying the index is stale
        retime_files(
            plan.index_path,
            [(f.path, f.mtime_ns) for f in plan.retimed],
            plan.moved_dirs,
            None if summary == previous.manifest.summary else summary,
        )
        return IngestReport(
            plan.root,
            plan.index_path,
            len(plan.unchanged),
            n_chunks,
            dict(plan.skipped),
            0,
            time.perf_counter() - started,
            reused=len(plan.unchanged),
            up_to_date=True,
            blocked_includes=plan.blocked_includes,
            access=plan.access,
            unchanged_paths=tuple(plan.unchanged),
            skipped_paths=_skipped_paths(plan),
        )
    earlier_skips = _skipped_paths(plan)  # before the files read now add theirs to plan.skips
    if on_start:
        on_start(len(plan.todo), sum(f.size for f in plan.todo))
    redacted: Counter[str] = Counter()
    redacted_in: dict[str, dict[str, int]] = {}  # path -> kind -> secrets redacted in it
    bytes_read = 0
    access, skipped, skips = plan.access, plan.skipped, plan.skips
    unstructured: Counter[str] = Counter()
    fell_back: Counter[str] = Counter()
    labels = {} if languages_available() else structured_languages()
    read: list[FileRead] = []

    def fresh_records() -> Generator[FileRecord, None, None]:
        nonlocal bytes_read
        processed = _process_all(
            plan.todo,
            plan.settings,
            plan.max_bytes,
            workers or os.cpu_count() or 1,
            progress or (lambda n, b: None),
        )
        for source, done in zip(plan.todo, processed):
            bytes_read += done.n_bytes
            redacted.update(done.redacted)
            if done.redacted and done.record is not None:
                redacted_in[source.path] = dict(sorted(done.redacted.items()))
            reason, failed, label = None, None, None
            if done.record is None:
                reason = done.skip_reason or "unreadable"
                skipped[reason] += 1
                # these depend on the moment (a file swapped after the walk) and the options
                if reason not in ("unreadable", "too-large", "symlink", "not-a-file"):
                    skips.append((source.path, source.size, source.mtime_ns, reason))
            elif done.fallback is not None or labels:
                chunker = chunker_for(source.path)
                if done.fallback is not None:
                    fell_back[chunker] += 1
                    failed = chunker
                if chunker in labels:
                    label = labels[chunker]
                    unstructured[label] += 1
            read.append(FileRead(source.path, done.n_bytes, reason, done.redacted, failed, label))
            if done.record is not None:
                yield done.record._replace(groups=access.groups_of(done.record.path))

    new_records = fresh_records()
    try:
        if plan.incremental:
            assert previous is not None
            fresh = [*_moved_records(previous, plan.moved, access, plan.settings), *new_records]
            if not fresh and not plan.unchanged:
                raise nothing_to_index(plan.root)
            previous.close()
            manifest = update_index(
                plan.index_path,
                plan.changed,
                fresh,
                plan.root,
                plan.commit,
                skips,
                [(f.path, f.mtime_ns) for f in plan.retimed],
                plan.walk_options,
                plan.known_dirs,
                _summary(plan, previous, skipped, skips, redacted_in),
            )
        else:
            stored: Iterator[FileRecord] = iter(())
            if previous is not None:
                retimes = {f.path: f.mtime_ns for f in plan.retimed}
                stored = heapq.merge(
                    (
                        r._replace(groups=access.groups_of(r.path), mtime_ns=retimes.get(r.path, r.mtime_ns))
                        for r in previous.records(plan.unchanged)
                    ),
                    sorted(_moved_records(previous, plan.moved, access, plan.settings), key=lambda r: r.path),
                    key=lambda r: r.path,
                )
            records = heapq.merge(stored, new_records, key=lambda r: r.path)
            kept = previous  # its summary's redactions of the files kept, read once the records are in

            def make_summary() -> dict[str, object]:
                return _summary(plan, kept, skipped, skips, redacted_in)

            manifest = write_index(
                plan.index_path,
                records,
                plan.settings,
                plan.root,
                plan.commit,
                access.digest,
                skips,
                plan.walk_options,
                plan.known_dirs,
                plan.chunkers,
                make_summary,
            )
    finally:
        new_records.close()  # now, not when a traceback lets go of it: its worker pool ends with it
    return IngestReport(
        root=plan.root,
        index_path=plan.index_path,
        files=manifest.n_files,
        chunks=manifest.n_chunks,
        skipped=dict(skipped),
        bytes_read=bytes_read,
        seconds=time.perf_counter() - started,
        reused=len(plan.unchanged),
        redacted=dict(redacted),
        unstructured=dict(unstructured),
        fell_back=dict(fell_back),
        blocked_includes=plan.blocked_includes,
        changed=len(plan.todo),
        deleted=len(plan.deleted),
        access=plan.access,
        read=tuple(read),
        unchanged_paths=tuple(plan.unchanged),
        moved_paths=tuple(f.path for _, f in plan.moved),
        deleted_paths=tuple(plan.deleted),
        skipped_paths=earlier_skips,
        rules_changed=plan.rules_changed,
    )


def _skipped_paths(plan: Plan) -> tuple[tuple[str, str], ...]:
    """(path, reason) of the files the plan passes over without reading them now: the listing's
    skips, and the files skipped by an earlier ingest and unchanged since."""
    return (*plan.skipped_paths, *((row[0], row[3]) for row in plan.skips))
