"""Passages shaped for answers: a hit grows over its file's neighbouring windows up to grow_chars,
and a hit that an earlier passage covers makes way for the next place."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from rag import Index, IngestOptions, TokenizerSettings, ingest
from rag.retrieval.passages import grown, shape
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
        chunks = [h.chunk for h in hits]
    # the redirects function (lines 21-29) is the hit; its neighbours before and after join it while
    # the passage stays within DEFAULTS.grow_chars, alternately: headers (11-19), timeouts (31-39), cookies, proxies
    assert len(SOURCE) <= DEFAULTS.grow_chars
    assert [(c.path, c.start_line, c.end_line, c.symbol) for c in chunks] == [
        ("client.py", 1, 49, "handle_redirects")
    ]
    assert chunks[0].text == SOURCE.rstrip("\n")  # the blank lines between the functions kept


def test_growth_stops_at_the_size_limit(tmp_path: Path) -> None:
    groups = ("alpha", "bravo", "charlie", "delta")
    big = "".join(_function(f"handle_{t}_{g}", f"{t} {g}") for g in groups for t in TOPICS)  # 20 functions
    report = ingest(write_tree(tmp_path / "r", {"client.py": big}))
    with Index(report.index_path) as index:
        hits, _ = rank_question(index, "how are redirects charlie handled", 4)
        top = hits[0].chunk
        alone = index.chunks([index.file_chunk_ids("client.py")[top.ordinal]])
    (window,) = alone.values()
    assert top.symbol == "handle_redirects_charlie" and window.symbol == top.symbol
    # it grew on both sides of its own lines, and one more neighbour would pass the limit
    assert top.start_line < window.start_line and top.end_line > window.end_line
    assert len(top.text) <= DEFAULTS.grow_chars < len(top.text) + len(window.text)


def test_a_covered_hit_makes_way_for_the_next_place(tmp_path: Path) -> None:
    files = {
        "client.py": SOURCE,
        "docs/redirects.md": "# Redirects\n\nHow redirects are handled and followed.\n",
    }
    report = ingest(write_tree(tmp_path / "r", files))
    with Index(report.index_path) as index:
        hits, _ = rank_question(index, "how are redirects and headers handled", 4)
        places = [(h.chunk.path, h.chunk.start_line, h.chunk.end_line) for h in hits]
    # the headers and redirects functions are both hits of client.py: one passage covers them both
    assert places == [("client.py", 1, 49), ("docs/redirects.md", 1, 3)]


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
        assert shape(index, [hit, hit], 4) == [hit]
