"""Plan an ingest: the listing diffed against the previous index.

What is unchanged (same size and mtime, or same bytes under a new mtime), renamed (the bytes of
a file that disappeared), changed, added or deleted; whether the previous index's chunks may be
kept at all; and whether the store should retime, update in place or build afresh."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rag.chunking import chunker_for, chunkers_in_use
from rag.errors import IndexFormatError, NothingToIndexError
from rag.sources.access import AccessList
from rag.sources.folders import folder_mtimes, folders_of
from rag.sources.reading import DEFAULT_MAX_BYTES, decode_text, read_listed
from rag.sources.walk import SourceFile, walk
from rag.store.folder import prepare_index_dir
from rag.store.reader import Index
from rag.store.writer import SkippedRow
from rag.text.tokenizer import TokenizerSettings

if TYPE_CHECKING:
    from rag.indexing.options import IngestOptions

# Update the index in place when at most this share of its files changed; else rebuild it.
_INCREMENTAL_SHARE = 0.25


@dataclass(slots=True)
class Plan:
    """What an ingest will do, from the listing and the previous index."""

    root: Path
    index_path: Path
    settings: TokenizerSettings
    chunkers: str  # the set of chunkers that chunks the files read (rag.chunking.chunkers_in_use)
    max_bytes: int
    walk_options: dict[str, object]
    access: AccessList
    commit: str | None
    unchanged: list[str]  # paths whose chunks are kept
    todo: list[SourceFile]  # files to read: changed or new
    retimed: list[SourceFile]  # same bytes, new mtime
    moved: list[tuple[str, SourceFile]]  # (old path, the file now holding its bytes)
    deleted: list[str]
    changed: list[str]  # paths of the previous index whose chunks go (changed or renamed)
    skips: list[SkippedRow]  # files passed over after reading, remembered
    skipped: Counter[str]
    known_dirs: dict[str, int]  # every indexed folder's mtime as of the listing
    moved_dirs: list[tuple[str, int]]  # indexed folders whose mtime moved while nothing indexed changed
    skipped_paths: list[tuple[str, str]]  # (path, reason) of what the listing passed over
    blocked_includes: dict[str, str]  # see IngestReport
    reusable: bool  # the previous index's chunks may be kept (same tokenizer, no --full)
    up_to_date: bool  # nothing indexed changed: only mtimes are recorded
    rules_changed: bool  # the access rules, walk options or root differ from the previous index's
    incremental: bool  # few files changed: update in place


def make_plan(
    root: Path, index_path: Path, options: IngestOptions, full: bool, previous: Index | None
) -> Plan:
    """Diff the listing against the previous index (`full`: keep nothing of it)."""
    settings, include, exclude, max_bytes = _resolved(options, previous)
    walk_options: dict[str, object] = {
        "include": list(include),
        "exclude": list(exclude),
        "max_bytes": max_bytes,
    }
    # the indexed folders' mtimes before the walk, stored for them whatever is rebuilt: a file
    # added after the walk then still moves its folder's mtime past what the index holds
    stored_dirs = _stored_dirs(previous)
    dirs_before = folder_mtimes(root.resolve(), stored_dirs)
    # chunks of another tokenizer, or made by another set of chunkers (the languages extra installed
    # or removed since), cannot be kept
    chunkers = chunkers_in_use()
    reusable = (
        previous is not None
        and not full
        and previous.manifest.tokenizer == settings
        and previous.manifest.chunkers == chunkers
    )
    listing = walk(root, include, exclude, max_bytes)
    root = listing.root
    if not listing.files and listing.git:
        _refuse_ignored_folder(root)
    prepare_index_dir(index_path)
    # every indexed folder's mtime as of the listing: those known before the walk from then, the
    # others now; a file added after this moves its folder's mtime past what the index stores
    known_dirs = dict(folder_mtimes(root, folders_of(f.path for f in listing.files), dict(dirs_before)))
    old_files = previous.files() if previous is not None and reusable else {}
    old_skips = previous.skipped_files() if previous is not None and reusable else {}
    unchanged, skips, skipped, todo = _by_change(
        listing.files, old_files, old_skips, Counter(listing.skipped)
    )
    listed = {f.path for f in listing.files}
    deleted = [p for p in old_files if p not in listed]
    todo, retimed, moved = _match_contents(todo, old_files, deleted)
    unchanged.extend(f.path for f in retimed)
    moved_from = {old for old, _ in moved}
    deleted = [p for p in deleted if p not in moved_from]
    access = AccessList.load(root)
    commit = _git_commit(root) if listing.git else None
    changes = len(todo) + len(deleted) + len(moved)
    up_to_date, rules_changed, incremental = _how_to_write(
        previous if reusable else None,
        access,
        walk_options,
        root,
        changes,
        len(todo) + len(deleted),
        len(old_files),
    )
    changed = [f.path for f in todo if f.path in old_files] + [old for old, _ in moved]
    return Plan(
        root,
        index_path,
        settings,
        chunkers,
        max_bytes,
        walk_options,
        access,
        commit,
        unchanged,
        todo,
        retimed,
        moved,
        deleted,
        changed + deleted,
        skips,
        skipped,
        known_dirs,
        [(d, m) for d, m in dirs_before if m != stored_dirs[d]],
        listing.skipped_paths,
        listing.blocked_includes,
        reusable,
        up_to_date,
        rules_changed,
        incremental,
    )


def _how_to_write(
    kept: Index | None,
    access: AccessList,
    walk_options: dict[str, object],
    root: Path,
    changes: int,
    rewritten: int,
    old_files: int,
) -> tuple[bool, bool, bool]:
    """Whether the previous index (`kept`, None when nothing of it can be kept) is up to date,
    whether its access rules, walk options or root differ from this ingest's, and whether it can be
    updated in place: `changes` files to read, delete or move, `rewritten` of its `old_files` files
    to read or delete."""
    same_access = kept is not None and kept.manifest.access == access.digest
    same_options = kept is not None and kept.manifest.walk == walk_options
    # a copied or moved repository brings its index along: the new root must be stored, or a
    # query would check (and --refresh re-read) the old folder
    same_root = kept is not None and kept.manifest.root == str(root)
    rules_changed = not (same_access and same_options and same_root)
    up_to_date = not rules_changed and not changes
    incremental = (
        kept is not None
        and same_access
        and not kept.foreign_byte_order
        and rewritten <= _INCREMENTAL_SHARE * max(old_files, 1)
    )
    return up_to_date, rules_changed, incremental


def _stored_dirs(previous: Index | None) -> dict[str, int]:
    """The previous index's folder mtimes; none when there is none, or it is damaged (ingest() then
    builds afresh)."""
    try:
        return previous.dir_mtimes() if previous is not None else {}
    except (sqlite3.Error, IndexFormatError):
        return {}


def _resolved(
    options: IngestOptions, previous: Index | None
) -> tuple[TokenizerSettings, tuple[str, ...], tuple[str, ...], int]:
    """The tokenizer settings, includes, excludes and size limit of this ingest: those asked for, else
    the previous index's, else the defaults."""
    saved = previous.manifest if previous else None
    settings = options.settings or (saved.tokenizer if saved else TokenizerSettings())
    walked = (saved.walk if saved else None) or {}
    include = tuple(walked.get("include", ())) if options.include is None else options.include
    exclude = tuple(walked.get("exclude", ())) if options.exclude is None else options.exclude
    max_bytes = (
        int(walked.get("max_bytes", DEFAULT_MAX_BYTES)) if options.max_bytes is None else options.max_bytes
    )
    return settings, include, exclude, max_bytes


