"""Build the text as its values read: escapes decoded, continued lines and split values joined."""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterator

from rag.secrets.randomness import as_text
from rag.secrets.values import secret_name


class _Spliced:
    """A text built from pieces of another, each piece copied, decoded (escapes), or standing for a
    span of it, with the map back: a secret found in the built text is redacted in the original."""

    def __init__(self, original: str) -> None:
        self.original_text = original
        self.parts: list[str] = []
        self.starts: list[int] = []  # where each piece starts in the built text
        self.spans: list[
            tuple[int, int, str, int]
        ] = []  # original start, end; "copy", "put" or "sub"; region
        self.subs: dict[
            int, tuple[re.Pattern[str], Callable[[re.Match[str]], str]]
        ] = {}  # "sub" piece -> how
        # "sub" piece -> where each replacement is in the built text, its length there, where in the original
        self.maps: dict[int, tuple[list[int], list[int], list[re.Match[str]]]] = {}
        self.size = 0
        self.region = 0

    def copy(self, start: int, end: int) -> None:
        """Append the original's start..end as it is."""
        if start < end:
            self._add(self.original_text[start:end], start, end, "copy")

    def put(self, value: str, start: int, end: int) -> None:
        """Append `value`, standing for the original's start..end."""
        self._add(value, start, end, "put")

    def sub(
        self, start: int, end: int, pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str]
    ) -> None:
        """Append the original's start..end with each match of `pattern` replaced by `repl` of it
        (one piece however many replacements: a file of a million escapes is one piece, mapped on
        demand)."""
        self.subs[len(self.parts)] = (pattern, repl)
        self._add(pattern.sub(repl, self.original_text[start:end]), start, end, "sub")

    def end_region(self) -> None:
        """Close a region: a line break that stands for nothing, and no secret spans two regions."""
        if self.parts and self.spans[-1][3] == self.region:
            self.region += 1
            self.put("\n", self.spans[-1][1], self.spans[-1][1])
            self.region += 1

    def _add(self, value: str, start: int, end: int, how: str) -> None:
        self.parts.append(value)
        self.starts.append(self.size)
        self.spans.append((start, end, how, self.region))
        self.size += len(value)

    def text(self) -> str:
        """The built text."""
        return "".join(self.parts)

    def original(self, start: int, end: int) -> tuple[int, int] | None:
        """Map a span of the built text to the original's, or None if it crosses two regions."""
        i = bisect.bisect_right(self.starts, start) - 1
        j = bisect.bisect_right(self.starts, end - 1) - 1
        if self.spans[i][3] != self.spans[j][3]:
            return None
        a, b = self._at(i, start - self.starts[i], False), self._at(j, end - self.starts[j], True)
        return (a, b) if a < b else None

    def _at(self, piece: int, offset: int, is_end: bool) -> int:
        """The original offset of a built-text offset within a piece (an end is exclusive)."""
        start, end, how, _ = self.spans[piece]
        if how == "copy":
            return start + offset
        if how == "put":
            return end if is_end else start
        if piece not in self.maps:
            pattern, repl = self.subs[piece]
            built, lengths, matches, shrink = [], [], [], 0
            for m in pattern.finditer(self.original_text, start, end):
                n = len(repl(m))
                built.append(m.start() - start - shrink)
                lengths.append(n)
                matches.append(m)
                shrink += len(m[0]) - n
            self.maps[piece] = (built, lengths, matches)
        built, lengths, matches = self.maps[piece]
        # the last replacement that starts before an end, or at or before a start
        k = (bisect.bisect_left(built, offset) if is_end else bisect.bisect_right(built, offset)) - 1
        if k < 0:
            return start + offset
        inside = offset <= built[k] + lengths[k] if is_end else offset < built[k] + lengths[k]
        if inside and lengths[k]:  # within a replacement: all of what it replaced
            return matches[k].end() if is_end else matches[k].start()
        return matches[k].end() + offset - built[k] - lengths[k]


# an escape in a JSON or Python string (a notebook's outputs, a serialised config): \" \n \uXXXX ...; C's octal;
# a byte or code point as C, PHP, Perl and Python write one (`\x4f`), Swift, Rust and ES6 (`\u{4F}`), or
# Perl and Ruby (`\x{4F}`)
_ESCAPE = re.compile(
    r"""\\(?:u(?P<hex>[0-9a-fA-F]{4})|(?P<char>["'\\/bfnrt])|(?P<oct>[0-3][0-7]{2})"""
    r"""|x(?P<byte>[0-9a-fA-F]{2})|[ux]\{(?P<point>[0-9a-fA-F]{1,6})\})"""
)
_UNESCAPED = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
# what the rules that escapes hide from (names before `\"`, lines joined by `\n`) look for: lines
# of escapes without one of these are not decoded (a token rule finds a token between escapes)
_CREDENTIAL_WORDS = ("pass", "pwd", "secret", "key", "token", "auth")  # (lowered)
_ESCAPED_WORDS = (
    *_CREDENTIAL_WORDS,
    "basic",
    "machine",
    "mysql",
    "redis",
    "://",
    "-----",
)


_OCTAL_RUN = re.compile(r"(?:\\[0-3][0-7]{2}){16}")
# an escape of a printable character (`\x4f`, `\u{47}`, `\x{47}`), and a text spelt in eight or more in a
# row: written so to hide it
SPELT_ESCAPE = r"\\(?:x[2-7][0-9a-fA-F]|[ux]\{0{0,4}[2-7][0-9a-fA-F]\})"
_SPELT_RUN = re.compile(f"(?:{SPELT_ESCAPE}){{8}}")


