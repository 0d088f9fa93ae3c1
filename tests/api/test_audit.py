"""docs/http.md "Audit and reports": the journal (pages, filters, CSV, streaming), the trial
balance, verification of the hash chain and the stored balances against tampering (API and the
``wetbank audit verify`` command), refused requests in the access trail, account statements and the
public credit availability report.

Tests that need the whole ledger to themselves (global totals, tampering) run on a private
database (``fresh_db_url``)."""

from __future__ import annotations

import csv
import io
import json
import threading
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.cli import ScriptInfo
from sqlalchemy import event, text
from sqlalchemy.orm import Session

import ledger
from api import cli as wetbank_cli
from bank import audit as bank_audit
from bank import tokens
from bank.access import SYSTEM
from ledger import verification
from ledger.db import Database
from ledger.ddl import drop_triggers
from tests.api.conftest import Api
from tests.api.kit import Kit, every_item, ok, on, problem

D1, D2, D3, D4 = "2026-05-04", "2026-05-06", "2026-05-08", "2026-05-11"
CSV = {"Accept": "text/csv"}


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


# --- a mixed workload --------------------------------------------------------------------------


@dataclass
class Workload:
    a: dict[
        str, Any
    ]  # 40,000 sq ft deposited on D1; 5,000 transferred to c on D2; 18,000 withdrawn
    b: dict[str, Any]  # 20,000 + 3,000 restricted deposited on D1; 1,000 reserved on D3
    c: str  # receives 5,000 on D2
    lgu: dict[str, str]
    plan: dict[str, Any]
    deposits: list[str]
    transfer: str
    withdrawal: str
    payments: list[str] = field(default_factory=list)


def workload(kit: Kit) -> Workload:
    """Deposits, a transfer, reservations, a withdrawal and payments, on four different days."""
    with on(D1):
        a = kit.funded_account(day=D1, service_area=5, unrestricted=40_000)
        b = kit.funded_account(day=D1, service_area=5, unrestricted=20_000, restricted=3_000)
        c = kit.account(a["holder"]["id"], 5)
    with on(D2):
        moved = ok(
            kit.api.post(
                "/transfers",
                {
                    "from_account_id": a["id"],
                    "to_account_id": c,
                    "credit_class": a["unrestricted_class"],
                    "amount_sqft": 5_000,
                },
            )
        )
    with on(D3):
        lgu = kit.lgu()
        plan = kit.approved_plan(lgu, D3, area_sqft=9_000)  # requires 18,000 sq ft
        held = kit.reserve(a["id"], plan["id"], a["unrestricted_class"], 18_000)
        kit.reserve(b["id"], plan["id"], b["unrestricted_class"], 1_000)
        withdrawal = ok(
            kit.api.post(
                f"/plans/{plan['id']}/withdrawals",
                {"reservation_ids": [held["id"]]},
                token=lgu["token"],
            )
        )
    work = Workload(
        a=a,
        b=b,
        c=c,
        lgu=lgu,
        plan=plan,
        deposits=[a["deposit"]["transaction_id"], b["deposit"]["transaction_id"]],
        transfer=moved["transaction_id"],
        withdrawal=withdrawal["transaction_id"],
    )
    with on(D4):
        work.payments.append(payment(kit, plan["id"], 10_000))
        body = {
            "kind": "letter_of_credit",
            "issuer": "First State Bank",
            "amount_cents": 90_000,
            "irrevocable": True,
            "issued_on": D4,
            "expires_on": "2027-05-11",
        }
        # a security guarantees a project-specific replacement (Subd. 3)
        own = kit.plan(lgu, received_on=D4, area_sqft=9_000, method="project_specific")
        work.payments.append(
            ok(kit.api.post(f"/plans/{own['id']}/securities", body))["transaction_id"]
        )
    return work


def payment(kit: Kit, plan_id: str, cents: int) -> str:
    """A processing fee received today; returns its transaction id."""
    body = {
        "kind": "processing_fee",
        "amount_cents": cents,
        "payer": "Applicant",
        "received_on": D4,
        "plan_id": plan_id,
    }
    return str(ok(kit.api.post("/payments", body))["transaction_id"])


def all_transaction_ids(app: Flask) -> list[str]:
    with app.extensions["wetbank.db"].engine.connect() as connection:
        rows = connection.execute(text("SELECT id FROM ledger_transactions ORDER BY id"))
        return [str(row[0]) for row in rows]


def journal(api: Api, **params: Any) -> list[dict[str, Any]]:
    """Every page of the journal."""
    items: list[dict[str, Any]] = []
    query = {"limit": 500, **params}
    while True:
        body = ok(api.get("/audit/journal", query_string=query), 200)
        items += body["items"]
        if not body["next_cursor"]:
            return items
        query["cursor"] = body["next_cursor"]


def csv_rows(response: Any) -> list[dict[str, str]]:
    assert response.status_code == 200, response.data[:500]
    assert response.mimetype == "text/csv"
    return list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))


# --- the journal -------------------------------------------------------------------------------


def test_journal_pages_hold_every_transaction_exactly_once_while_new_ones_arrive(fresh):
    work = workload(fresh)
    seen: list[str] = []
    seqs: list[int] = []
    query: dict[str, Any] = {"limit": 3}
    pages = 0
    written = []
    with on(D4):
        while True:
            body = ok(fresh.api.get("/audit/journal", query_string=query), 200)
            assert len(body["items"]) <= 3
            seen += [tx["transaction_id"] for tx in body["items"]]
            seqs += [tx["seq"] for tx in body["items"]]
            pages += 1
            if pages in (1, 2):  # new transactions land between page fetches
                written.append(payment(fresh, work.plan["id"], 100 * pages))
            if not body["next_cursor"]:
                break
            query["cursor"] = body["next_cursor"]
    assert pages > 3
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert Counter(seen) == Counter(all_transaction_ids(fresh.app))
    assert set(written) <= set(seen)
    for tx in [*work.deposits, work.transfer, work.withdrawal, *work.payments]:
        assert tx in seen


