"""``GET /audit/verify`` and the audit page since the last full pass (docs/http.md "Audit
and reports"): the first answer runs the full pass and records its checkpoint; later ones check what
was written since and say when the last full pass ran; the page never runs a full pass over a
long chain.  ``wetbank audit verify`` always runs the full pass and records a checkpoint.

A chain under ``bank.audit.FULL_PASS_BELOW`` links is verified in full every time (so the tamper
tests of test_audit.py find edits of any row); the ``since`` fixture lowers it so that these
tests' short chains are checked since their checkpoint.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from sqlalchemy import text

from bank import audit as bank_audit
from ledger import sealer
from tests.api.kit import Kit, ok, on
from tests.api.set_once_kit import behind_the_triggers, set_once_bank
from tests.api.test_audit import D2, D4, all_transaction_ids, run_verify_command, tamper, workload
from tests.api.test_money import FEE, appealed, pay, reverse
from tests.api.test_registry_seals import _bypassing_triggers
from tests.api.web_kit import parse, signed_in


@pytest.fixture
def since(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every chain counts as long: ``GET /audit/verify`` checks since the checkpoint."""
    monkeypatch.setattr(bank_audit, "FULL_PASS_BELOW", 0)


def verify(kit: Kit) -> dict[str, Any]:
    with on(D4):
        return dict(ok(kit.api.get("/audit/verify"), 200))


def transfer(kit: Kit, work: Any, amount: int) -> dict[str, Any]:
    """A transfer from the workload's account a to c (a registry row and a transaction)."""
    body = {
        "from_account_id": work.a["id"],
        "to_account_id": work.c,
        "credit_class": work.a["unrestricted_class"],
        "amount_sqft": amount,
    }
    with on(D4):
        moved = dict(ok(kit.api.post("/transfers", body)))
    sealer.seal_all(kit.app.extensions["wetbank.db"])  # chained before any tampering
    return moved


def checkpoints(app: Flask) -> int:
    with app.extensions["wetbank.db"].engine.connect() as connection:
        return int(
            connection.execute(text("SELECT count(*) FROM ledger_verify_checkpoints")).scalar()
        )


def test_get_verify_runs_the_full_pass_first_then_checks_what_was_written_since(fresh, since):
    work = workload(fresh)
    first = verify(fresh)
    assert (first["ok"], first["mode"]) == (True, "full")
    everything = len(all_transaction_ids(fresh.app))
    assert first["transactions_checked"] == everything
    last = first["last_full_pass"]
    assert (last["seq"], last["transactions"]) == (everything, everything)
    assert last["at"].endswith("+00:00")
    quiet = verify(fresh)
    assert (quiet["ok"], quiet["mode"], quiet["transactions_checked"]) == (
        True,
        "since_checkpoint",
        0,
    )
    assert quiet["last_full_pass"] == last
    transfer(fresh, work, 100)
    transfer(fresh, work, 200)
    later = verify(fresh)
    assert (later["ok"], later["mode"], later["transactions_checked"]) == (
        True,
        "since_checkpoint",
        2,
    )
    assert later["last_full_pass"] == last and later["accounts_checked"] > 0
    assert checkpoints(fresh.app) == 1  # a check since a checkpoint records none


def test_a_short_chain_is_verified_in_full_every_time(fresh):
    workload(fresh)
    first, second = verify(fresh), verify(fresh)
    assert (first["mode"], second["mode"]) == ("full", "full")
    assert second["transactions_checked"] == first["transactions_checked"] > 0
    assert second["last_full_pass"]["at"] >= first["last_full_pass"]["at"]


