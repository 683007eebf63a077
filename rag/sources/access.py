"""Access lists: which callers may read which files.

A ``.rag-access`` file at the repository root assigns groups to paths, one rule a line:

    # pattern (gitignore syntax)   groups that may read matching files
    secrets-docs/                  security
    finance/**/*.py                finance admins
    *.md                           public

The last rule that matches a file decides, as in CODEOWNERS; ``public`` (or no matching
rule) makes a file readable by everyone. A caller runs with a set of groups (``--as``,
``RAG_GROUPS``) and may read a file when it is public or shares a group with its rule.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from rag.errors import InputError
from rag.sources.ignore import IgnoreRules, is_ignored
from rag.sources.names import ACCESS_FILE, access_digest, decode_rules
from rag.sources.rulefiles import RuleFileError, read_rule_file

PUBLIC = "public"


@dataclass(frozen=True, slots=True)
class AccessRule:
    """One line of .rag-access: a gitignore-style pattern and the groups it grants."""

    pattern: str
    groups: frozenset[str]  # empty = public
    rules: IgnoreRules


@dataclass(frozen=True, slots=True)
class AccessList:
    """The access rules of a repository; with no rules every file is public."""

    rules: tuple[AccessRule, ...] = ()
    digest: str | None = None  # sha1 of the file's text; None when there is no file

    @classmethod
    def parse(cls, text: str, source: str = ACCESS_FILE) -> AccessList:
        """Parse .rag-access text; a rule without groups is an error naming the line."""
        rules = []
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            pattern, groups = _split_rule(line, f"{source}:{number}")
            if not groups:
                raise InputError(
                    f"{source}:{number}: rule {pattern!r} names no group — write "
                    f"`{pattern} GROUP [GROUP ...]` or `{pattern} {PUBLIC}`"
                )
            compiled = IgnoreRules.parse([pattern])
            if not compiled.rules:  # git would never match it: the files it meant to restrict would be public
                raise InputError(
                    f"{source}:{number}: pattern {pattern!r} is not a valid gitignore pattern (an "
                    "unclosed `[`, an unknown `[:class:]`, or nothing but `/`) — fix or remove the line"
                )
            granted = frozenset(g for g in groups if g != PUBLIC)
            rules.append(AccessRule(pattern, granted, compiled))
        return cls(tuple(rules), access_digest(text))

    @classmethod
    def load(cls, root: str | os.PathLike[str]) -> AccessList:
        """Read ROOT/.rag-access; a missing file means everything is public."""
        path = Path(root) / ACCESS_FILE
        try:
            text = decode_rules(read_rule_file(path))
        except FileNotFoundError:
            return cls()
        except RuleFileError as exc:  # a pipe, a device, a link or a huge file: never fail open
            raise InputError(str(exc)) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read {path} ({exc}) — fix or remove it") from None
        return cls.parse(text, str(path))

    def groups_of(self, relpath: str) -> frozenset[str]:
        """Return the groups that may read `relpath`; empty means public."""
        for rule in reversed(self.rules):
            if is_ignored([rule.rules], relpath, False):
                return rule.groups
        return frozenset()

    def may_read(self, relpath: str, groups: frozenset[str]) -> bool:
        """Tell whether a caller with `groups` may read `relpath` (a folder when it ends in '/',
        whose own rule decides, as for a folder passed over whole)."""
        if not self.rules:
            return True
        folder = relpath.endswith("/")
        path = relpath.rstrip("/")
        for rule in reversed(self.rules):
            if is_ignored([rule.rules], path, folder):
                return can_read(rule.groups, groups)
        return True

    def all_groups(self) -> frozenset[str]:
        """Return every group named by a rule."""
        return frozenset(g for r in self.rules for g in r.groups)


def _split_rule(line: str, where: str) -> tuple[str, list[str]]:
    """Split a stripped rule line into its pattern, as gitignore writes it (a backslash escapes the
    next character, so `Secret\\ Plans/` is one pattern with a space), and the groups after it."""
    i = 0
    while i < len(line) and not line[i].isspace():
        if line[i] == "\\":
            if i + 1 == len(line):
                raise InputError(
                    f"{where}: the pattern ends with a lone backslash — escape it as `\\\\`, or remove it"
                )
            i += 1  # the escaped character, a space included, belongs to the pattern
        i += 1
    pattern, groups = line[:i], line[i:].split()
    for group in groups:
        if not re.fullmatch(r"[\w.@+-]+", group):
            # a stray character is a mistyped pattern more often than a group name
            raise InputError(
                f"{where}: {group!r} is not a group name (letters, digits and . _ @ + -) — "
                "escape spaces and special characters of the pattern with a backslash"
            )
    return pattern, groups


def can_read(file_groups: frozenset[str], caller_groups: frozenset[str]) -> bool:
    """Return whether a caller with `caller_groups` may read a file restricted to `file_groups`."""
    return not file_groups or bool(file_groups & caller_groups)
