"""Database-side invariants the ORM cannot be trusted with (LEDGER.md guarantees 1 and 2).

PostgreSQL checks balance with a deferred constraint trigger, so a transaction's header and entries
can be inserted in any order and the check runs at COMMIT (``CHECK_BALANCED_FUNCTION``).  SQLite
has no deferred triggers: a transaction is inserted ``open``, its entries added, then ``sealed``
by an UPDATE whose trigger checks the sums; a sealed transaction accepts no more entries, and none
is inserted already sealed (which would skip that check).  On both, entries, chain links and
sealed transactions refuse UPDATE and DELETE.
"""

from __future__ import annotations

from sqlalchemy import Connection, text

from ledger.chain import SEALER_LOCK_KEY

_BALANCED_SQL = """
    (SELECT count(*) FROM ledger_entries WHERE transaction_id = {tx}) >= 2
    AND NOT EXISTS (
        SELECT 1 FROM ledger_entries WHERE transaction_id = {tx}
        GROUP BY asset, phase HAVING sum(amount) <> 0
    )
"""

# The deferred balance check, fired by every new header and every new entry: each firing reads
# the transaction's entries once (per asset and phase, their count and sum).  A 2-entry transfer
# is checked three times, and a transaction of n entries reads n rows n + 1 times.  No firing
# skips the check because its header was inserted by the same database transaction (its xmin):
# ``SET CONSTRAINTS ALL IMMEDIATE`` runs the header's check early, so an entry added after it
# would go unchecked, and a frozen row keeps its 32-bit xmin, which an xid wraparound can make
# equal to a later transaction's.
CHECK_BALANCED_FUNCTION = """
    CREATE OR REPLACE FUNCTION ledger_check_balanced() RETURNS trigger AS $$
    DECLARE tx bigint;
    BEGIN
        IF TG_TABLE_NAME = 'ledger_entries' THEN tx := NEW.transaction_id;
        ELSE tx := NEW.id; END IF;
        IF NOT (SELECT coalesce(sum(g.n) >= 2 AND bool_and(g.total = 0), false)
                FROM (SELECT count(*) AS n, sum(amount) AS total FROM ledger_entries
                      WHERE transaction_id = tx GROUP BY asset, phase) AS g) THEN
            RAISE EXCEPTION 'ledger transaction % is unbalanced or has fewer than 2 entries', tx
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql
"""

POSTGRESQL_INSTALL = [
    """
    CREATE OR REPLACE FUNCTION ledger_refuse_change() RETURNS trigger AS $$
    BEGIN
        RAISE EXCEPTION 'ledger rows are immutable: % on % refused', TG_OP, TG_TABLE_NAME
            USING ERRCODE = 'integrity_constraint_violation';
    END $$ LANGUAGE plpgsql
    """,
    CHECK_BALANCED_FUNCTION,
    """
    CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_balanced()
    """,
    """
    CREATE CONSTRAINT TRIGGER ledger_transactions_balanced AFTER INSERT ON ledger_transactions
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_balanced()
    """,
    """
    CREATE TRIGGER ledger_entries_immutable BEFORE UPDATE OR DELETE ON ledger_entries
        FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change()
    """,
    """
    CREATE TRIGGER ledger_transactions_immutable BEFORE UPDATE OR DELETE ON ledger_transactions
        FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change()
    """,
    """
    CREATE TRIGGER ledger_chain_immutable BEFORE UPDATE OR DELETE ON ledger_chain
        FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change()
    """,
    """
    CREATE TRIGGER ledger_no_truncate BEFORE TRUNCATE ON ledger_entries
        FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change()
    """,
]

POSTGRESQL_UNINSTALL = [
    "DROP TRIGGER IF EXISTS ledger_no_truncate ON ledger_entries",
    "DROP TRIGGER IF EXISTS ledger_chain_immutable ON ledger_chain",
    "DROP TRIGGER IF EXISTS ledger_transactions_immutable ON ledger_transactions",
    "DROP TRIGGER IF EXISTS ledger_entries_immutable ON ledger_entries",
    "DROP TRIGGER IF EXISTS ledger_transactions_balanced ON ledger_transactions",
    "DROP TRIGGER IF EXISTS ledger_entries_balanced ON ledger_entries",
    "DROP FUNCTION IF EXISTS ledger_check_balanced()",
    "DROP FUNCTION IF EXISTS ledger_refuse_change()",
]