def unescape(text: str) -> str:
    """`text` with its escapes decoded (see _ESCAPE)."""
    return _ESCAPE.sub(_unescape, text)


def _unescape(m: re.Match[str]) -> str:
    """Decode one escape (see _ESCAPE)."""
    char, octal = m["char"], m["oct"]
    if octal is not None:  # C's `\064`
        return chr(int(octal, 8))
    if char is not None:
        return _UNESCAPED.get(char, char)
    point = int(m["hex"] or m["byte"] or m["point"], 16)
    return chr(point) if point < 0x110000 else m[0]


# a line continued by a backslash, and the string literals around it that Python concatenates
# (a value broken inside a token, `password=RZWZa23\` and `    pmWeS` below, as .properties files continue
# one, loses the next line's indent too)
_CONTINUATION = re.compile(r"""(?P<q>["'])[ \t]*\\\r?\n[ \t]*(?P=q)|(?<=[A-Za-z0-9])\\\r?\n[ \t]*|\\\r?\n""")
_CONTINUED = re.compile(r"\\\r?\n")
# NAME = ( "part" "part" ... ) or NAME = ( "value" ): a value inside brackets on the lines below
# its name (as black wraps a long string), the literals Python concatenates, a comment after each
# (found by the bracket that ends its line: a pattern led by `[=:]` scanned every file 3 times slower)
_OPEN_PAREN = re.compile(r"\([ \t]*\r?\n")
_PARENTHESISED = re.compile(
    r"""\((?P<body>\s*+(?:[bruBRU]{0,2}(?P<q>["'])[^"'\\\n]*+(?P=q)[ \t]*+(?:(?:\#|//)[^\n]*+)?\s*+)++)\)"""
)
_LITERAL = re.compile(r"""[bruBRU]{0,2}(["'])([^"'\\\n]*+)\1|(?:\#|//)[^\n]*+""")  # or a comment
# NAME =\n    "value"; a value on the line below its name, as JavaScript, TypeScript, Java, Kotlin,
# PHP, Rust and C# formatters break a long assignment (`=`, `:=` or `=>` ends the line; not `==`)
_OPERATOR_ENDS_LINE = re.compile(r"=>?[ \t]*\r?\n")
_NEXT_LINE_VALUE = re.compile(
    r"""[ \t]*+(?P<value>[bruBRU]{0,2}(?P<q>["'`])[^"'`\\\n]{1,512}+(?P=q))[ \t]*+[;,]?[ \t]*+(?:(?:\#|//)[^\r\n]*+)?(?=\r?\n|\Z)"""
)
# a YAML block scalar: `name: >` or `name: |` (with chomping and indentation marks), its value on
# the more indented lines below
_BLOCK_HEAD = re.compile(
    r"""(?m)^(?P<indent>[ \t]*)(?:-[ \t]+)?["']?(?P<name>[\w.-]{1,128}+)["']?:(?P<mark>[ \t]*[>|][-+]?[1-9]?[ \t]*)\r?$"""
)
_BLOCK_LINES = 8  # a value split over more lines than this is text, not a token


def decoded_view(text: str) -> _Spliced | None:
    """Build the text as its values read (see _Spliced), from the lines that hold escapes,
    continuations, parenthesised literals, values on the line below their names and YAML block
    scalars; None if there are none."""
    view = _Spliced(text)
    if "\\" in text:
        _add_escaped_lines(view, text)
        if "\\\n" in text or "\\\r\n" in text:
            _add_continued_lines(view, text)
    if "(" in text:
        _add_parenthesised(view, text)
    if "-join" in text or any(word in text for word in _LIST_JOIN_WORDS + _CFN_JOIN_WORDS):
        _add_joined_lists(view, text)
    _add_formatted(view, text)
    _add_adjacent_literals(view, text)  # (each finds its own words: a test of them first costs as much)
    _add_decoded_calls(view, text)
    if "&#" in text:
        _add_character_references(view, text)
    if "fromCharCode" in text or "string.char(" in text or any(call in text for call in _CHR_WORDS):
        _add_char_codes(view, text)
    if "char" in text or "str" in text:
        _add_code_arrays(view, text)
    if "=hex" in text:
        _add_registry_bytes(view, text)
    if "','" in text or "', '" in text:
        _add_char_lists(view, text)
    _add_next_line_values(view, text)
    if "<<" in text:
        _add_heredoc_values(view, text)
    if ": >" in text or ": |" in text:
        _add_block_scalars(view, text)
    if "!!binary" in text:
        _add_yaml_binary(view, text)
    return view if view.parts else None


# YAML's `!!binary` tag: base64 on its line or in a block scalar below (`password: !!binary |` then
# its lines), which a YAML reader decodes; text is judged as the value it is under its name
_YAML_BINARY = re.compile(
    r"!!binary[ \t]*+(?:[|>][-+]?[ \t]*+\r?\n(?P<block>(?:[ \t]++[A-Za-z0-9+/=]{4,}+[ \t]*+(?:\r?\n|\Z)){1,64}+)"
    r"|(?P<quote>[\"']?)(?P<inline>[A-Za-z0-9+/=]{8,}+)(?P=quote))"
)


def _add_yaml_binary(view: _Spliced, text: str) -> None:
    """Add each `!!binary` value whose bytes are text as that text, a literal after its name."""
    import base64
    import binascii

    for m in itertools.islice(_YAML_BINARY.finditer(text), _MAX_JOINS):
        group = "block" if m["block"] is not None else "inline"
        encoded = "".join(m[group].split())
        try:
            value = base64.b64decode(encoded, validate=True).decode("utf-8")
        except (ValueError, binascii.Error, UnicodeDecodeError):
            continue
        if len(value) >= 8 and _literal_text(value):  # (the tag and its base64 read as one literal)
            _put_value(view, text, m.start(), m.start(group) + len(m[group].rstrip()), value)


