"""Which files are read: git-aware listing, excludes, binaries, limits, symlinks."""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from conftest import write_tree

from rag import Index, IngestOptions, InputError, ingest, walk
from rag.sources.reading import read_text


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def paths(root: Path, **kw) -> list[str]:
    return [f.path for f in walk(root, **kw).files]


def test_git_repo_lists_what_git_would_track(tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "r",
        {
            ".gitignore": "*.log\nbuild-out/\n!keep.log\n",
            "src/app.py": "x = 1\n",
            "src/.gitignore": "secret_notes.txt\n",
            "src/secret_notes.txt": "ignored by a nested .gitignore\n",
            "debug.log": "noise\n",
            "keep.log": "negated, so kept\n",
            "build-out/gen.py": "generated\n",
            "untracked.md": "# not yet added, but not ignored\n",
        },
    )
    git(repo, "init", "-q")
    git(repo, "add", ".gitignore", "src/app.py", "src/.gitignore")
    listing = walk(repo)
    assert listing.git
    assert [f.path for f in listing.files] == [
        ".gitignore",
        "keep.log",
        "src/.gitignore",
        "src/app.py",
        "untracked.md",
    ]


def test_plain_directory_uses_builtin_excludes_and_gitignore(tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "r",
        {
            "pkg/mod.py": "def f(): pass\n",
            "node_modules/lib/index.js": "module.exports = 1\n",
            ".venv/lib/site.py": "x\n",
            "pkg/__pycache__/mod.cpython-311.pyc": b"\0\0",
            "dist/bundle.js": "var a=1\n",
            "web/app.min.js": "var a=1\n",
            "package-lock.json": "{}\n",
            "mix.lock": '%{"jason": {:hex, :jason, "1.4.1"}}\n',
            "infra/.terraform.lock.hcl": 'provider "registry.terraform.io/hashicorp/aws" {}\n',
            "PKG-INFO": "Metadata-Version: 2.1\nName: pkg\n\n# Pkg (a copy of the README)\n",
            "docs/.gitignore": "drafts/\n",
            "docs/drafts/wip.md": "# wip\n",
            "docs/index.md": "# Docs\n",
        },
    )
    listing = walk(repo)
    assert not listing.git
    assert [f.path for f in listing.files] == ["docs/.gitignore", "docs/index.md", "pkg/mod.py"]
    assert listing.skipped["gitignored"] == 1
    assert listing.skipped["generated"] == 5  # the lock files, the minified script, PKG-INFO


def test_compiled_copies_of_typescript_sources_are_skipped(tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "r",
        {
            "src/v4/schemas.ts": "export const a = 1;\n",
            "v4/schemas.js": "exports.a = 1;\n",
            "v4/schemas.d.ts": "export declare const a = 1;\n",
            "lib/helpers.js": "module.exports = {};\n",  # no TypeScript twin: kept
        },
    )
    assert paths(repo) == ["lib/helpers.js", "src/v4/schemas.ts"]


def test_binary_huge_empty_and_non_utf8_files(tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "r",
        {
            "ok.txt": "fine text here\n",
            "blob.dat": b"abc\0def" * 10,
            "photo.png": b"\x89PNG",
            "huge.txt": "x" * 2000 + "\n",
            "latin1.txt": "café crème".encode("latin-1"),
            "empty.txt": "",
        },
    )
    report = ingest(repo, options=IngestOptions(max_bytes=1000))
    assert report.files == 2  # ok.txt and latin1.txt
    assert report.skipped == {"binary": 2, "too-large": 1, "empty": 1}
    text = read_text(str(repo / "latin1.txt")).text
    assert text == "caf\ufffd cr\ufffdme"


def test_symlinks_are_never_followed(tmp_path: Path) -> None:
    outside = write_tree(tmp_path / "outside", {"private.txt": "not part of the repo\n"})
    repo = write_tree(tmp_path / "r", {"a.txt": "inside\n", "sub/b.txt": "inside too\n"})
    os.symlink(outside / "private.txt", repo / "leak.txt")
    os.symlink(outside, repo / "leakdir")
    os.symlink(repo, repo / "sub" / "loop")
    os.symlink(repo / "a.txt", repo / "alias.txt")  # a.txt is indexed under its own name
    listing = walk(repo)
    assert [f.path for f in listing.files] == ["a.txt", "sub/b.txt"]
    assert listing.skipped["symlink"] == 4


@pytest.mark.parametrize("use_git", [False, True])
def test_a_symlink_does_not_carry_a_secret_or_ignored_file_past_the_rules(
    tmp_path: Path, use_git: bool
) -> None:
    repo = write_tree(
        tmp_path / "r",
        {
            ".env": "DB_PASSWORD=hunter2supersecretvalue\n",
            ".gitignore": "private/\n",
            "private/notes.md": "# Payroll\n\nThe payroll budget is 4.2 million.\n",
            "app.py": "x = 1\n",
        },
    )
    os.symlink(".env", repo / "settings.txt")
    os.symlink("private/notes.md", repo / "notes.md")
    if use_git:
        git(repo, "init", "-q")
    listing = walk(repo)
    assert [f.path for f in listing.files] == [".gitignore", "app.py"]
    assert listing.skipped["symlink"] == 2


