"""Where an index lives: its default place in a repository, an --index value, the index remembered
for a folder, and the housekeeping of its folder (the .gitignore, temporary files left by killed
ingests, the mtimes of indexed folders).

A query must not pay for importing pathlib (3 ms of a ~45 ms process): what it runs here
(locate_index and the helpers of the reader) works on str paths; building an index imports
pathlib when it needs it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, NamedTuple

from rag.errors import IngestRunningError, InputError, NoIndexError, command
from rag.sources.names import INDEX_DIRNAME, INDEX_FILENAME

if TYPE_CHECKING:
    from pathlib import Path


def default_index_path(root: str | os.PathLike[str]) -> Path:
    """Return where the index of `root` lives by default: ROOT/.rag/index.sqlite."""
    from pathlib import Path

    return Path(default_index_file(os.fspath(root)))


def default_index_file(root: str) -> str:
    """default_index_path as a str."""
    return os.path.join(root, INDEX_DIRNAME, INDEX_FILENAME)


def repository_holding(index_path: str) -> str | None:
    """The folder whose default place (FOLDER/.rag/index.sqlite) `index_path` is, or None."""
    folder, name = os.path.split(index_path)
    if name != INDEX_FILENAME or os.path.basename(folder) != INDEX_DIRNAME:
        return None
    return os.path.dirname(folder)


def ingest_command(root: object, index_path: str) -> str:
    """The command that rebuilds the index at `index_path`, quoted for a shell: for the folder
    that holds it in its default place (a repository copied or moved with its index), else for
    `root` with --index."""
    import shlex  # only on this error's path

    holder = repository_holding(os.path.realpath(index_path))
    if holder is not None:
        return f"{command('ingest')} {shlex.quote(holder)}"
    return f"{command('ingest')} {shlex.quote(root) if isinstance(root, str) else 'REPO'} --index {shlex.quote(index_path)}"


def index_file(path: str | os.PathLike[str]) -> Path:
    """Return the index file an --index value names: a file as given; a folder means the index
    inside it (DIR/.rag/index.sqlite, or DIR/index.sqlite for a .rag folder), for every command."""
    from pathlib import Path

    return Path(_index_file(os.fspath(path)))


def _index_file(path: str) -> str:
    path = os.path.expanduser(path)  # `--index=~/idx`: no shell expands a tilde after '='
    if os.path.isdir(path):
        if os.path.basename(os.path.normpath(path)) == INDEX_DIRNAME:
            return os.path.join(path, INDEX_FILENAME)
        return default_index_file(path)
    return path


def check_index_place(path: Path) -> None:
    """Raise InputError when the index would be written through a symlink of a .rag folder: a
    repository may commit `.rag` (or `.rag/index.sqlite`, `.rag/.gitignore`) as a link to a place
    outside it, and an ingest would write there."""
    if path.parent.name != INDEX_DIRNAME:
        return  # a folder named with --index is the caller's choice, links and all
    for part in (path.parent, path, path.parent / ".gitignore", path.with_name(f"{path.name}.lock")):
        if part.is_symlink():
            raise InputError(
                f"{part} is a symbolic link, and rag writes its index only into a real folder — "
                "remove the link, or pass --index PATH to keep the index elsewhere"
            )


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


def _remove_stale_temps(path: Path) -> None:
    """Delete temp files left by ingests that were killed (their process is gone)."""
    for stale in path.parent.glob(f"{path.name}.tmp-*"):
        pid = stale.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _pid_alive(int(pid)):
            stale.unlink(missing_ok=True)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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


def file_uri(path: str, mode: str) -> str:
    """An SQLite URI for a path: '#', '?' and '%' in a folder name (C#proj) are escaped, as a
    URI needs them to be, or SQLite opens another file."""
    from urllib.parse import quote

    return f"file:{quote(os.path.abspath(path))}?mode={mode}"


def _state_file() -> str:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "rag", "indexes.json")


def _remembered() -> dict[str, str]:
    """The state file's folder -> index entries ({} when there is none, or it cannot be read)."""
    try:
        with open(_state_file(), encoding="utf-8") as fh:
            known = json.load(fh)
    except (OSError, ValueError):
        return {}
    if not isinstance(known, dict):
        return {}
    return {k: v for k, v in known.items() if isinstance(k, str) and isinstance(v, str)}


def _remember(known: dict[str, str]) -> None:
    """Replace the state file's entries with `known`, atomically; a failure is ignored (remembering is a
    convenience: --index and the upward search still work)."""
    state = _state_file()
    try:
        os.makedirs(os.path.dirname(state), exist_ok=True)
        tmp = f"{state}.tmp-{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(known, indent=1))
        os.replace(tmp, state)
    except OSError:
        pass


def remember_index(cwd: str | os.PathLike[str], index_path: str | os.PathLike[str]) -> None:
    """Record that an ingest run from `cwd` wrote `index_path`, so a query from there finds it; forget
    the entries whose folder or index is gone."""
    known = {
        folder: index
        for folder, index in _remembered().items()
        if os.path.isdir(folder) and os.path.isfile(index)
    }
    known[os.path.realpath(cwd)] = os.path.realpath(index_path)
    _remember(known)


class Located(NamedTuple):
    """The index a command uses, and how it was found."""

    path: str
    # found through the state file: an ingest run from the current folder (not one of its
    # repositories) wrote it, and the last such ingest wins
    remembered: bool = False


def locate_index(
    explicit: str | os.PathLike[str] | None = None, cwd: str | os.PathLike[str] | None = None
) -> str:
    """Find the index to query: `explicit`, else ./.rag in cwd or a parent, else the one ingested from cwd."""
    return find_index(explicit, cwd).path


def find_index(
    explicit: str | os.PathLike[str] | None = None, cwd: str | os.PathLike[str] | None = None
) -> Located:
    """locate_index, saying whether the index was the one remembered for cwd (an entry whose index
    is gone is forgotten)."""
    if explicit is not None:
        path = _index_file(os.fspath(explicit))
        if not os.path.isfile(path):
            import shlex

            given = os.fspath(explicit)
            if os.path.isdir(os.path.expanduser(given)):  # a folder: its index is FOLDER/.rag/index.sqlite
                repo = os.path.dirname(os.path.dirname(path))
                raise NoIndexError(
                    f"No index in {given} (no {path}) — run `{command('ingest')} {shlex.quote(repo)}` "
                    "to index that folder, or pass --index the index file itself"
                )
            raise NoIndexError(
                f"No index at {given} — run `{command('ingest')} REPO --index {shlex.quote(given)}` first"
            )
        return Located(path)
    here = folder = os.path.realpath(os.fspath(cwd) if cwd is not None else os.getcwd())
    while True:
        candidate = default_index_file(folder)
        if os.path.isfile(candidate):
            return Located(candidate)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    known = _remembered()
    remembered = known.get(here)
    if remembered is not None:
        if os.path.isfile(remembered):
            return Located(remembered, remembered=True)
        del known[here]  # its index was deleted: the entry would never answer again
        _remember(known)
    raise NoIndexError(
        f"No index found for {here} — run `{command('ingest')} REPO` first (or pass --index PATH)"
    )
