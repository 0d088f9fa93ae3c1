"""Load a large, valid ledger fast: transactions written with COPY, chained and balanced exactly
as the engine would write them, so ``verify`` passes over them."""

from __future__ import annotations

import io
from datetime import UTC, date, datetime, timedelta

import psycopg

from bench.common import first, libpq
from ledger import canonical as chain

HEADER = chain.HEADER_COLUMNS
ENTRY = chain.ENTRY_COLUMNS


def load_pairs(url: str, account_a: int, account_b: int, count: int, tag: str, asset: str) -> None:
    """``count`` one-unit transactions alternating b→a and a→b (a never goes negative)."""
    with psycopg.connect(libpq(url)) as conn:
        next_tx, next_entry, seq, prev = _positions(conn)
        state = _balances(conn, [account_a, account_b])
        tx_buf, entry_buf, link_buf = io.StringIO(), io.StringIO(), io.StringIO()
        base = datetime(2026, 1, 1, tzinfo=UTC)
        for i in range(count):
            src, dst = (account_b, account_a) if i % 2 == 0 else (account_a, account_b)
            tx_id, seq = next_tx + i, seq + 1
            header = _header(tx_id, f"bulk:{tag}:{i}", base + timedelta(microseconds=i))
            entries = []
            for account, amount in ((src, -1), (dst, 1)):
                debits, credits, version = state[account]
                debits, credits = (debits + 1, credits) if amount < 0 else (debits, credits + 1)
                state[account] = (debits, credits, version + 1)
                entries.append(
                    _entry(next_entry, account, asset, amount, credits - debits, version + 1)
                )
                next_entry += 1
            digest = chain.link_hash(prev, chain.canonical(header, entries))
            _write_rows(tx_buf, entry_buf, link_buf, header, entries, seq, prev, digest)
            prev = digest
        _copy(conn, tx_buf, entry_buf, link_buf)
        _store_balances(conn, state, next_tx + count, next_entry)
        conn.commit()
        # as after any bulk load: statistics for the planner now, not whenever autovacuum gets
        # to it (the journal export's plan, and speed, depended on which came first)
        conn.execute("ANALYZE ledger_transactions, ledger_entries, ledger_chain")
        conn.commit()


def _positions(conn: psycopg.Connection) -> tuple[int, int, int, str]:
    tx = first(conn, "SELECT coalesce(max(id), 0) + 1 FROM ledger_transactions")
    entry = first(conn, "SELECT coalesce(max(id), 0) + 1 FROM ledger_entries")
    head = conn.execute("SELECT seq, hash FROM ledger_chain ORDER BY seq DESC LIMIT 1").fetchone()
    seq, prev = (head[0], head[1]) if head else (0, chain.GENESIS)
    return tx, entry, seq, prev


def _balances(conn: psycopg.Connection, ids: list[int]) -> dict[int, tuple[int, int, int]]:
    rows = conn.execute(
        "SELECT account_id, debits_posted, credits_posted, version FROM ledger_balances "
        "WHERE account_id = ANY(%s) AND slot = 0",  # the bulk history goes to slot 0
        (ids,),
    ).fetchall()
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def _header(tx_id: int, key: str, recorded_at: datetime) -> dict[str, object]:
    return {
        "id": tx_id,
        "kind": "bulk",
        "state": "sealed",
        "pending": False,
        "expires_at": None,
        "reverses_id": None,
        "idempotency_key": key,
        "request_hash": "0" * 64,
        "effective_on": date(2026, 1, 1),
        "recorded_at": recorded_at,
        "actor": "bench",
        "request_id": None,
        "memo": None,
    }


def _entry(
    entry_id: int, account: int, asset: str, amount: int, after: int, version: int
) -> dict[str, object]:
    return {
        "id": entry_id,
        "account_id": account,
        "asset": asset,
        "amount": amount,
        "phase": "posted",
        "balance_after": after,
        "account_version": version,
        "effective_on": date(2026, 1, 1),
        "resolves_id": None,
        "resolution": None,
        "slot": 0,
    }


def _cell(value: object) -> str:
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def _write_rows(tx_buf, entry_buf, link_buf, header, entries, seq, prev, digest) -> None:  # type: ignore[no-untyped-def]
    tx_buf.write("\t".join(_cell(header[c]) for c in HEADER) + "\n")
    for e in entries:
        entry_buf.write("\t".join(_cell(v) for v in (*[e[c] for c in ENTRY], header["id"])) + "\n")
    link_buf.write(
        f"{seq}\t{header['id']}\t{prev}\t{digest}\t{header['recorded_at'].isoformat()}\n"
    )


def _copy(conn: psycopg.Connection, tx_buf, entry_buf, link_buf) -> None:  # type: ignore[no-untyped-def]
    # the bulk load is the engine's own output, so the balance trigger's per-row re-check is skipped
    conn.execute("SET session_replication_role = replica")
    for table, columns, buf in (
        ("ledger_transactions", HEADER, tx_buf),
        ("ledger_entries", [*ENTRY, "transaction_id"], entry_buf),
        ("ledger_chain", ["seq", "transaction_id", "prev_hash", "hash", "chained_at"], link_buf),
    ):
        with conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            copy.write(buf.getvalue())
    conn.execute("SET session_replication_role = origin")


def _store_balances(conn: psycopg.Connection, state, next_tx: int, next_entry: int) -> None:  # type: ignore[no-untyped-def]
    for account, (debits, credits, version) in state.items():
        conn.execute(
            "UPDATE ledger_balances SET debits_posted = %s, credits_posted = %s, version = %s "
            "WHERE account_id = %s AND slot = 0",
            (debits, credits, version, account),
        )
    conn.execute(
        "SELECT setval(pg_get_serial_sequence('ledger_transactions', 'id'), %s)", (next_tx,)
    )
    conn.execute("SELECT setval(pg_get_serial_sequence('ledger_entries', 'id'), %s)", (next_entry,))