def _add_parenthesised(view: _Spliced, text: str) -> None:
    """Add each `NAME = (` whose literals follow on the lines below as `NAME = "<the literals joined>"`."""
    for paren in _OPEN_PAREN.finditer(text):
        if not text[max(0, paren.start() - 8) : paren.start()].rstrip(" \t").endswith(("=", ":")):
            continue
        m = _PARENTHESISED.match(text, paren.start())
        if m is None:
            continue
        line = text.rfind("\n", 0, m.start()) + 1
        literals = [lit for lit in _LITERAL.finditer(text, m.start("body"), m.end("body")) if lit[1]]
        if len(literals) == 1:
            # one literal on its own line is read as written by every rule but those that need
            # its name: joined to the name only when that holds a credential's word, and mapped
            # back exactly, so the brackets stay
            if _NAME_HINT.search(text, line, paren.start()):
                view.copy(line, paren.start())
                view.put(" ", paren.start(), literals[0].start())
                view.copy(literals[0].start(), literals[0].end())
                view.end_region()
            continue
        view.copy(line, m.start("body") - 1)
        view.put(f'"{"".join(lit[2] for lit in literals)}"', m.start("body") - 1, m.end())
        view.end_region()


# literals joined with nothing between them: Python's "".join(["a", "b"]), JavaScript's ["a", "b"].join(""),
# Swift's ["a", "b"].joined(), Rust's concat!("a", "b"), PowerShell's @('a', 'b') -join '' and -join @('a', 'b'), C#'s
# string.Concat("a", "b") and String.join("", "a", "b"), Kotlin's listOf("a", "b").joinToString(""), Go's strings.Join([]string{"a", "b"}, ""),
# CloudFormation's !Join ['', ['a', 'b']] and {"Fn::Join": ["", ["a", "b"]]}
_JOINED_LIST = re.compile(
    r"""(?:""|'')\.join\([ \t]*+[\[(](?P<body>[^\[\]()]{0,2048}+)[\])]\s*+\)"""
    r"""|concat!\((?P<args>[^\[\]()]{0,2048}+)\)"""
    r"""|[Ss]tring\.Concat\((?P<cs>[^\[\]()]{0,2048}+)\)"""
    r"""|[Ss]tring\.[Jj]oin\([ \t]*+(?:""|'')[ \t]*+,(?P<sj>[^\[\]()]{0,2048}+)\)"""
    r"""|(?:listOf|arrayOf)\((?P<kt>[^\[\]()]{0,2048}+)\)\s*+\.joinToString\([ \t]*+(?:(?:separator[ \t]*+=[ \t]*+)?"")?[ \t]*+\)"""
    r"""|strings\.Join\(\[\]string\{(?P<go>[^\[\]{}()]{0,2048}+)\}[ \t]*+,[ \t]*+""[ \t]*+\)"""
    r"""|\[(?P<list>[^\[\]]{0,2048}+)\]\s*+\.join(?:ed)?\([ \t]*+(?:(?:separator:[ \t]*+)?(?:""|''|``))?[ \t]*+\)"""
)
# (searched apart, in the texts that hold `Join`: an alternative more in the pattern above cost every text)
_CFN_JOINED = re.compile(
    r"""(?:!Join|Fn::Join["']?[ \t]*+:)[ \t]*+\[[ \t]*+(?:""|'')[ \t]*+,\s*+\[(?P<cfn>[^\[\]]{0,2048}+)\]"""
)
# what _JOINED_LIST needs in a text to match there (PowerShell's joins are found from their `-join`)
_LIST_JOIN_WORDS = (
    ".join(",
    ".joined(",
    "concat!(",
    "Concat(",
    ".Join(",
    ".joinToString(",
    "strings.Join(",
)
_CFN_JOIN_WORDS = ("!Join", "Fn::Join")
# (found from its `-join`: the pattern tried at each bracket of a text cost a tenth of the view)
_PS_JOINED = re.compile(r"""@?\((?P<ps>[^\[\]()]{0,2048}+)\)[ \t]*+-join[ \t]*+(?:''|"")""")
_PS_JOINED_UNARY = re.compile(r"""-join[ \t]*+@?\((?P<psu>[^\[\]()]{0,2048}+)\)""")  # its unary form
_BETWEEN_LITERALS = re.compile(r"[\s,]*+")
_NAME_REACH = 80  # characters before a join read with it: its name and operator
_MAX_JOINS = 256  # joins read in one text


# literals assembled by a format made of placeholders alone, or by a function that concatenates its
# arguments: Python's "%s%s%s" % ("a", "b", "c") and "{}{}".format(...), Rust's format!("{}{}", ...),
# Go's fmt.Sprintf("%s%s", ...), GitHub Actions' format('{0}{1}', ...); SQL's and BigQuery's
# CONCAT('a', 'b'), Terraform's join("", ["a", "b"])
_FORMATTED = (  # each searched only in the texts that hold its words (one pattern of them all cost 10% of redaction)
    (
        ("%s%s",),
        re.compile(r"""(?P<q>["'])(?:%s){2,16}(?P=q)[ \t]*+%[ \t]*+\((?P<body>[^()]{0,2048}+)\)"""),
    ),
    (
        ("}.format(",),
        re.compile(r"""(?P<q>["'])(?:\{[0-9]{0,2}\}){2,16}(?P=q)\.format\((?P<body>[^()]{0,2048}+)\)"""),
    ),
    (
        ("{}{}", "{0}{1}", "%s%s", "%v%v"),
        re.compile(
            r"""(?<![\w.])(?:format!?|(?:fmt\.)?Sprintf|sprintf|String\.format)\([ \t]*+(?P<q>["'])"""
            r"""(?:%[sv]|\{[0-9]{0,2}\}){2,16}(?P=q)[ \t]*+,(?P<body>[^()]{0,2048}+)\)"""
        ),
    ),
    (("CONCAT(", "concat(", "Concat("), re.compile(r"""(?<![\w.])(?i:concat)\((?P<body>[^()]{0,2048}+)\)""")),
    (
        ('join(""', "join(''"),
        re.compile(r"""(?<![\w.])join\([ \t]*+(?:""|'')[ \t]*+,\s*+\[(?P<body>[^\[\]]{0,2048}+)\]\s*+\)"""),
    ),
)