def _by_change(
    files: list[SourceFile],
    old_files: dict[str, tuple[int, int, str]],
    old_skips: dict[str, tuple[int, int, str]],
    skipped: Counter[str],
) -> tuple[list[str], list[SkippedRow], Counter[str], list[SourceFile]]:
    """The listed files sorted by what the previous index holds of them: unchanged (by size and
    mtime), skipped again for the reason stored (counted into `skipped`), and to read."""
    unchanged: list[str] = []
    skips: list[SkippedRow] = []
    todo: list[SourceFile] = []
    for f in files:
        old = old_files.get(f.path)
        old_skip = old_skips.get(f.path)
        if old is not None and old[0] == f.size and old[1] == f.mtime_ns:
            unchanged.append(f.path)
        elif old_skip is not None and old_skip[0] == f.size and old_skip[1] == f.mtime_ns:
            skips.append((f.path, f.size, f.mtime_ns, old_skip[2]))
            skipped[old_skip[2]] += 1
        else:
            todo.append(f)
    return unchanged, skips, skipped, todo


def _refuse_ignored_folder(root: Path) -> None:
    """Raise NothingToIndexError naming the cause when the enclosing repository's ignore rules
    leave out the whole of `root` (git then lists nothing in it)."""
    try:
        top = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
        ignored = (
            subprocess.run(
                ["git", "-C", top, "check-ignore", "-q", str(root)], capture_output=True, timeout=30
            ).returncode
            == 0
            if top
            else False
        )
    except (OSError, subprocess.SubprocessError):
        return
    if ignored and Path(top).resolve() != root:
        raise NothingToIndexError(
            f"No indexable files in {root}: the repository {top} holds it and its ignore rules (.gitignore) "
            f"exclude it — to index it anyway, make it a repository of its own (`git -C {root} init`) or copy it "
            f"out of {top}"
        )


def _match_contents(
    todo: list[SourceFile],
    old_files: dict[str, tuple[int, int, str]],
    deleted: list[str],
) -> tuple[list[SourceFile], list[SourceFile], list[tuple[str, SourceFile]]]:
    """Split files that look changed by their content hash: (really changed or new, same bytes
    with a new mtime, renamed from a deleted file's path)."""
    sources = {old_files[p][2]: p for p in deleted}  # sha1 -> path of a file that disappeared
    changed: list[SourceFile] = []
    retimed: list[SourceFile] = []
    moved: list[tuple[str, SourceFile]] = []
    for f in todo:
        old = old_files.get(f.path)
        if (old is None and not sources) or (old is not None and old[0] != f.size):
            changed.append(f)
            continue
        digest, head = _sha1(f.abspath, f.identity)
        if old is not None and digest == old[2]:
            retimed.append(f)
        elif (
            old is None
            and digest in sources
            and chunker_for(sources[digest], head) == chunker_for(f.path, head)
        ):
            # the same bytes chunk the same way under both names (a shebang counts without an extension)
            moved.append((sources.pop(digest), f))
        else:
            changed.append(f)
    return changed, retimed, moved


def _sha1(abspath: str, identity: tuple[int, int] | None) -> tuple[str | None, str]:
    """A file's content hash, and its first line as read_text reads it (what chunker_for reads);
    only of the file the walk listed (read_listed)."""
    try:
        data = read_listed(abspath, None, identity)
    except OSError:
        return None, ""
    return hashlib.sha1(data).hexdigest(), decode_text(data[:200]).split("\n", 1)[0]


def _git_commit(root: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None
