"""Split a file into chunks, choosing the chunker by the file's type.

The chunker modules are imported on first use: the query path imports `Chunk` from
here and should not pay for the lexers and parsers.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

from rag.chunking.base import Chunk

__all__ = [
    "Chunk",
    "chunk_file",
    "chunk_javascript",
    "chunk_markdown",
    "chunk_python",
    "chunk_rst",
    "chunk_text",
    "chunk_tree_sitter",
    "chunker_for",
    "languages_available",
    "lex",
    "structured_languages",
]

PYTHON_EXTENSIONS = (".py", ".pyi")
JAVASCRIPT_EXTENSIONS = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")
MARKDOWN_EXTENSIONS = (".md", ".markdown", ".mdx")
# .txt is tried as reST (Django's docs are .txt); without titles it is chunked as paragraphs
RST_EXTENSIONS = (".rst", ".txt")

# public name -> the module that defines it
_LAZY = {
    "chunk_javascript": "javascript",
    "lex": "javascript_lexer",
    "chunk_markdown": "markdown",
    "chunk_rst": "markdown",
    "chunk_python": "python",
    "chunk_text": "text",
    "chunk_tree_sitter": "treesitter",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def languages_available() -> bool:
    """Tell whether the `languages` extra (tree-sitter) is installed, without importing it."""
    import importlib.util

    return importlib.util.find_spec("tree_sitter") is not None


def chunkers_in_use() -> str:
    """Name the set of chunkers this installation chunks with, as an index records it: with the
    languages extra, tree-sitter's languages are chunked by definitions; without, as paragraphs."""
    return "definitions" if languages_available() else "paragraphs"


def structured_languages() -> dict[str, str]:
    """Map each tree-sitter language's chunker name to its label (go -> Go)."""
    from rag.chunking.languages import GRAMMARS

    return {name: g.label for name, g in GRAMMARS.items()}


def chunker_for(path: str, text: str = "") -> str:
    """Name the chunker for a file: python, javascript, markdown, rst, text, or a language
    chunked with tree-sitter (go, rust, ...: see languages.py)."""
    from rag.chunking.languages import CPP_HEADER, EXTENSIONS, SHEBANGS

    name = path.rsplit("/", 1)[-1].lower()
    if name.endswith(PYTHON_EXTENSIONS):
        return "python"
    if name.endswith(JAVASCRIPT_EXTENSIONS):
        return "javascript"
    if name.endswith(MARKDOWN_EXTENSIONS):
        return "markdown"
    if name.endswith(RST_EXTENSIONS):
        return "rst"
    dot = name.rfind(".")
    language = EXTENSIONS.get(name[dot:]) if dot > 0 else None
    if language == "c" and CPP_HEADER.search(text):
        return "cpp"
    if language is not None:
        return language
    if "." not in name and text.startswith("#!"):  # an extensionless script: trust its shebang
        shebang = text.split("\n", 1)[0]
        if "python" in shebang:
            return "python"
        if "node" in shebang:
            return "javascript"
        words = re.findall(r"[\w.+-]+", shebang.rsplit("/", 1)[-1])
        interpreter = words[1] if words[:1] == ["env"] and len(words) > 1 else (words[0] if words else "")
        return SHEBANGS.get(interpreter.rstrip("0123456789.") or interpreter, "text")
    return "text"


def chunk_file(path: str, text: str, on_fallback: Callable[[str], None] | None = None) -> list[Chunk]:
    """Chunk one file's text by its type and number the chunks in file order.

    `on_fallback` (if given) is called with the reason when a code file cannot be
    chunked by its structure (syntax error, unbalanced brackets, minified).
    """
    try:
        chunks = _chunk_by_kind(chunker_for(path, text), path, text, on_fallback)
    except RecursionError:  # nesting past Python's stack that a chunker did not foresee: the file
        # is still chunked, as paragraphs, rather than ending a whole ingest
        if on_fallback is not None:
            on_fallback("RecursionError: nested too deeply")
        from rag.chunking.text import chunk_text

        chunks = chunk_text(path, text)
    new = tuple.__new__  # what _replace(ordinal=i) makes (the last field), without its Python code
    return [new(Chunk, (*c[:7], i)) for i, c in enumerate(chunks)]


def _chunk_by_kind(kind: str, path: str, text: str, on_fallback: Callable[[str], None] | None) -> list[Chunk]:
    # each chunker is imported when first needed: the JS lexer's pattern alone takes 5 ms to
    # compile, a cost an update of a few Python files need not pay
    if kind == "python":
        from rag.chunking.python import chunk_python

        return chunk_python(path, text, on_fallback)
    if kind == "javascript":
        from rag.chunking.javascript import chunk_javascript

        return chunk_javascript(path, text, on_fallback)
    if kind == "markdown":
        from rag.chunking.markdown import chunk_markdown

        return chunk_markdown(path, text)
    if kind == "rst":
        from rag.chunking.markdown import chunk_rst

        return chunk_rst(path, text)
    if kind != "text":
        from rag.chunking.treesitter import chunk_tree_sitter

        return chunk_tree_sitter(path, text, kind, on_fallback)
    from rag.chunking.text import chunk_text

    return chunk_text(path, text)
