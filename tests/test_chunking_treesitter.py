"""The tree-sitter chunker's fallbacks: no extra, a grammar that fails, a huge file, a crash.

Its golden cases (one file per language) are in tests/data/chunking with the others.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from rag.chunking import chunk_file, chunker_for, languages_available, structured_languages
from rag.chunking import treesitter as ts_chunker
from rag.chunking.languages import EXTENSIONS, GRAMMARS

GO = """package main

import "fmt"

// Greet prints a greeting for every name it is given, one per line.
func Greet(names ...string) {
	for _, name := range names {
		fmt.Println("hello", name)
	}
}

// Main calls Greet with the program's fixed list of names to show how it works.
func main() {
	Greet("ada", "grace", "barbara")
}
"""

needs_languages = pytest.mark.skipif(not languages_available(), reason="pip install 'rag-code[languages]'")


@pytest.fixture
def no_parsers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget the parsers loaded so far, so that the next chunk loads its grammar again."""
    monkeypatch.setattr(ts_chunker, "_parsers", {})


def chunk_go(text: str = GO) -> tuple[list[str], list[tuple[int, int, str, str | None]]]:
    reasons: list[str] = []
    chunks = chunk_file("cmd/main.go", text, reasons.append)
    return reasons, [(c.start_line, c.end_line, c.kind, c.symbol) for c in chunks]


@needs_languages
def test_go_is_chunked_by_function() -> None:
    assert chunk_go() == ([], [(1, 10, "function", "Greet"), (12, 15, "function", "main")])


def test_without_the_extra_a_go_file_is_paragraphs_and_the_reason_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, no_parsers: None
) -> None:
    monkeypatch.setitem(sys.modules, "tree_sitter", None)  # `import tree_sitter` raises ImportError
    reasons, chunks = chunk_go()
    assert len(reasons) == 1 and "pip install 'rag-code[languages]'" in reasons[0]
    assert {kind for _, _, kind, _ in chunks} == {"text"}
    assert chunks[0][0] == 1 and chunks[-1][1] == 15


def test_without_a_grammar_wheel_the_file_is_paragraphs(
    monkeypatch: pytest.MonkeyPatch, no_parsers: None
) -> None:
    monkeypatch.setitem(GRAMMARS, "go", GRAMMARS["go"]._replace(module="tree_sitter_go_not_installed"))
    reasons, chunks = chunk_go()
    assert reasons == ["tree_sitter_go_not_installed not installed: pip install 'rag-code[languages]'"]
    assert {kind for _, _, kind, _ in chunks} == {"text"}


@needs_languages
def test_a_grammar_that_fails_to_load_is_paragraphs(
    monkeypatch: pytest.MonkeyPatch, no_parsers: None
) -> None:
    monkeypatch.setitem(GRAMMARS, "go", GRAMMARS["go"]._replace(function="no_such_function"))
    reasons, chunks = chunk_go()
    assert len(reasons) == 1 and reasons[0].startswith("the Go grammar does not load: AttributeError")
    assert {kind for _, _, kind, _ in chunks} == {"text"}


@needs_languages
def test_a_parser_that_raises_does_not_stop_the_ingest(monkeypatch: pytest.MonkeyPatch) -> None:
    class Exploding:
        def parse(self, source: object, **options: object) -> None:
            raise RuntimeError("grammar bug")

    monkeypatch.setattr(ts_chunker, "parser_for", lambda grammar: Exploding())
    reasons, chunks = chunk_go()
    assert reasons == ["tree-sitter failed: RuntimeError: grammar bug"]
    assert {kind for _, _, kind, _ in chunks} == {"text"}


@needs_languages
def test_a_parse_past_its_time_is_paragraphs(monkeypatch: pytest.MonkeyPatch, no_parsers: None) -> None:
    # 40 KB of Lua's unclosed long brackets: the grammar takes quadratic time on them (seconds here)
    monkeypatch.setattr(ts_chunker, "PARSE_SECONDS", 0.05)
    monkeypatch.setattr(ts_chunker, "PARSE_SECONDS_PER_MB", 0.0)
    text = "password = [[" * 3000
    reasons: list[str] = []
    chunks = ts_chunker.chunk_tree_sitter("hostile.lua", text, "lua", reasons.append)
    assert reasons == ["parsing took over 0 s"]
    assert {c.kind for c in chunks} == {"text"}
    # the parser is usable again: the next file parses from its own start
    assert {
        c.kind for c in ts_chunker.chunk_tree_sitter("ok.lua", "local function f()\n  return 1\nend\n", "lua")
    } != {"text"}


def test_a_huge_file_is_paragraphs_without_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ts_chunker, "MAX_PARSE_CHARS", 100)
    monkeypatch.setattr(ts_chunker, "parser_for", lambda grammar: pytest.fail("parsed"))
    reasons, chunks = chunk_go()
    assert reasons == [f"too large to parse ({len(GO)} chars)"]
    assert {kind for _, _, kind, _ in chunks} == {"text"}


@needs_languages
def test_a_parse_that_is_mostly_errors_is_paragraphs() -> None:
    text = "\n".join(f"this is {n} lines of prose}} in a .go file {{ ]]" for n in range(40)) + "\n"
    reasons, chunks = chunk_go(text)
    assert len(reasons) == 1 and reasons[0].startswith("parse errors on ")
    assert {kind for _, _, kind, _ in chunks} == {"text"}


@needs_languages
def test_a_few_errors_keep_the_structure() -> None:
    text = GO.replace('fmt.Println("hello", name)', 'fmt.Println("hello", name')  # one unclosed call
    reasons, chunks = chunk_go(text)
    assert reasons == []
    assert [symbol for _, _, _, symbol in chunks][-1] == "main"


@needs_languages
@pytest.mark.parametrize("language", sorted(GRAMMARS))
def test_every_grammar_loads_and_parses(language: str) -> None:
    grammar = GRAMMARS[language]
    parser = ts_chunker.parser_for(grammar)
    assert parser.parse(b"\n").root_node is not None


def test_every_extension_names_a_language_the_table_has() -> None:
    assert set(EXTENSIONS.values()) == set(GRAMMARS) == set(structured_languages())
    for extension, language in EXTENSIONS.items():
        assert chunker_for(f"src/file{extension}") == language


def test_importing_chunk_imports_no_tree_sitter() -> None:
    code = (
        "import sys\nfrom rag.chunking import Chunk, languages_available\nlanguages_available()\n"
        "print(sorted(m for m in sys.modules if m.startswith('tree_sitter') or m == 'rag.chunking.languages'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
