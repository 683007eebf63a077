"""What the built-in rules leave out by path: tooling, dependency and build folders, generated
and lock files, data and binary suffixes, compiled copies of TypeScript, secret files; and how
--include and --exclude globs match a path."""

from __future__ import annotations

import fnmatch
import os
import re

from rag.secrets import is_secret_file
from rag.sources.ignore import IgnoreRules, is_ignored
from rag.sources.names import ACCESS_FILE, INDEX_DIRNAME

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
    "mix.lock",  # Elixir
    "pubspec.lock",  # Dart
    "Package.resolved",  # Swift
    "Podfile.lock",
    "packages.lock.json",  # NuGet
    "gradle.lockfile",
    "flake.lock",  # Nix
    ".terraform.lock.hcl",
    "bun.lock",
    "deno.lock",
    "renv.lock",  # R
    "stack.yaml.lock",  # Haskell
    "rebar.lock",  # Erlang
    "shard.lock",  # Crystal
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
# --include patterns that name no file in particular: they do not bring back generated or data files
_ANY_NAME = frozenset(["*", "**", "*.*"])


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


def excluded_by_name(
    rel: str, include: tuple[str, ...], exclude: tuple[str, ...], rag_rules: list[IgnoreRules]
) -> str | None:
    """Why a listed file is skipped by its path alone, or None. An --include that matches the
    path wins over the built-in rules (excluded folders, generated names, data and binary
    suffixes), if it names the folder of a built-in excluded one; never over secret files."""
    parts = rel.split("/")
    name = parts.pop()
    included = bool(include) and any(glob_matches(rel, g) for g in include)
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
    if any(glob_matches(rel, g) for g in exclude):
        return "excluded"
    if any(r.rules for r in rag_rules) and is_ignored(rag_rules, rel, False):
        return "ragignore"
    if included and any(glob_matches(rel, g) and g.rsplit("/", 1)[-1] not in _ANY_NAME for g in include):
        return None  # asked for by name: the content decides (a binary is still found binary)
    if _EXCLUDED_NAME.match(name):
        return "generated"
    suffix = os.path.splitext(name)[1].lower()
    if suffix in BINARY_SUFFIXES:
        return "binary"
    if suffix in DATA_SUFFIXES:
        return "data"
    return None


def glob_matches(rel: str, pattern: str) -> bool:
    """Match a --include/--exclude glob against the path, or its file name if it has no '/'."""
    if "/" not in pattern:
        return fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], pattern)
    return fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(rel, pattern.rstrip("/") + "/*")


def _module_of(rel: str, suffixes: tuple[str, ...]) -> str | None:
    for suffix in suffixes:
        if rel.endswith(suffix):
            return rel[: -len(suffix)]
    return None


def ts_module_suffixes(paths: list[str]) -> set[str]:
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


def is_compiled_copy(rel: str, ts_modules: set[str]) -> bool:
    """A script whose module path, or a tail of it of two or more folders, is a TypeScript module's."""
    module = _module_of(rel, _COMPILED_SUFFIXES)
    if module is None or rel.endswith(_TS_SUFFIXES) and not rel.endswith((".d.ts", ".d.cts", ".d.mts")):
        return False
    parts = module.split("/")
    return module in ts_modules or any("/".join(parts[i:]) in ts_modules for i in range(1, len(parts) - 1))
