"""Credit classes and lots (docs/domain.md §1).

A credit class is (bank service area, wetland type, restricted): credits are fungible only within
one.  Each class has two ledger accounts of its own asset: the board's issuance account (it goes
negative by exactly what has been deposited) and the withdrawn-credits account.

Every lot is its own no-overdraft ledger account, so the ledger alone says how many square feet a
lot holds; a lot's provenance (deposit, bank site, parent lot) is fixed when it is created.
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import (
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
    bindparam,
    func,
    select,
    text,
    update,
)
from sqlalchemy.orm import Mapped, Session, mapped_column

import ledger
from bank import keyset
from bank.errors import Conflict, found
from bank.ids import new_id
from bank.parties import BankAccount, BankSite
from ledger import clock
from ledger.schema import Base

WETLAND_TYPES = tuple(str(n) for n in range(1, 9))  # Circular 39 types 1..8
#: the shape of a credit class's code as ``class_code`` writes it (``BSA5-T2-U``): a request
#: naming a class in another shape names none (a lower-case or padded code included); a code of
#: this shape that no lot holds is credits the account does not have
CLASS_CODE_PATTERN = rf"^BSA[1-9][0-9]{{0,3}}-T({'|'.join(WETLAND_TYPES)})-[UR]$"


class CreditClass(Base):
    """(service area, wetland type, restricted), with its issuance and withdrawn accounts."""

    __tablename__ = "credit_classes"

    code: Mapped[str] = mapped_column(String(20), primary_key=True)
    service_area: Mapped[int] = mapped_column(Integer)
    wetland_type: Mapped[str] = mapped_column(String(2))
    restricted: Mapped[bool] = mapped_column(Boolean)
    issuance_account_id: Mapped[int] = mapped_column(ForeignKey("ledger_accounts.id"))
    withdrawn_account_id: Mapped[int] = mapped_column(ForeignKey("ledger_accounts.id"))


class Lot(Base):
    """Credits of one class with one provenance, held by one bank account."""

    __tablename__ = "lots"
    __table_args__ = (
        UniqueConstraint("account_id", "label"),
        # one child lot per parent in a receiving account (transfers accumulate there)
        UniqueConstraint("account_id", "parent_lot_id", name="uq_lots_account_parent"),
        #: an account's lots in their order (``LOT_ORDER``), for its pages (migration 0029)
        Index(
            "ix_lots_account_id_created_at_label",
            "account_id",
            "created_at",
            func.length(text("label")),
            "label",
        ),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("bank_accounts.id"))
    label: Mapped[str] = mapped_column(String(10))
    credit_class: Mapped[str] = mapped_column(ForeignKey("credit_classes.code"))
    bank_site_id: Mapped[str] = mapped_column(ForeignKey("bank_sites.id"), index=True)
    deposit_id: Mapped[str] = mapped_column(String(40), index=True)
    parent_lot_id: Mapped[str | None] = mapped_column(ForeignKey("lots.id"))
    federally_approved: Mapped[bool] = mapped_column(Boolean)
    ledger_account_id: Mapped[int] = mapped_column(ForeignKey("ledger_accounts.id"), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


def class_code(service_area: int, wetland_type: str, restricted: bool) -> str:
    """``BSA5-T2-U`` (unrestricted) or ``BSA5-T2-R`` (usable only above 1:1)."""
    return f"BSA{service_area}-T{wetland_type}-{'R' if restricted else 'U'}"


def asset_of(code: str) -> str:
    """The ledger asset of a credit class: square feet of that class."""
    return f"sqft:{code}"


#: balance slots of a class's issuance account (docs/scaling.md, "Balance slots for hot
#: accounts"); migration 0004 gives existing ones the same
HOT_ACCOUNT_SLOTS = 8


def ensure_class(
    session: Session, service_area: int, wetland_type: str, restricted: bool
) -> CreditClass:
    """The credit class, created with its two ledger accounts the first time it is needed."""
    code = class_code(service_area, wetland_type, restricted)
    found = session.get(CreditClass, code)
    if found is not None:
        return found
    # two first deposits of a class at once: the second waits here, then finds it
    ledger.advisory_lock(session, f"credit-class:{code}")
    found = session.get(CreditClass, code, populate_existing=True)
    if found is not None:
        return found
    asset = asset_of(code)
    # every deposit of the class draws on its issuance account: spread over slots, concurrent
    # deposits need not take turns.  Not the withdrawn account: credits reach it as
    # reservations and their resolution, which a slotted account keeps in slot 0 anyway
    issuance = ledger.create_account(
        session,
        code=f"issuance:{code}",
        asset=asset,
        name=f"Board issuance {code}",
        slots=HOT_ACCOUNT_SLOTS,
    )
    withdrawn = ledger.create_account(
        session,
        code=f"withdrawn:{code}",
        asset=asset,
        name=f"Withdrawn credits {code}",
    )
    row = CreditClass(
        code=code,
        service_area=service_area,
        wetland_type=wetland_type,
        restricted=restricted,
        issuance_account_id=issuance,
        withdrawn_account_id=withdrawn,
    )
    session.add(row)
    session.flush()
    return row


def get_class(session: Session, code: str) -> CreditClass:
    """The credit class ``code`` (every lot, action and reservation names one that exists)."""
    return found(session.get(CreditClass, code), f"no credit class {code}")


def classes(session: Session, codes: Iterable[str]) -> dict[str, CreditClass]:
    """``get_class`` of each of ``codes``, by code, read with one query (an account's balances
    name one class per row: one round trip for all of them, not one each)."""
    wanted = sorted(set(codes))
    if not wanted:
        return {}
    rows = session.scalars(select(CreditClass).where(CreditClass.code.in_(wanted)))
    found_by_code = {row.code: row for row in rows}
    for code in wanted:
        found(found_by_code.get(code), f"no credit class {code}")
    return found_by_code


def new_lot(
    session: Session,
    account: BankAccount,
    credit_class: CreditClass,
    *,
    bank_site_id: str,
    deposit_id: str,
    parent_lot_id: str | None,
    federally_approved: bool,
) -> Lot:
    """A new empty lot in ``account`` with the next label (A, B, ..., Z, AA, ...).

    The count's UPDATE reads the account's status as it commits: an account closed while this
    write waited for its row (``bank.account_close`` holds it ``FOR UPDATE``) is ``conflict``,
    so no credits land in a closed account.
    """
    count, status = session.execute(
        update(BankAccount)
        .where(BankAccount.id == account.id)
        .values(lot_count=BankAccount.lot_count + 1)
        .returning(BankAccount.lot_count, BankAccount.status)
    ).one()
    if status == "closed":
        raise Conflict(f"account {account.number} is closed: it accepts no credits")
    lot_id = new_id("lot")
    ledger_account = ledger.create_account(
        session,
        code=f"lot:{lot_id}",
        asset=asset_of(credit_class.code),
        name=f"{account.number} lot {lot_label(count)}",
        no_overdraft=True,
    )
    lot = Lot(
        id=lot_id,
        account_id=account.id,
        label=lot_label(count),
        credit_class=credit_class.code,
        bank_site_id=bank_site_id,
        deposit_id=deposit_id,
        parent_lot_id=parent_lot_id,
        federally_approved=federally_approved,
        ledger_account_id=ledger_account,
        created_at=clock.utcnow(),
    )
    session.add(lot)
    session.flush()
    return lot


def lot_label(n: int) -> str:
    """1 → A, 26 → Z, 27 → AA: the state's forms name lots by letter (practice)."""
    label = ""
    while n > 0:
        n, rest = divmod(n - 1, 26)
        label = string.ascii_uppercase[rest] + label
    return label


