"""Alembic: upgrade → downgrade → upgrade on both databases; a schema behind the code is refused."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from alembic import command
from click.testing import CliRunner
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.exc import IntegrityError

from api import create_app
from api.cli import main
from api.schema_check import alembic_config
from ledger import Database, Leg, Meta, create_account, transfer, verify
from ledger.sealer import seal_all
from tests.api.web_kit import parse, signed_in
from tests.dbs import create_database, drop_database
from tests.integration.ledger_kit import (
    open_accounts,
    unique,
    write_raw_transaction,
    write_raw_with_an_entry_after_an_early_check,
)

LEDGER_TABLES = {"ledger_accounts", "ledger_balances", "ledger_transactions", "ledger_entries"}


def _tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_migrations_upgrade_downgrade_and_upgrade_again(backend: str, tmp_path: Path) -> None:
    url = create_database(backend, tmp_path)
    try:
        config = alembic_config(url)
        command.upgrade(config, "head")
        assert LEDGER_TABLES | {"lots", "plans", "payments"} <= _tables(url)
        command.downgrade(config, "base")
        assert not (LEDGER_TABLES & _tables(url))
        command.upgrade(config, "head")
        assert LEDGER_TABLES <= _tables(url)
    finally:
        drop_database(url)


def test_a_database_behind_the_code_is_refused_with_the_command_to_run(
    backend: str, tmp_path: Path
) -> None:
    url = create_database(backend, tmp_path)
    app = create_app({"DATABASE_URL": url, "PROPAGATE_EXCEPTIONS": False})
    try:
        response = app.test_client().get("/api/v1/reports/credit-availability")
        assert response.status_code == 503
        assert response.json["code"] == "schema_behind"
        assert "wetbank db upgrade" in response.json["detail"]
        # liveness answers: the process is up, only its database is behind
        assert app.test_client().get("/api/v1/health").status_code == 200
        runner = CliRunner()
        served = runner.invoke(
            main,
            ["serve", "--port", "1"],
            env={"DATABASE_URL": url, "WETBANK_SECRET_KEY": "k" * 64},
        )
        assert served.exit_code != 0
        assert "wetbank db upgrade" in served.output
        upgraded = runner.invoke(main, ["db", "upgrade"], env={"DATABASE_URL": url})
        assert upgraded.exit_code == 0, upgraded.output
        assert app.test_client().get("/api/v1/reports/credit-availability").status_code == 200
    finally:
        app.extensions["wetbank.db"].dispose()
        drop_database(url)


def test_the_demo_loads_once_and_prints_a_token_per_role(backend: str, tmp_path: Path) -> None:
    url = create_database(backend, tmp_path)
    runner = CliRunner()
    try:
        assert runner.invoke(main, ["db", "upgrade"], env={"DATABASE_URL": url}).exit_code == 0
        first = runner.invoke(main, ["demo"], env={"DATABASE_URL": url})
        second = runner.invoke(main, ["demo"], env={"DATABASE_URL": url})
        assert first.exit_code == 0 and second.exit_code == 0, first.output + second.output
        for role in ("holder", "lgu", "board"):
            assert f"{role} token:" in first.output
        app = create_app({"DATABASE_URL": url})
        token = second.output.strip().splitlines()[-1].split()[-1]
        client = app.test_client()
        headers = {"Authorization": f"Bearer {token}"}
        accounts = client.get("/api/v1/accounts", headers=headers).json["items"]
        assert len(accounts) == 2  # loaded once, not twice
        # every token the demo made is in the audit trail, as one made through the API is
        events = client.get("/api/v1/audit/events?limit=500", headers=headers).json["items"]
        made = [(e["kind"], e["actor"]) for e in events if e["kind"] == "token_created"]
        assert made == [("token_created", "demo")] * 6
        assert client.get("/api/v1/audit/verify", headers=headers).json["ok"] is True
        app.extensions["wetbank.db"].dispose()
        verified = runner.invoke(main, ["audit", "verify"], env={"DATABASE_URL": url})
        assert verified.exit_code == 0 and verified.output.startswith("ok:")
    finally:
        drop_database(url)


def test_the_demo_holder_has_a_pending_reservation_it_may_void(
    backend: str, tmp_path: Path
) -> None:
    """A new user trying the holder's token finds a reservation of its own, pending, with its
    Void button on the account's reservations page; voided through the API, it stays voided
    when the demo is run again (loaded once), and that run still answers with its tokens."""
    url = create_database(backend, tmp_path)
    runner = CliRunner()
    try:
        assert runner.invoke(main, ["db", "upgrade"], env={"DATABASE_URL": url}).exit_code == 0
        first = runner.invoke(main, ["demo"], env={"DATABASE_URL": url})
        assert first.exit_code == 0, first.output
        (line,) = [x for x in first.output.splitlines() if "holder token:" in x]
        token = line.split()[-1]
        app = create_app({"DATABASE_URL": url})
        api = app.test_client()
        headers = {"Authorization": f"Bearer {token}"}
        (account,) = api.get("/api/v1/accounts", headers=headers).json["items"]
        path = f"/api/v1/accounts/{account['id']}/reservations"
        (held,) = api.get(path, headers=headers).json["items"]
        assert held["status"] == "pending"
        page = parse(
            signed_in(app.test_client(), token)
            .get(f"/accounts/{account['id']}/reservations")
            .get_data(as_text=True)
        )
        row = page.one("tr", data_reservation_id=held["id"])
        assert row.one("button").text == "Void"
        voided = api.post(f"/api/v1/reservations/{held['id']}/void", headers=headers)
        assert voided.status_code == 200 and voided.json["status"] == "voided", voided.json

        again = runner.invoke(main, ["demo"], env={"DATABASE_URL": url})
        assert again.exit_code == 0 and "holder token:" in again.output, again.output
        (still,) = api.get(path, headers=headers).json["items"]
        assert (still["id"], still["status"]) == (held["id"], "voided")
        app.extensions["wetbank.db"].dispose()
    finally:
        drop_database(url)


def test_balance_slots_migrate_down_and_up_with_a_ledger_that_still_verifies(
    backend: str, tmp_path: Path
) -> None:
    """0004 (balance slots) keeps every existing row as slot 0 and every sealed link's bytes;
    it refuses to go back down once an entry was written to another slot."""
    url = create_database(backend, tmp_path)
    config = alembic_config(url)
    day = date(2026, 3, 2)
    try:
        command.upgrade(config, "head")
        db = Database.from_url(url)
        with db.transaction() as session:
            issuer = create_account(session, code="i", asset="X", name="issuer")
            holder = create_account(session, code="h", asset="X", name="h", no_overdraft=True)
            for n in range(1, 6):
                transfer(session, "t", [Leg(issuer, holder, n)], Meta(f"k{n}", day))
        seal_all(db)
        db.dispose()
        command.downgrade(config, "0003")
        command.upgrade(config, "head")
        db = Database.from_url(url)
        with db.engine.connect() as connection:
            report = verify(connection)
        assert report.ok, report.first_broken
        assert report.transactions_checked == 5
        if backend == "postgresql":  # SQLite writes slot 0 only
            with db.transaction() as session:
                hot = create_account(session, code="hot", asset="X", name="hot", slots=4)
            for n in range(12):
                with db.transaction() as session:
                    transfer(session, "t", [Leg(hot, holder, 1)], Meta(f"h{n}", day))
            db.dispose()
            with pytest.raises(RuntimeError, match="balance slots"):
                command.downgrade(config, "0003")
        db.dispose()
    finally:
        drop_database(url)


def test_existing_issuance_accounts_get_their_slots(backend: str, tmp_path: Path) -> None:
    url = create_database(backend, tmp_path)
    config = alembic_config(url)
    try:
        command.upgrade(config, "0003")
        engine = create_engine(url)
        with engine.begin() as connection:
            for n, code in enumerate(("issuance:C", "withdrawn:C", "lot:1", "usd:fees"), 1):
                connection.execute(
                    text(
                        "INSERT INTO ledger_accounts (id, code, asset, name, no_overdraft, "
                        "no_overcredit, created_at) VALUES (:n, :code, 'X', 'x', :limited, "
                        "false, '2026-01-01')"
                    ),
                    {"n": n, "code": code, "limited": code == "lot:1"},
                )
                connection.execute(
                    text(
                        "INSERT INTO ledger_balances (account_id, asset, no_overdraft, "
                        "no_overcredit, debits_posted, credits_posted, debits_pending, "
                        "credits_pending, version) VALUES (:n, 'X', :limited, false, 0, 0, 0, "
                        "0, 0)"
                    ),
                    {"n": n, "limited": code == "lot:1"},
                )
        command.upgrade(config, "head")
        with engine.connect() as connection:
            rows = connection.execute(
                text(
                    "SELECT a.code, a.slots, count(*) FROM ledger_accounts AS a JOIN "
                    "ledger_balances AS b ON b.account_id = a.id GROUP BY a.code, a.slots"
                )
            ).all()
        engine.dispose()
        assert {code: (slots, n) for code, slots, n in rows} == {
            "issuance:C": (8, 8),
            "withdrawn:C": (1, 1),
            "lot:1": (1, 1),
            "usd:fees": (1, 1),
        }
    finally:
        drop_database(url)


@pytest.mark.parametrize("revision", ["0004", "head"])
def test_the_balance_check_refuses_an_unbalanced_transaction_before_and_after_0005(
    backend: str, tmp_path: Path, revision: str
) -> None:
    """0005 makes PostgreSQL's deferred balance check read the entries in one pass; going down
    to 0004 puts back the two-read check. Either way an unbalanced transaction is refused and a
    balanced one commits."""
    if backend != "postgresql":
        pytest.skip("0005 and 0006 change only PostgreSQL's trigger function")
    url = create_database(backend, tmp_path)
    config = alembic_config(url)
    try:
        command.upgrade(config, "head")
        if revision == "0004":
            command.downgrade(config, "0004")
        db = Database.from_url(url)
        asset = unique("X")
        a, b = open_accounts(db, asset, False, False)
        with pytest.raises(IntegrityError, match="unbalanced"):
            write_raw_transaction(db, [(a, asset, -5), (b, asset, 4)])
        write_raw_transaction(db, [(a, asset, -5), (b, asset, 5)])
        with db.engine.connect() as connection:
            source = connection.execute(
                text("SELECT prosrc FROM pg_proc WHERE proname = 'ledger_check_balanced'")
            ).scalar_one()
        db.dispose()
        assert ("bool_and" in source) == (revision == "head")
        assert source.count("RETURN NULL") == 1  # no firing returns early: 0005's skip (0006)
    finally:
        drop_database(url)


# what 0005 installed as first released: entries of a header inserted by the same database
# transaction skipped their check (0006 withdraws it)
_CHECK_WITH_SKIP = """
    CREATE OR REPLACE FUNCTION ledger_check_balanced() RETURNS trigger AS $$
    DECLARE tx bigint;
    BEGIN
        IF TG_TABLE_NAME = 'ledger_entries' THEN
            tx := NEW.transaction_id;
            IF EXISTS (SELECT FROM ledger_transactions
                       WHERE id = tx AND xmin = pg_current_xact_id()::xid) THEN
                RETURN NULL;
            END IF;
        ELSE
            tx := NEW.id;
        END IF;
        IF NOT (SELECT coalesce(sum(g.n) >= 2 AND bool_and(g.total = 0), false)
                FROM (SELECT count(*) AS n, sum(amount) AS total FROM ledger_entries
                      WHERE transaction_id = tx GROUP BY asset, phase) AS g) THEN
            RAISE EXCEPTION 'ledger transaction % is unbalanced or has fewer than 2 entries', tx
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql
"""


def test_0006_closes_the_hole_0005_first_opened(backend: str, tmp_path: Path) -> None:
    """A database that ran 0005 as first released committed an unbalanced transaction whose
    last entry came after an early check; after 0006 it refuses it."""
    if backend != "postgresql":
        pytest.skip("0005 and 0006 change only PostgreSQL's trigger function")
    url = create_database(backend, tmp_path)
    config = alembic_config(url)
    try:
        command.upgrade(config, "0005")
        db = Database.from_url(url)
        with db.engine.begin() as connection:
            connection.execute(text(_CHECK_WITH_SKIP))
        asset = unique("X")
        a, b = open_accounts(db, asset, False, False)
        write_raw_with_an_entry_after_an_early_check(db, asset, a, b)  # the hole: it commits
        db.dispose()
        command.upgrade(config, "head")
        db = Database.from_url(url)
        with pytest.raises(IntegrityError, match="unbalanced"):
            write_raw_with_an_entry_after_an_early_check(db, asset, a, b)
        db.dispose()
    finally:
        drop_database(url)


def test_0009_adds_the_appeal_columns_and_goes_down_keeping_every_plan_and_appeal(
    backend: str, tmp_path: Path
) -> None:
    """Issue 22's columns arrive empty on the plans and appeals already recorded, and leave
    without touching them."""
    url = create_database(backend, tmp_path)
    engine = create_engine(url)
    at = "2026-09-01 12:00:00+00:00"
    try:
        config = alembic_config(url)
        command.upgrade(config, "0008")
        with engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO lgus VALUES ('lgu-1', 'Wright County', 'county', false, false, "
                    f"'{at}')"
                )
            )
            connection.execute(
                text(
                    "INSERT INTO plans (id, lgu_id, applicant, project, received_on, "
                    "first_received_on, impact_area_sqft, impact_wetland_type, "
                    "impact_service_area, impact_county, on_agricultural_land, "
                    "replacement_ratio, method, replacement_outside_service_area, ruleset, "
                    "decision_outcome, decided_on, decision_notice_mailed_on, created_at, "
                    "version) VALUES ('plan-1', 'lgu-1', 'A', 'P', '2026-06-08', '2026-06-08', "
                    "9000, '2', 5, 'Wright', false, '2', 'bank_credits', false, "
                    f"'103G.2242 (seed)', 'approved', '2026-07-01', '2026-07-02', '{at}', 0)"
                )
            )
            connection.execute(
                text(
                    "INSERT INTO appeals (id, plan_id, petitioner_kind, postmarked_on, "
                    "received_on, filing_fee_cents, ruleset, created_at) VALUES ('apl-1', "
                    "'plan-1', 'owner', '2026-07-10', '2026-07-13', 20000, "
                    f"'103G.2242 (seed)', '{at}')"
                )
            )
        command.upgrade(config, "head")
        with engine.connect() as connection:
            appeal = connection.execute(
                text("SELECT petitioner_name, served_on, filing_fee_cents FROM appeals")
            ).one()
            required = connection.execute(
                text("SELECT appeal_security_required_cents FROM plans")
            ).scalar_one()
        assert tuple(appeal) == (None, None, 20_000) and required is None
        command.downgrade(config, "0008")
        columns = {c["name"] for c in inspect(engine).get_columns("appeals")}
        assert "petitioner_name" not in columns and "served_on" not in columns
        with engine.connect() as connection:
            assert connection.execute(text("SELECT id FROM appeals")).scalars().all() == ["apl-1"]
            assert connection.execute(text("SELECT id FROM plans")).scalars().all() == ["plan-1"]
        command.upgrade(config, "head")
    finally:
        engine.dispose()
        drop_database(url)


def test_0010_moves_each_plans_extension_to_its_own_table_and_back(
    backend: str, tmp_path: Path
) -> None:
    """Issue 24: a plan's one extension becomes the LGU's own extension of its first application;
    the plans and appeals recorded before are application 1, not on peatland, their decisions
    without a resolution. Going down puts the extension back on its plan."""
    url = create_database(backend, tmp_path)
    engine = create_engine(url)
    at = "2026-09-01 12:00:00+00:00"
    try:
        config = alembic_config(url)
        command.upgrade(config, "0009")
        with engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO lgus VALUES ('lgu-1', 'Wright County', 'county', false, false, "
                    f"'{at}')"
                )
            )
            for plan_id, extension in (
                ("plan-1", "'2026-08-10', 30, 'the TEP asked for a site visit'"),
                ("plan-2", "NULL, NULL, NULL"),
            ):
                connection.execute(
                    text(
                        "INSERT INTO plans (id, lgu_id, applicant, project, received_on, "
                        "first_received_on, impact_area_sqft, impact_wetland_type, "
                        "impact_service_area, impact_county, on_agricultural_land, "
                        "replacement_ratio, method, replacement_outside_service_area, ruleset, "
                        "extension_notified_on, extension_days, extension_reason, "
                        "decision_outcome, decided_on, created_at, version) VALUES "
                        f"('{plan_id}', 'lgu-1', 'A', 'P', '2026-06-17', '2026-06-17', 25000, "
                        "'2', 5, 'Wright', false, '2', 'bank_credits', false, "
                        f"'103G.2242 (seed)', {extension}, 'approved', '2026-09-01', '{at}', 0)"
                    )
                )
        command.upgrade(config, "0010")
        with engine.connect() as connection:
            moved = connection.execute(
                text(
                    "SELECT plan_id, application_number, notified_on, days, reason, "
                    "applicant_agreed FROM plan_extensions"
                )
            ).one()
            plans = connection.execute(
                text(
                    "SELECT id, application_number, impact_peatland, "
                    "decision_resolution_number, decision_reasons FROM plans ORDER BY id"
                )
            ).all()
        assert tuple(moved)[:2] == ("plan-1", 1)
        assert str(moved.notified_on) == "2026-08-10" and moved.days == 30
        assert moved.reason == "the TEP asked for a site visit" and not moved.applicant_agreed
        assert [tuple(p) for p in plans] == [
            ("plan-1", 1, False, None, None),
            ("plan-2", 1, False, None, None),
        ]
        assert "extension_days" not in {c["name"] for c in inspect(engine).get_columns("plans")}
        command.downgrade(config, "0009")
        with engine.connect() as connection:
            back = connection.execute(
                text(
                    "SELECT id, extension_notified_on, extension_days, extension_reason "
                    "FROM plans ORDER BY id"
                )
            ).all()
        assert [(p.id, str(p.extension_notified_on), p.extension_days) for p in back] == [
            ("plan-1", "2026-08-10", 30),
            ("plan-2", "None", None),
        ]
        assert back[0].extension_reason == "the TEP asked for a site visit"
        assert "plan_extensions" not in inspect(engine).get_table_names()
        command.upgrade(config, "head")
    finally:
        engine.dispose()
        drop_database(url)


_SEAL_FUNCTION_OF = """SELECT p.proname FROM pg_trigger AS t
JOIN pg_proc AS p ON p.oid = t.tgfoid WHERE t.tgname = 'transfers_seal'"""


def test_0015_gives_each_sealed_table_its_own_seal_function_and_old_and_new_seals_verify(
    backend: str, tmp_path: Path
) -> None:
    """Rows sealed by the shared function (below 0015) and by the tables' own (0015) both
    match what the verifier recomputes; a row edited with the triggers off is still found."""
    if backend != "postgresql":
        pytest.skip("SQLite's seal triggers are per table already")
    from bank import audit, transfers
    from bank.access import SYSTEM
    from bench.server import make_bank

    url = create_database(backend, tmp_path)
    config = alembic_config(url)

    def seal_function() -> str:
        engine = create_engine(url)
        try:
            with engine.connect() as connection:
                return str(connection.execute(text(_SEAL_FUNCTION_OF)).scalar_one())
        finally:
            engine.dispose()

    def move(source: str, target: str, code: str) -> None:
        db = Database.from_url(url)
        try:
            request = transfers.TransferRequest(source, target, 3, credit_class=code)
            transfers.transfer(db, SYSTEM, request, None)
        finally:
            db.dispose()

    try:
        command.upgrade(config, "head")
        assert seal_function() == "transfers_seal_row"
        command.downgrade(config, "0014")
        assert seal_function() == "ledger_seal_row"
        bank = make_bank(url, accounts=2)
        first, second = bank.accounts
        move(first, second, bank.credit_class)  # sealed by the shared function
        command.upgrade(config, "head")
        assert seal_function() == "transfers_seal_row"
        move(second, first, bank.credit_class)  # sealed by the table's own
        db = Database.from_url(url)
        try:
            assert audit.verify_full(db).ok
            with db.engine.begin() as connection:
                connection.execute(text("ALTER TABLE transfers DISABLE TRIGGER USER"))
                connection.execute(text("UPDATE transfers SET amount_sqft = 4"))
                connection.execute(text("ALTER TABLE transfers ENABLE TRIGGER USER"))
            report = audit.verify_full(db)
            assert not report.ok
            assert "transfers row" in str(report.first_broken)
        finally:
            db.dispose()
    finally:
        drop_database(url)


def _ledger_counts(url: str) -> dict[str, int]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return {
                table: int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())
                for table in (*sorted(LEDGER_TABLES), "lots", "deposit_actions", "ledger_chain")
            }
    finally:
        engine.dispose()


def test_0016_guards_a_database_holding_a_ledger_and_goes_down_to_0015_keeping_every_row(
    backend: str, tmp_path: Path
) -> None:
    """``wetbank db upgrade`` takes a database with accounts, deposits and transfers from 0015 to
    the guards: the ledger still verifies, an account refuses an UPDATE and the engine still
    writes; down to 0015 the UPDATE is accepted again and every row is kept."""
    from bench.server import make_bank

    url = create_database(backend, tmp_path)
    config = alembic_config(url)
    day = date(2026, 3, 2)
    rename = "UPDATE ledger_accounts SET name = 'renamed' WHERE code = 'h'"
    try:
        command.upgrade(config, "0015")
        make_bank(url, accounts=2)
        db = Database.from_url(url)
        with db.transaction() as session:
            issuer = create_account(session, code="i", asset="X", name="issuer")
            holder = create_account(session, code="h", asset="X", name="h", no_overdraft=True)
            transfer(session, "t", [Leg(issuer, holder, 5)], Meta("k1", day))
        seal_all(db)
        db.dispose()
        before = _ledger_counts(url)
        upgraded = CliRunner().invoke(main, ["db", "upgrade"], env={"DATABASE_URL": url})
        assert upgraded.exit_code == 0, upgraded.output
        assert _ledger_counts(url) == before
        db = Database.from_url(url)
        with db.engine.connect() as connection:
            assert verify(connection).ok
        with pytest.raises(IntegrityError, match="immutable"), db.engine.begin() as connection:
            connection.execute(text(rename))
        with db.transaction() as session:
            transfer(session, "t", [Leg(holder, issuer, 2)], Meta("k2", day))
        db.dispose()
        command.downgrade(config, "0015")
        db = Database.from_url(url)
        with db.engine.begin() as connection:
            connection.execute(text(rename))
        db.dispose()
        assert _ledger_counts(url)["ledger_entries"] == before["ledger_entries"] + 2
        command.upgrade(config, "head")
    finally:
        drop_database(url)


def test_0016_refuses_a_database_whose_rows_already_break_a_guard(
    backend: str, tmp_path: Path
) -> None:
    """Before 0016 a raw INSERT could put an entry in another asset than its account's; such a
    ledger stops the upgrade, naming the row, and stays at 0015."""
    url = create_database(backend, tmp_path)
    config = alembic_config(url)
    try:
        command.upgrade(config, "0015")
        db = Database.from_url(url)
        a, b = open_accounts(db, "X", False, False)
        write_raw_transaction(db, [(a, "Y", -5), (b, "Y", 5)])
        with db.engine.connect() as connection:
            entry = connection.execute(text("SELECT min(id) FROM ledger_entries")).scalar()
        db.dispose()
        with pytest.raises(RuntimeError, match=f"ledger_entries row {entry} "):
            command.upgrade(config, "head")
        engine = create_engine(url)
        with engine.connect() as connection:
            version = connection.execute(text("SELECT version_num FROM alembic_version"))
            assert version.scalar_one() == "0015"
        engine.dispose()
    finally:
        drop_database(url)


def _guards_0018(url: str) -> set[str]:
    """The registry triggers 0018 adds that the database holds."""
    import json

    names = ("withdrawals_reversal_reverses", "deposit_reversals_reverse_the_deposit")
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            query = (
                "SELECT tgname FROM pg_trigger WHERE tgname = ANY(:n)"
                if engine.dialect.name == "postgresql"
                else "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name IN "
                "(SELECT value FROM json_each(:n))"
            )
            value = list(names) if engine.dialect.name == "postgresql" else json.dumps(names)
            return set(connection.execute(text(query), {"n": value}).scalars())
    finally:
        engine.dispose()


def _queue_an_open_transaction(db: Database, asset: str, a: int, b: int) -> int:
    """A balanced transaction left open and queued for the chain, with raw SQL."""
    from tests.integration.ledger_kit import insert_raw_entry, insert_raw_header

    with db.engine.begin() as connection:
        tx_id = insert_raw_header(connection, "open")
        insert_raw_entry(connection, tx_id, a, asset, -5)
        insert_raw_entry(connection, tx_id, b, asset, 5)
        connection.execute(text("INSERT INTO ledger_chain_queue VALUES (:t)"), {"t": tx_id})
    return tx_id


def test_0018_guards_a_database_holding_a_bank_and_goes_down_to_0017_keeping_every_row(
    backend: str, tmp_path: Path
) -> None:
    """``wetbank db upgrade`` takes a database with accounts, deposits and transfers from 0017 to
    the reversal and commit guards: the ledger still verifies, an open transaction is not
    queued and the engine still writes; down to 0017 the guards are gone and every row is
    kept."""
    from bench.server import make_bank

    url = create_database(backend, tmp_path)
    config = alembic_config(url)
    day = date(2026, 3, 2)
    try:
        command.upgrade(config, "0017")
        make_bank(url, accounts=2)
        db = Database.from_url(url)
        with db.transaction() as session:
            issuer = create_account(session, code="i", asset="X", name="issuer")
            holder = create_account(session, code="h", asset="X", name="h", no_overdraft=True)
            transfer(session, "t", [Leg(issuer, holder, 5)], Meta("k1", day))
        seal_all(db)
        db.dispose()
        before = _ledger_counts(url)
        upgraded = CliRunner().invoke(main, ["db", "upgrade"], env={"DATABASE_URL": url})
        assert upgraded.exit_code == 0, upgraded.output
        assert _ledger_counts(url) == before
        assert len(_guards_0018(url)) == 2
        db = Database.from_url(url)
        with db.engine.connect() as connection:
            assert verify(connection).ok
        with pytest.raises(IntegrityError, match="on ledger_chain_queue|inserted sealed"):
            _queue_an_open_transaction(db, "X", issuer, holder)
        with db.transaction() as session:
            transfer(session, "t", [Leg(holder, issuer, 2)], Meta("k2", day))
        seal_all(db)
        with db.engine.connect() as connection:
            assert verify(connection).ok
        db.dispose()
        command.downgrade(config, "0017")
        assert _guards_0018(url) == set()
        assert _ledger_counts(url)["ledger_entries"] == before["ledger_entries"] + 2
        db = Database.from_url(url)
        with db.transaction() as session:  # under the balance check as 0006 made it
            transfer(session, "t", [Leg(holder, issuer, 1)], Meta("k3", day))
        db.dispose()
        command.upgrade(config, "head")
    finally:
        drop_database(url)


def test_0018_refuses_a_database_whose_rows_already_break_a_guard(
    backend: str, tmp_path: Path
) -> None:
    """Before 0018 a raw INSERT could queue a transaction left open (on SQLite never checked
    for balance); such a ledger stops the upgrade, naming the row, and stays at 0017."""
    url = create_database(backend, tmp_path)
    config = alembic_config(url)
    try:
        command.upgrade(config, "0017")
        db = Database.from_url(url)
        a, b = open_accounts(db, "X", False, False)
        tx_id = _queue_an_open_transaction(db, "X", a, b)
        db.dispose()
        with pytest.raises(RuntimeError, match=f"ledger_transactions row {tx_id} "):
            command.upgrade(config, "head")
        engine = create_engine(url)
        with engine.connect() as connection:
            version = connection.execute(text("SELECT version_num FROM alembic_version"))
            assert version.scalar_one() == "0017"
        engine.dispose()
    finally:
        drop_database(url)


def test_0020_gives_each_earlier_application_the_plans_appeal_security_and_goes_down_keeping_it(
    backend: str, tmp_path: Path
) -> None:
    """An application a revision superseded before 0020 takes its plan's appeal security as it
    stands (the only amount recorded); going down drops the column and keeps every row."""
    url = create_database(backend, tmp_path)
    engine = create_engine(url)
    at = "2026-06-26 12:00:00+00:00"
    try:
        config = alembic_config(url)
        command.upgrade(config, "0019")
        with engine.begin() as connection:
            for statement in (
                "INSERT INTO lgus VALUES ('lgu-1', 'Wright County', 'county', false, false, "
                f"'{at}')",
                "INSERT INTO plans (id, lgu_id, applicant, project, received_on, "
                "first_received_on, impact_area_sqft, impact_wetland_type, impact_service_area, "
                "impact_county, on_agricultural_land, replacement_ratio, method, "
                "replacement_outside_service_area, ruleset, created_at, version, "
                "appeal_security_required_cents, application_number) VALUES ('plan-1', 'lgu-1', "
                "'A', 'P', '2026-06-26', '2026-06-08', 9900, '2', 5, 'Wright', false, '2', "
                f"'bank_credits', false, '103G.2242 (seed)', '{at}', 0, 20000, 2)",
                "INSERT INTO plan_revisions VALUES ('rev-1', 'plan-1', 9900, 9000, 0, "
                f"'2026-06-26', true, '{at}')",
                "INSERT INTO plan_applications (id, plan_id, number, received_on, "
                "impact_area_sqft, outcome, decision_outcome, decided_on, "
                "decision_notice_mailed_on, revision_id, superseded_on) VALUES ('app-1', "
                "'plan-1', 1, '2026-06-08', 9000, 'approved', 'approved', '2026-06-08', "
                "'2026-06-09', 'rev-1', '2026-06-26')",
            ):
                connection.execute(text(statement))
        command.upgrade(config, "0020")
        with engine.connect() as connection:
            kept = connection.execute(
                text("SELECT id, appeal_security_required_cents FROM plan_applications")
            ).all()
        assert [tuple(row) for row in kept] == [("app-1", 20_000)]
        command.downgrade(config, "0019")
        columns = {c["name"] for c in inspect(engine).get_columns("plan_applications")}
        assert "appeal_security_required_cents" not in columns
        with engine.connect() as connection:
            rows = connection.execute(text("SELECT id, outcome FROM plan_applications")).all()
        assert [tuple(row) for row in rows] == [("app-1", "approved")]
        command.upgrade(config, "head")
    finally:
        engine.dispose()
        drop_database(url)


def test_a_token_made_on_the_command_line_is_in_the_audit_trail_and_bad_flags_are_named(
    backend: str, tmp_path: Path
) -> None:
    """``wetbank token create`` records ``token_created`` by ``cli``; a missing, foreign or
    unknown party is a one-line error naming the flag (exit 1, nothing made), not a traceback."""
    url = create_database(backend, tmp_path)
    runner = CliRunner()
    env = {"DATABASE_URL": url}
    try:
        assert runner.invoke(main, ["db", "upgrade"], env=env).exit_code == 0
        for args, message in (
            (["--role", "lgu"], "an lgu token needs lgu_id (--lgu: required for role lgu)"),
            (["--role", "board", "--lgu", "lgu_x"], "a board token acts for no LGU (--lgu:"),
            (["--role", "lgu", "--lgu", "lgu_x"], "no LGU lgu_x (--lgu: no such LGU)"),
        ):
            refused = runner.invoke(main, ["token", "create", "--name", "x", *args], env=env)
            assert refused.exit_code == 1, refused.output
            assert message in refused.output and "Traceback" not in refused.output
        made = runner.invoke(
            main, ["token", "create", "--role", "board", "--name", "Board staff"], env=env
        )
        assert made.exit_code == 0, made.output
        token = made.output.strip().splitlines()[-1]
        app = create_app({"DATABASE_URL": url})
        client = app.test_client()
        headers = {"Authorization": f"Bearer {token}"}
        events = client.get("/api/v1/audit/events", headers=headers).json["items"]
        assert [(e["kind"], e["actor"], e["status"]) for e in events] == [
            ("token_created", "cli", 201)
        ]
        app.extensions["wetbank.db"].dispose()
    finally:
        drop_database(url)


def test_a_setting_that_cannot_be_read_is_a_one_line_error_naming_it(
    backend: str, tmp_path: Path
) -> None:
    url = create_database(backend, tmp_path)
    try:
        refused = CliRunner().invoke(
            main,
            ["db", "upgrade"],
            env={"DATABASE_URL": url, "WETBANK_WRITE_RATE_LIMIT": "60"},
        )
        assert refused.exit_code == 1
        assert "WETBANK_WRITE_RATE_LIMIT" in refused.output and "60/minute" in refused.output
        assert "Traceback" not in refused.output
    finally:
        drop_database(url)
