"""numpy when it is installed (the semantic extra brings it) and when it pays: long arrays of the
lexical search are then read and added up at C speed, with the same results as the standard
library's loops. Importing numpy costs a process more than a query on a mid-sized repository
spends adding up (docs/benchmarks.md), so a process that has not loaded it imports it only for
work large enough to repay the import; once it is loaded, any work it speeds up uses it."""

from __future__ import annotations

import functools
import os
import sys
from importlib.util import find_spec
from typing import Any

# an index from this many chunks has questions whose postings numpy adds up faster than its import
# costs (about 300,000 postings: rag.retrieval.topk.NUMPY_IMPORT_POSTINGS; docs/benchmarks.md)
SCALE_CHUNKS = 200_000
SCALE_HINT = (
    "Note: pip install 'rag-code[scale]' would add up a large index's postings in numpy "
    "(at a million chunks, 25 ms a long question against 548 ms)"
)


def scale_hint(chunks: int) -> str | None:
    """The one line an ingest of `chunks` chunks says when numpy would speed its queries and is not
    installed, else None."""
    return SCALE_HINT if chunks >= SCALE_CHUNKS and find_spec("numpy") is None else None


def numpy_for(size: int, loaded_from: int, import_from: int) -> Any:
    """Return numpy for work of `size` (in the caller's unit: postings, values) when it pays:
    from `loaded_from` when this process has loaded numpy already, from `import_from` when it
    would import it for this work. Else None, as when numpy is not installed."""
    if size < (loaded_from if "numpy" in sys.modules else import_from):
        return None
    return numpy_or_none()


@functools.cache
def numpy_or_none() -> Any:
    """Return the numpy module, or None when it is not installed (or does not import)."""
    if find_spec("numpy") is None:
        return None
    try:
        return import_numpy()
    except ImportError:
        return None


def import_numpy() -> Any:
    """Import numpy, its BLAS with one thread when this process imports it first: neither the lexical
    search nor the semantic model calls BLAS (the model's pooling and norms are numpy's own loops), and
    the thread pool OpenBLAS starts at import took a quarter of that import's wall time on a busy
    2-core machine (a setting of OPENBLAS_NUM_THREADS is left alone)."""
    if "numpy" in sys.modules or "OPENBLAS_NUM_THREADS" in os.environ:
        import numpy

        return numpy
    os.environ["OPENBLAS_NUM_THREADS"] = "1"  # read once, when OpenBLAS loads
    try:
        import numpy
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]  # for the processes this one starts
    return numpy
