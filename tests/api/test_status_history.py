"""The history of an account's status and a site's freeze, on both databases: each freeze,
unfreeze and close, and a reopening on appeal, is a sealed row naming who made it and when; a
reopening on appeal restores the status the account was closed from (a freeze stands); and a
status set at a SQL prompt, or a change edited behind the triggers, makes verify fail naming it.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from tests.api.kit import Kit, ok, on, problem
from tests.api.set_once_kit import behind_the_triggers
from tests.api.test_account_close_appeals import close, withdrawn_in_full
from tests.api.test_appeals import FEE, grant, pay, petition, rule
from tests.api.test_audit import run_verify_command
from tests.api.web_kit import parse, signed_in

BOARD = "test board ("  # the board token's label: its name, then its id


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def _history(kit: Kit, path: str) -> list[tuple[Any, ...]]:
    items = ok(kit.api.get(f"{path}/status-history"), 200)["items"]
    assert all(item["actor"].startswith(BOARD) for item in items), items
    return [(i["position"], i["from_status"], i["to_status"], i["reason"]) for i in items]


def _verify(kit: Kit) -> dict[str, Any]:
    return dict(ok(kit.api.get("/audit/verify"), 200))


def test_a_frozen_account_closed_and_reopened_on_appeal_stays_frozen(kit: Kit) -> None:
    """Frozen 06-10, closed 06-25, a petition postmarked 06-24 reaching the board 06-26 reverses
    the approval 07-01: the 18,000 sq ft come back to an account that is frozen again, as the
    board left it, and its holder cannot move them; the board's unfreeze lets them go."""
    bank, plan = withdrawn_in_full(kit)
    with on("2026-06-10"):
        assert ok(kit.api.post(f"/accounts/{bank['id']}/freeze"), 200)["status"] == "frozen"
    assert ok(close(kit, bank, "2026-06-25"), 200)["status"] == "closed"
    appeal = ok(petition(kit, plan, postmarked="2026-06-24", received="2026-06-26"))
    ok(pay(kit, appeal, "appeal_filing_fee", FEE, "2026-06-26"))
    ok(grant(kit, appeal, "2026-06-29"))
    ok(rule(kit, appeal, "2026-07-01"))
    with on("2026-07-01"):
        shown = kit.account_body(bank["id"])
        assert shown["status"] == "frozen"
        assert [(b["posted_sqft"], b["available_sqft"]) for b in shown["balances"]] == [(18_000, 0)]
        other = kit.account(kit.holder("Other")["id"], 5, "Wright")
        move = {
            "from_account_id": bank["id"],
            "to_account_id": other,
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": 18_000,
        }
        problem(
            kit.api.post("/transfers", move, token=bank["holder"]["token"]), 422, "account_frozen"
        )
        assert _history(kit, f"/accounts/{bank['id']}") == [
            (1, "open", "frozen", None),
            (2, "frozen", "closed", None),
            (
                3,
                "closed",
                "frozen",
                f"approval of plan {plan['id']} reversed on appeal: credits returned",
            ),
        ]
        ok(kit.api.post(f"/accounts/{bank['id']}/unfreeze"), 200)
        ok(kit.api.post("/transfers", move, token=bank["holder"]["token"]))
    assert _verify(kit)["ok"] is True


def test_each_freeze_unfreeze_and_close_is_recorded_with_who_and_when(kit: Kit) -> None:
    with on("2026-06-01"):
        funded = kit.funded_account(day="2026-06-01", service_area=5, unrestricted=1_000)
        empty = kit.account(funded["holder"]["id"], 5, "Wright")
        for action in ("freeze", "freeze", "unfreeze", "close"):  # a second freeze is no change
            ok(kit.api.post(f"/accounts/{empty}/{action}"), 200)
        site = f"/bank-sites/{funded['site_id']}"
        for action in ("freeze", "unfreeze", "unfreeze"):
            ok(kit.api.post(f"{site}/{action}"), 200)
        assert _history(kit, f"/accounts/{empty}") == [
            (1, "open", "frozen", None),
            (2, "frozen", "open", None),
            (3, "open", "closed", None),
        ]
        assert _history(kit, site) == [
            (1, "unfrozen", "frozen", None),
            (2, "frozen", "unfrozen", None),
        ]
        # a refused close records nothing
        problem(kit.api.post(f"/accounts/{funded['id']}/close"), 409, "conflict")
        assert _history(kit, f"/accounts/{funded['id']}") == []
        # the holder reads its own account's history; another holder does not see it
        mine = kit.api.get(f"/accounts/{empty}/status-history", token=funded["holder"]["token"])
        assert len(ok(mine, 200)["items"]) == 3
        stranger = kit.holder("Stranger")["token"]
        problem(kit.api.get(f"{site}/status-history", token=stranger), 404, "not_found")
    assert _verify(kit)["ok"] is True


