"""Which files to read: git-aware listing, built-in excludes, binaries, size limits, secrets."""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import stat
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError
from .ignore import IgnoreRules, is_ignored
from .repo_names import ACCESS_FILE, INDEX_DIRNAME
from .secrets import is_secret_file

DEFAULT_MAX_BYTES = 1_000_000

# Directories that hold tooling state, dependencies or build output, never the project's code.
EXCLUDED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", INDEX_DIRNAME, "node_modules", "bower_components", "__pycache__",
        ".venv", "venv", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
        "site-packages", ".eggs", "build", "dist", ".next", ".nuxt", "coverage", "htmlcov",
        ".cache", ".gradle", "target", "vendor", "third_party",
    }
)
# Lock files and generated artefacts (PKG-INFO: sdist metadata, a copy of the README): long,
# repetitive and never what a question is about.
EXCLUDED_NAMES = (
    "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "uv.lock", "Pipfile.lock",
    "Cargo.lock", "composer.lock", "Gemfile.lock", "go.sum", "*.min.js", "*.min.css", "*.map",
    "*.bundle.js", "*.chunk.js", "*.pyc", "*.pyo", "PKG-INFO",
)
# Data, not code or prose: translation catalogs, vector images, map data, certificates.
DATA_SUFFIXES = frozenset([".po", ".pot", ".svg", ".geojson", ".topojson", ".crt", ".cer", ".csr", ".srl", ".der"])
_EXCLUDED_NAME = re.compile("|".join(fnmatch.translate(p) for p in EXCLUDED_NAMES))
BINARY_SUFFIXES = frozenset(
    [".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".icns", ".webp", ".tif", ".tiff", ".psd", ".pdf", ".zip", ".gz", ".tgz", ".bz2", ".xz", ".zst", ".7z", ".rar", ".tar", ".jar", ".war", ".whl", ".egg", ".so", ".dll", ".dylib", ".a", ".o", ".obj", ".exe", ".bin", ".class", ".pyd", ".mo", ".woff", ".woff2", ".ttf", ".otf", ".eot", ".mp3", ".mp4", ".wav", ".ogg", ".flac", ".avi", ".mov", ".mkv", ".webm", ".sqlite", ".db", ".dbf", ".shp", ".shx", ".mmdb", ".npy", ".npz", ".pkl", ".pickle", ".parquet", ".feather", ".h5", ".onnx", ".pt", ".ckpt"]
)
# Compiled JavaScript and declaration files; skipped when a TypeScript source of the same
# module exists (tsc output shipped beside its source, e.g. dist/, v4/ copies).
_COMPILED_SUFFIXES = (".d.ts", ".d.cts", ".d.mts", ".js", ".cjs", ".mjs")
_TS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")
_SNIFF_BYTES = 8192
# A line this long in a script is minified or bundled output.
MINIFIED_LINE = 1000


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


def walk(
    root: Path,
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Walk:
    """List the files of `root` to index, counting each skipped file by reason."""
    root = check_root(root).resolve()
    skipped: Counter[str] = Counter()
    listed = _git_files(root)
    is_git = listed is not None
    if listed is None:
        listed = _walk_files(root, skipped)
    rag_rules = [IgnoreRules.from_file(root / ".ragignore")]
    candidates: list[str] = []
    for rel in listed:
        reason = _excluded_by_name(rel, include, exclude, rag_rules)
        if reason:
            skipped[reason] += 1
        else:
            candidates.append(rel)
    ts_modules = _ts_module_suffixes(candidates)
    files: list[SourceFile] = []
    top = str(root)
    for rel in candidates:
        if ts_modules and _is_compiled_copy(rel, ts_modules):
            skipped["generated"] += 1
            continue
        if not _utf8(rel):
            # a name that is not UTF-8 cannot be stored, printed or checked for freshness as is
            skipped["non-utf8-name"] += 1
            continue
        full = os.path.join(top, rel)  # os.path, not pathlib: this runs for every file
        try:
            st = os.lstat(full)
        except OSError:  # vanished or unreadable
            skipped["unreadable"] += 1
            continue
        if stat.S_ISLNK(st.st_mode):
            # never followed: a link's target is indexed under its own path if at all, and a
            # link would carry a secret file, an ignored file or a restricted file past the
            # rules that see only the link's name
            skipped["symlink"] += 1
            continue
        if stat.S_ISDIR(st.st_mode) and os.path.exists(os.path.join(full, ".git")):
            # a submodule or a repository inside this one, as git lists them: its own project
            # (often third-party code), indexed on its own if wanted
            skipped["nested-repo"] += 1
            continue
        if not stat.S_ISREG(st.st_mode):
            skipped["not-a-file"] += 1
            continue
        if st.st_size > max_bytes:
            skipped["too-large"] += 1
            continue
        files.append(SourceFile(rel, full, st.st_size, st.st_mtime_ns, (st.st_dev, st.st_ino)))
    files.sort(key=lambda f: f.path)
    return Walk(root=root, files=files, skipped=skipped, git=is_git)


def check_root(root: str | os.PathLike[str]) -> Path:
    """Return `root` as a Path, or raise InputError unless it is a directory."""
    root = Path(root)
    if not root.exists():
        raise InputError(f"{root} does not exist — pass the path of a repository directory")
    if not root.is_dir():
        raise InputError(f"{root} is not a directory — pass the path of a repository directory")
    return root


@dataclass(frozen=True, slots=True)
class SourceText:
    """A file's decoded text, or why it was not read; sha1 is of the raw bytes."""

    text: str | None
    skip_reason: str | None
    sha1: str = ""
    n_bytes: int = 0


def read_text(abspath: str, max_bytes: int = DEFAULT_MAX_BYTES,
              identity: tuple[int, int] | None = None) -> SourceText:
    """Read a file as text, or say why it is skipped.

    Binary files (a NUL byte in the first 8 KiB) and minified scripts are skipped;
    bytes that are not UTF-8 are decoded with U+FFFD replacement; CRLF and lone CR line
    endings become LF. Only the file the walk listed is read (see read_listed).
    """
    try:
        data = read_listed(abspath, max_bytes + 1, identity)
    except _NotListed as exc:
        return SourceText(None, exc.reason)
    except OSError:
        return SourceText(None, "unreadable")
    if len(data) > max_bytes:
        return SourceText(None, "too-large", n_bytes=len(data))
    digest = hashlib.sha1(data).hexdigest()
    if b"\0" in data[:_SNIFF_BYTES]:
        return SourceText(None, "binary", digest, len(data))
    text = decode_text(data)
    if not text.strip():
        return SourceText(None, "empty", digest, len(data))
    if _looks_minified(abspath, text):
        return SourceText(None, "minified", digest, len(data))
    return SourceText(text, None, digest, len(data))


class _NotListed(OSError):
    """What is at the path now is not the regular file the walk listed."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_listed(abspath: str, limit: int | None, identity: tuple[int, int] | None = None) -> bytes:
    """Return up to `limit` bytes (None: all) of the regular file at `abspath`, as the walk listed it.

    Between the walk and the read the file may have been swapped for a symlink (to .env, say) or a
    FIFO: the open never follows a link (O_NOFOLLOW: "symlink") nor waits on a FIFO (O_NONBLOCK),
    and what was opened must be a regular file ("not-a-file") with the walked (st_dev, st_ino)
    ("unreadable": it changed; the next ingest reads what is there then)."""
    try:
        fd = os.open(abspath, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if os.path.islink(abspath):
            raise _NotListed("symlink") from None
        raise exc
    with open(fd, "rb") as fh:  # closes fd
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _NotListed("not-a-file")
        if identity is not None and (st.st_dev, st.st_ino) != identity:
            raise _NotListed("unreadable")
        return fh.read(-1 if limit is None else limit)


def decode_text(data: bytes) -> str:
    """A file's bytes as the chunkers read them: UTF-8 (other bytes become U+FFFD), without a
    byte-order mark, and with universal newlines, as Python and editors count lines, so that
    every chunker and every citation agree on line numbers whatever the line endings."""
    text = data.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _looks_minified(abspath: str, text: str) -> bool:
    if not abspath.endswith((".js", ".cjs", ".mjs", ".css", ".json")):
        return False
    lines = text.count("\n") + 1
    return len(text) / lines > 300 or any(len(line) > MINIFIED_LINE * 10 for line in text.split("\n"))


def _git_files(root: Path) -> list[str] | None:
    """List what git would track below root, or None when root is not in a work tree."""
    try:
        inside = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"],
            capture_output=True, text=True, timeout=30,
        )
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return None
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True, timeout=120, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    seen = dict.fromkeys(os.fsdecode(p) for p in out.split(b"\0") if p)
    return list(seen)


def _walk_files(root: Path, skipped: Counter[str]) -> list[str]:
    """List files below root outside git: honour .gitignore files, prune built-in excludes."""
    out: list[str] = []
    rules: list[tuple[str, IgnoreRules]] = []  # (dir prefix, rules) active while walking
    top = str(root)
    # os.walk joins names onto `top`, so the relative folder is what follows it (top may be "/")
    skip = len(top.rstrip(os.sep)) + 1

    def unreadable(error: OSError) -> None:  # a folder that cannot be listed: say so
        skipped["unreadable-dir"] += 1

    for dirpath, dirnames, filenames in _walk_top_down(top, unreadable):
        rel_dir = dirpath[skip:].replace(os.sep, "/")
        while rules and not _under(rel_dir, rules[-1][0]):
            rules.pop()
        if not rel_dir and os.path.isdir(os.path.join(top, ".git")):
            # a repository git would not list (e.g. owned by another user): its local excludes
            # still apply, below the .gitignore files (git's order of precedence)
            rules.append(("", IgnoreRules.from_file(Path(top) / ".git" / "info" / "exclude")))
        if ".gitignore" in filenames:
            rules.append((rel_dir, IgnoreRules.from_file(Path(dirpath) / ".gitignore", rel_dir, links_absent=True)))
        active = [r for _, r in rules]
        keep = []
        for d in sorted(dirnames):
            rel = f"{rel_dir}/{d}" if rel_dir else d
            if d in (".git", INDEX_DIRNAME):
                pass  # tooling state, not worth a mention in the summary
            elif d in EXCLUDED_DIRS or d.endswith(".egg-info"):
                skipped["excluded-dir"] += 1
            elif os.path.islink(os.path.join(dirpath, d)):
                skipped["symlink"] += 1
            elif active and is_ignored(active, rel, True):
                skipped["gitignored"] += 1
            else:
                keep.append(d)
        dirnames[:] = keep
        for name in filenames:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if active and is_ignored(active, rel, False):
                skipped["gitignored"] += 1
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
        stack.extend(os.path.join(dirpath, d) for d in reversed(dirnames) if not os.path.islink(os.path.join(dirpath, d)))


def _utf8(rel: str) -> bool:
    """Tell whether a listed name is UTF-8 (os.fsdecode turns other bytes into surrogates)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _under(rel: str, prefix: str) -> bool:
    return prefix == "" or rel == prefix or rel.startswith(prefix + "/")


def _excluded_by_name(
    rel: str, include: tuple[str, ...], exclude: tuple[str, ...], rag_rules: list[IgnoreRules]
) -> str | None:
    parts = rel.split("/")
    name = parts.pop()
    if not EXCLUDED_DIRS.isdisjoint(parts) or (".egg-info/" in rel and any(p.endswith(".egg-info") for p in parts)):
        return "excluded-dir"
    if is_secret_file(rel):
        return "secret"
    if name == ACCESS_FILE:
        return "access-list"  # says who may read what; not content to answer from
    if include and not any(_glob(rel, g) for g in include):
        return "not-included"
    if any(_glob(rel, g) for g in exclude):
        return "excluded"
    if any(r.rules for r in rag_rules) and is_ignored(rag_rules, rel, False):
        return "ragignore"
    if _EXCLUDED_NAME.match(name):
        return "generated"
    suffix = os.path.splitext(name)[1].lower()
    if suffix in BINARY_SUFFIXES:
        return "binary"
    if suffix in DATA_SUFFIXES:
        return "data"
    return None


def _glob(rel: str, pattern: str) -> bool:
    """Match a --include/--exclude glob against the path, or its file name if it has no '/'."""
    if "/" not in pattern:
        return fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], pattern)
    return fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(rel, pattern.rstrip("/") + "/*")


def _module_of(rel: str, suffixes: tuple[str, ...]) -> str | None:
    for suffix in suffixes:
        if rel.endswith(suffix):
            return rel[: -len(suffix)]
    return None


def _ts_module_suffixes(paths: list[str]) -> set[str]:
    """Every trailing path of every TypeScript source module (src/v4/a -> src/v4/a, v4/a, a)."""
    out: set[str] = set()
    for rel in paths:
        if rel.endswith((".d.ts", ".d.cts", ".d.mts")):
            continue
        module = _module_of(rel, _TS_SUFFIXES)
        if module is None:
            continue
        parts = module.split("/")
        for i in range(len(parts)):
            out.add("/".join(parts[i:]))
    return out


def _is_compiled_copy(rel: str, ts_modules: set[str]) -> bool:
    """A script whose module path, or a tail of it of two or more folders, is a TypeScript module's."""
    module = _module_of(rel, _COMPILED_SUFFIXES)
    if module is None or rel.endswith(_TS_SUFFIXES) and not rel.endswith((".d.ts", ".d.cts", ".d.mts")):
        return False
    parts = module.split("/")
    return module in ts_modules or any("/".join(parts[i:]) in ts_modules for i in range(1, len(parts) - 1))
