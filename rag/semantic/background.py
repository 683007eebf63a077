"""Embedding an index's passages ahead of the queries, so that they find every candidate's vector
cached (rag.semantic.vectors) instead of embedding their 40 first (about 1 s a query on 2 cores): now
(`ingest --embed`), or by a background process that every ingest starts when the semantic stage is on.

`start` launches `python -P -m rag.semantic.background INDEX` detached from the terminal (its own session,
no output, no descriptor of its parent's); that process (`run`) embeds every passage that has no
vector yet and ends. It stays out of the way: Linux's idle scheduling class (else niceness 10), and
before each small batch (BACKGROUND_BATCH) a wait while another process runs (up to BUSY_WAIT_MAX):
without that, two queries at a time right after ingests ran 1.4-1.9 times as long (the model's
threads share the cores and their caches even at the lowest priority; docs/levers.md).

One process embeds at a time on the machine (a lock in the user cache folder), and the others do not
wait: each queues its index (a file in the queue folder beside the lock) and exits if that lock is
taken, and the process holding it embeds every queued index before it ends, oldest first. So many
ingests in a row (a benchmark's, a script's) leave one process and one model in memory, not one
waiting process an index. When the index changes under it (an ingest, a `query --refresh`) it reads
it again and goes on, or, when that ingest queued it again, takes it up from the queue.
`ingest --embed` waits for a running one on its index, then embeds what is left. Stopping
either loses nothing: each batch of vectors is stored in one transaction, and a query embeds
whatever is still missing."""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path
from typing import BinaryIO, NamedTuple

from rag.errors import InputError, RagError
from rag.semantic.model import ModelError, identity, load, prepare
from rag.semantic.model_cache import cache_root
from rag.semantic.rerank import passage_text, will_run
from rag.semantic.vectors import VectorCache, cache_path, content_key
from rag.store.reader import Index

LOCK_SUFFIX = ".embedding"  # beside the vector cache: held by the process embedding that index
MACHINE_LOCK = "embedding.lock"  # in the user cache folder: held by the one process embedding on this machine
QUEUE_FOLDER = "embedding-queue"  # beside it: the indexes waiting to be embedded, one file each
NICENESS = 10  # the background process's priority below the user's: a query or an editor comes first
_started: list[subprocess.Popen[bytes]] = []  # not waited for: kept so that none warns it still runs


class EmbedReport(NamedTuple):
    """What `ingest --embed` did."""

    chunks: int  # passages in the index
    computed: int  # of them embedded now (the others were cached, or left: `stopped`)
    seconds: float
    stopped: bool = False  # the index changed under it (embed_index's `until_changed`)


EMBED_BATCH = 256  # passages embedded and stored per transaction
BACKGROUND_BATCH = 32  # the background process's (about 0.6 s of both cores): it yields soon to other work
ENV = "RAG_EMBED"  # what every ingest does for the vectors: background (the default), now or off
SETTINGS: dict[str, bool | None] = {"background": None, "now": True, "off": False}


def setting() -> bool | None:
    """RAG_EMBED as `ingest --embed` (True: now), `--no-embed` (False: off) or neither (None: in
    the background, the default)."""
    value = os.environ.get(ENV) or "background"
    if value not in SETTINGS:
        raise InputError(f"{ENV} must be one of {', '.join(SETTINGS)}, not {value!r}")
    return SETTINGS[value]


class Followup(NamedTuple):
    """What an ingest did for the semantic stage's vectors afterwards (`after_ingest`)."""

    prepared: float | None = None  # seconds the model's cached form took to build (None: it was there)
    pid: int | None = None  # the background process started to embed the passages
    embedded: EmbedReport | None = None  # what embedding now did
    note: str | None = None  # a line for stderr: the model failed, or the process could not start


