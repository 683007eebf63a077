"""How an index compares with its repository now: files and folders changed since ingest, a
repository copied or moved with its index, access rules edited. The checks of rag.store.reader.Index
(it inherits them), kept apart from the reading of postings and passages."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any, TypeVar

from rag.sources.folders import ancestors
from rag.sources.names import ACCESS_FILE, access_digest, decode_rules
from rag.sources.rulefiles import read_rule_file
from rag.store.format import Manifest, damage_error, readable_classes
from rag.store.paths import repository_holding
from rag.store.views import DAMAGE_ERRORS

_F = TypeVar("_F", bound=Callable[..., Any])


def _reads(method: _F) -> _F:
    """A reading method of Index (rag.store.reader): damage met inside it is IndexFormatError."""

    @wraps(method)
    def reading(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except DAMAGE_ERRORS as exc:
            raise damage_error(self.path, exc) from None

    return reading  # type: ignore[return-value]


class Freshness:
    """The freshness checks of an open index (rag.store.reader.Index)."""

    path: str
    manifest: Manifest

    def _query(self, sql: str, args: tuple[object, ...] = ()) -> sqlite3.Cursor:
        raise NotImplementedError  # Index's

    @_reads
    def moved_repository(self) -> str | None:
        """Return the folder that now holds this index in its default place (REPO/.rag/index.sqlite)
        and the indexed files, when that is not the root the index was built from: the
        repository was copied or moved with its index. Otherwise None (an index kept elsewhere
        with --index, in a parent folder of its repository, or in a folder that is not a copy of
        the repository, is not moved)."""
        owner = repository_holding(os.path.abspath(self.path))
        if owner is None:
            return None
        real = os.path.realpath(owner)
        root = self.manifest.root
        if real == root or root.startswith(real.rstrip(os.sep) + os.sep):
            return None  # its own place, or written into a parent folder of the repository (--index)
        # a copy holds the indexed files, but for those edited, added or removed since: nine in ten
        # of a sample spread over them. One file first: a folder that only stores the index
        # (--index DIR) fails there, at the cost of one stat per query
        first = self._query("SELECT path FROM files LIMIT 1").fetchone()
        if first is None or not os.path.isfile(os.path.join(owner, first[0])):
            return None
        paths = [path for (path,) in self._query("SELECT path FROM files ORDER BY path")]
        sample = paths[:: max(1, len(paths) // 50)]
        found = sum(os.path.isfile(os.path.join(owner, path)) for path in sample)
        return owner if sample and found >= 0.9 * len(sample) else None

    @_reads
    def changed_files(
        self, paths: Iterable[str] = (), everywhere: bool = True, groups: frozenset[str] | None = None
    ) -> list[str]:
        """Return what changed since ingest, cheaply: the given files by size and mtime, and
        indexed directories by mtime (which moves when a file in it is added, removed,
        renamed, or saved by an editor that writes a new file). `everywhere` checks every
        indexed directory; otherwise only those holding the given files and their ancestors,
        so that the cost depends on the files asked about, not on the size of the repository.
        With `groups`, the caller's, folders whose indexed files it may read none of are left out,
        as an index without those files would not hold them. Empty if the root is gone."""
        root = self.manifest.root
        if not os.path.isdir(root):
            return []
        stat = os.stat
        changed: list[str] = []
        wanted = list(dict.fromkeys(paths))
        if wanted:
            marks = ",".join("?" * len(wanted))
            rows = self._query(
                f"SELECT path, size, mtime_ns FROM files WHERE path IN ({marks})", tuple(wanted)
            )
            for path, size, mtime_ns in rows:
                try:
                    st = stat(f"{root}/{path}")
                except OSError:
                    changed.append(path)
                    continue
                if st.st_size != size or st.st_mtime_ns != mtime_ns:
                    changed.append(path)
        if everywhere:
            dirs = self._query("SELECT path, mtime_ns FROM dirs")
        else:
            near = sorted({d for path in wanted for d in ancestors(path)})
            marks = ",".join("?" * len(near))
            dirs = self._query(
                f"SELECT path, mtime_ns FROM dirs WHERE path IN ({marks}) ORDER BY path", tuple(near)
            )
        moved = []
        for path, mtime_ns in dirs:
            try:
                if stat(f"{root}/{path}").st_mtime_ns != mtime_ns:
                    moved.append(path)
            except OSError:
                moved.append(path)
        if groups is not None and moved:
            moved = self._visible_folders(moved, groups)
        return changed + [f"{path or '.'}/" for path in moved]

    def _readable_classes(self, groups: frozenset[str]) -> frozenset[int] | None:
        """The access classes a caller with `groups` may read; None when it may read them all."""
        groups_of_class = {
            i: frozenset(json.loads(g)) for i, g in self._query("SELECT id, groups FROM classes")
        }
        readable = readable_classes(groups_of_class, groups)
        return None if len(readable) == len(groups_of_class) else readable

    @_reads
    def held_readable(self, folder: str, groups: frozenset[str], may_read: Callable[[str], bool]) -> bool:
        """Whether the last ingest listed, at any depth inside `folder`, a file the caller may read:
        an indexed file of a class it reads, or a file read and skipped that `may_read` allows. A
        folder holding none is absent from an index built without the files it may not read."""
        span = (folder + "/", folder + "0")  # '0' follows '/'
        readable = self._readable_classes(groups)
        if readable is None:
            found = self._query("SELECT 1 FROM files WHERE path >= ? AND path < ? LIMIT 1", span)
        else:
            marks = ",".join("?" * len(readable))
            found = self._query(
                f"SELECT 1 FROM files WHERE path >= ? AND path < ? AND class IN ({marks}) LIMIT 1",
                (*span, *sorted(readable)),
            )
        if found.fetchone() is not None:
            return True
        return any(
            may_read(path)
            for (path,) in self._query("SELECT path FROM skipped WHERE path >= ? AND path < ?", span)
        )

    def _visible_folders(self, folders: list[str], groups: frozenset[str]) -> list[str]:
        """The folders of `folders` that hold a file the caller may read, or no indexed file at all
        (only files skipped after reading): those an index without its unreadable files holds too."""
        readable = self._readable_classes(groups)
        if readable is None:
            return folders
        out = []
        for folder in folders:  # only folders that changed: few, and each a range of the path index
            if folder:
                rows = self._query(
                    "SELECT path, class FROM files WHERE path >= ? AND path < ?", (folder + "/", folder + "0")
                )  # '0' follows '/'
                inside = [c for p, c in rows if "/" not in p[len(folder) + 1 :]]
            else:
                inside = [c for (c,) in self._query("SELECT class FROM files WHERE path NOT LIKE '%/%'")]
            if not inside or any(c in readable for c in inside):
                out.append(folder)
        return out

    def access_changed(self) -> bool:
        """Tell whether the repository's .rag-access differs from the one the index was built
        with (added, removed or edited: who may read what is decided at ingest). False if the
        root is gone."""
        root = self.manifest.root
        try:
            # regular files only, capped: a FIFO would hang every query, /dev/zero exhaust its memory
            text = decode_rules(read_rule_file(os.path.join(root, ACCESS_FILE)))
        except (FileNotFoundError, NotADirectoryError):
            return self.manifest.access is not None and os.path.isdir(root)
        except (OSError, UnicodeDecodeError):
            return True  # unreadable now: loading it says why (retrieve)
        return access_digest(text) != self.manifest.access
