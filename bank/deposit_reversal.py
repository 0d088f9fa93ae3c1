"""Reversing a mistaken deposit (board): a compensating transaction, never an edit.

A deposit's rows are sealed, so a deposit made in error is undone by booking its credits back
from the lots it made to the board's issuance accounts.  That is honest only while the credits
are untouched: every lot the deposit made must still hold all it received, with nothing reserved
out of it.  The site's yielded credit goes back down (``bank.site_register`` leaves reversed
deposits out), so a corrected deposit may follow.  Nor may the reversal leave other credit of
the site standing over its cap: a buffer credited beside the wetland the deposit credited would
then stand beside none (its cap falls with the wetland's area), so the buffer's deposit is
reversed first.
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import select
from sqlalchemy.orm import Session

import ledger
from bank import account_dates, credits, parties, policy, site_register
from bank.access import Actor
from bank.deposit_tables import Deposit, DepositAction, DepositReversal
from bank.deposit_views import DepositView, deposit_view, get_deposit
from bank.errors import CapExceeded, Conflict, ValidationFailed, found
from bank.rules.ruleset import Ruleset
from bank.wording import sqft
from ledger import clock
from ledger.db import Database
from ledger.errors import InsufficientFunds


def reverse_deposit(
    db: Database,
    ruleset: Ruleset,
    actor: Actor,
    deposit_id: str,
    *,
    effective_on: date,
    reason: str,
    request_id: str | None,
) -> DepositView:
    """Reverse a mistaken deposit (board): ``conflict`` once it has been reversed, or when a lot
    it made no longer holds all its credits unreserved; ``cap_exceeded`` when other credit of the
    site would stand over its cap without the deposit; nothing is written then."""
    policy.require_board(actor, "reverse deposits")
    with db.transaction() as session:
        deposit = get_deposit(session, actor, deposit_id)
        _reverse(session, ruleset, actor, deposit, effective_on, reason, request_id)
        return deposit_view(session, deposit)


def _reverse(
    session: Session,
    ruleset: Ruleset,
    actor: Actor,
    deposit: Deposit,
    effective_on: date,
    reason: str,
    request_id: str | None,
) -> None:
    """Book the deposit's credits back out of its lots, as one ledger transaction."""
    # the lock a deposit takes: a buffer deposited meanwhile is seen by the check below, or
    # waits for the reversal and finds no wetland credited beside it
    site_register.lock_site(session, deposit.bank_site_id)
    if session.get(DepositReversal, deposit.id, populate_existing=True) is not None:
        raise Conflict(f"deposit {deposit.id} has already been reversed")
    _check_date(session, deposit, effective_on)
    actions = _untouched_actions(session, deposit)
    _check_after_history(session, [lot for _, lot in actions], effective_on)
    _check_caps_after(session, ruleset, deposit)
    try:
        # the deposit's own lines undone, pointing at it (a correction names what it reverses,
        # at most once)
        posted = ledger.reverse(
            session,
            deposit.transaction_id,
            ledger.Meta(
                idempotency_key=f"deposit-reversal:{deposit.id}",
                effective_on=effective_on,
                memo=f"reversal of deposit {deposit.id}: {reason}",
                actor=actor.label,
                request_id=request_id,
            ),
            kind="deposit_reversal",
        )
    except InsufficientFunds as error:  # a writer the lock above did not cover
        raise Conflict("the deposit's credits are no longer all in its lots") from error
    session.add(
        DepositReversal(
            deposit_id=deposit.id,
            transaction_id=posted.transaction_id,
            effective_on=effective_on,
            reason=reason,
            recorded_at=clock.utcnow(),
            actor=actor.label,
        )
    )
    session.flush()


def _untouched_actions(
    session: Session, deposit: Deposit
) -> list[tuple[DepositAction, credits.Lot]]:
    """The deposit's actions with their lots, each lot locked and checked to hold all the
    deposit put there, with nothing reserved out of it."""
    actions = list(
        session.execute(
            select(DepositAction, credits.Lot)
            .join(credits.Lot, credits.Lot.id == DepositAction.lot_id)
            .where(DepositAction.deposit_id == deposit.id)
            .order_by(DepositAction.position)
        ).all()
    )
    held = ledger.lock(session, [lot.ledger_account_id for _, lot in actions])
    for action, lot in actions:
        balance = held[lot.ledger_account_id]
        if balance.posted != action.credit_sqft or balance.available != action.credit_sqft:
            raise Conflict(
                f"lot {lot.label} ({lot.id}) no longer holds all {sqft(action.credit_sqft)} the "
                f"deposit put there unreserved ({sqft(balance.available)} available): a deposit "
                "is reversed only while its credits are untouched",
                lot_id=lot.id,
                available_sqft=balance.available,
                deposited_sqft=action.credit_sqft,
            )
    return [(action, lot) for action, lot in actions]


def _check_after_history(session: Session, lots: list[credits.Lot], effective_on: date) -> None:
    """The reversal is dated on or after every entry its lots have had (a reservation voided,
    a transfer received and sent back): dated earlier, it would rewrite the lots' past, and a
    balance as of a day in between would show credits reserved or sent out of a lot that, by
    the new history, no longer held them."""
    last = ledger.last_effective_on(session, [lot.ledger_account_id for lot in lots])
    if last is not None and effective_on < last:
        raise ValidationFailed(
            f"the deposit's lots have entries effective {last.isoformat()}: the reversal "
            "cannot be effective before them",
            {"effective_on": [f"before {last.isoformat()}"]},
        )


def _check_caps_after(session: Session, ruleset: Ruleset, deposit: Deposit) -> None:
    """The site's other credit stays within its caps as they would stand without the deposit
    (``site_register.over_cap``, the check a register amendment meets): reversing a wetland's
    only deposit takes its area, and so its buffer's cap, with it (Subd. 12 (c)(2), (3))."""
    site_id = deposit.bank_site_id
    before = site_register.register_of(session, site_id)
    after = site_register.register_of(session, site_id, reversing=deposit.id)
    over = site_register.over_cap(ruleset, before, after, set(after.credited))
    if over is not None:
        raise CapExceeded(
            f"the site has credited {sqft(over.credited_sqft)} of {over.category}, which the "
            f"deposit's credit holds up: without it {over.category} could earn at most "
            f"{sqft(over.cap_sqft)}; reverse the deposit that credited {over.category} first",
            **over.facts(),
        )


def _check_date(session: Session, deposit: Deposit, effective_on: date) -> None:
    if effective_on > clock.today():
        raise ValidationFailed("the reversal date is in the future", {"effective_on": ["future"]})
    if effective_on < deposit.effective_on:
        raise ValidationFailed(
            f"the reversal cannot be effective before the deposit ({deposit.effective_on})",
            {"effective_on": ["before the deposit"]},
        )
    # a deposit recorded before deposits were checked so may be dated before its account opened
    account = found(session.get(parties.BankAccount, deposit.account_id), "no such account")
    account_dates.check_not_before_opening(account, effective_on)
