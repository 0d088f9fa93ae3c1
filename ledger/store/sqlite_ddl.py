"""SQLite's schema statements: the ledger's triggers, row seals and quantity guards
(``ledger.ddl``, ``ledger.row_seals``, ``ledger.quantities``).

SQLite has no deferred triggers: a transaction is inserted ``open``, its entries added, then
``sealed`` by an UPDATE whose trigger checks the sums; a sealed transaction accepts no more
entries, and none is inserted already sealed (which would skip that check).  Entries, chain links
and sealed transactions refuse UPDATE and DELETE; since migration 0016 (``GUARDS``) accounts do
too, a balance row refuses a change of its account, slot, asset or limits and DELETE, and an entry
or a balance row must be in its account's asset (a balance row with its account's limits);
since 0018 (``GUARDS_0018``) only a sealed transaction is queued or chained, and a release entry
releases a pending entry of its account.
SQLite has no row-to-JSON, so each sealed table gets its own ``json_object`` over its sealed
columns.  Integer arithmetic overflowing 64 bits
stores a REAL whatever the column's type, so every quantity column has triggers refusing a value
that is not an integer (``ledger.quantities``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from sqlalchemy import Connection, text

from ledger.quantities import GUARD_PREFIX, REFUSAL, is_quantity, trigger_names

_BALANCED_SQL = """
    (SELECT count(*) FROM ledger_entries WHERE transaction_id = {tx}) >= 2
    AND NOT EXISTS (
        SELECT 1 FROM ledger_entries WHERE transaction_id = {tx}
        GROUP BY asset, phase HAVING sum(amount) <> 0
    )
