"""Which of the folders whose mtime moved since ingest changed what would be indexed.

A folder's mtime moves whenever an entry is created or removed in it, an ignored one too: a
test run creates `__pycache__/` and `.pytest_cache/`. So a folder that looks changed is listed
(one `os.scandir` of that folder), and counts only if the names in it that an ingest would
consider differ from those the last ingest listed there. For a caller with access groups, only
the names it may read are compared, as an index built without the others would compare them: a
folder new since then counts when a walk below it (of 2,000 entries at most) finds a file the
caller may read. Loaded only when some folder's mtime moved.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from rag.sources.access import AccessList
from rag.sources.exclusions import EXCLUDED_DIRS, excluded_by_name, include_reaches
from rag.sources.folders import ancestors
from rag.sources.ignore import IgnoreRules, is_ignored
from rag.sources.names import INDEX_DIRNAME
from rag.sources.reading import DEFAULT_MAX_BYTES
from rag.store.reader import Index


def indexable_changes(index: Index, changed: list[str], groups: frozenset[str] | None = None) -> list[str]:
    """Keep the changed files, and the changed folders ('dir/', './' for the root) whose
    listing of indexable entries differs from the last ingest's; with `groups`, the caller's,
    only the entries it may read are compared (a restricted file renamed, added or removed in
    a folder it reads changes nothing it could see)."""
    root = index.manifest.root
    readable = _readable(root, groups) if groups is not None and index.manifest.access else None
    walked = index.manifest.walk or {}
    include = tuple(walked.get("include", ()))
    exclude = tuple(walked.get("exclude", ()))
    max_bytes = int(walked.get("max_bytes", DEFAULT_MAX_BYTES))
    rag_rules = [IgnoreRules.from_file(Path(root, ".ragignore"))]
    out = []
    for item in changed:
        if not item.endswith("/"):
            out.append(item)
            continue
        folder = "" if item == "./" else item[:-1]
        then = index.folder_entries(folder)
        now = _listed(root, folder, include, exclude, max_bytes, rag_rules, then, readable)
        if now is not None and readable is not None and groups is not None:
            then, now = _seen_by(index, folder, then, now, readable, groups)
        if now is None or now.keys() != then.keys():
            out.append(item)
    return out


def _readable(root: str, groups: frozenset[str]) -> Callable[[str], bool]:
    """A test of whether the caller may read a path (a folder ends in '/'), by the repository's
    .rag-access: the one the index was built with, as a query and status require."""
    access = AccessList.load(root)
    return lambda path: access.may_read(path, groups)


def _seen_by(
    index: Index,
    folder: str,
    then: dict[str, bool],
    now: dict[str, bool],
    readable: Callable[[str], bool],
    groups: frozenset[str],
) -> tuple[dict[str, bool], dict[str, bool]]:
    """The listings of `folder` then and now as an index without the files the caller may not read
    would hold them. A folder listed then holds what it held then (a change deeper is noted at
    its own folder); a folder new since was listed only if it holds a file the caller may read
    (_listed)."""
    seen = _visible(then, folder, readable, lambda sub: index.held_readable(sub, groups, readable))

    def holds_now(sub: str) -> bool:
        name = sub.rpartition("/")[2]
        return name in seen or name not in then

    return seen, _visible(now, folder, readable, holds_now)


def _visible(
    names: dict[str, bool], folder: str, readable: Callable[[str], bool], holds: Callable[[str], bool]
) -> dict[str, bool]:
    """The entries of `folder` (name -> whether a folder) that an index without the files the caller
    may not read would list: the files it may read, and the folders that `holds` says hold one."""
    prefix = f"{folder}/" if folder else ""
    return {
        name: is_dir
        for name, is_dir in names.items()
        if (holds(prefix + name) if is_dir else readable(prefix + name))
    }


def _gitignore_rules(root: str, folder: str) -> list[IgnoreRules]:
    """The .gitignore rules that apply inside `folder`, root first (and .git/info/exclude)."""
    rules = [IgnoreRules.from_file(Path(root, ".git", "info", "exclude"))]
    for d in reversed([folder, *ancestors(folder)] if folder else [""]):
        rules.append(IgnoreRules.from_file(Path(root, d, ".gitignore"), d))
    return rules


def _listed(
    root: str,
    folder: str,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    max_bytes: int,
    rag_rules: list[IgnoreRules],
    then: dict[str, bool],
    readable: Callable[[str], bool] | None = None,
) -> dict[str, bool] | None:
    """The names in `folder` an ingest would list (None if it cannot be read), each with whether
    it is a folder: what is ignored, excluded or skipped by name, links and nested repositories
    left out. A new folder counts when it holds anything that is not left out itself; with
    `readable`, a caller's, when it holds a file the caller may read, at any depth."""
    try:
        entries = list(os.scandir(os.path.join(root, folder)))
    except OSError:
        return None
    rules = _gitignore_rules(root, folder)
    names: dict[str, bool] = {}
    for entry in entries:
        name = entry.name
        rel = f"{folder}/{name}" if folder else name
        if name in (".git", INDEX_DIRNAME) or entry.is_symlink():
            continue
        try:
            if entry.is_dir():
                if (
                    (name in EXCLUDED_DIRS and not include_reaches(rel, include))
                    or name.endswith(".egg-info")
                    or is_ignored(rules, rel, True)
                    or os.path.exists(os.path.join(entry.path, ".git"))
                ):
                    continue
                if name in then or _holds_something(
                    entry.path, rel, include, exclude, rag_rules, rules, readable
                ):
                    names[name] = True
                continue
            if (
                excluded_by_name(rel, include, exclude, rag_rules)
                or is_ignored(rules, rel, False)
                or entry.stat().st_size > max_bytes
            ):
                continue
        except OSError:
            continue
        names[name] = False
    return names


# entries a new folder's walk reads for a caller with access groups before it says the folder holds
# nothing the caller may read: a bound on every query's cost until the next ingest (a miss notes
# less, never more, than an index without the restricted files would)
_WALK_ENTRIES = 2000


def _holds_something(
    path: str,
    rel: str,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    rag_rules: list[IgnoreRules],
    rules: list[IgnoreRules],
    readable: Callable[[str], bool] | None = None,
    budget: list[int] | None = None,
) -> bool:
    """Whether a folder new since ingest holds a file or folder that is not left out by name; with
    `readable`, a file that is not left out and that the caller may read, at any depth (within
    _WALK_ENTRIES entries read)."""
    budget = [_WALK_ENTRIES] if budget is None else budget
    try:
        entries = list(os.scandir(path))
    except OSError:
        return False
    inner = [*rules, IgnoreRules.from_file(Path(path, ".gitignore"), rel)]
    for entry in entries:
        budget[0] -= 1
        if budget[0] < 0:
            return False
        sub = f"{rel}/{entry.name}"
        if entry.name in (".git", INDEX_DIRNAME) or entry.is_symlink():
            continue
        if entry.is_dir(follow_symlinks=False):
            if entry.name in EXCLUDED_DIRS or is_ignored(inner, sub, True):
                continue
            if readable is None or _holds_something(
                entry.path, sub, include, exclude, rag_rules, inner, readable, budget
            ):
                return True
        elif (
            not excluded_by_name(sub, include, exclude, rag_rules)
            and not is_ignored(inner, sub, False)
            and (readable is None or readable(sub))
        ):
            return True
    return False
