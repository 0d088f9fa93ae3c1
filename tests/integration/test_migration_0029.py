"""Migration 0029 on both databases: an account's lots and reservations, the plans and the
accounts each have an index in their listing's order, so that a later page (after a cursor) is
read from the index in order, not sorted from every row before it; down to 0028 and up again
keeps the listings whole."""

from __future__ import annotations

import re
from typing import Any

from alembic import command
from flask import Flask

from api.schema_check import alembic_config
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit, at, ok, statements_sent
from tests.integration.migration_kit import app_on, rows

NEW = {
    "lots": {"ix_lots_account_id_created_at_label"},
    "reservations": {"ix_reservations_account_id_created_at_id"},
    "plans": {"ix_plans_created_at_id", "ix_plans_lgu_id_created_at_id"},
    "bank_accounts": {"ix_bank_accounts_created_at_id", "ix_bank_accounts_holder_id_created_at_id"},
}
REPLACED = {
    "lots": "ix_lots_account_id",
    "reservations": "ix_reservations_account_id",
    "plans": "ix_plans_lgu_id",
    "bank_accounts": "ix_bank_accounts_holder_id",
}


def indexes(url: str, table: str) -> set[str]:
    """The names of ``table``'s indexes (read from the catalogue: SQLAlchemy does not reflect
    an index on an expression from SQLite)."""
    if url.startswith("sqlite"):
        sql = "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = :table"
    else:
        sql = "SELECT indexname FROM pg_indexes WHERE tablename = :table"
    return {str(name) for (name,) in rows(url, sql, table=table)}


def world(kit: Kit) -> dict[str, Any]:
    """A holder with two accounts (the first with three lots and three reservations), an LGU
    with three plans, and the tokens to page them."""
    with at("2026-06-01 12:00:00"):
        holder = kit.holder("Bank")
        areas = [{"category": "replacement_wetland", "area_sqft": 10**9}]
        site = {"name": "Site", "holder_id": holder["id"], "service_area": 5, "county": "Lyon"}
        site_id = ok(kit.api.post("/bank-sites", {**site, "credit_areas": areas}))["id"]
        accounts = [kit.account(holder["id"]) for _ in range(2)]
        lgu = kit.lgu()
        for _ in range(3):
            kit.wetland_deposit(accounts[0], site_id, lgu["id"], 10_000)
        plans = [kit.plan(lgu, received_on="2026-06-01", area_sqft=9_000) for _ in range(3)]
        for _ in range(3):
            kit.reserve(accounts[0], plans[0]["id"], "BSA5-T2-U", 100)
    return {"holder": holder, "account": accounts[0], "lgu": lgu}


def statements(app: Flask) -> Any:
    """The statements the app sends its database meanwhile, with their parameters."""
    return statements_sent(app.extensions["wetbank.db"].engine)


def later_page_plan(app: Flask, kit: Kit, path: str, table: str, token: str) -> str:
    """The plan of the query that reads the second page of ``path`` from ``table``, as the
    database would run it were the table large (PostgreSQL: no sequential or bitmap scan, which
    read every row, and a sort only where nothing else gives the order)."""
    cursor = ok(kit.api.get(path, token=token, query_string={"limit": 1}), 200)["next_cursor"]
    assert cursor, path
    with statements(app) as sent:
        body = ok(kit.api.get(path, token=token, query_string={"limit": 1, "cursor": cursor}), 200)
    assert body["items"], path
    (statement, parameters) = [
        (s, p) for s, p in sent if f"FROM {table}" in s and "ORDER BY" in s and "LIMIT" in s
    ][0]
    engine = app.extensions["wetbank.db"].engine
    raw = engine.raw_connection()
    try:
        dbapi = raw.cursor()
        if engine.dialect.name == "postgresql":
            for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
                dbapi.execute(f"SET {setting} = off")
            dbapi.execute("EXPLAIN " + statement, parameters)
            return "\n".join(str(row[0]) for row in dbapi.fetchall())
        dbapi.execute("EXPLAIN QUERY PLAN " + statement, parameters)
        return "\n".join(str(row[-1]) for row in dbapi.fetchall())
    finally:
        raw.rollback()
        raw.close()


