"""The JavaScript and TypeScript lexer: the significant tokens and the comments of a file.

It knows strings, template literals (with `${}` nesting), comments and regular expression
literals, so that braces inside them do not count, and JSX text where a quote or `//` starts
nothing. Each token carries its bracket depth; the chunker (rag.chunking.javascript) cuts at
the statements of depth 0 and 1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

KEEP_DEPTH = 1  # tokens deeper than this are not kept: statements and class members suffice

# Alternatives are tried in order, so the commonest come first: names, brackets, then the
# one-character operators that start no longer one (`op` holds the rest, longest first).
# Brackets and both operator groups are tokens of kind "punct".
_TOKEN = re.compile(
    r"[ \t\r\f\v\u00a0\ufeff\u2028\u2029]*"  # spaces before a token are part of its match
    r"(?:(?P<name>#?[A-Za-z_$\u0080-\uffff][\w$\u0080-\uffff]*)"
    r"|(?P<bracket>[{}()\[\]])"
    r"|(?P<punct>[;,~@:])"
    r"|(?P<nl>\n(?:[ \t\r\f\v]*\n)*)"
    r"|(?P<num>\d[\w.]*|\.\d\w*)"
    r"|(?P<jsxclose></[A-Za-z][\w.:-]*[ \t]*>|</>)"
    r"|(?P<op>>>>=|\.\.\.|===|!==|\*\*=|<<=|>>=|>>>|&&=|\|\|=|\?\?=|=>|==|!=|<=|>=|&&|\|\||\?\?"
    r"|\?\.(?!\d)|\+\+|--|\*\*|<<|>>|[-+*%&|^]=|[.?!=<>+\-*%&|^])"
    r"|(?P<lc>//[^\n]*)"
    r"|(?P<bc>/\*)"
    r"|(?P<slash>/=?)"
    r"|(?P<str>'(?:[^'\\\n]|\\[\s\S])*'?|\"(?:[^\"\\\n]|\\[\s\S])*\"?)"
    r"|(?P<tpl>`)"
    r"|(?P<other>[\s\S])"
    r"|(?P<end>\Z))"
)
_TEMPLATE = re.compile(r"(?:[^`\\$]|\\[\s\S]|\$(?!\{))*")
_REGEX = re.compile(r"(?:[^\\/\[\n]|\\.|\[(?:[^\]\\\n]|\\.)*\])+/[A-Za-z]*")
_OPEN = {"(": ")", "[": "]", "{": "}", "if(": ")"}  # "if(": the condition of if/while/for/with
# after these keywords an expression starts, so `/` begins a regular expression
EXPRESSION_KEYWORDS = frozenset(
    [
        "return",
        "typeof",
        "instanceof",
        "in",
        "of",
        "new",
        "delete",
        "void",
        "throw",
        "case",
        "do",
        "else",
        "yield",
        "await",
        "extends",
    ]
)


class Token(NamedTuple):
    """A significant token: its kind (name, num, str, tpl, regex, punct), text and place. (A
    NamedTuple: the lexer makes one per kept token, and a frozen dataclass costs four times as
    much to make.)"""

    kind: str
    text: str
    line: int  # 1-based line of its first character
    end_line: int  # line of its last character
    depth: int  # bracket depth outside it (a bracket itself counts as outside)
    first: bool  # the first token on its line


@dataclass(slots=True)
class Comment:
    """A comment between tokens; `own_line` when no code precedes it on its first line."""

    line: int
    end_line: int
    own_line: bool
    doc: bool  # a `/** ... */` block
    trailed: bool = False  # code follows it on its last line


@dataclass(slots=True)
class Lexed:
    """The kept tokens and comments of a file, and whether its brackets balanced."""

    tokens: list[Token]
    comments: list[Comment]
    balanced: bool


def lex(text: str, jsx: bool = True, keep_depth: int = KEEP_DEPTH) -> Lexed:
    """Tokenize JavaScript/TypeScript, keeping the tokens and comments at depth <= keep_depth."""
    tokens: list[Token] = []
    comments: list[Comment] = []
    stack: list[str] = []  # open brackets; "`" marks a `${` inside a template literal
    balanced = True
    line = 1
    last_line = 0  # line on which the last token ended
    prev_kind, prev_text = "punct", ";"  # the previous significant token, for regex detection
    pos, n = 0, len(text)
    match = _TOKEN.match

    def emit(kind: str, value: str, start_line: int, end_line: int, depth: int) -> None:
        nonlocal last_line
        if comments and comments[-1].end_line == start_line and last_line < start_line:
            comments[-1].trailed = True
        if depth <= keep_depth:
            tokens.append(Token(kind, value, start_line, end_line, depth, last_line < start_line))
        last_line = end_line

    unclosed: dict[str, int] = {}  # quote -> end of a line its string ran to without closing
    while pos < n:
        if unclosed and pos < unclosed.get(text[pos], -1):
            # a quote before that end cannot close either: take it alone without scanning the line
            # again (a line of many such quotes would otherwise cost its length squared)
            emit("punct", text[pos], line, line, len(stack))
            prev_kind, prev_text = "punct", text[pos]
            pos += 1
            continue
        m = match(text, pos)
        assert m is not None and m.lastgroup is not None  # the last alternative matches any character
        group: str = m.lastgroup
        # names, numbers and operators: most tokens, so they take the shortest path
        if group == "name" or group == "punct" or group == "op" or group == "num":
            value = m.group(group)
            kind = "punct" if group == "op" else group
            if len(stack) <= keep_depth:
                if comments and comments[-1].end_line == line and last_line < line:
                    comments[-1].trailed = True
                tokens.append(Token(kind, value, line, line, len(stack), last_line < line))
            # (a deeper token can skip the comment check: the token after a kept comment is
            # at that comment's depth, and once a token has followed it the check cannot hold)
            last_line = line
            prev_kind, prev_text = kind, value
            pos = m.end()
            continue
        if group == "bracket" and not (stack and stack[-1] == "`" and m.group(group) == "}"):
            # (the `}` that closes a `${` goes on below, with template literals)
            value = m.group(group)
            if value in _OPEN:
                depth = len(stack)
                condition = (
                    value == "(" and prev_kind == "name" and prev_text in ("if", "while", "for", "with")
                )
                stack.append("if(" if condition else value)
                prev_text = value
            else:
                if not stack or _OPEN.get(stack[-1]) != value:
                    balanced = False
                # `if (a) /re/.test(b)`: after the condition a statement, so a regex, may follow
                prev_text = "{" if stack and stack.pop() == "if(" else value
                depth = len(stack)
            emit("punct", value, line, line, depth)
            prev_kind = "punct"
            pos = m.end()
            continue
        end = m.end()
        if group == "nl":
            line += m.group(group).count("\n")
            pos = end
            continue
        if group == "end":  # trailing spaces
            break
        if group == "lc" and jsx and _url_scheme_before(text, m.start(group)):
            # `<a>http://example.com</a>`: in JSX text the slashes of a URL open no comment
            emit("punct", "//", line, line, len(stack))
            prev_kind, prev_text = "punct", "//"
            pos = m.start(group) + 2
            continue
        if group in ("lc", "bc"):
            if group == "bc":
                close = text.find("*/", end)
                end = n if close == -1 else close + 2
            end_line = line + text.count("\n", pos, end)
            if len(stack) <= keep_depth:
                doc = text.startswith("/**", m.start(group))
                comments.append(Comment(line, end_line, last_line < line, doc))
            line, pos = end_line, end
            continue
        start_line = line
        depth = len(stack)
        if group == "tpl" or group == "bracket":  # a template literal, or the `}` that closes its `${`
            if group == "bracket":  # the template literal goes on
                stack.pop()
                depth = len(stack)
            tail = _TEMPLATE.match(text, end)
            assert tail is not None  # the template pattern also matches the empty string
            end = tail.end()
            if text.startswith("${", end):
                stack.append("`")
                end += 2
            elif end < n:
                end += 1  # the closing backtick
            line += text.count("\n", pos, end)
            emit("tpl", "`", start_line, line, depth)
            prev_kind, prev_text = "tpl", "`"
            pos = end
            continue
        value = m.group(group)
        kind = group
        if group == "slash":
            # `<Input value={v} />`: in JSX a `/` after `}` that ends a tag starts no regex
            if _regex_allowed(prev_kind, prev_text) and not (
                jsx and prev_text == "}" and text.startswith(">", end)
            ):
                rm = _REGEX.match(text, end - len(value) + 1)
                if rm is not None:
                    kind, end, value = "regex", rm.end(), "/"
            if kind == "slash":
                kind = "punct"
        elif group == "jsxclose":
            kind = "punct"
            if not jsx:  # `a </b>/` is not JSX in TypeScript: take `<` alone
                end, value = m.start(group) + 1, "<"
        elif group == "str":
            if not _closed(text, m.start(group), end):
                # a quote whose string never closes on its line: in JSX text (`Don't panic
                # {items.map(...)}`) it is a plain character, and what follows it is code
                unclosed[value[0]] = end
                kind, end, value = "punct", m.start(group) + 1, value[0]
            line += text.count("\n", pos, end)
        elif group == "other":
            kind = "punct"
        emit(kind, value, start_line, line, depth)
        prev_kind, prev_text = kind, value
        pos = end
    if stack:
        balanced = False
    return Lexed(tokens, comments, balanced)


def _closed(text: str, start: int, end: int) -> bool:
    """Tell whether the string literal text[start:end] ends with its own unescaped quote."""
    if end - start < 2 or text[end - 1] != text[start]:
        return False
    slashes = end - 2
    while slashes > start and text[slashes] == "\\":
        slashes -= 1
    return (end - 2 - slashes) % 2 == 0


def _url_scheme_before(text: str, start: int) -> bool:
    """Tell whether the `//` at `start` follows a URL scheme (`http:`), which code never has."""
    return start >= 2 and text[start - 1] == ":" and text[start - 2].isalpha()


def _regex_allowed(prev_kind: str, prev_text: str) -> bool:
    """Tell whether a `/` after the previous token starts a regular expression."""
    if prev_kind in ("num", "str", "tpl", "regex"):
        return False
    if prev_kind == "name":
        return prev_text in EXPRESSION_KEYWORDS
    return prev_text not in (")", "]", "++", "--")
