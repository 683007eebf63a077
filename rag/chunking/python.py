"""The Python chunker: one chunk per top-level definition, from the file's own `ast`."""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Callable, Iterator

from rag.chunking.base import MAX_CHARS, Chunk, Piece, assemble, close_scope, span_size

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# blocks whose definitions belong to the body that holds them (ast.TryStar: `except*`, 3.11+)
_BLOCKS = (ast.If, ast.Try, ast.With, ast.AsyncWith, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))
# the fallback splitter's cut lines: optional indentation, then def / async def / class NAME
_DEF_LINE = re.compile(r"^([ \t]*)(async[ \t]+def|def|class)[ \t]+([A-Za-z_]\w*)")
_SIGNATURE_LINES = 10  # a header longer than this is cut short in the breadcrumb
# ast.parse builds the whole tree at once, about 3 µs and 600 bytes per token: a .py of 500,000
# short lines took 5 s and 920 MB. A file estimated past this many tokens is split at its
# def/class lines instead (the largest real file in the standard library and site-packages, a
# test module of sympy, estimates 130,000 and parses in 0.4 s)
MAX_PARSE_TOKENS = 150_000
_PUNCTUATION = "=,.()[]{}:+-*"  # the operators that most often stand between tokens without blanks
# a file split at its def/class lines costs about 10 µs a definition: past this many, it is cut
# into line windows instead (100,000 one-line defs took 1.1 s)
MAX_FALLBACK_DEFINITIONS = 5000
_DEF_LINES = re.compile(_DEF_LINE.pattern, re.MULTILINE)
_CONTEXT_CHARS = 200

# (line of the header, header text): the classes a definition sits in, outermost first
Chain = tuple[tuple[int, str], ...]


