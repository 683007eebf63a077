"""`rag status` as a caller sees it: every count and path equals that of an index built without the
files the caller's groups may not read (.rag-access)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from restricted_repo import HR, PLACE, PUBLIC, build, change_files

from rag.cli import main
from rag.status import status, status_dict


@pytest.fixture
def indexes(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The repository with its restricted folder, the same without it, and the same with the
    folder public (what a member of hr may read: everything)."""
    return (
        build(tmp_path / "full", {**PUBLIC, **HR}),
        build(tmp_path / "without", PUBLIC),
        build(tmp_path / "open", {**PUBLIC, **HR}, "hr/ public\n"),
    )


def same_but_place(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert got.keys() == want.keys()
    for field in got:
        if field not in PLACE:
            assert got[field] == want[field], field


def text_but_place(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith(("Index:", "Repository:", "Built:"))]


def cli_status(index: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    result = CliRunner().invoke(
        main, ["status", "--json", "--skipped", "--index", str(index), *args], env=env
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_a_caller_outside_the_group_sees_the_status_of_an_index_without_the_folder(
    indexes: tuple[Path, Path, Path],
) -> None:
    full, without, opened = indexes
    change_files(full, without, opened)
    want = status_dict(status(without), with_paths=True)
    for caller in ([], ["--as", "finance"]):
        same_but_place(cli_status(full, *caller), want)
    same_but_place(status_dict(status(full, frozenset({"finance"})), with_paths=True), want)
    # the restricted files did count: a member of hr sees more of everything
    member = cli_status(full, "--as", "hr")
    assert member["files"] > want["files"] and member["chunks"] > want["chunks"]
    assert member["redacted"] == {"password-assignment": 2} and want["redacted"] == {"password-assignment": 1}
    assert member["skipped"] == {**want["skipped"], "binary": 2, "excluded-dir": 1, "secret": 1}
    assert (member["stale"], want["stale"]) == (
        ["app/auth.py", "hr/salaries.py", "app/", "hr/"],
        ["app/auth.py", "app/"],
    )
    runner = CliRunner()
    for flags in (["--skipped"], []):
        got = runner.invoke(main, ["status", "--index", str(full), *flags])
        expected = runner.invoke(main, ["status", "--index", str(without), *flags])
        assert got.exit_code == expected.exit_code == 0
        assert text_but_place(got.stdout) == text_but_place(expected.stdout)


def test_a_member_of_the_group_sees_the_status_of_the_whole_index(indexes: tuple[Path, Path, Path]) -> None:
    full, without, opened = indexes
    change_files(full, without, opened)
    want = cli_status(opened)
    same_but_place(cli_status(full, "--as", "hr"), want)
    same_but_place(cli_status(full, "--as", "finance", "--as", "hr"), want)
    same_but_place(cli_status(full, env={"RAG_GROUPS": "finance hr"}), want)
    assert cli_status(full, env={"RAG_GROUPS": "finance"})["files"] < want["files"]


@pytest.mark.slow
def test_the_cached_vectors_are_counted_for_the_readable_passages(
    indexes: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("onnxruntime")  # the semantic extra
    from rag.semantic.embed import embed_index

    full, without, _ = indexes
    for index in (full, without):
        embed_index(index)  # every passage
    monkeypatch.delenv("RAG_RERANK")  # the stage on: status counts the vectors
    want = status_dict(status(without))
    assert want["vectors"] == want["chunks"]
    same_but_place(status_dict(status(full)), want)
    member = status_dict(status(full, frozenset({"hr"})))
    assert member["vectors"] == member["chunks"] > want["vectors"]


def test_status_will_not_count_under_access_rules_that_changed_since_ingest(
    indexes: tuple[Path, Path, Path],
) -> None:
    full = indexes[0]
    (full.parent.parent / ".rag-access").write_text("hr/ hr finance\n")
    result = CliRunner().invoke(main, ["status", "--index", str(full), "--as", "finance"])
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: .rag-access changed since the index was built — re-run "
        f"`rag ingest {full.parent.parent.resolve()}` to see its status\n"
    )


def test_without_its_repository_no_skipped_path_is_shown_to_anyone(indexes: tuple[Path, Path, Path]) -> None:
    import shutil

    full = indexes[0]
    moved = full.parent.parent.parent / "index-kept.sqlite"
    shutil.copy(full, moved)
    shutil.rmtree(full.parent.parent)  # the repository is gone: its .rag-access with it
    got = status_dict(status(moved, frozenset({"hr"})), with_paths=True)
    # the indexed files keep the access class their ingest gave them
    assert (got["files"], got["skipped_paths"], got["skipped"]) == (6, {}, {})