def _add_formatted(view: _Spliced, text: str) -> None:
    """Add each run of two or more literals assembled by a format of placeholders alone or a
    concatenating function (see _FORMATTED) as the one literal they make, after its name."""
    found = 0
    for words, pattern in _FORMATTED:
        if not any(word in text for word in words):
            continue
        for m in pattern.finditer(text):
            value = _literals_alone(text, m.start("body"), m.end("body"))
            if value is not None:
                _put_value(view, text, m.start(), m.end(), value)
                found += 1
                if found >= _MAX_JOINS:
                    return


def _literals_alone(text: str, start: int, end: int) -> str | None:
    """The value that two or more literals make when text[start:end] holds them alone, separated by
    commas and blanks; None when it holds anything else (a variable, a call)."""
    literals = list(_LITERAL.finditer(text, start, end))
    pieces = [lit for lit in literals if lit[1]]
    gaps = zip([start, *(lit.end() for lit in literals)], [*(lit.start() for lit in literals), end])
    if len(pieces) < 2 or any(_BETWEEN_LITERALS.fullmatch(text, a, b) is None for a, b in gaps):
        return None
    return "".join(lit[2] for lit in pieces)


def _powershell_joins(text: str) -> Iterator[re.Match[str]]:
    """PowerShell's `@('a', 'b') -join ''`, each found back from its `-join`, and `-join @('a', 'b')`."""
    at = text.find("-join")
    while at != -1:
        m = _PS_JOINED.search(text, max(0, text.rfind("(", max(0, at - 2050), at) - 1), at + 16)
        if m is not None and m.start("ps") - 1 <= at:
            yield m
        unary = _PS_JOINED_UNARY.match(text, at)
        if unary is not None:
            yield unary
        at = text.find("-join", at + 5)


def _add_joined_lists(view: _Spliced, text: str) -> None:
    """Add each list of two or more literals joined with nothing between them as one literal,
    `"<the literals joined>"`, after what precedes it on its line (its name)."""
    joins = 0
    lists = _JOINED_LIST.finditer(text) if any(word in text for word in _LIST_JOIN_WORDS) else iter(())
    cfn = _CFN_JOINED.finditer(text) if any(word in text for word in _CFN_JOIN_WORDS) else iter(())
    for m in itertools.chain(lists, cfn, _powershell_joins(text)):
        body = next(group for group in m.re.groupindex if m[group] is not None)  # (each group is a body)
        value = _literals_alone(text, m.start(body), m.end(body))
        if value is None:
            continue  # not a list of literals alone (a variable, a call among them)
        _put_value(view, text, m.start(), m.end(), value)
        joins += 1
        if joins >= _MAX_JOINS:
            return


# literals side by side on one line, which Python, C and C++ concatenate: `TOKEN = "xoxb-1" "-2" "-3"`
# (a value: after an operator, a bracket or a comma; not a list of quoted words, as a CSP's `'self' 'sha256-...'`)
_ADJACENT = re.compile(
    r"""[bruBRU]{0,2}(?P<q>["'])[^"'\\\n]{1,512}+(?P=q)(?:[ \t]++[bruBRU]{0,2}(["'])[^"'\\\n]{1,512}+\2)++"""
)
_JUNCTIONS = ('" "', "' '", "\" '", "' \"")  # a literal's end, a blank, the next literal's start
_VALUE_AFTER = ("=", ":", "(", "[", ",", "=>")
_MAX_LINE = 4096  # a longer line (minified code, data) is read for no such run


def _add_adjacent_literals(view: _Spliced, text: str) -> None:
    """Add each run of literals side by side on a line as one literal, after what precedes it on
    its line (its name). Only the lines that hold a junction of two literals are read."""
    lines: set[int] = set()
    for junction in _JUNCTIONS:
        at = text.find(junction)
        while at != -1 and len(lines) < _MAX_JOINS:
            lines.add(text.rfind("\n", 0, at) + 1)
            line_end = text.find("\n", at)
            at = -1 if line_end == -1 else text.find(junction, line_end)
    for line in sorted(lines):
        line_end = text.find("\n", line)
        line_end = len(text) if line_end == -1 else line_end
        if line_end - line > _MAX_LINE:
            continue
        for m in _ADJACENT.finditer(text, line, line_end):
            if not text[_name_from(text, m.start()) : m.start()].rstrip(" \t").endswith(_VALUE_AFTER):
                continue
            joined = "".join(lit[2] for lit in _LITERAL.finditer(text, m.start(), m.end()) if lit[1])
            _put_value(view, text, m.start(), m.end(), joined)


