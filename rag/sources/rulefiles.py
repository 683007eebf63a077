"""Reading the small rule files a repository carries (.gitignore, .ragignore, .rag-access, a
.git/info/exclude): regular files only, and only so much of them.

A repository can hold any of them as a FIFO (opening it waits for a writer for ever), a link to
/dev/zero (read to the end, it never ends) or a huge file, and .rag-access is read by every query.
A leaf module (os and stat only): the query side reads .rag-access through it.
"""

from __future__ import annotations

import os
import stat

MAX_RULE_BYTES = 1_000_000  # far beyond any real rule file


class RuleFileError(OSError):
    """A rule file that is not a regular file, or is larger than MAX_RULE_BYTES; its message is the
    one line to show."""


def read_rule_file(path: str | os.PathLike[str], limit: int = MAX_RULE_BYTES) -> bytes:
    """Return the bytes of the rule file at `path`, never following a link at its last component.

    Raises FileNotFoundError (or NotADirectoryError) when it is not there, RuleFileError when it is
    a link, not a regular file, or over `limit` bytes, and OSError when it cannot be read."""
    name = os.fspath(path)
    try:
        # O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if os.path.islink(name):  # ELOOP, from O_NOFOLLOW
            raise RuleFileError(
                f"{name} is a symbolic link — rag reads rule files only as regular files: "
                "replace it with a copy of its target"
            ) from None
        raise exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise RuleFileError(
                f"{name} is not a regular file (a pipe, a device or a folder) — "
                "replace it with a text file, or remove it"
            )
        chunks = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise RuleFileError(
                f"{name} is larger than {limit:,} bytes — a rule file that large is not rules: "
                "remove it or cut it down"
            )
        return b"".join(chunks)
    finally:
        os.close(fd)
