"""A payment's amount is what its own transaction moved, and a security's what its own pending
transfer held: verify's full pass ties each to the hash chain (SQLite and PostgreSQL).

A payment is booked as one transaction keyed ``payment:<id>`` moving its amount
(``bank.money.receive_payment``); a security is a pending transfer keyed ``security:<id>``
holding its amount (``bank.securities.hold_security``).  Both amounts are sealed, so an edit made
behind the triggers is named by the seal; but someone with database access who rewrites the
row's seal alike is caught only by the hash chain.  Payments refunded, returned and reversed,
and securities drawn in part, drawn in full and released, made through the API, verify; an
amount rewritten with its seal, or moved together with its transaction to another record's, is
named by ``GET /audit/verify`` and ``wetbank audit verify`` (``sealed_row_changed``, the table,
the row and the column).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.kit import Kit, ok, on, sql_rows, verified
from tests.api.test_audit import run_verify_command
from tests.api.test_ledger_ties import GRANTED, PAID, acts, rewritten
from tests.api.test_money import approved, hold, pay, project_plan

PAYMENT = "what its own transaction (keyed payment:<its id>) posted"
SECURITY = "what its own pending transfer (keyed security:<its id>) held"


def _named(kit: Kit, url: str, table: str, row_id: str, given_by: str) -> None:
    """Verify's full pass, by the API and the command, names ``table``'s row ``row_id``: its
    ``amount_cents`` is not ``given_by``."""
    broken = verified(kit)["first_broken"]
    assert (broken["kind"], broken["table"], broken["row_id"]) == (
        "sealed_row_changed",
        table,
        row_id,
    )
    assert broken["detail"] == f"{table} row {row_id}: its amount_cents is not {given_by}"
    command = run_verify_command(url)
    assert command.exit_code == 1, command.output
    assert row_id in command.output and "its amount_cents is not" in command.output, command.output


def test_payments_and_securities_through_their_histories_verify(fresh, fresh_db_url):
    """Refunded, returned, reversed and live payments; securities drawn in part twice, drawn in
    full, released after a draw and never drawn: each amount is what its own transaction moved
    or held, and the full pass says ok."""
    ids = acts(fresh)
    with on(GRANTED):
        payments = {
            name: ok(fresh.api.get(f"/payments/{getattr(ids, name)}"), 200)
            for name in ("refunded", "returned", "reversed", "live")
        }
        securities = {
            name: ok(fresh.api.get(f"/securities/{getattr(ids, name)}"), 200)
            for name in ("released", "held", "drawn", "untouched")
        }
    assert {name: p["status"] for name, p in payments.items()} == {
        "refunded": "refunded",
        "returned": "returned",
        "reversed": "reversed",
        "live": "received",
    }
    assert {name: s["status"] for name, s in securities.items()} == {
        "released": "released",
        "held": "held",
        "drawn": "drawn",
        "untouched": "held",
    }
    assert {s["amount_cents"] for s in securities.values()} == {2_500_000}
    report = verified(fresh)
    assert report["ok"] is True, report
    assert run_verify_command(fresh_db_url).exit_code == 0


#: (case id, table, the ``Acts`` row, the SET clause, what gives the amount)
EDITS = [
    ("live-payment", "payments", "live", "amount_cents = amount_cents + 1", PAYMENT),
    ("refunded-payment", "payments", "refunded", "amount_cents = amount_cents - 1", PAYMENT),
    ("reversed-fee", "payments", "reversed", "amount_cents = 1", PAYMENT),
    ("returned-security-payment", "payments", "returned", "amount_cents = 100000", PAYMENT),
    ("untouched-security", "securities", "untouched", "amount_cents = amount_cents + 1", SECURITY),
    ("drawn-in-part", "securities", "held", "amount_cents = amount_cents - 1", SECURITY),
    ("drawn-in-full", "securities", "drawn", "amount_cents = amount_cents + 100", SECURITY),
    ("released", "securities", "released", "amount_cents = amount_cents * 2", SECURITY),
]


@pytest.mark.parametrize(
    ("table", "row", "change", "given_by"),
    [e[1:] for e in EDITS],
    ids=[e[0] for e in EDITS],
)
def test_an_amount_rewritten_with_its_seal_fails_verify_naming_it(
    fresh, fresh_db_url, table, row, change, given_by
):
    ids = acts(fresh)
    row_id = getattr(ids, row)
    ((was,),) = sql_rows(fresh, f"SELECT amount_cents FROM {table} WHERE id = :id", id=row_id)
    rewritten(fresh, table, row_id, change)
    _named(fresh, fresh_db_url, table, row_id, given_by)
    rewritten(fresh, table, row_id, "amount_cents = :was", was=was)
    assert verified(fresh)["ok"] is True


def _other(kit: Kit, table: str) -> dict[str, Any]:
    """Another live processing fee ($30), or another security ($30,000), of a plan of its own:
    a record whose transaction moved another amount."""
    lgu = kit.lgu()
    if table == "payments":
        plan = approved(kit, lgu, "2026-09-01")
        return dict(ok(pay(kit.api, "processing_fee", 3_000, PAID, plan_id=plan["id"])))
    return dict(ok(hold(kit, project_plan(kit, lgu), token=lgu["token"], amount=3_000_000)))


@pytest.mark.parametrize(
    ("table", "row", "link", "given_by"),
    [
        ("payments", "live", "transaction_id", PAYMENT),
        ("securities", "untouched", "pending_transaction_id", SECURITY),
    ],
    ids=["payment", "security"],
)
def test_an_amount_moved_with_another_records_transaction_fails_verify(
    fresh, fresh_db_url, table, row, link, given_by
):
    """A payment given another payment's transaction and amount (or a security another
    security's pending transfer and amount), with its seal rewritten alike: the amount is what
    that transaction moved, but the transaction is not the record's own (its key names the other
    record), so the amount is named."""
    ids = acts(fresh)
    row_id = getattr(ids, row)
    other = _other(fresh, table)
    ((theirs, amount),) = sql_rows(
        fresh, f"SELECT {link}, amount_cents FROM {table} WHERE id = :id", id=other["id"]
    )
    ((mine, was),) = sql_rows(
        fresh, f"SELECT {link}, amount_cents FROM {table} WHERE id = :id", id=row_id
    )
    assert was != amount
    change = f"{link} = :tx, amount_cents = :amount"
    rewritten(fresh, table, row_id, change, tx=int(theirs), amount=amount)
    _named(fresh, fresh_db_url, table, row_id, given_by)
    rewritten(fresh, table, row_id, change, tx=int(mine), amount=was)
    assert verified(fresh)["ok"] is True
