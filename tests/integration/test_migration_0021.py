"""Migration 0021 on both databases: ``wetbank db upgrade`` adds the one-live-appeal-payment index
to a database at 0020 holding appeals paid, refunded, paid again and returned, and keeps every
row; down to 0020 the index is gone; stored rows already holding two live payments of one kind for
one appeal stop the upgrade, named."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from alembic import command
from click.testing import CliRunner
from flask import Flask
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.exc import IntegrityError

from api import create_app
from api.cli import main
from api.schema_check import alembic_config
from ledger import Database, verify
from ledger.sealer import seal_all
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit, ok, on
from tests.api.test_money import (
    FEE,
    SECURITY_CAP,
    appealed,
    decide_petition,
    pay,
    write_live_copy,
)

INDEX = "uq_payments_live_appeal_kind"


@dataclass
class Paid:
    """Two appeals' payments: the first's fee live, its security refunded and paid again; the
    second's fee live and its security returned when the petition was granted."""

    fee: str
    refunded: str
    again: str
    granted_appeal: str


def _book(app: Flask) -> Paid:
    kit = Kit(Api(app.test_client(), make_token(app, "board")), app)
    lgu = kit.lgu()
    _plan, appeal = appealed(kit, lgu, security=SECURITY_CAP)
    fee = ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=appeal["id"]))
    security = ok(
        pay(kit.api, "appeal_security", SECURITY_CAP, "2026-09-11", appeal_id=appeal["id"])
    )
    with on("2026-09-12"):
        ok(kit.api.post(f"/payments/{security['id']}/refund"))
    again = ok(pay(kit.api, "appeal_security", SECURITY_CAP, "2026-09-12", appeal_id=appeal["id"]))
    _plan, granted = appealed(kit, lgu, security=SECURITY_CAP)
    ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=granted["id"]))
    ok(pay(kit.api, "appeal_security", SECURITY_CAP, "2026-09-11", appeal_id=granted["id"]))
    decide_petition(kit, granted, "2026-09-15", granted=True)
    return Paid(fee["id"], security["id"], again["id"], granted["id"])


def _payments(url: str) -> list[tuple[str, str, str | None, str]]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                text("SELECT id, kind, appeal_id, status FROM payments ORDER BY id")
            )
            return [(str(i), str(k), a, str(s)) for i, k, a, s in rows]
    finally:
        engine.dispose()


def _indexes(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        return {str(index["name"]) for index in inspect(engine).get_indexes("payments")}
    finally:
        engine.dispose()


def _version(url: str) -> str:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return str(connection.execute(text("SELECT version_num FROM alembic_version")).scalar())
    finally:
        engine.dispose()


def _app(url: str) -> Flask:
    return create_app({"DATABASE_URL": url, "PROPAGATE_EXCEPTIONS": False})


@pytest.fixture
def paid_at_0020(fresh_db_url: str) -> Iterator[tuple[str, Paid]]:
    """A database at 0020 holding the payments of ``Paid`` (booked through the API at head)."""
    app = _app(fresh_db_url)
    try:
        paid = _book(app)
        seal_all(app.extensions["wetbank.db"])
    finally:
        app.extensions["wetbank.db"].dispose()
    command.downgrade(alembic_config(fresh_db_url), "0020")
    yield fresh_db_url, paid


def test_0021_indexes_a_database_holding_paid_refunded_and_returned_appeal_payments(
    paid_at_0020: tuple[str, Paid],
) -> None:
    url, paid = paid_at_0020
    assert INDEX not in _indexes(url)
    before = _payments(url)
    statuses = {(payment_id, appeal): status for payment_id, _kind, appeal, status in before}
    assert {
        payment_id: status
        for (payment_id, _), status in statuses.items()
        if payment_id in (paid.fee, paid.refunded, paid.again)
    } == {paid.fee: "received", paid.refunded: "refunded", paid.again: "received"}
    returned = [s for (_, appeal), s in statuses.items() if appeal == paid.granted_appeal]
    assert sorted(returned) == ["received", "returned"]
    upgraded = CliRunner().invoke(main, ["db", "upgrade"], env={"DATABASE_URL": url})
    assert upgraded.exit_code == 0, upgraded.output
    assert _payments(url) == before
    assert INDEX in _indexes(url)
    db = Database.from_url(url)
    try:
        with db.engine.connect() as connection:
            assert verify(connection).ok
    finally:
        db.dispose()
    app = _app(url)
    try:
        for live in (paid.fee, paid.again):
            with pytest.raises(IntegrityError):
                write_live_copy(app, live)
        assert _payments(url) == before
    finally:
        app.extensions["wetbank.db"].dispose()
    command.downgrade(alembic_config(url), "0020")
    assert INDEX not in _indexes(url)
    assert _payments(url) == before


def test_0021_refuses_a_database_already_holding_two_live_payments_of_one_kind(
    paid_at_0020: tuple[str, Paid],
) -> None:
    """Before 0021 only the bank's check kept a second live security out; one written past it
    stops the upgrade, naming the appeal and kind, and the database stays at 0020."""
    url, paid = paid_at_0020
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO payments (id, kind, amount_cents, payer, received_on, plan_id, "
                    "appeal_id, lgu_id, transaction_id, status, ruleset, created_at, actor) "
                    "SELECT 'pay_second', kind, amount_cents, payer, received_on, plan_id, "
                    "appeal_id, lgu_id, transaction_id, 'received', ruleset, created_at, actor "
                    "FROM payments WHERE id = :id"
                ),
                {"id": paid.again},
            )
            appeal_id = connection.execute(
                text("SELECT appeal_id FROM payments WHERE id = :id"), {"id": paid.again}
            ).scalar_one()
    finally:
        engine.dispose()
    named = f"appeal {appeal_id} has more than one appeal_security payment"
    with pytest.raises(RuntimeError, match=named):
        command.upgrade(alembic_config(url), "head")
    assert _version(url) == "0020"
    assert INDEX not in _indexes(url)
