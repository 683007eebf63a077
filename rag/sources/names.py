"""The names rag gives meaning to inside a repository: the folder its index lives in, and the
access list. A leaf module: the walker, the access rules and the store all read these, and none
of them sits above another for it."""

from __future__ import annotations

INDEX_DIRNAME = ".rag"  # inside the indexed repository; holds a .gitignore of "*"
INDEX_FILENAME = "index.sqlite"
# the access list's file name: the store records the digest of its text at ingest, so that a
# query can tell it changed without loading rag.sources.access's ignore rules (or, without an access
# list, hashlib)
ACCESS_FILE = ".rag-access"
# mixed into the digest: an index whose access list was read by an older parser (which split
# `Secret\ Plans/ ops` at the escaped space, leaving the folder public) reads as changed, so a
# query refuses it and the next ingest rebuilds it under the rules as written
ACCESS_SYNTAX = b"rag-access syntax 2\n"


def access_digest(text: str) -> str:
    """The digest of an access list's text, as the index records it."""
    import hashlib

    return hashlib.sha1(ACCESS_SYNTAX + text.encode()).hexdigest()


def decode_rules(data: bytes) -> str:
    """An access list's bytes as text, as read_text read it before: UTF-8 (an error otherwise),
    universal newlines."""
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
