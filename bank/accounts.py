"""Bank accounts as the API shows them: opening, listing, freezing and what each holds.

The board opens, freezes and unfreezes accounts (closing is ``bank.account_close``); the board
sees every account and a holder its own (``bank.policy``).  Each use case here is one unit of
work and returns an ``AccountView`` (or lots), fully loaded before the session closes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from bank import credits, keyset, parties, policy, status_history
from bank.access import Actor
from bank.balances import ClassBalance, balance_rows, class_rows_of
from bank.errors import BankError
from bank.lot_picking import check_sender_status
from bank.parties import BankAccount
from bank.rules.ruleset import Ruleset
from ledger.db import Database


@dataclass(frozen=True)
class AccountView:
    """An account with its balances per credit class."""

    id: str
    number: str
    holder_id: str
    service_area: int
    county: str
    name: str | None
    status: str
    created_at: datetime
    balances: list[ClassBalance]


def account_view(session: Session, account: BankAccount) -> AccountView:
    """``account`` with what it holds now."""
    return _view(account, balance_rows(session, account))


def _view(account: BankAccount, balances: list[ClassBalance]) -> AccountView:
    return AccountView(
        id=account.id,
        number=account.number,
        holder_id=account.holder_id,
        service_area=account.service_area,
        county=account.county,
        name=account.name,
        status=account.status,
        created_at=account.created_at,
        balances=balances,
    )


def send_refusal(account: AccountView) -> BankError | None:
    """Why a reservation or a transfer from ``account`` (as read now) is refused for its status,
    by the check both make (``lot_picking.check_sender_status``): frozen or closed; ``None``
    while it is open."""
    try:
        check_sender_status(account.status, account.number, account.id)
    except BankError as refused:
        return refused
    return None


def open_account(
    db: Database,
    ruleset: Ruleset,
    actor: Actor,
    *,
    holder_id: str,
    service_area: int,
    county: str,
    name: str | None = None,
) -> AccountView:
    """Open a bank account for a holder (board), numbered ``WB-000001`` onwards."""
    policy.require_board(actor, "open accounts")
    with db.transaction() as session:
        account = parties.open_account(
            session,
            ruleset,
            holder_id=holder_id,
            service_area=service_area,
            county=county,
            name=name,
        )
        return account_view(session, account)


def get_account(db: Database, actor: Actor, account_id: str) -> AccountView:
    """The account with its balances (board, or its holder; ``not_found`` otherwise)."""
    with db.transaction() as session:
        return account_view(session, parties.visible_account(session, actor, account_id))


def id_of(db: Database, reference: str) -> str:
    """The id of the account ``reference`` names by its number (``WB-000003``, as people know
    it) or by its id; an unknown number is returned as it is, for the use case to refuse."""
    wanted = reference.strip()
    with db.transaction() as session:
        found = session.execute(
            select(BankAccount.id).where(BankAccount.number == wanted.upper())
        ).scalar_one_or_none()
    return found or wanted


def set_status(db: Database, actor: Actor, account_id: str, status: str) -> AccountView:
    """Freeze (``frozen``: it accepts deposits but sends nothing out) or unfreeze (``open``)
    an account (board); a closed account is ``conflict``."""
    policy.require_board(actor, "freeze or unfreeze accounts")
    with db.transaction() as session:
        return account_view(session, parties.set_account_status(session, account_id, status, actor))


def status_changes(
    db: Database, actor: Actor, account_id: str
) -> list[status_history.StatusChangeView]:
    """The account's status history, first to last: each freeze, unfreeze and close, and a
    reopening on appeal, with who and when (board, or its holder); none while it is as opened."""
    with db.transaction() as session:
        account = parties.visible_account(session, actor, account_id)
        rows = status_history.history_of(session, account.id)
        return [status_history.StatusChangeView.of(row) for row in rows]


def account_lots(db: Database, actor: Actor, account_id: str) -> list[credits.LotView]:
    """Every lot the account holds, oldest first, with provenance (board, or its holder);
    ``page_of_lots`` pages them."""
    with db.transaction() as session:
        account = parties.visible_account(session, actor, account_id)
        return [credits.LotView.of(item) for item in credits.lots_of(session, account)]


def page_of_lots(
    db: Database, actor: Actor, account_id: str, limit: int, after: str | None = None
) -> list[credits.LotView]:
    """Up to ``limit + 1`` of ``account_lots``'s lots (the extra one says there are more),
    after the lot ``after`` (``credits.lot_page``), which must be one of the account's own:
    another account's lot, or none at all, is ``UnknownCursor``."""
    with db.transaction() as session:
        account = parties.visible_account(session, actor, account_id)
        if after is not None:
            Lot = credits.Lot  # noqa: N806
            keyset.require_listed(session, Lot.id, after, Lot.account_id == account.id)
        page = credits.lot_page(session, account, limit, after)
        return [credits.LotView.of(item) for item in page]


def list_accounts(
    db: Database, actor: Actor, holder_id: str | None, limit: int, after: str | None
) -> list[AccountView]:
    """Up to ``limit + 1`` accounts in opening order, after the account ``after``: every
    account (or ``holder_id``'s) for the board, its own for a holder (none when it names
    another holder).  The cursor's account must be one the caller sees (any for the board, its
    own for a holder), whatever ``holder_id``, a filter that does not move a cursor: another
    holder's (for a holder), or none at all, is ``UnknownCursor``."""
    own = policy.own_holder(actor)
    with db.transaction() as session:
        if after is not None:
            A = BankAccount  # noqa: N806
            scope = [] if own is None else [A.holder_id == own]
            keyset.require_listed(session, A.id, after, *scope)
        if own is not None and holder_id not in (None, own):
            return []
        listed = holder_id if own is None else own
        rows = list(session.execute(_page_query(listed, limit, after)).scalars())
        held = class_rows_of(session, rows)
        return [_view(account, held[account.id]) for account in rows]


def _page_query(holder_id: str | None, limit: int, after: str | None) -> Any:
    """Keyset pagination on (``created_at``, ``id``): the rows after the cursor's account
    (``list_accounts`` refuses one the caller does not see)."""
    A = BankAccount  # noqa: N806
    query = select(A).order_by(A.created_at, A.id).limit(limit + 1)
    if holder_id is not None:
        query = query.where(A.holder_id == holder_id)
    if after is not None:
        query = query.where(keyset.after(A.created_at, A.id, after))
    return query