"""

_TX_COLUMNS = (
    "id kind pending expires_at reverses_id idempotency_key request_hash "
    "effective_on recorded_at actor request_id memo"
).split()
_UNCHANGED = " AND ".join(f"NEW.{c} IS OLD.{c}" for c in _TX_COLUMNS)

INSTALL = [
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

# Migration 0016: what the engine refuses, the database refuses too.  An account never changes
# once created; a balance row keeps its account, slot, asset and limits (its running totals
# move: the engine's UPDATE names no other column, so ``UPDATE OF`` leaves this trigger out of the
# write path), is never deleted, and is inserted only with its account's asset and limits; an
# entry is inserted only in its account's asset.  (PostgreSQL holds the last two by composite
# foreign keys; SQLite adds a foreign key only by rebuilding a table, which would drop the
# triggers on it.)  SQLite has no TRUNCATE.
_BALANCE_IDENTITY = ("account_id", "slot", "asset", "no_overdraft", "no_overcredit")
_IDENTITY_KEPT = " AND ".join(f"NEW.{c} IS OLD.{c}" for c in _BALANCE_IDENTITY)

GUARDS = [
    """
    CREATE TRIGGER ledger_accounts_no_update BEFORE UPDATE ON ledger_accounts
    BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable: UPDATE on ledger_accounts refused');
    END
    """,
    """
    CREATE TRIGGER ledger_accounts_no_delete BEFORE DELETE ON ledger_accounts
    BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable: DELETE on ledger_accounts refused');
    END
    """,
    f"""
    CREATE TRIGGER ledger_balances_identity
    BEFORE UPDATE OF {", ".join(_BALANCE_IDENTITY)} ON ledger_balances
    WHEN NOT ({_IDENTITY_KEPT})
    BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable: UPDATE on ledger_balances refused');
    END
    """,
    """
    CREATE TRIGGER ledger_balances_no_delete BEFORE DELETE ON ledger_balances
    BEGIN SELECT RAISE(ABORT, 'ledger rows are immutable: DELETE on ledger_balances refused');
    END
    """,
    """
    CREATE TRIGGER ledger_balances_of_account BEFORE INSERT ON ledger_balances
    WHEN NOT EXISTS (
        SELECT 1 FROM ledger_accounts AS a WHERE a.id = NEW.account_id AND a.asset IS NEW.asset
            AND a.no_overdraft IS NEW.no_overdraft AND a.no_overcredit IS NEW.no_overcredit)
    BEGIN SELECT RAISE(ABORT,
        'a balance row takes its account''s asset and limits: INSERT on ledger_balances refused');
    END
    """,
    """
    CREATE TRIGGER ledger_entries_asset_of_account BEFORE INSERT ON ledger_entries
    WHEN NEW.asset IS NOT (SELECT asset FROM ledger_accounts WHERE id = NEW.account_id)
    BEGIN SELECT RAISE(ABORT,
        'an entry is in its account''s asset: INSERT on ledger_entries refused');
    END
    """,
]

DROP_GUARDS = [
    f"DROP TRIGGER IF EXISTS {name}"
    for name in (
        "ledger_accounts_no_update",
        "ledger_accounts_no_delete",
        "ledger_balances_identity",
        "ledger_balances_no_delete",
        "ledger_balances_of_account",
        "ledger_entries_asset_of_account",
    )
]

# Migration 0018: a transaction is chained or queued only sealed (an open one was never checked
# for balance: that check is its sealing), and a release entry releases a pending entry of its
# account in the pending transfer it resolves, the same amount.
GUARDS_0018 = [
    *(
        f"""
    CREATE TRIGGER {table}_only_sealed BEFORE INSERT ON {table}
    WHEN (SELECT state FROM ledger_transactions WHERE id = NEW.transaction_id) IS NOT 'sealed'
    BEGIN SELECT RAISE(ABORT,
        'ledger transaction is open or missing: INSERT on {table} refused');
    END
    """
        for table in ("ledger_chain_queue", "ledger_chain")
    ),
    """
    CREATE TRIGGER ledger_entries_release_of_pending BEFORE INSERT ON ledger_entries
    WHEN NEW.resolves_id IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM ledger_entries AS p JOIN ledger_transactions AS t
            ON t.id = p.transaction_id AND t.pending
        WHERE p.transaction_id = NEW.resolves_id AND p.account_id = NEW.account_id
            AND p.phase = 'pending' AND p.amount = NEW.amount)
    BEGIN SELECT RAISE(ABORT,
        'a release entry releases a pending entry of its account: INSERT on ledger_entries refused'
    );
    END
    """,
]

DROP_GUARDS_0018 = [
    f"DROP TRIGGER IF EXISTS {name}"
    for name in (
        "ledger_chain_queue_only_sealed",
        "ledger_chain_only_sealed",
        "ledger_entries_release_of_pending",
    )
]

UNINSTALL = [
    *DROP_GUARDS_0018,
    *DROP_GUARDS,
    *(
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
    ),
]

SEALS_TRIGGERS = [
    """
    CREATE TRIGGER IF NOT EXISTS ledger_row_seals_no_update BEFORE UPDATE ON ledger_row_seals
    BEGIN SELECT RAISE(ABORT, 'row seals are immutable: UPDATE on ledger_row_seals refused'); END
    """,
    """
    CREATE TRIGGER IF NOT EXISTS ledger_row_seals_no_delete BEFORE DELETE ON ledger_row_seals
    BEGIN SELECT RAISE(ABORT, 'row seals are immutable: DELETE on ledger_row_seals refused'); END
    """,
]


class SqliteDdl:
    """SQLite's schema statements."""

    #: the order seals were written in: the rowid (the table never loses a row, so it only grows)
    seal_position_column = "rowid"
    install_triggers = INSTALL
    drop_triggers = UNINSTALL
    seal_functions = SEALS_TRIGGERS
    #: the seals' own triggers stay: they guard ``ledger_row_seals`` itself
    drop_seal_functions: list[str] = []
    unguard_seals = [
        "DROP TRIGGER IF EXISTS ledger_row_seals_no_update",
        "DROP TRIGGER IF EXISTS ledger_row_seals_no_delete",
    ]
    #: timestamps are stored as text, the same in every session
    in_utc: list[str] = []

    def seal_table(self, name: str, id_column: str, columns: Sequence[str]) -> list[str]:
        unchanged = " AND ".join(f"NEW.{c} IS OLD.{c}" for c in columns)
        row_id, content = self.sealed_row_id(id_column, "NEW"), self.sealed_content(columns, "NEW")
        return [
            *self.unseal_table(name),
            f"""CREATE TRIGGER {name}_seal AFTER INSERT ON {name}
        BEGIN
            INSERT INTO ledger_row_seals (table_name, row_id, content)
            VALUES ('{name}', {row_id}, {content});
        END""",
            f"""CREATE TRIGGER {name}_sealed_no_update BEFORE UPDATE ON {name}
        WHEN NOT ({unchanged})
        BEGIN SELECT RAISE(ABORT, 'sealed rows are immutable: UPDATE on {name} refused'); END""",
            f"""CREATE TRIGGER {name}_sealed_no_delete BEFORE DELETE ON {name}
        BEGIN SELECT RAISE(ABORT, 'sealed rows are immutable: DELETE on {name} refused'); END""",
        ]

    def unseal_table(self, name: str) -> list[str]:
        return [
            f"DROP TRIGGER IF EXISTS {name}_seal",
            f"DROP TRIGGER IF EXISTS {name}_sealed_no_update",
            f"DROP TRIGGER IF EXISTS {name}_sealed_no_delete",
        ]

    def seal_once(self, name: str, id_column: str, column: str) -> list[str]:
        """A set-once column's seal, written when a row is inserted with a value or given one,
        and the refusal of any change once it holds one."""
        prefix = f"{name}_{column}"
        seal = f"""INSERT INTO ledger_row_seals (table_name, row_id, content)
            VALUES ('{name}.{column}', {self.sealed_row_id(id_column, "NEW")},
                    {self.sealed_content((column,), "NEW")});"""
        return [
            *self.unseal_once(name, column),
            f"""CREATE TRIGGER {prefix}_seal AFTER INSERT ON {name}
        WHEN NEW.{column} IS NOT NULL BEGIN {seal} END""",
            f"""CREATE TRIGGER {prefix}_seal_set AFTER UPDATE ON {name}
        WHEN OLD.{column} IS NULL AND NEW.{column} IS NOT NULL BEGIN {seal} END""",
            f"""CREATE TRIGGER {prefix}_sealed BEFORE UPDATE ON {name}
        WHEN OLD.{column} IS NOT NULL AND NEW.{column} IS NOT OLD.{column}
        BEGIN SELECT RAISE(ABORT, 'sealed rows are immutable: UPDATE on {name} refused'); END""",
        ]

    def unseal_once(self, name: str, column: str) -> list[str]:
        return [
            f"DROP TRIGGER IF EXISTS {name}_{column}_{suffix}"
            for suffix in ("sealed", "seal_set", "seal")
        ]

    def sealed_content(self, columns: Sequence[str], alias: str) -> str:
        pairs = ", ".join(f"'{c}', {alias}.{c}" for c in columns)
        return f"json_object({pairs})"

    def sealed_row_id(self, id_column: str, alias: str) -> str:
        return f"CAST({alias}.{id_column} AS TEXT)"

    def seal_key_join(self, connection: Connection, table: str, id_column: str) -> str:
        return f"t.{id_column} = s.row_id"  # compared with the key column's affinity

    def quantity_guards(self, table: str, column: str, *, nullable: bool) -> list[str]:
        allowed = "('integer', 'null')" if nullable else "('integer')"
        when = f"typeof(NEW.{column}) NOT IN {allowed}"
        refuse = f"SELECT RAISE(ABORT, '{REFUSAL}: {table}.{column}')"
        on_insert, on_update = trigger_names(table, column)
        return [
            f"CREATE TRIGGER IF NOT EXISTS {on_insert} BEFORE INSERT ON {table} "
            f"WHEN {when} BEGIN {refuse}; END",
            f"CREATE TRIGGER IF NOT EXISTS {on_update} BEFORE UPDATE OF {column} ON {table} "
            f"WHEN {when} BEGIN {refuse}; END",
        ]

    def drop_quantity_guards(self, table: str, column: str) -> list[str]:
        return [f"DROP TRIGGER IF EXISTS {name}" for name in trigger_names(table, column)]

    def quantity_columns(self, connection: Connection) -> list[tuple[str, str, bool]]:
        tables = connection.execute(
            text(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' AND name <> 'alembic_version' ORDER BY name"
            )
        ).scalars()
        found = []
        for table in list(tables):
            for row in connection.execute(text(f"PRAGMA table_info('{table}')")).mappings():
                if is_quantity(table, row["name"]):
                    nullable = not row["notnull"] and not row["pk"]
                    found.append((table, str(row["name"]), nullable))
        return found

    def quantity_guard_names(self, connection: Connection) -> list[str]:
        names = connection.execute(
            text(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' "
                "AND substr(name, 1, length(:prefix)) = :prefix"
            ),
            {"prefix": GUARD_PREFIX},
        ).scalars()
        return list(names)


def fire_before(connection: Connection, table: str, later: Collection[str]) -> None:
    """Make every trigger of ``table`` but those named in ``later`` again, in the order they
    were made: SQLite fires a table's triggers newest first, so those then fire before the
    ``later`` ones (a migration adding a guard keeps the older guards' refusals, and their
    words, first)."""
    others = [
        (name, sql)
        for name, sql in connection.execute(
            text(
                "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' "
                "AND tbl_name = :table ORDER BY rowid"
            ),
            {"table": table},
        )
        if name not in later
    ]
    for name, sql in others:
        connection.exec_driver_sql(f'DROP TRIGGER "{name}"')
        connection.exec_driver_sql(sql)