def scan_conditions(plan: str, index: str, table: str) -> list[str]:
    """The conditions (``Index Cond: …``, ``Filter: …``) of a PostgreSQL ``plan``'s scan of
    ``table`` itself (not of an alias of it, as a cursor's subquery reads it) by ``index``."""
    lines = plan.splitlines()
    heading = re.compile(rf"Index (Only )?Scan using {index} on {table} +\(")
    (start,) = [n for n, line in enumerate(lines) if heading.search(line)]
    depth = len(lines[start]) - len(lines[start].lstrip())
    found = []
    for line in lines[start + 1 :]:
        if len(line) - len(line.lstrip()) <= depth or line.lstrip().startswith("->"):
            break
        found.append(line.strip())
    return found


def test_0029_pages_each_listing_from_its_index_in_order(fresh_db_url: str) -> None:
    app = app_on(fresh_db_url)
    try:
        for table, names in NEW.items():
            assert names <= indexes(fresh_db_url, table) and REPLACED[table] not in indexes(
                fresh_db_url, table
            )
        kit = Kit(Api(app.test_client(), make_token(app, "board")), app)
        made = world(kit)
        holder, lgu, account = made["holder"]["token"], made["lgu"]["token"], made["account"]
        listings = [
            (f"/accounts/{account}/lots", "lots", holder, "ix_lots_account_id_created_at_label"),
            (
                f"/accounts/{account}/reservations",
                "reservations",
                holder,
                "ix_reservations_account_id_created_at_id",
            ),
            ("/plans", "plans", kit.api.token, "ix_plans_created_at_id"),
            ("/plans", "plans", lgu, "ix_plans_lgu_id_created_at_id"),
            ("/accounts", "bank_accounts", kit.api.token, "ix_bank_accounts_created_at_id"),
            ("/accounts", "bank_accounts", holder, "ix_bank_accounts_holder_id_created_at_id"),
        ]
        for path, table, token, index in listings:
            plan = later_page_plan(app, kit, path, table, token or "")
            assert index in plan, (path, plan)
            # read in the index's order: no sort of the rows before the page
            assert "Sort" not in plan and "TEMP B-TREE" not in plan, (path, plan)
        # the lots (all three made at one instant): a later page starts at the cursor's lot in
        # the index, its whole place in the order (time, label's length, label) the scan's
        # bound, not its time alone with the rest a filter of every lot made at that instant
        lots = later_page_plan(app, kit, listings[0][0], "lots", holder)
        if fresh_db_url.startswith("sqlite"):
            # SQLite seeks on the row's leading plain column only (length(label) ends them)
            assert "ix_lots_account_id_created_at_label (account_id=? AND created_at>?)" in lots
        else:
            conditions = scan_conditions(lots, "ix_lots_account_id_created_at_label", "lots")
            (bound,) = [c for c in conditions if c.startswith("Index Cond:")]
            assert "ROW(created_at, length((label)::text), (label)::text) > ROW(" in bound, lots
            assert not [c for c in conditions if c.startswith("Filter:")], lots
            # a two-column order (time, then id) likewise: the page starts at the cursor's row
            # among every row of its time, bounded by the whole of it
            plans = later_page_plan(app, kit, "/plans", "plans", kit.api.token or "")
            conditions = scan_conditions(plans, "ix_plans_created_at_id", "plans")
            (bound,) = [c for c in conditions if c.startswith("Index Cond:")]
            assert "ROW(created_at, (id)::text) > ROW(" in bound, plans
    finally:
        app.extensions["wetbank.db"].dispose()


def test_0029_down_and_up_keeps_the_listings(fresh_db_url: str) -> None:
    app = app_on(fresh_db_url)
    try:
        kit = Kit(Api(app.test_client(), make_token(app, "board")), app)
        made = world(kit)
    finally:
        app.extensions["wetbank.db"].dispose()
    config = alembic_config(fresh_db_url)
    command.downgrade(config, "0028")
    app = app_on(fresh_db_url)
    try:
        for table, names in NEW.items():
            assert not names & indexes(fresh_db_url, table) and REPLACED[table] in indexes(
                fresh_db_url, table
            )
    finally:
        app.extensions["wetbank.db"].dispose()
    command.upgrade(config, "head")
    assert rows(fresh_db_url, "SELECT count(*) FROM lots")[0][0] == 3
    app = app_on(fresh_db_url)
    try:
        kit = Kit(Api(app.test_client(), make_token(app, "board")), app)
        for listing in ("lots", "reservations"):
            path = f"/accounts/{made['account']}/{listing}"
            body = ok(kit.api.get(path, query_string={"limit": 2}), 200)
            rest = ok(kit.api.get(path, query_string={"cursor": body["next_cursor"]}), 200)
            assert len(body["items"]) == 2 and len(rest["items"]) == 1, listing
    finally:
        app.extensions["wetbank.db"].dispose()