# a literal passed to a function that decodes it: hex (`bytes.fromhex`, `unhexlify`, `hex2bin`,
# Perl's `pack('H*', ...)`), base64 (`b64decode`, `atob`, `base64_decode`, `Base64.decode64`, `FromBase64String`,
# `Base64.getDecoder().decode`, `Buffer.from(..., "base64")`), URL-encoding (`urldecode`, `unquote`,
# `decodeURIComponent`); found from a word of their names, the name around it one of them
_DECODER_WORDS = ("hex", "Hex", "ecode", "atob", "unquote", "Base64", "Unescape", "Buffer.from", "pack")
_DECODERS = {  # a decoder's name -> what it decodes
    **dict.fromkeys(
        ("fromhex", "unhexlify", "a2b_hex", "hex2bin", "hexToBytes", "decodeHex", "parseHexBinary", "pack"),
        "hex",
    ),
    **dict.fromkeys(
        (
            "b64decode",
            "urlsafe_b64decode",
            "a2b_base64",
            "atob",
            "base64_decode",
            "decode64",
            "strict_decode64",
        )
        + (
            "urlsafe_decode64",
            "FromBase64String",
            "decodeBase64",
            "getDecoder().decode",
            "getDecoder.decode",
        ),
        "base64",
    ),
    **dict.fromkeys(
        ("urldecode", "rawurldecode", "unquote", "unquote_plus", "decodeURIComponent", "QueryUnescape")
        + ("PathUnescape",),
        "url",
    ),
}
_DECODE_CALL = re.compile(
    r"""(?P<fn>[A-Za-z_]\w*+|getDecoder(?:\(\))?\.decode|Buffer\.from)"""  # (Scala's without `()`)
    r"""\([ \t]*+(?P<template>(?P<tq>["'])H\*(?P=tq)[ \t]*+,[ \t]*+)?[bruBRU]{0,2}(?P<q>["'`])(?P<value>[A-Za-z0-9+/=_%.~!*-]{8,1024}+)(?P=q)"""
    r"""(?:[ \t]*+,[ \t]*+(?P<eq>["'])(?P<encoding>base64|base64url|hex)(?P=eq))?[ \t]*+\)"""
)


def _decode_calls(text: str) -> Iterator[re.Match[str]]:
    """The decoding calls of a literal (see _DECODE_CALL), each once."""
    seen: set[int] = set()
    for word in _DECODER_WORDS:
        at = text.find(word)
        while at != -1 and len(seen) < _MAX_JOINS:
            start, end = at, at + len(word)
            if word != "Buffer.from":  # the name that holds the word
                while start and (text[start - 1].isalnum() or text[start - 1] == "_"):
                    start -= 1
                while end < len(text) and (text[end].isalnum() or text[end] == "_"):
                    end += 1
                name = text[start:end]
                if name == "decode" and text.endswith(("getDecoder().", "getDecoder."), 0, start):
                    start = text.rfind("getDecoder", 0, start)
                elif name not in _DECODERS:
                    at = text.find(word, end)
                    continue
            if start not in seen:
                m = _DECODE_CALL.match(text, start)
                if m is not None and (m["template"] is None) != (m["fn"] == "pack"):  # Perl's pack('H*', ..)
                    seen.add(start)
                    yield m
            at = text.find(word, end)


def _add_decoded_calls(view: _Spliced, text: str) -> None:
    """Add each decoding call of a literal whose result is text as that text, a literal, between
    what precedes it on its line (its name) and what follows (`String(...)`'s bracket)."""
    import binascii
    import urllib.parse

    for m in _decode_calls(text):
        value = m["value"]
        encoding = m["encoding"] if m["fn"] == "Buffer.from" else _DECODERS[m["fn"]]
        try:
            if encoding is None:
                continue  # Buffer.from(...) of text
            if encoding == "hex":
                data = bytes.fromhex(value)
            elif encoding == "url":
                data = urllib.parse.unquote_to_bytes(value)
            else:
                data = _b64(value)
            decoded = data.decode("utf-8")
        except (ValueError, binascii.Error, UnicodeDecodeError):
            continue
        if not _literal_text(decoded):
            continue  # binary (key bytes are judged as written), or no literal's text
        _put_value(view, text, _call_start(text, m.start()), m.end(), decoded, rest=True)


# a run of six or more numeric character references, a value spelt so (`value="&#114;&#101;..."`)
_REFERENCES = re.compile(
    r"(?:&#(?:[0-9]{2,3}|[xX][0-9a-fA-F]{2});){6,256}"
)  # (led by a literal: searched fast)
_REFERENCE = re.compile(r"&#(?:([0-9]{2,3})|[xX]([0-9a-fA-F]{2}));")


def _add_character_references(view: _Spliced, text: str) -> None:
    """Add each run of numeric character references as the literal it spells."""
    for m in itertools.islice(_REFERENCES.finditer(text), _MAX_JOINS):
        value = "".join(chr(int(d) if d else int(h, 16)) for d, h in _REFERENCE.findall(m[0]))
        if not _literal_text(value):
            continue
        start, end = m.start(), m.end()
        if text[start - 1 : start] in ("'", '"') and text[end : end + 1] == text[start - 1]:
            start, end = start - 1, end + 1  # the quotes around it: the literal is the value
        _put_value(view, text, start, end, value, rest=True)


# a string spelt as its character codes: JavaScript's String.fromCharCode(100, 106, ...), Dart's
# String.fromCharCodes([100, 106, ...]), Lua's string.char(100, 106, ...)
_CHAR_CODES = re.compile(
    r"(?:fromCharCodes?|string\.char)\(\s*+\[?\s*+(?P<codes>[0-9]{2,3}(?:[ \t]*+,[ \t\r\n]*+[0-9]{2,3}){7,255})[ \t,]*+\]?[ \t]*+\)"
)


