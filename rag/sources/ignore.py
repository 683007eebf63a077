"""Gitignore-syntax matching for `.ragignore` files and for walks outside git repos.

Semantics follow git's documentation (gitignore(5)) and its wildmatch: each pattern is compiled
once to a regex; `IgnoreRules.match` gives the decision of one file's patterns (last match wins);
`is_ignored` combines several files, lowest precedence first, and applies git's rule that nothing
under an ignored directory can be re-included.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rag.errors import InputError
from rag.sources.rulefiles import RuleFileError, read_rule_file

# POSIX bracket classes wildmatch understands, as ASCII regex class contents.
_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "space": " \\t\\n\\r",  # git's own isspace: no vertical tab, no form feed
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


class _Invalid(Exception):
    """Raised while translating a pattern git would never match (e.g. an unclosed `[`)."""


@dataclass(frozen=True, slots=True)
class _Rule:
    """One compiled line of an ignore file."""

    line: str  # the line as written, for debugging
    regex: re.Pattern[str]
    negated: bool  # `!pattern`: re-include
    dir_only: bool  # `pattern/`: directories only
    basename_only: bool  # no '/' in the pattern: match the last path component at any depth


@dataclass(frozen=True, slots=True)
class IgnoreRules:
    """The compiled patterns of one ignore file, relative to the directory that holds it."""

    base: str = ""  # directory of the ignore file, relative to the root, '/'-separated; "" = root
    rules: tuple[_Rule, ...] = ()

    @classmethod
    def parse(cls, lines: Iterable[str], base: str = "") -> IgnoreRules:
        """Compile gitignore-syntax lines; `base` is the directory that holds them."""
        rules = []
        for raw in lines:
            line = raw[:-1] if raw.endswith("\n") else raw
            rule = _compile(line[:-1] if line.endswith("\r") else line)  # git drops one CR, no more
            if rule is not None:
                rules.append(rule)
        return cls(base=base.strip("/"), rules=tuple(rules))

    @classmethod
    def from_file(cls, path: Path, base: str = "", links_absent: bool = False) -> IgnoreRules:
        """Read and compile an ignore file; a missing file gives empty rules. A link, a pipe, a
        device or a file over 1 MB is an InputError, or with `links_absent` a link is read as no
        file (git does not follow a .gitignore that is a link)."""
        if links_absent and path.is_symlink():
            return cls(base=base.strip("/"))
        try:
            # bytes, not read_text: its universal newlines make a lone CR a line break, and git
            # does not (a CR-only file is one pattern to git)
            text = read_rule_file(path).decode("utf-8-sig", errors="replace")
        except (FileNotFoundError, NotADirectoryError):
            return cls(base=base.strip("/"))
        except RuleFileError as exc:  # a FIFO would hang the walk, /dev/zero exhaust its memory
            raise InputError(str(exc)) from None
        return cls.parse(text.split("\n"), base)

    def match(self, relpath: str, is_dir: bool) -> bool | None:
        """Return True if ignored, False if re-included by `!`, None if no pattern applies.

        `relpath` is relative to the root (not to `base`), '/'-separated.
        """
        path = _bytes(relpath.strip("/"))
        if self.base:
            base = _bytes(self.base)
            if not path.startswith(base + "/"):
                return None
            path = path[len(base) + 1 :]
        basename = path.rpartition("/")[2]
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.fullmatch(basename if rule.basename_only else path):
                return not rule.negated
        return None


def is_ignored(rules: Sequence[IgnoreRules], relpath: str, is_dir: bool) -> bool:
    """Decide whether `relpath` is ignored; `rules` run lowest precedence first (root, then deeper).

    As in git, a path under an ignored directory is ignored whatever later patterns say.
    """
    parts = relpath.strip("/").split("/")
    for depth in range(1, len(parts)):
        if _decide(rules, "/".join(parts[:depth]), True):
            return True
    return bool(_decide(rules, "/".join(parts), is_dir))


def _decide(rules: Sequence[IgnoreRules], relpath: str, is_dir: bool) -> bool | None:
    """Return the decision of the highest-precedence rules file that has one."""
    for file_rules in reversed(rules):
        decision = file_rules.match(relpath, is_dir)
        if decision is not None:
            return decision
    return None


def _compile(line: str) -> _Rule | None:
    """Compile one line, or return None for blanks, comments and patterns that never match."""
    if not line or line.startswith("#"):
        return None
    pattern = _trim_trailing_spaces(_bytes(line))
    negated = pattern.startswith("!")
    if negated:
        pattern = pattern[1:]
    dir_only = pattern.endswith("/")
    if dir_only:
        pattern = pattern[:-1]
    if not pattern:
        return None
    basename_only = "/" not in pattern
    if pattern.startswith("/"):
        pattern = pattern[1:]
    # git matches a pattern with a '/' in two steps: its literal prefix (up to the first of
    # * ? [ \\), then the rest as a pattern of its own, so a '**' right after the prefix
    # (`foo**/bar`) starts a whole component
    rest = 0 if basename_only else next((k for k, c in enumerate(pattern) if c in "*?[\\"), len(pattern))
    try:
        regex = re.compile(_translate(pattern, rest), re.DOTALL)
    except _Invalid:
        return None
    return _Rule(line, regex, negated, dir_only, basename_only)


def _trim_trailing_spaces(line: str) -> str:
    """Drop trailing spaces unless escaped with a backslash, as git does."""
    end = i = 0
    while i < len(line):
        if line[i] == " ":
            i += 1
            continue
        i += 2 if line[i] == "\\" else 1
        end = min(i, len(line))
    return line[:end]


def _bytes(text: str) -> str:
    """Return text with each UTF-8 byte as one character: git's wildmatch compares bytes, so
    `?` matches one byte of `é`, not the letter."""
    return text if text.isascii() else text.encode("utf-8", "surrogateescape").decode("latin-1")


def _translate(pattern: str, rest: int = 0) -> str:
    """Translate a wildmatch pattern (WM_PATHNAME semantics) to a regex for `fullmatch`; `rest`
    is where git's second step starts (see _compile)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            # '**' is special only as a whole path component; otherwise it is a plain '*'.
            starts = i in (0, rest) or pattern[i - 1] == "/"
            if j - i >= 2 and starts and pattern.startswith("\\/", j):
                out.append(".*/")  # '**\/' crosses directories as '**/' does, but at least one
                i = j + 2
                continue
            if j - i >= 2 and starts and (j == n or pattern[j] == "/"):
                if j == n:
                    out.append(".*")  # 'a/**': everything inside
                else:
                    out.append("(?:[^/]*/)*")  # '**/': zero or more directories
                    j += 1
            else:
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            regex, i = _translate_bracket(pattern, i)
            out.append(regex)
        elif c == "\\":
            if i + 1 >= n:
                raise _Invalid(pattern)  # a trailing lone backslash matches nothing
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _translate_bracket(pattern: str, start: int) -> tuple[str, int]:
    """Translate the `[...]` at `start`; return the regex and the index after `]`."""
    i, n = start + 1, len(pattern)
    negate = i < n and pattern[i] in "!^"
    if negate:
        i += 1
    items: list[str] = []
    first = True
    while True:
        if i >= n:
            raise _Invalid(pattern)  # unclosed '[': wildmatch aborts, so the line never matches
        c = pattern[i]
        if c == "]" and not first:
            i += 1
            break
        first = False
        if c == "[" and pattern.startswith(":", i + 1):
            # a class only if the first ']' after it closes `:]`; otherwise the '[' is a member
            close = pattern.find("]", i + 2)
            if close > i + 2 and pattern[close - 1] == ":":
                name = pattern[i + 2 : close - 1]
                if name not in _CLASSES:
                    raise _Invalid(pattern)
                items.append(_CLASSES[name])
                i = close + 1
                continue
        if c == "\\":
            i += 1
            if i >= n:
                raise _Invalid(pattern)
            c = pattern[i]
        i += 1
        if i + 1 < n and pattern[i] == "-" and pattern[i + 1] != "]":
            hi = pattern[i + 1]
            i += 2
            if hi == "\\":
                if i >= n:
                    raise _Invalid(pattern)
                hi = pattern[i]
                i += 1
            # a reversed range (`[z-a]`) is its first character alone: wildmatch has matched it
            # as a literal before it reads the '-'
            items.append(f"{re.escape(c)}-{re.escape(hi)}" if c <= hi else re.escape(c))
            continue
        items.append(re.escape(c))
    body = "".join(items)
    if negate:
        return f"[^/{body}]", i
    # a bracket never matches '/', even when it lists it
    return (f"(?!/)[{body}]" if body else "(?!)"), i
