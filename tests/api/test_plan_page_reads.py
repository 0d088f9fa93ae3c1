"""The plan's page reads what it shows once: its notices (and their recipients) come of the one
read of the plan's record (``bank.plan_rows``) that its report is built from."""

from __future__ import annotations

import re

import pytest
from flask import Flask

from tests.api.conftest import Api
from tests.api.kit import Kit, on, statements_sent
from tests.api.test_plan_notices import noticed_and_decided
from tests.api.web_kit import parse, signed_in


@pytest.fixture
def kit(api: Api, app: Flask) -> Kit:
    return Kit(api, app)


def test_one_get_of_the_plan_page_reads_the_plans_notices_once(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    plan = noticed_and_decided(kit, lgu)
    engine = app.extensions["wetbank.db"].engine
    with on("2026-07-28"):
        client = signed_in(app.test_client(), lgu["token"])
        with statements_sent(engine) as sent_with_parameters:
            response = client.get(f"/plans/{plan['id']}")
    sent = [statement for statement, _ in sent_with_parameters]

    assert response.status_code == 200
    reads = {
        table: len([s for s in sent if re.search(rf"\bFROM {table}\b", s)])
        for table in ("plan_notices", "plan_notice_recipients")
    }
    assert reads == {"plan_notices": 1, "plan_notice_recipients": 1}
    # what the page shows of them: a link to each notice as mailed
    links = parse(response.get_data(as_text=True)).all("a", class_="notice-link")
    assert [link.attrs["data-notice"] for link in links] == ["application", "decision"]
