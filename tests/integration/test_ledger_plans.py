"""How PostgreSQL runs a posting's statements as the ledger grows.

A posting changes a few balance rows; it must find them by key whatever the number of accounts.
The write statement joined its deltas (a jsonb array, which the planner guesses at 100 rows) to
every balance row by hash, a seq scan per posting: O(accounts), +0.4 ms of PostgreSQL CPU at
1,000 accounts."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from ledger import Leg, transfer
from tests.integration.ledger_kit import meta, open_accounts, unique

#: enough balance rows that PostgreSQL's cost model, with fresh statistics, no longer prefers
#: to scan them all (it did up to about 900)
ACCOUNTS = 2_000
#: PostgreSQL plans a prepared statement afresh 5 times, then may keep a generic plan
POSTINGS = 8

_SEQ_SCANS = "SELECT seq_scan FROM pg_stat_xact_user_tables WHERE relname = 'ledger_balances'"


def test_a_posting_reads_only_the_balance_rows_it_changes(fresh_db, backend):
    if backend != "postgresql":
        pytest.skip("PostgreSQL's plans: SQLite updates each balance row by its key")
    issuer, *accounts = open_accounts(fresh_db, unique("X"), False, *[True] * ACCOUNTS)
    with fresh_db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.exec_driver_sql("ANALYZE")
    for n in range(POSTINGS):
        with fresh_db.transaction() as session:
            transfer(session, "transfer", [Leg(issuer, accounts[n * 97], 5)], meta())
            # this database transaction's own counts, before it commits
            scans = session.execute(text(_SEQ_SCANS)).scalar_one()
        assert scans == 0, f"posting {n + 1} scanned every balance row"
