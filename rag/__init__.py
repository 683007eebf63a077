"""Ask questions about a codebase: walk -> chunk -> tokenize -> index -> retrieve -> prompt -> generate."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .hits import Hit, TermContribution
from .search import search  # eager: the name `search` is also a module

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
    "SourceFile": "files",
    "Walk": "files",
    "walk": "files",
    "Index": "store.reader",
    "Manifest": "store.format",
    "default_index_path": "store.paths",
    "locate_index": "store.paths",
    "IngestOptions": "pipeline",
    "IngestReport": "pipeline",
    "ingest": "pipeline",
    "Request": "retrieve",
    "Retrieval": "retrieve",
    "retrieve": "retrieve",
    "Outcome": "answer",
    "ask": "answer",
    "Tokenizer": "tokens",
    "TokenizerSettings": "tokens",
}

if TYPE_CHECKING:
    from .answer import Outcome, ask
    from .chunking import chunk_file
    from .chunking.base import Chunk
    from .errors import (
        BackendError,
        IndexFormatError,
        IndexWriteError,
        InputError,
        NoIndexError,
        NothingToIndexError,
        RagError,
    )
    from .files import SourceFile, Walk, walk
    from .pipeline import IngestOptions, IngestReport, ingest
    from .retrieve import Request, Retrieval, retrieve
    from .store.format import Manifest
    from .store.paths import default_index_path, locate_index
    from .store.reader import Index
    from .tokens import Tokenizer, TokenizerSettings


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
    "retrieve",
    "search",
    "walk",
]