def test_a_client_tailing_the_journal_resumes_from_the_last_page_and_sees_later_ones(fresh):
    work = workload(fresh)
    query: dict[str, Any] = {"limit": 4}
    with on(D4):
        while True:
            last = ok(fresh.api.get("/audit/journal", query_string=query), 200)
            if not last["next_cursor"]:
                break
            assert last["resume_cursor"] == last["next_cursor"]
            query["cursor"] = last["next_cursor"]
        resume = last["resume_cursor"]
        quiet = ok(fresh.api.get("/audit/journal", query_string={"cursor": resume}), 200)
        assert quiet["items"] == [] and quiet["next_cursor"] is None
        assert quiet["resume_cursor"] == resume  # an empty page stays where it was
        written = payment(fresh, work.plan["id"], 100)
        tail = ok(fresh.api.get("/audit/journal", query_string={"cursor": resume}), 200)
    assert [tx["transaction_id"] for tx in tail["items"]] == [written]
    assert tail["next_cursor"] is None and tail["resume_cursor"] not in (None, resume)


def test_an_empty_journal_still_gives_a_cursor_to_resume_from(fresh):
    with on(D4):
        empty = ok(fresh.api.get("/audit/journal"), 200)
        assert empty["items"] == [] and empty["next_cursor"] is None
        work = workload(fresh)
        tail = ok(
            fresh.api.get("/audit/journal", query_string={"cursor": empty["resume_cursor"]}), 200
        )
    assert tail["items"] and work.transfer in [tx["transaction_id"] for tx in tail["items"]]


def test_the_journal_csv_holds_every_transaction_exactly_once(fresh):
    work = workload(fresh)
    with on(D4):
        pages = journal(fresh.api, limit=4)
        rows = csv_rows(fresh.api.get("/audit/journal", headers=CSV))
    ids = all_transaction_ids(fresh.app)
    assert Counter(row["transaction_id"] for row in rows) == Counter(ids)
    assert [row["transaction_id"] for row in rows] == [tx["transaction_id"] for tx in pages]
    assert list(rows[0]) == list(pages[0]) and "hash" in rows[0] and "prev_hash" in rows[0]
    by_id = {row["transaction_id"]: row for row in rows}
    deposit = by_id[work.deposits[0]]
    assert deposit["kind"] == "deposit"
    assert deposit["effective_on"] == D1
    entries = json.loads(deposit["entries"])
    assert sum(e["amount"] for e in entries) == 0 and len(entries) >= 2
    # the chain: each row's prev_hash is the hash of the row before it
    assert all(rows[i]["prev_hash"] == rows[i - 1]["hash"] for i in range(1, len(rows)))
    # ...and the CSV picks up a transaction written after a first export
    with on(D4):
        late = payment(fresh, work.plan["id"], 700)
        again = csv_rows(fresh.api.get("/audit/journal", headers=CSV))
    assert Counter(row["transaction_id"] for row in again) == Counter([*ids, late])


def test_a_journal_entry_shows_who_wrote_it_and_when(fresh):
    work = workload(fresh)
    with on(D4):
        (tx,) = [t for t in journal(fresh.api) if t["transaction_id"] == work.transfer]
    assert tx["kind"] == "transfer"
    assert tx["effective_on"] == D2
    assert tx["recorded_at"].startswith(D2)
    assert tx["actor"] and tx["idempotency_key"]
    assert len(tx["hash"]) == 64 and len(tx["prev_hash"]) == 64
    assert sorted(e["amount"] for e in tx["entries"]) == [-5_000, 5_000]


def test_the_journal_filters_by_kind_account_and_effective_dates(fresh):
    work = workload(fresh)
    with on(D4):
        everything = journal(fresh.api)
        deposits = journal(fresh.api, kind="deposit", limit=1)
        of_a = journal(fresh.api, account_id=work.a["id"])
        of_c = journal(fresh.api, account_id=work.c)
        middle = journal(fresh.api, **{"from": D2, "to": D3})
        since = journal(fresh.api, **{"from": D3})
        until = journal(fresh.api, to=D2)
        by_kind = {kind: journal(fresh.api, kind=kind) for kind in {t["kind"] for t in everything}}
        refused = fresh.api.get("/audit/journal?kind=no_such_kind")
        deposits_csv = csv_rows(fresh.api.get("/audit/journal?kind=deposit", headers=CSV))
        of_a_csv = csv_rows(
            fresh.api.get(f"/audit/journal?account_id={work.a['id']}&to={D2}", headers=CSV)
        )

    assert [t["transaction_id"] for t in deposits] == work.deposits
    assert {t["kind"] for t in deposits} == {"deposit"}

    kinds_of_a = Counter(t["kind"] for t in of_a)
    assert kinds_of_a == {"deposit": 1, "transfer": 1, "reservation": 1, "withdrawal": 1}
    ids_of_a = {t["transaction_id"] for t in of_a}
    assert {work.deposits[0], work.transfer, work.withdrawal} <= ids_of_a
    assert work.deposits[1] not in ids_of_a
    assert not ids_of_a & set(work.payments)
    assert [t["transaction_id"] for t in of_c] == [work.transfer]

    def dated(start: str | None, end: str | None) -> list[str]:
        return [
            t["transaction_id"]
            for t in everything
            if (start is None or t["effective_on"] >= start)
            and (end is None or t["effective_on"] <= end)
        ]

    assert [t["transaction_id"] for t in middle] == dated(D2, D3)
    assert {t["effective_on"] for t in middle} == {D2, D3}
    assert work.transfer in dated(D2, D3) and work.withdrawal in dated(D2, D3)
    assert not set(dated(D2, D3)) & {*work.deposits, *work.payments}
    assert [t["transaction_id"] for t in since] == dated(D3, None)
    assert [t["transaction_id"] for t in until] == dated(None, D2)
    # every kind the workload wrote filters to exactly its transactions; a kind no transaction
    # can have is refused, not answered with an empty journal
    assert set(by_kind) >= {"deposit", "transfer", "reservation", "withdrawal", "security_held"}
    for kind, found in by_kind.items():
        assert [t["transaction_id"] for t in found] == [
            t["transaction_id"] for t in everything if t["kind"] == kind
        ]
    assert list(problem(refused, 422, "validation_error")["errors"]) == ["kind"]
    # the CSV applies the same filters
    assert [r["transaction_id"] for r in deposits_csv] == work.deposits
    assert [r["transaction_id"] for r in of_a_csv] == [work.deposits[0], work.transfer]