_TX_COLUMNS = (
    "id kind pending expires_at reverses_id idempotency_key request_hash "
    "effective_on recorded_at actor request_id memo"
).split()
_UNCHANGED = " AND ".join(f"NEW.{c} IS OLD.{c}" for c in _TX_COLUMNS)

SQLITE_INSTALL = [
    """
    CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
    BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable: UPDATE on ledger_entries refused'); END
    """,
    """
    CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries
    BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable: DELETE on ledger_entries refused'); END
    """,
    """
    CREATE TRIGGER ledger_entries_only_while_open BEFORE INSERT ON ledger_entries
    WHEN (SELECT state FROM ledger_transactions WHERE id = NEW.transaction_id) IS NOT 'open'
    BEGIN SELECT RAISE(ABORT, 'ledger transaction is sealed or missing: entry refused'); END
    """,
    """
    CREATE TRIGGER ledger_transactions_insert_open BEFORE INSERT ON ledger_transactions
    WHEN NEW.state IS NOT 'open'
    BEGIN SELECT RAISE(ABORT, 'ledger transaction must be inserted open, then sealed'); END
    """,
    f"""
    CREATE TRIGGER ledger_transactions_seal_only BEFORE UPDATE ON ledger_transactions
    WHEN NOT (OLD.state = 'open' AND NEW.state = 'sealed' AND {_UNCHANGED})
    BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable: UPDATE on ledger_transactions refused');
    END
    """,
    """
    CREATE TRIGGER ledger_transactions_seal_balanced BEFORE UPDATE OF state ON ledger_transactions
    WHEN NEW.state = 'sealed' AND NOT ("""
    + _BALANCED_SQL.format(tx="NEW.id")
    + """)
    BEGIN SELECT RAISE(ABORT, 'ledger transaction is unbalanced or has fewer than 2 entries'); END
    """,
    """
    CREATE TRIGGER ledger_transactions_no_delete BEFORE DELETE ON ledger_transactions
    BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable: DELETE on ledger_transactions refused');
    END
    """,
    """
    CREATE TRIGGER ledger_chain_no_update BEFORE UPDATE ON ledger_chain
    BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable: UPDATE on ledger_chain refused'); END
    """,
    """
    CREATE TRIGGER ledger_chain_no_delete BEFORE DELETE ON ledger_chain
    BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable: DELETE on ledger_chain refused'); END
    """,
]

SQLITE_UNINSTALL = [
    f"DROP TRIGGER IF EXISTS {name}"
    for name in (
        "ledger_entries_no_update",
        "ledger_entries_no_delete",
        "ledger_entries_only_while_open",
        "ledger_transactions_insert_open",
        "ledger_transactions_seal_only",
        "ledger_transactions_seal_balanced",
        "ledger_transactions_no_delete",
        "ledger_chain_no_update",
        "ledger_chain_no_delete",
    )
]


def install_triggers(connection: Connection) -> None:
    """Create the ledger's triggers for the connection's dialect."""
    _run_excluding_sealers(connection, _statements(connection, install=True))


def drop_triggers(connection: Connection) -> None:
    """Drop the ledger's triggers (migrations' downgrade, and tamper tests)."""
    _run_excluding_sealers(connection, _statements(connection, install=False))


def _run_excluding_sealers(connection: Connection, statements: list[str]) -> None:
    """Run DDL on the ledger's tables with the sealer's lock held to the end of the transaction.

    A background sealer reads the chain head and the queue; CREATE and DROP TRIGGER lock table
    after table, so the two could deadlock (seen in a test).  Sealers take that lock before
    touching any table, so they wait or skip instead."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SEALER_LOCK_KEY})
    for statement in statements:
        connection.execute(text(statement))


def _statements(connection: Connection, *, install: bool) -> list[str]:
    if connection.dialect.name == "postgresql":
        return POSTGRESQL_INSTALL if install else POSTGRESQL_UNINSTALL
    return SQLITE_INSTALL if install else SQLITE_UNINSTALL
