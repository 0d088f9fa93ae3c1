"""Database-side invariants the ORM cannot be trusted with (docs/reliability.md, guarantees 1
and 2).

Every transaction balances (per asset and phase, at least two entries), checked by the database
when it is written; entries, chain links and sealed transactions refuse UPDATE and DELETE.  The
triggers that do it are each store's (``ledger.store.postgresql_ddl``, ``sqlite_ddl``).
"""

from __future__ import annotations

from sqlalchemy import Connection, text

from ledger import store
from ledger.store.postgresql_ddl import CHECK_BALANCED_FUNCTION

__all__ = ["CHECK_BALANCED_FUNCTION", "drop_triggers", "install_triggers"]


def install_triggers(connection: Connection) -> None:
    """Create the ledger's triggers on the connection's database."""
    _run_excluding_sealers(connection, store.of(connection).ddl.install_triggers)


def drop_triggers(connection: Connection) -> None:
    """Drop the ledger's triggers (migrations' downgrade, and tamper tests)."""
    _run_excluding_sealers(connection, store.of(connection).ddl.drop_triggers)


def _run_excluding_sealers(connection: Connection, statements: list[str]) -> None:
    """Run DDL on the ledger's tables as the one sealer, to the end of the transaction.

    A background sealer reads the chain head and the queue; CREATE and DROP TRIGGER lock table
    after table, so the two could deadlock.  Sealers take the sealer's lock before touching any
    table, so they wait or skip instead."""
    store.of(connection).take_sealer_lock(connection, wait=True)
    for statement in statements:
        connection.execute(text(statement))
