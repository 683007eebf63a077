"""`rag related PATH:LINE` and the MCP tool `related`: the passages most like the one holding a line,
on a small repository whose answers are known: two files about retrying with backoff, one about
invoices. The source passage never comes back; a file the caller may not read is "not in the index"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write_tree

from rag import InputError, ingest, related
from rag.cli import main
from rag.indexing.pipeline import IngestOptions
from rag.text.tokenizer import TokenizerSettings

RETRY = (
    "import random\n"  # 1
    "import time\n"
    "\n"
    "\n"
    "def backoff_delay(attempt, base_delay=0.5, max_delay=30.0):\n"  # 5
    '    """Return the exponential backoff delay before retry `attempt`, with full jitter."""\n'
    "    ceiling = min(max_delay, base_delay * 2 ** attempt)\n"
    "    return random.uniform(0, ceiling)\n"  # 8: backoff_delay is lines 1-8
    "\n"
    "\n"
    "def parse_retry_after(header):\n"  # 11
    '    """Read a Retry-After header given in seconds; None when it is absent or not a number."""\n'
    "    if header is None or not header.strip().isdigit():\n"
    "        return None\n"
    "    return int(header.strip())\n"  # 15: parse_retry_after is lines 11-15
    "\n"
    "\n"  # 17: the last line, blank
)
FILES = {
    "net/retry.py": RETRY,
    "net/polling.py": "import random\nimport time\n\n\n"
    "def poll_until(check, attempts=8, base_delay=0.5, max_delay=30.0):\n"
    '    """Call `check` until it returns true, sleeping an exponential backoff delay with jitter."""\n'
    "    for attempt in range(attempts):\n"
    "        if check():\n"
    "            return True\n"
    "        ceiling = min(max_delay, base_delay * 2 ** attempt)\n"
    "        time.sleep(random.uniform(0, ceiling))\n"
    "    return False\n",
    "report/totals.py": "from decimal import Decimal\n\n\n"
    "def invoice_total(lines):\n"
    '    """Sum the amounts of an invoice\'s lines, rounded to cents."""\n'
    '    return sum((Decimal(line.amount) for line in lines), Decimal("0")).quantize(Decimal("0.01"))\n'
    "\n\n"
    'def format_currency(amount, symbol="EUR"):\n'
    '    """Format an amount of money for a printed report."""\n'
    '    return f"{amount:,.2f} {symbol}"\n',
}
# a restricted copy of the topic, closer to backoff_delay than anything public
SECRET = {
    "secret/backoff.py": "import random\n\n\n"
    "def backoff_delay_with_jitter(attempt, base_delay=0.5, max_delay=30.0):\n"
    '    """Return the exponential backoff delay before retry `attempt`, with full jitter."""\n'
    "    ceiling = min(max_delay, base_delay * 2 ** attempt)\n"
    "    return random.uniform(0, ceiling)\n",
}
ACCESS = "secret/ ops\n"


def build(root: Path, files: dict[str, str | bytes]) -> Path:
    return ingest(write_tree(root, files), options=IngestOptions(workers=1)).index_path


@pytest.fixture
def index(tmp_path: Path) -> Path:
    return build(tmp_path / "repo", FILES)


def places(hits: list) -> list[tuple[str, int, int]]:
    return [(h.chunk.path, h.chunk.start_line, h.chunk.end_line) for h in hits]


@pytest.mark.parametrize("scoring", ["bm25", "tfidf"])
def test_the_file_on_the_same_topic_comes_first(index: Path, scoring: str) -> None:
    got = related(index, "net/retry.py", 7, groups=frozenset(), scoring=scoring, rerank="none")
    source = got.source
    assert (source.path, source.start_line, source.end_line, source.symbol) == (
        "net/retry.py",
        1,
        8,
        "backoff_delay",
    )
    hits = got.found.hits
    assert hits[0].chunk.path == "net/polling.py" and hits[0].chunk.symbol == "poll_until"
    # the invoices share almost nothing with a backoff delay: last, if there at all
    assert all(h.chunk.path != "report/totals.py" for h in hits[:2])


def test_the_source_passage_and_what_overlaps_it_never_come_back(index: Path) -> None:
    # parse_retry_after's best match is backoff_delay (lines 1-8), whose passage would grow over
    # lines 11-15 if nothing kept it clear of the source
    hits = related(index, "net/retry.py", 12, rerank="none").found.hits
    assert places(hits)[0] == ("net/retry.py", 1, 8)
    assert all(
        not (h.chunk.path == "net/retry.py" and h.chunk.start_line <= 15 and h.chunk.end_line >= 11)
        for h in hits
    )
    for line in (1, 5, 8):
        assert all(
            not (h.chunk.path == "net/retry.py" and h.chunk.start_line <= 8)
            for h in related(index, "net/retry.py", line, k=10, rerank="none").found.hits
        )


