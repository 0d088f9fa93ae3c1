"""What each ledger transaction that moved an account's credits was, as people know it.

A statement's entry is a ledger entry: its transaction has a kind and a memo, and the memo
names records by id (``withdrawal for plan plan_…``, ``deposit dep_… under banking plan …``), or
says nothing (a transfer without the sender's own memo).  The pages say instead what the credits
moved for, by the names people know (the deposit's bank site and banking plan, the other
account of a transfer by its number, the plan by its project), and link the record the reader
may open (``bank.policy``): the other account of a transfer, the plan of a withdrawal.  The
record's id stays with the row (``record_id``) for whoever needs to look it up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from bank import policy
from bank.access import Actor
from bank.deposit_tables import Deposit, DepositReversal
from bank.party_tables import BankAccount, BankSite, Holder, Lgu
from bank.plan_tables import Plan
from bank.transfer_tables import Transfer
from bank.withdrawal_tables import Withdrawal


@dataclass(frozen=True)
class EntryRecord:
    """What a transaction was: a sentence, the record it belongs to (``trf_…``, ``wd_…``,
    ``dep_…``; ``None`` for a transaction of no such record), and what the reader may open from
    it: the plan (``plan_id``) or the other account (``account_id``)."""

    description: str
    record_id: str | None = None
    plan_id: str | None = None
    account_id: str | None = None


@dataclass(frozen=True)
class Moved:
    """A statement entry's transaction: its id, kind and memo."""

    transaction_id: str
    kind: str
    memo: str | None


def entry_records(
    session: Session, actor: Actor, account: BankAccount, moved: Iterable[Moved]
) -> dict[str, EntryRecord]:
    """Each transaction of ``moved`` (entries of ``account``'s statement, which ``actor`` may
    see) as an ``EntryRecord``, by transaction id."""
    by_id = {m.transaction_id: m for m in moved}
    ids = [int(t) for t in by_id]
    if not ids:
        return {}
    found: dict[str, EntryRecord] = {}
    found |= _deposits(session, ids)
    found |= _transfers(session, actor, account, ids)
    found |= _withdrawals(session, actor, ids)
    rest = {m.memo for t, m in by_id.items() if t not in found and m.memo}
    memos = with_names(session, rest)
    for t, m in by_id.items():
        if t not in found:
            kind = m.kind.replace("_", " ").capitalize()
            found[t] = EntryRecord(f"{kind}: {memos[m.memo]}" if m.memo else kind)
    return found


def _deposits(session: Session, ids: list[int]) -> dict[str, EntryRecord]:
    """A deposit and its reversal: the bank site the credits came from, its banking plan."""
    made = session.execute(
        select(Deposit, BankSite.name)
        .join(BankSite, BankSite.id == Deposit.bank_site_id)
        .where(Deposit.transaction_id.in_(ids))
    ).all()
    found = {
        str(d.transaction_id): EntryRecord(
            f"Deposit from {site} under banking plan {d.banking_plan_reference}", d.id
        )
        for d, site in made
    }
    undone = session.execute(
        select(DepositReversal, Deposit, BankSite.name)
        .join(Deposit, Deposit.id == DepositReversal.deposit_id)
        .join(BankSite, BankSite.id == Deposit.bank_site_id)
        .where(DepositReversal.transaction_id.in_(ids))
    ).all()
    for r, d, site in undone:
        found[str(r.transaction_id)] = EntryRecord(
            f"Deposit from {site} under banking plan {d.banking_plan_reference} reversed: "
            f"{r.reason}",
            d.id,
        )
    return found


def _transfers(
    session: Session, actor: Actor, account: BankAccount, ids: list[int]
) -> dict[str, EntryRecord]:
    """A transfer: the other account by its number (linked when the reader may see it), and
    the sender's memo."""
    found = {}
    for t in session.scalars(select(Transfer).where(Transfer.transaction_id.in_(ids))):
        sent = t.from_account_id == account.id
        other = session.get(BankAccount, t.to_account_id if sent else t.from_account_id)
        if other is None:  # a foreign key: the other account exists
            continue
        said = f"Transfer {'to' if sent else 'from'} account {other.number}"
        found[str(t.transaction_id)] = EntryRecord(
            f"{said}: {t.memo}" if t.memo else said,
            t.id,
            account_id=other.id if policy.sees_holdings(actor, other.holder_id) else None,
        )
    return found


def _withdrawals(session: Session, actor: Actor, ids: list[int]) -> dict[str, EntryRecord]:
    """A withdrawal, and its reversal on appeal: the plan by its project (linked when the reader
    may see the plan)."""
    rows = session.execute(
        select(Withdrawal, Plan)
        .join(Plan, Plan.id == Withdrawal.plan_id)
        .where(or_(Withdrawal.transaction_id.in_(ids), Withdrawal.reversal_transaction_id.in_(ids)))
    ).all()
    found = {}
    for w, plan in rows:
        plan_id = plan.id if policy.sees_plan(actor, plan.lgu_id) else None
        said = f"Withdrawal for plan {plan.project}"
        found[str(w.transaction_id)] = EntryRecord(said, w.id, plan_id)
        if w.reversal_transaction_id is not None:
            found[str(w.reversal_transaction_id)] = EntryRecord(
                f"{said} reversed on appeal", w.id, plan_id
            )
    return found


#: the ids a ledger account's name may carry (``Fee income of LGU lgu_…``)
_IDS = re.compile(r"\b(?:lgu|hld|acct|plan|site)_[0-9a-f]+\b")


def with_names(session: Session, texts: set[str]) -> dict[str, str]:
    """Each text (a ledger account's name, a transaction's memo) with the ids in it replaced by
    the names they stand for."""
    ids = {found for text in texts for found in _IDS.findall(text)}
    known = _party_names(session, ids)
    return {text: _IDS.sub(lambda m: known.get(m.group(0), m.group(0)), text) for text in texts}


def _party_names(session: Session, ids: set[str]) -> dict[str, str]:
    if not ids:
        return {}
    known: dict[str, str] = {}
    for query in (
        select(Lgu.id, Lgu.name).where(Lgu.id.in_(ids)),
        select(Holder.id, Holder.name).where(Holder.id.in_(ids)),
        select(BankAccount.id, BankAccount.number).where(BankAccount.id.in_(ids)),
        select(Plan.id, Plan.project).where(Plan.id.in_(ids)),
        select(BankSite.id, BankSite.name).where(BankSite.id.in_(ids)),
    ):
        known.update({ident: name for ident, name in session.execute(query).all()})
    return known