def chunk_python(path: str, text: str, on_fallback: Callable[[str], None] | None = None) -> list[Chunk]:
    """Split Python source into function, class, method and module chunks.

    A file that does not parse is split at its `def`/`class` lines instead, and
    `on_fallback` (if given) is called with the reason.
    """
    lines = text.split("\n")
    tokens = _token_estimate(text, len(lines))
    if tokens > MAX_PARSE_TOKENS:
        if on_fallback is not None:
            on_fallback(f"too large to parse: about {tokens:,} tokens, over {MAX_PARSE_TOKENS:,}")
        return assemble(path, text, lines, _line_pieces(text, lines), group_same_symbol=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes etc. are the file's business
            tree = ast.parse(text[1:] if text.startswith("\ufeff") else text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        if on_fallback is not None:
            on_fallback(f"{type(exc).__name__}: {exc}")
        return assemble(path, text, lines, _line_pieces(text, lines), group_same_symbol=True)
    pieces = _body_pieces(tree.body, 1, len(lines), lines, "", (), "module", None)
    return assemble(path, text, lines, pieces, group_same_symbol=True)


def _token_estimate(text: str, n_lines: int) -> int:
    """Estimate the tokens of Python source from below: its words, common operators and lines
    (`x=1` is one word, one `=` and one line: 3 of its 4 tokens); a few fast counts, no tokenizer."""
    return len(text.split()) + sum(map(text.count, _PUNCTUATION)) + n_lines


def _body_pieces(
    body: list[ast.stmt],
    first: int,
    last: int,
    lines: list[str],
    prefix: str,
    chain: Chain,
    glue_kind: str,
    glue_symbol: str | None,
) -> list[Piece]:
    """Cut lines first..last at the definitions in `body`; what lies between is glue."""
    pieces: list[Piece] = []
    cursor = first
    for node in _definitions(body):
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        # comment lines directly above a definition belong to it
        while start - 1 >= cursor and lines[start - 2].lstrip().startswith("#"):
            start -= 1
        if start > cursor:
            pieces.append(_glue(cursor, start - 1, glue_kind, glue_symbol, chain))
        end = node.end_lineno or node.lineno
        pieces.extend(_definition_pieces(node, start, end, lines, prefix, chain))
        cursor = end + 1
    if cursor <= last:
        pieces.append(_glue(cursor, last, glue_kind, glue_symbol, chain))
    return pieces


def _definitions(body: list[ast.stmt]) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    """Yield the definitions of a module or class body in source order, also those inside its
    `if`, `try` and `with` blocks (`try: import ssl ... else: class FTP_TLS:`, a definition per
    platform), but not inside definitions. Iterative: each `elif` nests one level deeper, and a
    chain of a thousand is valid Python."""
    pending: list[Iterator[ast.stmt]] = [iter(body)]
    while pending:
        node = next(pending[-1], None)
        if node is None:
            pending.pop()
        elif isinstance(node, _DEFS):
            yield node
        elif isinstance(node, _BLOCKS):
            inner: list[ast.stmt] = []
            for part in ("body", "handlers", "orelse", "finalbody"):
                for child in getattr(node, part, ()):
                    # an except clause is a handler whose body holds the statements
                    inner.extend(child.body if isinstance(child, ast.ExceptHandler) else [child])
            pending.append(iter(inner))


def _glue(start: int, end: int, kind: str, symbol: str | None, chain: Chain) -> Piece:
    """Make a glue piece whose breadcrumb names the enclosing classes not already in it."""
    context = "\n".join(text for line, text in chain[-2:] if not start <= line <= end)
    return Piece(start, end, kind, symbol, context, glue=True)


def _definition_pieces(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
    start: int,
    end: int,
    lines: list[str],
    prefix: str,
    chain: Chain,
) -> list[Piece]:
    """Return one piece for a definition, or its members' pieces for a large class."""
    symbol = prefix + node.name
    header = _header(lines, node)
    if isinstance(node, ast.ClassDef):
        if span_size(lines[start - 1 : end]) > MAX_CHARS and any(isinstance(n, _DEFS) for n in node.body):
            inner = chain + ((node.lineno, header),)
            members = _body_pieces(node.body, start, end, lines, symbol + ".", inner, "class", symbol)
            return close_scope(members, lines)
        kind = "class"
    else:
        kind = "method" if chain else "function"
    context = "\n".join(text for _, text in chain[-2:])
    window_context = "\n".join([text for _, text in chain[-1:]] + [header])
    return [Piece(start, end, kind, symbol, context, window_context=window_context)]


def _header(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
    """Return a definition's header (`def f(x):`) on one line, whatever its layout."""
    body_line = node.body[0].lineno if node.body else node.lineno
    if node.body and isinstance(node.body[0], _DEFS) and node.body[0].decorator_list:
        body_line = min(d.lineno for d in node.body[0].decorator_list)
    last = min(max(body_line - 1, node.lineno), node.lineno + _SIGNATURE_LINES - 1, len(lines))
    parts: list[str] = []
    for number in range(node.lineno, last + 1):
        part = lines[number - 1].strip()
        if not part or part.startswith("#"):
            continue
        parts.append(part)
        if part.split("#", 1)[0].rstrip().endswith(":"):
            break
    header = re.sub(r"([(\[])\s+", r"\1", " ".join(parts))
    header = re.sub(r"\s+([)\]])", r"\1", header)
    return header[:_CONTEXT_CHARS]


def _line_pieces(text: str, lines: list[str]) -> list[Piece]:
    """Cut a file that is not parsed at its definitions (see _fallback_pieces), or, if it has more
    than MAX_FALLBACK_DEFINITIONS, into line windows of one module piece."""
    for definitions, _ in enumerate(_DEF_LINES.finditer(text), 1):
        if definitions > MAX_FALLBACK_DEFINITIONS:
            return [Piece(1, len(lines), "module", None)]
    return _fallback_pieces(lines)


def _fallback_pieces(lines: list[str]) -> list[Piece]:
    """Cut an unparsable file at its `def`/`class` lines, tracking classes by indentation."""
    stack: list[tuple[int, str, str, str]] = []  # (indent, "def" or "class", qualified name, header)
    cuts: list[Piece] = []
    for number, line in enumerate(lines, 1):
        m = _DEF_LINE.match(line)
        if m is None:
            continue
        indent = len(m.group(1).expandtabs())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if stack and stack[-1][1] == "def":
            continue  # a closure stays with its function
        is_class = m.group(2) == "class"
        symbol = ".".join([s[2] for s in stack[-1:]] + [m.group(3)])
        header = line.strip()[:_CONTEXT_CHARS]
        context = stack[-1][3] if stack else ""
        kind = "class" if is_class else ("method" if stack else "function")
        start = number
        # decorators and comments directly above, at the same indentation
        floor = cuts[-1].start_line + 1 if cuts else 1
        while start - 1 >= floor and re.match(r"[ \t]*[@#]", lines[start - 2]):
            start -= 1
        if cuts and cuts[-1].kind == "class" and stack and cuts[-1].symbol == stack[-1][2]:
            cuts[-1] = Piece(cuts[-1].start_line, 0, "class", cuts[-1].symbol, cuts[-1].context, glue=True)
        window_context = "\n".join(filter(None, [context, header]))
        cuts.append(Piece(start, 0, kind, symbol, context, window_context=window_context))
        stack.append((indent, "class" if is_class else "def", symbol, header))
    pieces: list[Piece] = []
    if not cuts or cuts[0].start_line > 1:
        pieces.append(Piece(1, cuts[0].start_line - 1 if cuts else len(lines), "module", None, glue=True))
    for i, cut in enumerate(cuts):
        end = cuts[i + 1].start_line - 1 if i + 1 < len(cuts) else len(lines)
        pieces.append(cut._replace(end_line=end))
    return pieces