@pytest.mark.parametrize("as_csv", [False, True])
def test_a_journal_period_that_ends_before_it_starts_is_refused(fresh, as_csv):
    """Swapped dates are 422 (the JSON and the CSV alike, before any row is written), as a
    statement's are, not an empty journal; a period of one day is read."""
    work = workload(fresh)
    headers = CSV if as_csv else {}
    with on(D4):
        refused = fresh.api.get(f"/audit/journal?from={D3}&to={D2}", headers=headers)
        one_day = fresh.api.get(f"/audit/journal?from={D2}&to={D2}", headers=headers)
    body = problem(refused, 422, "validation_error")
    assert body["errors"] == {"to": ["before from"]}
    assert one_day.status_code == 200
    if not as_csv:
        assert {t["effective_on"] for t in one_day.json["items"]} == {D2}
        assert work.transfer in {t["transaction_id"] for t in one_day.json["items"]}


def test_only_the_board_reads_the_journal(kit, holder, lgu):
    with on(D4):
        for token in (holder["token"], lgu["token"]):
            problem(kit.api.get("/audit/journal", token=token), 403, "forbidden")
            problem(kit.api.get("/audit/trial-balance", token=token), 403, "forbidden")
            problem(kit.api.get("/audit/verify", token=token), 403, "forbidden")
            problem(kit.api.get("/audit/events", token=token), 403, "forbidden")
        problem(kit.api.get("/audit/journal", token=""), 401, "unauthorized")


# --- trial balance -----------------------------------------------------------------------------


def test_the_trial_balance_is_balanced_after_a_mixed_workload(fresh):
    work = workload(fresh)
    with on(D4):
        now = ok(fresh.api.get("/audit/trial-balance"), 200)
        first_day = ok(fresh.api.get(f"/audit/trial-balance?as_of={D1}"), 200)
        second_day = ok(fresh.api.get(f"/audit/trial-balance?as_of={D2}"), 200)
        before = ok(fresh.api.get("/audit/trial-balance?as_of=2026-05-01"), 200)
    assert now["as_of"] == D4
    assert now["balanced"] is True
    rows = {row["asset"]: row for row in now["assets"]}
    unrestricted, restricted = work.a["unrestricted_class"], work.b["restricted_class"]
    assert {unrestricted, restricted, "USD"} <= set(rows)
    assert all(row["balanced"] and row["debits"] == row["credits"] for row in rows.values())
    # posted USD: the processing fee (a held security is pending, not posted)
    assert rows["USD"]["debits"] == 10_000
    # deposits 60,000 + transfer 5,000 + withdrawal 18,000 (the pending reservations are not posted)
    assert rows[unrestricted]["debits"] == 83_000
    assert rows[restricted]["debits"] == 3_000
    day1 = {row["asset"]: row for row in first_day["assets"]}
    assert day1[unrestricted]["debits"] == 60_000 and "USD" not in day1
    day2 = {row["asset"]: row for row in second_day["assets"]}
    assert day2[unrestricted]["debits"] == 65_000
    assert first_day["balanced"] and second_day["balanced"]
    assert before["balanced"] is True
    assert all(row["debits"] == 0 for row in before["assets"])


# --- verification and tampering ------------------------------------------------------------------


def tamper(app: Flask, *statements: str, **params: Any) -> None:
    """Raw SQL with the ledger's protective triggers dropped, as someone with database access."""
    with app.extensions["wetbank.db"].engine.begin() as connection:
        drop_triggers(connection)
        for statement in statements:
            connection.execute(text(statement), params)


def tamper_without_foreign_keys(app: Flask, *statements: str, **params: Any) -> None:
    """As ``tamper``, also skipping foreign keys (to delete a transaction other rows point at)."""
    db = app.extensions["wetbank.db"]
    if db.engine.dialect.name == "postgresql":
        with db.engine.begin() as connection:
            drop_triggers(connection)
            connection.execute(text("SET LOCAL session_replication_role = replica"))
            for statement in statements:
                connection.execute(text(statement), params)
        return
    with db.engine.connect() as connection:
        raw = connection.connection.driver_connection
        raw.execute("PRAGMA foreign_keys = OFF")  # a no-op inside a transaction: do it first
        try:
            with connection.begin():
                drop_triggers(connection)
                for statement in statements:
                    connection.execute(text(statement), params)
        finally:
            raw.execute("PRAGMA foreign_keys = ON")


