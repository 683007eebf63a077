"""Errors a user can cause; each message is one line that names the fix."""

from __future__ import annotations


class RagError(Exception):
    """An error the user can fix; the CLI prints its message and exits 1."""


class NoIndexError(RagError):
    """No index exists where one was looked for."""


class IndexFormatError(RagError):
    """The index is corrupt or was written by another format version."""


class NothingToIndexError(RagError):
    """The repository has no indexable files."""


class IndexWriteError(RagError):
    """The index could not be written: a full disk, a read-only folder."""


class InputError(RagError):
    """A file or value given by the user is unusable."""


class BackendError(RagError):
    """The model backend failed: missing key, auth, rate limit, network, timeout."""
