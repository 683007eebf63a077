"""The part of an index one caller may read (View), and its per-chunk arrays, read from the
index block by block as a query needs them (ChunkFloats)."""

from __future__ import annotations

import mmap
import sqlite3
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable

from rag.errors import IndexFormatError
from rag.store.format import block_name, check, damage_error, rebuild_hint
from rag.weights import FloatColumn

# What reading a damaged index raises, beyond the checks that give their own messages: a file
# SQLite still opens, whose tables or values were damaged (a disk error, a hand edit), fails
# somewhere in the reading, in whatever way its bytes lead to
DAMAGE_ERRORS = (sqlite3.Error, ArithmeticError, LookupError, ValueError, TypeError, AssertionError)


def blocks_of(ids: array[int], size: int) -> list[int]:
    """Return the blocks of `size` ids that sorted chunk ids fall in (a binary search a block)."""
    out: list[int] = []
    i, n = 0, len(ids)
    while i < n:
        block = ids[i] // size
        out.append(block)
        i = bisect_left(ids, (block + 1) * size, i)
    return out


class ChunkFloats:
    """A per-chunk float64 array of a view, read from the index block by block as needed.

    Values live in an anonymous memory map, so blocks never read cost no memory and no time;
    `values` indexes like an array (0.0 where nothing was read).
    """

    def __init__(
        self,
        n_ids: int,
        size: int,
        fetch: Callable[[list[int]], list[tuple[int, bytes]]],
        decode: Callable[[bytes], array[float]] | None,
        where: str,
    ) -> None:
        self.size = size  # ids per block, as the index was written (meta.array_block)
        self.n_blocks = -(-n_ids // size)
        self._map = mmap.mmap(-1, 8 * max(n_ids, 1))
        self.values = memoryview(self._map).cast("d")[:n_ids]
        self._loaded: set[int] = set()
        self._fetch = fetch
        self._decode = decode  # stored bytes -> this machine's floats; None when they already are
        self._where = where

    @property
    def complete(self) -> bool:
        """Whether every block has been read."""
        return len(self._loaded) == self.n_blocks

    def load(self, blocks: Iterable[int] | None = None) -> memoryview[float]:
        """Read the given blocks (None: all) if not read yet; return the values."""
        missing = sorted(set(range(self.n_blocks) if blocks is None else blocks) - self._loaded)
        if missing:
            try:
                self._read(missing)
            except DAMAGE_ERRORS as exc:
                raise damage_error(self._where, exc) from None
        return self.values

    def _read(self, missing: list[int]) -> None:
        found = self._fetch(missing)
        if len(found) != len(missing):
            raise IndexFormatError(
                f"The index at {self._where} lacks blocks of a per-chunk array — {rebuild_hint()}"
            )
        for block, data in found:
            if self._decode is not None:
                data = self._decode(data).tobytes()
            at = 8 * block * self.size
            check(
                0 <= block < self.n_blocks and at + len(data) <= len(self._map) and len(data) % 8 == 0,
                "a per-chunk array's block out of range",
            )
            # stored bytes go straight into the map: no array per block
            self._map[at : at + len(data)] = data
        self._loaded.update(missing)


class View:
    """The part of an index one caller may read. Its per-chunk arrays (norms for cosine, BM25
    normalisers) are read on first use, and only the blocks asked for."""

    __slots__ = ("classes", "n_chunks", "length", "chunk_class", "_columns", "_computed")

    def __init__(
        self,
        classes: frozenset[int] | None,
        n_chunks: int,
        length: int,
        chunk_class: array[int] | None,
        columns: dict[str, ChunkFloats],
        computed: dict[str, array[float]] | None = None,
    ) -> None:
        self.classes = classes  # readable access classes; None = all (nothing to filter)
        self.n_chunks = n_chunks  # N for the IDF
        self.length = length  # the total length of its chunks (BM25's average length is length / n_chunks)
        self.chunk_class = chunk_class  # access class by chunk id, when filtering is needed
        self._columns = columns
        self._computed = computed or {}

    @property
    def norms(self) -> FloatColumn:
        """Each chunk's L2 norm under this view's IDF, by chunk id (0.0 outside the view)."""
        return self.column("norms")

    def column(self, name: str, postings: Iterable[array[int]] | None = None) -> FloatColumn:
        """Return the per-chunk array `name` ("norms" or "bm25k"), read in full, or, given
        postings (sorted chunk ids), only where they fall."""
        computed = self._computed.get(name)
        if computed is not None:
            return computed
        column = self._columns[name]
        if postings is None or column.complete:  # once all is read, no block need be found
            return column.load(None)
        blocks: set[int] = set()
        for ids in sorted(postings, key=len, reverse=True):  # a long list alone often covers every block
            blocks.update(blocks_of(ids, column.size))
            if len(blocks) == column.n_blocks:
                break
        return column.load(blocks)


def blocks_reader(
    query: Callable[[str, tuple[object, ...]], sqlite3.Cursor], name: str
) -> Callable[[list[int]], list[tuple[int, bytes]]]:
    """Return a reader of the stored blocks of the per-chunk array `name`: block numbers ->
    (block, bytes) of those found, through `query` (the index's own, which reports damage)."""

    def fetch(blocks: list[int]) -> list[tuple[int, bytes]]:
        out: list[tuple[int, bytes]] = []
        for start in range(0, len(blocks), 500):  # SQLite's limit on parameters
            part = blocks[start : start + 500]
            names = [block_name(name, b) for b in part]
            rows = query(
                f"SELECT name, data FROM arrays WHERE name IN ({','.join('?' * len(names))})",
                tuple(names),
            )
            out.extend((int(n.rsplit("#", 1)[1]), data) for n, data in rows)
        return out

    return fetch
