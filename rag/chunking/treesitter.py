"""The tree-sitter chunker: one chunk per definition, for the languages in languages.py.

Needs the `languages` extra (`pip install 'rag-code[languages]'`): the tree-sitter bindings
and one grammar wheel per language. Without them, or when a grammar fails to load or a
file's parse is mostly errors, the file is chunked as paragraphs and `on_fallback` is told.

The policy is the Python chunker's: top-level definitions are pieces, what lies between
them is glue, comments and attributes directly above a definition belong to it, and a
container (class, impl, module) over DEFINITION_MAX_CHARS is cut at its members, each with the
container's header as its breadcrumb.
"""

from __future__ import annotations

import importlib
import re
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from rag.chunking.base import (
    DEFINITION_MAX_CHARS,
    DEFINITION_OVERLAP_LINES,
    DEFINITION_WINDOW_LINES,
    Chunk,
    Piece,
    assemble,
    close_scope,
    span_size,
)
from rag.chunking.languages import GRAMMARS, IDENTIFIER_TYPES, Grammar
from rag.chunking.text import chunk_text

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Tree

MAX_PARSE_CHARS = 2_000_000  # a larger file is chunked as paragraphs: generated, and slow to walk
MAX_ERROR_SHARE = 0.5  # a parse with more of its lines in error nodes than this is not used
_MAX_NESTING = 8  # containers nested deeper than this are not cut at their members
_NAME_DEPTH = 6  # how far name_fields are followed down
_VALUE_DEPTH = 3  # how deep under an assignment its value is looked for
_CONTEXT_CHARS = 200
_NAME_END = re.compile(r"[\s<(\[{=;,]")
_DOC_COMMENT = ("/**", "///", "//!", "-- |", "{-|", "##", "--- ", "#'")

# (line of the header, header text): the containers a definition sits in, outermost first
Chain = tuple[tuple[int, str], ...]
# a definition found: (its outermost node, the node that defines, kind, name)
Found = tuple["Node", "Node", str, str]

_parsers: dict[str, Parser] = {}


class GrammarUnavailable(Exception):
    """The language's grammar cannot be used: the extra is not installed, or it fails to load."""


def parser_for(grammar: Grammar) -> Parser:
    """Return a parser for the language, loading its grammar on first use."""
    parser = _parsers.get(grammar.name)
    if parser is None:
        try:
            import tree_sitter

            module = importlib.import_module(grammar.module)
            language = tree_sitter.Language(getattr(module, grammar.function)())
            parser = tree_sitter.Parser(language)
        except ImportError as exc:
            raise GrammarUnavailable(
                f"{exc.name or grammar.module} not installed: pip install 'rag-code[languages]'"
            ) from exc
        except Exception as exc:  # an ABI mismatch, a broken wheel: the ingest goes on without it
            raise GrammarUnavailable(
                f"the {grammar.label} grammar does not load: {type(exc).__name__}: {exc}"
            ) from exc
        _parsers[grammar.name] = parser
    return parser


def chunk_tree_sitter(
    path: str, text: str, language: str, on_fallback: Callable[[str], None] | None = None
) -> list[Chunk]:
    """Split source in one of the tree-sitter languages into definition chunks.

    Falls back to paragraphs (telling `on_fallback` why) when the grammar is missing or
    does not load, the file is over MAX_PARSE_CHARS, its parse runs past its time (see _parse),
    or most of its parse is errors.
    """
    grammar = GRAMMARS[language]
    reason: str | None = None
    if len(text) > MAX_PARSE_CHARS:
        reason = f"too large to parse ({len(text)} chars)"
    else:
        try:
            chunks = _chunk(path, text, grammar)
        except GrammarUnavailable as exc:
            reason = str(exc)
        except _Unusable as exc:
            reason = str(exc)
        except (RecursionError, MemoryError):
            raise
        except Exception as exc:  # a grammar's surprise must not end an ingest
            reason = f"tree-sitter failed: {type(exc).__name__}: {exc}"
        else:
            return chunks
    if on_fallback is not None:
        on_fallback(reason)
    return chunk_text(path, text)