# one definition long enough to be cut in three overlapping windows: lines 1-50, 41-90 and 81-103
SCHEDULE = "\n".join(
    [
        "def retry_schedule(base_delay, max_delay):",
        '    """Every backoff delay of a retry schedule, one by one."""',
        *["    delays.append(min(max_delay, base_delay * 2 ** len(delays)))  # the next retry's backoff"]
        * 100,
        "    return delays\n",
    ]
)


@pytest.mark.parametrize("tokenizer", ["code", "plain"])
def test_windows_overlapping_the_source_never_come_back(tmp_path: Path, tokenizer: str) -> None:
    root = write_tree(tmp_path / "w", {**FILES, "schedule.py": SCHEDULE})
    index = ingest(root, options=IngestOptions(TokenizerSettings(mode=tokenizer), workers=1)).index_path
    # line 45 is in the first two windows: the first holds it; only the third does not overlap it
    got = related(index, "schedule.py", 45, k=10, rerank="none")
    assert (got.source.start_line, got.source.end_line) == (1, 50)
    assert places(got.found.hits)[0] == ("schedule.py", 81, 103)
    assert [p for p in places(got.found.hits) if p[0] == "schedule.py"] == [("schedule.py", 81, 103)]
    middle = related(index, "schedule.py", 60, k=10, rerank="none")  # both others overlap lines 41-90
    assert middle.found.hits and all(h.chunk.path != "schedule.py" for h in middle.found.hits)


@pytest.mark.parametrize(
    ("line", "symbol"),
    [(9, "backoff_delay"), (10, "parse_retry_after"), (16, "parse_retry_after"), (17, "parse_retry_after")],
    ids=["after-the-first", "before-the-second", "after-the-last", "the-blank-last-line"],
)
def test_a_line_between_passages_takes_the_nearest(index: Path, line: int, symbol: str) -> None:
    assert related(index, "net/retry.py", line, rerank="none").source.symbol == symbol