@dataclass(frozen=True)
class LotBalance:
    """A lot with what it holds now."""

    lot: Lot
    posted_sqft: int
    reserved_sqft: int
    frozen: bool

    @property
    def frozen_sqft(self) -> int:
        return self.posted_sqft - self.reserved_sqft if self.frozen else 0

    @property
    def available_sqft(self) -> int:
        return self.posted_sqft - self.reserved_sqft - self.frozen_sqft


#: an account's lots, oldest first: labels are issued in order per account (A, B, … Z, AA), so
#: they break ties between lots made at once, and each is the account's only one of its label
LOT_ORDER = (Lot.created_at, func.length(Lot.label), Lot.label)
# built once (a statement built per call costs SQLAlchemy its cache key every time)
_LOTS = (
    select(Lot, BankSite.frozen)
    .join(BankSite, BankSite.id == Lot.bank_site_id)
    .where(Lot.account_id == bindparam("account_id"))
    .order_by(*LOT_ORDER)
)
LOTS_OF_CLASS = _LOTS.where(Lot.credit_class == bindparam("credit_class"))


def lots_of(
    session: Session,
    account: BankAccount,
    *,
    credit_class: str | None = None,
    now: datetime | None = None,
) -> list[LotBalance]:
    """The account's lots, oldest first, with balances read without a lock (a draw locks those
    it takes: ``bank.lot_picking``)."""
    rows = lot_rows(session, account, credit_class)
    ids = [lot.ledger_account_id for lot, _ in rows]
    return with_balances(account, rows, ledger.balances(session, ids, now))


