"""The ledger's statements, one module per database, behind one protocol.

The engine's algorithm (``ledger.write``, ``ledger.chain``, ``ledger.accounts``) is written once
and asks a ``Store`` for what differs between databases, which is only statements:

* ``ledger.store.postgresql``: fixed SQL sent through psycopg, prepared, with the write (header,
  sealing queue, balance changes, entries) in one statement; sealing in the background;
* ``ledger.store.sqlite``: SQLAlchemy Core statements; one writer at a time holds the whole
  database, so row locks are nothing, and each write seals its own link;
* their DDL (triggers, row seals, quantity guards) in ``postgresql_ddl`` and ``sqlite_ddl``.

``of(bind)`` chooses the store once per database (``for_url(url)`` before any engine exists); no
other module asks which database it is on.  What the callers need to know of a database is a
property named by why they need it (``Store.embedded``, say), not the database's name.  Users of
the engine send their own fixed SQL the same way (``Statement``, ``Store.run``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import URL, Connection, Engine, Table, make_url
from sqlalchemy.orm import Session
from sqlalchemy.types import TypeEngine

if TYPE_CHECKING:
    from ledger.account_cache import AccountRow
    from ledger.lines import Line
    from ledger.verify_links import Segment
    from ledger.verify_report import Progress

Row = Sequence[Any]
Bind = Session | Connection | Engine

#: execution option of a connection that only reads (``ledger.db.Database.reader``)
READ_ONLY = "ledger_read_only"


@dataclass(frozen=True, eq=False)
class Statement:
    """Fixed SQL a caller sends as it is, prepared once per connection where the store can.

    ``sql`` is one text every database runs: ``:name`` parameters, and ``{for_update}``,
    ``{for_no_key_update}`` or ``{for_key_share}`` where a row lock goes (PostgreSQL's clauses;
    on SQLite, where one writer holds the whole database, they are left out).  A statement that
    cannot be written once gives ``postgresql`` and ``sqlite`` texts instead; either may be
    several statements run in order, the last one's rows being the answer.  ``types`` and
    ``columns``: the SQLAlchemy types of parameters and of result columns that a driver does not
    convert by itself (timestamps and JSON on SQLite).  A ``:name`` inside a string literal
    would be taken for a parameter: pass such values as parameters.
    """

    sql: str | None = None
    postgresql: str | tuple[str, ...] | None = None
    sqlite: str | tuple[str, ...] | None = None
    types: Mapping[str, TypeEngine[Any]] = field(default_factory=dict)
    columns: Mapping[str, TypeEngine[Any]] = field(default_factory=dict)

    def texts(self, store: str) -> tuple[str, ...]:
        """The texts ``store`` runs, in order."""
        own = getattr(self, store)
        chosen = own if own is not None else self.sql
        if chosen is None:
            raise ValueError(f"this statement has no text for {store}")
        return (chosen,) if isinstance(chosen, str) else chosen


@dataclass(frozen=True)
class Links:
    """Chain links to insert: parallel lists, one element per link."""

    chained_at: datetime
    seqs: list[int]
    transaction_ids: list[int]
    prev_hashes: list[str]
    hashes: list[str]


class Ddl(Protocol):
    """A store's schema statements: the ledger's triggers, row seals and quantity guards."""

    #: the column of ``ledger_row_seals`` that orders seals as they were written
    seal_position_column: str
    #: the ledger's triggers (``ledger.ddl``), and what drops them
    install_triggers: list[str]
    drop_triggers: list[str]
    #: what sealing any table needs first (``ledger.row_seals``), and what drops it once none is
    seal_functions: list[str]
    drop_seal_functions: list[str]
    #: what lets a migration rewrite or drop seals (``ledger.row_seals.reseal``); the seals'
    #: guards come back with ``seal_functions``
    unguard_seals: list[str]
    #: what makes the transaction read timestamps in UTC, as seals hold them
    in_utc: list[str]

    def seal_table(self, name: str, id_column: str, columns: Sequence[str]) -> list[str]: ...
    def unseal_table(self, name: str) -> list[str]: ...
    def seal_once(self, name: str, id_column: str, column: str) -> list[str]: ...
    def unseal_once(self, name: str, column: str) -> list[str]: ...
    def sealed_content(self, columns: Sequence[str], alias: str) -> str: ...
    def sealed_row_id(self, id_column: str, alias: str) -> str: ...
    def seal_key_join(self, connection: Connection, table: str, id_column: str) -> str: ...
    def quantity_guards(self, table: str, column: str, *, nullable: bool) -> list[str]: ...
    def drop_quantity_guards(self, table: str, column: str) -> list[str]: ...
    def quantity_columns(self, connection: Connection) -> list[tuple[str, str, bool]]: ...
    def quantity_guard_names(self, connection: Connection) -> list[str]: ...


class Store(Protocol):
    """What differs between databases, as the engine asks for it."""

    #: the SQLAlchemy dialect this store serves
    name: str
    #: an account id, once seen, always names the same account (a sequence never gives one id
    #: twice), so accounts may be cached; SQLite may reuse the id of a creation rolled back
    ids_are_never_reused: bool
    #: the hash chain is sealed after commits, in the background (``ledger.sealer``), rather
    #: than inside each write
    seals_in_background: bool
    #: the database is a file this process opens itself, not a server: every process using it
    #: runs on this machine (and finds this machine's files, such as the instance folder), and
    #: its connections take no server's connection slots, nor can a server close them idle
    embedded: bool
    #: the verifier's link hashes are computed by the database (``check_segment``): a worker
    #: checking a segment only waits on it, so threads serve where otherwise processes must
    hashes_in_database: bool
    ddl: Ddl

    def engine_options(
        self, options: Mapping[str, Any], *, prepared_statements: bool
    ) -> dict[str, Any]:
        """``create_engine``'s keyword arguments: the caller's ``options`` with this database's
        defaults.  ``prepared_statements=False``: send every statement unprepared (a server
        behind a pooler in transaction mode)."""
        ...

    def configure_engine(self, engine: Engine) -> None:
        """Set up what each of ``engine``'s connections and transactions needs."""
        ...

    def snapshot(self, connection: Connection) -> Connection:
        """``connection`` made to see one moment in all its statements (it only reads)."""
        ...

    def reopens(self, url: URL) -> bool:
        """Whether another connection opened from ``url`` (in a worker process, say) reaches the
        same database: an in-memory database is its one connection's own."""
        ...

    def check_segment(
        self, connection: Connection, first: int, last: int, progress: Progress | None
    ) -> Segment:
        """Recompute chain links ``first``..``last`` (``ledger.verification.check_segment``)."""
        ...

    def lock_balances(self, session: Session, account_ids: Sequence[int]) -> Sequence[Row]:
        """Lock the limited balance rows among ``account_ids``, ascending; return them as
        ``AccountRow`` fields (id, asset, limits, posted and pending sides)."""
        ...

    def lock_headers(self, session: Session, transaction_ids: Sequence[int]) -> None:
        """Lock these transaction headers, ascending, without blocking rows that reference them."""
        ...

    def write(
        self,
        session: Session,
        header: Mapping[str, Any],
        lines: Sequence[Line],
        accounts: Mapping[int, AccountRow],
    ) -> int | None:
        """Insert the header (``None`` when its idempotency key is taken: nothing written),
        apply ``lines.deltas``, insert the entries with balance-after (``lines.later_posted``)
        and queue the transaction for sealing.  A refused write raises ``IntegrityError``."""
        ...

    def read_balances(
        self, session: Session, account_ids: Sequence[int], now: datetime, *, for_update: bool
    ) -> Sequence[Row]:
        """Per account, ascending: id, asset, posted and pending sides summed over its slots and
        net of reservations expired by ``now``, and its version; locked if ``for_update``."""
        ...

    def advisory_lock(self, session: Session, key: int, *, shared: bool = False) -> None:
        """Hold lock ``key`` until the unit of work ends: alone, or ``shared`` with other
        shared holders (a holder alone waits for them all, and they for it)."""
        ...

    def run(
        self, bind: Session | Connection, statement: Statement, params: Mapping[str, Any]
    ) -> list[Row]:
        """Run a caller's fixed statement in the unit of work; its rows (none: ``[]``)."""
        ...

    def insert(self, table: Table) -> Any:
        """An INSERT into ``table`` that offers ``on_conflict_do_nothing``."""
        ...

    def take_sealer_lock(self, connection: Connection, *, wait: bool) -> bool:
        """Become the one sealer until the transaction ends; ``False``: another one is."""
        ...

    def take_batch(self, connection: Connection, limit: int) -> tuple[Row | None, list[Row]]:
        """Take up to ``limit`` queued transactions off the queue: the chain's last link
        (``(seq, hash)``, ``None`` if empty) and their header columns then entry columns
        (``ledger.canonical``), a row per entry, by transaction then entry id."""
        ...

    def head_seq(self, connection: Connection) -> int:
        """The chain's last ``seq`` (0 when empty)."""
        ...

    def insert_links(self, connection: Connection, links: Links) -> None:
        """Append ``links`` to the chain."""
        ...

    def server_settings(self, connection: Connection, names: Sequence[str]) -> dict[str, str]:
        """The server's values of settings ``names`` (none where the database has no server)."""
        ...


_STORES: dict[str, Store] = {}


def of(bind: Bind) -> Store:
    """The store of ``bind``'s database: the one place the dialect is looked at."""
    if isinstance(bind, Session):
        engine = bind.bind if bind.bind is not None else bind.get_bind()
        return _named(engine.dialect.name)
    return _named(bind.dialect.name)


def for_url(url: str | URL) -> Store:
    """The store of the database ``url`` names, before any engine exists."""
    return _named(make_url(url).get_backend_name())


def _named(dialect: str) -> Store:
    found = _STORES.get(dialect)
    if found is None:
        found = _STORES[dialect] = _make(dialect)
    return found


def _make(dialect: str) -> Store:
    # imported here: the stores import the engine modules that import this one
    if dialect == "postgresql":
        from ledger.store.postgresql import PostgresqlStore

        return PostgresqlStore()
    if dialect == "sqlite":
        from ledger.store.sqlite import SqliteStore

        return SqliteStore()
    raise ValueError(f"the ledger has no store for {dialect}")
