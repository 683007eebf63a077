"""Spelling correction (rag.retrieval.spelling): typos are searched as the nearest indexed word,
words of the English word list are searched as typed."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write_tree

from rag import words
from rag.cli import main
from rag.indexing.pipeline import IngestOptions, ingest
from rag.retrieval import spelling
from rag.retrieval.retrieve import Request, retrieve

# an index holding words one edit from correct English ones, and the words of three typos
NEAR = {
    "notes.md": "# Map\n\nThe aree of the map, and its configation. Both were drawn by hand.\n",
    "forms.py": 'def read_field(name):\n    """Loading a field that is required."""\n    return name\n',
}


@pytest.fixture
def index(tmp_path: Path) -> str:
    repo = write_tree(tmp_path / "near", NEAR)
    return str(ingest(repo, options=IngestOptions(workers=1)).index_path)


@pytest.mark.parametrize(
    ("word", "near"),
    [("agree", "aree"), ("confirmation", "configation"), ("wire", "were")],
)
def test_an_english_word_is_searched_as_typed(
    index: str, word: str, near: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = retrieve(index, Request(f"how do they {word}?"))
    assert (found.corrections, found.hits) == ((), [])
    # without the word list, the same word would have been replaced by the index's near word
    monkeypatch.setattr(spelling, "is_english_word", lambda word: False)
    assert [c.searched for c in retrieve(index, Request(f"how do they {word}?")).corrections] == [near]


def test_a_typo_is_still_corrected(index: str) -> None:
    found = retrieve(index, Request("the requried feild, lodaing"))
    assert [(c.word, c.searched) for c in found.corrections] == [
        ("requried", "required"),
        ("feild", "field"),
        ("lodaing", "loading"),
    ]
    assert [h.chunk.path for h in found.hits] == ["forms.py"]


def test_a_part_of_an_identifier_that_is_a_word_is_searched_as_typed(index: str) -> None:
    assert retrieve(index, Request("wireHandler")).corrections == ()
    assert [c.searched for c in retrieve(index, Request("feildHandler")).corrections] == ["field"]


def test_a_query_of_english_words_unknown_to_the_index_notes_no_correction(index: str) -> None:
    result = CliRunner().invoke(main, ["query", "--no-llm", "--index", index, "wire agree"])
    assert result.exit_code == 0
    assert "searched" not in result.stderr
    assert result.stdout.startswith("No passages match the question")


@pytest.mark.parametrize(
    ("word", "listed"),
    [("agree", True), ("confirmation", True), ("wires", True), ("feild", False), ("aree", False)],
)
def test_the_word_list_holds_english_words_and_not_typos(word: str, listed: bool) -> None:
    assert spelling.is_english_word(word) is listed


def test_the_word_list_carries_its_source_notice() -> None:
    head = gzip.decompress(Path(words.ENGLISH_WORDS).read_bytes()).decode().splitlines()[:40]
    assert any("SCOWL" in line for line in head)
    assert any("Kevin Atkinson" in line for line in head)
