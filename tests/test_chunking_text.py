"""The paragraph chunker: spans checked line by line."""

from __future__ import annotations

import pytest

from rag.chunking import chunk_file
from rag.chunking.base import MAX_CHARS
from rag.chunking.text import chunk_text

NOTES = """\
Deployment notes

The service runs behind a load balancer that terminates TLS and forwards plain HTTP to
each instance on port 8080, so the application itself never sees certificates or keys.
Health checks hit /healthz every ten seconds.

Rollbacks are done by re-deploying the previous image tag. The deploy script keeps the
last five tags in the registry and refuses to delete a tag that is still running anywhere,
which means an old tag can linger for days after a rollout.

Thanks,
Ops
"""


def spans(chunks):
    return [(c.start_line, c.end_line) for c in chunks]


def test_short_heading_merges_forward_and_signoff_joins_last_passage() -> None:
    chunks = chunk_text("NOTES.txt", NOTES)
    # "Deployment notes" (2 words) merges into the first paragraph; "Thanks, Ops" joins the last.
    assert spans(chunks) == [(1, 5), (7, 12)]
    assert chunks[0].text.startswith("Deployment notes\n\nThe service")
    assert chunks[0].text.endswith("every ten seconds.")
    assert chunks[1].text.endswith("Thanks,\nOps")
    assert all(c.kind == "text" and c.symbol is None for c in chunks)


def test_text_is_the_exact_source_of_the_span() -> None:
    lines = NOTES.split("\n")
    for c in chunk_text("NOTES.txt", NOTES):
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])


def test_long_paragraph_is_windowed_with_overlap() -> None:
    # 300 words, 10 per line, on lines 1..30
    words = [f"w{i}" for i in range(300)]
    text = "\n".join(" ".join(words[i : i + 10]) for i in range(0, 300, 10)) + "\n"
    chunks = chunk_text("long.txt", text)
    # windows of 120 words stepping 90: words 0-119, 90-209, 180-299 (the 0-word tail is absorbed)
    assert [c.text.split()[0] for c in chunks] == ["w0", "w90", "w180"]
    assert [len(c.text.split()) for c in chunks] == [120, 120, 120]
    assert spans(chunks) == [(1, 12), (10, 21), (19, 30)]


def test_short_tail_window_joins_the_previous_window() -> None:
    words = [f"w{i}" for i in range(225)]  # 0-119, then 90-224: the last 15 words would be a stub
    chunks = chunk_text("t.txt", " ".join(words))
    assert [len(c.text.split()) for c in chunks] == [120, 135]


def test_file_shorter_than_the_merge_threshold_is_one_chunk() -> None:
    chunks = chunk_text("refunds.txt", "Refunds go back to the original card.\n")
    assert spans(chunks) == [(1, 1)]


def test_blank_and_empty_files_give_no_chunks() -> None:
    assert chunk_text("e.txt", "") == []
    assert chunk_text("e.txt", "\n\n   \n") == []


def test_every_non_blank_line_is_covered() -> None:
    text = "\n".join(f"line {i} " + "word " * (i % 40) for i in range(200)) + "\n\n\nend\n"
    covered = set()
    for c in chunk_text("x.txt", text):
        covered.update(range(c.start_line, c.end_line + 1))
    lines = text.split("\n")
    assert {i + 1 for i, line in enumerate(lines) if line.strip()} <= covered


@pytest.mark.parametrize("name", ["notes", "notes.txt", "notes.rst"])
def test_very_long_line_is_cut_by_characters_whatever_the_text_file_type(name: str) -> None:
    # a .txt or .rst file without titles is chunked as paragraphs: a data dump on one line
    # must be cut like any other text, not become one 50 KB passage
    text = "Intro.\n\n" + ",".join(map(str, range(10000))) + "\n"  # 49 KB, no blank to cut at
    chunks = chunk_file(name, text)
    assert len(chunks) > 20
    assert max(len(c.text) for c in chunks) <= MAX_CHARS
    assert chunks[0].text.startswith("Intro.\n\n0,1,2,") and chunks[-1].text.endswith(",9998,9999")
    assert all(c.text in text for c in chunks)
    assert {(c.kind, c.symbol) for c in chunks} == {("text", None)}
