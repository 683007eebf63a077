"""Which files to read: the git-aware listing of a repository (or a walk honouring .gitignore
outside git), the built-in rules applied to it (rag.sources.exclusions), and the size limit."""

from __future__ import annotations

import os
import stat
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rag.errors import InputError
from rag.sources.exclusions import (
    EXCLUDED_DIRS,
    excluded_by_name,
    glob_matches,
    include_reaches,
    is_compiled_copy,
    ts_module_suffixes,
)
from rag.sources.ignore import IgnoreRules, is_ignored
from rag.sources.names import INDEX_DIRNAME
from rag.sources.reading import DEFAULT_MAX_BYTES


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A file chosen for indexing."""

    path: str  # relative to the root, '/'-separated
    abspath: str
    size: int
    mtime_ns: int
    identity: tuple[int, int] | None = None  # (st_dev, st_ino) as listed: read_text reads only that file


@dataclass(slots=True)
class Walk:
    """The result of listing a repository: files to read and what was skipped, by reason."""

    root: Path
    files: list[SourceFile]
    skipped: Counter[str] = field(default_factory=Counter)
    git: bool = False
    # (path, reason) of each file or folder passed over by the listing (a folder ends in '/')
    skipped_paths: list[tuple[str, str]] = field(default_factory=list)
    # --include patterns that matched no file but some in a built-in excluded folder -> one of those
    blocked_includes: dict[str, str] = field(default_factory=dict)


def walk(
    root: Path,
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Walk:
    """List the files of `root` to index, counting each skipped file by reason."""
    root = check_root(root).resolve()
    skipped: Counter[str] = Counter()
    paths: list[tuple[str, str]] = []

    def skip(rel: str, reason: str) -> None:
        skipped[reason] += 1
        paths.append((rel, reason))

    excluded_dirs: list[str] = []  # built-in excluded folders pruned by a walk outside git
    listed = _git_files(root)
    is_git = listed is not None
    if listed is None:
        listed = _walk_files(root, skip, include, excluded_dirs)
    rag_rules = [IgnoreRules.from_file(root / ".ragignore")]
    candidates: list[str] = []
    for rel in listed:
        reason = excluded_by_name(rel, include, exclude, rag_rules)
        if reason:
            skip(rel, reason)
        else:
            candidates.append(rel)
    ts_modules = ts_module_suffixes(candidates)
    files: list[SourceFile] = []
    top = str(root)
    for rel in candidates:
        if ts_modules and is_compiled_copy(rel, ts_modules):
            skip(rel, "generated")
            continue
        if not _utf8(rel):
            # a name that is not UTF-8 cannot be stored, printed or checked for freshness as is
            skipped["non-utf8-name"] += 1
            continue
        full = os.path.join(top, rel)  # os.path, not pathlib: this runs for every file
        try:
            st = os.lstat(full)
        except OSError:  # vanished or unreadable
            skip(rel, "unreadable")
            continue
        if stat.S_ISLNK(st.st_mode):
            # never followed: a link's target is indexed under its own path if at all, and a
            # link would carry a secret file, an ignored file or a restricted file past the
            # rules that see only the link's name
            skip(rel, "symlink")
            continue
        if stat.S_ISDIR(st.st_mode) and os.path.exists(os.path.join(full, ".git")):
            # a submodule or a repository inside this one, as git lists them: its own project
            # (often third-party code), indexed on its own if wanted
            skip(rel + "/", "nested-repo")
            continue
        if not stat.S_ISREG(st.st_mode):
            skip(rel, "not-a-file")
            continue
        if st.st_size > max_bytes:
            skip(rel, "too-large")
            continue
        files.append(SourceFile(rel, full, st.st_size, st.st_mtime_ns, (st.st_dev, st.st_ino)))
    files.sort(key=lambda f: f.path)
    blocked = _blocked_includes(root, include, files, paths, excluded_dirs) if include else {}
    return Walk(
        root=root, files=files, skipped=skipped, git=is_git, skipped_paths=paths, blocked_includes=blocked
    )


# Files looked at, at most, in built-in excluded folders to tell why an --include matched nothing
_BLOCKED_SCAN = 20_000


def _blocked_includes(
    root: Path,
    include: tuple[str, ...],
    files: list[SourceFile],
    paths: list[tuple[str, str]],
    excluded_dirs: list[str],
) -> dict[str, str]:
    """--include patterns that match no listed file, each with a file it matches in a built-in
    excluded folder (which only a pattern naming the folder brings back)."""
    unmatched = [g for g in include if not any(glob_matches(f.path, g) for f in files)]
    out: dict[str, str] = {}
    if not unmatched:
        return out
    blocked = [rel for rel, reason in paths if reason == "excluded-dir"]
    for folder in excluded_dirs:  # outside git the walk pruned them: look inside, within a bound
        for dirpath, _, names in os.walk(root / folder):
            rel_dir = Path(dirpath).relative_to(root).as_posix()
            blocked.extend(f"{rel_dir}/{n}" for n in names)
            if len(blocked) > _BLOCKED_SCAN:
                break
    for g in unmatched:
        found = next((rel for rel in blocked if glob_matches(rel, g)), None)
        if found is not None:
            out[g] = found
    return out


def check_root(root: str | os.PathLike[str]) -> Path:
    """Return `root` as a Path, or raise InputError unless it is a directory."""
    root = Path(root)
    if not root.exists():
        raise InputError(f"{root} does not exist — pass the path of a repository directory")
    if not root.is_dir():
        raise InputError(f"{root} is not a directory — pass the path of a repository directory")
    return root


def _git_files(root: Path) -> list[str] | None:
    """List what git would track below root, or None when root is not in a work tree."""
    try:
        inside = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return None
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            timeout=120,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    seen = dict.fromkeys(os.fsdecode(p) for p in out.split(b"\0") if p)
    return list(seen)


def _walk_files(
    root: Path,
    skip: Callable[[str, str], None],
    include: tuple[str, ...] = (),
    excluded_dirs: list[str] | None = None,
) -> list[str]:
    """List files below root outside git: honour .gitignore files, prune built-in excludes
    (unless an --include names a folder below one); `excluded_dirs` collects those pruned."""
    out: list[str] = []
    rules: list[tuple[str, IgnoreRules]] = []  # (dir prefix, rules) active while walking
    top = str(root)
    # os.walk joins names onto `top`, so the relative folder is what follows it (top may be "/")
    skip_chars = len(top.rstrip(os.sep)) + 1

    def unreadable(error: OSError) -> None:  # a folder that cannot be listed: say so
        where = os.fsdecode(error.filename) if error.filename else top
        skip(where[skip_chars:].replace(os.sep, "/") + "/", "unreadable-dir")

    for dirpath, dirnames, filenames in _walk_top_down(top, unreadable):
        rel_dir = dirpath[skip_chars:].replace(os.sep, "/")
        while rules and not _under(rel_dir, rules[-1][0]):
            rules.pop()
        if not rel_dir and os.path.isdir(os.path.join(top, ".git")):
            # a repository git would not list (e.g. owned by another user): its local excludes
            # still apply, below the .gitignore files (git's order of precedence)
            rules.append(("", IgnoreRules.from_file(Path(top) / ".git" / "info" / "exclude")))
        if ".gitignore" in filenames:
            rules.append(
                (rel_dir, IgnoreRules.from_file(Path(dirpath) / ".gitignore", rel_dir, links_absent=True))
            )
        active = [r for _, r in rules]
        keep = []
        for d in sorted(dirnames):
            rel = f"{rel_dir}/{d}" if rel_dir else d
            if d in (".git", INDEX_DIRNAME):
                pass  # tooling state, not worth a mention in the summary
            elif (d in EXCLUDED_DIRS or d.endswith(".egg-info")) and not include_reaches(rel, include):
                skip(rel + "/", "excluded-dir")
                if excluded_dirs is not None:
                    excluded_dirs.append(rel)
            elif os.path.islink(os.path.join(dirpath, d)):
                skip(rel + "/", "symlink")
            elif active and is_ignored(active, rel, True):
                skip(rel + "/", "gitignored")
            else:
                keep.append(d)
        dirnames[:] = keep
        for name in filenames:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if active and is_ignored(active, rel, False):
                skip(rel, "gitignored")
            else:
                out.append(rel)
    return out


def _walk_top_down(
    top: str, onerror: Callable[[OSError], None]
) -> Iterator[tuple[str, list[str], list[str]]]:
    """os.walk(top, onerror=onerror) top-down, without recursion: os.walk of Python 3.11 recurses
    once per level, and folders nested about 1,000 deep (outside git) raised RecursionError. The
    same order (depth first, each folder before its subfolders, in the order of `dirnames` as the
    caller leaves it) and the same pruning: a name the caller removes from `dirnames` is not entered.
    Links to folders are listed in `dirnames`, and the caller prunes them (never followed)."""
    stack = [top]
    while stack:
        dirpath = stack.pop()
        try:
            with os.scandir(dirpath) as it:
                entries = list(it)
        except OSError as exc:
            onerror(exc)
            continue
        dirnames: list[str] = []
        filenames: list[str] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirnames if is_dir else filenames).append(entry.name)
        yield dirpath, dirnames, filenames
        stack.extend(
            os.path.join(dirpath, d)
            for d in reversed(dirnames)
            if not os.path.islink(os.path.join(dirpath, d))
        )


def _utf8(rel: str) -> bool:
    """Tell whether a listed name is UTF-8 (os.fsdecode turns other bytes into surrogates)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _under(rel: str, prefix: str) -> bool:
    return prefix == "" or rel == prefix or rel.startswith(prefix + "/")
