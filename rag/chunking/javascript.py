"""The JavaScript and TypeScript chunker: the top-level statements of a lexed file
(rag.chunking.javascript_lexer) become chunks, and the members of a large class, at depth 1.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rag.chunking.base import MAX_CHARS, Chunk, Piece, assemble, close_scope, span_size
from rag.chunking.javascript_lexer import EXPRESSION_KEYWORDS, KEEP_DEPTH, Comment, Lexed, Token, lex
from rag.chunking.text import chunk_text

MINIFIED_LINE_CHARS = 1000  # a file with most of its text on longer lines is minified or bundled ...
MINIFIED_MEAN_CHARS = 300  # ... and so is one whose lines average more than this
# wrappers inside wrappers looked into (a UMD factory in an IIFE, a DOMContentLoaded callback in
# either); each re-lexes its statement, so a bound keeps the work linear in the file
_UNWRAP_LEVELS = 3
_WRAPPER_DEPTH = 4  # how deep _Chunker.wrapped looks for the function body a statement wraps
_CONTEXT_CHARS = 200

# a statement cannot end on these: the next line continues it
_CONTINUING_KEYWORDS = (EXPRESSION_KEYWORDS - {"void"}) | frozenset(
    [
        "export",
        "default",
        "import",
        "from",
        "const",
        "let",
        "var",
        "function",
        "class",
        "interface",
        "enum",
        "extends",
        "implements",
        "as",
        "satisfies",
        "declare",
        "abstract",
        "static",
        "readonly",
        "public",
        "private",
        "protected",
        "keyof",
        "is",
    ]
)
# the end of a line that may finish a statement or continue into the next line (a type's `>`,
# `as const`, a non-null `!`): told apart by the next line's indentation
_AMBIGUOUS_ENDS = frozenset([">", "const", "!"])
# a line starting with these continues the statement above
_CONTINUATION_WORDS = frozenset(
    ["else", "catch", "finally", "instanceof", "in", "of", "as", "satisfies", "extends", "implements"]
)
_MODIFIERS = frozenset(
    [
        "export",
        "default",
        "declare",
        "abstract",
        "async",
        "static",
        "public",
        "private",
        "protected",
        "readonly",
        "override",
        "accessor",
    ]
)
_MEMBER_MODIFIERS = _MODIFIERS | {"get", "set", "*"}
_AFTER_NAME = frozenset(["(", "<", "=", ":", "?", ";"])
_TYPE_WORDS = {"interface": "class", "enum": "class", "namespace": "class", "module": "class"}

_NO_JSX = (".ts", ".mts", ".cts")  # JSX is recognised except in plain TypeScript


def chunk_javascript(path: str, text: str, on_fallback: Callable[[str], None] | None = None) -> list[Chunk]:
    """Split JavaScript or TypeScript into function, class, method and module chunks.

    Minified files are windowed as text; a file whose brackets do not balance is split
    at its declaration lines instead. Either way `on_fallback` (if given) gets the reason.
    """
    lines = text.split("\n")
    in_long_lines = sum(len(line) for line in lines if len(line) > MINIFIED_LINE_CHARS)
    if 2 * in_long_lines > len(text) or len(text) / len(lines) > MINIFIED_MEAN_CHARS:
        if on_fallback is not None:
            on_fallback(f"minified (longest line {max(len(line) for line in lines)} chars)")
        return chunk_text(path, text, MAX_CHARS)
    jsx = not path.lower().endswith(_NO_JSX)
    lexed = lex(text, jsx)
    if not lexed.balanced:
        if on_fallback is not None:
            on_fallback("unbalanced brackets")
        return assemble(path, text, lines, _fallback_pieces(lines), group_same_symbol=True)
    chunker = _Chunker(lines, lexed, jsx)
    pieces = chunker.body(0, len(lexed.tokens), 0, 1, len(lines), "", (), "module", None)
    return assemble(path, text, lines, pieces, group_same_symbol=True)


class _Chunker:
    """Turns the statements of a lexed file into pieces."""

    def __init__(self, lines: list[str], lexed: Lexed, jsx: bool, unwrap: int = _UNWRAP_LEVELS) -> None:
        self.lines = lines
        self.jsx = jsx
        self.unwrap = unwrap  # how many more wrapping functions may be looked into (see wrapped)
        self.tokens = lexed.tokens
        # comments by their last line, for attaching them to the declaration below
        self.comment_ending: dict[int, Comment] = {}
        for comment in lexed.comments:
            if comment.own_line:
                self.comment_ending.setdefault(comment.end_line, comment)

    def body(
        self,
        lo: int,
        hi: int,
        depth: int,
        first: int,
        last: int,
        prefix: str,
        chain: tuple[tuple[int, str], ...],
        glue_kind: str,
        glue_symbol: str | None,
    ) -> list[Piece]:
        """Cut lines first..last at the statements between tokens lo and hi at `depth`."""
        pieces: list[Piece] = []
        cursor = first
        for a, b in self.statements(lo, hi, depth):
            toks = self.tokens
            start, end = toks[a].line, toks[b].end_line
            if start < cursor:  # shares a line with the statement before it
                start = cursor
                if start > end:
                    continue
            start = self.attach_comments(start, cursor)
            found = self.describe(a, b, depth, prefix)
            inner = self.wrapped(a, b, depth, start) if found is None else None
            if inner is not None:  # `(function () { ...the file's code... })()`
                if start > cursor:
                    self.add_glue(pieces, cursor, start - 1, glue_kind, glue_symbol, chain)
                pieces.extend(inner)
                cursor = end + 1
                continue
            if found is None:
                self.add_glue(pieces, cursor, end, glue_kind, glue_symbol, chain)
                cursor = end + 1
                continue
            if start > cursor:
                self.add_glue(pieces, cursor, start - 1, glue_kind, glue_symbol, chain)
            kind, symbol, header = found
            pieces.extend(self.definition(a, b, start, end, depth, kind, symbol, header, chain))
            cursor = end + 1
        if cursor <= last:
            self.add_glue(pieces, cursor, last, glue_kind, glue_symbol, chain)
        return pieces

    def definition(
        self,
        a: int,
        b: int,
        start: int,
        end: int,
        depth: int,
        kind: str,
        symbol: str,
        header: str,
        chain: tuple[tuple[int, str], ...],
    ) -> list[Piece]:
        """Return a definition's piece, or its members' pieces if it is a large class."""
        toks = self.tokens
        if kind == "class" and depth < KEEP_DEPTH:
            size = span_size(self.lines[start - 1 : end])
            body = self.class_body(a, b, depth)
            if size > MAX_CHARS and body is not None:
                open_, close = body
                inner = chain + ((toks[a].line, header),)
                prefix = symbol + "."
                members = self.body(open_ + 1, close, depth + 1, start, end, prefix, inner, "class", symbol)
                if any(not p.glue for p in members):
                    return close_scope(members, self.lines)
        context = "\n".join(text for _, text in chain[-2:])
        window_context = "\n".join([text for _, text in chain[-1:]] + [header])
        return [Piece(start, end, kind, symbol, context, window_context=window_context)]

    def add_glue(
        self,
        pieces: list[Piece],
        start: int,
        end: int,
        kind: str,
        symbol: str | None,
        chain: tuple[tuple[int, str], ...],
    ) -> None:
        """Add glue lines, extending the glue piece just before them if there is one."""
        if pieces and pieces[-1].glue and pieces[-1].end_line == start - 1:
            last = pieces[-1]
            pieces[-1] = Piece(last.start_line, end, last.kind, last.symbol, last.context, glue=True)
            return
        context = "\n".join(text for line, text in chain[-2:] if not start <= line <= end)
        pieces.append(Piece(start, end, kind, symbol, context, glue=True))

    def wrapped(self, a: int, b: int, depth: int, first: int) -> list[Piece] | None:
        """Chunk the code of a top-level statement that wraps it in a function, as an IIFE
        (`(function ($) { ... })(jQuery)`) or a UMD factory does, like a file of its own: the
        pieces of the largest function body's inner lines, between glue for the wrapper's
        first and last lines (`first`: the statement's first line, comments above included).
        None if the statement wraps no body over MAX_CHARS."""
        start, end = self.tokens[a].line, self.tokens[b].end_line
        lines = self.lines[start - 1 : end]
        if depth != 0 or self.unwrap == 0 or span_size(lines) <= MAX_CHARS:
            return None
        # the statement again, with its tokens kept deeper: a UMD factory is an argument of a
        # call, in parentheses, inside the statement's own
        toks = lex("\n".join(lines), self.jsx, _WRAPPER_DEPTH).tokens
        best: tuple[int, int] | None = None  # (line of the body's `{`, line of its `}`)
        for i in range(1, len(toks)):
            # a function body's braces: `{` after a parameter list or an arrow; its contents
            # are deeper, so the next token at its depth or above is its `}`
            tok = toks[i]
            if tok.text == "{" and tok.depth < _WRAPPER_DEPTH and toks[i - 1].text in (")", "=>"):
                close = next((j for j in range(i + 1, len(toks)) if toks[j].depth <= tok.depth), None)
                if close is not None and toks[close].text == "}":
                    span = (tok.line, toks[close].line)
                    if best is None or span[1] - span[0] > best[1] - best[0]:
                        best = span
        if best is None:
            return None
        open_line, close_line = best[0] + start - 1, best[1] + start - 1
        inner = self.lines[open_line : close_line - 1]
        if span_size(inner) <= MAX_CHARS:
            return None
        lexed = lex("\n".join(inner), self.jsx)
        if not lexed.balanced:
            return None
        inner_chunker = _Chunker(inner, lexed, self.jsx, self.unwrap - 1)
        pieces = inner_chunker.body(0, len(lexed.tokens), 0, 1, len(inner), "", (), "module", None)
        shifted = [
            p._replace(start_line=p.start_line + open_line, end_line=p.end_line + open_line) for p in pieces
        ]
        return (
            [Piece(first, open_line, "module", None, glue=True)]
            + shifted
            + [Piece(close_line, end, "module", None, glue=True)]
        )

    def attach_comments(self, start: int, floor: int) -> int:
        """Move a statement's first line up over the comments directly above it."""
        first = start
        comment = self.comment_ending.get(start)
        if comment is not None and comment.line < start and comment.line >= floor:
            start = comment.line
        while True:
            comment = self.comment_ending.get(start - 1)
            if comment is not None and comment.trailed:
                comment = None  # code follows it on its last line: it is not a doc of ours
            if comment is None and start == first and not self.lines[start - 2].strip():
                # a doc block may stand one blank line above its declaration
                comment = self.comment_ending.get(start - 2)
                comment = comment if comment is not None and comment.doc and not comment.trailed else None
            if comment is None or comment.line < floor:
                return start
            start = comment.line

    def statements(self, lo: int, hi: int, depth: int) -> list[tuple[int, int]]:
        """Return (first, last) token indexes of the statements at `depth` in lo..hi."""
        toks = self.tokens
        out: list[tuple[int, int]] = []
        begin = -1
        prev: Token | None = None
        last = -1
        decorators_only = False  # the statement so far is decorator lines
        for i in range(lo, hi):
            tok = toks[i]
            if tok.depth != depth:
                continue
            if begin == -1:
                begin, decorators_only = i, tok.text == "@"
            elif (
                tok.first
                and prev is not None
                and (_ends_statement(prev, tok) or self.starts_unterminated(prev, tok, toks[begin]))
            ):
                if decorators_only:
                    decorators_only = tok.text == "@"
                else:
                    out.append((begin, last))
                    begin, decorators_only = i, tok.text == "@"
            prev, last = tok, i
        if begin != -1:
            out.append((begin, last))
        return out

    def starts_unterminated(self, prev: Token, tok: Token, first: Token) -> bool:
        """Tell whether a line begins a new statement although the one above has no `;` and
        ends like an unfinished expression: `Promise<T>` (a `>`), `as const`, a non-null `!`.
        `export` always begins one; otherwise the line must be a name at the indentation of
        the statement's first line (a continuation is indented deeper)."""
        if tok.kind != "name":
            return False
        if tok.text == "export":
            return True
        if prev.text not in _AMBIGUOUS_ENDS or tok.text in _CONTINUATION_WORDS:
            return False
        return _indent(self.lines[tok.line - 1]) <= _indent(self.lines[first.line - 1])

    def class_body(self, a: int, b: int, depth: int) -> tuple[int, int] | None:
        """Return the token indexes of a class statement's body braces.

        The body is the last `{...}` at the statement's depth (a generic default such
        as `<T = {}>` comes earlier); its contents are deeper, so the `{` is the
        depth-`depth` token just before the closing `}`.
        """
        toks = self.tokens
        if not any(t.text == "class" and t.kind == "name" and t.depth == depth for t in toks[a : b + 1]):
            return None
        close = next((j for j in range(b, a, -1) if toks[j].depth == depth and toks[j].text == "}"), None)
        if close is None:
            return None
        open_ = next((j for j in range(close - 1, a - 1, -1) if toks[j].depth == depth), None)
        if open_ is None or toks[open_].text != "{":
            return None
        return open_, close

    def describe(self, a: int, b: int, depth: int, prefix: str) -> tuple[str, str, str] | None:
        """Return (kind, symbol, header line) if the statement a..b is a definition."""
        toks = [t for t in self.tokens[a : b + 1] if t.depth == depth]
        multiline = toks[-1].end_line > toks[0].line
        i = _skip_decorators(toks, 0)
        decl = toks[i].line if i < len(toks) else toks[0].line
        header = self.lines[decl - 1].strip()[:_CONTEXT_CHARS]
        found = _describe_member(toks, i) if depth > 0 else _describe_statement(toks, i, multiline)
        if found is None:
            return None
        kind, name = found
        if depth > 0 and kind == "function":
            kind = "method"
        return kind, prefix + name, header


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _ends_statement(prev: Token, tok: Token) -> bool:
    """Tell whether a line starting with `tok` after `prev` begins a new statement."""
    if prev.text == ";" and prev.kind == "punct":
        return True
    if tok.kind == "punct" and tok.text not in ("@", "!", "~", "++", "--", "[", "#", "*"):
        return False
    if tok.kind == "tpl" or (tok.kind == "name" and tok.text in _CONTINUATION_WORDS):
        return False
    if prev.kind == "punct":
        return prev.text in (")", "]", "}", "++", "--")
    return not (prev.kind == "name" and prev.text in _CONTINUING_KEYWORDS)


def _skip_decorators(toks: list[Token], i: int) -> int:
    """Skip `@name.path(...)` decorators (their arguments are deeper, so not in `toks`)."""
    while i < len(toks) and toks[i].text == "@":
        i += 1
        while i < len(toks) and (toks[i].kind == "name" or toks[i].text == "."):
            i += 1
        if i + 1 < len(toks) and toks[i].text == "(" and toks[i + 1].text == ")":
            i += 2
    return i


def _describe_statement(toks: list[Token], i: int, multiline: bool) -> tuple[str, str] | None:
    """Classify a top-level statement; None means it is glue."""
    default = False
    n = len(toks)
    while i < n and toks[i].kind == "name" and toks[i].text in _MODIFIERS:
        default = default or toks[i].text == "default"
        if toks[i].text == "async" and not (i + 1 < n and toks[i + 1].text == "function"):
            break
        i += 1
    if i >= n:
        return None
    word = toks[i].text if toks[i].kind == "name" else ""
    name = toks[i + 1].text if i + 1 < n and toks[i + 1].kind == "name" else ""
    if word == "function":
        if name == "" and i + 2 < n and toks[i + 1].text == "*" and toks[i + 2].kind == "name":
            name = toks[i + 2].text
        return "function", name if name and name != "(" else "default" if default else "function"
    if word == "class":
        if name in ("extends", "implements", ""):
            name = "default" if default else "class"
        return "class", name
    if word == "const" and name == "enum" and i + 2 < n:
        return "class", toks[i + 2].text
    if word in _TYPE_WORDS and (name or toks[i + 1].kind == "str") and _has_body(toks, i):
        return "class", name or toks[i + 1].text.strip("'\"")
    if word == "type" and name and multiline:
        return "class", name
    if word in ("const", "let", "var") and name:
        return _describe_value(toks, i + 2, name, multiline)
    if default and multiline:
        return _describe_value(toks, i, "default", multiline)
    if word and word not in ("import", "export", "if", "for", "while", "return", "throw", "try"):
        # an assignment to a dotted target: `res.sendFile = function (...) {`
        j = i
        while j + 2 < n and toks[j + 1].text == "." and toks[j + 2].kind == "name":
            j += 2
        if j > i and j + 1 < n and toks[j + 1].text == "=":
            target = "".join(t.text for t in toks[i : j + 1]).replace(".prototype.", ".")
            target = re.sub(r"^(module\.)?exports\.", "", target)
            return _describe_value(toks, j + 1, target, multiline)
    return None


def _has_body(toks: list[Token], i: int) -> bool:
    """Tell whether a declaration has a `{` body at its own depth."""
    return any(t.text == "{" for t in toks[i:])


def _describe_value(toks: list[Token], i: int, name: str, multiline: bool) -> tuple[str, str] | None:
    """Classify `name = <value>` from the tokens after the name (type annotation allowed)."""
    n = len(toks)
    while i < n and toks[i].text != "=" and name != "default" and toks[i].text != ";":
        i += 1  # over `: Type`
    if i < n and toks[i].text == "=":
        i += 1
    rest = [t.text for t in toks[i : i + 24]]
    if rest[:1] == ["async"]:
        rest = rest[1:]
    if rest[:1] == ["function"]:
        return "function", name
    if rest[:1] == ["class"]:
        return "class", name
    # an arrow function: `(...) =>`, `x =>` or `<T>(...) =>` at this depth; a type parameter
    # list (`<T,>`, `<K extends keyof T>`) is stepped over first, commas and all
    first = _after_type_parameters(rest)
    for j, text in enumerate(rest[first:], first):
        if text == "=>":
            if rest[j + 1 : j + 2] == ["class"]:  # a mixin: `module.exports = Base => class X extends Base {`
                after = rest[j + 2] if j + 2 < len(rest) else "{"
                return "class", after if after not in ("extends", "implements", "{") else name
            return "function", name
        if text in ("{", ",", ";") or (text == "(" and j > first and rest[j - 1] != "async"):
            break
    return ("module", name) if multiline else None


def _after_type_parameters(texts: list[str]) -> int:
    """Return the index after a leading `<...>` type parameter list of token texts (0 if none)."""
    if texts[:1] != ["<"]:
        return 0
    level = 0
    for j, text in enumerate(texts):
        if text.startswith("<") and text.strip("<") == "":
            level += len(text)
        elif text.startswith(">") and text.strip(">") == "":
            level -= len(text)
            if level <= 0:
                return j + 1
    return 0


def _describe_member(toks: list[Token], i: int) -> tuple[str, str] | None:
    """Classify a class member: a method (function) or None for a field."""
    n = len(toks)
    # `static x()`, `get x()`: a modifier; `get()`, `static = 1`: the member's name
    while i + 1 < n and toks[i].text in _MEMBER_MODIFIERS and toks[i + 1].text not in _AFTER_NAME:
        i += 1
    if i >= n:
        return None
    tok = toks[i]
    if tok.text == "[" and i + 1 < n and toks[i + 1].text == "]":
        name, i = "[computed]", i + 2
    elif tok.kind in ("name", "str", "num"):
        name, i = tok.text.strip("'\""), i + 1
    else:
        return None
    if i < n and toks[i].text in ("?", "!"):
        i += 1
    if i < n and toks[i].text in ("(", "<"):
        return "function", name
    while i < n and toks[i].text not in ("=", ";"):
        i += 1  # over `: Type`; a function type there does not make a method
    if i < n and toks[i].text == "=":
        rest = [t.text for t in toks[i + 1 : i + 12]]
        if "=>" in rest or rest[:1] == ["function"] or rest[:2] == ["async", "function"]:
            return "function", name
    return None


# the fallback's cut lines: a declaration at the start of a line
_DECLARATION_LINE = re.compile(
    r"^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?"
    r"(function\*?|class|interface|enum|type|namespace|const|let|var)\s+([\w$]+)"
)
_COMMENT_LINE = re.compile(r"^\s*(?://|/\*|\*)")


def _fallback_pieces(lines: list[str]) -> list[Piece]:
    """Cut a file the lexer could not balance at its unindented declaration lines."""
    cuts: list[Piece] = []
    for number, line in enumerate(lines, 1):
        m = _DECLARATION_LINE.match(line)
        if m is None:
            continue
        word = m.group(1).rstrip("*")
        start = number
        floor = cuts[-1].start_line + 1 if cuts else 1
        while start - 1 >= floor and _COMMENT_LINE.match(lines[start - 2]):
            start -= 1
        kind = "function" if word == "function" else "module" if word in ("const", "let", "var") else "class"
        if kind == "module" and ("=>" in line or "function" in line):
            kind = "function"
        header = line.strip()[:_CONTEXT_CHARS]
        cuts.append(Piece(start, 0, kind, m.group(2), glue=kind == "module", window_context=header))
    pieces: list[Piece] = []
    if not cuts or cuts[0].start_line > 1:
        pieces.append(Piece(1, cuts[0].start_line - 1 if cuts else len(lines), "module", None, glue=True))
    for i, cut in enumerate(cuts):
        end = cuts[i + 1].start_line - 1 if i + 1 < len(cuts) else len(lines)
        pieces.append(Piece(cut.start_line, end, cut.kind, cut.symbol, "", cut.glue, cut.window_context))
    return pieces
