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

from rag.errors import InputError
from rag.secrets import is_secret_file
from rag.sources.ignore import IgnoreRules, is_ignored
from rag.sources.names import ACCESS_FILE, INDEX_DIRNAME

DEFAULT_MAX_BYTES = 1_000_000

# Directories that hold tooling state, dependencies or build output, never the project's code.
EXCLUDED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        INDEX_DIRNAME,
        "node_modules",
        "bower_components",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "site-packages",
        ".eggs",
        "build",
        "dist",
        ".next",
        ".nuxt",
        "coverage",
        "htmlcov",
        ".cache",
        ".gradle",
        "target",
        "vendor",
        "third_party",
    }
)
# Lock files and generated artefacts (PKG-INFO: sdist metadata, a copy of the README): long,
# repetitive and never what a question is about.
EXCLUDED_NAMES = (
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "poetry.lock",
    "uv.lock",
    "Pipfile.lock",
    "Cargo.lock",
    "composer.lock",
    "Gemfile.lock",
    "go.sum",
    "*.min.js",
    "*.min.css",
    "*.map",
    "*.bundle.js",
    "*.chunk.js",
    "*.pyc",
    "*.pyo",
    "PKG-INFO",
)
# Data, not code or prose: translation catalogs, vector images, map data, certificates.
DATA_SUFFIXES = frozenset(
    [".po", ".pot", ".svg", ".geojson", ".topojson", ".crt", ".cer", ".csr", ".srl", ".der"]
)
_EXCLUDED_NAME = re.compile("|".join(fnmatch.translate(p) for p in EXCLUDED_NAMES))
BINARY_SUFFIXES = frozenset(
    [
        ".png",
        ".jpg",
        ".jpeg",
        ".gif",
        ".bmp",
        ".ico",
        ".icns",
        ".webp",
        ".tif",
        ".tiff",
        ".psd",
        ".pdf",
        ".zip",
        ".gz",
        ".tgz",
        ".bz2",
        ".xz",
        ".zst",
        ".7z",
        ".rar",
        ".tar",
        ".jar",
        ".war",
        ".whl",
        ".egg",
        ".so",
        ".dll",
        ".dylib",
        ".a",
        ".o",
        ".obj",
        ".exe",
        ".bin",
        ".class",
        ".pyd",
        ".mo",
        ".woff",
        ".woff2",
        ".ttf",
        ".otf",
        ".eot",
        ".mp3",
        ".mp4",
        ".wav",
        ".ogg",
        ".flac",
        ".avi",
        ".mov",
        ".mkv",
        ".webm",
        ".sqlite",
        ".db",
        ".dbf",
        ".shp",
        ".shx",
        ".mmdb",
        ".npy",
        ".npz",
        ".pkl",
        ".pickle",
        ".parquet",
        ".feather",
        ".h5",
        ".onnx",
        ".pt",
        ".ckpt",
    ]
)
# Compiled JavaScript and declaration files; skipped when a TypeScript source of the same
# module exists (tsc output shipped beside its source, e.g. dist/, v4/ copies).
_COMPILED_SUFFIXES = (".d.ts", ".d.cts", ".d.mts", ".js", ".cjs", ".mjs")
_TS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")
_SNIFF_BYTES = 8192
# --include patterns that name no file in particular: they do not bring back generated or data files
_ANY_NAME = frozenset(["*", "**", "*.*"])
# The first bytes of binary formats that can carry any extension (an Illustrator .ai is a PDF)
MAGIC_NUMBERS = (
    b"%PDF-",
    b"\x89PNG\r\n\x1a\n",
    b"PK\x03\x04",
    b"PK\x05\x06",
    b"\x1f\x8b",
    b"\x7fELF",
    b"GIF87a",
    b"GIF89a",
    b"\xff\xd8\xff",
    b"BM",
    b"II*\x00",
    b"MM\x00*",
    b"%!PS-Adobe",
    b"\xd0\xcf\x11\xe0",
    b"7z\xbc\xaf\x27\x1c",
    b"Rar!\x1a\x07",
    b"\xfe\xed\xfa",
    b"\xcf\xfa\xed\xfe",
    b"\xca\xfe\xba\xbe",
    b"MZ",
    b"SQLite format 3\x00",
    b"wOFF",
    b"wOF2",
    b"OggS",
    b"fLaC",
    b"ID3",
    b"\x00asm",
    b"BZh",
    b"\xfd7zXZ\x00",
    b"(\xb5/\xfd",
    b"8BPS",
    b"RIFF",
)
# Magic numbers short enough to begin a text file too: binary only with other control bytes
_WEAK_MAGIC = (b"BM", b"MZ", b"ID3", b"BZh", b"RIFF")
# A share of control bytes (other than tab, newline, carriage return, form feed, escape) this
# high in the first 8 KiB is not text
CONTROL_SHARE = 0.10
_CONTROL = bytes(b for b in range(32) if b not in (9, 10, 12, 13, 27)) + b"\x7f"
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
    ts_modules = _ts_module_suffixes(candidates)
    files: list[SourceFile] = []
    top = str(root)
    for rel in candidates:
        if ts_modules and _is_compiled_copy(rel, ts_modules):
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
    unmatched = [g for g in include if not any(_glob(f.path, g) for f in files)]
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
        found = next((rel for rel in blocked if _glob(rel, g)), None)
        if found is not None:
            out[g] = found
    return out