def after_ingest(
    index_path: str | os.PathLike[str], embed: bool | None, mode: str | None = None
) -> Followup | None:
    """After an ingest (`ingest`, `query --refresh`, the MCP reindex), when the queries will run
    the semantic stage (`mode`, default RAG_RERANK): embed every passage now (`embed` True), or
    build the model's cached form, so that the first query need not, and then (`embed` None) start
    the background process; else None when the stage will not run. A model that fails or a process
    that cannot start leaves the index whole, and a note."""
    if embed:  # asked for: a model that cannot load is the caller's error
        return Followup(embedded=embed_now(index_path))
    if not will_run(mode):  # nothing to prepare or embed
        return None
    try:
        prepared = prepare()
    except ModelError as exc:  # the queries will say the same and rank lexically
        return _lexical(exc)
    if embed is False:
        return Followup(prepared)
    try:
        pid = start(index_path)
    except OSError as exc:  # queries embed their passages themselves
        return Followup(
            prepared, note=f"Note: could not start embedding in the background ({exc.strerror or exc})"
        )
    return Followup(prepared, pid)


BUSY_SLEEP = 0.2  # seconds the background process waits, while other processes run, before it looks again
BUSY_WAIT_MAX = 10.0  # and at most this long before each batch
READ_BATCH = 1024  # passages read from the index at a time


def embed_index(index_path: str | os.PathLike[str], until_changed: bool = False) -> EmbedReport:
    """Compute and cache the vector of every passage of the index that has none yet. The passages'
    texts are read first, the index then closed: it is not held open while the model runs (minutes
    for a large repository); the model is loaded only if some passage has no vector. `until_changed`:
    stop when the index file changes or goes (an ingest since), and say so (EmbedReport.stopped)."""
    start = time.perf_counter()
    before = _file_identity(index_path)  # before reading: a file replaced meanwhile is then noticed
    with Index(index_path, read_only=until_changed) as index:  # a missing index fails before the model loads
        every = passage_texts(index)
    texts = list(dict.fromkeys(every))
    cache = VectorCache(cache_path(index_path), identity())
    computed = 0
    stopped = False
    try:
        found = cache.get(content_key(t) for t in texts)
        todo = [t for t in texts if content_key(t) not in found]
        embedder = load(spinning=True) if todo else None  # one long run of batches
        size = BACKGROUND_BATCH if until_changed else EMBED_BATCH
        for at in range(0, len(todo), size):
            if until_changed:
                _wait_while_busy()
                if _file_identity(index_path) != before:
                    stopped = True
                    break
            assert embedder is not None
            batch = todo[at : at + size]
            vectors = embedder.embed(batch)
            if not cache.put((content_key(t), vectors[i].tobytes()) for i, t in enumerate(batch)):
                raise ModelError(
                    f"The vector cache {cache.path} cannot be written — check that its folder is writable"
                )
            computed += len(batch)
    finally:
        cache.close()
    return EmbedReport(len(every), computed, time.perf_counter() - start, stopped)


def passage_texts(index: Index) -> list[str]:
    """The text each passage of the index is embedded as (rag.semantic.rerank.passage_text), in
    chunk-id order, read READ_BATCH passages at a time."""
    ids = index.chunk_ids()
    return [
        passage_text(c)
        for at in range(0, len(ids), READ_BATCH)
        for c in index.chunks(ids[at : at + READ_BATCH]).values()
    ]


def _wait_while_busy() -> None:
    """Wait while another process is running, up to BUSY_WAIT_MAX seconds: a query right after an
    ingest gets both cores, and under a load that does not end the embedding still goes on."""
    deadline = time.monotonic() + BUSY_WAIT_MAX
    while _others_running() > 0 and time.monotonic() < deadline:
        time.sleep(BUSY_SLEEP)


