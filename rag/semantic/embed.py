"""The semantic stage's vectors at ingest: every passage's embedded now (`ingest --embed`), so that
no query need embed its candidates (about 1 s for a query's 40 on 2 cores), or, after a plain ingest,
the model's cached form built so that the first query need not. Both run in the ingest's process."""

from __future__ import annotations

import os
import time
from typing import NamedTuple

from rag.errors import ModelError
from rag.semantic.model import identity, load, prepare
from rag.semantic.registry import install_hint, will_run
from rag.semantic.vectors import VectorCache, cache_path, content_key, passage_text
from rag.store.reader import Index

EMBED_BATCH = 256  # passages embedded and stored per transaction
READ_BATCH = 1024  # passages read from the index at a time


class EmbedReport(NamedTuple):
    """What `ingest --embed` did."""

    chunks: int  # passages in the index
    computed: int  # of them embedded now (the others were cached)
    seconds: float


class AfterIngest(NamedTuple):
    """What an ingest did for the semantic stage's vectors afterwards (`after_ingest`)."""

    prepared: float | None = None  # seconds the model's cached form took to build (None: it was there)
    embedded: EmbedReport | None = None  # what `--embed` did
    note: str | None = None  # a line for stderr: the model failed


def after_ingest(
    index_path: str | os.PathLike[str], embed: bool, mode: str | None = None
) -> AfterIngest | None:
    """After an ingest: embed every passage (`embed`), or, when the queries will run the semantic
    stage (`mode`, default RAG_RERANK), build the model's cached form; None when there is nothing
    to do. A model that fails after a plain ingest leaves the index whole, and a note."""
    if embed:  # asked for: a model that cannot load is the caller's error
        return AfterIngest(embedded=embed_index(index_path))
    if not will_run(mode):
        hint = install_hint(mode)
        return AfterIngest(note=hint) if hint is not None else None
    try:
        return AfterIngest(prepare())
    except ModelError as exc:  # the queries will say the same and rank lexically
        return AfterIngest(note=f"Note: {exc}; queries will rank the passages lexically")


def embed_index(index_path: str | os.PathLike[str]) -> EmbedReport:
    """Compute and cache the vector of every passage of the index that has none yet. The passages'
    texts are read first, the index then closed: it is not held open while the model runs (minutes
    for a large repository); the model is loaded only if some passage has no vector."""
    start = time.perf_counter()
    with Index(index_path) as index:  # a missing index fails before the model loads
        every = passage_texts(index)
    texts = list(dict.fromkeys(every))
    cache = VectorCache(cache_path(index_path), identity())
    computed = 0
    try:
        found = cache.get(content_key(t) for t in texts)
        todo = [t for t in texts if content_key(t) not in found]
        embedder = load(spinning=True) if todo else None  # one long run of batches
        for at in range(0, len(todo), EMBED_BATCH):
            assert embedder is not None
            batch = todo[at : at + EMBED_BATCH]
            vectors = embedder.embed(batch)
            if not cache.put((content_key(t), vectors[i].tobytes()) for i, t in enumerate(batch)):
                raise ModelError(
                    f"The vector cache {cache.path} cannot be written — check that its folder is writable"
                )
            computed += len(batch)
    finally:
        cache.close()
    return EmbedReport(len(every), computed, time.perf_counter() - start)


def passage_texts(index: Index) -> list[str]:
    """The text each passage of the index is embedded as (rag.semantic.vectors.passage_text), in
    chunk-id order, read READ_BATCH passages at a time."""
    ids = index.chunk_ids()
    return [
        passage_text(c)
        for at in range(0, len(ids), READ_BATCH)
        for c in index.chunks(ids[at : at + READ_BATCH]).values()
    ]
