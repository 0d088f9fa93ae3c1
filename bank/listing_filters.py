"""The conditions of the listings' filters (docs/http.md "Lists"), as SQL: plans by applicant or
project text and by date received, payments and securities by plan, and any of them by an
integrator's reference (``bank.external_refs``)."""

from __future__ import annotations

from datetime import date
from typing import Any

from sqlalchemy import ColumnElement, or_

from bank import external_refs
from bank.money_tables import Payment, Security
from bank.plan_tables import Plan

Ref = tuple[str, str]


def plans(
    q: str | None = None,
    received_from: date | None = None,
    received_to: date | None = None,
    ref: Ref | None = None,
) -> list[ColumnElement[bool]]:
    """``q``: text the applicant or the project contains, in any case (``%`` and ``_`` are
    plain characters); ``received_from``..``received_to``: the date the application was
    received (its current one, Subd. 6 (c)), both included."""
    where: list[ColumnElement[bool]] = []
    if q:
        where.append(
            or_(
                Plan.applicant.icontains(q, autoescape=True),
                Plan.project.icontains(q, autoescape=True),
            )
        )
    if received_from is not None:
        where.append(Plan.received_on >= received_from)
    if received_to is not None:
        where.append(Plan.received_on <= received_to)
    where.extend(_by_ref(Plan.external_refs, ref))
    return where


def payments(status: str | None = None, ref: Ref | None = None) -> list[ColumnElement[bool]]:
    """Payments in one status (``None``: any), or by an integrator's reference."""
    return _equal(Payment.status, status) + _by_ref(Payment.external_refs, ref)


def securities(ref: Ref | None = None) -> list[ColumnElement[bool]]:
    """Securities by an integrator's reference (one plan's: ``securities.list_securities``'s
    ``plan_id``, which checks the caller sees the plan)."""
    return _by_ref(Security.external_refs, ref)


def _equal(column: Any, value: str | None) -> list[ColumnElement[bool]]:
    return [] if value is None else [column == value]


def _by_ref(column: Any, ref: Ref | None) -> list[ColumnElement[bool]]:
    return [] if ref is None else [external_refs.matching(column, *ref)]
