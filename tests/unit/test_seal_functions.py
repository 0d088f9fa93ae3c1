"""PostgreSQL's per-table seal function: built from the sealed columns by name, and refused
where ``jsonb_build_object`` would refuse the row at insert time."""

from __future__ import annotations

import pytest

from ledger.store.postgresql_seals import MAX_SEALED_COLUMNS, seal_row_function


def test_the_seal_names_each_sealed_column_and_keys_the_seal_by_the_id_as_text() -> None:
    sql = seal_row_function("transfers", "id", ["id", "amount_sqft"])
    assert "CREATE OR REPLACE FUNCTION transfers_seal_row()" in sql
    assert "jsonb_build_object('id', NEW.id, 'amount_sqft', NEW.amount_sqft)" in sql
    assert "VALUES ('transfers', NEW.id::text," in sql
    assert "SET timezone = 'UTC'" in sql


def test_a_table_with_more_sealed_columns_than_jsonb_build_object_takes_is_refused() -> None:
    columns = [f"c{n}" for n in range(MAX_SEALED_COLUMNS)]
    assert seal_row_function("wide", "c0", columns)
    with pytest.raises(ValueError, match="at most 50 sealed columns"):
        seal_row_function("wide", "c0", [*columns, "one_more"])
