"""What a write is made of, worked out once for both databases (``ledger.lines``), and the word a
caller hears when the engine refuses (``bank.errors.code_of``)."""

from __future__ import annotations

from api.problems import STATUS_BY_CODE
from bank.errors import InsufficientCredits, code_of
from ledger.errors import InsufficientFunds
from ledger.lines import Line, deltas, later_posted
from ledger.schema import PHASE_PENDING, PHASE_POSTED, PHASE_RELEASE


def test_balance_after_is_the_final_balance_less_the_later_posted_lines_of_the_account() -> None:
    lines = [
        Line(1, -30, PHASE_POSTED),
        Line(2, 30, PHASE_POSTED),
        Line(1, -20, PHASE_POSTED),
        Line(3, 20, PHASE_POSTED),
        Line(1, 5, PHASE_PENDING),  # reserves: moves no posted balance
    ]
    # account 1 ends 50 lower; after its first line it stood 20 above its final balance
    assert later_posted(lines) == [-20, 0, 0, 0, 0]


def test_deltas_add_posted_and_pending_sides_and_a_release_takes_back_its_reservation() -> None:
    lines = [
        Line(1, -30, PHASE_POSTED),
        Line(2, 30, PHASE_POSTED),
        Line(1, -10, PHASE_PENDING),
        Line(2, 10, PHASE_PENDING),
        Line(1, -4, PHASE_RELEASE, resolves_id=9, resolution="voided"),
        Line(2, 4, PHASE_RELEASE, resolves_id=9, resolution="voided"),
    ]
    # debits_posted, credits_posted, debits_pending, credits_pending; ascending account id
    assert deltas(lines) == {1: [30, 0, 6, 0], 2: [0, 30, 0, 6]}
    assert list(deltas(reversed(lines))) == [1, 2]


def test_the_engine_says_insufficient_funds_and_a_caller_hears_insufficient_credits() -> None:
    refused = InsufficientFunds("account 7 has 0 available")
    assert refused.code == "insufficient_funds"
    assert code_of(refused) == "insufficient_credits"
    assert STATUS_BY_CODE[code_of(refused)] == 422
    assert code_of(InsufficientCredits("too few")) == "insufficient_credits"
    assert isinstance(InsufficientCredits("too few"), InsufficientFunds)
