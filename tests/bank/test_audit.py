"""The audit's use cases (``bank.audit``, ``bank.reports``, ``bank.compliance``) on both
databases: verify finds a clean ledger intact, the trial balance balances, the journal pages and
streams its rows, the access events list, and only the board reads them; a statement, the public
availability report and the LGU compliance report, and a period that ends before it starts."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from datetime import date, timedelta

import pytest
from freezegun import freeze_time

import ledger
from bank import access, audit, compliance, parties, reports
from bank.access import SYSTEM, Actor
from bank.errors import Forbidden, NotFound, ValidationFailed
from bank.rules.ruleset import ruleset_for
from ledger.db import Database

DAY = date(2026, 6, 17)
RULESET = ruleset_for(DAY)
HOLDER = Actor(token_id="tok_h", role="holder", name="owner", holder_id="hld_0")


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with freeze_time(f"{DAY.isoformat()} 12:00:00"):
        yield


def post(db: Database, count: int, asset: str = "XAU") -> list[str]:
    """``count`` transfers of 1 between two new accounts of ``asset``; their transaction ids."""
    tag = uuid.uuid4().hex
    with db.transaction() as session:
        source, target = (
            ledger.create_account(session, code=f"audit-{n}-{tag}", asset=asset, name="a")
            for n in range(2)
        )
    ids = []
    for n in range(count):
        with db.transaction() as session:
            meta = ledger.Meta(f"audit-{tag}-{n}", DAY, memo=f"row {n}")
            posted = ledger.transfer(session, "audit", [ledger.Leg(source, target, 1)], meta)
            ids.append(str(posted.transaction_id))
    return ids


def test_verify_finds_a_clean_ledger_intact_and_records_its_full_pass(fresh_db: Database) -> None:
    post(fresh_db, 3)
    answer = audit.verify_ledger(fresh_db, SYSTEM)
    assert (answer.ok, answer.mode, answer.first_broken) == (True, "full", None)
    assert answer.transactions_checked == 3 and answer.accounts_checked >= 2
    assert answer.last_full_pass is not None and answer.last_full_pass.transactions == 3


def test_the_trial_balance_balances_per_asset(fresh_db: Database) -> None:
    post(fresh_db, 2, asset="XAU")
    post(fresh_db, 1, asset="XAG")
    balance = audit.trial_balance_as_of(fresh_db, SYSTEM, None)
    assert balance.as_of == DAY and balance.balanced
    totals = {a.asset: (a.unit, a.debits, a.credits, a.balanced) for a in balance.assets}
    assert totals == {"XAG": ("sqft", 1, 1, True), "XAU": ("sqft", 2, 2, True)}
    before = audit.trial_balance_as_of(fresh_db, SYSTEM, DAY - timedelta(days=1))
    assert before.assets == [] and before.balanced


def test_the_journal_pages_and_streams_every_sealed_transaction(fresh_db: Database) -> None:
    ids = post(fresh_db, 5)
    everything = audit.JournalFilter()
    first = audit.journal_page(fresh_db, SYSTEM, everything, 3, None)
    assert [row["transaction_id"] for row in first] == ids[:4]  # one more: there is a next page
    rest = audit.journal_page(fresh_db, SYSTEM, everything, 3, first[2]["seq"])
    assert [row["transaction_id"] for row in rest] == ids[3:]
    row = first[0]
    assert (row["kind"], row["memo"], row["effective_on"], row["pending"]) == (
        "audit",
        "row 0",
        DAY,
        False,
    )
    assert sorted(e["amount"] for e in row["entries"]) == [-1, 1]
    assert first[1]["prev_hash"] == row["hash"]

    streamed = list(audit.journal_export(fresh_db, SYSTEM, everything))
    assert streamed == first[:3] + rest
    later = audit.JournalFilter(start=DAY + timedelta(days=1))
    assert list(audit.journal_export(fresh_db, SYSTEM, later)) == []


def test_reading_the_journal_takes_no_write_lock(fresh_db: Database) -> None:
    """A journal page seals only what waits for the background sealer and reads on a read-only
    connection: on SQLite, where each write chains its own link before it commits, it takes no
    write lock, and reads while another write holds the database (the API's token check, which
    may record the token's use, still takes its turn)."""
    ids = post(fresh_db, 2)
    holding, release = threading.Event(), threading.Event()

    def write_and_wait() -> None:
        with fresh_db.transaction() as session:
            source, target = (
                ledger.create_account(
                    session, code=f"held-{n}-{uuid.uuid4().hex}", asset="XAU", name="h"
                )
                for n in range(2)
            )
            holding.set()
            release.wait(30)

    writer = threading.Thread(target=write_and_wait)
    writer.start()
    try:
        assert holding.wait(10)
        pages: list[list[dict[str, object]]] = []
        reader = threading.Thread(
            target=lambda: pages.append(
                audit.journal_page(fresh_db, SYSTEM, audit.JournalFilter(), 10, None)
            )
        )
        reader.start()
        reader.join(timeout=5)
        read_beside_the_writer = not reader.is_alive()
    finally:
        release.set()
        writer.join()
    reader.join()
    assert read_beside_the_writer, "the journal waited for the write to end"
    assert [row["transaction_id"] for row in pages[0]] == ids


def test_the_access_events_list_oldest_first_in_pages(fresh_db: Database) -> None:
    with fresh_db.transaction() as session:
        for status in (401, 403, 401):
            access.record_event(
                session, kind="refused", path="GET /x", status=status, actor=None, request_id=None
            )
    first = audit.events(fresh_db, SYSTEM, None, 2)
    assert [e.status for e in first] == [401, 403, 401]
    assert [e.status for e in audit.events(fresh_db, SYSTEM, first[1].id, 2)] == [401]


def test_only_the_board_audits(db: Database) -> None:
    everything = audit.JournalFilter()
    for refused in (
        lambda: audit.verify_ledger(db, HOLDER),
        lambda: audit.trial_balance_as_of(db, HOLDER, None),
        lambda: audit.journal_page(db, HOLDER, everything, 10, None),
        lambda: audit.journal_export(db, HOLDER, everything),
        lambda: audit.events(db, HOLDER, None, 10),
        lambda: compliance.report(db, HOLDER, DAY, DAY),
    ):
        with pytest.raises(Forbidden):
            refused()


def test_a_statement_is_the_holders_and_a_period_must_not_end_before_it_starts(
    db: Database,
) -> None:
    holder = parties.create_holder(db, SYSTEM, name="Statement holder", email=None, address=None)
    with db.transaction() as session:
        account = parties.open_account(
            session, RULESET, holder_id=holder.id, service_area=5, county="Lyon"
        )
    owner = Actor(token_id="tok_o", role="holder", name="owner", holder_id=holder.id)
    found = reports.account_statement(db, owner, account.id, DAY, DAY)
    assert (found.account_id, found.from_, found.to, found.classes) == (account.id, DAY, DAY, [])
    with pytest.raises(NotFound):
        reports.account_statement(db, HOLDER, account.id, DAY, DAY)
    with pytest.raises(ValidationFailed) as backwards:
        reports.account_statement(db, owner, account.id, DAY, DAY - timedelta(days=1))
    assert "to" in backwards.value.fields["errors"]
    with pytest.raises(ValidationFailed):
        compliance.report(db, SYSTEM, DAY, DAY - timedelta(days=1))


def test_the_public_reports_are_as_of_today(db: Database) -> None:
    available = reports.availability(db)
    assert available.as_of == DAY
    assert all(item["available_sqft"] > 0 for item in available.items)
    report = compliance.report(db, SYSTEM, DAY - timedelta(days=30), DAY)
    assert (report.from_, report.to, report.as_of) == (DAY - timedelta(days=30), DAY, DAY)