# ... and Visual Basic's Chr(84) & Chr(97) & ... (ChrW, Chr$; joined by `&` or `+`), found from their words
_CHR_WORDS = ("Chr(", "chr(", "CHR(", "ChrW(", "Chr$(", "ChrW$(")
_CHR_CALLS = re.compile(
    r"(?i:chrw?\$?)\([ \t]*+[0-9]{2,3}[ \t]*+\)(?:[ \t]*+[&+][ \t]*+(?:_[ \t]*+\r?\n[ \t]*+)?"
    r"(?i:chrw?\$?)\([ \t]*+[0-9]{2,3}[ \t]*+\)){7,255}"
)


# ... and an array of characters given as their codes: C's `char name[] = { 83, 111, ..., 0 }`
_CODE_ARRAY = re.compile(
    r"[{\[](?P<codes>\s*+[0-9]{2,3}(?:[ \t]*+,\s*+[0-9]{2,3}){7,255})(?:[ \t]*+,\s*+0)?[\s,]*+[}\]]"
)


def _add_code_arrays(view: _Spliced, text: str) -> None:
    """Add each array of printable character codes declared as characters or a string, or named as
    a credential, as the literal it spells (an array of numbers alone is as often a table)."""
    for m in itertools.islice(_CODE_ARRAY.finditer(text), _MAX_JOINS):
        before = text[_name_from(text, m.start()) : m.start()]
        if "char" not in before.lower() and "str" not in before.lower() and not _NAME_HINT.search(before):
            continue
        codes = [int(c) for c in re.findall(r"[0-9]+", m["codes"])]
        value = "".join(map(chr, codes))
        if all(32 <= c < 127 for c in codes) and _literal_text(value):
            _put_value(view, text, m.start(), m.end(), value, rest=True)


def _add_char_codes(view: _Spliced, text: str) -> None:
    """Add each string spelt as character codes as the literal it spells."""
    calls = _CHR_CALLS.finditer(text)
    for m in itertools.islice(itertools.chain(_CHAR_CODES.finditer(text), calls), _MAX_JOINS):
        codes = [
            int(c) for c in re.findall(r"(?<![A-Za-z])[0-9]+", m["codes"] if m.re is _CHAR_CODES else m[0])
        ]
        value = "".join(map(chr, codes))
        if all(32 <= c < 127 for c in codes) and _literal_text(value):
            start = _call_start(text, m.start()) if m.re is _CHAR_CODES else m.start()
            _put_value(view, text, start, m.end(), value, rest=True)


# a string spelt as a list of its characters: C#'s `new[] { 'P','u',... }`, Java's `new char[] {...}`,
# Kotlin's `charArrayOf(...)`, Go's `[]rune{...}`, eight characters at least
_MADE_STRING = re.compile(
    r"\A[\s\]}),]{0,8}(?:\.(?:into_)?iter\(\))?\.(?:join|collect|mkString|concat|toString)\b"
)
_CHAR_LIST = re.compile(r"'(?:[^'\\\n]|\\')'(?:[ \t]*+,[ \t]*+'(?:[^'\\\n]|\\')'){7,255}")


def _add_char_lists(view: _Spliced, text: str) -> None:
    """Add each list of character literals made into a string (`new string(...)`, `String(...)`,
    `.join`, `collect`) or under a credential's name as the literal it spells (a list of characters
    alone is as often a set: `oneOf ['a','A','c',...]`)."""
    for m in itertools.islice(_CHAR_LIST.finditer(text), _MAX_JOINS):
        before = text[_name_from(text, m.start()) : m.start()].lower()
        after = text[m.end() : m.end() + _NAME_REACH]
        if not (
            "str" in before
            or any(word in before for word in _CREDENTIAL_WORDS)
            or _MADE_STRING.search(after) is not None
        ):
            continue
        value = "".join(c.replace("\\'", "'")[1:-1] for c in re.findall(r"'(?:[^'\\\n]|\\')'", m[0]))
        if _literal_text(value):
            _put_value(view, text, m.start(), m.end(), value, rest=True)


# a Windows registry export's binary value: `"Password"=hex:70,72,6f,...` (hex(2) and hex(7): UTF-16
# text), its lines continued by a backslash
_REGISTRY_BYTES = re.compile(
    r"=hex(?:\([0-9a-fA-F]\))?:(?P<bytes>[0-9a-fA-F]{2}(?:,(?:\\\r?\n[ \t]*+)?[0-9a-fA-F]{2}){5,1023})"
)


def _add_registry_bytes(view: _Spliced, text: str) -> None:
    """Add each registry value of bytes that are text as that text, a literal after its name."""
    for m in itertools.islice(_REGISTRY_BYTES.finditer(text), _MAX_JOINS):
        data = bytes(int(b, 16) for b in re.findall(r"[0-9a-fA-F]{2}", m["bytes"]))
        utf16 = len(data) > 1 and data[1::2].count(0) * 2 >= len(data) - 2
        value = (data.decode("utf-16-le", "replace") if utf16 else data.decode("utf-8", "replace")).rstrip(
            "\0"
        )
        if _literal_text(value):
            _put_value(view, text, m.start() + 1, m.end(), value)


def _name_from(text: str, start: int) -> int:
    """Where what precedes `start` on its line is read from: its name and operator (a bounded
    reach: a long line of many values must not be copied once a value)."""
    return max(text.rfind("\n", 0, start) + 1, start - _NAME_REACH)


