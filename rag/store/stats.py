"""Per-chunk statistics that both the writer and the reader compute from the forward lists:
chunk lengths, a view's length and document frequencies, and the forward lists themselves."""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable

from rag.store.packing import unpack_postings


def forward_lists(
    rows: Iterable[tuple[int, bytes]], n_ids: int
) -> tuple[list[array[int]], list[array[int]], array[int]]:
    """Return each chunk's term ids and tfs, by chunk id (empty for unused ids), and which ids
    have a forward row, from the forward table's (chunk id, packed term ids and tfs) rows. Raises
    ValueError for rows that cannot belong to an index of `n_ids` chunk ids (a damaged table)."""
    tids_of: list[array[int]] = [array("I")] * n_ids
    tfs_of: list[array[int]] = [array("H")] * n_ids
    present = array("b", bytes(n_ids))
    for cid, blob in rows:
        tids, tfs = unpack_postings(blob)
        if not isinstance(cid, int) or not 0 <= cid < n_ids:
            raise ValueError(f"forward row {cid} out of range")
        tids_of[cid], tfs_of[cid] = tids, tfs
        present[cid] = 1
    return tids_of, tfs_of, present


def chunk_lengths(forward_tfs: list[array[int]], live: array[int] | None = None) -> array[int]:
    """Return each chunk's length, the sum of its stored tfs (0 for unused ids)."""
    if live is None:
        return array("I", map(sum, forward_tfs))
    return array("I", [sum(tfs) if alive else 0 for tfs, alive in zip(forward_tfs, live)])


def view_length(lengths: array[int], chunk_class: array[int], view: frozenset[int]) -> int:
    """Return the total length of the chunks a view can read (unused ids have length 0)."""
    if set(chunk_class) <= view:
        return sum(lengths)
    return sum(n for n, klass in zip(lengths, chunk_class) if klass in view)


def view_df(
    forward_tids: list[array[int]],
    chunk_class: array[int],
    view: frozenset[int],
    n_terms: int,
    live: array[int] | None = None,
) -> tuple[int, array[int]]:
    """Count the chunks and each term's document frequency within a view."""
    counts: Counter[int] = Counter()
    n = 0
    for cid, (tids, klass) in enumerate(zip(forward_tids, chunk_class)):
        if klass in view and (live is None or live[cid]):
            counts.update(tids)
            n += 1
    df = array("I", bytes(4 * n_terms))
    for tid, c in counts.items():
        df[tid] = c
    return n, df