def test_get_verify_since_the_checkpoint_catches_what_was_written_since_and_tampered(fresh, since):
    work = workload(fresh)
    assert verify(fresh)["mode"] == "full"
    moved = transfer(fresh, work, 300)
    tamper(
        fresh.app,
        "UPDATE ledger_entries SET amount = amount - 1 WHERE id = "
        "(SELECT min(id) FROM ledger_entries WHERE transaction_id = :t)",
        t=int(moved["transaction_id"]),
    )
    report = verify(fresh)
    assert (report["ok"], report["mode"]) == (False, "since_checkpoint")
    broken = report["first_broken"]
    assert (broken["kind"], str(broken["transaction_id"])) == (
        "hash_mismatch",
        moved["transaction_id"],
    )
    assert report["last_full_pass"]["seq"] < broken["seq"]


def test_a_stored_balance_untouched_since_the_checkpoint_and_edited_is_caught(fresh, since):
    work = workload(fresh)
    verify(fresh)
    tamper(
        fresh.app,
        "UPDATE ledger_balances SET debits_pending = debits_pending + 1 WHERE account_id = "
        "(SELECT ledger_account_id FROM lots WHERE account_id = :b LIMIT 1)",
        b=work.b["id"],
    )
    report = verify(fresh)
    assert (report["ok"], report["mode"]) == (False, "since_checkpoint")
    assert report["first_broken"]["kind"] == "stored_balance"


def test_a_registry_row_written_after_the_checkpoint_and_edited_is_caught(fresh, since):
    work = workload(fresh)
    verify(fresh)
    moved = transfer(fresh, work, 400)
    with fresh.app.extensions["wetbank.db"].engine.connect() as connection:
        row_id = connection.execute(
            text("SELECT id FROM transfers WHERE transaction_id = :t"),
            {"t": int(moved["transaction_id"])},
        ).scalar_one()
    _bypassing_triggers(
        fresh.app,
        "transfers",
        "UPDATE transfers SET amount_sqft = amount_sqft + 1 WHERE id = :id",
        id=row_id,
    )
    report = verify(fresh)
    assert (report["ok"], report["mode"]) == (False, "since_checkpoint")
    broken = report["first_broken"]
    assert (broken["kind"], broken["table"], broken["row_id"]) == (
        "sealed_row_changed",
        "transfers",
        str(row_id),
    )


def test_a_reversal_reason_set_after_the_checkpoint_and_edited_is_caught(fresh, since):
    """A fee booked before the checkpoint and reversed after it: the reason's seal is written
    since, so the check since the checkpoint compares it with the row, and names the payment."""
    _plan, appeal = appealed(fresh, fresh.lgu())
    fee = ok(pay(fresh.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=appeal["id"]))
    assert verify(fresh)["ok"] is True
    ok(reverse(fresh.api, fee["id"], "2026-09-12"), 201)
    _bypassing_triggers(
        fresh.app,
        "payments",
        "UPDATE payments SET reversal_reason = 'refunded at the petitioner''s request' "
        "WHERE id = :id",
        id=fee["id"],
    )
    report = verify(fresh)
    assert (report["ok"], report["mode"]) == (False, "since_checkpoint")
    broken = report["first_broken"]
    assert (broken["kind"], broken["table"], broken["row_id"]) == (
        "sealed_row_changed",
        "payments",
        fee["id"],
    )
    assert "reversal_reason" in broken["detail"]


@pytest.mark.parametrize(
    ("table", "row", "change"),
    [
        ("payments", "refunded", "compensation_transaction_id = transaction_id"),
        ("withdrawals", "reversed_withdrawal", "reversal_transaction_id = transaction_id"),
        ("securities", "released", "released_on = '2026-07-01'"),
        ("securities", "released", "release_reason = 'expired'"),
    ],
    ids=["compensation", "withdrawal-reversal", "release-date", "release-reason"],
)
def test_a_set_once_value_set_after_the_checkpoint_and_edited_is_caught(
    fresh, since, table, row, change
):
    """Rows written before the checkpoint, refunded, reversed on appeal or released after it:
    the value's seal is written since, so the check since the checkpoint compares it with the
    row, and names the row and the column."""
    checked: list[dict[str, Any]] = []
    ids = set_once_bank(fresh, between=lambda: checked.append(verify(fresh)))
    assert checked[0]["ok"] is True
    row_id = getattr(ids, row)
    column = change.split(" =")[0]
    engine = fresh.app.extensions["wetbank.db"].engine
    behind_the_triggers(engine, table, f"UPDATE {table} SET {change} WHERE id = :id", id=row_id)
    report = verify(fresh)
    assert (report["ok"], report["mode"]) == (False, "since_checkpoint")
    broken = report["first_broken"]
    assert (broken["kind"], broken["table"], broken["row_id"]) == (
        "sealed_row_changed",
        table,
        row_id,
    )
    assert column in broken["detail"]


