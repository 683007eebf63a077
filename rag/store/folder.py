"""The index's folder: made before an ingest writes, with a .gitignore in a .rag folder, and rid of
the temporary files of ingests that were killed."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from rag.sources.names import INDEX_DIRNAME
from rag.store.paths import check_index_place

if TYPE_CHECKING:
    from pathlib import Path


def prepare_index_dir(path: Path) -> None:
    """Create the index's folder (and a .rag folder's .gitignore), and remove the temporary files
    of killed ingests."""
    check_index_place(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.parent.name == INDEX_DIRNAME:
        # keep the index out of the repository's `git status`; never through a link (O_NOFOLLOW),
        # never over a file that is there (O_EXCL)
        try:
            fd = os.open(
                path.parent / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644
            )
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as fh:
                fh.write("# written by rag: ignore the index\n*\n")
    _remove_stale_temps(path)


def _remove_stale_temps(path: Path) -> None:
    """Delete temp files left by ingests that were killed (their process is gone)."""
    for stale in path.parent.glob(f"{path.name}.tmp-*"):
        pid = stale.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not pid_alive(int(pid)):
            stale.unlink(missing_ok=True)


def pid_alive(pid: int) -> bool:
    """Return whether a process with this id is running (one of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
