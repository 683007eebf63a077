"""Where ingest time goes: a full ingest of the eight corpora in one process, timed per stage.

    python bench/ingest_profile.py [--cprofile FILE] [--top N]

The files are those bench/ingest_compare.py and bench/speed.py ingest (`--include <corpus>/*`
over the corpora root). The stages run in one process, as `--workers 1` runs them, with the
same functions the pipeline calls, each under its own timer:

* walk: the listing (ignores, exclusions) and the plan;
* read: bytes, sha1, binary sniff, decode;
* secrets: the secret scan and redaction;
* chunk: every chunker;
* tokenize: a chunk's terms counted (rag.text.terms.chunk_counts) and the acronyms a file
  defines, without the two rows below;
* new words: splitting an identifier the first time it is met (the tokenizer memoises per word),
  without its stemming;
* stem: the Porter2 stemmer, run once per distinct word part;
* pack: a file's chunks made ready to store (rag.store.writer.pack_chunks: the text deflated,
  the stored tfs and each chunk's length), which a parallel ingest does in the workers;
* postings build: the writer's in-memory work (term ids, postings, forward lists, df, norms,
  score bounds, rows), i.e. the writer's time without SQLite's, all of it in the process that
  writes the index;
* SQLite write: the time spent inside sqlite3 calls (execute, executemany, commit), their rows
  already built;
* embedding: 0, nothing is embedded at ingest.

Then `ingest(..., workers=1)` itself, for the total the stages should add up to, and what the
worker processes of a parallel ingest would pickle back to the parent for the same files.
With --cprofile, the stage run is also profiled and the top functions printed.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pickle
import pstats
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import CORPORA, CORPUS_NAMES, require_corpora, versions

STAGES = (
    "walk",
    "read",
    "secrets",
    "chunk",
    "tokenize",
    "new words",
    "stem",
    "pack",
    "postings build",
    "SQLite write",
    "embedding",
)


class _Clock:
    """Seconds per stage; `timed` wraps a function so its calls count towards a stage and not
    towards the stage that called it."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(STAGES, 0.0)
        self._inner = dict.fromkeys(STAGES, 0.0)  # time of nested stages inside a running one

    def timed(self, stage: str, fn: Callable[..., Any], within: str | None = None) -> Callable[..., Any]:
        seconds, inner = self.seconds, self._inner

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            before = inner[stage]
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent = time.process_time() - start
                seconds[stage] += spent - (inner[stage] - before)
                if within is not None:
                    inner[within] += spent

        return wrapper

    def run(self, stage: str, fn: Callable[..., Any], *args: Any) -> Any:
        before = self._inner[stage]
        start = time.process_time()
        result = fn(*args)
        self.seconds[stage] += time.process_time() - start - (self._inner[stage] - before)
        return result


class _TimedConnection:
    """A sqlite3 connection whose calls count as SQLite time; an executemany's rows are built
    first, outside the timer (they are the caller's work)."""

    def __init__(self, conn: Any, clock: _Clock, caller: str) -> None:
        self._conn, self._clock, self._caller = conn, clock, caller

    def execute(self, *args: Any) -> Any:
        return self._clock.timed("SQLite write", self._conn.execute, self._caller)(*args)

    def executemany(self, sql: str, rows: Iterable[Any]) -> Any:
        rows = list(rows)
        return self._clock.timed("SQLite write", self._conn.executemany, self._caller)(sql, rows)

    def executescript(self, script: str) -> Any:
        return self._conn.executescript(script)

    def commit(self) -> None:
        self._clock.timed("SQLite write", self._conn.commit, self._caller)()

    def close(self) -> None:
        self._conn.close()