def _put_value(view: _Spliced, text: str, start: int, end: int, value: str, rest: bool = False) -> None:
    """Add text[start:end] as the literal `"value"`, after what precedes it on its line (its name)
    and, with `rest`, before what follows it there (a wrapper's bracket: `String(...)`), as a region."""
    view.copy(_name_from(text, start), start)
    view.put(f'"{value}"', start, end)
    if rest:
        line_end = text.find("\n", end, end + _NAME_REACH)
        view.copy(end, end + _NAME_REACH if line_end == -1 else line_end)
    view.end_region()


def _b64(value: str) -> bytes:
    """Decode base64, standard or URL-safe, padded or not."""
    import base64

    return base64.urlsafe_b64decode(value.replace("+", "-").replace("/", "_") + "=" * (-len(value) % 4))


_QUALIFIER = re.compile(r"(?:[A-Za-z_][\w$]*+(?:\(\))?(?:\.|::|->))++\Z")


def _call_start(text: str, at: int) -> int:
    """Where the call whose name is at `at` starts, its qualifier with it (`bytes.`, `String.`,
    `Base64.getDecoder().`)."""
    call = _QUALIFIER.search(text, _name_from(text, at), at)
    return at if call is None else call.start()


def _literal_text(value: str) -> bool:
    """Whether decoded text can stand as a literal's: printable, with no quote or backslash."""
    return value.isprintable() and not any(c in value for c in "\"'`\\")


def _add_next_line_values(view: _Spliced, text: str) -> None:
    """Add each `NAME =` that ends its line, the name a credential's, and a literal alone on the
    next line, as `NAME = <the literal>` (see _NEXT_LINE_VALUE)."""
    for op in _OPERATOR_ENDS_LINE.finditer(text):
        if op.start() and text[op.start() - 1] in "=!<>":  # a comparison, not an assignment
            continue
        line = text.rfind("\n", 0, op.start()) + 1
        if not _NAME_HINT.search(text, line, op.start()):
            continue
        value = _NEXT_LINE_VALUE.match(text, op.end())
        if value is None:
            continue
        operator_end = op.start() + (2 if text.startswith("=>", op.start()) else 1)
        view.copy(line, operator_end)
        view.put(" ", operator_end, value.start("value"))
        joined = _joined_lines(text, value)
        if len(joined) == 1:
            view.copy(value.start("value"), value.end())
        else:  # C's and Python's literals side by side, one a line: the one value they make
            view.copy(value.start("value"), value.end("value") - 1)
            for before, after in zip(joined, joined[1:]):
                view.put("", before.end("value") - 1, after.start("value") + 1)
                view.copy(after.start("value") + 1, after.end("value") - 1)
            view.copy(joined[-1].end("value") - 1, joined[-1].end())
        view.end_region()


# a heredoc of one line as a value: HCL's `password = <<-EOT`, Ruby's `<<~EOS.strip`, PHP's `<<<EOT`,
# Perl's `<<'END';`, then the line, then its end
_HEREDOC_VALUE = re.compile(
    r"""[=:][ \t]*+<<<?[-~]?(?P<q>["']?)(?P<id>[A-Za-z_]{2,16}+)(?P=q)[^\n]{0,16}?[ \t]*+\r?\n"""
    r"""[ \t]*+(?P<value>[^\s"'`\\][^\n"'`\\]{0,255}?)[ \t]*+\r?\n[ \t]*+(?P=id)\b"""
)


def _add_heredoc_values(view: _Spliced, text: str) -> None:
    """Add each one-line heredoc after a credential's name as `NAME = "<its line>"`."""
    for m in itertools.islice(_HEREDOC_VALUE.finditer(text), _MAX_JOINS):
        line = text.rfind("\n", 0, m.start()) + 1
        if _NAME_HINT.search(text, line, m.start()) and _literal_text(m["value"]):
            view.copy(_name_from(text, m.start()), m.start() + 1)
            view.put(' "', m.start() + 1, m.start("value"))
            view.copy(m.start("value"), m.end("value"))
            view.put('"', m.end("value"), m.end("value"))
            view.end_region()


_JOINED_LINES = 8  # literals, one a line, read as one value at most


def _joined_lines(text: str, value: re.Match[str]) -> list[re.Match[str]]:
    """The literal on the line below a name, and those on the lines below it while each is alone
    on its line, in the same quotes, and the line before ends with no `;` or `,`."""
    joined = [value]
    while len(joined) < _JOINED_LINES and value["value"][0] == value["q"]:
        if any(c in text[value.end("value") : value.end()] for c in ";,") or value.end() >= len(text):
            break
        after = _NEXT_LINE_VALUE.match(text, text.find("\n", value.end()) + 1)
        if after is None or after["q"] != value["q"] or after["value"][0] != value["q"]:
            break
        joined.append(after)
        value = after
    return joined


def _line_around(text: str, start: int, end: int) -> tuple[int, int]:
    """The start and end of the line (or lines) holding text[start:end]."""
    stop = text.find("\n", end)
    return text.rfind("\n", 0, start) + 1, len(text) if stop == -1 else stop


def _add_escaped_lines(view: _Spliced, text: str) -> None:
    """Add each run of lines that hold escapes, decoded (`\\n` becomes a line break of the view)."""
    m = _ESCAPE.search(text)
    while m is not None:
        start, stop = _line_around(text, m.start(), m.end())
        # the next lines join the run while each holds an escape
        while (m := _ESCAPE.search(text, stop)) is not None and text.find("\n", stop + 1, m.start()) == -1:
            stop = _line_around(text, m.start(), m.end())[1]
        run = text[start:stop].lower()
        if (
            any(word in run for word in _ESCAPED_WORDS) or _OCTAL_RUN.search(run) or _SPELT_RUN.search(run)
        ):  # (a value spelt in escapes)
            view.sub(start, stop, _ESCAPE, _unescape)
            view.end_region()