def test_a_file_name_that_is_not_utf8_is_skipped_and_counted(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "r", {"a.py": "x = 1\n"})
    with open(os.path.join(os.fsencode(repo), b"caf\xe9.py"), "wb") as fh:
        fh.write(b"y = 2\n")
    (repo / "caf\\xe9.py").write_text("z = 3\n")  # a name that reads like the escaped form
    listing = walk(repo)
    assert [f.path for f in listing.files] == ["a.py", "caf\\xe9.py"]
    assert listing.skipped["non-utf8-name"] == 1


def test_outside_git_a_repositorys_local_excludes_still_apply(tmp_path: Path) -> None:
    # git refuses some repositories (another user's, "dubious ownership"); the walk then
    # reads .git/info/exclude itself, below the .gitignore files
    repo = write_tree(
        tmp_path / "r",
        {
            ".git/info/exclude": "local-notes.txt\n*.tmp\n",
            ".gitignore": "!keep.tmp\n",
            "local-notes.txt": "mine only\n",
            "scratch.tmp": "x\n",
            "keep.tmp": "y\n",
            "app.py": "x = 1\n",
        },
    )
    from rag.sources.walk import _walk_files

    skipped: Counter[str] = Counter()
    assert sorted(_walk_files(repo, lambda rel, reason: skipped.update([reason]))) == [
        ".gitignore",
        "app.py",
        "keep.tmp",
    ]
    assert skipped["gitignored"] == 2


def test_include_and_exclude_globs(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "r", {"a.py": "a\n", "b.md": "b\n", "tests/test_a.py": "t\n"})
    assert paths(repo, include=("*.py",)) == ["a.py", "tests/test_a.py"]
    assert paths(repo, exclude=("tests/",)) == ["a.py", "b.md"]
    assert paths(repo, include=("*.py",), exclude=("tests/*",)) == ["a.py"]


@pytest.mark.parametrize("make", ["missing", "file"])
def test_bad_repo_path(tmp_path: Path, make: str) -> None:
    target = tmp_path / "x"
    if make == "file":
        target.write_text("not a dir")
    with pytest.raises(InputError, match="pass the path of a repository directory"):
        walk(target)


