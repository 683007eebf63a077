"""After an ingest: the semantic stage's passage vectors computed by a background process, so that
queries soon find every candidate's vector cached (rag.vectors) instead of embedding their 40 first
(about 1 s a query on 2 cores).

`start` launches `python -m rag.background INDEX` detached from the terminal (its own session, no
output) at a lower priority; that process (`run`) embeds every passage that has no vector yet with
rag.semantic_rerank.embed_index and ends. One such process embeds an index at a time: a second one
(a later ingest of the same index) waits for the first's lock, then finds only what changed since.
Stopping it loses nothing: each batch of vectors is stored in one transaction, and a query embeds
whatever is still missing, as it does without this."""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path

from .errors import RagError
from .semantic_rerank import EmbedReport, embed_index
from .vectors import cache_path

LOCK_SUFFIX = ".embedding"  # beside the vector cache: held by the process embedding that index
NICENESS = 10  # the process's priority below the user's: a query or an editor comes first


def lock_path(index_path: str | os.PathLike[str]) -> str:
    """Return the file whose lock the process embedding this index holds."""
    return cache_path(index_path) + LOCK_SUFFIX


def start(index_path: str | os.PathLike[str]) -> int:
    """Start embedding the index's passages in a detached background process; return its pid."""
    package_root = str(
        Path(__file__).resolve().parent.parent
    )  # rag importable wherever ingest.py was run from
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": package_root + (os.pathsep + path if path else "")}
    # posix_spawn rather than subprocess.Popen: nothing in this process waits for it, or warns
    # that it still runs when this process ends
    return os.posix_spawn(
        sys.executable,
        [sys.executable, "-m", "rag.background", os.path.abspath(index_path)],
        env,
        file_actions=[(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)],
        setsid=True,  # its own session: a closed terminal does not end it, nor does its Ctrl-C
    )


def run(index_path: str | os.PathLike[str]) -> EmbedReport:
    """Embed the passages that have no vector yet, once no other process is embedding this index."""
    with open(lock_path(index_path), "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the process ends
        return embed_index(index_path)


def main(argv: list[str]) -> int:
    """`python -m rag.background INDEX`: embed the index's missing passages; exit 1 on a failure
    (a missing index or model, an unwritable cache), which the queries then report themselves."""
    if len(argv) != 1:
        print("usage: python -m rag.background INDEX", file=sys.stderr)
        return 2
    os.nice(NICENESS)  # lowering one's own priority is always allowed
    try:
        run(argv[0])
    except (RagError, OSError):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