def test_an_edit_before_the_checkpoint_is_left_to_the_full_pass(fresh, fresh_db_url, since):
    work = workload(fresh)
    verify(fresh)
    tamper(
        fresh.app,
        "UPDATE ledger_transactions SET memo = 'edited' WHERE id = :t",
        t=int(work.transfer),
    )
    with fresh.app.extensions["wetbank.db"].engine.connect() as connection:
        transfer_row = connection.execute(text("SELECT min(id) FROM transfers")).scalar_one()
    _bypassing_triggers(
        fresh.app,
        "transfers",
        "UPDATE transfers SET memo = 'edited too' WHERE id = :id",
        id=transfer_row,
    )
    assert verify(fresh)["ok"] is True  # by design: the checkpoint vouches for what it verified
    full = run_verify_command(fresh_db_url)
    assert full.exit_code == 1 and "hash_mismatch" in full.output, full.output
    assert work.transfer in full.output


def test_the_audit_verify_command_records_the_checkpoint_get_verify_starts_from(
    fresh, fresh_db_url, since
):
    work = workload(fresh)
    done = run_verify_command(fresh_db_url)
    assert done.exit_code == 0, done.output
    links = len(all_transaction_ids(fresh.app))
    assert f"checkpoint recorded at link {links}" in done.output
    with on(D2):
        transfer(fresh, work, 50)
    report = verify(fresh)
    assert (report["mode"], report["transactions_checked"]) == ("since_checkpoint", 1)
    assert report["last_full_pass"]["seq"] == links


def audit_page(kit: Kit) -> Any:
    client = signed_in(kit.app.test_client(), kit.api.token)
    with on(D4):
        response = client.get("/audit")
    assert response.status_code == 200
    return parse(response.get_data(as_text=True))


def test_the_audit_page_checks_since_the_last_full_pass_and_says_when_it_ran(fresh, since):
    work = workload(fresh)
    full = verify(fresh)
    transfer(fresh, work, 10)
    document = audit_page(fresh)
    result = document.one("p", id="verify-result")
    assert (result.attrs["data-ok"], result.attrs["data-mode"]) == ("true", "since_checkpoint")
    assert "1 transactions written since" in result.text
    last = document.one("p", id="last-full-pass")
    assert int(last.attrs["data-seq"]) == full["last_full_pass"]["seq"]
    assert "wetbank audit verify" in last.text
    head = document.one("p", id="chain-head")
    assert int(head.attrs["data-seq"]) == full["last_full_pass"]["seq"] + 1


def test_the_audit_page_runs_no_full_pass_over_a_long_chain(fresh, fresh_db_url, monkeypatch):
    workload(fresh)
    monkeypatch.setattr(bank_audit, "PAGE_FULL_PASS_UP_TO", 3)  # the workload is longer
    document = audit_page(fresh)
    result = document.one("p", id="verify-result")
    links = len(all_transaction_ids(fresh.app))
    assert (result.attrs["data-ok"], int(result.attrs["data-links"])) == ("unknown", links)
    assert "wetbank audit verify" in result.text
    assert checkpoints(fresh.app) == 0  # nothing ran
    assert run_verify_command(fresh_db_url).exit_code == 0
    monkeypatch.setattr(bank_audit, "FULL_PASS_BELOW", 0)
    after = audit_page(fresh).one("p", id="verify-result")
    assert (after.attrs["data-ok"], after.attrs["data-mode"]) == ("true", "since_checkpoint")
