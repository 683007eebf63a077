"""Reading a listed file: only the regular file the walk listed, up to the size limit; binary
and minified files told apart; bytes decoded as the chunkers read them."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass

# Larger files are not indexed: the walk skips them by size, and a read stops past this.
DEFAULT_MAX_BYTES = 1_000_000
_SNIFF_BYTES = 8192  # the first bytes looked at to tell a binary file
# The first bytes of binary formats that can carry any extension (an Illustrator .ai is a PDF)
MAGIC_NUMBERS = (
    b"%PDF-",
    b"\x89PNG\r\n\x1a\n",
    b"PK\x03\x04",
    b"PK\x05\x06",
    b"\x1f\x8b",
    b"\x7fELF",
    b"GIF87a",
    b"GIF89a",
    b"\xff\xd8\xff",
    b"BM",
    b"II*\x00",
    b"MM\x00*",
    b"%!PS-Adobe",
    b"\xd0\xcf\x11\xe0",
    b"7z\xbc\xaf\x27\x1c",
    b"Rar!\x1a\x07",
    b"\xfe\xed\xfa",
    b"\xcf\xfa\xed\xfe",
    b"\xca\xfe\xba\xbe",
    b"MZ",
    b"SQLite format 3\x00",
    b"wOFF",
    b"wOF2",
    b"OggS",
    b"fLaC",
    b"ID3",
    b"\x00asm",
    b"BZh",
    b"\xfd7zXZ\x00",
    b"(\xb5/\xfd",
    b"8BPS",
    b"RIFF",
)
# Magic numbers short enough to begin a text file too: binary only with other control bytes
_WEAK_MAGIC = (b"BM", b"MZ", b"ID3", b"BZh", b"RIFF")
# A share of control bytes (other than tab, newline, carriage return, form feed, escape) this
# high in the first 8 KiB is not text
CONTROL_SHARE = 0.10
_CONTROL = bytes(b for b in range(32) if b not in (9, 10, 12, 13, 27)) + b"\x7f"
# A line this long in a script is minified or bundled output.
MINIFIED_LINE = 1000


@dataclass(frozen=True, slots=True)
class SourceText:
    """A file's decoded text, or why it was not read; sha1 is of the raw bytes."""

    text: str | None
    skip_reason: str | None
    sha1: str = ""
    n_bytes: int = 0


def read_text(
    abspath: str, max_bytes: int = DEFAULT_MAX_BYTES, identity: tuple[int, int] | None = None
) -> SourceText:
    """Read a file as text, or say why it is skipped.

    Binary files (looks_binary: a NUL byte, a magic number or many control bytes in the first
    8 KiB) and minified scripts are skipped;
    bytes that are not UTF-8 are decoded with U+FFFD replacement; CRLF and lone CR line
    endings become LF. Only the file the walk listed is read (see read_listed).
    """
    try:
        data = read_listed(abspath, max_bytes + 1, identity)
    except _NotListed as exc:
        return SourceText(None, exc.reason)
    except OSError:
        return SourceText(None, "unreadable")
    if len(data) > max_bytes:
        return SourceText(None, "too-large", n_bytes=len(data))
    digest = hashlib.sha1(data).hexdigest()
    if looks_binary(data[:_SNIFF_BYTES]):
        return SourceText(None, "binary", digest, len(data))
    text = decode_text(data)
    if not text.strip():
        return SourceText(None, "empty", digest, len(data))
    if _looks_minified(abspath, text):
        return SourceText(None, "minified", digest, len(data))
    return SourceText(text, None, digest, len(data))


def looks_binary(head: bytes) -> bool:
    """Tell from a file's first bytes whether it is binary: a NUL byte, the magic number of a
    binary format (PDF, PNG, ZIP, gzip, ELF, ...), or a high share of control bytes."""
    if b"\0" in head:
        return True
    if head.startswith(MAGIC_NUMBERS) and not head.startswith(_WEAK_MAGIC):
        return True
    if not head:
        return False
    controls = len(head) - len(head.translate(None, _CONTROL))
    return controls > CONTROL_SHARE * len(head) or (head.startswith(_WEAK_MAGIC) and controls > 0)


class _NotListed(OSError):
    """What is at the path now is not the regular file the walk listed."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_listed(abspath: str, limit: int | None, identity: tuple[int, int] | None = None) -> bytes:
    """Return up to `limit` bytes (None: all) of the regular file at `abspath`, as the walk listed it.

    Between the walk and the read the file may have been swapped for a symlink (to .env, say) or a
    FIFO: the open never follows a link (O_NOFOLLOW: "symlink") nor waits on a FIFO (O_NONBLOCK),
    and what was opened must be a regular file ("not-a-file") with the walked (st_dev, st_ino)
    ("unreadable": it changed; the next ingest reads what is there then)."""
    try:
        fd = os.open(abspath, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if os.path.islink(abspath):
            raise _NotListed("symlink") from None
        raise exc
    with open(fd, "rb") as fh:  # closes fd
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _NotListed("not-a-file")
        if identity is not None and (st.st_dev, st.st_ino) != identity:
            raise _NotListed("unreadable")
        return fh.read(-1 if limit is None else limit)


def decode_text(data: bytes) -> str:
    """A file's bytes as the chunkers read them: UTF-8 (other bytes become U+FFFD), without a
    byte-order mark, and with universal newlines, as Python and editors count lines, so that
    every chunker and every citation agree on line numbers whatever the line endings."""
    text = data.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _looks_minified(abspath: str, text: str) -> bool:
    if not abspath.endswith((".js", ".cjs", ".mjs", ".css", ".json")):
        return False
    lines = text.count("\n") + 1
    return len(text) / lines > 300 or any(len(line) > MINIFIED_LINE * 10 for line in text.split("\n"))
