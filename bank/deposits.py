"""Deposits of replacement credits (Subd. 12; docs/domain.md §2).

One deposit is one balanced ledger transaction: for each action, credits move from the board's
issuance account of the action's credit class into a new lot of the holder's account.  The rules
of Subd. 12 (a), (b) and (c) are in ``bank.rules.deposit_rules``; this module applies them
and books.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import date
from typing import Any

from sqlalchemy.orm import Session

import ledger
from bank import account_dates, credits, parties, policy, site_register
from bank.access import Actor
from bank.deposit_tables import Deposit, DepositAction
from bank.deposit_views import DepositView, deposit_view
from bank.errors import Conflict, NotEligible, NotFound, ValidationFailed
from bank.ids import new_id
from bank.rules.deposit_rules import ActionCredit, ActionRequest, DepositFacts, evaluate_deposit
from bank.rules.ruleset import Ruleset
from ledger import clock
from ledger.db import Database

__all__ = ["Deposit", "DepositAction", "DepositRequest", "make_deposit", "post_deposit"]


@dataclass(frozen=True)
class DepositRequest:
    """``POST /accounts/{id}/deposits`` as the use case takes it."""

    account_id: str
    bank_site_id: str
    effective_on: date
    banking_plan_reference: str
    banking_plan_approved_on: date
    banking_plan_lgu_id: str
    wetland_type: str
    completed_on: date
    federally_approved: bool
    designated_for_replacement: bool
    paid_by_performer: bool
    paid_back_with_interest: bool
    actions: tuple[ActionRequest, ...]


#: the request's fields that ``Deposit`` records as they were given
_RECORDED = tuple(f.name for f in fields(DepositRequest) if f.name != "actions")


def post_deposit(
    db: Database,
    ruleset: Ruleset,
    actor: Actor,
    request: DepositRequest,
    request_id: str | None,
) -> DepositView:
    """Deposit credits into an account (board): ``not_found`` without the account; otherwise
    as ``make_deposit``, all actions or none."""
    policy.require_board(actor, "deposit credits")
    with db.transaction() as session:
        if session.get(parties.BankAccount, request.account_id) is None:
            raise NotFound(f"no account {request.account_id}")
        return deposit_view(session, make_deposit(session, ruleset, actor, request, request_id))


def make_deposit(
    session: Session,
    ruleset: Ruleset,
    actor: Actor,
    request: DepositRequest,
    request_id: str | None,
) -> Deposit:
    """Apply Subd. 12 to every action and book the whole deposit as one transaction.

    The caps apply to the bank site's register: what the site's restoration may yield in all,
    less what it has already yielded (the site is locked meanwhile).  One failing action refuses
    the whole deposit; nothing is written.
    """
    account, site = check_request(session, request)
    actions = list(request.actions)
    before = site_register.register_of(session, site.id)
    register = before.with_first_areas(actions)
    evaluated = evaluate_deposit(ruleset, facts_of(request), actions, register)
    deposit_id = new_id("dep")
    legs, booked = [], []
    for position, (action, credit) in enumerate(zip(request.actions, evaluated, strict=True)):
        klass = credits.ensure_class(
            session, site.service_area, request.wetland_type, credit.restricted
        )
        lot = credits.new_lot(
            session,
            account,
            klass,
            bank_site_id=site.id,
            deposit_id=deposit_id,
            parent_lot_id=None,
            federally_approved=request.federally_approved,
        )
        legs.append(
            ledger.Leg(klass.issuance_account_id, lot.ledger_account_id, credit.credit_sqft)
        )
        booked.append((position, action, credit, klass, lot))
    posted = ledger.transfer(
        session, "deposit", legs, _meta(actor, request, deposit_id, request_id)
    )
    deposit = _record(session, ruleset, actor, request, deposit_id, posted.transaction_id, booked)
    first = {c: a for c, a in register.areas.items() if c not in before.areas}
    site_register.record(
        session, site.id, first, actor, source="first_deposit", deposit_id=deposit_id
    )
    return deposit


def check_request(
    session: Session, request: DepositRequest, *, lock: bool = True
) -> tuple[parties.BankAccount, parties.BankSite]:
    """The receiving account (open or frozen) and the bank site, locked unless ``lock`` is
    off (a preview); the site must be the account holder's, the banking plan's LGU must exist
    and the dates must be in order."""
    account = session.get(parties.BankAccount, request.account_id)
    if account is None:
        raise ValidationFailed("no such account", {"account_id": ["no such account"]})
    if account.status == "closed":
        raise Conflict("a closed account accepts no deposit")
    site = parties.get_site(session, request.bank_site_id, field="bank_site_id")
    if lock:
        site = site_register.lock_site(session, request.bank_site_id)
    if site.holder_id != account.holder_id:
        raise NotEligible(
            f"bank site {site.id} belongs to another holder: its credits go only into an account "
            "of the site's holder",
            field="bank_site_id",
        )
    parties.get_lgu(session, request.banking_plan_lgu_id, field="banking_plan.lgu_id")
    _check_dates(request, account)
    return account, site


def _meta(
    actor: Actor, request: DepositRequest, deposit_id: str, request_id: str | None
) -> ledger.Meta:
    return ledger.Meta(
        idempotency_key=f"deposit:{deposit_id}",
        effective_on=request.effective_on,
        memo=f"deposit {deposit_id} under banking plan {request.banking_plan_reference}",
        actor=actor.label,
        request_id=request_id,
    )


def _check_dates(request: DepositRequest, account: parties.BankAccount) -> None:
    today = clock.today()
    if request.effective_on > today:
        raise ValidationFailed("the deposit date is in the future", {"effective_on": ["future"]})
    account_dates.check_not_before_opening(account, request.effective_on)
    if request.banking_plan_approved_on > request.effective_on:
        raise ValidationFailed(
            "the banking plan must be approved before the deposit",
            {"banking_plan.approved_on": ["after the deposit date"]},
        )


def facts_of(request: DepositRequest) -> DepositFacts:
    """What the deposit certifies about the restoration as a whole (Subd. 12 (a), (b))."""
    return DepositFacts(
        deposit_on=request.effective_on,
        completed_on=request.completed_on,
        designated_for_replacement=request.designated_for_replacement,
        paid_by_performer=request.paid_by_performer,
        paid_back_with_interest=request.paid_back_with_interest,
    )


def _record(
    session: Session,
    ruleset: Ruleset,
    actor: Actor,
    request: DepositRequest,
    deposit_id: str,
    transaction_id: int,
    booked: list[tuple[int, ActionRequest, ActionCredit, credits.CreditClass, credits.Lot]],
) -> Deposit:
    deposit = Deposit(
        id=deposit_id,
        **{name: getattr(request, name) for name in _RECORDED},
        ruleset=ruleset.id,
        transaction_id=transaction_id,
        total_credit_sqft=sum(credit.credit_sqft for _, _, credit, _, _ in booked),
        recorded_at=clock.utcnow(),
        actor=actor.label,
    )
    session.add(deposit)
    session.flush()
    for position, action, credit, klass, lot in booked:
        session.add(
            DepositAction(
                deposit_id=deposit_id,
                position=position,
                category=credit.category,
                area_sqft=credit.area_sqft,
                credit_sqft=credit.credit_sqft,
                cap_sqft=credit.cap_sqft,
                restricted=credit.restricted,
                credit_class=klass.code,
                lot_id=lot.id,
                details=_details(action),
            )
        )
    session.flush()
    return deposit


def _details(action: ActionRequest) -> dict[str, Any]:
    names = ("qualifying_years", "established_on", "easement_terminated_on", "associated_project")
    out: dict[str, Any] = {}
    for name in names:
        value = getattr(action, name, None)
        if value is not None:
            out[name] = value.isoformat() if isinstance(value, date) else value
    return out
