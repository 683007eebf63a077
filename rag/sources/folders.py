"""The folders of a repository: which hold its files, their mtimes (an index compares them to find
new files without a walk), and the folders above a path."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def folder_mtimes(
    root: Path, folders: Iterable[str], known: Mapping[str, int] | None = None
) -> list[tuple[str, int]]:
    """(folder, mtime_ns) of the given folders below root that still exist, in order; `known`
    gives mtimes taken earlier (before the walk), used rather than a stat now."""
    out = []
    for d in sorted(folders):
        if known is not None and d in known:
            out.append((d, known[d]))
            continue
        try:
            out.append((d, os.stat(os.path.join(root, d)).st_mtime_ns))
        except OSError:
            continue
    return out


def folders_of(paths: Iterable[str]) -> set[str]:
    """The folders holding these files ('' for the root)."""
    return {p.rsplit("/", 1)[0] if "/" in p else "" for p in paths}


def ancestors(path: str) -> Iterator[str]:
    """Yield the folders above a relative path, innermost first, ending with the root ('')."""
    while "/" in path:
        path = path.rsplit("/", 1)[0]
        yield path
    yield ""
