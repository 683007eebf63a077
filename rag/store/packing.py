"""How the big columns of an index are stored compactly: postings, forward lists and chunk texts.

A term's postings (chunk ids and tfs) and a chunk's forward list (term ids and tfs, in the order
of its terms) are stored alike: the ids in 2 or 4 bytes and the tfs in 1 or 2, the narrowest
widths that hold them, after one byte that says which; little-endian on every machine. Half the
bytes of uint32 and uint16, and read as fast as those: deflating them would halve them again, but
cost a query ~100 us for each long postings list it reads, and an update ~6 us for each chunk of
the index (it reads every forward list).

A chunk's text is stored with its context, as one raw deflate stream of the UTF-8 of context +
text; the row keeps the length of the context's bytes to split them again. A query inflates only
the texts of the candidates it reads, ~5 us each.
"""

from __future__ import annotations

import sys
import zlib
from array import array

from rag.numeric import numpy_for

# raw deflate (no zlib header or checksum: SQLite's pages and the reader's checks guard the values)
_WBITS = -15
_LEVEL = 6
_BIG_ENDIAN = sys.byteorder == "big"
# the first byte of a stored list: which typecodes hold its ids and its tfs
_WIDE_IDS, _WIDE_TFS = 1, 2
_TYPECODES = {
    flags: ("I" if flags & _WIDE_IDS else "H", "H" if flags & _WIDE_TFS else "B") for flags in range(4)
}
_WIDTHS = {flags: (array(i).itemsize, array(t).itemsize) for flags, (i, t) in _TYPECODES.items()}


def _little_endian(values: array[int]) -> bytes:
    if _BIG_ENDIAN:
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _narrowed(values: array[int]) -> bytes | None:
    """The little-endian bytes of `values` in half their width, or None if some value needs it
    all. By slices of bytes, at C speed: no value is made a Python int."""
    raw, n = _little_endian(values), len(values)
    if values.itemsize == 2:  # uint16 to uint8: every high byte 0
        return raw[0::2] if raw[1::2].count(0) == n else None
    if raw[2::4].count(0) != n or raw[3::4].count(0) != n:  # uint32 to uint16: the two high bytes
        return None
    out = bytearray(2 * n)
    out[0::2] = raw[0::4]
    out[1::2] = raw[1::4]
    return bytes(out)


def _stored(values: array[int], narrow: str) -> tuple[bool, bytes]:
    """(wide?, little-endian bytes) of values held as uint32 or uint16, or already as `narrow`."""
    if values.typecode == narrow:
        return False, _little_endian(values)
    narrowed = _narrowed(values)
    return (True, _little_endian(values)) if narrowed is None else (False, narrowed)


def pack_postings(ids: array[int], tfs: array[int]) -> bytes:
    """Return the stored form of ids and their tfs, of equal length: uint32 and uint16 arrays,
    or narrower ones as unpack_postings gives them."""
    wide_ids, id_bytes = _stored(ids, "H")
    wide_tfs, tf_bytes = _stored(tfs, "B")
    return bytes(((_WIDE_IDS if wide_ids else 0) | (_WIDE_TFS if wide_tfs else 0),)) + id_bytes + tf_bytes


def unpack_postings(blob: bytes) -> tuple[array[int], array[int]]:
    """Return the ids and tfs of a stored list, as arrays of the widths they were stored in
    (read them; widened() makes them uint32 and uint16 to extend them); ValueError if damaged."""
    try:
        flags = blob[0]
        id_width, tf_width = _WIDTHS[flags]
    except (IndexError, KeyError, TypeError):
        raise ValueError("postings of an unknown form") from None
    n, rest = divmod(len(blob) - 1, id_width + tf_width)
    if rest:
        raise ValueError("postings of uneven length")
    split = 1 + n * id_width
    ids, tfs = _TYPECODES[flags]
    pair = array(ids, blob[1:split]), array(tfs, blob[split:])
    if _BIG_ENDIAN:
        pair[0].byteswap()
        pair[1].byteswap()
    return pair


# values from which largest() uses numpy, when it is installed (rag.numeric): max() takes
# 33 us for 1,000 values, numpy 8 us (the two are even at about 300). Importing numpy for the
# check alone is repaid only by a list of about 2.5 million (`python bench/numpy_import.py`: 148
# ms against 61 ns a value), longer than any of an index of a million chunks; so max() does it
# until something else loads numpy
_NUMPY_VALUES = 1_000
_NUMPY_IMPORT_VALUES = 2_500_000


def largest(values: array[int]) -> int:
    """Return max(values), for a non-empty array: by numpy for a long one when it is installed
    and loaded, or the array so long that importing it pays (max() makes every value a Python
    int, ~15 ns each)."""
    np = numpy_for(len(values), _NUMPY_VALUES, _NUMPY_IMPORT_VALUES)
    if np is None:
        return max(values)
    return int(np.frombuffer(values, dtype=np.dtype(values.typecode)).max())


def widened(values: array[int], typecode: str) -> array[int]:
    """Return `values` as an array of `typecode` ("I" or "H"), at most as wide (at C speed)."""
    if values.typecode == typecode:
        return values
    raw, width = _little_endian(values), values.itemsize
    out = array(typecode)
    wide = out.itemsize
    padded = bytearray(wide * len(values))
    for k in range(width):
        padded[k::wide] = raw[k::width]
    out.frombytes(padded)
    if _BIG_ENDIAN:
        out.byteswap()
    return out


def pack_text(context: str, text: str) -> tuple[bytes, int]:
    """Return the stored form of a chunk's context and text, and the length of the context's bytes."""
    head = context.encode("utf-8", "surrogatepass")
    return zlib.compress(head + text.encode("utf-8", "surrogatepass"), _LEVEL, wbits=_WBITS), len(head)


def unpack_text(blob: bytes, split: int) -> tuple[str, str]:
    """Return a chunk's (context, text) from its stored form; ValueError if damaged."""
    try:
        raw = zlib.decompress(blob, _WBITS)
    except (zlib.error, TypeError) as exc:
        raise ValueError(f"chunk text not inflatable: {exc}") from None
    if not isinstance(split, int) or not 0 <= split <= len(raw):
        raise ValueError("chunk text split out of range")
    return raw[:split].decode("utf-8", "surrogatepass"), raw[split:].decode("utf-8", "surrogatepass")