def lot_page(
    session: Session, account: BankAccount, limit: int, after: str | None = None
) -> list[LotBalance]:
    """Up to ``limit + 1`` of ``lots_of``'s lots (the extra one says there are more), after the
    lot ``after`` in their order (``LOT_ORDER``; an index holds it, and ``keyset.after_row``
    compares it as one row, so on PostgreSQL a later page reads no more rows than the first,
    among lots made at one instant too).  The cursor's lot is looked up among the account's own:
    another account's gives an empty page."""
    query = _LOTS.limit(limit + 1)
    if after is not None:
        scope = Lot.account_id == account.id
        query = query.where(keyset.after_row(LOT_ORDER, Lot.id, after, scope))
    rows = [
        (lot, bool(site_frozen))
        for lot, site_frozen in session.execute(query, {"account_id": account.id})
    ]
    ids = [lot.ledger_account_id for lot, _ in rows]
    return with_balances(account, rows, ledger.balances(session, ids))


def lot_rows(
    session: Session, account: BankAccount, credit_class: str | None = None
) -> list[tuple[Lot, bool]]:
    """The account's lots (of ``credit_class``), oldest first, each with its site's frozen flag."""
    if credit_class is None:
        rows = session.execute(_LOTS, {"account_id": account.id}).all()
    else:
        rows = session.execute(
            LOTS_OF_CLASS, {"account_id": account.id, "credit_class": credit_class}
        ).all()
    return [(lot, bool(site_frozen)) for lot, site_frozen in rows]


def with_balances(
    account: BankAccount, rows: list[tuple[Lot, bool]], balances: dict[int, ledger.Balance]
) -> list[LotBalance]:
    """``lot_rows`` with their ledger balances; frozen if the account or the site is."""
    account_frozen = account.status == "frozen"
    return [
        LotBalance(
            lot,
            balances[lot.ledger_account_id].posted,
            balances[lot.ledger_account_id].reserved_debits,
            account_frozen or site_frozen,
        )
        for lot, site_frozen in rows
    ]


@dataclass(frozen=True)
class LotView:
    """A lot as ``GET /accounts/{id}/lots`` shows it: its provenance and what it holds now."""

    id: str
    label: str
    credit_class: str
    bank_site_id: str
    deposit_id: str
    parent_lot_id: str | None
    federally_approved: bool
    posted_sqft: int
    reserved_sqft: int
    frozen: bool
    available_sqft: int

    @classmethod
    def of(cls, item: LotBalance) -> LotView:
        lot = item.lot
        return cls(
            id=lot.id,
            label=lot.label,
            credit_class=lot.credit_class,
            bank_site_id=lot.bank_site_id,
            deposit_id=lot.deposit_id,
            parent_lot_id=lot.parent_lot_id,
            federally_approved=lot.federally_approved,
            posted_sqft=item.posted_sqft,
            reserved_sqft=item.reserved_sqft,
            frozen=item.frozen,
            available_sqft=item.available_sqft,
        )
