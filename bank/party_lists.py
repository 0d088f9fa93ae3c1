"""The board's lists of holders, LGUs and bank sites: filtered, in pages by id (keyset).

A page goes on after the id ``after`` in id order; an ``after`` naming no row of the list,
whatever the filters, is ``UnknownCursor`` (docs/http.md "Lists, cursors and CSV")."""

from __future__ import annotations

from typing import TypeVar

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from bank import keyset, policy
from bank.access import Actor
from bank.party_tables import BankSite, Holder, Lgu
from bank.rules.ruleset import Ruleset
from bank.site_register import SiteView, site_view
from ledger.db import Database

Named = TypeVar("Named", Holder, Lgu, BankSite)


def _page(
    session: Session,
    model: type[Named],
    q: str | None,
    after: str | None,
    limit: int,
    *where: ColumnElement[bool],
) -> list[Named]:
    """Up to ``limit + 1`` rows of ``model`` after the id ``after``, whose name contains ``q``
    (any case, as every list's ``q``: ``icontains``, whose ``lower`` folds every script on SQLite
    too, ``ledger.store.sqlite``; ``%`` and ``_`` are plain text)."""
    query = select(model).where(*where).order_by(model.id).limit(limit + 1)
    if q:
        query = query.where(model.name.icontains(q, autoescape=True))
    if after is not None:
        keyset.require_listed(session, model.id, after)
        query = query.where(model.id > after)
    return list(session.execute(query).scalars())


def holders(
    db: Database,
    actor: Actor,
    q: str | None,
    after: str | None,
    limit: int,
) -> list[Holder]:
    """Holders whose name contains ``q`` (board)."""
    policy.require_board(actor, "list holders")
    with db.transaction() as session:
        return _page(session, Holder, q, after, limit)


def lgus(
    db: Database,
    actor: Actor,
    q: str | None,
    after: str | None,
    limit: int,
) -> list[Lgu]:
    """LGUs whose name contains ``q`` (board)."""
    policy.require_board(actor, "list LGUs")
    with db.transaction() as session:
        return _page(session, Lgu, q, after, limit)


def sites(
    db: Database,
    actor: Actor,
    q: str | None,
    after: str | None,
    limit: int,
    *,
    ruleset: Ruleset,
    holder_id: str | None = None,
    service_area: int | None = None,
) -> list[SiteView]:
    """Bank sites whose name contains ``q`` (board), of one holder and in one service area if
    given, each with its credit register."""
    policy.require_board(actor, "list bank sites")
    where = []
    if holder_id is not None:
        where.append(BankSite.holder_id == holder_id)
    if service_area is not None:
        where.append(BankSite.service_area == service_area)
    with db.transaction() as session:
        rows = _page(session, BankSite, q, after, limit, *where)
        return [site_view(session, ruleset, row) for row in rows]
