"""PostgreSQL's schema statements: the ledger's triggers and the row seals' (``ledger.ddl``,
``ledger.row_seals``).

Balance is checked by a deferred constraint trigger, so a transaction's header and entries can be
inserted in any order and the check runs at COMMIT (``CHECK_BALANCED_FUNCTION``).  Entries, chain
links and transactions refuse UPDATE and DELETE; since migration 0016 (``GUARDS``) accounts do
too, a balance row refuses a change of its account, slot, asset or limits and DELETE, and every
ledger table refuses TRUNCATE; since 0018 (``CHECK_SEALED_FUNCTION``, the same check made
stricter) a header commits only sealed, and a release entry only releasing a pending entry of
its account; since 0019 (``CHECK_ONE_WRITER_FUNCTION``) an entry only from the database
transaction that writes its ledger transaction.  A sealed row's content is ``to_jsonb`` of the
row keeping the sealed keys, in UTC so that timestamps read the same in every session
(``ledger_sealed_content``, which the verifier compares with); each table's insert trigger
builds the same object from the row's columns by name, and a set-once column has a seal of its
own (the seal statements are in ``postgresql_seals``).  Integer columns never hold anything but
integers, so quantities need no guard here.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, text

from ledger.store.postgresql_seals import (
    DROP_SEAL_FUNCTIONS,
    SEAL_FUNCTIONS,
    quoted,
    seal_once_statements,
    seal_row_function,
)

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

INSTALL = [
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

# Migration 0016: what the engine refuses, the database refuses too, from any role.  An account
# never changes once created; a balance row keeps its account, slot, asset and limits (only its
# running totals move: the engine's UPDATE names no other column, so ``UPDATE OF`` never even
# considers this trigger on the write path) and is never deleted; and no ledger table can be
# emptied by TRUNCATE.  An entry's and a balance row's asset (and a balance row's limits) are
# their account's by composite foreign keys the migration adds, not by triggers.
#: the columns that say which account slot a balance row is, in what asset, under what limits
BALANCE_IDENTITY = ("account_id", "slot", "asset", "no_overdraft", "no_overcredit")
#: the ledger's tables that refuse TRUNCATE since 0016 (``ledger_entries`` did from the start)
NO_TRUNCATE = (
    "ledger_accounts",
    "ledger_balances",
    "ledger_transactions",
    "ledger_chain",
    "ledger_chain_queue",
    "ledger_open_pending",
    "ledger_verify_checkpoints",
    "ledger_verify_balances",
)
_IDENTITY_CHANGED = " OR ".join(f"OLD.{c} IS DISTINCT FROM NEW.{c}" for c in BALANCE_IDENTITY)

GUARDS = [
    """
    CREATE TRIGGER ledger_accounts_immutable BEFORE UPDATE OR DELETE ON ledger_accounts
        FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change()
    """,
    f"""
    CREATE TRIGGER ledger_balances_identity
        BEFORE UPDATE OF {", ".join(BALANCE_IDENTITY)} ON ledger_balances
        FOR EACH ROW WHEN ({_IDENTITY_CHANGED}) EXECUTE FUNCTION ledger_refuse_change()
    """,
    """
    CREATE TRIGGER ledger_balances_no_delete BEFORE DELETE ON ledger_balances
        FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change()
    """,
    *(
        f"""CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
        FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change()"""
        for table in NO_TRUNCATE
    ),
]

DROP_GUARDS = [
    "DROP TRIGGER IF EXISTS ledger_accounts_immutable ON ledger_accounts",
    "DROP TRIGGER IF EXISTS ledger_balances_identity ON ledger_balances",
    "DROP TRIGGER IF EXISTS ledger_balances_no_delete ON ledger_balances",
    *(f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table}" for table in NO_TRUNCATE),
]

# What the deferred check refuses besides an unbalanced transaction since 0018 (below)
_SEALED_AND_RELEASING = """
        IF TG_TABLE_NAME = 'ledger_transactions' THEN
            IF NEW.state IS DISTINCT FROM 'sealed' THEN
                RAISE EXCEPTION 'ledger transaction % is inserted sealed: INSERT on '
                    'ledger_transactions refused', tx USING ERRCODE = 'check_violation';
            END IF;
        -- apart: a condition holding a query goes through the executor even when false
        ELSIF NEW.resolves_id IS NOT NULL THEN
            IF NOT EXISTS (
                    SELECT FROM ledger_entries AS p JOIN ledger_transactions AS t
                        ON t.id = p.transaction_id AND t.pending
                    WHERE p.transaction_id = NEW.resolves_id AND p.account_id = NEW.account_id
                        AND p.phase = 'pending' AND p.amount = NEW.amount) THEN
                RAISE EXCEPTION 'a release entry releases a pending entry of its account: '
                    'INSERT on ledger_entries refused (pending transfer %)', NEW.resolves_id
                    USING ERRCODE = 'check_violation';
            END IF;
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql
"""

# Migration 0018: the deferred balance check (which already runs per header and per entry, at
# COMMIT) also refuses a header that is not sealed: PostgreSQL inserts every header sealed (it
# has no open state, nothing is sealed later), so no open transaction commits to be queued or
# chained (a comparison of the new row's column, no query).  A release entry releases a pending
# entry of its account in the pending transfer it resolves, the same amount (a query only for
# release entries, which the engine writes only when it resolves a pending transfer).
CHECK_SEALED_FUNCTION = (
    """
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
        END IF;"""
    + _SEALED_AND_RELEASING
)

# Migration 0019: the same check refuses an entry added to a ledger transaction an earlier
# database transaction committed.  The engine writes a header and all its entries in one
# statement, so each entry's inserting transaction (``xmin``) is the one committing: read in the
# query the check runs anyway, one more aggregate, no query of its own.  Only when that query
# fails does a second tell why: unbalanced, or entries of more than one inserting transaction (an
# entry added later has another than those committed before it, which balance made at least
# two).  Entries that one savepoint wrote (a transaction id of its own) pass; two, refused.  A
# frozen row keeps its 32-bit xmin, which a transaction 2^32 ids later shares: by then the ledger
# transaction is long chained, and verify, recomputing its link, names it as broken.
CHECK_ONE_WRITER_FUNCTION = (
    """
    CREATE OR REPLACE FUNCTION ledger_check_balanced() RETURNS trigger AS $$
    DECLARE tx bigint; ok boolean;
    BEGIN
        IF TG_TABLE_NAME = 'ledger_entries' THEN tx := NEW.transaction_id;
        ELSE tx := NEW.id; END IF;
        SELECT coalesce(sum(g.n) >= 2 AND bool_and(g.total = 0 AND g.mine), false) INTO ok
            FROM (SELECT count(*) AS n, sum(amount) AS total,
                         bool_and(xmin = pg_current_xact_id()::xid) AS mine
                  FROM ledger_entries WHERE transaction_id = tx GROUP BY asset, phase) AS g;
        IF NOT ok THEN
            IF NOT (SELECT coalesce(sum(g.n) >= 2 AND bool_and(g.total = 0), false)
                    FROM (SELECT count(*) AS n, sum(amount) AS total FROM ledger_entries
                          WHERE transaction_id = tx GROUP BY asset, phase) AS g) THEN
                RAISE EXCEPTION 'ledger transaction % is unbalanced or has fewer than 2 entries',
                    tx USING ERRCODE = 'check_violation';
            END IF;
            IF (SELECT min(age(xmin)) <> max(age(xmin)) FROM ledger_entries
                    WHERE transaction_id = tx) THEN
                RAISE EXCEPTION 'an entry is added to ledger transaction % only by the database '
                    'transaction that writes it: INSERT on ledger_entries refused', tx
                    USING ERRCODE = 'check_violation';
            END IF;
        END IF;"""
    + _SEALED_AND_RELEASING
)

UNINSTALL = [
    # 0016's guards call ``ledger_refuse_change`` too: they go first, or it could not be dropped
    *DROP_GUARDS,
    "DROP TRIGGER IF EXISTS ledger_no_truncate ON ledger_entries",
    "DROP TRIGGER IF EXISTS ledger_chain_immutable ON ledger_chain",
    "DROP TRIGGER IF EXISTS ledger_transactions_immutable ON ledger_transactions",
    "DROP TRIGGER IF EXISTS ledger_entries_immutable ON ledger_entries",
    "DROP TRIGGER IF EXISTS ledger_transactions_balanced ON ledger_transactions",
    "DROP TRIGGER IF EXISTS ledger_entries_balanced ON ledger_entries",
    "DROP FUNCTION IF EXISTS ledger_check_balanced()",
    "DROP FUNCTION IF EXISTS ledger_refuse_change()",
]


class PostgresqlDdl:
    """PostgreSQL's schema statements."""

    #: the order seals were written in: an identity column
    seal_position_column = "position"
    install_triggers = INSTALL
    drop_triggers = UNINSTALL
    seal_functions = SEAL_FUNCTIONS
    drop_seal_functions = DROP_SEAL_FUNCTIONS
    unguard_seals = ["DROP TRIGGER IF EXISTS ledger_row_seals_immutable ON ledger_row_seals"]
    in_utc = ["SET LOCAL timezone = 'UTC'"]

    def seal_table(self, name: str, id_column: str, columns: Sequence[str]) -> list[str]:
        args = quoted([id_column, *columns])
        return [
            *self.unseal_table(name),
            seal_row_function(name, id_column, columns),
            f"""CREATE TRIGGER {name}_seal AFTER INSERT ON {name}
            FOR EACH ROW EXECUTE FUNCTION {name}_seal_row({args})""",
            f"""CREATE TRIGGER {name}_sealed BEFORE UPDATE OR DELETE ON {name}
            FOR EACH ROW EXECUTE FUNCTION ledger_refuse_sealed_change({args})""",
            f"""CREATE TRIGGER {name}_sealed_no_truncate BEFORE TRUNCATE ON {name}
            FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_seal_change()""",
        ]

    def unseal_table(self, name: str) -> list[str]:
        return [
            f"DROP TRIGGER IF EXISTS {name}_seal ON {name}",
            f"DROP TRIGGER IF EXISTS {name}_sealed ON {name}",
            f"DROP TRIGGER IF EXISTS {name}_sealed_no_truncate ON {name}",
            f"DROP FUNCTION IF EXISTS {name}_seal_row()",
        ]

    def seal_once(self, name: str, id_column: str, column: str) -> list[str]:
        return [*self.unseal_once(name, column), *seal_once_statements(name, id_column, column)]

    def unseal_once(self, name: str, column: str) -> list[str]:
        prefix = f"{name}_{column}"
        return [
            f"DROP TRIGGER IF EXISTS {prefix}_sealed ON {name}",
            f"DROP TRIGGER IF EXISTS {prefix}_seal_set ON {name}",
            f"DROP TRIGGER IF EXISTS {prefix}_seal ON {name}",
            f"DROP FUNCTION IF EXISTS {prefix}_seal()",
        ]

    def sealed_content(self, columns: Sequence[str], alias: str) -> str:
        return f"ledger_sealed_content(to_jsonb({alias}), ARRAY[{quoted(columns)}]::text[])"

    def sealed_row_id(self, id_column: str, alias: str) -> str:
        return f"{alias}.{id_column}::text"

    def seal_key_join(self, connection: Connection, table: str, id_column: str) -> str:
        """A seal's row (``s``) found through its table's key (``t``), not by casting every
        row's key to text."""
        ident = f"t.{id_column}"
        kind = connection.execute(
            text(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attrelid = to_regclass(:t) AND attname = :c"
            ),
            {"t": table, "c": id_column},
        ).scalar()
        if kind in ("smallint", "integer", "bigint"):
            return f"{ident} = CASE WHEN s.row_id ~ '^-?[0-9]{{1,18}}$' THEN s.row_id::bigint END"
        if str(kind).startswith(("character varying", "text")):
            return f"{ident} = s.row_id"
        return f"{ident}::text = s.row_id"

    def quantity_guards(self, table: str, column: str, *, nullable: bool) -> list[str]:
        return []

    def drop_quantity_guards(self, table: str, column: str) -> list[str]:
        return []

    def quantity_columns(self, connection: Connection) -> list[tuple[str, str, bool]]:
        return []

    def quantity_guard_names(self, connection: Connection) -> list[str]:
        return []
