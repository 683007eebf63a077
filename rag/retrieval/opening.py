"""Opening what a query reads: one index, a workspace held in this process, or a workspace served on a
Ray cluster (rag.retrieval.cluster, imported only then)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from rag.retrieval.members import LocalHost, Members
from rag.store.paths import CLUSTER_PREFIX
from rag.store.reader import Index
from rag.store.workspace import Reader, Workspace


def open_index(where: str | os.PathLike[str] | Sequence[str]) -> Reader:
    """Open one index (a path), a workspace of those at several paths, held in this process, or the
    workspace served on a Ray cluster (CLUSTER_PREFIX + its address)."""
    if isinstance(where, str) and where.startswith(CLUSTER_PREFIX):
        from rag.retrieval.cluster import connect

        return connect(where[len(CLUSTER_PREFIX) :])
    if isinstance(where, (str, os.PathLike)):
        return Index(where)
    if len(where) == 1:
        return Index(where[0])
    return Workspace([LocalHost(Members(where))])
