"""``ledger.slices``: long key lists are read in slices that cover every key once, in order."""

from __future__ import annotations

from ledger.slices import SLICE, slices


def test_slices_cover_every_key_once_in_order() -> None:
    keys = list(range(7))
    assert [list(part) for part in slices(keys, 3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(slices([], 3)) == []


def test_a_slice_stays_under_postgresql_s_limit_on_bound_parameters() -> None:
    assert max(len(part) for part in slices(list(range(70_000)))) == SLICE <= 65_535
