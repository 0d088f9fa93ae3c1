"""How often a background sealer runs: fast alone, slower while another process's sealer works."""

from __future__ import annotations

import pytest

from ledger.chain import Sealed
from ledger.sealer import next_pace

FAST, SLOW = 0.05, 1.0


def test_a_sealer_that_finds_nobody_else_sealed_since_its_last_run_goes_back_to_the_fast_pace():
    # its last run ended at link 100; this one chained 101-130
    assert next_pace(0.4, Sealed(30, 101, 130), 100, FAST, SLOW) == FAST


def test_a_sealer_that_finds_links_another_sealed_since_its_last_run_waits_twice_as_long():
    # its last run ended at link 100; another sealer chained 101-120 before this run's 121-130
    assert next_pace(0.05, Sealed(10, 121, 130), 100, FAST, SLOW) == pytest.approx(0.1)


def test_a_sealer_that_finds_the_lock_taken_waits_twice_as_long():
    assert next_pace(0.2, Sealed(0, contended=True), 100, FAST, SLOW) == pytest.approx(0.4)


@pytest.mark.parametrize("sealed", [Sealed(0, contended=True), Sealed(5, 201, 205)])
def test_a_sealer_never_waits_longer_than_the_slowest_pace(sealed):
    assert next_pace(0.8, sealed, 100, FAST, SLOW) == SLOW
    assert next_pace(SLOW, sealed, 100, FAST, SLOW) == SLOW


def test_an_empty_queue_with_no_links_since_its_last_run_leaves_the_pace_as_it_was():
    # a wake by a commit that queued nothing (a read), or a busy sealer's last look
    assert next_pace(0.4, Sealed(0, head_seq=100), 100, FAST, SLOW) == 0.4


def test_an_empty_queue_after_another_sealer_chained_links_waits_twice_as_long():
    # another sealer chained 101-120, what this process committed among them: in step with it,
    # this sealer would find the queue empty run after run and never slow down
    assert next_pace(0.05, Sealed(0, head_seq=120), 100, FAST, SLOW) == pytest.approx(0.1)
    assert next_pace(0.8, Sealed(0, head_seq=120), 100, FAST, SLOW) == SLOW


def test_a_first_run_knows_of_no_other_sealer():
    assert next_pace(0.05, Sealed(30, 501, 530), None, FAST, SLOW) == FAST