def builtin_excluded_folder(rel: str) -> str | None:
    """The first folder of a path that a built-in rule excludes (node_modules, build, ...), or None."""
    parts = rel.split("/")[:-1]
    for i, part in enumerate(parts):
        if part in EXCLUDED_DIRS or part.endswith(".egg-info"):
            return "/".join(parts[: i + 1])
    return None


def include_reaches(rel_dir: str, include: tuple[str, ...]) -> bool:
    """Whether an --include pattern that names folders (has a '/') can match below `rel_dir`:
    such a pattern brings back a folder the built-in rules exclude."""
    parts = rel_dir.split("/")
    for g in include:
        if "/" not in g.rstrip("/"):
            continue
        segments = g.rstrip("/").split("/")
        for part, segment in zip(parts, segments):
            if segment == "**":
                return True
            if not fnmatch.fnmatchcase(part, segment):
                break
        else:
            return True
    return False


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


def read_text(
    abspath: str, max_bytes: int = DEFAULT_MAX_BYTES, identity: tuple[int, int] | None = None
) -> SourceText:
    """Read a file as text, or say why it is skipped.

    Binary files (looks_binary: a NUL byte, a magic number or many control bytes in the first
    8 KiB) and minified scripts are skipped;
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
    if looks_binary(data[:_SNIFF_BYTES]):
        return SourceText(None, "binary", digest, len(data))
    text = decode_text(data)
    if not text.strip():
        return SourceText(None, "empty", digest, len(data))
    if _looks_minified(abspath, text):
        return SourceText(None, "minified", digest, len(data))
    return SourceText(text, None, digest, len(data))


def looks_binary(head: bytes) -> bool:
    """Tell from a file's first bytes whether it is binary: a NUL byte, the magic number of a
    binary format (PDF, PNG, ZIP, gzip, ELF, ...), or a high share of control bytes."""
    if b"\0" in head:
        return True
    if head.startswith(MAGIC_NUMBERS) and not head.startswith(_WEAK_MAGIC):
        return True
    if not head:
        return False
    controls = len(head) - len(head.translate(None, _CONTROL))
    return controls > CONTROL_SHARE * len(head) or (head.startswith(_WEAK_MAGIC) and controls > 0)


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


def excluded_by_name(
    rel: str, include: tuple[str, ...], exclude: tuple[str, ...], rag_rules: list[IgnoreRules]
) -> str | None:
    """Why a listed file is skipped by its path alone, or None. An --include that matches the
    path wins over the built-in rules (excluded folders, generated names, data and binary
    suffixes), if it names the folder of a built-in excluded one; never over secret files."""
    parts = rel.split("/")
    name = parts.pop()
    included = bool(include) and any(_glob(rel, g) for g in include)
    if INDEX_DIRNAME in parts or ".git" in parts:
        return "excluded-dir"
    folder = builtin_excluded_folder(rel)
    if folder is not None and not (included and include_reaches(folder, include)):
        return "excluded-dir"
    if is_secret_file(rel):
        return "secret"
    if name == ACCESS_FILE:
        return "access-list"  # says who may read what; not content to answer from
    if include and not included:
        return "not-included"
    if any(_glob(rel, g) for g in exclude):
        return "excluded"
    if any(r.rules for r in rag_rules) and is_ignored(rag_rules, rel, False):
        return "ragignore"
    if included and any(_glob(rel, g) and g.rsplit("/", 1)[-1] not in _ANY_NAME for g in include):
        return None  # asked for by name: the content decides (a binary is still found binary)
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