class _Unusable(Exception):
    """The parse is too broken to chunk by."""


# A grammar parses about 10 MB a second; some take quadratic time on a hostile shape (250 KB of
# Lua's unclosed `[[` took 28 s, 500 KB 108 s), so a parse past this much time is given up and the
# file is chunked as paragraphs. Ordinary files finish in a hundredth of it (the limit is wall time:
# on a machine a hundred times slower than usual, an ordinary file would be paragraphs too).
PARSE_SECONDS = 2.0
PARSE_SECONDS_PER_MB = 4.0
_READ = 65536  # bytes handed to the parser at a time


def _parse(parser: Parser, source: bytes) -> Tree:
    """Parse `source`, giving up past PARSE_SECONDS and PARSE_SECONDS_PER_MB of it (_Unusable)."""
    limit = PARSE_SECONDS + PARSE_SECONDS_PER_MB * len(source) / 1_000_000
    deadline = time.perf_counter() + limit

    def halt(_offset: int, _has_error: bool) -> bool:
        return time.perf_counter() > deadline

    try:  # (the progress callback is called only when the parser reads through a callback)
        return parser.parse(lambda at, _point: source[at : at + _READ], progress_callback=halt)
    except ValueError as exc:
        parser.reset()  # (else the next parse resumes this one)
        if time.perf_counter() <= deadline:
            raise  # not halted: a failure of its own
        raise _Unusable(f"parsing took over {limit:.0f} s") from exc


def _chunk(path: str, text: str, grammar: Grammar) -> list[Chunk]:
    parser = parser_for(grammar)
    source = text.encode("utf-8", "surrogatepass")
    tree = _parse(parser, source)
    root = tree.root_node
    lines = text.split("\n")
    if root.has_error:
        broken = sum(_end_line(n) - n.start_point[0] for n in _error_nodes(root))
        if broken > MAX_ERROR_SHARE * len(lines):
            raise _Unusable(f"parse errors on {broken} of {len(lines)} lines")
    walker = _Walker(grammar, root, source, lines)
    pieces = walker.body(root.named_children, 1, len(lines), "", (), "module", None, 0)
    return assemble(
        path,
        text,
        lines,
        pieces,
        group_same_symbol=True,
        max_chars=DEFINITION_MAX_CHARS,
        window=DEFINITION_WINDOW_LINES,
        overlap=DEFINITION_OVERLAP_LINES,
    )


def _error_nodes(root: Node) -> Iterator[Node]:
    """Yield the error nodes among the root's children and the bodies' children below them."""
    pending = [root]
    while pending:
        node = pending.pop()
        for child in node.children:
            if child.is_error or child.is_missing:
                yield child
            elif child.has_error and child.child_count and child.end_point[0] - child.start_point[0] > 50:
                pending.append(child)  # a large node in error: the damage may be one line of it


def _end_line(node: Node) -> int:
    """The 1-based last line of a node (one that ends at a line's start ends on the line before)."""
    row, column = node.end_point
    if column == 0 and row > node.start_point[0]:
        return row
    return row + 1


