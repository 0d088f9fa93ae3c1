"""A new notice is stored with its document: the database refuses one without (SQLite and
PostgreSQL).

The service writes each notice with the document it was mailed as (``bank.notices``); only a
notice recorded before documents were kept has none, and keeps none (migration 0030 sealed such
rows, 0031 spares them).  A notice typed in with SQL and no document is refused, whatever else it
says, and nothing is written; the same row with its document goes in; the notices the service
records are kept with their documents, and everything verifies.
"""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from tests.api.kit import engine_of, ok, on, sql_rows, verified
from tests.api.test_notice_list import document_not_kept
from tests.api.test_notice_seals import SEEN, noticed

#: the database's refusal (migration 0031), on both databases
REFUSED = "a notice is recorded with its document as mailed"
#: a copy of the notice ``:id`` under the id ``:new``, with the document ``:document``
TYPED = (
    "INSERT INTO plan_notices (id, plan_id, notice, kind, mailed_on, document, recorded_at) "
    "SELECT :new, plan_id, notice, kind, mailed_on, :document, recorded_at "
    "FROM plan_notices WHERE id = :id"
)


def _notices(kit, plan_id: str) -> list[tuple[str, bool]]:
    with on(SEEN):
        listed = ok(kit.api.get(f"/plans/{plan_id}/notices"), 200)["items"]
    return [(n["id"], n["document_kept"]) for n in listed]


def test_the_service_records_each_notice_with_its_document(fresh):
    ids = noticed(fresh)
    assert _notices(fresh, ids["plan"]) == [(ids["notice"], True)]
    ((document,),) = sql_rows(
        fresh, "SELECT document FROM plan_notices WHERE id = :id", id=ids["notice"]
    )
    assert document
    assert verified(fresh)["ok"] is True


def test_a_notice_typed_in_without_a_document_is_refused(fresh):
    ids = noticed(fresh)
    engine = engine_of(fresh)
    before = sql_rows(fresh, "SELECT id FROM plan_notices ORDER BY id")
    with pytest.raises(DBAPIError, match=REFUSED), engine.begin() as connection:
        connection.execute(text(TYPED), {"new": "ntc_typed", "document": None, "id": ids["notice"]})
    assert sql_rows(fresh, "SELECT id FROM plan_notices ORDER BY id") == before
    assert sql_rows(fresh, "SELECT row_id FROM ledger_row_seals WHERE row_id = 'ntc_typed'") == []
    assert _notices(fresh, ids["plan"]) == [(ids["notice"], True)]
    # the same row with a document goes in, sealed: only the missing document is refused
    ((document,),) = sql_rows(
        fresh, "SELECT document FROM plan_notices WHERE id = :id", id=ids["notice"]
    )
    with engine.begin() as connection:
        connection.execute(
            text(TYPED), {"new": "ntc_typed", "document": document, "id": ids["notice"]}
        )
    assert sql_rows(
        fresh,
        "SELECT row_id FROM ledger_row_seals WHERE table_name = 'plan_notices' "
        "AND row_id = 'ntc_typed'",
    ) == [("ntc_typed",)]
    assert verified(fresh)["ok"] is True


def test_a_notice_recorded_before_documents_were_kept_stays_and_verifies(fresh):
    """A stored notice without a document (as before 0017) is not weighed: it is listed as
    recorded, verifies, and a new notice of another plan is still recorded with its own."""
    ids = noticed(fresh)
    document_not_kept(fresh.app, ids["notice"])
    assert _notices(fresh, ids["plan"]) == [(ids["notice"], False)]
    other = noticed(fresh)
    assert _notices(fresh, other["plan"]) == [(other["notice"], True)]
    assert verified(fresh)["ok"] is True
