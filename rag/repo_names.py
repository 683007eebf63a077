"""The names rag gives meaning to inside a repository: the folder its index lives in, and the
access list. A leaf module: the walker, the access rules and the store all read these, and none
of them sits above another for it."""

from __future__ import annotations

INDEX_DIRNAME = ".rag"  # inside the indexed repository; holds a .gitignore of "*"
INDEX_FILENAME = "index.sqlite"
# the access list's file name: the store records the digest of its text at ingest, so that a
# query can tell it changed without loading rag.access's ignore rules (or, without an access
# list, hashlib)
ACCESS_FILE = ".rag-access"


def access_digest(text: str) -> str:
    """The digest of an access list's text, as the index records it."""
    import hashlib

    return hashlib.sha1(text.encode()).hexdigest()
