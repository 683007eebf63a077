"""Where an index lives: its default place in a repository, an --index value, the index remembered
for a folder (rag.store.state), and the command that rebuilds it.

A query must not pay for importing pathlib (3 ms of a ~45 ms process): what it runs here
(locate_index and the helpers of the reader) works on str paths; building an index imports
pathlib when it needs it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

from rag.errors import InputError, NoIndexError, command
from rag.sources.names import INDEX_DIRNAME, INDEX_FILENAME
from rag.store import state

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


def file_uri(path: str, mode: str) -> str:
    """An SQLite URI for a path: '#', '?' and '%' in a folder name (C#proj) are escaped, as a
    URI needs them to be, or SQLite opens another file."""
    from urllib.parse import quote

    return f"file:{quote(os.path.abspath(path))}?mode={mode}"


# an index to read: one file, a workspace's files (rag.store.workspace), or a workspace served on a
# Ray cluster (CLUSTER_PREFIX + its address: rag.retrieval.cluster)
Where = str | tuple[str, ...]
CLUSTER_PREFIX = "ray://"


class Located(NamedTuple):
    """The index a command uses, and how it was found."""

    path: Where
    # found through the state file: an ingest run from the current folder (not one of its
    # repositories) wrote it, and the last such ingest wins
    remembered: bool = False


def locate_index(
    explicit: str | os.PathLike[str] | None = None, cwd: str | os.PathLike[str] | None = None
) -> str:
    """Find the index to query: `explicit`, else ./.rag in cwd or a parent, else the one ingested from cwd."""
    path = find_index(explicit, cwd).path
    assert isinstance(path, str)  # find_index finds one index
    return path


def find_indexes(
    explicit: tuple[str, ...] = (),
    workspace: str | None = None,
    cwd: str | os.PathLike[str] | None = None,
    cluster: str | None = None,
) -> Located:
    """find_index for the commands that read a workspace: `explicit` (--index, repeatable) and a
    `workspace` (a file listing repositories or index files, or a folder of them) together name
    the indexes; one is an index, more a workspace; none: the index found from `cwd`. `cluster`:
    the address of a Ray cluster serving a workspace (rag.retrieval.cluster), which names it alone."""
    if cluster:
        if explicit or workspace:
            raise InputError(
                "--cluster searches the workspace served there; --index and --workspace name local ones — pick one"
            )
        return Located(CLUSTER_PREFIX + cluster)
    paths = [find_index(p).path for p in explicit]
    if workspace is not None:
        paths.extend(workspace_indexes(workspace))
    unique = tuple(dict.fromkeys(os.path.abspath(p) for p in paths if isinstance(p, str)))
    if not unique:
        return find_index(None, cwd)
    return Located(unique[0] if len(unique) == 1 else unique)


def workspace_indexes(spec: str) -> list[str]:
    """The index files a workspace names (workspace_entries), each of which must exist."""
    out = []
    for entry in workspace_entries(spec):
        if not os.path.isfile(entry.index_path):
            raise NoIndexError(
                f"{entry.where}: no index for {entry.named} (no {entry.index_path}) — run "
                f"`{command('ingest')} --workspace {spec}` first"
            )
        out.append(entry.index_path)
    return out


class Entry(NamedTuple):
    """A repository a workspace names."""

    folder: str | None  # the repository's folder, when named by it
    index_path: str  # its index file
    where: str  # where it is named: the workspace, and its line in a file
    named: str  # as it is named there


def workspace_entries(spec: str, every_folder: bool = False) -> list[Entry]:
    """The repositories a workspace names: (repository folder or None, its index file, where it
    is named). A file lists one repository folder or index file a line (relative to the file's
    folder; blank lines and `#` comments skipped); a folder holds index files (*.sqlite, *.idx) or
    repositories, each with its index in its default place (`every_folder`: each folder in it is a
    repository, indexed or not, as an ingest of the workspace reads it)."""
    spec = os.path.expanduser(spec)
    if os.path.isdir(spec):
        out: list[Entry] = []
        for name in sorted(os.listdir(spec)):
            entry = os.path.join(spec, name)
            if os.path.isfile(entry) and name.endswith((".sqlite", ".idx")):
                out.append(Entry(None, entry, spec, name))
            elif (
                os.path.isdir(entry)
                and not name.startswith(".")
                and (every_folder or os.path.isfile(default_index_file(entry)))
            ):
                out.append(Entry(entry, default_index_file(entry), spec, name))
        if not out:
            raise NoIndexError(
                f"No index in the workspace folder {spec} (no *.sqlite or *.idx file, no REPO/.rag/index.sqlite) "
                f"— run `{command('ingest')} REPO` for each repository in it"
            )
        return out
    try:
        with open(spec, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(
            f"Cannot read the workspace {spec} ({getattr(exc, 'strerror', None) or exc}) — pass a file "
            "listing repository folders or index files, or a folder of indexes"
        ) from None
    base = os.path.dirname(os.path.abspath(spec))
    out = []
    for number, line in enumerate(lines, 1):
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        path = os.path.normpath(os.path.join(base, os.path.expanduser(entry)))
        if os.path.isdir(path) and os.path.basename(path) != INDEX_DIRNAME:
            out.append(Entry(path, default_index_file(path), f"{spec}:{number}", entry))
        else:
            out.append(Entry(None, _index_file(path), f"{spec}:{number}", entry))
    if not out:
        raise InputError(f"The workspace {spec} names no repository — list one folder or index file a line")
    return out


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
    known = state.remembered()
    remembered = known.get(here)
    if remembered is not None:
        if os.path.isfile(remembered):
            return Located(remembered, remembered=True)
        del known[here]  # its index was deleted: the entry would never answer again
        state.remember(known)
    raise NoIndexError(
        f"No index found for {here} — run `{command('ingest')} REPO` first (or pass --index PATH)"
    )
