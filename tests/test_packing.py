from __future__ import annotations

from array import array

import pytest

from rag.store.packing import (
    largest,
    pack_postings,
    pack_text,
    unpack_postings,
    unpack_text,
    widened,
)

LISTS = [
    ([], []),
    ([7], [1]),
    ([0, 3, 65535], [1, 255, 2]),
    ([5, 65536, 4_000_000_000], [1, 1, 1]),  # an id above 16 bits widens every id
    ([5, 65536], [1, 1]),  # the third byte alone
    ([16_777_216, 5], [1, 1]),  # the fourth byte alone
    ([1, 2], [256, 65535]),  # a tf above 8 bits widens every tf
    (list(range(0, 300_000, 7)), [1 + i % 300 for i in range(0, 300_000, 7)]),
]
IDS = ["empty", "one", "narrow", "wide-ids", "third-byte", "fourth-byte", "wide-tfs", "long"]


@pytest.mark.parametrize("numpy", [True, False], ids=["numpy", "no-numpy"])
@pytest.mark.parametrize("n", [1, 999, 1_000, 50_000])
@pytest.mark.parametrize("typecode", ["H", "I"])
def test_the_largest_id_is_found_wherever_it_stands(
    n: int, typecode: str, numpy: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an index's range check reads the largest id of a list, by numpy from 1,000 values once
    # numpy is loaded
    if numpy:
        pytest.importorskip("numpy")
    else:
        monkeypatch.setattr("rag.store.packing.numpy_for", lambda *args: None)
    for at in (0, n // 2, n - 1):
        values = array(typecode, [3] * n)
        values[at] = 60_000
        assert largest(values) == 60_000


@pytest.mark.parametrize(("ids", "tfs"), LISTS, ids=IDS)
def test_postings_read_back_as_written(ids: list[int], tfs: list[int]) -> None:
    got_ids, got_tfs = unpack_postings(pack_postings(array("I", ids), array("H", tfs)))
    assert (list(got_ids), list(got_tfs)) == (ids, tfs)


@pytest.mark.parametrize(("ids", "tfs"), LISTS, ids=IDS)
def test_postings_read_back_widen_to_uint32_and_uint16(ids: list[int], tfs: list[int]) -> None:
    got_ids, got_tfs = unpack_postings(pack_postings(array("I", ids), array("H", tfs)))
    assert widened(got_ids, "I") == array("I", ids) and widened(got_tfs, "H") == array("H", tfs)
    # what was read and widened packs as it first did
    assert pack_postings(got_ids, got_tfs) == pack_postings(widened(got_ids, "I"), widened(got_tfs, "H"))


def test_postings_take_the_narrowest_widths() -> None:
    # one byte of widths, then 2 bytes an id and 1 a tf while they fit
    assert len(pack_postings(array("I", [1, 2, 65535]), array("H", [1, 2, 255]))) == 1 + 3 * 3
    assert len(pack_postings(array("I", [1, 65536]), array("H", [1, 256]))) == 1 + 2 * 6


def test_forward_lists_read_back_in_their_order() -> None:
    tids, tfs = [70000, 3, 12, 0], [2, 1, 300, 1]  # a chunk's term ids come in the order of its terms
    got_tids, got_tfs = unpack_postings(pack_postings(array("I", tids), array("H", tfs)))
    assert (list(got_tids), list(got_tfs)) == (tids, tfs)


@pytest.mark.parametrize(
    ("context", "text"),
    [("", ""), ("", "x = 1\n"), ("class A:", "def f(self):\n    return 'é ✓'"), ("ß" * 3, "\x00\n" * 5000)],
    ids=["empty", "no-context", "utf8", "long"],
)
def test_texts_read_back_as_written(context: str, text: str) -> None:
    assert unpack_text(*pack_text(context, text)) == (context, text)


@pytest.mark.parametrize(
    "unpack",
    [
        lambda: unpack_postings(b""),
        lambda: unpack_postings(b"\x09\x00\x00\x00"),  # widths no writer sets
        lambda: unpack_postings(b"\x00\x01\x00"),  # a posting cut short
        lambda: unpack_text(b"\xff\xff", 0),
        lambda: unpack_text(pack_text("ab", "c")[0], 4),  # the context longer than what is stored
    ],
    ids=[
        "postings-empty",
        "postings-widths",
        "postings-cut",
        "text-garbage",
        "text-split",
    ],
)
def test_damaged_values_are_value_errors(unpack) -> None:
    # the readers report ValueError as a damaged index (re-run ingest --full)
    with pytest.raises(ValueError):
        unpack()
