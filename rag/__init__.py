"""Ask questions about a codebase: walk -> chunk -> tokenize -> index -> retrieve -> prompt -> generate."""

from __future__ import annotations

from .chunking import Chunk, chunk_file
from .errors import (
    BackendError,
    IndexFormatError,
    InputError,
    NoIndexError,
    NothingToIndexError,
    RagError,
)
from .files import SourceFile, Walk, walk
from .index import Index, Manifest, default_index_path, locate_index
from .ingest import IngestReport, ingest
from .search import Hit, TermContribution, search
from .tokens import Tokenizer, TokenizerSettings

__all__ = [
    "BackendError",
    "Chunk",
    "Hit",
    "Index",
    "IndexFormatError",
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
