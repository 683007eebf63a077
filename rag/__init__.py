"""Ask questions about a codebase: walk -> chunk -> tokenize -> index -> retrieve -> prompt -> generate."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .search import Hit, TermContribution, search  # eager: the name `search` is also a module

# Public name -> module that defines it. Imported on first use, so that `query.py` loads only
# what retrieval needs (the ingest pipeline, chunkers and model SDK stay unloaded).
_EXPORTS = {
    "Chunk": "chunking.base", "chunk_file": "chunking",
    "BackendError": "errors", "IndexFormatError": "errors", "IndexWriteError": "errors", "InputError": "errors",
    "NoIndexError": "errors", "NothingToIndexError": "errors", "RagError": "errors",
    "SourceFile": "files", "Walk": "files", "walk": "files",
    "Index": "index", "Manifest": "index", "default_index_path": "index", "locate_index": "index",
    "IngestReport": "pipeline", "ingest": "pipeline",
    "Tokenizer": "tokens", "TokenizerSettings": "tokens",
}

if TYPE_CHECKING:
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
    from .index import Index, Manifest, default_index_path, locate_index
    from .pipeline import IngestReport, ingest
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
    "IngestReport",
    "InputError",
    "Manifest",
    "NoIndexError",
    "NothingToIndexError",
    "RagError",
    "SourceFile",
    "TermContribution",
    "Tokenizer",
    "TokenizerSettings",
    "Walk",
    "chunk_file",
    "default_index_path",
    "ingest",
    "locate_index",
    "search",
    "walk",
]
