"""numpy when it is installed (the semantic extra brings it): long arrays of the lexical search are
then read and added up at C speed, with the same results as the standard library's loops."""

from __future__ import annotations

import functools
from importlib.util import find_spec
from typing import Any


@functools.cache
def numpy_or_none() -> Any:
    """Return the numpy module, or None when it is not installed (or does not import)."""
    if find_spec("numpy") is None:
        return None
    from rag.semantic.model import _import_numpy

    try:
        return _import_numpy()
    except ImportError:
        return None
