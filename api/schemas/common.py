"""Field types shared by every schema: strict integers, event dates, decimal ratios."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from marshmallow import INCLUDE, Schema, ValidationError, fields, validate

from ledger import clock

INT64_MAX = 2**63 - 1


class StrictInteger(fields.Integer):
    """An integer on the wire: no floats, exponents, strings or booleans, and within 64 bits."""

    def __init__(self, *, minimum: int | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("strict", True)
        low = -INT64_MAX if minimum is None else minimum
        kwargs["validate"] = validate.Range(min=low, max=INT64_MAX)
        super().__init__(**kwargs)

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValidationError("Not a valid integer.")
        return int(super()._deserialize(value, attr, data, **kwargs))


def Quantity(**kwargs: Any) -> StrictInteger:  # noqa: N802 - reads as a field type
    """A positive whole quantity (square feet or cents)."""
    return StrictInteger(minimum=1, **kwargs)


class IsoDate(fields.Date):
    """A calendar date written exactly ``YYYY-MM-DD`` (API.md "Units"), not any form that
    ``date.fromisoformat`` accepts (``20260301``, ``2026-W10-1``)."""

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> date:
        if isinstance(value, str) and not _ISO_DATE.fullmatch(value):
            raise self.make_error("invalid", input=value, obj_type=self.OBJ_TYPE)
        day: date = super()._deserialize(value, attr, data, **kwargs)
        return day


_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class EventDate(IsoDate):
    """The date of something that has happened: it may not lie in the future (API.md)."""

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> date:
        day: date = super()._deserialize(value, attr, data, **kwargs)
        if day > clock.today():
            raise ValidationError("This date is in the future.")
        return day


class PageOf(Schema):
    """``{"items": [...], "next_cursor": ...}``"""

    next_cursor = fields.String(allow_none=True)


def page_schema(item: type[Schema], name: str) -> type[Schema]:
    """A page schema whose items are ``item``."""
    return type(name, (PageOf,), {"items": fields.List(fields.Nested(item))})


class ProblemSchema(Schema):
    """RFC 9457 problem details (a domain error adds members of its own, such as
    ``available_sqft``: the document allows them)."""

    class Meta:
        unknown = INCLUDE

    type = fields.String()
    title = fields.String()
    status = fields.Integer()
    detail = fields.String()
    code = fields.String(required=True)
    errors = fields.Dict(allow_none=True)
    request_id = fields.String()


class Timestamp(fields.DateTime):
    """An instant, always written in UTC with its offset (SQLite hands back naive UTC)."""

    def _serialize(self, value: Any, attr: Any, obj: Any, **kwargs: Any) -> str | None:
        if value is None:
            return None
        return str(clock.as_utc(value).isoformat())


class CreditClassOut(Schema):
    code = fields.String()
    service_area = fields.Integer()
    wetland_type = fields.String()
    restricted = fields.Boolean()


def ServiceArea(**kwargs: Any) -> StrictInteger:  # noqa: N802
    """A bank service area number (1..10; the ruleset checks the upper bound)."""
    return StrictInteger(minimum=1, **kwargs)


WETLAND_TYPES = [str(n) for n in range(1, 9)]
