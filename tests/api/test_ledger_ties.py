"""A payment's status and reversal reason, a security's release and what each draw holds again
are checked by verify's full pass against the records in the hash chain that give them (SQLite
and PostgreSQL).

The database refuses such values as they are written (migrations 0026, 0027), but only by
triggers: someone with database access who turns them off can write any value, and rewrite the
row's seals with it (a value sealed once set, such as a reason or a release, is otherwise named
by its seal).  Refunds, returns, a fee's reversal, releases and partial and full draws made
through the API verify; each value edited so is named by ``GET /audit/verify`` and
``wetbank audit verify`` (``sealed_row_changed``, the table, the row and the column).  A draw
whose transfer holds again more or less than was left of its security (the bank's own writing
gone wrong) is named too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from bank import guarantees
from bank.registry import SEALED_TABLES
from ledger import row_seals
from tests.api.kit import Kit, engine_of, ok, on, sql_rows, verified
from tests.api.set_once_kit import behind_the_triggers, set_once_bank
from tests.api.test_audit import run_verify_command
from tests.api.test_money import (
    FEE,
    SECURITY_CAP,
    appealed,
    approved,
    decide_petition,
    draw,
    hold,
    pay,
    project_plan,
    release,
    reverse,
)

DRAWN, DRAWN_AGAIN, RELEASED = "2026-07-07", "2026-07-08", "2026-07-09"
PAID, REVERSED, GRANTED = "2026-09-11", "2026-09-12", "2026-09-21"
#: the reason migration 0011 gave a security drawn in part before it, released with that draw
LEGACY_RELEASE = "the rest was released when it was drawn in part"


@dataclass
class Acts:
    """The rows of ``acts``: payments refunded, returned, reversed and live; securities released
    after a draw, drawn in part twice (held), drawn in full in two draws, and never drawn."""

    refunded: str
    returned: str
    reversed: str
    live: str
    released: str
    held: str
    drawn: str
    untouched: str


def acts(kit: Kit) -> Acts:
    """Each act that sets a tied value, through the API: a refund, a return of appeal security
    on a grant, a filing fee's reversal with its reason, a release after a draw, partial draws
    and a security drawn in full."""
    lgu = kit.lgu()
    token = lgu["token"]
    securities_plan = project_plan(kit, lgu)
    released, held, drawn, untouched = (ok(hold(kit, securities_plan, token=token)) for _ in "1234")
    ok(draw(kit, released, DRAWN, 1_000_000, token=token))
    ok(release(kit, released, RELEASED, token=token))
    for security in (held, drawn):
        ok(draw(kit, security, DRAWN, 1_000_000, token=token))
    ok(draw(kit, held, DRAWN_AGAIN, 600_000, token=token))
    ok(draw(kit, drawn, DRAWN_AGAIN, 1_500_000, token=token))
    fee_plan = approved(kit, lgu, "2026-09-01")
    refunded, live = (
        ok(pay(kit.api, "processing_fee", 2_500, PAID, plan_id=fee_plan["id"])) for _ in "12"
    )
    with on(PAID):
        ok(kit.api.post(f"/payments/{refunded['id']}/refund"))
    _plan, appeal = appealed(kit, lgu, security=SECURITY_CAP)
    ok(pay(kit.api, "appeal_filing_fee", FEE, PAID, appeal_id=appeal["id"]))
    returned = ok(pay(kit.api, "appeal_security", SECURITY_CAP, PAID, appeal_id=appeal["id"]))
    _plan, wrong = appealed(kit, lgu)
    fee = ok(pay(kit.api, "appeal_filing_fee", FEE, PAID, appeal_id=wrong["id"]))
    ok(reverse(kit.api, fee["id"], REVERSED), 201)
    decide_petition(kit, appeal, GRANTED, granted=True)  # returns the security
    return Acts(
        refunded=refunded["id"],
        returned=returned["id"],
        reversed=fee["id"],
        live=live["id"],
        released=released["id"],
        held=held["id"],
        drawn=drawn["id"],
        untouched=untouched["id"],
    )


def test_refunds_returns_reversals_releases_and_draws_verify(fresh, fresh_db_url):
    ids = acts(fresh)
    with on(GRANTED):
        statuses = {
            name: ok(fresh.api.get(f"/payments/{getattr(ids, name)}"), 200)["status"]
            for name in ("refunded", "returned", "reversed", "live")
        }
        shown = {
            name: ok(fresh.api.get(f"/securities/{getattr(ids, name)}"), 200)
            for name in ("released", "held", "drawn", "untouched")
        }
    assert statuses == {
        "refunded": "refunded",
        "returned": "returned",
        "reversed": "reversed",
        "live": "received",
    }
    assert {name: s["status"] for name, s in shown.items()} == {
        "released": "released",
        "held": "held",
        "drawn": "drawn",
        "untouched": "held",
    }
    assert (shown["held"]["drawn_cents"], shown["held"]["undrawn_cents"]) == (1_600_000, 900_000)
    assert verified(fresh)["ok"] is True
    assert run_verify_command(fresh_db_url).exit_code == 0


def rewritten(kit: Kit, table_name: str, row_id: str, change: str, **params: Any) -> None:
    """``UPDATE table SET change`` on one row with every trigger off, and the row's seals (its
    own and its set-once columns') written again to agree with it, as someone with database
    access could: only what gives the value in the hash chain still disagrees."""
    engine = engine_of(kit)
    statement = f"UPDATE {table_name} SET {change} WHERE id = :id"
    behind_the_triggers(engine, table_name, statement, id=row_id, **params)
    (table,) = (t for t in SEALED_TABLES if t.name == table_name)
    names = [table.name, *(row_seals.once_seal_name(table.name, c) for c in table.set_once)]
    listed = ", ".join(f"'{name}'" for name in names)
    behind_the_triggers(
        engine,
        "ledger_row_seals",
        f"DELETE FROM ledger_row_seals WHERE row_id = :id AND table_name IN ({listed})",
        id=row_id,
    )
    with engine.begin() as connection:
        row_seals.seal_existing(connection, table)


def _named(kit: Kit, url: str, table: str, row_id: str, column: str, given_by: str) -> None:
    broken = verified(kit)["first_broken"]
    assert (broken["kind"], broken["table"], broken["row_id"]) == (
        "sealed_row_changed",
        table,
        row_id,
    )
    assert broken["detail"] == f"{table} row {row_id}: its {column} is not {given_by}"
    command = run_verify_command(url)
    assert command.exit_code == 1, command.output
    assert row_id in command.output and f"its {column} is not" in command.output, command.output


STATUS = "its compensation's kind (received with none, else payment_<status>)"
REASON = "the reason its reversal's memo gives (none unless reversed)"
COMPENSATION = "the transaction reversing its own (none while nothing has)"
RELEASED_ON = "its release transaction's effective date (none while it has none)"
RELEASE_REASON = "its release transaction's memo (none while it has none)"

#: (case id, table, the ``Acts`` row, the SET clause, the column named, what gives it)
EDITS = [
    ("refund-made-return", "payments", "refunded", "status = 'returned'", "status", STATUS),
    ("refund-made-live", "payments", "refunded", "status = 'received'", "status", STATUS),
    ("return-made-refund", "payments", "returned", "status = 'refunded'", "status", STATUS),
    ("reversal-made-live", "payments", "reversed", "status = 'received'", "status", STATUS),
    ("live-made-refund", "payments", "live", "status = 'refunded'", "status", STATUS),
    (
        "reason-edited",
        "payments",
        "reversed",
        "reversal_reason = 'typed at a SQL prompt'",
        "reversal_reason",
        REASON,
    ),
    ("reason-cleared", "payments", "reversed", "reversal_reason = NULL", "reversal_reason", REASON),
    (
        "reason-on-a-refund",
        "payments",
        "refunded",
        "reversal_reason = 'x'",
        "reversal_reason",
        REASON,
    ),
    (
        "compensation-cleared",
        "payments",
        "refunded",
        "compensation_transaction_id = NULL, status = 'received'",
        "compensation_transaction_id",
        COMPENSATION,
    ),
    (
        "release-date-edited",
        "securities",
        "released",
        "released_on = '2026-07-10'",
        "released_on",
        RELEASED_ON,
    ),
    (
        "release-reason-edited",
        "securities",
        "released",
        "release_reason = 'expired'",
        "release_reason",
        RELEASE_REASON,
    ),
    (
        "release-cleared",
        "securities",
        "released",
        "released_on = NULL, release_reason = NULL",
        "released_on",
        RELEASED_ON,
    ),
    (
        "release-typed",
        "securities",
        "untouched",
        f"released_on = '{RELEASED}', release_reason = 'replaced'",
        "released_on",
        RELEASED_ON,
    ),
    (
        "0011s-release-typed",
        "securities",
        "held",
        f"released_on = drawn_on, release_reason = '{LEGACY_RELEASE}'",
        "released_on",
        RELEASED_ON,
    ),
]


@pytest.mark.parametrize(
    ("table", "row", "change", "column", "given_by"),
    [e[1:] for e in EDITS],
    ids=[e[0] for e in EDITS],
)
def test_a_tied_value_rewritten_behind_the_triggers_fails_verify(
    fresh, fresh_db_url, table, row, change, column, given_by
):
    ids = acts(fresh)
    row_id = getattr(ids, row)
    columns = [part.split(" =")[0].strip() for part in change.split(", ")]
    (was,) = sql_rows(fresh, f"SELECT {', '.join(columns)} FROM {table} WHERE id = :id", id=row_id)
    rewritten(fresh, table, row_id, change)
    _named(fresh, fresh_db_url, table, row_id, column, given_by)
    restore = ", ".join(f"{c} = :v{i}" for i, c in enumerate(columns))
    values = {f"v{i}": value for i, value in enumerate(was)}
    rewritten(fresh, table, row_id, restore, **values)
    assert verified(fresh)["ok"] is True


HELD_AGAIN = (
    "a transfer holding what was left of its security (its amount less its draws up to this "
    "one; none when nothing was left)"
)


@pytest.mark.parametrize("held", [-1, +1, None], ids=["less", "more", "nothing"])
def test_a_draw_holding_again_other_than_what_was_left_fails_verify(
    fresh, fresh_db_url, monkeypatch, held
):
    """The rest a draw holds again is the security's amount less its draws so far: a transfer
    holding a cent less or more, or none while some is left, is named, though the draw is the
    one its transaction drew and the rest's transfer the one keyed to it."""
    ids = acts(fresh)
    assert verified(fresh)["ok"] is True
    hold_again = guarantees._hold_again

    def miscounted(*args: Any) -> int | None:
        *rest, amount, request_id = args
        if held is None:
            return None
        return hold_again(*rest, amount + held, request_id)

    monkeypatch.setattr(guarantees, "_hold_again", miscounted)
    security = {"id": ids.untouched}
    ok(draw(fresh, security, DRAWN, 1_000_000))
    (draw_id,) = sql_rows(
        fresh, "SELECT id FROM security_draws WHERE security_id = :s", s=ids.untouched
    )[0]
    _named(fresh, fresh_db_url, "security_draws", draw_id, "held_transaction_id", HELD_AGAIN)


@pytest.mark.parametrize("which", ["cleared", "typed"])
def test_a_withdrawals_reversal_rewritten_with_its_seal_fails_verify(fresh, fresh_db_url, which):
    """A withdrawal's ``reversal_transaction_id`` is the transaction reversing its own (on
    appeal), none while nothing has: cleared on a reversed withdrawal, or given to a standing one,
    with its seal rewritten alike, it is named."""
    bank = set_once_bank(fresh)
    assert verified(fresh)["ok"] is True
    (reversal,) = sql_rows(
        fresh,
        "SELECT reversal_transaction_id FROM withdrawals WHERE id = :id",
        id=bank.reversed_withdrawal,
    )
    row_id, change = {
        "cleared": (bank.reversed_withdrawal, "reversal_transaction_id = NULL"),
        "typed": (bank.standing_withdrawal, f"reversal_transaction_id = {int(reversal[0])}"),
    }[which]
    rewritten(fresh, "withdrawals", row_id, change)
    _named(fresh, fresh_db_url, "withdrawals", row_id, "reversal_transaction_id", COMPENSATION)
