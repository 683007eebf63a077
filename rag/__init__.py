"""Ask questions about a codebase: walk -> chunk -> tokenize -> index -> retrieve -> prompt -> generate."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

# Public name -> module that defines it. Imported on first use, so that `query.py` loads only
# what retrieval needs (the ingest pipeline, chunkers and model SDK stay unloaded).
_EXPORTS = {
    "Chunk": "chunking.base",
    "chunk_file": "chunking",
    "BackendError": "errors",
    "IndexFormatError": "errors",
    "IndexWriteError": "errors",
    "InputError": "errors",
    "NoIndexError": "errors",
    "NothingToIndexError": "errors",
    "RagError": "errors",
    "SourceFile": "sources.walk",
    "Walk": "sources.walk",
    "walk": "sources.walk",
    "Index": "store.reader",
    "Manifest": "store.format",
    "default_index_path": "store.paths",
    "locate_index": "store.paths",
    "IngestOptions": "indexing.options",
    "IngestReport": "indexing.pipeline",
    "ingest": "indexing.pipeline",
    "Request": "retrieval.retrieve",
    "Retrieval": "retrieval.retrieve",
    "retrieve": "retrieval.retrieve",
    "Related": "retrieval.related",
    "related": "retrieval.related",
    "Outcome": "answer.ask",
    "ask": "answer.ask",
    "Hit": "ranking.hits",
    "TermContribution": "ranking.hits",
    "search": "retrieval.search",
    "Tokenizer": "text.tokenizer",
    "TokenizerSettings": "text.tokenizer",
}

if TYPE_CHECKING:
    from rag.answer.ask import Outcome, ask
    from rag.chunking import chunk_file
    from rag.chunking.base import Chunk
    from rag.errors import (
        BackendError,
        IndexFormatError,
        IndexWriteError,
        InputError,
        NoIndexError,
        NothingToIndexError,
        RagError,
    )
    from rag.indexing.options import IngestOptions
    from rag.indexing.pipeline import IngestReport, ingest
    from rag.ranking.hits import Hit, TermContribution
    from rag.retrieval.related import Related, related
    from rag.retrieval.retrieve import Request, Retrieval, retrieve
    from rag.retrieval.search import search
    from rag.sources.walk import SourceFile, Walk, walk
    from rag.store.format import Manifest
    from rag.store.paths import default_index_path, locate_index
    from rag.store.reader import Index
    from rag.text.tokenizer import Tokenizer, TokenizerSettings


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rag' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "BackendError",
    "Chunk",
    "Hit",
    "Index",
    "IndexFormatError",
    "IndexWriteError",
    "IngestOptions",
    "IngestReport",
    "InputError",
    "Manifest",
    "NoIndexError",
    "NothingToIndexError",
    "Outcome",
    "RagError",
    "Related",
    "Request",
    "Retrieval",
    "SourceFile",
    "TermContribution",
    "Tokenizer",
    "TokenizerSettings",
    "Walk",
    "ask",
    "chunk_file",
    "default_index_path",
    "ingest",
    "locate_index",
    "related",
    "retrieve",
    "search",
    "walk",
]
