"""Access lists: a caller's hits and scores equal those of an index without what it may not read."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_tree

from rag import Index, InputError, ingest, search
from rag.sources.access import AccessList, can_read

FILES = {
    "app/auth.py": 'def login(user, password):\n    """Check the password and start a session."""\n'
    "    return check_password(user, password) and start_session(user)\n",
    "app/billing.py": 'def refund(invoice):\n    """Refund an invoice to the original card."""\n'
    "    return gateway.refund(invoice.charge_id)\n",
    "finance/payroll.py": 'def pay_salaries(month):\n    """Run payroll: the password for the bank is in the vault."""\n'
    "    return bank.transfer(salaries(month))\n",
    "security/incidents.md": "# Incident 42\n\nA leaked password let an attacker refund invoices to "
    "their own card before the session was revoked.\n",
    "README.md": "# App\n\nLog in with a password; refunds go back to the original card.\n",
}
ACCESS = "# who may read what\nfinance/ finance\nsecurity/ security admins\n"
QUESTIONS = ["password session", "refund invoice card", "payroll bank", "leaked password attacker"]


def reference_index(tmp_path: Path, hidden: tuple[str, ...]) -> Path:
    """Index a copy of the repo that lacks the hidden folders and has no access rules."""
    kept = {p: t for p, t in FILES.items() if not any(p.startswith(h) for h in hidden)}
    return ingest(write_tree(tmp_path / "reference", kept)).index_path


def results(
    index_path: Path, groups: frozenset[str], scoring: str = "tfidf"
) -> list[list[tuple[str, int, int, float]]]:
    with Index(index_path) as index:
        return [
            [
                (h.chunk.path, h.chunk.start_line, h.chunk.end_line, h.score)
                for h in search(index, q, k=10, groups=groups, scoring=scoring)
            ]
            for q in QUESTIONS
        ]


@pytest.mark.parametrize(
    ("groups", "hidden"),
    [
        (frozenset(), ("finance/", "security/")),
        (frozenset({"finance"}), ("security/",)),
        (frozenset({"admins"}), ("finance/",)),
        (frozenset({"finance", "security"}), ()),
        (frozenset({"unrelated"}), ("finance/", "security/")),
    ],
    ids=["public", "finance", "admins", "both", "unknown-group"],
)
@pytest.mark.parametrize("scoring", ["tfidf", "bm25"])
def test_caller_sees_exactly_an_index_without_forbidden_files(
    tmp_path: Path, groups, hidden, scoring
) -> None:
    repo = write_tree(tmp_path / "r", {**FILES, ".rag-access": ACCESS})
    full = ingest(repo).index_path
    reference = reference_index(tmp_path, hidden)
    got = results(full, groups, scoring)
    assert got == results(reference, frozenset(), scoring)  # scores to the last bit
    if hidden:  # and the hidden files did matter: seeing everything ranks differently
        assert got != results(full, frozenset({"finance", "security"}), scoring)


def test_restricted_file_does_not_change_public_idf(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "r", {**FILES, ".rag-access": ACCESS})
    ingest(repo)
    with Index(repo / ".rag" / "index.sqlite") as index:
        public = search(index, "password", k=10, explain=True)
        everyone = search(index, "password", k=10, explain=True, groups=frozenset({"finance", "security"}))
    assert {h.chunk.path for h in public}.isdisjoint({"finance/payroll.py", "security/incidents.md"})
    # "password" occurs in 3 of 5 public chunks but 5 of 7 overall: the IDF differs accordingly
    assert public[0].contributions[0].idf != everyone[0].contributions[0].idf


def test_changing_the_access_file_reindexes(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "r", {**FILES, ".rag-access": ACCESS})
    ingest(repo)
    (repo / ".rag-access").write_text("finance/ public\n")
    assert not ingest(repo).up_to_date
    with Index(repo / ".rag" / "index.sqlite") as index:
        assert "finance/payroll.py" in {h.chunk.path for h in search(index, "payroll bank")}


@pytest.mark.parametrize("scoring", ["tfidf", "bm25"])
def test_group_combinations_beyond_the_stored_views_are_computed_exactly(
    tmp_path: Path, monkeypatch, scoring
) -> None:
    monkeypatch.setattr("rag.store.format.MAX_STORED_VIEWS", 1)  # store only the public view
    repo = write_tree(tmp_path / "r", {**FILES, ".rag-access": ACCESS})
    full = ingest(repo).index_path
    reference = reference_index(tmp_path, ("security/",))
    assert results(full, frozenset({"finance"}), scoring) == results(reference, frozenset(), scoring)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("finance/payroll.py", {"finance"}),
        ("finance/sub/x.py", {"finance"}),
        ("security/a.md", {"security", "admins"}),
        ("app/finance.py", set()),
        ("docs/public.md", set()),
    ],
)
def test_last_matching_rule_decides(path: str, expected: set[str]) -> None:
    acl = AccessList.parse(ACCESS + "docs/ public\n")
    assert acl.groups_of(path) == expected


def test_rule_without_groups_is_an_error_naming_the_line() -> None:
    with pytest.raises(InputError, match=r"\.rag-access:2: rule 'finance/' names no group"):
        AccessList.parse("# comment\nfinance/\n")


def test_can_read() -> None:
    assert can_read(frozenset(), frozenset())
    assert not can_read(frozenset({"a"}), frozenset({"b"}))
    assert can_read(frozenset({"a", "b"}), frozenset({"b"}))


@pytest.mark.parametrize("change", ["tightened", "added", "removed"])
def test_a_query_will_not_answer_under_access_rules_that_changed_since_ingest(
    tmp_path: Path, change: str
) -> None:
    from rag.retrieval.retrieve import Request, retrieve
    from rag.sources.names import ACCESS_FILE

    assert ACCESS_FILE == ".rag-access"
    repo = write_tree(tmp_path / "r", {**FILES, **({} if change == "added" else {".rag-access": ACCESS})})
    index_path = ingest(repo).index_path
    if change == "tightened":  # editing the file in place moves no folder's mtime
        (repo / ".rag-access").write_text(ACCESS + "app/auth.py admins\n")
    elif change == "added":
        (repo / ".rag-access").write_text("app/auth.py admins\n")
    else:
        (repo / ".rag-access").unlink()
    with pytest.raises(InputError, match=r"\.rag-access changed since the index was built — re-run"):
        retrieve(index_path, Request("password session"))
    found = retrieve(index_path, Request("password session", refresh=True))  # re-ingested under the new rules
    paths = {h.chunk.path for h in found.hits}
    assert ("app/auth.py" in paths) is (change == "removed")
    assert retrieve(index_path, Request("password session")).hits == found.hits


# --- the rule syntax: gitignore escapes, and no line that fails open ----------------------------------


@pytest.mark.parametrize(
    ("line", "path", "expected"),
    [
        ("Secret\\ Plans/ ops", "Secret Plans/q3.md", {"ops"}),
        ("Secret\\ Plans/ ops", "Secret/q3.md", set()),
        ("\\#notes.md ops", "#notes.md", {"ops"}),
        ("a\\ b\\ c.txt ops finance", "a b c.txt", {"ops", "finance"}),
        ("\\!important.md ops", "!important.md", {"ops"}),
    ],
    ids=["escaped-space", "not-the-prefix", "escaped-hash", "two-spaces-two-groups", "escaped-bang"],
)
def test_patterns_are_parsed_with_gitignore_escapes(line: str, path: str, expected: set[str]) -> None:
    assert AccessList.parse(line + "\n").groups_of(path) == expected


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("Secret\\ Plans/", "names no group"),
        ("secret\\", "ends with a lone backslash"),
        ("Secret\\Plans/ ops\\", "not a group name"),
        ("Secret Plans/ ops", "'Plans/' is not a group name"),
        ("docs/[abc ops", "not a valid gitignore pattern"),
        ("docs/[[:nosuch:]] ops", "not a valid gitignore pattern"),
        ("/ ops", "not a valid gitignore pattern"),
    ],
    ids=[
        "no-group",
        "lone-backslash",
        "backslash-in-group",
        "unescaped-space",
        "unclosed-bracket",
        "unknown-class",
        "only-slash",
    ],
)
def test_a_line_that_cannot_be_parsed_is_an_error_naming_it(line: str, message: str) -> None:
    with pytest.raises(InputError, match=r"^\.rag-access:2: .*" + message):
        AccessList.parse("# who may read what\n" + line + "\n")


def test_an_unparsable_rule_stops_the_query_in_one_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from rag.cli import main

    repo = write_tree(tmp_path / "r", {**FILES, ".rag-access": ACCESS})
    index_path = ingest(repo).index_path
    (repo / ".rag-access").write_text(ACCESS + "Secret Plans/ ops\n")
    result = CliRunner().invoke(main, ["query", "--no-llm", "--index", str(index_path), "password"])
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {repo / '.rag-access'}:4: 'Plans/' is not a group name (letters, digits and "
        ". _ @ + -) — escape spaces and special characters of the pattern with a backslash\n"
    )


def test_an_escaped_space_restricts_its_folder_end_to_end(tmp_path: Path) -> None:
    from rag.retrieval.retrieve import Request, retrieve

    repo = write_tree(
        tmp_path / "r",
        {
            "Secret Plans/q3.md": "# Q3\n\nthe acquisition of initech closes in march\n",
            "README.md": "# App\n\nnothing about acquisitions here\n",
            ".rag-access": "Secret\\ Plans/ board\n",
        },
    )
    index_path = ingest(repo).index_path
    assert retrieve(index_path, Request("initech acquisition")).hits[0].chunk.path == "README.md"
    assert "Secret Plans/q3.md" in {
        h.chunk.path
        for h in retrieve(index_path, Request("initech acquisition", groups=frozenset({"board"}))).hits
    }


def test_an_index_whose_rules_an_older_parser_read_is_refused(tmp_path: Path) -> None:
    import hashlib
    import sqlite3

    from rag.retrieval.retrieve import Request, retrieve

    repo = write_tree(tmp_path / "r", {**FILES, ".rag-access": ACCESS})
    index_path = ingest(repo).index_path
    with sqlite3.connect(index_path) as conn:  # the digest as the parser before this one recorded it
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = 'access'",
            (f'"{hashlib.sha1(ACCESS.encode()).hexdigest()}"',),
        )
    with pytest.raises(InputError, match="changed since the index was built"):
        retrieve(index_path, Request("password session"))


# --- the stale-index note: what changed, as an index without the caller's unreadable files tells it ---


CALLERS = [
    (frozenset(), ("finance/", "security/")),
    (frozenset({"finance"}), ("security/",)),
    (frozenset({"admins"}), ("finance/",)),
    (frozenset({"finance", "security"}), ()),
]


@pytest.mark.parametrize(("groups", "hidden"), CALLERS, ids=["public", "finance", "admins", "both"])
def test_the_stale_note_names_and_counts_only_what_the_caller_may_read(
    tmp_path: Path, groups, hidden
) -> None:
    from click.testing import CliRunner

    from rag.cli import main

    repo = write_tree(tmp_path / "r", {**FILES, ".rag-access": ACCESS})
    full = ingest(repo).index_path
    reference = reference_index(tmp_path, hidden)
    # a change in every folder; the reference, which lacks the folders the caller may not read, gets the others
    changes = {
        "app/new.txt": "a new file\n",
        "finance/q4.py": "def bonus(): ...\n",
        "security/incident-43.md": "# Incident 43\n",
    }
    write_tree(repo, changes)
    write_tree(reference.parent.parent, {p: t for p, t in changes.items() if not p.startswith(hidden)})
    runner = CliRunner()
    as_ = [a for g in sorted(groups) for a in ("--as", g)]
    # -q: the line naming the repository differs (the reference is another folder); the notes do not
    for question in ["nosuchwordanywhere", "password session", "payroll bank", "leaked password attacker"]:
        got = runner.invoke(main, ["query", "-q", "--no-llm", "--json", "--index", str(full), *as_, question])
        want = runner.invoke(main, ["query", "-q", "--no-llm", "--json", "--index", str(reference), question])
        assert got.exit_code == want.exit_code == 0
        assert got.stderr == want.stderr, question
    assert got.stderr.startswith("Note: ")  # the stale note was there to compare


# --- rag eval: the caller's view, restricted paths reported exactly as absent ones ---------------------

EVAL_QUESTIONS = [
    {
        "id": "login",
        "question": "password session",
        "answers": [{"path": "app/auth.py", "start_line": 1, "end_line": 3}],
    },
    {
        "id": "payroll",
        "question": "payroll bank",
        "answers": [{"path": "finance/payroll.py", "start_line": 1, "end_line": 3}],
    },
    {
        "id": "incident",
        "question": "leaked password attacker",
        "answers": [
            {"path": "security/incidents.md", "start_line": 1, "end_line": 3},
            {"path": "app/billing.py", "start_line": 1, "end_line": 3},
        ],
    },
    {
        "id": "made-up",
        "question": "refund invoice card",
        "answers": [
            {"path": "app/nosuch.py", "start_line": 1, "end_line": 2},
            {"path": "app/billing.py", "start_line": 1, "end_line": 3},
        ],
    },
]


@pytest.mark.parametrize(("groups", "hidden"), CALLERS, ids=["public", "finance", "admins", "both"])
def test_eval_as_a_caller_equals_eval_on_an_index_without_its_unreadable_files(
    tmp_path: Path, groups, hidden
) -> None:
    import json

    from click.testing import CliRunner

    from rag.cli import main

    repo = write_tree(tmp_path / "r", {**FILES, ".rag-access": ACCESS})
    full = ingest(repo).index_path
    reference = reference_index(tmp_path, hidden)
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in EVAL_QUESTIONS))
    runner = CliRunner()
    as_ = [a for g in sorted(groups) for a in ("--as", g)]
    for mode in (["--json", "--misses"], ["--misses"]):
        got = runner.invoke(main, ["eval", str(questions), "--index", str(full), *as_, *mode])
        want = runner.invoke(main, ["eval", str(questions), "--index", str(reference), *mode])
        assert got.exit_code == want.exit_code == 0, got.output
        if mode[0] == "--json":
            got_json, want_json = json.loads(got.stdout), json.loads(want.stdout)
            assert got_json.pop("indexes") != want_json.pop("indexes")
            assert got_json == want_json
            assert {e["path"] for e in got_json["label_errors"]} >= {
                "app/nosuch.py",
                *(
                    e["answers"][0]["path"]
                    for e in EVAL_QUESTIONS
                    if e["answers"][0]["path"].startswith(hidden or "-")
                ),
            }
        else:
            assert got.stdout == want.stdout


def test_eval_refuses_an_index_whose_access_list_changed(tmp_path: Path) -> None:
    import json

    from rag.evaluation import run_eval

    repo = write_tree(tmp_path / "r", {**FILES, ".rag-access": ACCESS})
    index_path = ingest(repo).index_path
    (repo / ".rag-access").write_text("finance/ finance\n")  # security/ is public now, but not in the index
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps(EVAL_QUESTIONS[0]) + "\n")
    with pytest.raises(InputError, match=r"\.rag-access changed since the index at .* was built"):
        run_eval(questions, index_path)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge"])
def test_an_access_list_that_is_not_a_small_regular_file_stops_the_query_in_one_line(
    tmp_path: Path, kind: str
) -> None:
    import os

    from click.testing import CliRunner

    from rag.cli import main

    repo = write_tree(tmp_path / "r", {**FILES, ".rag-access": ACCESS})
    index_path = ingest(repo).index_path
    access = repo / ".rag-access"
    access.unlink()
    if kind == "fifo":
        os.mkfifo(access)  # every query reads it: it must not wait for a writer
    elif kind == "dev-zero":
        access.symlink_to("/dev/zero")
    else:
        access.write_text(ACCESS * 40_000)  # 1.8 MB
    runner = CliRunner()
    for command in (["query", "--no-llm", "--index", str(index_path), "password"], ["ingest", str(repo)]):
        result = runner.invoke(main, command)
        assert result.exit_code == 1
        assert result.output.startswith(f"Error: {access} is ") and result.output.count("\n") == 1


# --- a restricted file in a public folder: no note, no refresh count, no reindex count betrays it ---

PLANS = {"app/plans.md": "# Plans\n\nThe acquisition of initech closes in march.\n"}
# the plans are for admins; so is any other Markdown file in app/
IN_PUBLIC_FOLDER = ACCESS + "app/*.md admins\n"


def stderr_of(index_path: Path, groups: frozenset[str], *args: str) -> list[str]:
    """What `query --no-llm --json --quiet` tells on stderr for each question, seconds masked (the
    index that answered is not named: the reference's lies in another folder)."""
    import re

    from click.testing import CliRunner

    from rag.cli import main

    runner, as_ = CliRunner(), [a for g in sorted(groups) for a in ("--as", g)]
    out = []
    for question in ["nosuchwordanywhere", "password session", "refund invoice card"]:
        done = runner.invoke(
            main,
            ["query", "--no-llm", "--json", "--quiet", "--index", str(index_path), *as_, *args, question],
        )
        assert done.exit_code == 0, done.output
        out.append(re.sub(r"in [0-9.]+ s", "in _ s", done.stderr))
    return out


# the Markdown files of app/ and of its folders are for admins: drafts/ holds nothing else
AT_ANY_DEPTH = ACCESS + "app/**/*.md admins\n"
DRAFTS = {"app/drafts/q3.md": "# Q3\n\nThe initech deal, in draft.\n"}


@pytest.mark.parametrize(
    "change",
    [
        "renamed",
        "deleted",
        "added",
        "its folder deleted",
        "moved into a new folder",
        "added in a new folder",
        "added in a new folder deeper",
    ],
)
def test_a_restricted_file_that_changes_in_a_public_folder_is_never_noted(
    tmp_path: Path, change: str
) -> None:
    from rag.status import status

    repo = write_tree(tmp_path / "r", {**FILES, **PLANS, **DRAFTS, ".rag-access": AT_ANY_DEPTH})
    full = ingest(repo).index_path
    reference = reference_index(tmp_path, ("finance/", "security/"))  # no plans, no drafts, no rules
    if change == "renamed":
        (repo / "app/plans.md").rename(repo / "app/plans-2027.md")
    elif change == "deleted":
        (repo / "app/plans.md").unlink()
    elif change == "added":
        (repo / "app/roadmap.md").write_text("# Roadmap\n")
    elif change == "its folder deleted":
        (repo / "app/drafts/q3.md").unlink()
        (repo / "app/drafts").rmdir()
    elif change == "moved into a new folder":
        (repo / "app/archive").mkdir()
        (repo / "app/plans.md").rename(repo / "app/archive/plans.md")
    else:
        deeper = "/2027" if change.endswith("deeper") else ""
        write_tree(repo, {f"app/notes{deeper}/board.md": "# Board\n"})
    assert stderr_of(full, frozenset()) == stderr_of(reference, frozenset()) == ["", "", ""]
    assert status(full).stale == status(reference).stale == []
    # an admin reads the file: the change is noted to them
    assert stderr_of(full, frozenset({"admins"}))[0].startswith("Note: ")
    # a refresh re-indexes it, and tells the public caller what it would without the file
    assert stderr_of(full, frozenset(), "--refresh") == stderr_of(reference, frozenset(), "--refresh")


@pytest.mark.parametrize(
    "edited", [("app/plans.md",), ("app/plans.md", "app/billing.py")], ids=["restricted", "both"]
)
def test_a_refresh_reports_what_an_index_without_the_restricted_files_would(
    tmp_path: Path, edited: tuple[str, ...]
) -> None:
    from rag.indexing.pipeline import reingest

    repo = write_tree(tmp_path / "r", {**FILES, **PLANS, ".rag-access": IN_PUBLIC_FOLDER})
    full = ingest(repo).index_path
    # the same rules, without the files they restrict
    public = {p: t for p, t in FILES.items() if not p.startswith(("finance/", "security/"))}
    reference = ingest(
        write_tree(tmp_path / "reference", {**public, ".rag-access": IN_PUBLIC_FOLDER})
    ).index_path
    for path in edited:
        write_tree(repo, {path: "def edited():\n    return 2027\n"})
        if path in FILES:
            write_tree(reference.parent.parent, {path: "def edited():\n    return 2027\n"})
    got = stderr_of(full, frozenset(), "--refresh")
    assert got == stderr_of(reference, frozenset(), "--refresh")
    assert got[0] == (
        "Refreshed: the index is up to date\n"
        if len(edited) == 1
        else "Refreshed: re-indexed 1 changed or new file(s), 2 unchanged, in _ s\n"
    )
    # the same for the MCP server's reindex, once more after a further edit
    for path in edited:
        write_tree(repo, {path: "def edited():\n    return 2028\n"})
        if path in FILES:
            write_tree(reference.parent.parent, {path: "def edited():\n    return 2028\n"})
    mine, theirs = reingest(full), reingest(reference)
    fields = ("files", "chunks", "skipped", "reused", "redacted", "up_to_date", "changed", "deleted")
    assert [getattr(mine, f) for f in fields] == [getattr(theirs, f) for f in fields]
    assert mine.up_to_date is (len(edited) == 1)
