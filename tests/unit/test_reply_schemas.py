"""``api.schemas.replies``: a reply schema derived from a dataclass's fields and type hints."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any, Optional

import pytest
from marshmallow import Schema, fields

from api.schemas.common import Timestamp
from api.schemas.replies import register, reply_schema


@dataclass(frozen=True)
class Line:
    code: str
    amount_sqft: int


@dataclass(frozen=True)
class Everything:
    name: str
    count: int
    open: bool
    on: date
    at: datetime
    note: str | None
    old_style: Optional[int]  # noqa: UP045 (the older spelling of a union with None)
    tags: list[str]
    pair: tuple[int, ...]
    refs: dict[str, str]
    extra: dict[str, Any] | None
    line: Line
    maybe_line: Line | None
    lines: list[Line]
    from_: date


@dataclass(frozen=True)
class Orphan:
    code: str
    note: str


@dataclass(frozen=True)
class HoldsOrphan:
    orphan: Orphan


@dataclass(frozen=True)
class Odd:
    ratio: float


@dataclass(frozen=True)
class Either:
    value: str | int


class Row:
    """A class that is not a dataclass, shown through a hand-written schema."""

    def __init__(self, code: str) -> None:
        self.code, self.secret = code, "not shown"


class RowOut(Schema):
    code = fields.String()


@dataclass(frozen=True)
class HoldsRow:
    row: Row
    rows: tuple[Row, ...]


LineOut = reply_schema(Line, "LineOut")
EverythingOut = reply_schema(Everything, "EverythingOut")
register(Row, RowOut)
HoldsRowOut = reply_schema(HoldsRow, "HoldsRowOut")

AT = datetime(2026, 3, 1, 12, 30, tzinfo=timezone(timedelta(hours=-6)))
LINE = Line("A1", 40)
SAMPLE = Everything(
    name="n",
    count=3,
    open=True,
    on=date(2026, 3, 1),
    at=AT,
    note=None,
    old_style=None,
    tags=["x", "y"],
    pair=(1, 2),
    refs={"permit": "WCA-1"},
    extra=None,
    line=LINE,
    maybe_line=None,
    lines=[LINE, Line("B2", 5)],
    from_=date(2026, 1, 1),
)


def test_the_schema_keeps_its_name_and_the_dataclass_s_field_order() -> None:
    assert EverythingOut.__name__ == "EverythingOut"
    assert issubclass(EverythingOut, Schema)
    assert list(EverythingOut().fields) == list(Everything.__dataclass_fields__)


def test_each_type_maps_to_its_field() -> None:
    f = EverythingOut().fields
    assert type(f["name"]) is fields.String
    assert type(f["count"]) is fields.Integer
    assert type(f["open"]) is fields.Boolean
    assert type(f["on"]) is fields.Date
    assert type(f["at"]) is Timestamp
    assert not any(field.allow_none for name, field in f.items() if name in {"name", "at"})


def test_an_optional_value_allows_null() -> None:
    f = EverythingOut().fields
    assert type(f["note"]) is fields.String and f["note"].allow_none
    assert type(f["old_style"]) is fields.Integer and f["old_style"].allow_none
    assert type(f["extra"]) is fields.Dict and f["extra"].allow_none
    assert isinstance(f["maybe_line"], fields.Nested) and f["maybe_line"].allow_none


def test_lists_tuples_and_dicts() -> None:
    f = EverythingOut().fields
    tags, pair = f["tags"], f["pair"]
    assert isinstance(tags, fields.List) and type(tags.inner) is fields.String
    assert isinstance(pair, fields.List) and type(pair.inner) is fields.Integer
    refs = f["refs"]
    assert isinstance(refs, fields.Dict) and type(refs.value_field) is fields.String
    assert f["extra"].value_field is None  # type: ignore[attr-defined]


def test_a_nested_dataclass_nests_the_schema_derived_for_it() -> None:
    f = EverythingOut().fields
    line, lines = f["line"], f["lines"]
    assert isinstance(line, fields.Nested) and line.nested is LineOut
    assert isinstance(lines, fields.List) and isinstance(lines.inner, fields.Nested)
    assert lines.inner.nested is LineOut


def test_a_reply_is_dumped_as_the_api_writes_it() -> None:
    assert EverythingOut().dump(SAMPLE) == {
        "name": "n",
        "count": 3,
        "open": True,
        "on": "2026-03-01",
        "at": "2026-03-01T18:30:00+00:00",
        "note": None,
        "old_style": None,
        "tags": ["x", "y"],
        "pair": [1, 2],
        "refs": {"permit": "WCA-1"},
        "extra": None,
        "line": {"code": "A1", "amount_sqft": 40},
        "maybe_line": None,
        "lines": [{"code": "A1", "amount_sqft": 40}, {"code": "B2", "amount_sqft": 5}],
        "from": "2026-01-01",
    }


def test_a_name_dodging_a_keyword_goes_on_the_wire_without_its_underscore() -> None:
    assert EverythingOut().fields["from_"].data_key == "from"


def test_a_registered_class_nests_its_hand_written_schema() -> None:
    f = HoldsRowOut().fields
    assert f["row"].nested is RowOut  # type: ignore[attr-defined]
    assert HoldsRowOut().dump(HoldsRow(Row("r"), (Row("s"),))) == {
        "row": {"code": "r"},
        "rows": [{"code": "s"}],
    }


def test_an_override_replaces_the_field_its_name_names() -> None:
    ratio = fields.String()
    schema = reply_schema(Odd, "OddOut", ratio=ratio)
    assert schema._declared_fields["ratio"] is ratio
    assert schema().dump(Odd(1.5)) == {"ratio": "1.5"}


def test_only_and_exclude_keep_some_fields_in_order() -> None:
    schema = reply_schema(Everything, "SomeOut", only=("line", "name", "count"), exclude=("count",))
    assert list(schema().fields) == ["name", "line"]
    assert schema().dump(SAMPLE) == {"name": "n", "line": {"code": "A1", "amount_sqft": 40}}


def test_a_schema_of_some_fields_is_not_the_dataclass_s_own() -> None:
    assert list(reply_schema(Orphan, "OrphanCodeOut", only=("code",))().fields) == ["code"]
    with pytest.raises(TypeError, match="HoldsOrphanOut.orphan: no reply schema"):
        reply_schema(HoldsOrphan, "HoldsOrphanOut")


def test_a_nested_dataclass_without_a_schema_is_refused() -> None:
    with pytest.raises(TypeError, match="no reply schema for the dataclass Orphan"):
        reply_schema(HoldsOrphan, "HoldsOrphanOut")


def test_an_unmapped_type_is_refused() -> None:
    with pytest.raises(TypeError, match="OddOut.ratio: a reply schema maps no <class 'float'>"):
        reply_schema(Odd, "OddOut")
    with pytest.raises(
        TypeError, match=re.escape("EitherOut.value: a reply schema maps no str | int")
    ):
        reply_schema(Either, "EitherOut")


def test_an_override_naming_no_field_is_refused() -> None:
    with pytest.raises(TypeError, match="LineOut2: no field amount, colour in Line"):
        reply_schema(Line, "LineOut2", colour=fields.String(), amount=fields.Integer())
    with pytest.raises(TypeError, match="no field amount_sqft in Line"):
        reply_schema(Line, "LineOut3", only=("code",), amount_sqft=fields.Integer())


def test_only_or_exclude_naming_no_field_is_refused() -> None:
    with pytest.raises(TypeError, match="no field colour in Line"):
        reply_schema(Line, "LineOut4", exclude=("colour",))


def test_a_class_has_one_reply_schema() -> None:
    with pytest.raises(TypeError, match="Line already replies as LineOut"):
        reply_schema(Line, "LineAgainOut")
    with pytest.raises(TypeError, match="Row already replies as RowOut"):
        register(Row, RowOut)


def test_only_a_dataclass_is_derived() -> None:
    with pytest.raises(TypeError, match="is not a dataclass"):
        reply_schema(Row, "RowAgainOut")


def test_a_naive_timestamp_is_taken_as_utc() -> None:
    naive = EverythingOut().fields["at"].serialize("at", {"at": datetime(2026, 3, 1, 12)})
    assert naive == datetime(2026, 3, 1, 12, tzinfo=UTC).isoformat()