def _frozen_both(kit: Kit) -> dict[str, Any]:
    with on("2026-06-01"):
        funded = kit.funded_account(day="2026-06-01", service_area=5, unrestricted=1_000)
        ok(kit.api.post(f"/accounts/{funded['id']}/freeze"), 200)
        ok(kit.api.post(f"/bank-sites/{funded['site_id']}/freeze"), 200)
    assert _verify(kit)["ok"] is True
    return funded


@pytest.mark.parametrize(
    ("statement", "table", "column"),
    [
        ("UPDATE bank_accounts SET status = 'open' WHERE id = :account", "bank_accounts", "status"),
        ("UPDATE bank_sites SET frozen = FALSE WHERE id = :site", "bank_sites", "frozen"),
    ],
    ids=["account", "site"],
)
def test_a_status_set_at_the_sql_prompt_fails_verify_naming_it(
    fresh: Kit, fresh_db_url: str, statement: str, table: str, column: str
) -> None:
    """A plain UPDATE of the state column is taken (it is state), but no change was recorded:
    ``GET /audit/verify`` and ``wetbank audit verify`` name the row and what it is tied to."""
    funded = _frozen_both(fresh)
    row = funded["id"] if table == "bank_accounts" else funded["site_id"]
    with fresh.app.extensions["wetbank.db"].engine.begin() as connection:
        connection.execute(text(statement), {"account": funded["id"], "site": funded["site_id"]})
    report = _verify(fresh)
    broken = report["first_broken"]
    assert report["ok"] is False
    assert (broken["table"], broken["row_id"]) == (table, row)
    assert (
        f"its {column} is not the" in broken["detail"]
        and "last change in its history" in (broken["detail"])
    )
    command = run_verify_command(fresh_db_url)
    assert command.exit_code == 1, command.output
    assert "BROKEN" in command.output and row in command.output
    assert "last change in its history" in command.output


def test_a_status_change_is_refused_an_edit_and_one_edited_behind_the_triggers_fails_verify(
    fresh: Kit,
) -> None:
    funded = _frozen_both(fresh)
    engine = fresh.app.extensions["wetbank.db"].engine
    last = "SELECT id FROM status_changes WHERE subject_id = :s ORDER BY position DESC LIMIT 1"
    with engine.connect() as connection:
        change = connection.execute(text(last), {"s": funded["id"]}).scalar_one()
    for statement in (
        "UPDATE status_changes SET actor = 'someone else' WHERE id = :id",
        "DELETE FROM status_changes WHERE id = :id",
    ):
        with pytest.raises(DBAPIError, match="immutable"), engine.begin() as connection:
            connection.execute(text(statement), {"id": change})
    behind_the_triggers(
        engine, "status_changes", "UPDATE status_changes SET actor = 'x' WHERE id = :id", id=change
    )
    broken = _verify(fresh)["first_broken"]
    assert (broken["table"], broken["row_id"]) == ("status_changes", change)
    assert "differs from what was recorded" in broken["detail"]


def test_the_last_status_change_deleted_behind_the_triggers_fails_verify(fresh: Kit) -> None:
    """Deleting the freeze's row (the account then reads as if never frozen) is named."""
    funded = _frozen_both(fresh)
    engine = fresh.app.extensions["wetbank.db"].engine
    behind_the_triggers(
        engine,
        "status_changes",
        "DELETE FROM status_changes WHERE subject_id = :s AND position = 1",
        s=funded["id"],
    )
    broken = _verify(fresh)["first_broken"]
    assert broken["table"] == "status_changes" and "was deleted" in broken["detail"]


def test_the_account_and_site_pages_show_their_status_history(kit: Kit) -> None:
    """The board reads who froze, unfroze or closed what, and when, on the account's page and
    the site's; the holder reads its own account's."""
    with on("2026-06-01"):
        funded = kit.funded_account(day="2026-06-01", service_area=5, unrestricted=1_000)
        ok(kit.api.post(f"/accounts/{funded['id']}/freeze"), 200)
        ok(kit.api.post(f"/bank-sites/{funded['site_id']}/freeze"), 200)
        for token, path, expected in (
            (kit.api.token, f"/accounts/{funded['id']}", [("open", "frozen")]),
            (
                kit.api.token,
                f"/bank-sites/{funded['site_id']}/edit",
                [("unfrozen", "frozen")],
            ),
            (
                funded["holder"]["token"],
                f"/accounts/{funded['id']}",
                [("open", "frozen")],
            ),
        ):
            client = kit.app.test_client()
            signed_in(client, token)
            shown = parse(client.get(path).get_data(as_text=True))
            table = shown.one("table", id="status-history")
            rows = [tr for tr in table.all("tr") if "data-position" in tr.attrs]
            assert [
                (
                    row.one("td", data_field="from_status").text,
                    row.one("td", data_field="to_status").text,
                )
                for row in rows
            ] == expected, path
            assert all(row.one("td", data_field="actor").text.startswith(BOARD) for row in rows)