def verify(kit: Kit) -> dict[str, Any]:
    with on(D4):
        return dict(ok(kit.api.get("/audit/verify"), 200))


def test_verify_passes_on_a_clean_ledger(fresh):
    workload(fresh)
    report = verify(fresh)
    assert report["ok"] is True
    assert report["first_broken"] is None
    assert report["transactions_checked"] == len(all_transaction_ids(fresh.app))


def test_verify_names_the_transaction_whose_entry_amount_was_edited(fresh):
    work = workload(fresh)
    assert verify(fresh)["ok"] is True  # everything is sealed into the chain
    tamper(
        fresh.app,
        "UPDATE ledger_entries SET amount = amount + 1 WHERE id = "
        "(SELECT min(id) FROM ledger_entries WHERE transaction_id = :t)",
        t=int(work.transfer),
    )
    report = verify(fresh)
    assert report["ok"] is False
    assert str(report["first_broken"]["transaction_id"]) == work.transfer


def test_verify_names_the_payment_whose_amounts_were_both_edited(fresh):
    work = workload(fresh)
    assert verify(fresh)["ok"] is True
    fee = work.payments[0]
    tamper(
        fresh.app,
        "UPDATE ledger_entries SET amount = amount * 2 WHERE transaction_id = :t",
        t=int(fee),
    )
    report = verify(fresh)
    assert report["ok"] is False
    assert str(report["first_broken"]["transaction_id"]) == fee


def test_verify_catches_an_edited_stored_balance(fresh):
    work = workload(fresh)
    assert verify(fresh)["ok"] is True
    lot_id = next(iter(fresh.lots_by_id(work.c)))
    tamper(
        fresh.app,
        "UPDATE ledger_balances SET credits_posted = credits_posted + 7 WHERE account_id = "
        "(SELECT ledger_account_id FROM lots WHERE id = :lot)",
        lot=lot_id,
    )
    report = verify(fresh)
    assert report["ok"] is False
    assert report["first_broken"]["kind"] == "stored_balance"
    with fresh.app.extensions["wetbank.db"].engine.connect() as connection:
        ledger_account = connection.execute(
            text("SELECT ledger_account_id FROM lots WHERE id = :lot"), {"lot": lot_id}
        ).scalar()
    assert report["first_broken"]["account_id"] == ledger_account


def test_verify_catches_a_transaction_deleted_with_its_chain_link(fresh):
    work = workload(fresh)
    assert verify(fresh)["ok"] is True
    tamper_without_foreign_keys(
        fresh.app,
        "DELETE FROM ledger_chain WHERE transaction_id = :t",
        "DELETE FROM ledger_entries WHERE transaction_id = :t",
        "DELETE FROM ledger_transactions WHERE id = :t",
        t=int(work.transfer),
    )
    assert work.transfer not in all_transaction_ids(fresh.app)
    report = verify(fresh)
    assert report["ok"] is False
    assert report["first_broken"]["kind"] == "chain_gap"


def test_verify_names_a_transaction_whose_entries_and_header_were_deleted(fresh):
    work = workload(fresh)
    assert verify(fresh)["ok"] is True
    tamper_without_foreign_keys(
        fresh.app,
        "DELETE FROM ledger_entries WHERE transaction_id = :t",
        "DELETE FROM ledger_transactions WHERE id = :t",
        t=int(work.withdrawal),
    )
    report = verify(fresh)
    assert report["ok"] is False
    assert str(report["first_broken"]["transaction_id"]) == work.withdrawal


def run_verify_command(url: str, *options: str) -> Any:
    """``wetbank audit verify`` with ``DATABASE_URL`` set, through the real app factory; the
    app it builds is disposed of afterwards (its connection pool would outlive the test)."""
    built: list[Flask] = []

    def build() -> Flask:
        application = wetbank_cli._app()
        built.append(application)
        return application

    try:
        return CliRunner().invoke(
            wetbank_cli.main,
            ["audit", "verify", *options],
            env={"DATABASE_URL": url},
            obj=ScriptInfo(create_app=build),
        )
    finally:
        for application in built:
            assert application.config["DATABASE_URL"] == url
            application.extensions["wetbank.db"].dispose()


def test_the_audit_verify_command_exits_1_after_tampering(fresh, fresh_db_url):
    work = workload(fresh)
    clean = run_verify_command(fresh_db_url)
    assert clean.exit_code == 0, clean.output
    assert clean.output.startswith("ok:")
    tamper(
        fresh.app,
        "UPDATE ledger_entries SET amount = amount + 1 WHERE id = "
        "(SELECT min(id) FROM ledger_entries WHERE transaction_id = :t)",
        t=int(work.deposits[1]),
    )
    broken = run_verify_command(fresh_db_url)
    assert broken.exit_code == 1, broken.output
    assert "BROKEN" in broken.output
    assert work.deposits[1] in broken.output


def test_the_audit_verify_command_names_the_same_break_from_parallel_workers(
    fresh, fresh_db_url, monkeypatch
):
    work = workload(fresh)
    tamper(
        fresh.app,
        "UPDATE ledger_transactions SET memo = 'edited' WHERE id = :t",
        t=int(work.deposits[-1]),
    )
    alone = run_verify_command(fresh_db_url, "--processes", "1")
    monkeypatch.setattr(verification, "PARALLEL_FROM", 1)  # every chain is long enough
    parallel = run_verify_command(fresh_db_url, "--processes", "2")
    assert (alone.exit_code, parallel.exit_code) == (1, 1), parallel.output
    assert "hash_mismatch" in alone.output
    assert parallel.output == alone.output
    refused = run_verify_command(fresh_db_url, "--processes", "0")
    assert refused.exit_code == 2 and "--processes" in refused.output