def stage_run(index_path: Path, include: tuple[str, ...]) -> tuple[_Clock, float, list[Any], int]:
    """Ingest stage by stage; return the clock, the wall time, the processed files and chunks."""
    from rag.chunking import chunk_file
    from rag.indexing import pipeline
    from rag.indexing.plan import make_plan
    from rag.secrets import redact
    from rag.sources.reading import read_text
    from rag.store import writer as writer_module
    from rag.store.format import FileRecord
    from rag.store.writer import IndexWriter
    from rag.text import tokenizer as tokenizer_module
    from rag.text.acronyms import defined_terms
    from rag.text.terms import chunk_counts

    clock = _Clock()
    # the stemmer's own time, once per distinct part (behind its cache), counts as `stem`
    stemmers = tokenizer_module._STEMMERS
    saved = dict(stemmers)
    raw = getattr(saved["porter2"], "__wrapped__", saved["porter2"])
    stemmers["porter2"] = clock.timed("stem", raw, within="new words")
    from functools import cache

    stemmers["porter2"] = cache(stemmers["porter2"])
    tokenizer_module._split_identifier.cache_clear()  # warm from an earlier ingest in this process
    fsync = writer_module._fsync  # the new file's fsync counts as SQLite's
    writer_module._fsync = clock.timed("SQLite write", fsync, within="postings build")
    started = time.process_time()
    try:
        options = pipeline.IngestOptions(include=include, workers=1, full=True)
        plan = clock.run("walk", make_plan, CORPORA, index_path, options, True, None)
        tokenizer = tokenizer_module.Tokenizer(plan.settings)
        # a word's terms, computed once per distinct word, count as `new words`
        tokenizer._terms._terms_of = clock.timed("new words", tokenizer._terms._terms_of, within="tokenize")
        processed = []
        for source in plan.todo:
            read = clock.run("read", read_text, source.abspath, plan.max_bytes, source.identity)
            if read.text is None:
                processed.append(pipeline._Processed(None, read.skip_reason, read.n_bytes, {}))
                continue
            text, redacted = clock.run("secrets", redact, read.text)
            reasons: list[str] = []
            chunks = tuple(clock.run("chunk", chunk_file, source.path, text, reasons.append))

            def terms(chunks: tuple[Any, ...] = chunks, text: str = text) -> tuple[Any, Any]:
                counts = tuple(chunk_counts(c, tokenizer) for c in chunks)
                acronyms = defined_terms(text, tokenizer) if tokenizer.settings.mode != "plain" else ()
                return counts, acronyms

            counts, acronyms = clock.run("tokenize", terms)
            packed = clock.run("pack", writer_module.pack_chunks, chunks, counts)
            record = FileRecord(
                source.path,
                source.size,
                source.mtime_ns,
                read.sha1,
                chunks,
                counts,
                acronyms=acronyms,
                packed=packed,
            )
            processed.append(pipeline._Processed(record, None, read.n_bytes, redacted))
        writer = clock.run("postings build", IndexWriter, index_path, plan.settings, plan.root, plan.chunkers)
        writer.conn = _TimedConnection(writer.conn, clock, "postings build")  # type: ignore[assignment]
        n_chunks = 0
        for done in processed:
            if done.record is not None:
                record = done.record._replace(groups=plan.access.groups_of(done.record.path))
                clock.run("postings build", writer.add, record)
                n_chunks += len(record.chunks)
        clock.run(
            "postings build",
            writer.finish,
            plan.commit,
            plan.access.digest,
            plan.skips,
            plan.walk_options,
            plan.known_dirs,
        )
    finally:
        stemmers.clear()
        stemmers.update(saved)
        writer_module._fsync = fsync
    return clock, time.process_time() - started, processed, n_chunks


def pickled(processed: list[Any]) -> tuple[float, float, int]:
    """Seconds to pickle and unpickle the processed files in the pipeline's batches; bytes."""
    from rag.indexing import pipeline

    batches: list[list[Any]] = []
    batch: list[Any] = []
    size = 0
    for done in processed:
        batch.append(done)
        size += done.n_bytes
        if size >= pipeline._BATCH_BYTES:
            batches.append(batch)
            batch, size = [], 0
    if batch:
        batches.append(batch)
    start = time.process_time()
    blobs = [pickle.dumps(b, pickle.HIGHEST_PROTOCOL) for b in batches]
    dumps = time.process_time() - start
    start = time.process_time()
    for blob in blobs:
        pickle.loads(blob)
    return dumps, time.process_time() - start, sum(len(b) for b in blobs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cprofile", type=Path, help="also profile the stage run; save the stats here")
    parser.add_argument("--top", type=int, default=25, help="functions to print with --cprofile")
    args = parser.parse_args()
    require_corpora()
    from rag.indexing.pipeline import IngestOptions, _fewer_collections, ingest

    include = tuple(f"{n}/*" for n in CORPUS_NAMES)
    print(versions(), "| load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    with tempfile.TemporaryDirectory(prefix="rag-ingest-profile-") as tmp:
        work = Path(tmp)
        # the whole ingest first: it also warms the page cache and imports every chunker
        with _fewer_collections():
            start = time.process_time()
            report = ingest(
                CORPORA, work / "whole.sqlite", IngestOptions(include=include, workers=1, full=True)
            )
            whole = time.process_time() - start
        profiler = cProfile.Profile() if args.cprofile else None
        with _fewer_collections():  # as ingest() runs
            if profiler is not None:
                profiler.enable()
            clock, wall, processed, n_chunks = stage_run(work / "stages.sqlite", include)
            if profiler is not None:
                profiler.disable()
        dumps, loads, n_pickled = pickled(processed)
    n_bytes = sum(p.n_bytes for p in processed)
    print(f"{report.files} files, {n_bytes / 1e6:.1f} MB read, {n_chunks} chunks\n")
    total = sum(clock.seconds.values())
    print(f"{'stage':16} {'seconds':>8} {'share':>6}")
    for stage in STAGES:
        s = clock.seconds[stage]
        print(f"{stage:16} {s:8.2f} {s / total:6.1%}")
    print(f"{'sum of stages':16} {total:8.2f}")
    print(f"{'stage run, total':16} {wall:8.2f}  (the rest: the loop, records, access groups)")
    print(f"{'ingest(), total':16} {whole:8.2f}  (workers=1, the same files, in the same process)")
    print(
        f"\nworkers > 1 also pickle each batch's results to the parent: {n_pickled / 1e6:.1f} MB, "
        f"dumps {dumps:.2f} s (in the workers), loads {loads:.2f} s (in the parent)"
    )
    if profiler is not None:
        profiler.dump_stats(args.cprofile)
        print()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
