"""Errors a user can cause; each message is one line that names the fix."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

# How the user runs rag, so that a hint names a command that works for them: "rag" (the installed
# command, and what a library caller is told), "python -m rag", or the path of one of the
# checkout's scripts as typed ("query.py", "../rag/ingest.py"). rag.cli sets it once per process.
_program = ["rag"]
SCRIPTS = {"ingest": "ingest.py", "query": "query.py"}  # the commands the checkout has a script for


def run_as(program: str) -> None:
    """Name the program the user typed: "rag", "python -m rag", or the path of a script (ingest.py)."""
    _program[0] = program


def command(name: str) -> str:
    """Return the command line that runs rag's command `name` as the user runs rag: `rag ingest`,
    `python -m rag ingest`, or `python ingest.py` (beside the script they ran)."""
    program = _program[0]
    if program.endswith(".py"):
        if name in SCRIPTS:
            import shlex  # a hint's path, quoted for a shell

            return f"python {shlex.quote(os.path.join(os.path.dirname(program), SCRIPTS[name]))}"
        program = "rag"
    return f"{program} {name}"


class RagError(Exception):
    """An error the user can fix; the CLI prints its message and exits 1."""


class NoIndexError(RagError):
    """No index exists where one was looked for."""


class IndexFormatError(RagError):
    """The index is corrupt or was written by another format version."""


class NothingToIndexError(RagError):
    """The repository has no indexable files."""


class IndexWriteError(RagError):
    """The index could not be written: a full disk, a read-only folder."""


class IngestRunningError(IndexWriteError):
    """Another ingest holds the index's lock: two writers must never both write one index."""


class InputError(RagError):
    """A file or value given by the user is unusable."""


class BackendError(RagError):
    """The model backend failed: missing key, auth, rate limit, network, timeout."""


class ModelError(RagError):
    """The semantic model cannot be loaded: missing or damaged package."""


@contextmanager
def terminations_as_exit() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP (a closed terminal) into SystemExit while the block runs, so that
    its cleanup runs: by default they end this process alone, and leave what it started (ingest
    workers, `claude`) running. A signal ignored on purpose (nohup) stays ignored."""
    import signal

    def leave(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            if signal.getsignal(sig) is signal.SIG_IGN:
                continue
            previous[sig] = signal.signal(sig, leave)
        except ValueError:  # not the main thread: signals stay as they are
            break
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class ClusterError(RagError):
    """A Ray cluster that serves a workspace cannot answer: unreachable, or an actor lost."""