def test_the_audit_verify_command_prints_the_head_and_checks_anchors(
    fresh, fresh_db_url, monkeypatch
):
    workload(fresh)
    clean = run_verify_command(fresh_db_url)
    assert clean.exit_code == 0, clean.output
    head_line = clean.output.splitlines()[1]
    assert head_line.startswith("chain head: ")
    head = head_line.split()[2]
    seq, digest = head.split(":")
    assert run_verify_command(fresh_db_url, "--anchor", head).exit_code == 0
    rewritten = run_verify_command(fresh_db_url, "--anchor", f"{seq}:{'0' * 64}")
    assert rewritten.exit_code == 1 and "rewritten" in rewritten.output, rewritten.output
    beyond = run_verify_command(
        fresh_db_url, "--anchor", head, "--anchor", f"{int(seq) + 1}:{digest}"
    )
    assert beyond.exit_code == 1 and "removed from its end" in beyond.output, beyond.output
    refused = run_verify_command(fresh_db_url, "--anchor", seq)
    assert refused.exit_code == 2 and "SEQ:HASH" in refused.output
    # worker processes, one segment of two links each, report the same head
    monkeypatch.setattr(verification, "PARALLEL_FROM", 1)
    parallel = run_verify_command(fresh_db_url, "--processes", "2", "--anchor", head)
    assert parallel.output == clean.output


# --- refused requests in the access trail --------------------------------------------------------


def events(api: Api) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    query: dict[str, Any] = {"limit": 500}
    while True:
        body = ok(api.get("/audit/events", query_string=query), 200)
        items += body["items"]
        if not body["next_cursor"]:
            return items
        query["cursor"] = body["next_cursor"]


def test_refused_requests_appear_in_the_audit_events_with_path_and_request_id(kit, holder):
    missing, forbidden, bad = (f"req-{uuid.uuid4().hex}" for _ in range(3))
    with on(D4):
        response = kit.api.get("/accounts", token="", headers={"X-Request-Id": missing})
        assert response.status_code == 401
        assert response.headers["X-Request-Id"] == missing
        response = kit.api.get(
            "/audit/journal", token=holder["token"], headers={"X-Request-Id": forbidden}
        )
        assert response.status_code == 403
        response = kit.api.post(
            "/holders", {"name": "x"}, token="wbt_nope", headers={"X-Request-Id": bad}
        )
        assert response.status_code == 401
        trail = {e["request_id"]: e for e in events(kit.api) if e["request_id"]}
    assert trail[missing]["status"] == 401
    assert trail[missing]["path"].endswith("/api/v1/accounts")
    assert trail[missing]["at"]
    assert trail[forbidden]["status"] == 403
    assert trail[forbidden]["path"].endswith("/api/v1/audit/journal")
    assert trail[forbidden]["actor"]  # the holder's token is known, only not allowed
    assert trail[bad]["status"] == 401
    assert "/api/v1/holders" in trail[bad]["path"]
    assert len({trail[k]["kind"] for k in (missing, bad)}) == 1
    assert trail[forbidden]["kind"] != trail[missing]["kind"]


def test_events_are_paged_in_record_order(kit, holder):
    with on(D4):
        for _ in range(4):  # four events at least, whatever other tests left in the database
            kit.api.get("/audit/verify", token=holder["token"])
        first = ok(kit.api.get("/audit/events?limit=2"), 200)
        assert len(first["items"]) == 2 and first["next_cursor"]
        second = ok(kit.api.get(f"/audit/events?limit=2&cursor={first['next_cursor']}"), 200)
        assert len(second["items"]) == 2
        one_page = ok(kit.api.get("/audit/events?limit=4"), 200)
    assert first["items"] + second["items"] == one_page["items"]


def test_a_client_tailing_the_events_resumes_from_the_last_page_and_sees_later_ones(kit, holder):
    """The last page's ``next_cursor`` is null (API.md), and its ``resume_cursor`` sits after
    its last event: an empty page from it is 200 with no items, and events recorded afterwards
    come on the page read from it."""
    with on(D4):
        kit.api.get("/audit/verify", token=holder["token"])  # at least one event
        query: dict[str, Any] = {"limit": 500}
        while True:  # to the end of the trail, whatever other tests left in it
            last = ok(kit.api.get("/audit/events", query_string=query), 200)
            if not last["next_cursor"]:
                break
            assert last["resume_cursor"] == last["next_cursor"]
            query["cursor"] = last["next_cursor"]
        assert last["items"] and last["next_cursor"] is None
        resume = last["resume_cursor"]
        quiet = ok(kit.api.get("/audit/events", query_string={"cursor": resume}), 200)
        assert quiet["items"] == [] and quiet["next_cursor"] is None
        assert quiet["resume_cursor"] == resume  # an empty page stays where it was
        later = f"req-{uuid.uuid4().hex}"
        headers = {"X-Request-Id": later}
        refused = kit.api.get("/audit/verify", token=holder["token"], headers=headers)
        assert refused.status_code == 403
        tail = ok(kit.api.get("/audit/events", query_string={"cursor": resume}), 200)
    assert [event["request_id"] for event in tail["items"]] == [later]
    assert tail["next_cursor"] is None and tail["resume_cursor"] not in (None, resume)
    again = ok(kit.api.get("/audit/events", query_string={"cursor": tail["resume_cursor"]}), 200)
    assert again["items"] == []


