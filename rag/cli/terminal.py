"""Text from files and from the model, made safe to show on a terminal.

A passage, a file name or an answer may hold escape sequences: colours, cursor moves, OSC 0 (the
window title) or OSC 52 (a write to the clipboard). Written raw to a terminal, the terminal runs
them. Shown here as `less` and `git` show them: visibly, as text (ESC becomes `\\x1b`).
"""

from __future__ import annotations

import re
from functools import cache

# C0 controls but tab and newline, DEL, C1 controls (U+009B is a one-character CSI), and the bidi
# overrides and isolates that reorder what is shown ("Trojan Source")
_CONTROL = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
# on a line that must stay one line (`path:start-end`), tab and newline too
_CONTROL_OR_BREAK = "[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\x85]"
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


@cache
def _compiled(chars: str) -> re.Pattern[str]:
    """A class of characters, compiled on first use: a command whose output goes to no terminal
    and meets no error never needs one (each takes about a millisecond to compile)."""
    return re.compile(chars)


def _shown(match: re.Match[str]) -> str:
    c = match.group()
    if c in _NAMED:
        return _NAMED[c]
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def visible(text: str) -> str:
    """Return `text` with every control character but tab and newline shown as an escape."""
    return _compiled(_CONTROL).sub(_shown, text)


def rows_up(shown: str, columns: int) -> int:
    """How many rows above the cursor `shown` began, written from column 0 of a terminal
    `columns` wide: a line that fills its last row leaves the cursor there, not on the next."""
    from unicodedata import combining, east_asian_width

    up = 0
    lines = shown.split("\n")
    for i, line in enumerate(lines):
        width = 0
        for c in line:
            if c == "\t":
                width += 8 - width % 8
            elif not combining(c):
                width += 2 if east_asian_width(c) in "WF" else 1
        rows = max(1, -(-width // columns))  # rows the line takes
        up += rows if i < len(lines) - 1 else rows - 1
    return up


def erase_sequence(shown: str, columns: int, lines: int) -> str:
    """What erases `shown`, just written from column 0: back to its start (no further up than the
    screen's top), then clear to the screen's end."""
    up = min(rows_up(shown, columns), lines - 1)
    return "\r" + (f"\x1b[{up}A" if up else "") + "\x1b[J"  # ESC[0A would move one row


def one_line(text: str) -> str:
    """Return `text` with every control character and line break shown as an escape, on one line."""
    return _compiled(_CONTROL_OR_BREAK).sub(_shown, text)