def test_every_way_of_naming_the_file_finds_it(index: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = index.parent.parent
    expected = places(related(index, "net/retry.py", 7, rerank="none").found.hits)
    for path, cwd in [
        ("./net/retry.py", None),
        (str(root / "net" / "retry.py"), None),  # absolute, under the root
        ("retry.py", root / "net"),  # relative to the current folder inside the repository
        ("../net/retry.py", root / "report"),
    ]:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        assert places(related(index, path, 7, rerank="none").found.hits) == expected, path


def test_inside_the_repository_a_path_is_the_shells_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = build(tmp_path / "repo", {**FILES, "__init__.py": "ROOT = 1\n", "net/__init__.py": "NET = 1\n"})
    monkeypatch.chdir(tmp_path / "repo" / "net")
    assert related(index, "__init__.py", 1, rerank="none").source.path == "net/__init__.py"
    monkeypatch.chdir(tmp_path)  # outside it: relative to the root
    assert related(index, "__init__.py", 1, rerank="none").source.path == "__init__.py"


def test_results_and_scores_are_those_of_an_index_without_the_restricted_files(tmp_path: Path) -> None:
    full = build(tmp_path / "full", {**FILES, **SECRET, ".rag-access": ACCESS})
    without = build(tmp_path / "without", FILES)

    def listed(index: Path, groups: frozenset[str], scoring: str) -> list[tuple[str, int, int, float]]:
        hits = related(
            index, "net/retry.py", 7, k=10, groups=groups, scoring=scoring, rerank="none"
        ).found.hits
        return [(*p, h.score) for p, h in zip(places(hits), hits)]

    for scoring in ("bm25", "tfidf"):
        public = listed(full, frozenset(), scoring)
        assert public == listed(
            without, frozenset(), scoring
        )  # the idf of the caller's view: to the last bit
        assert all(not p.startswith("secret/") for p, *_ in public)
        member = listed(full, frozenset({"ops"}), scoring)
        assert member[0][0] == "secret/backoff.py"  # the restricted file did matter


def test_a_restricted_file_is_not_in_the_index_in_the_same_words_as_a_missing_one(tmp_path: Path) -> None:
    root = tmp_path / "full"
    full = build(root, {**FILES, **SECRET, ".rag-access": ACCESS})

    def error(*args: str) -> tuple[int, str]:
        done = CliRunner().invoke(main, ["related", "--index", str(full), "--rerank", "none", *args])
        assert done.stdout == ""
        return done.exit_code, done.stderr

    restricted, missing = error("secret/backoff.py:2"), error("secret/nothere.py:2")
    assert restricted == (
        1,
        f"Error: secret/backoff.py is not in the index; name an indexed file by its path in {root} "
        f"(or re-run `rag ingest {root}` if it is new)\n",
    )
    assert restricted[1] == missing[1].replace("secret/nothere.py", "secret/backoff.py")
    # its length is not told either, nor does an absolute path reach it
    assert error("secret/backoff.py:999") == restricted
    assert error(f"{root}/secret/backoff.py:2")[1] == restricted[1].replace(
        "secret/backoff.py is", f"{root}/secret/backoff.py is"
    )
    member = CliRunner().invoke(main, ["related", "--index", str(full), "--as", "ops", "secret/backoff.py:2"])
    assert member.exit_code == 0 and member.stdout.startswith("1. ")
    with pytest.raises(InputError, match=r"^secret/backoff\.py is not in the index; "):
        related(full, "secret/backoff.py", 2, rerank="none")


@pytest.mark.parametrize(
    ("location", "code", "message"),
    [
        (
            "net/retry.py",
            2,
            "Error: Invalid value for 'PATH:LINE': 'net/retry.py' names no line; give PATH:LINE, "
            "e.g. net/retry.py:1 — see `rag related --help`",
        ),
        (
            "net/retry.py:abc",
            2,
            "Error: Invalid value for 'PATH:LINE': 'abc' in 'net/retry.py:abc' is not a line number; "
            "lines count from 1 — see `rag related --help`",
        ),
        (
            "net/retry.py:0",
            2,
            "Error: Invalid value for 'PATH:LINE': '0' in 'net/retry.py:0' is not a line number; "
            "lines count from 1 — see `rag related --help`",
        ),
        (
            ":7",
            2,
            "Error: Invalid value for 'PATH:LINE': ':7' names no file; give PATH:LINE, e.g. src/app.py:7 "
            "— see `rag related --help`",
        ),
        ("net/retry.py:18", 1, "Error: net/retry.py has 17 lines; give a line from 1 to 17"),
        (
            "net/nothere.py:1",
            1,
            "Error: net/nothere.py is not in the index; name an indexed file by its path in",
        ),
    ],
    ids=["no-colon", "not-a-number", "zero", "no-path", "past-the-end", "not-indexed"],
)
def test_bad_input_is_one_line_and_its_exit_code(index: Path, location: str, code: int, message: str) -> None:
    done = CliRunner().invoke(main, ["related", "--index", str(index), location], prog_name="rag")
    assert done.exit_code == code
    assert done.stdout == ""
    assert done.stderr.startswith(message) and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


def test_text_output_is_searchs_passage_format(index: Path) -> None:
    done = CliRunner().invoke(main, ["related", "--index", str(index), "-k", "1", "net/retry.py:7"])
    assert done.exit_code == 0, done.output
    assert done.stderr == (
        f"Searching {index.parent.parent.resolve()}\nLike net/retry.py:1-8 backoff_delay (function)\n"
    )
    head, *body = done.stdout.splitlines()
    assert head == "1. net/polling.py:1-12 poll_until (function)"
    assert body[4] == "   5 | def poll_until(check, attempts=8, base_delay=0.5, max_delay=30.0):"


def test_json_holds_the_source_and_searchs_passages(index: Path) -> None:
    done = CliRunner().invoke(main, ["related", "--index", str(index), "--json", "-k", "2", "net/retry.py:7"])
    assert done.exit_code == 0, done.output
    got = json.loads(done.stdout)
    assert list(got) == ["source", "results", "index", "repository", "corrections"]
    assert got["source"] == {
        "path": "net/retry.py",
        "start_line": 1,
        "end_line": 8,
        "chunk": 0,
        "kind": "function",
        "symbol": "backoff_delay",
        "text": RETRY[: RETRY.index("\n\n\ndef parse")],
    }
    assert [r["rank"] for r in got["results"]] == [1, 2] and got["results"][0]["path"] == "net/polling.py"
    query = CliRunner().invoke(main, ["query", "--index", str(index), "--no-llm", "--json", "backoff"])
    assert list(got["results"][0]) == list(json.loads(query.stdout)["results"][0])
    assert (got["index"], got["repository"]) == (str(index), str(index.parent.parent.resolve()))


def test_a_passage_whose_words_no_other_holds_lists_nothing(tmp_path: Path) -> None:
    index = build(tmp_path / "r", {**FILES, "zoo.txt": "Quagga okapi.\n"})
    done = CliRunner().invoke(main, ["related", "-q", "--index", str(index), "zoo.txt:1"])
    assert (done.exit_code, done.stdout) == (0, "No other passage shares the words of this one.\n")
    assert done.stderr == "Like zoo.txt:1-1\n"


def test_the_semantic_stage_ranks_by_cosine_to_the_source_passage(index: Path) -> None:
    pytest.importorskip("onnxruntime")  # the semantic extra
    from rag.semantic.model import load
    from rag.semantic.vectors import passage_text

    got = related(index, "net/retry.py", 7, k=2, rerank="semantic")  # passages of one chunk each: as embedded
    hits = got.found.hits
    assert places(hits)[0][0] == "net/polling.py" and got.found.note is None
    vectors = load().embed([passage_text(got.source), *(passage_text(h.chunk) for h in hits)])
    for row, hit in enumerate(hits, 1):
        assert hit.semantic == pytest.approx(float(vectors[0] @ vectors[row]), abs=1e-5)
    assert all(not (h.chunk.path == "net/retry.py" and h.chunk.start_line <= 8) for h in hits)


def test_the_mcp_tool_answers_as_the_command_does(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp_client import payload, server, session_run

    full = build(tmp_path / "full", {**FILES, **SECRET, ".rag-access": ACCESS})
    tools, (found, restricted, missing, past_end, bad_line) = session_run(
        server("--index", str(full)),
        [
            ("related", {"path": "net/retry.py", "line": 7, "k": 2}),
            ("related", {"path": "secret/backoff.py", "line": 2}),
            ("related", {"path": "secret/nothere.py", "line": 2}),
            ("related", {"path": "net/retry.py", "line": 99}),
            ("related", {"path": "net/retry.py", "line": 0}),
        ],
    )
    assert "related" in tools
    got = payload(found)
    assert got["source"]["symbol"] == "backoff_delay"
    cli = CliRunner().invoke(
        main, ["related", "--index", str(full), "--json", "--rerank", "auto", "-k", "2", "net/retry.py:7"]
    )
    assert got == {**json.loads(cli.stdout), "notes": []}  # `rag related --json`'s object, and its notes
    assert all(not p["path"].startswith("secret/") for p in got["results"])
    assert restricted.is_error and missing.is_error
    said = restricted.content[0].text
    assert said == missing.content[0].text.replace("secret/nothere.py", "secret/backoff.py")
    assert said.endswith(
        "secret/backoff.py is not in the index; name an indexed file by its path in "
        f"{tmp_path / 'full'} (or re-run `python -m rag ingest {tmp_path / 'full'}` if it is new)"
    )
    assert past_end.is_error and past_end.content[0].text.endswith(
        "net/retry.py has 17 lines; give a line from 1 to 17"
    )
    assert bad_line.is_error and bad_line.content[0].text.endswith(
        "line 0 is not a line number — lines count from 1"
    )
    _, (member,) = session_run(
        server("--index", str(full), "--as", "ops"),
        [("related", {"path": "net/retry.py", "line": 7, "k": 1})],
    )
    assert payload(member)["results"][0]["path"] == "secret/backoff.py"


def test_a_passage_ranked_up_says_why_without_naming_a_question(tmp_path: Path) -> None:
    """File coherence ranks a passage of many.py, whose file holds four like the source, above a
    passage of one.py that scores a little more: the reason names the passage, not a question."""
    names = [
        "alpha",
        "bravo",
        "charlie",
        "delta",
        "echo",
        "foxtrot",
        "golf",
        "hotel",
        "india",
        "juliet",
        "kilo",
        "lima",
        "mike",
    ]

    def body(i: int) -> str:  # 40 lines unlike every other file's
        return "".join(
            f"    {names[(i * 7 + j) % 13]}_{j} = {names[(i * 3 + j) % 13]}{i}(value)\n" for j in range(40)
        )

    index = build(
        tmp_path / "r",
        {
            "src/source.py": "def check_packet(packet, checksum, window):\n"
            '    """Verify a packet checksum inside a sliding window."""\n'
            "    return verify(packet, checksum) and window.ok(packet)\n",
            "net/many.py": "".join(
                f'def handler_{i}(packet, checksum):\n    """Validate the packet checksum."""\n{body(i)}'
                "    return verify(packet, checksum)\n\n\n"
                for i in range(4)
            ),
            "net/one.py": 'def handler_x(packet, checksum):\n    """Validate the packet checksum, checksum."""\n'
            f"{body(9)}    return verify(packet, checksum)\n",
        },
    )
    done = CliRunner().invoke(
        main, ["related", "--index", str(index), "--json", "-k", "3", "src/source.py:1"]
    )
    results = json.loads(done.stdout)["results"]
    assert [(r["path"], r["boosted"]) for r in results] == [
        ("net/many.py", "its file holds much of the code like this passage"),
        ("net/one.py", None),
        ("net/many.py", None),
    ]
    assert results[0]["score"] < results[1]["score"]
    text = CliRunner().invoke(main, ["related", "--index", str(index), "-k", "3", "src/source.py:1"])
    assert "its file holds much of the code like this passage" in text.stdout
    assert "question" not in text.stdout