def test_an_empty_trail_still_gives_a_cursor_to_resume_from(fresh):
    with on(D4):
        empty = ok(fresh.api.get("/audit/events"), 200)
        assert empty["items"] == [] and empty["next_cursor"] is None
        resume = empty["resume_cursor"]
        refused = fresh.api.get("/accounts", token="wbt_nope", headers={"X-Request-Id": "req-1"})
        assert refused.status_code == 401
        tail = ok(fresh.api.get("/audit/events", query_string={"cursor": resume}), 200)
    assert [event["request_id"] for event in tail["items"]] == ["req-1"]


# --- events that commit out of their ids' order -----------------------------------------------
#
# A token created in a unit of work that is still open, or still committing, while refused
# requests are recorded and committed and the board pages the trail: once that unit commits, the
# pages read from the cursor the board was given must hold its event.


def walk_events(api: Api, cursor: str | None) -> list[dict[str, Any]]:
    """Every event from ``cursor`` on (from the first without one), one per page."""
    items: list[dict[str, Any]] = []
    query: dict[str, Any] = {"limit": 1}
    while True:
        if cursor:
            query["cursor"] = cursor
        body = ok(api.get("/audit/events", query_string=query), 200)
        items += body["items"]
        cursor = body["next_cursor"]
        if not cursor:
            return items