def _add_continued_lines(view: _Spliced, text: str) -> None:
    """Add each run of lines joined by backslashes, joined (and the literals around the joins merged)."""
    pos = 0
    while (m := _CONTINUED.search(text, pos)) is not None:
        line = text.rfind("\n", 0, m.start()) + 1
        stop = _run_end(text, m.start())
        view.sub(line, stop, _CONTINUATION, lambda _: "")
        view.end_region()
        pos = stop + 1


_CONTINUED_RUN = re.compile(r"(?:[^\n]*\\\r?\n)+[^\n]*")  # lines that end in a backslash, and the one after


def _run_end(text: str, backslash: int) -> int:
    """Where the run of backslash-continued lines that has a continuation at `backslash` ends."""
    run = _CONTINUED_RUN.match(text, text.rfind("\n", 0, backslash) + 1)
    assert run is not None  # the line of `backslash` ends in one
    return run.end()


_NAME_HINT = re.compile(
    r"(?i:pass|pwd|secret|token|key|salt|credential)"
)  # what secret_name needs, in any case


def _indicators(text: str) -> Iterator[int]:
    """Yield where each `: >` or `: |` is (found by str.find: a pattern led by `:` stopped at every
    colon of every file)."""
    for indicator in (": >", ": |"):
        at = text.find(indicator)
        while at != -1:
            yield at
            at = text.find(indicator, at + 3)


def _add_block_scalars(view: _Spliced, text: str) -> None:
    """Add each YAML block scalar of a few token lines as `name: <the lines joined>`."""
    for at in _indicators(text):
        head_start = text.rfind("\n", 0, at) + 1
        if not _NAME_HINT.search(text, head_start, at):  # the name holds no credential's word: skip at once
            continue
        head = _BLOCK_HEAD.match(text, head_start)
        if head is None or head.start("mark") != at + 1 or not secret_name(head["name"]):
            continue
        indent = len(head["indent"])
        pieces: list[tuple[int, int]] = []  # the stripped content of each value line
        pos = head.end() + 1
        while pos < len(text) and len(pieces) <= _BLOCK_LINES:
            end = text.find("\n", pos)
            end = len(text) if end == -1 else end
            line = text[pos:end].rstrip("\r")
            content = line.lstrip(" \t")
            if not content or len(line) - len(content) <= indent:
                break
            pieces.append((pos + len(line) - len(content), pos + len(line.rstrip())))
            pos = end + 1
        if not pieces or len(pieces) > _BLOCK_LINES:
            continue
        values = [text[a:b] for a, b in pieces]
        if len(values) > 1 and any(" " in v or "\t" in v for v in values):
            continue  # prose, not a token split over lines
        view.copy(head.start(), head.start("mark"))
        view.put(" ", head.start("mark"), pieces[0][0])
        view.put("".join(values), pieces[0][0], pieces[-1][1])
        view.end_region()


# base64 written as a block: a long token, and the lines of the same alphabet right below it (a
# MIME body's 76-character lines, a wrapped blob)
_BASE64_BLOCK = re.compile(
    r"[A-Za-z0-9+/]{40,}+={0,2}+(?:[ \t]*+\r?\n[ \t]*+[A-Za-z0-9+/]{4,}+={0,2}+(?![^\r\n]))*+"
)
# each character as a byte, base64's alphabet as `a` and the rest as a blank: runs of 40 are found
# by bytes.find (a regex tried at every character took a tenth of all the rules' time)
_BASE64_CLASS = bytes(
    ord("a") if chr(c).isascii() and (chr(c).isalnum() or chr(c) in "+/") else ord(" ") for c in range(256)
)
_BASE64_RUN = b"a" * 40
_MAX_BLOCK = 1 << 18  # characters of one block decoded (a larger one is data, judged as written)
_MAX_BLOCKS = 1 << 20  # characters of blocks decoded in one text


def encoded_texts(text: str) -> Iterator[tuple[int, int, str]]:
    """Yield each base64 block of `text` that decodes to text (a mail body, an encoded config):
    its span and the text it encodes. Binary (an image, a key's bytes) is left to the rules as
    written; a block's first bytes tell, before the rest is decoded."""
    import binascii

    classes = text.encode("latin-1", "replace").translate(_BASE64_CLASS)  # one byte a character
    budget, at = _MAX_BLOCKS, classes.find(_BASE64_RUN)
    while at != -1 and budget > 0:
        m = None if text[at - 1 : at] in ("=", "_", "-") else _BASE64_BLOCK.match(text, at)
        run_end = classes.find(b" ", at if m is None else m.end())  # (a block's lines are read once)
        at = -1 if run_end == -1 else classes.find(_BASE64_RUN, run_end)
        if m is None or len(m[0]) > _MAX_BLOCK:
            continue  # a URL-safe token's part; or data
        block = m[0]
        try:
            head = _b64(block[:40])
            gzipped = head.startswith(b"\x1f\x8b")  # gzip of text (`H4sI...`): read as its text
            if not gzipped and as_text(head) is None:
                continue
            joined = "".join(block.split())
            budget -= len(joined)
            data = _b64(joined)
            if gzipped:
                data = _gunzipped(data)
            decoded = as_text(data)
        except (ValueError, binascii.Error):
            continue
        if decoded is not None:
            yield m.start(), m.end(), decoded


def _gunzipped(data: bytes) -> bytes:
    """The text gzip `data` holds, the first _MAX_BLOCK bytes of it (a bomb decompresses no further)."""
    import zlib

    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, _MAX_BLOCK)
    except zlib.error:
        return b""  # random bytes that open as gzip does
