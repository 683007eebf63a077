"""Passages shaped for answers: each result is a match (the chunk that scored, its own lines) and a
context (the match grown over its file's neighbouring windows up to grow_chars); the matches of a
list are distinct, and a match an earlier context already shows comes after those that show new
lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import write_tree

from rag import Index, IngestOptions, TokenizerSettings, ingest
from rag.ranking.passages import distinct_passages, grown
from rag.retrieval.retrieve import rank_question
from rag.weights import DEFAULTS


def _function(name: str, topic: str) -> str:
    """A 10-line function about `topic` (lines: def, docstring, 7 body lines, blank)."""
    body = "".join(f"    step_{i} = {name}_{i}({topic!r})\n" for i in range(7))
    return f"def {name}():\n    '''Handle the {topic} of one request and return its value.'''\n{body}\n"


TOPICS = ["cookies", "headers", "redirects", "timeouts", "proxies"]
SOURCE = "".join(_function(f"handle_{t}", t) for t in TOPICS)  # function n spans lines 10n+1 .. 10n+9


def test_a_hit_grows_over_the_functions_around_it(tmp_path: Path) -> None:
    report = ingest(write_tree(tmp_path / "r", {"client.py": SOURCE}))
    with Index(report.index_path) as index:
        hits, _ = rank_question(index, "how are redirects handled", 4)
    # the redirects function (lines 21-29) is the match; its neighbours before and after join its
    # context while it stays within DEFAULTS.grow_chars, alternately: headers (11-19), timeouts
    # (31-39), cookies, proxies
    assert len(SOURCE) <= DEFAULTS.grow_chars
    [hit] = hits
    assert (hit.chunk.path, hit.chunk.start_line, hit.chunk.end_line, hit.chunk.symbol) == (
        "client.py",
        21,
        29,
        "handle_redirects",
    )
    assert (hit.passage.start_line, hit.passage.end_line) == (1, 49)
    assert hit.passage.text == SOURCE.rstrip("\n")  # the blank lines between the functions kept


def test_growth_stops_at_the_size_limit(tmp_path: Path) -> None:
    groups = ("alpha", "bravo", "charlie", "delta")
    big = "".join(_function(f"handle_{t}_{g}", f"{t} {g}") for g in groups for t in TOPICS)  # 20 functions
    report = ingest(write_tree(tmp_path / "r", {"client.py": big}))
    with Index(report.index_path) as index:
        hits, _ = rank_question(index, "how are redirects charlie handled", 4)
        top, window = hits[0].passage, hits[0].chunk
    assert window.symbol == "handle_redirects_charlie"
    # it grew on both sides of its own lines, and one more neighbour would pass the limit
    assert top.start_line < window.start_line and top.end_line > window.end_line
    assert len(top.text) <= DEFAULTS.grow_chars < len(top.text) + len(window.text)


# five functions of distinct words (not near-duplicates, which the ranking drops), 10 lines each
DISTINCT = "".join(
    f"def handle_{topic}(request):\n"
    f'    """Handle the {topic} of one request."""\n'
    + "".join(f"    {word}_{i} = request.{word}{i}\n" for i, word in enumerate(words))
    + "\n"
    for topic, words in [
        ("cookies", ["jar", "crumb", "session", "expiry", "domain", "secure", "samesite"]),
        ("headers", ["accept", "agent", "encoding", "language", "origin", "referer", "vary"]),
        ("redirects", ["location", "hops", "loop", "permanent", "temporary", "history", "method"]),
        ("timeouts", ["connect", "read", "deadline", "retry", "backoff", "budget", "clock"]),
        ("proxies", ["tunnel", "socks", "bypass", "environ", "auth", "scheme", "pool"]),
    ]
)


def test_a_match_an_earlier_context_shows_comes_after_new_places(tmp_path: Path) -> None:
    files = {
        "client.py": DISTINCT,
        "docs/redirects.md": "# Redirects\n\nHow redirects are handled and followed.\n",
    }
    report = ingest(write_tree(tmp_path / "r", files))
    with Index(report.index_path) as index:
        hits, _ = rank_question(index, "how are redirects and headers handled", 4)
    # the headers and redirects functions both match: two results, never merged into one; the
    # second one's lines are on show in the first's context, so the docs page comes before it
    matches = [(h.chunk.path, h.chunk.start_line, h.chunk.end_line) for h in hits]
    assert matches[:3] == [("docs/redirects.md", 1, 3), ("client.py", 11, 19), ("client.py", 21, 29)]
    _, headers, redirects, *_ = hits
    assert (headers.passage.start_line, headers.passage.end_line) == (1, 49)
    # the redirects function is on show in the headers' context: listed after, its own lines its context
    assert redirects.passage == redirects.chunk


def test_k_distinct_matches_whenever_the_index_holds_them(tmp_path: Path) -> None:
    report = ingest(write_tree(tmp_path / "r", {"client.py": DISTINCT}))
    with Index(report.index_path) as index:
        hits, _ = rank_question(index, "handle one request", 4, rerank="none")
    # the five functions all hold the words: four distinct matches, each its own function
    assert len(hits) == 4
    assert len({h.chunk.start_line for h in hits}) == 4
    assert all((h.chunk.end_line - h.chunk.start_line) == 8 for h in hits)


def test_the_plain_design_keeps_its_windows(tmp_path: Path) -> None:
    options = IngestOptions(settings=TokenizerSettings(mode="plain"))
    report = ingest(write_tree(tmp_path / "r", {"client.py": SOURCE}), options=options)
    with Index(report.index_path) as index:
        hits, _ = rank_question(index, "how are redirects handled", 4)
    assert [(h.chunk.start_line, h.chunk.end_line) for h in hits][0] == (21, 29)


def test_shape_keeps_a_lone_window(tmp_path: Path) -> None:
    report = ingest(write_tree(tmp_path / "r", {"one.py": _function("only", "cookies")}))
    with Index(report.index_path) as index:
        (hit,) = rank_question(index, "cookies", 4, rerank="none")[0]
        assert grown(index, hit.chunk) == hit.chunk
        assert distinct_passages(index, [hit, hit], 4) == [hit]


WIDGET = (
    "export function parseThing(text: string): Thing {\n"  # 1
    "  const parts = text.split(',');\n"
    "  const head = parts[0];\n"
    "  return { head, rest: parts.slice(1) };\n"
    "}\n"  # 5
    "\n"
    "export class Renderer {\n"  # 7
    "  constructor(private canvas: Canvas) {}\n"
    "  draw(thing: Thing): void { this.canvas.fill(thing.head); }\n"
    "  clear(): void { this.canvas.reset(); }\n"
    "}\n"  # 11
    "\n"
    "export function renderWidget(thing: Thing): string {\n"  # 13
    "  return quokka(thing.head) + thing.rest.join(' ');\n"
    "}\n"  # 15
)


def test_a_result_names_its_own_match_and_shows_its_context_numbered(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from rag.cli import main

    index = ingest(write_tree(tmp_path / "r", {"widget.ts": WIDGET})).index_path
    result = CliRunner().invoke(
        main, ["query", "--index", str(index), "--no-llm", "--full", "-k", "1", "quokka"]
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "1. widget.ts:13-15 renderWidget (function)"
    assert lines[1] == "   matched quokka"
    assert lines[2] == "   1 | export function parseThing(text: string): Thing {"  # the context, numbered
    assert "> 14 |   return quokka(thing.head) + thing.rest.join(' ');" in lines  # the matched line marked
    assert sum(line.startswith(">") for line in lines) == 1
    as_json = CliRunner().invoke(
        main, ["query", "--index", str(index), "--no-llm", "--json", "-k", "1", "quokka"]
    )
    [found] = json.loads(as_json.stdout)["results"]
    assert (found["start_line"], found["end_line"], found["symbol"], found["kind"]) == (
        13,
        15,
        "renderWidget",
        "function",
    )
    assert (found["context_start_line"], found["context_end_line"]) == (1, 15)
    assert (
        found["text"] == WIDGET.rstrip("\n")
        and found["marked_lines"] == [14]
        and found["matched"] == ["quokka"]
    )


def test_a_file_of_three_definitions_gives_three_results(tmp_path: Path) -> None:
    report = ingest(write_tree(tmp_path / "r", {"widget.ts": WIDGET}))
    with Index(report.index_path) as index:
        hits, _ = rank_question(index, "thing head", 4, rerank="none")
    assert sorted((h.chunk.start_line, h.chunk.end_line, h.chunk.symbol) for h in hits) == [
        (1, 5, "parseThing"),
        (7, 11, "Renderer"),
        (13, 15, "renderWidget"),
    ]


# a definition asked for by a word only it holds is the top match with its own exact span, in a
# class too large to be one passage (over DEFINITION_MAX_CHARS: its members are chunked apart)
FILLERS = ["opening", "balance", "currency", "ledgerName", "auditor", "fiscalYear", "rounding", "region"]
METHOD = {
    "go": "// {doc}\nfunc (l *Ledger) {name}(value int) int {{\n\tresult := value + len(l.entries)\n\treturn result\n}}\n",
    "rust": "    /// {doc}\n    pub fn {name}(&mut self, value: u32) -> usize {{\n        let result = value as usize;\n        result\n    }}\n",
    "java": "    /** {doc} */\n    public int {name}(int value) {{\n        int result = value + entries.size();\n        return result;\n    }}\n",
    "ruby": "  # {doc}\n  def {name}(value)\n    result = value + @entries.size\n    result\n  end\n",
}
FRAME = {
    "go": ("ledger.go", "package ledger\n\n", ""),
    "rust": ("ledger.rs", "impl Ledger {\n", "}\n"),
    "java": ("Ledger.java", "public class Ledger {\n", "}\n"),
    "ruby": ("ledger.rb", "class Ledger\n", "end\n"),
}


def _ledger(language: str) -> tuple[str, str, tuple[int, int]]:
    """A file of one class (a Go file of methods) whose fifth member alone speaks of archives."""
    name, head, tail = FRAME[language]
    members = [
        METHOD[language].format(doc=f"Reports the {word} of the ledger for the given value.", name=word)
        for word in FILLERS
    ]
    purge = METHOD[language].format(doc="Drops archived entries older than the cutoff.", name="purgeArchive")
    members.insert(4, purge)
    text = head + "\n".join(members) + tail
    start = text[: text.index(purge)].count("\n") + 1
    return name, text, (start, start + purge.count("\n") - 1)


@pytest.mark.parametrize("language", sorted(FRAME))
def test_a_definition_is_its_own_match_in_each_language(tmp_path: Path, language: str) -> None:
    pytest.importorskip("tree_sitter")  # the languages extra
    name, text, (start, end) = _ledger(language)
    assert len(text) > 1200  # too large to be one passage
    report = ingest(write_tree(tmp_path / "r", {name: text}))
    with Index(report.index_path) as index:
        hits, _ = rank_question(index, "archived cutoff", 4, rerank="none")
    assert (hits[0].chunk.path, hits[0].chunk.start_line, hits[0].chunk.end_line) == (name, start, end)
    assert hits[0].chunk.symbol is not None and hits[0].chunk.symbol.endswith("purgeArchive")