def started(target: Callable[[], Any]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def race_a_token_unit_with_refusals_and_a_page(
    fresh: Kit, hold: Callable[[Session, threading.Event, threading.Event], None]
) -> dict[str, Any]:
    """A token created in a unit of work that ``hold(session, held, release)`` keeps from
    committing (setting ``held`` once it does); meanwhile two refused requests, then the board's
    first page of one event; then the unit commits and the board pages on from that page's
    cursor.  What the board saw, and whether the refusals and the page answered while the unit
    was held."""
    db: Database = fresh.app.extensions["wetbank.db"]
    held, release = threading.Event(), threading.Event()
    out: dict[str, Any] = {}

    def unit() -> None:
        try:
            with db.transaction() as session:
                request = tokens.Request("POST /api/v1/tokens", "req-held-unit")
                tokens.create(db, SYSTEM, request, role="board", name="held unit")
                hold(session, held, release)
        finally:
            held.set()

    def refusals() -> None:
        api = Api(fresh.app.test_client(), None)
        out["refused"] = [
            api.get("/accounts", token="wbt_nope", headers={"X-Request-Id": f"req-{n}"}).status_code
            for n in range(2)
        ]

    def first_page() -> None:
        api = Api(fresh.app.test_client(), fresh.api.token)
        out["first"] = ok(api.get("/audit/events", query_string={"limit": 1}), 200)

    holder = started(unit)
    assert held.wait(20)
    try:
        refusing = started(refusals)
        refusing.join(1.5)
        out["refused_while_held"] = not refusing.is_alive()
        if refusing.is_alive():  # SQLite: they wait for the unit, the one writer
            release.set()
            refusing.join(40)
        # both refusals are in the trail now: the first page (of one) has a next one
        reading = started(first_page)
        reading.join(1.5)
        out["read_while_held"] = not release.is_set() and not reading.is_alive()
    finally:
        release.set()
    for thread in (holder, refusing, reading):
        thread.join(40)
        assert not thread.is_alive()
    assert out["refused"] == [401, 401]
    first = out["first"]
    out["seen"] = first["items"] + walk_events(fresh.api, first["next_cursor"])
    return out


def test_an_event_of_a_unit_still_open_is_not_skipped_by_the_pages_read_meanwhile(fresh, backend):
    def kept_open(_session: Session, held: threading.Event, release: threading.Event) -> None:
        held.set()
        release.wait(30)

    out = race_a_token_unit_with_refusals_and_a_page(fresh, kept_open)
    seen = Counter(e["request_id"] for e in out["seen"])
    assert seen == Counter(["req-held-unit", "req-0", "req-1"])
    if backend == "postgresql":
        # the refusals are recorded and the trail answers while the long unit is open: neither
        # waits for it (SQLite has one writer at a time, and a page's read is one)
        assert out["refused_while_held"] and out["read_while_held"]


def test_an_event_committing_while_the_pages_are_read_is_not_skipped(fresh):
    def paused_in_commit(session: Session, held: threading.Event, release: threading.Event) -> None:
        def pause(_session: Session) -> None:
            held.set()
            release.wait(30)

        # after the unit's own commit-time work: its event is written, its commit not yet done
        event.listen(session, "before_commit", pause)

    out = race_a_token_unit_with_refusals_and_a_page(fresh, paused_in_commit)
    seen = Counter(e["request_id"] for e in out["seen"])
    assert seen == Counter(["req-held-unit", "req-0", "req-1"])
    assert [e["kind"] for e in out["seen"]].count("token_created") == 1


# --- statements ----------------------------------------------------------------------------------


def statement(api: Api, account_id: str, start: str, end: str, **kw: Any) -> Any:
    return api.get(f"/accounts/{account_id}/statement?from={start}&to={end}", **kw)


def days(start: str, end: str) -> list[str]:
    first, last = date.fromisoformat(start), date.fromisoformat(end)
    return [(first + timedelta(n)).isoformat() for n in range((last - first).days + 1)]


def test_a_statement_shows_opening_entries_and_closing_per_class(fresh):
    work = workload(fresh)
    with on(D4):
        body = ok(statement(fresh.api, work.a["id"], D1, D4), 200)
        holder_view = ok(
            statement(fresh.api, work.a["id"], D1, D4, token=work.a["holder"]["token"]), 200
        )
        other = statement(fresh.api, work.a["id"], D1, D4, token=work.b["holder"]["token"])
    assert holder_view == body
    assert other.status_code in (403, 404)
    assert (body["from"], body["to"]) == (D1, D4)
    (block,) = body["classes"]
    assert block["credit_class"]["code"] == work.a["unrestricted_class"]
    assert block["opening_sqft"] == 0
    assert [(e["kind"], e["amount_sqft"], e["balance_after_sqft"]) for e in block["entries"]] == [
        ("deposit", 40_000, 40_000),
        ("transfer", -5_000, 35_000),
        ("withdrawal", -18_000, 17_000),
    ]
    assert [e["transaction_id"] for e in block["entries"]] == [
        work.deposits[0],
        work.transfer,
        work.withdrawal,
    ]
    assert [e["effective_on"] for e in block["entries"]] == [D1, D2, D3]
    assert block["closing_sqft"] == 17_000
    posted = fresh.balances(work.a["id"])[work.a["unrestricted_class"]]["posted_sqft"]
    assert posted == block["closing_sqft"]


def test_statements_are_continuous_closing_is_the_next_periods_opening(fresh):
    work = workload(fresh)
    start, end = "2026-05-01", "2026-05-12"
    with on(D4):
        for account in (work.a["id"], work.b["id"], work.c):
            whole = ok(statement(fresh.api, account, start, end), 200)
            closing = {c["credit_class"]["code"]: c["closing_sqft"] for c in whole["classes"]}
            for split in days(start, "2026-05-11"):
                left = ok(statement(fresh.api, account, start, split), 200)
                right = ok(
                    statement(
                        fresh.api,
                        account,
                        (date.fromisoformat(split) + timedelta(1)).isoformat(),
                        end,
                    ),
                    200,
                )
                closes = {c["credit_class"]["code"]: c["closing_sqft"] for c in left["classes"]}
                opens = {c["credit_class"]["code"]: c["opening_sqft"] for c in right["classes"]}
                for code in closing:
                    assert closes.get(code, 0) == opens.get(code, 0), (account, split, code)
                left_entries = [e for c in left["classes"] for e in c["entries"]]
                right_entries = [e for c in right["classes"] for e in c["entries"]]
                assert len(left_entries) + len(right_entries) == sum(
                    len(c["entries"]) for c in whole["classes"]
                )
            # within a class, the opening plus the entries is the closing
            for block in whole["classes"]:
                assert (
                    block["opening_sqft"] + sum(e["amount_sqft"] for e in block["entries"])
                    == block["closing_sqft"]
                )


def test_a_statement_as_csv_has_the_same_rows(fresh):
    work = workload(fresh)
    with on(D4):
        body = ok(statement(fresh.api, work.b["id"], D1, D4), 200)
        rows = csv_rows(statement(fresh.api, work.b["id"], D1, D4, headers=CSV))
    expected: list[tuple[str, str, str]] = []
    for block in body["classes"]:
        code = block["credit_class"]["code"]
        expected.append((code, "opening", str(block["opening_sqft"])))
        expected += [(code, "entry", str(e["balance_after_sqft"])) for e in block["entries"]]
        expected.append((code, "closing", str(block["closing_sqft"])))
    assert [(r["credit_class"], r["row"], r["balance_after_sqft"]) for r in rows] == expected
    assert {r["credit_class"] for r in rows} == {
        work.b["unrestricted_class"],
        work.b["restricted_class"],
    }
    entries = [r for r in rows if r["row"] == "entry"]
    assert {r["transaction_id"] for r in entries} == {work.deposits[1]}


def test_a_statement_that_ends_before_it_starts_is_refused(kit, holder):
    with on(D4):
        account = kit.account(holder["id"], 5)
        problem(statement(kit.api, account, D4, D1), 422, "validation_error")


# --- the public credit availability report ------------------------------------------------------


def availability_from_lots(api: Api) -> dict[tuple[int, str, bool], int]:
    """Available sq ft per (service area, wetland type, restricted), summed over every lot."""
    classes: dict[str, tuple[int, str, bool]] = {}
    totals: dict[tuple[int, str, bool], int] = defaultdict(int)
    query: dict[str, Any] = {"limit": 500}
    accounts: list[dict[str, Any]] = []
    while True:
        body = ok(api.get("/accounts", query_string=query), 200)
        accounts += body["items"]
        if not body["next_cursor"]:
            break
        query["cursor"] = body["next_cursor"]
    for account in accounts:
        detail = ok(api.get(f"/accounts/{account['id']}"), 200)
        for row in detail["balances"]:
            klass = row["credit_class"]
            classes[klass["code"]] = (
                klass["service_area"],
                klass["wetland_type"],
                klass["restricted"],
            )
        for lot in every_item(api, f"/accounts/{account['id']}/lots"):
            totals[classes[lot["credit_class"]]] += lot["available_sqft"]
    return {key: n for key, n in totals.items() if n > 0}


def report(api: Api) -> dict[tuple[int, str, bool], int]:
    body = ok(api.get("/reports/credit-availability", token=""), 200)
    return {
        (row["service_area"], row["wetland_type"], row["restricted"]): row["available_sqft"]
        for row in body["items"]
    }


def test_the_availability_report_is_the_sum_of_available_lots_less_reserved_and_frozen(fresh):
    kit = fresh
    with on(D1):
        a = kit.funded_account(day=D1, service_area=5, unrestricted=40_000)
        frozen_account = kit.funded_account(
            day=D1, service_area=5, unrestricted=10_000, restricted=3_000
        )
        frozen_site = kit.funded_account(
            day=D1, service_area=6, wetland_type="3", unrestricted=7_000
        )
        kit.funded_account(day=D1, service_area=6, wetland_type="3", unrestricted=2_000)
        buyer = kit.account(kit.holder()["id"], 5)
        ok(
            kit.api.post(
                "/transfers",
                {
                    "from_account_id": a["id"],
                    "to_account_id": buyer,
                    "credit_class": a["unrestricted_class"],
                    "amount_sqft": 1_500,
                },
            )
        )
        lgu = kit.lgu()
        plan = kit.plan(lgu, received_on=D1, area_sqft=3_000)
        kit.reserve(a["id"], plan["id"], a["unrestricted_class"], 6_000)
        # a frozen site's credits are frozen wherever they sit: move some before freezing
        site_buyer = kit.account(kit.holder()["id"], 6)
        ok(
            kit.api.post(
                "/transfers",
                {
                    "from_account_id": frozen_site["id"],
                    "to_account_id": site_buyer,
                    "credit_class": frozen_site["unrestricted_class"],
                    "amount_sqft": 1_000,
                },
            )
        )
        ok(kit.api.post(f"/accounts/{frozen_account['id']}/freeze"), 200)
        ok(kit.api.post(f"/bank-sites/{frozen_site['site_id']}/freeze"), 200)

        published = report(kit.api)
        from_lots = availability_from_lots(kit.api)
        body = ok(kit.api.get("/reports/credit-availability", token=""), 200)
    assert body["as_of"] == D1
    assert published == from_lots
    assert published == {
        (5, "2", False): 40_000 - 1_500 - 6_000 + 1_500,
        (6, "3", False): 2_000,
    }
    assert (5, "2", True) not in published  # only the frozen account holds restricted credits

    # unfreezing puts the credits back on the market
    with on(D1):
        ok(kit.api.post(f"/accounts/{frozen_account['id']}/unfreeze"), 200)
        ok(kit.api.post(f"/bank-sites/{frozen_site['site_id']}/unfreeze"), 200)
        published = report(kit.api)
        assert published == availability_from_lots(kit.api)
    assert published == {
        (5, "2", False): 34_000 + 10_000,
        (5, "2", True): 3_000,
        (6, "3", False): 2_000 + 7_000,
    }


def test_the_availability_report_as_csv(fresh):
    with on(D1):
        fresh.funded_account(day=D1, service_area=3, unrestricted=4_000, restricted=1_000)
        fresh.funded_account(day=D1, service_area=2, wetland_type="5", unrestricted=2_500)
        body = ok(fresh.api.get("/reports/credit-availability", token=""), 200)
        rows = csv_rows(fresh.api.get("/reports/credit-availability", token="", headers=CSV))
    assert list(rows[0]) == ["service_area", "wetland_type", "restricted", "available_sqft"]
    assert [
        (int(r["service_area"]), r["wetland_type"], r["restricted"], int(r["available_sqft"]))
        for r in rows
    ] == [
        (
            i["service_area"],
            i["wetland_type"],
            "true" if i["restricted"] else "false",
            i["available_sqft"],
        )
        for i in body["items"]
    ]
    assert len(rows) == 3


# --- streaming ------------------------------------------------------------------------------------


def test_the_journal_csv_streams_before_the_whole_result_is_built(fresh, monkeypatch):
    total = 1_200
    db = fresh.app.extensions["wetbank.db"]
    with db.transaction() as session:
        source, target = (
            ledger.create_account(
                session, code=f"stream-{n}-{uuid.uuid4().hex}", asset="XST", name="s"
            )
            for n in range(2)
        )
        for n in range(total):
            meta = ledger.Meta(f"stream-{uuid.uuid4().hex}", date(2026, 5, 4), memo=f"row {n}")
            ledger.transfer(session, "stream", [ledger.Leg(source, target, 1)], meta)

    built = {"rows": 0}
    real = bank_audit.journal_all

    def counting(session: Any, filters: Any) -> Iterator[dict[str, Any]]:
        for row in real(session, filters):
            built["rows"] += 1
            yield row

    monkeypatch.setattr(bank_audit, "journal_all", counting)
    with on(D4):
        response = fresh.api.client.get(
            "/api/v1/audit/journal",
            headers={**CSV, "Authorization": f"Bearer {fresh.api.token}"},
            buffered=False,
        )
        try:
            assert response.status_code == 200
            assert response.mimetype == "text/csv"
            first = next(response.response)
            assert built["rows"] < total  # the header is out before the result is built
            header = first.decode().splitlines()[0]
            assert header.startswith("seq,transaction_id,kind")
            second = next(response.response)
            assert built["rows"] < total
            # a transaction written while the export streams does not disturb it
            with db.transaction() as session:
                meta = ledger.Meta(f"stream-late-{uuid.uuid4().hex}", date(2026, 5, 4))
                late = ledger.transfer(session, "stream", [ledger.Leg(source, target, 1)], meta)
            rest = b"".join(response.response)
        finally:
            response.close()
    rows = list(csv.DictReader(io.StringIO((first + second + rest).decode())))
    counts = Counter(row["transaction_id"] for row in rows)
    expected = [tx for tx in all_transaction_ids(fresh.app) if tx != str(late.transaction_id)]
    assert len(expected) == total
    assert all(counts[tx] == 1 for tx in expected)
    assert counts[str(late.transaction_id)] <= 1
    assert set(counts) <= {*expected, str(late.transaction_id)}
    assert built["rows"] >= total
