"""The ingest lock: one writer per index at a time."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rag.errors import IngestRunningError
from rag.store.paths import check_index_place

if TYPE_CHECKING:
    from pathlib import Path


@contextmanager
def ingest_lock(path: Path) -> Iterator[None]:
    """Hold the index's ingest lock (an flock on PATH.lock, beside it) while the block runs, or raise
    IngestRunningError at once when another ingest holds it.

    Two writers on one index must never both succeed: a rebuild that replaced the file under an
    update left the update's hot journal beside the new file, and the next reader replayed it into
    the new file (damage until a later rebuild). The lock is never deleted (deleting a lock file
    lets a third process lock a new inode while the second holds the old one); the kernel releases
    it when its holder ends, however it ends."""
    import fcntl

    check_index_place(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise IngestRunningError(
                f"another ingest is running on this index ({path}) — wait for it to finish, "
                "then run this one again"
            ) from None
        yield
    finally:
        os.close(fd)  # releases the lock
