"""Tests for rag.sources.ignore: gitignore(5) examples, then git itself as the oracle."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from rag.sources.ignore import IgnoreRules, is_ignored

# (patterns, path, is_dir, ignored) — mostly the examples of the gitignore(5) documentation.
CASES = [
    # blank lines, comments and escapes
    (["", "   ", "# a comment"], "# a comment", False, False, "comment-is-not-a-pattern"),
    (["\\#hash"], "#hash", False, True, "escaped-hash"),
    (["\\!important!.txt"], "!important!.txt", False, True, "escaped-bang"),
    (["foo   "], "foo", False, True, "trailing-spaces-trimmed"),
    (["foo\\ "], "foo ", False, True, "escaped-trailing-space-kept"),
    (["foo\\ "], "foo", False, False, "escaped-trailing-space-required"),
    (["foo\r"], "foo", False, True, "crlf-line"),
    # negation: "*.html / !foo.html"
    (["*.html", "!foo.html"], "foo.html", False, False, "negation-reincludes"),
    (["*.html", "!foo.html"], "bar.html", False, True, "negation-others-stay"),
    (["!foo.html", "*.html"], "foo.html", False, True, "last-match-wins"),
    # trailing slash: directories only
    (["foo/"], "foo", True, True, "dir-only-matches-dir"),
    (["foo/"], "foo", False, False, "dir-only-skips-file"),
    (["foo/"], "foo/bar.c", False, True, "dir-only-covers-contents"),
    (["frotz/"], "a/frotz", True, True, "dir-only-any-depth"),
    (["doc/frotz/"], "doc/frotz", True, True, "middle-slash-anchored"),
    (["doc/frotz/"], "a/doc/frotz", True, False, "middle-slash-not-deeper"),
    (["doc/frotz"], "doc/frotz", False, True, "middle-slash-file"),
    (["/doc/frotz"], "doc/frotz", False, True, "leading-slash-same-as-middle"),
    # anchoring
    (["/bar"], "bar", False, True, "leading-slash-root"),
    (["/bar"], "a/bar", False, False, "leading-slash-not-deeper"),
    (["bar"], "a/bar", False, True, "no-slash-any-depth"),
    (["bar"], "a/bar/baz.c", False, True, "no-slash-dir-covers-contents"),
    (["hello.*"], "x/hello.py", False, True, "prefix-glob-any-depth"),
    (["hello.*"], "x/hello", False, False, "prefix-glob-needs-dot"),
    # '*', '?', '[...]' never match '/'
    (["foo/*"], "foo/test.json", False, True, "star-one-level-file"),
    (["foo/*"], "foo/bar", True, True, "star-one-level-dir"),
    (["foo/*"], "foo/bar/hello.c", False, True, "star-dir-contents-via-parent"),
    (["foo/*.c"], "foo/bar/hello.c", False, False, "star-not-across-slash"),
    (["a?c"], "abc", False, True, "question-one-char"),
    (["a?c"], "ac", False, False, "question-not-zero"),
    (["x/a?c"], "x/a/c", False, False, "question-not-slash"),
    (["*.[oa]"], "lib.a", False, True, "bracket-set"),
    (["*.[oa]"], "lib.so", False, False, "bracket-set-miss"),
    (["file[0-9].txt"], "file7.txt", False, True, "bracket-range"),
    (["file[!0-9].txt"], "file7.txt", False, False, "bracket-negated-bang"),
    (["file[^0-9].txt"], "filex.txt", False, True, "bracket-negated-caret"),
    (["a[/]b"], "a/b", False, False, "bracket-never-slash"),
    (["[]]x"], "]x", False, True, "bracket-leading-close"),
    (["[[:digit:]]x"], "5x", False, True, "bracket-class"),
    (["[abc"], "[abc", False, False, "unclosed-bracket-never-matches"),
    (["\\*x"], "*x", False, True, "escaped-star-literal"),
    (["\\*x"], "ax", False, False, "escaped-star-not-glob"),
    # '**'
    (["**/foo"], "foo", False, True, "leading-dstar-root"),
    (["**/foo"], "a/b/foo", True, True, "leading-dstar-deep"),
    (["**/foo/bar"], "x/foo/bar", False, True, "leading-dstar-pair"),
    (["**/foo/bar"], "x/foo/y/bar", False, False, "leading-dstar-pair-direct-child"),
    (["abc/**"], "abc/x/y/z", False, True, "trailing-dstar-inside"),
    (["abc/**"], "abc", True, False, "trailing-dstar-not-dir-itself"),
    (["abc/**"], "x/abc/y", False, False, "trailing-dstar-anchored"),
    (["a/**/b"], "a/b", False, True, "middle-dstar-zero"),
    (["a/**/b"], "a/x/b", False, True, "middle-dstar-one"),
    (["a/**/b"], "a/x/y/b", False, True, "middle-dstar-two"),
    (["a/**/b"], "a/xb", False, False, "middle-dstar-needs-slash"),
    (["a**b"], "axyb", False, True, "inner-dstar-is-star"),
    (["x/a**b"], "x/a/b", False, False, "inner-dstar-not-slash"),
    # where git's wildmatch differs from a character-wise reading (each checked with git 2.39)
    (["?"], "é", False, False, "question-mark-is-one-byte"),
    (["??"], "é", False, True, "two-bytes-of-one-letter"),
    (["[!a]"], "é", False, False, "bracket-is-one-byte"),
    (["[b-a]"], "b", False, True, "reversed-range-is-its-first-character"),
    (["[!z-a]"], "z", False, False, "negated-reversed-range"),
    (["foo**/bar"], "foox/y/bar", False, True, "dstar-after-literal-prefix-crosses-dirs"),
    (["foo**/bar"], "foobar", False, True, "dstar-after-literal-prefix-zero-dirs"),
    (["a/**\\/b"], "a/x/y/b", False, True, "dstar-escaped-slash-crosses-dirs"),
    (["a/**\\/b"], "a/b", False, False, "dstar-escaped-slash-needs-one-dir"),
    (["[[:a]b:]]"], "ab:]]", False, True, "colon-bracket-without-class-is-literal"),
    (["[[:space:]]"], "\x0b", False, False, "space-class-has-no-vertical-tab"),
    # exclude everything except directory foo/bar (the documentation's example)
    (["/*", "!/foo", "/foo/*", "!/foo/bar"], "foo/bar/x.c", False, False, "only-foo-bar-kept"),
    (["/*", "!/foo", "/foo/*", "!/foo/bar"], "foo/baz.c", False, True, "only-foo-bar-sibling"),
    (["/*", "!/foo", "/foo/*", "!/foo/bar"], "top.c", False, True, "only-foo-bar-top"),
    # a file under an ignored directory cannot be re-included
    (["build/", "!build/keep.txt"], "build/keep.txt", False, True, "no-reinclude-under-ignored-dir"),
    (["build/*", "!build/keep.txt"], "build/keep.txt", False, False, "reinclude-when-dir-not-ignored"),
]


@pytest.mark.parametrize(
    ("patterns", "path", "is_dir", "ignored"),
    [case[:4] for case in CASES],
    ids=[case[4] for case in CASES],
)
def test_gitignore_semantics(patterns: list[str], path: str, is_dir: bool, ignored: bool) -> None:
    assert is_ignored([IgnoreRules.parse(patterns)], path, is_dir) is ignored


@pytest.mark.parametrize(
    ("patterns", "path", "expected"),
    [
        (["*.log"], "a.log", True),
        (["*.log", "!a.log"], "a.log", False),
        (["*.log"], "a.txt", None),
        ([], "a.txt", None),
    ],
    ids=["ignored", "negated", "no-rule", "empty"],
)
def test_match_is_three_valued(patterns: list[str], path: str, expected: bool | None) -> None:
    assert IgnoreRules.parse(patterns).match(path, False) is expected


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("/x.txt", "sub/x.txt", True),
        ("/x.txt", "x.txt", None),
        ("/x.txt", "sub/deeper/x.txt", None),
        ("x.txt", "sub/deeper/x.txt", True),
        ("x.txt", "other/x.txt", None),
        ("deeper/*.txt", "sub/deeper/x.txt", True),
        ("**/x.txt", "sub/a/b/x.txt", True),
        ("**/x.txt", "subx.txt", None),
    ],
    ids=[
        "anchored",
        "outside-base",
        "anchored-not-deeper",
        "any-depth",
        "sibling-dir",
        "relative",
        "dstar",
        "prefix-not-dir",
    ],
)
def test_base_directory(pattern: str, path: str, expected: bool | None) -> None:
    assert IgnoreRules.parse([pattern], base="sub").match(path, False) is expected


def test_deeper_file_wins() -> None:
    root = IgnoreRules.parse(["*.txt"])
    sub = IgnoreRules.parse(["!keep.txt"], base="sub")
    assert is_ignored([root, sub], "sub/keep.txt", False) is False
    assert is_ignored([root, sub], "keep.txt", False) is True
    assert is_ignored([sub, root], "sub/keep.txt", False) is True


def test_from_file(tmp_path: Path) -> None:
    (tmp_path / ".ragignore").write_text("\ufeff*.min.js\n# vendored\nvendor/\n", encoding="utf-8")
    rules = IgnoreRules.from_file(tmp_path / ".ragignore")
    assert len(rules.rules) == 2
    assert rules.match("app.min.js", False) is True
    assert IgnoreRules.from_file(tmp_path / "missing") == IgnoreRules()


def test_from_file_line_ends_as_git_reads_them(tmp_path: Path) -> None:
    # git strips one CR before each LF, and a lone CR is part of the pattern, not a line break
    (tmp_path / ".ragignore").write_bytes(b"*.log\r\nbuild\rdist\n")
    rules = IgnoreRules.from_file(tmp_path / ".ragignore")
    assert len(rules.rules) == 2
    assert rules.match("a.log", False) is True
    assert rules.match("build", True) is None and rules.match("dist", True) is None
    assert rules.match("build\rdist", False) is True


# ---- git as the oracle --------------------------------------------------------------------------

ROOT_GITIGNORE = """\
# build output
/build/
*.py[cod]
!keep.pyc
logs/**
!logs/important.log
docs/**/*.tmp
**/cache/
secret?.txt
vendor/*
!vendor/ours/
/*.cfg
data[0-9]/
\\#notes
a\\ b
"""
ROOT_GITIGNORE += "name with spaces   \n"  # trailing spaces are trimmed
SUB_GITIGNORE = """\
*.md
!README.md
/local/
deep/**/x.txt
"""
TREE = [
    "build/out.o",
    "build/sub/keep.pyc",
    "src/build/x.py",
    "src/app.py",
    "src/app.pyc",
    "src/keep.pyc",
    "logs/a.log",
    "logs/important.log",
    "logs/deep/b.log",
    "docs/a.tmp",
    "docs/x/y/b.tmp",
    "docs/ok.md",
    "cache/c.bin",
    "src/cache/d.bin",
    "secret1.txt",
    "secret12.txt",
    "src/secretA.txt",
    "vendor/theirs/v.js",
    "vendor/ours/o.js",
    "vendor/top.js",
    "setup.cfg",
    "src/setup.cfg",
    "data1/d.csv",
    "data10/d.csv",
    "#notes",
    "a b",
    "ab",
    "name with spaces",
    "sub/README.md",
    "sub/guide.md",
    "sub/x/README.md",
    "sub/local/l.txt",
    "sub/x/local/l.txt",
    "sub/deep/x.txt",
    "sub/deep/1/2/x.txt",
    "sub/x.txt",
    "README.md",
]


def _git(repo: Path, *args: str, stdin: str = "") -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "HOME": str(repo)}
    command = ["git", "-c", "core.excludesFile=", *args]
    result = subprocess.run(command, cwd=repo, input=stdin, capture_output=True, text=True, env=env)
    assert result.returncode in (0, 1), result.stderr
    return result.stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_agrees_with_git(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", ".")
    (repo / ".gitignore").write_text(ROOT_GITIGNORE, encoding="utf-8")
    (repo / "sub").mkdir()
    (repo / "sub" / ".gitignore").write_text(SUB_GITIGNORE, encoding="utf-8")
    for rel in TREE:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("x", encoding="utf-8")

    rules = [
        IgnoreRules.from_file(repo / ".gitignore"),
        IgnoreRules.from_file(repo / "sub" / ".gitignore", base="sub"),
    ]
    paths = {
        p.relative_to(repo).as_posix(): p.is_dir()
        for p in repo.rglob("*")
        if ".git" not in p.relative_to(repo).parts
    }
    ours = {rel for rel, is_dir in paths.items() if is_ignored(rules, rel, is_dir)}

    # every file and directory, one decision each (check-ignore also reports paths under ignored dirs)
    theirs = set(_git(repo, "check-ignore", "--stdin", stdin="\n".join(sorted(paths)) + "\n").splitlines())
    assert ours == theirs
    # and the files a walk would keep
    kept = set(_git(repo, "ls-files", "--others", "--exclude-standard").splitlines())
    assert {rel for rel, is_dir in paths.items() if not is_dir and rel not in ours} == kept
    assert 10 < len(ours) < len(paths) - 10  # the tree exercises both outcomes


# pieces of random patterns: literals (one non-ASCII: git matches bytes), wildcards, brackets, escapes
_PIECES = [
    "a",
    "b",
    "ab",
    "x.py",
    "é",
    "1",
    "*",
    "?",
    "**",
    "[ab]",
    "[!a]",
    "[a-c]",
    "[b-a]",
    "[[:digit:]]",
    "\\*",
    "a*",
    "*.py",
    "?b",
]
_NAMES = ["a", "b", "ab", "x.py", "é", "1", "a.b", "*", "ba"]


def _random_pattern(rng: random.Random) -> str:
    pattern = "/".join(
        "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 2))) for _ in range(rng.randint(1, 3))
    )
    if rng.random() < 0.3:
        pattern = "/" + pattern
    if rng.random() < 0.2:
        pattern += "/"
    return ("!" if rng.random() < 0.25 else "") + pattern


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_random_patterns_agree_with_git(tmp_path: Path) -> None:
    # a seeded sample of what a fuzzer against git check-ignore ran in the thousands (it found
    # byte-wise `?` and brackets, reversed ranges and `**` after a literal prefix)
    rng = random.Random(20261130)
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", ".")
    paths = sorted({"/".join(rng.choice(_NAMES) for _ in range(rng.randint(1, 3))) for _ in range(60)})
    files = [
        p for p in paths if not any(q.startswith(p + "/") for q in paths)
    ]  # a name is a file or a folder
    for rel in files:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("x", encoding="utf-8")
    listed = {p.relative_to(repo).as_posix(): p.is_dir() for p in repo.rglob("*") if ".git" not in p.parts}
    disagreements = []
    for _ in range(120):
        patterns = [_random_pattern(rng) for _ in range(rng.randint(1, 4))]
        (repo / ".gitignore").write_text("\n".join(patterns) + "\n", encoding="utf-8")
        rules = [IgnoreRules.from_file(repo / ".gitignore")]
        ours = {rel for rel, is_dir in listed.items() if is_ignored(rules, rel, is_dir)}
        out = _git(
            repo,
            "-c",
            "core.quotePath=false",
            "check-ignore",
            "--stdin",
            stdin="\n".join(sorted(listed)) + "\n",
        )
        theirs = set(out.splitlines())
        if ours != theirs:
            disagreements.append((patterns, sorted(ours ^ theirs)[:3]))
    assert disagreements == []