class _Walker:
    """Turns one file's syntax tree into pieces."""

    def __init__(self, grammar: Grammar, root: Node, source: bytes, lines: list[str]) -> None:
        self.grammar = grammar
        self.root = root
        self.source = source
        self.lines = lines

    def body(
        self,
        nodes: list[Node],
        first: int,
        last: int,
        prefix: str,
        chain: Chain,
        glue_kind: str,
        glue_symbol: str | None,
        nesting: int,
    ) -> list[Piece]:
        """Cut lines first..last at the definitions among `nodes`; what lies between is glue."""
        pieces: list[Piece] = []
        cursor = first
        for outer, node, kind, name in self.definitions(nodes):
            start, end = outer.start_point[0] + 1, _end_line(outer)
            if start < cursor:  # shares a line with what came before
                start = cursor
                if start > end:
                    continue
            if end > last:
                end = last
            start = self.attach_decorations(outer, start, cursor)
            if start > cursor:
                pieces.append(_glue(cursor, start - 1, glue_kind, glue_symbol, chain))
            pieces.extend(self.definition(node, kind, prefix + name, start, end, chain, nesting))
            cursor = end + 1
        if cursor <= last:
            pieces.append(_glue(cursor, last, glue_kind, glue_symbol, chain))
        return pieces

    def definitions(self, nodes: list[Node]) -> Iterator[Found]:
        """Yield the definitions among `nodes` in source order, looking through bodies (and
        error nodes, which hold what the parser could not place) but not into definitions."""
        pending: list[Iterator[Node]] = [iter(nodes)]
        bodies = self.grammar.bodies
        while pending:
            node = next(pending[-1], None)
            if node is None:
                pending.pop()
                continue
            found = self.describe(node)
            if found is not None:
                yield (node, *found)
            elif node.type in bodies or node.is_error:
                pending.append(iter(node.named_children))

    def describe(self, node: Node) -> tuple[Node, str, str] | None:
        """Return (the defining node, kind, name) if `node` is a definition."""
        g = self.grammar
        kind = g.definitions.get(node.type)
        if kind is not None:
            return node, kind, self.name(node)
        if node.type in g.wrappers:
            for child in node.named_children:
                found = self.describe(child)
                if found is not None:
                    return found
            return None
        if g.calls and node.type == "call":
            target = node.child_by_field_name("target")
            kind = g.calls.get(self.text(target)) if target is not None else None
            if kind is not None:
                return node, kind, self.call_name(node)
            return None
        if node.type in g.assignments:
            value = self.value(node, _VALUE_DEPTH)
            if value is not None:
                return node, g.values[value.type], self.assigned_name(node)
        return None

    def definition(
        self, node: Node, kind: str, symbol: str, start: int, end: int, chain: Chain, nesting: int
    ) -> list[Piece]:
        """Return one piece for a definition, or its members' pieces for a large container."""
        header = self.header(node)
        if (
            node.type in self.grammar.containers
            and kind != "function"
            and nesting < _MAX_NESTING
            and span_size(self.lines[start - 1 : end]) > DEFINITION_MAX_CHARS
        ):
            inner = chain + ((node.start_point[0] + 1, header),)
            members = self.body(
                node.named_children, start, end, symbol + ".", inner, "class", symbol, nesting + 1
            )
            if any(not p.glue for p in members):
                return close_scope(members, self.lines)
        if kind == "function" and chain:
            kind = "method"
        context = "\n".join(text for _, text in chain[-2:])
        window_context = "\n".join([text for _, text in chain[-1:]] + [header])
        return [Piece(start, end, kind, symbol, context, window_context=window_context)]

    def attach_decorations(self, node: Node, start: int, floor: int) -> int:
        """Move a definition's first line up over the comments and attributes directly above it
        (a doc comment may stand one blank line above), not above line `floor`."""
        first = start
        lines = self.lines
        while start - 1 >= floor:
            above = start - 1
            if not lines[above - 1].strip():
                if (
                    start != first
                    or above - 1 < floor
                    or not lines[above - 2].lstrip().startswith(_DOC_COMMENT)
                ):
                    return start
                above -= 1
            decoration = self.decoration_ending(above)
            if decoration is None or decoration.start_point[0] + 1 < floor:
                return start
            if above != start - 1 and not self.text(decoration).startswith(_DOC_COMMENT):
                return start
            start = decoration.start_point[0] + 1
        return start

    def decoration_ending(self, line: int) -> Node | None:
        """The comment or attribute that ends line `line` and starts a line of its own, if any."""
        text = self.lines[line - 1]
        column = len(text.rstrip().encode("utf-8", "surrogatepass")) - 1
        node = self.root.named_descendant_for_point_range((line - 1, column), (line - 1, column))
        decorations = self.grammar.decorations
        while node is not None and _end_line(node) == line:
            if node.type in decorations:
                begin = node.start_byte
                line_start = self.source.rfind(b"\n", 0, begin) + 1
                return node if not self.source[line_start:begin].strip() else None
            node = node.parent
        return None

    def name(self, node: Node) -> str:
        """A definition's name: the first of name_fields, followed down; else its first identifier."""
        found = node
        for _ in range(_NAME_DEPTH):
            child = None
            for field in self.grammar.name_fields:
                # a field, or else a child of that type (Go: type_declaration -> type_spec)
                child = found.child_by_field_name(field) or next(
                    (c for c in found.named_children if c.type == field), None
                )
                if child is not None:
                    break
            if child is None:
                break
            found = child
        if found is node:
            found = next((c for c in node.named_children if c.type in IDENTIFIER_TYPES), node)
            if found is node:
                return node.type.split("_")[0]  # `companion object {`: no name
        name = _short(self.text(found))
        if self.grammar.receiver:
            receiver = node.child_by_field_name(self.grammar.receiver)
            if receiver is not None:
                owner = next(_descendants_of_type(receiver, "type_identifier"), None)
                if owner is not None:
                    name = f"{self.text(owner)}.{name}"
        return name

    def call_name(self, node: Node) -> str:
        """The name in an Elixir-style definition call: `def assign(conn, key)` -> assign."""
        arguments = next((c for c in node.named_children if c.type == "arguments"), None)
        subject = arguments.named_children[0] if arguments is not None and arguments.named_children else None
        for _ in range(_NAME_DEPTH):
            if subject is None or subject.type in ("alias", "identifier"):
                break
            # a call `assign(conn)`, a guard `f(x) when ...`, an operator `left ~> right`
            inner = subject.child_by_field_name("target") or subject.child_by_field_name("left")
            if inner is None and subject.named_child_count:
                inner = subject.named_children[0]
            subject = inner
        return _short(self.text(subject)) if subject is not None else "call"

    def assigned_name(self, node: Node) -> str:
        """The name an assignment binds: `M.setup = function` -> M.setup."""
        found = node
        for _ in range(_VALUE_DEPTH):
            children = found.named_children
            if not children:
                break
            found = children[0]
            if found.type not in self.grammar.assignments:
                break
        return _short(self.text(found))

    def value(self, node: Node, depth: int) -> Node | None:
        """The function or type an assignment binds, at most `depth` levels under it."""
        for child in node.named_children:
            if child.type in self.grammar.values:
                return child
            if depth > 1 and child.named_child_count:
                found = self.value(child, depth - 1)
                if found is not None:
                    return found
        return None

    def header(self, node: Node) -> str:
        """A definition's header for breadcrumbs: the line its name is on, stripped."""
        name = node.child_by_field_name("name")
        row = name.start_point[0] if name is not None else node.start_point[0]
        if name is None:  # past leading attributes and comments inside the node
            row = next(
                (
                    c.start_point[0]
                    for c in node.named_children
                    if c.type not in self.grammar.decorations
                    and not c.type.endswith(("attribute", "modifiers", "attribute_list"))
                ),
                row,
            )
        return self.lines[row].strip()[:_CONTEXT_CHARS]

    def text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _short(name: str) -> str:
    """Cut a name's text at generics, parameters or spaces; `::` and `:` qualify like `.`."""
    name = name.strip()
    cut = _NAME_END.search(name)
    if cut is not None and cut.start() > 0:
        name = name[: cut.start()]
    return name.replace("::", ".").replace(":", ".")[:_CONTEXT_CHARS]


def _descendants_of_type(node: Node, node_type: str) -> Iterator[Node]:
    pending = [node]
    while pending:
        current = pending.pop(0)
        if current.type == node_type:
            yield current
        pending.extend(current.named_children)


def _glue(start: int, end: int, kind: str, symbol: str | None, chain: Chain) -> Piece:
    """Make a glue piece whose breadcrumb names the enclosing containers not already in it."""
    context = "\n".join(text for line, text in chain[-2:] if not start <= line <= end)
    return Piece(start, end, kind, symbol, context, glue=True)
