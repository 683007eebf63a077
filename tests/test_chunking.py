"""Chunkers: golden cases in tests/data/chunking, the size policy, and the JS lexer.

A golden case is a file `<case>.<ext>` beside `<case>.<ext>.json`, the expected chunks
(text is implied by the span). To add a case, add the file and run
`UPDATE_GOLDEN=1 python -m pytest tests/test_chunking.py`, then review the .json by hand.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rag.chunking import (
    chunk_file,
    chunk_javascript,
    chunk_markdown,
    chunk_python,
    chunk_rst,
    chunker_for,
    languages_available,
    lex,
    structured_languages,
)
from rag.chunking.base import HARD_MAX_CHARS, MAX_CHARS, Chunk

CASES = Path(__file__).parent / "data" / "chunking"
CASE_FILES = sorted(p for p in CASES.iterdir() if p.suffix != ".json")
FIELDS = ("start_line", "end_line", "kind", "symbol", "context")
# cases whose structure cannot be used, and so must report a fallback
FALLBACK_CASES = {"syntax_error.py", "unbalanced.js", "bundle.min.js", "misnamed.rs"}
# cases chunked with tree-sitter need the `languages` extra (part of the test extra)
needs_languages = pytest.mark.skipif(not languages_available(), reason="pip install 'rag-code[languages]'")
STRUCTURED = set(structured_languages())
CASE_PARAMS = [
    pytest.param(p, id=p.name, marks=[needs_languages] if chunker_for(p.name) in STRUCTURED else [])
    for p in CASE_FILES
]


def chunk_case(path: Path, reasons: list[str] | None = None) -> list[Chunk]:
    text = path.read_text(encoding="utf-8")
    return chunk_file(path.name, text, None if reasons is None else reasons.append)


def assert_well_formed(text: str, chunks: list[Chunk]) -> None:
    """Spans lie within the file, texts match them, and every non-blank line is covered."""
    lines = text.split("\n")
    covered: set[int] = set()
    for i, c in enumerate(chunks):
        assert c.ordinal == i
        assert 1 <= c.start_line <= c.end_line <= len(lines), c
        span = "\n".join(lines[c.start_line - 1 : c.end_line])
        if c.kind == "text":  # the paragraph chunker's exact slices
            assert c.text in span, c
        else:
            assert c.text == span, c
        assert c.text.strip(), c
        assert len(c.text) <= HARD_MAX_CHARS, c
        assert c.context.count("\n") <= 1, c
        covered.update(range(c.start_line, c.end_line + 1))
    missing = [n for n, line in enumerate(lines, 1) if line.strip() and n not in covered]
    assert missing == []


@pytest.mark.parametrize("path", CASE_PARAMS)
def test_golden(path: Path) -> None:
    chunks = chunk_case(path)
    got = [{f: getattr(c, f) for f in FIELDS} for c in chunks]
    expected_path = path.with_name(path.name + ".json")
    if os.environ.get("UPDATE_GOLDEN"):
        expected_path.write_text("[\n" + ",\n".join(json.dumps(g) for g in got) + "\n]\n", encoding="utf-8")
    assert got == json.loads(expected_path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", CASE_PARAMS)
def test_chunks_cover_the_file(path: Path) -> None:
    assert_well_formed(path.read_text(encoding="utf-8"), chunk_case(path))


@pytest.mark.parametrize("path", CASE_PARAMS)
def test_fallback_is_reported_only_when_used(path: Path) -> None:
    reasons: list[str] = []
    chunk_case(path, reasons)
    assert bool(reasons) == (path.name in FALLBACK_CASES)


def test_windows_of_a_long_method_repeat_its_signature() -> None:
    chunks = chunk_case(CASES / "large_class.py")
    windows = [c for c in chunks if c.symbol == "LocMemCache.cull"]
    assert len(windows) == 2
    assert all(c.context == "class LocMemCache(BaseCache):\ndef cull(self):" for c in windows)
    assert windows[1].start_line < windows[0].end_line  # they overlap


def test_long_markdown_section_repeats_its_heading_path() -> None:
    chunks = chunk_case(CASES / "guide.md")
    running = [c for c in chunks if c.symbol == "Worker guide > Running"]
    assert len(running) == 2
    assert all(c.context == "Worker guide > Running" and len(c.text) <= MAX_CHARS for c in running)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("empty.py", ""),
        ("blank.py", "\n\n   \n"),
        ("bom.py", "\ufeffdef f():\n    return 1\n"),
        ("crlf.py", "import os\r\n\r\ndef f():\r\n    return os.sep\r\n"),
        ("nul.py", "x = 1\0\n"),
        ("tabs.py", "if True:\n\tdef f(:\n"),
        ("empty.js", ""),
        ("only-comment.ts", "// nothing here\n"),
        ("stray.js", "}\n}\nfunction f() {}\n"),
        ("open-template.js", "const s = `never closed ${ {\n"),
        ("empty.md", ""),
        ("fence-open.md", "# Title\n\n```\n# inside a fence that never closes\n"),
        ("front-matter-only.md", "---\ntitle: x\n---\n"),
        ("empty.rst", ""),
        ("plain.txt", "Just a line of text.\n"),
        ("one-long-line.json", "[" + "1, " * 5000 + "1]\n"),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 30 else "",
)
def test_odd_inputs_never_crash_or_lose_lines(name: str, text: str) -> None:
    assert_well_formed(text, chunk_file(name, text))


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("src/app.py", "", "python"),
        ("stubs/app.pyi", "", "python"),
        ("lib/index.js", "", "javascript"),
        ("src/types.d.ts", "", "javascript"),
        ("src/App.tsx", "", "javascript"),
        ("dist/index.cjs", "", "javascript"),
        ("README.md", "", "markdown"),
        ("docs/page.mdx", "", "markdown"),
        ("docs/api.rst", "", "rst"),
        ("docs/ref/settings.txt", "", "rst"),
        ("LICENSE", "", "text"),
        ("bin/tool", "#!/usr/bin/env python3\n", "python"),
        ("bin/serve", "#!/usr/bin/env node\n", "javascript"),
        ("setup.cfg", "", "text"),
        ("cmd/root.go", "", "go"),
        ("src/lib.rs", "", "rust"),
        ("Foo.java", "", "java"),
        ("build.gradle.kts", "", "kotlin"),
        ("Main.scala", "", "scala"),
        ("Program.cs", "", "csharp"),
        ("lib/url.c", "", "c"),
        ("lib/url.h", "#ifndef URL_H\nstruct url *url_new(void);\n", "c"),
        ("absl/base.h", "namespace absl {\n}\n", "cpp"),
        ("absl/log.cc", "", "cpp"),
        ("Sources/App.swift", "", "swift"),
        ("lib/app.rb", "", "ruby"),
        ("src/Client.php", "", "php"),
        ("lib/plug.ex", "", "elixir"),
        ("src/Main.hs", "", "haskell"),
        ("lua/init.lua", "", "lua"),
        ("src/main.zig", "", "zig"),
        ("nvm.sh", "", "bash"),
        ("bin/install", "#!/usr/bin/env bash\n", "bash"),
        ("bin/setup", "#!/bin/sh -e\n", "bash"),
        ("bin/console", "#!/usr/bin/env ruby\n", "ruby"),
        ("bin/run", "#!/usr/bin/awk -f\n", "text"),
    ],
)
def test_chunker_for(path: str, text: str, expected: str) -> None:
    assert chunker_for(path, text) == expected


def test_txt_without_titles_is_chunked_as_paragraphs() -> None:
    text = "First paragraph of a plain text file.\n\nSecond one.\n"
    assert {c.kind for c in chunk_rst("notes.txt", text)} == {"text"}


def test_a_tiny_module_gap_merges_forward_but_a_short_def_stays() -> None:
    text = "import os\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n"
    chunks = chunk_python("m.py", text)
    assert [(c.start_line, c.end_line, c.symbol) for c in chunks] == [(1, 5, "a"), (8, 9, "b")]


def test_a_heading_with_nothing_under_it_merges_forward() -> None:
    text = "# Guide\n\n## Install\n\n" + "Run the installer and follow the prompts on the screen. " * 4 + "\n"
    chunks = chunk_markdown("g.md", text)
    assert [(c.start_line, c.symbol) for c in chunks] == [(1, "Guide > Install")]


def test_small_class_is_one_chunk_and_large_class_is_split() -> None:
    small = "class A:\n    x = 1\n\n    def f(self):\n        return self.x\n"
    assert [(c.kind, c.symbol) for c in chunk_python("s.py", small)] == [("class", "A")]
    chunks = chunk_case(CASES / "large_class.py")
    assert ("method", "LocMemCache.Entry.is_expired") in [(c.kind, c.symbol) for c in chunks]


# --- the JavaScript lexer -------------------------------------------------------------


def top_level(text: str, jsx: bool = True) -> list[str]:
    """The texts of the depth-0 tokens."""
    return [t.text for t in lex(text, jsx).tokens if t.depth == 0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a = b / c / d", ["a", "=", "b", "/", "c", "/", "d"]),
        ("x = /}/g.test(s)", ["x", "=", "/", ".", "test", "(", ")"]),
        ("if (a) /[{]/.exec(b)", ["if", "(", ")", "/", ".", "exec", "(", ")"]),
        ("return /a\\/}/", ["return", "/"]),
        ("n = i++ / 2", ["n", "=", "i", "++", "/", "2"]),
        ("s = '{' + \"}\"", ["s", "=", "'{'", "+", '"}"']),
        ("t = `a ${ {b: `}${c}`} } z`", ["t", "=", "`", "`"]),
        ("u = `{`; v = 1", ["u", "=", "`", ";", "v", "=", "1"]),
        ("// { not code\nw = 1", ["w", "=", "1"]),
        ("/* { */ x /* } */", ["x"]),
        ("f(a, {b}) ; g", ["f", "(", ")", ";", "g"]),
        ("el = <div>{x}</div>", ["el", "=", "<", "div", ">", "{", "}", "</div>"]),
        ("#priv = 1", ["#priv", "=", "1"]),
        ("f(g(a) / 2, /[)]/)", ["f", "(", ")"]),
        ("if (a(b)) /[)]/.test(c)", ["if", "(", ")", "/", ".", "test", "(", ")"]),
        ("x = a ? b?.c : .5 >>>= 1", ["x", "=", "a", "?", "b", "?.", "c", ":", ".5", ">>>=", "1"]),
    ],
    ids=[
        "division",
        "regex-with-brace",
        "regex-after-paren-keyword",
        "regex-escaped-slash",
        "division-after-increment",
        "strings-with-braces",
        "template-nesting",
        "template-brace",
        "line-comment",
        "block-comments",
        "depth",
        "jsx-closing-tag",
        "private-name",
        "deep-division-and-regex",
        "regex-after-nested-condition",
        "operators",
    ],
)
def test_lexer_top_level_tokens(text: str, expected: list[str]) -> None:
    lexed = lex(text)
    assert lexed.balanced
    assert top_level(text) == expected


@pytest.mark.parametrize(
    ("text", "balanced"),
    [
        ("function f() {", False),
        ("}", False),
        ("a = (1]", False),
        ("s = `${`", False),
        ("s = `${ `}` }`", True),
        ("re = /[}]/; f()", True),
    ],
)
def test_lexer_balance(text: str, balanced: bool) -> None:
    assert lex(text).balanced is balanced


def test_lexer_lines_and_comments() -> None:
    lexed = lex("/** doc */\nfunction f() {\n  return `a\nb`\n}\n")
    assert [(t.text, t.line, t.end_line, t.first) for t in lexed.tokens if t.depth == 0] == [
        ("function", 2, 2, True),
        ("f", 2, 2, False),
        ("(", 2, 2, False),
        (")", 2, 2, False),
        ("{", 2, 2, False),
        ("}", 5, 5, True),
    ]
    assert [(c.line, c.end_line, c.own_line, c.doc) for c in lexed.comments] == [(1, 1, True, True)]


def test_jsdoc_attaches_to_its_declaration() -> None:
    text = "import x from 'x'\n\n/**\n * Add two numbers.\n */\n"
    text += "export function add(a, b) {\n  return a + b\n}\n"
    chunks = chunk_javascript("m.js", text)
    assert [(c.start_line, c.end_line, c.symbol) for c in chunks] == [(1, 8, "add")]
    assert chunks[0].text.startswith("import")  # the tiny import line merged forward


def test_a_doc_block_ending_on_the_declaration_line_attaches() -> None:
    text = "function one() {\n  return 1\n}\n"
    text += "/**\n * Double a number.\n */ function double(x) {\n  return x * 2\n}\n"
    chunks = chunk_javascript("m.js", text)
    assert [(c.start_line, c.end_line, c.symbol) for c in chunks] == [(1, 3, "one"), (4, 8, "double")]


@pytest.mark.parametrize(
    ("heading", "title"),
    [
        ("## Title ##", "Title"),
        ("## Title ##   ", "Title"),
        ("# C#", "C#"),
        ("### a # b ###", "a # b"),
        ("#   spaced    out   #", "spaced out"),
        ("# Title" + " " * 40_000 + "end", "Title end"),  # was quadratic in the pattern: 8.6 s
    ],
)
def test_atx_heading_titles(heading: str, title: str) -> None:
    body = "\n\nA paragraph long enough to stand as a section of its own, with words in it.\n"
    assert {c.symbol for c in chunk_file("doc.md", heading + body)} == {title}


def test_typescript_without_semicolons_splits_where_a_line_ends_like_an_unfinished_expression() -> None:
    # the style of tanstack-query: no semicolons, so `Promise<T>`, `as const` and a non-null `!`
    # end statements; an `Action` type alias once swallowed the whole `Query` class after it
    methods = "".join(
        f"  method{i}(key: string) {{\n"
        + "".join(f"    const v{j} = this.items.get(key + '{j}') ?? {j} * {i}\n" for j in range(12))
        + "    return key\n  }\n"
        for i in range(6)
    )
    text = (
        "export type Action<TData> =\n"  # 1
        "  | { type: 'failed'; failureCount: number }\n"  # 2
        "  | { type: 'success'; data: TData; manual?: boolean }\n"  # 3
        "  | { type: 'invalidate' } & Partial<Record<'meta', unknown>>\n"  # 4
        "\n"  # 5
        "export const MODES = [\n  'online',\n  'always',\n  'offlineFirst',\n] as const\n"  # 6-10
        "export class Store {\n"  # 11
        "  items: Map<string, number>\n"  # 12
        "  constructor() {\n"  # 13
        + "".join(f"    this.items.set('k{j}', {j})\n" for j in range(12))  # 14-25
        + "  }\n"  # 26
        + methods  # 27-116
        + "}\n"  # 117
        "const root = document.getElementById('root')!\n"  # 118
        "const total = 1 +\n"  # 119
        "  2 >\n"  # 120
        "  root.childElementCount\n"  # 121: a continuation, indented deeper
    )
    got = [(c.start_line, c.end_line, c.kind, c.symbol) for c in chunk_file("src/store.ts", text)]
    assert got[:5] == [
        (1, 4, "class", "Action"),
        (6, 10, "module", "MODES"),  # not swallowed by the type alias above
        (11, 26, "method", "Store.constructor"),  # nor the class by the `as const` above
        (27, 41, "method", "Store.method0"),
        (42, 56, "method", "Store.method1"),
    ]
    # `root` (ended by its `!`) merges forward into `total`, whose deeper lines continue it
    assert got[-1] == (118, 121, "module", "total")


@pytest.mark.parametrize(
    ("opening", "first_title"),
    [
        ("---\ntitle: Guide\ntags: [a, b]\n---\n\n", "Title"),  # front matter: not a section
        ("---\n\n", "Title"),  # a thematic break: the heading below it still counts
        ("---\nJust a sentence, no keys.\n---\n\n", "Title"),
    ],
)
def test_a_leading_rule_is_front_matter_only_when_it_holds_yaml(opening: str, first_title: str) -> None:
    body = (
        "# Title\n\n"
        + "An introduction long enough to be a section of its own, with words.\n" * 6
        + "\n---\n\n## Next\n\n"
        + "Another section that is long enough to stand on its own as a passage.\n" * 6
    )
    chunks = chunk_file("guide.md", opening + body)
    assert [c.symbol for c in chunks] == [first_title, "Title > Next"]
    heading_line = opening.count("\n") + 1
    assert chunks[0].start_line <= heading_line and chunks[0].text.count("# Title") == 1


@pytest.mark.parametrize(
    "markup",
    [
        "<Input value={value} /> {error && <Error message={error} />}",  # `} />` once began a regex
        "<a href={url}>http://example.com/help</a> {error && (\n      <Error message={error} />\n    )}",  # and `//` a comment
    ],
)
def test_jsx_self_closing_tags_and_urls_leave_the_components_intact(markup: str) -> None:
    def component(i: int) -> str:
        body = "".join(f"  const label{j} = value + '{j}'\n" for j in range(6))
        return f"export function Field{i}({{ value, url, error }}) {{\n{body}  return <label>{markup}</label>\n}}\n\n"

    text = "".join(map(component, range(4)))
    fallbacks: list[str] = []
    chunks = chunk_file("src/fields.jsx", text, on_fallback=fallbacks.append)
    assert fallbacks == []  # the lexer's regex or comment swallowed brackets: unbalanced
    height = component(0).count("\n")  # each component's lines, then a blank
    assert [(c.start_line, c.end_line, c.symbol) for c in chunks] == [
        (1 + i * height, (i + 1) * height - 1, f"Field{i}") for i in range(4)
    ]


def test_an_apostrophe_in_jsx_text_is_not_a_string() -> None:
    handlers = "".join(
        f"  handle{i}(event) {{\n"
        + "".join(f"    const v{j} = event.target.value + '{j}'\n" for j in range(8))
        + f"    this.setState({{ field{i}: v0 }})\n  }}\n\n"
        for i in range(6)
    )
    text = (
        "import React from 'react'\n\nexport class Form extends React.Component {\n"
        + handlers
        + "  render() {\n    const { items } = this.props\n    return (\n      <div>\n"
        "        <p>Don't panic {items.map((i) => (\n          <span key={i}>{i}</span>\n"
        "        ))}</p>\n      </div>\n    )\n  }\n}\n"
    )
    fallbacks: list[str] = []
    got = [
        (c.start_line, c.end_line, c.symbol)
        for c in chunk_file("src/form.jsx", text, on_fallback=fallbacks.append)
    ]
    assert fallbacks == []  # the quote once opened a string that swallowed the brackets after it
    assert got[0] == (1, 14, "Form.handle0") and got[-1] == (76, 86, "Form.render")
    assert len(got) == 7


def test_a_line_of_unclosed_quotes_is_lexed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # each quote in `'\'\'\'...` opens a string that runs to the end of the line unclosed; the
    # line was scanned again from every one of them (40 KB: 5.9 s); the code below still chunks
    from rag.chunking import javascript_lexer

    class Counting:  # the lexer's token pattern, counting the characters its matches cover
        def __init__(self) -> None:
            self.scanned = 0

        def match(self, text: str, pos: int) -> re.Match[str] | None:
            m = TOKEN.match(text, pos)
            self.scanned += m.end() - pos if m else 0
            return m

    TOKEN = javascript_lexer._TOKEN
    counting = Counting()
    monkeypatch.setattr(javascript_lexer, "_TOKEN", counting)
    normal = "".join(f"export function f{i}(a: number) {{\n  return a + {i}\n}}\n" for i in range(2000))
    text = "const x = '" + "\\'" * 20_000 + "\n" + normal
    chunks = chunk_file("src/quotes.ts", text)
    assert [c.symbol for c in chunks[-2:]] == ["f1998", "f1999"]
    assert chunks[-1].start_line == 1 + 3 * 1999 + 1
    assert counting.scanned < 2 * len(text)  # each character matched about once, not once per quote


_FILLER = "Some filler text that is long enough to stand as a section on its own, with more words here.\n" * 3


@pytest.mark.parametrize(
    "block",
    [
        "<!--\n# not a heading: commented out\n-->",  # an HTML comment holds no heading
        "```pip install example```",  # inline code: a backtick fence's info string has no backtick
        "- ```sh\n  # a shell comment in a fence that opens a list item\n  ```",
    ],
)
def test_markdown_blocks_that_hold_no_heading(block: str) -> None:
    text = f"# Title\n\n{_FILLER}\n{block}\n\n{_FILLER}\n## Usage\n\n{_FILLER}"
    usage = text.split("\n").index("## Usage") + 1
    got = [(c.start_line, c.end_line, c.symbol) for c in chunk_file("guide.md", text)]
    assert got == [(1, usage - 2, "Title"), (usage, usage + 4, "Title > Usage")]


def test_rst_title_with_a_short_underline_of_four_or_more() -> None:
    # docutils warns "Title underline too short" and still makes a title; under 4 it is text
    text = f"Intro\n=====\n\n{_FILLER}\nDownload\n~~~~~~\n\n{_FILLER}\nA long sentence\n---\n\n{_FILLER}"
    got = [(c.start_line, c.end_line, c.symbol) for c in chunk_file("faq.rst", text)]
    assert got == [(1, 6, "Intro"), (8, 20, "Intro > Download")]


def _js_function(name: str) -> str:
    steps = "".join(
        f"    var step{j} = options.scale * value + {j} // {name} step {j} of ten\n" for j in range(10)
    )
    return f"  function {name}(value, options) {{\n{steps}    return step9\n  }}\n"


_WRAPPED = "\n".join(map(_js_function, ["debounce", "throttle", "memoize", "partial"]))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (  # UMD: the code is a factory passed to the wrapper; the wrapper's lines stay as glue
            "/*! lib v1.0.0 | MIT licence */\n(function (global, factory) {\n"
            "  typeof exports === 'object' ? module.exports = factory() : global.lib = factory()\n"
            "}(this, (function () {\n  'use strict'\n\n"
            + _WRAPPED
            + "\n  return { debounce: debounce, throttle: throttle, memoize: memoize, partial: partial }\n})));\n",
            [
                (1, 4, None),
                (5, 19, "debounce"),
                (21, 33, "throttle"),
                (35, 47, "memoize"),
                (49, 64, "partial"),
            ],
        ),
        (  # an IIFE: its first and last lines join the first and last functions
            "// a browser script\n!function () {\n" + _WRAPPED + "}();\n",
            [(1, 15, "debounce"), (17, 29, "throttle"), (31, 43, "memoize"), (45, 58, "partial")],
        ),
    ],
)
def test_code_wrapped_in_a_function_is_chunked_like_a_file(
    text: str, expected: list[tuple[int, int, str | None]]
) -> None:
    chunks = chunk_file("dist/lib.js", text)
    assert [(c.start_line, c.end_line, c.symbol) for c in chunks] == expected
    assert_well_formed(text, chunks)


def test_a_mixin_class_is_split_into_methods() -> None:
    methods = "\n".join(_js_function(f"step{i}").replace("  function ", "  ", 1) for i in range(9))
    text = "'use strict'\n\nmodule.exports = cls => class IdealTreeBuilder extends cls {\n" + methods + "}\n"
    chunks = chunk_file("lib/build-ideal-tree.js", text)
    assert [c.symbol for c in chunks] == [f"IdealTreeBuilder.step{i}" for i in range(9)]
    # 13 lines a method and a blank between; the first takes the file's head, the last the `}`
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 16)] + [
        (4 + 14 * i, 16 + 14 * i) for i in range(1, 8)
    ] + [(116, 129)]
    assert_well_formed(text, chunks)


@pytest.mark.parametrize(
    "head",
    [
        "export const pick = <T,>(value: T) => {",  # the comma keeps `<T>` from reading as JSX in .tsx
        "export const pick = <K extends keyof Map<string, number>>(value: K) => {",
        "export const pick = async <T>(value: T): Promise<T> => {",
    ],
)
def test_generic_arrow_functions_are_functions(head: str) -> None:
    body = "".join(f"  const step{j} = transform(value) + {j}\n" for j in range(8))
    text = f"import {{ transform }} from './transform'\n\n{head}\n{body}  return value\n}}\n\nexport const other = 1\n"
    chunks = chunk_file("src/pick.tsx", text)
    assert [(c.start_line, c.end_line, c.kind, c.symbol) for c in chunks] == [(1, 15, "function", "pick")]


def test_setext_and_atx_titles_collapse_blanks_alike() -> None:
    body = "Words of a release note, enough of them to make a section of its own here.\n" * 2
    text = f"Version 0.3  (2012-07-12)\n=========================\n\n{body}\n##  Version 0.2   (2012-01-05)\n\n{body}"
    assert [c.symbol for c in chunk_file("releases.md", text)] == [
        "Version 0.3 (2012-07-12)",
        "Version 0.3 (2012-07-12) > Version 0.2 (2012-01-05)",
    ]


def test_a_long_elif_chain_is_chunked() -> None:
    # each `elif` is an `if` nested in the one before: walking them recursively overflowed the
    # stack at about a thousand, and the ingest ended with a RecursionError
    text = "x = 0\nif x == 0:\n    y = 0\n" + "".join(
        f"elif x == {i}:\n    y = {i}\n" for i in range(1, 1500)
    )
    text += '\n\ndef dispatch(value):\n    """Return the branch taken for the value."""\n    return y\n'
    chunks = chunk_file("branches.py", text)
    assert_well_formed(text, chunks)
    assert (chunks[-1].symbol, chunks[-1].kind) == ("dispatch", "function")


def _run_chunker(name: str, text: str) -> int:
    """Chunk in a child process, cut off after 20 s: returns the chunk count, or -1 if cut off.
    (Linear work takes milliseconds here; the quadratic and exponential forms took minutes.)"""
    code = (
        "import sys; from rag.chunking import chunk_file; "
        "print(len(chunk_file(sys.argv[1], sys.stdin.read())))"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, name],
            input=text,
            capture_output=True,
            text=True,
            timeout=20,
            cwd=Path(__file__).resolve().parent.parent,
            check=True,
        )
    except subprocess.TimeoutExpired:
        return -1
    return int(done.stdout)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("fences.md", "`" * 1_000_000 + "x`\n"),  # a lookahead rescanned the line per backtick: 2 min
        ("nested.js", "(function () {\n" * 3000 + "x = 1;\n" * 400 + "})();\n" * 3000),  # re-lexed per level
    ],
)
def test_hostile_input_is_chunked_in_linear_time(name: str, text: str) -> None:
    assert _run_chunker(name, text) > 0


def test_a_chunker_that_overflows_the_stack_falls_back_to_paragraphs(monkeypatch) -> None:
    import rag.chunking.python

    def overflowing(path: str, text: str, on_fallback=None) -> list[Chunk]:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(rag.chunking.python, "chunk_python", overflowing)
    text = "def f():\n    return 1\n\n\n" + "word " * 300 + "\n"
    reasons: list[str] = []
    chunks = chunk_file("deep.py", text, reasons.append)
    assert reasons == ["RecursionError: nested too deeply"]
    assert [c.ordinal for c in chunks] == list(range(len(chunks))) and {c.kind for c in chunks} == {"text"}
    assert_well_formed(text, chunks)


# ---- inputs whose shape made a chunker slow: each counts the work it bounds ----------------------


def test_a_file_of_headings_is_scanned_for_a_bounded_number_of_them(monkeypatch: pytest.MonkeyPatch) -> None:
    # 500,000 `#` lines were 500,000 sections: 12 s; the scan now stops at a bound, and past
    # MAX_HEADINGS sections the rest is windowed as the last section's text
    from rag.chunking import markdown

    titled: list[str] = []
    real_title = markdown._atx_title
    monkeypatch.setattr(markdown, "_atx_title", lambda rest: titled.append(rest) or real_title(rest))
    text = "#\n" * 500_000
    chunks = chunk_file("headings.md", text)
    assert len(titled) == markdown._SCAN_HEADINGS < 500_000
    assert len({c.symbol for c in chunks}) <= markdown.MAX_HEADINGS
    assert_well_formed(text, chunks)


def test_past_the_cap_the_deepest_headings_stop_being_sections() -> None:
    from rag.chunking import markdown

    body = "".join(
        f"## Part {p}\n\n" + "".join(f"### Item {p}.{i}\n\nword\n\n" for i in range(60)) for p in range(100)
    )
    chunks = chunk_file("big.md", "# Top\n\n" + body)
    assert markdown.MAX_HEADINGS < 100 * 61  # 6,000 h3 under 100 h2: the h3 are text of their h2
    assert {c.symbol for c in chunks} <= {"Top"} | {f"Top > Part {p}" for p in range(100)}
    assert "Top > Part 99" in {c.symbol for c in chunks}


def test_a_python_file_too_large_to_parse_is_cut_at_its_definitions(monkeypatch: pytest.MonkeyPatch) -> None:
    # ast.parse of 500,000 short lines took 5 s and 920 MB; such a file is not parsed at all
    import ast

    from rag.chunking import python

    parsed: list[int] = []
    real_parse = ast.parse
    monkeypatch.setattr(
        python.ast, "parse", lambda source, *a, **k: parsed.append(len(source)) or real_parse(source, *a, **k)
    )
    text = "x=1\n" * 250_000 + "\n\ndef tail(value):\n    return value\n"
    reasons: list[str] = []
    chunks = chunk_file("generated.py", text, reasons.append)
    assert parsed == []
    assert reasons == ["too large to parse: about 750,012 tokens, over 150,000"]
    assert (chunks[-1].symbol, chunks[-1].kind) == ("tail", "function")
    assert_well_formed(text, chunks)
    chunk_file("small.py", "x=1\n" * 1000, reasons.append)  # a file under the cap is parsed as before
    assert len(parsed) == 1 and len(reasons) == 1


def test_a_file_of_too_many_definitions_to_cut_is_windowed(monkeypatch: pytest.MonkeyPatch) -> None:
    # cutting at each of 100,000 one-line defs took 1.1 s: past MAX_FALLBACK_DEFINITIONS the
    # file is one module piece in line windows, and the def/class cutter is never called
    from rag.chunking import python

    calls: list[int] = []
    real = python._fallback_pieces
    monkeypatch.setattr(python, "_fallback_pieces", lambda lines: calls.append(len(lines)) or real(lines))
    text = "def a():0\n" * 100_000
    reasons: list[str] = []
    chunks = chunk_file("generated.py", text, reasons.append)
    assert calls == [] and len(reasons) == 1
    assert {c.kind for c in chunks} == {"module"}
    assert_well_formed(text, chunks)
    chunk_file("broken.py", "def f(:\n    pass\n" * 10, reasons.append)  # a few definitions: cut at them
    assert calls == [21]
