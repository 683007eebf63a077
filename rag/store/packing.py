"""How the big columns of an index are stored compactly: postings, forward lists and chunk texts.

All of it is little-endian whatever the machine, and decodes at C speed.

A term's postings (what a query reads) are its chunk ids and tfs in the narrowest of the widths
that hold them, ids in 2 or 4 bytes and tfs in 1 or 2, after one byte that says which: half the
bytes of uint32 and uint16, and read as fast as those (inflating them would cost a query ~5 us
per thousand postings; the long lists are the ones that matter).

A chunk's forward list (its term ids and tfs, read whole by an update, never by a query) is one
raw deflate stream of its values' bytes regrouped by significance: every lowest byte, then every
second byte, ..., for the term ids (uint32), then the same for the tfs (uint16). Its high bytes are
long runs that deflate to almost nothing.

A chunk's text is stored with its context, as one deflate stream of the UTF-8 of context + text;
the row keeps the length of the context's bytes to split them again.
"""

from __future__ import annotations

import sys
import zlib
from array import array

# raw deflate (no zlib header or checksum: SQLite's pages and the reader's checks guard the values)
_WBITS = -15
_LEVEL = 6
_BIG_ENDIAN = sys.byteorder == "big"


def _planes(values: array[int]) -> bytes:
    if _BIG_ENDIAN:
        values = array(values.typecode, values)
        values.byteswap()
    raw = values.tobytes()
    width = values.itemsize
    return b"".join(raw[i::width] for i in range(width))


def _unplanes(planes: bytes | memoryview, typecode: str, n: int) -> array[int]:
    out = array(typecode)
    width = out.itemsize
    raw = bytearray(n * width)
    for i in range(width):
        raw[i::width] = planes[i * n : (i + 1) * n]
    out.frombytes(raw)
    if _BIG_ENDIAN:
        out.byteswap()
    return out


# the first byte of stored postings: which typecodes hold its ids and its tfs
_WIDE_IDS, _WIDE_TFS = 1, 2
_TYPECODES = {
    flags: ("I" if flags & _WIDE_IDS else "H", "H" if flags & _WIDE_TFS else "B") for flags in range(4)
}


def pack_postings(ids: array[int], tfs: array[int]) -> bytes:
    """Return the stored form of a term's postings: chunk ids (ascending) and tfs of equal length."""
    flags = (_WIDE_IDS if ids and ids[-1] > 0xFFFF else 0) | (_WIDE_TFS if tfs and max(tfs) > 0xFF else 0)
    id_code, tf_code = _TYPECODES[flags]
    narrow_ids, narrow_tfs = array(id_code, ids), array(tf_code, tfs)
    if _BIG_ENDIAN:
        narrow_ids.byteswap()
        narrow_tfs.byteswap()
    return bytes((flags,)) + narrow_ids.tobytes() + narrow_tfs.tobytes()


def unpack_postings(blob: bytes) -> tuple[array[int], array[int]]:
    """Return the chunk ids and tfs of a term's stored postings (as arrays of the widths they
    were stored in: read them, don't extend them); ValueError if damaged."""
    if not isinstance(blob, bytes) or not blob or blob[0] not in _TYPECODES:
        raise ValueError("postings of an unknown form")
    ids, tfs = (array(code) for code in _TYPECODES[blob[0]])
    n, rest = divmod(len(blob) - 1, ids.itemsize + tfs.itemsize)
    if rest:
        raise ValueError("postings of uneven length")
    view = memoryview(blob)
    ids.frombytes(view[1 : 1 + n * ids.itemsize])
    tfs.frombytes(view[1 + n * ids.itemsize :])
    if _BIG_ENDIAN:
        ids.byteswap()
        tfs.byteswap()
    return ids, tfs


def pack_forward(tids: array[int], tfs: array[int]) -> bytes:
    """Return the stored form of a chunk's forward list: term ids (uint32) and tfs (uint16)."""
    return zlib.compress(_planes(tids) + _planes(tfs), _LEVEL, wbits=_WBITS)


def unpack_forward(blob: bytes) -> tuple[array[int], array[int]]:
    """Return the term ids (uint32) and tfs (uint16) of a stored forward list; ValueError if damaged."""
    try:
        planes = memoryview(zlib.decompress(blob, _WBITS))
    except (zlib.error, TypeError) as exc:
        raise ValueError(f"forward list not inflatable: {exc}") from None
    n, rest = divmod(len(planes), 6)
    if rest:
        raise ValueError("forward list of uneven length")
    return _unplanes(planes[: 4 * n], "I", n), _unplanes(planes[4 * n :], "H", n)


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