def test_unreadable_file_is_counted_not_fatal(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        # root reads anything; simulate with a file that vanishes between walk and read
        repo = write_tree(tmp_path / "r", {"a.txt": "alpha\n"})
        assert read_text(str(repo / "gone.txt")).skip_reason == "unreadable"
        return
    repo = write_tree(tmp_path / "r", {"a.txt": "alpha\n", "b.txt": "beta\n"})
    (repo / "b.txt").chmod(0)
    report = ingest(repo)
    assert report.skipped == {"unreadable": 1}


def test_compiled_copies_are_found_below_a_common_parent(tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "r",
        {
            "pkg/src/v4/locales/fr.ts": "export default {};\n",
            "pkg/v4/locales/fr.cjs": "module.exports = {};\n",
            "pkg/v4/locales/fr.d.cts": "export {};\n",
            "other/fr.js": "module.exports = 1;\n",  # only the file name matches: kept
        },
    )
    assert paths(repo) == ["other/fr.js", "pkg/src/v4/locales/fr.ts"]


def test_data_files_are_skipped(tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "r",
        {
            "locale/fr/django.po": 'msgid "Hello"\nmsgstr "Bonjour"\n',
            "logo.svg": "<svg></svg>\n",
            "app.py": "x = 1\n",
        },
    )
    listing = walk(repo)
    assert [f.path for f in listing.files] == ["app.py"] and listing.skipped["data"] == 2


def test_line_endings_are_universal_newlines_for_every_chunker(tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "r",
        {
            "old_mac.py": b"def f():\r    pass\r\rdef g():\r    pass\r",  # ast counts a lone CR as a line break
            "stray.py": b"import os\rimport sys\ndef f():\n    return 1\ndef g():\n    a = 1\n    return a\n",
            "windows.md": b"Intro Title\r\n===========\r\n\r\nSome intro text here.\r\n\r\n"
            b"Usage\r\n-----\r\n\r\nRun the tool with care.\r\n",
        },
    )
    report = ingest(repo)
    assert report.files == 3
    with Index(report.index_path) as index:
        spans = sorted((c.path, c.start_line, c.end_line, c.symbol) for _, c, _ in index.all_chunks())
        texts = {(c.path, c.start_line): c.text for _, c, _ in index.all_chunks()}
    assert [s for s in spans if s[0] == "old_mac.py"] == [
        ("old_mac.py", 1, 2, "f"),
        ("old_mac.py", 4, 5, "g"),
    ]
    assert [s for s in spans if s[0] == "stray.py"] == [("stray.py", 1, 4, "f"), ("stray.py", 5, 7, "g")]
    assert texts["stray.py", 5] == "def g():\n    a = 1\n    return a"
    assert [s[3] for s in spans if s[0] == "windows.md"] == ["Intro Title > Usage"]
    assert "\r" not in "".join(texts.values())


def test_a_folder_that_cannot_be_listed_is_counted(tmp_path: Path, monkeypatch) -> None:
    repo = write_tree(tmp_path / "r", {"a.py": "x = 1\n", "locked/b.py": "y = 2\n"})
    real = os.scandir

    def scandir(path):  # what a folder without read permission gives anyone but root
        if os.fspath(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    listing = walk(repo)
    assert [f.path for f in listing.files] == ["a.py"]
    assert listing.skipped["unreadable-dir"] == 1


def test_a_repository_inside_the_repository_is_counted_as_nested(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "r", {"a.py": "x = 1\n", "inner/b.py": "y = 2\n"})
    git(repo, "init", "-q")
    git(repo / "inner", "init", "-q")
    listing = walk(repo)
    assert [f.path for f in listing.files] == ["a.py"]
    assert listing.skipped["nested-repo"] == 1


# --- a file swapped between the walk and the read; rule files that are not files; deep folders --------


def test_a_file_swapped_for_a_symlink_after_the_walk_is_not_followed(tmp_path: Path, monkeypatch) -> None:
    import rag.indexing.plan

    repo = write_tree(tmp_path / "r", {"app.py": "def app():\n    return 1\n", "notes.txt": "plain notes\n"})
    (tmp_path / "outside.env").write_text("AWS_SECRET=the-secret-value-outside\n")
    walked = rag.indexing.plan.walk

    def walk_then_swap(*args, **kwargs):  # the race, made certain: the swap lands right after the listing
        listing = walked(*args, **kwargs)
        (repo / "notes.txt").unlink()
        (repo / "notes.txt").symlink_to(tmp_path / "outside.env")
        return listing

    monkeypatch.setattr(rag.indexing.plan, "walk", walk_then_swap)
    report = ingest(repo)
    assert report.skipped.get("symlink") == 1
    with Index(report.index_path) as index:
        assert set(index.files()) == {"app.py"}


@pytest.mark.parametrize("swap", ["fifo", "other-file"])
def test_read_text_reads_only_the_regular_file_the_walk_listed(tmp_path: Path, swap: str) -> None:
    repo = write_tree(tmp_path / "r", {"a.txt": "listed text\n"})
    (source,) = walk(repo).files
    if swap == "fifo":
        (repo / "a.txt").unlink()
        os.mkfifo(repo / "a.txt")  # opening it must not wait for a writer
        assert read_text(source.abspath, identity=source.identity).skip_reason == "not-a-file"
    else:
        (repo / "b.txt").write_text("another file, renamed over it\n")  # while a.txt holds its inode
        (repo / "b.txt").rename(repo / "a.txt")
        assert read_text(source.abspath, identity=source.identity).skip_reason == "unreadable"


@pytest.mark.parametrize("name", [".ragignore", ".gitignore"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge"])
def test_a_rule_file_that_is_not_a_small_regular_file_is_one_line(
    tmp_path: Path, name: str, kind: str
) -> None:
    from click.testing import CliRunner

    from rag.cli import main

    repo = write_tree(tmp_path / "r", {"a.txt": "some text\n"})
    if kind == "fifo":
        os.mkfifo(repo / name)
    elif kind == "dev-zero":
        if name == ".gitignore":
            pytest.skip("a .gitignore that is a link is not read at all, as git does")
        (repo / name).symlink_to("/dev/zero")
    else:
        (repo / name).write_text("*.log\n" * 200_000)  # 1.2 MB
    result = CliRunner().invoke(main, ["ingest", str(repo)])
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {repo / name} is ") and result.output.count("\n") == 1


def test_folders_nested_1200_deep_outside_git_are_walked(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    deep = str(repo)
    for _ in range(1200):  # os.makedirs recurses once per missing folder
        deep = os.path.join(deep, "d")
        os.mkdir(deep)
    with open(os.path.join(deep, "bottom.txt"), "w") as fh:
        fh.write("the bottom of the well\n")
    (repo / "top.txt").write_text("the top\n")
    try:
        listing = walk(repo)
        assert not listing.git
        assert [f.path for f in listing.files] == ["d/" * 1200 + "bottom.txt", "top.txt"]
    finally:  # pytest's cleanup (shutil.rmtree) recurses once per level too
        os.unlink(os.path.join(deep, "bottom.txt"))
        while deep != str(repo):
            os.rmdir(deep)
            deep = os.path.dirname(deep)