def _others_running() -> int:
    """How many tasks of other processes are running (Linux's count of runnable tasks in
    /proc/loadavg, less this process's running threads); 0 where that cannot be read."""
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            running = int(f.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return 0
    return max(running - _own_running(), 0)


def _own_running() -> int:
    """How many of this process's threads are running (the model's may still spin after a batch)."""
    n = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/stat", encoding="ascii", errors="replace") as f:
                n += f.read().rpartition(")")[2].split()[0] == "R"
        except (OSError, IndexError):
            continue
    return max(n, 1)


def _file_identity(path: str | os.PathLike[str]) -> tuple[int, int, int, int] | None:
    """What changes when an ingest replaces or updates the index file."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def lock_path(index_path: str | os.PathLike[str]) -> str:
    """Return the file whose lock the process embedding this index holds."""
    return cache_path(index_path) + LOCK_SUFFIX


def _user_file(name: str) -> str:
    """A file or folder of the background embedding's in the user cache folder (MACHINE_LOCK, QUEUE_FOLDER)."""
    return os.path.join(os.path.dirname(cache_root()), name)


def start(index_path: str | os.PathLike[str]) -> int:
    """Start embedding the index's passages in a detached background process; return its pid."""
    # rag importable wherever ingest.py was run from
    package_root = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": package_root + (os.pathsep + path if path else "")}
    process = subprocess.Popen(
        # -P: not the working directory's `rag` package, if it has one
        [sys.executable, "-P", "-m", "rag.semantic.background", os.path.abspath(index_path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        close_fds=True,
        start_new_session=True,  # a closed terminal does not end it, nor does its Ctrl-C
        env=env,
    )
    _started[:] = [p for p in _started if p.poll() is None]  # reaped: a long-lived MCP server starts many
    _started.append(process)
    return process.pid


def run(index_path: str | os.PathLike[str]) -> EmbedReport | None:
    """The background process's work: queue the index, then, unless another process is embedding on
    this machine (which will take the queued index up when it is done), embed every queued index's
    passages that have no vector yet, oldest first; return what it did for `index_path` (None: it left
    that to the other process). So many ingests in a row leave one process running, not one each
    waiting. Without a writable user cache folder (no queue), it embeds this index alone."""
    path = os.path.abspath(index_path)
    folder = _queue_folder()
    try:
        if folder is not None:
            _enqueue(folder, path)
    except OSError:  # a full disk: no queue either
        folder = None
    if folder is None:
        return _embed_one(path, None)
    mine: EmbedReport | None = None
    skipped: set[str] = set()  # entries that could not be taken off the queue: not looked at again
    while True:
        with open(_user_file(MACHINE_LOCK), "a+b") as machine:
            if not _took(machine, fcntl.LOCK_EX):  # the one embedding will see the entry
                return mine
            while (entry := _oldest(folder, skipped)) is not None:
                taken, removed = _dequeue(entry)
                if not removed:  # it would come back: embedded once this run, then passed over
                    skipped.add(entry)
                try:
                    report = _embed_one(taken, folder) if taken else None
                except Exception:  # noqa: BLE001 (a model, memory or disk failure: no one to tell)
                    # the queue goes on, and the queries embed that index's passages themselves
                    continue
                if taken == path:
                    mine = report
        # released: an entry queued after the last look found the lock held, and its process exited
        if _oldest(folder, skipped) is None:
            return mine


def after_refresh(
    index_path: str | os.PathLike[str], embed: bool | None, mode: str | None = None
) -> Followup | None:
    """after_ingest for a `query --refresh` or the MCP reindex, whose refresh has been applied:
    nothing when the stage does not run for it (`mode`), RAG_EMBED=now included, and a model that
    cannot embed now is a note, not a failed query."""
    if not will_run(mode):
        return None
    try:
        return after_ingest(index_path, embed, mode)
    except ModelError as exc:
        return _lexical(exc)


def _lexical(exc: ModelError) -> Followup:
    """The note of a model that failed after an ingest: the index is whole, the queries rank lexically."""
    return Followup(note=f"Note: {exc}; queries will rank the passages lexically")


def _embed_one(path: str, folder: str | None) -> EmbedReport | None:
    """Embed one index's missing passages, holding its lock (`ingest --embed` waits for it); when
    the index changes under it, read it again and go on, unless the index is queued again (`folder`'s
    next round takes it). None: the index is gone."""
    if not os.path.isfile(path):
        return None
    with open(lock_path(path), "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the process ends
        while True:
            report = embed_index(path, until_changed=True)
            if not report.stopped or (folder is not None and os.path.exists(_entry(folder, path))):
                return report


def _queue_folder() -> str | None:
    """The user's queue of indexes waiting to be embedded (None: the user cache folder cannot be written)."""
    folder = _user_file(QUEUE_FOLDER)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK) else None


def _entry(folder: str, path: str) -> str:
    return os.path.join(folder, hashlib.sha1(path.encode("utf-8", "surrogateescape")).hexdigest())


def _enqueue(folder: str, path: str) -> None:
    """Queue an index, unless it is queued: it keeps its place, and is read when it is taken (after
    this ingest, which has ended)."""
    entry = _entry(folder, path)
    if os.path.exists(entry):
        return
    temporary = f"{entry}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8", errors="surrogateescape") as out:
        out.write(path)
    os.replace(temporary, entry)  # whole: a reader never sees half a path


def _oldest(folder: str, skipped: set[str]) -> str | None:
    """The entry queued first, but those `skipped`, or None when there is none."""
    entries = []
    with suppress(OSError):  # the folder removed: nothing queued
        for name in os.listdir(folder):
            entry = os.path.join(folder, name)
            if name.endswith(".tmp") or entry in skipped:
                continue
            with suppress(OSError):  # taken meanwhile
                entries.append((os.stat(entry).st_mtime_ns, entry))
    return min(entries)[1] if entries else None


def _dequeue(entry: str) -> tuple[str | None, bool]:
    """Take an entry off the queue: the index it names (None: it was gone, or could not be read) and
    whether it was removed (not: a folder made read-only; it would come back). Taken before its index
    is embedded, so that an ingest meanwhile queues it again."""
    try:
        with open(entry, encoding="utf-8", errors="surrogateescape") as found:
            path = found.read() or None
    except FileNotFoundError:
        return None, True
    except OSError:
        return None, False
    try:
        os.unlink(entry)
    except FileNotFoundError:
        pass
    except OSError:
        return path, False
    return path, True


def embedding_now(index_path: str | os.PathLike[str]) -> bool:
    """Whether a process is embedding this index now (it holds the index's lock); told without
    creating the lock file."""
    try:
        with open(lock_path(index_path), "rb") as lock:
            return not _took(lock, fcntl.LOCK_SH)
    except OSError:
        return False


def queued(index_path: str | os.PathLike[str]) -> bool:
    """Whether the index waits in the queue of a background process embedding now (rag status). An
    entry left by one that was killed waits for the next ingest's process, and is not reported."""
    if not os.path.exists(_entry(_user_file(QUEUE_FOLDER), os.path.abspath(index_path))):
        return False
    try:
        with open(_user_file(MACHINE_LOCK), "rb") as machine:
            return not _took(machine, fcntl.LOCK_SH)
    except OSError:
        return False


def _took(file: BinaryIO, operation: int) -> bool:
    """Take `file`'s lock (`operation`: LOCK_EX or LOCK_SH) if no other holder stands in the way,
    without waiting; whether it was taken (it is released when the file closes)."""
    try:
        fcntl.flock(file, operation | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def embed_now(index_path: str | os.PathLike[str]) -> EmbedReport:
    """`ingest --embed`: embed every passage that has no vector yet, after a background process
    embedding this index (if one is) has ended; the seconds include that wait."""
    start = time.perf_counter()
    with open(lock_path(index_path), "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return embed_index(index_path)._replace(seconds=time.perf_counter() - start)


def main(argv: list[str]) -> int:
    """`python -m rag.semantic.background INDEX`: embed the index's missing passages; exit 1 on a failure
    (a missing index or model, an unwritable cache), which the queries then report themselves."""
    if len(argv) != 1:
        print("usage: python -m rag.semantic.background INDEX", file=sys.stderr)
        return 2
    if not os.path.isfile(argv[0]):  # nothing to embed, and no lock or cache file to leave beside it
        return 1
    os.nice(NICENESS)  # lowering one's own priority is always allowed
    idle = getattr(os, "SCHED_IDLE", None)
    # Linux: run only when the CPU would otherwise be idle (the model's threads inherit it)
    if idle is not None:
        with suppress(OSError):
            os.sched_setscheduler(0, idle, os.sched_param(0))
    try:
        run(argv[0])
    except (RagError, OSError):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
