"""Field types shared by every schema: strict integers, bounded quantities, dates, decimal
ratios."""

from __future__ import annotations

import re
from datetime import date
from typing import Any, Final

from marshmallow import INCLUDE, Schema, ValidationError, fields, validate

from bank.errors import ValidationFailed
from bank.rules import replacement_rules
from bank.text import visible
from ledger import clock

INT64_MAX = 2**63 - 1

#: the largest area any ``*_sqft`` field takes: 10^12 sq ft, about twice the area of every wetland
#: left in Minnesota (10.6 million acres, 4.6 × 10^11 sq ft).  A bound this far below 2^63 keeps
#: every sum the ledger stores (balances of millions of deposits) exact on both databases.
MAX_SQFT: Final = 10**12
#: the largest sum of money any ``*_cents`` field takes: 10^13 cents, $100 billion
MAX_CENTS: Final = 10**13
#: the first date any date field or query parameter takes: nothing the ledger records (a wetland
#: bank under Minn. Stat. 103G.2242, from 1991, a plan, a security, a payment) happened before it,
#: so a year such as ``0001`` or ``0202`` is a typing mistake, refused rather than recorded
FIRST_DATE: Final = date(1900, 1, 1)
#: the last date any date field or query parameter takes: date arithmetic on it (deadlines,
#: expiries, the end of a day in Minnesota) stays far inside what ``datetime.date`` holds
LAST_DATE: Final = date(2199, 12, 31)
#: what a date outside ``FIRST_DATE``..``LAST_DATE`` is refused with
DATE_RANGE_MESSAGE: Final = (
    f"A date must be from {FIRST_DATE.isoformat()} to {LAST_DATE.isoformat()}."
)


class StrictInteger(fields.Integer):
    """An integer on the wire: no floats, exponents, strings or booleans, and within 64 bits
    (or ``minimum``..``maximum``)."""

    def __init__(
        self, *, minimum: int | None = None, maximum: int = INT64_MAX, **kwargs: Any
    ) -> None:
        kwargs.setdefault("strict", True)
        low = -INT64_MAX if minimum is None else minimum
        self.minimum, self.maximum = low, maximum
        kwargs["validate"] = validate.Range(min=low, max=maximum)
        super().__init__(**kwargs)

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValidationError("Not a valid integer.")
        return int(super()._deserialize(value, attr, data, **kwargs))


#: the bound of a quantity by the unit its field's name ends with
MAX_BY_UNIT: Final = {"_sqft": MAX_SQFT, "_cents": MAX_CENTS}


class Quantity(StrictInteger):
    """A whole quantity in the unit its field's name ends with: square feet (``*_sqft``, at most
    ``MAX_SQFT``) or cents (``*_cents``, at most ``MAX_CENTS``), and at least ``minimum`` (a
    positive quantity unless said).  Every ``*_sqft`` and ``*_cents`` field a request carries is
    one, so the bounds live here only; a quantity field named in no unit is a programming error."""

    def __init__(self, *, minimum: int = 1, **kwargs: Any) -> None:
        super().__init__(minimum=minimum, **kwargs)

    def _bind_to_schema(self, field_name: str, parent: Any) -> None:
        super()._bind_to_schema(field_name, parent)
        bounds = [m for unit, m in MAX_BY_UNIT.items() if field_name.endswith(unit)]
        if not bounds:
            raise TypeError(f"a Quantity is named *_sqft or *_cents, not {field_name!r}")
        self.maximum = bounds[0]
        self.validate = validate.Range(min=self.minimum, max=self.maximum)
        self.validators = [self.validate]


class IsoDate(fields.Date):
    """A calendar date written exactly ``YYYY-MM-DD`` (docs/http.md "Conventions"), not any form
    that ``date.fromisoformat`` accepts (``20260301``, ``2026-W10-1``), from ``FIRST_DATE`` to
    ``LAST_DATE``.  Every date a request carries, in its body or its query, is one, so the range
    is checked here only (the pages' forms and period queries load the same fields)."""

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> date:
        if isinstance(value, str) and not _ISO_DATE.fullmatch(value):
            raise self.make_error("invalid", input=value, obj_type=self.OBJ_TYPE)
        day: date = super()._deserialize(value, attr, data, **kwargs)
        if not FIRST_DATE <= day <= LAST_DATE:
            raise ValidationError(DATE_RANGE_MESSAGE)
        return day


_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def date_range_property(
    _converter: Any, field: Any, ret: dict[str, Any], **_: Any
) -> dict[str, Any]:
    """An apispec attribute function: an ``IsoDate`` field's description in the OpenAPI
    document ends with the range it takes, to today for an ``EventDate`` (OpenAPI 3.0 has no
    bounds for a date string)."""
    if not isinstance(field, IsoDate):
        return {}
    described = str(ret.get("description", "")).rstrip()
    last = "today" if isinstance(field, EventDate) else LAST_DATE.isoformat()
    sentence = f"From {FIRST_DATE.isoformat()} to {last}."
    return {"description": f"{described} {sentence}" if described else sentence}


class EventDate(IsoDate):
    """The date of something that has happened: it may not lie in the future (docs/http.md)."""

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> date:
        day: date = super()._deserialize(value, attr, data, **kwargs)
        if day > clock.today():
            raise ValidationError("This date is in the future.")
        return day


class Ratio(fields.String):
    """A new plan's replacement ratio, a decimal string such as ``"2"`` or ``"1.25"``
    (``replacement_rules.parse_new_ratio``: at most 100, at most 4 decimal places).  A ratio
    below 1:1 passes here: the domain refuses it as ``ratio_too_low``."""

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> str:
        text: str = super()._deserialize(value, attr, data, **kwargs)
        try:
            replacement_rules.parse_new_ratio(text)
        except ValidationFailed as refused:
            raise ValidationError(refused.detail) from refused
        return text


class PageOf(Schema):
    """``{"items": [...], "next_cursor": ...}``"""

    next_cursor = fields.String(
        allow_none=True,
        metadata={
            "description": "the next page's cursor, passed back as `cursor`; null on the last page"
        },
    )


def page_schema(item: type[Schema], name: str) -> type[Schema]:
    """A page schema whose items are ``item``."""
    return type(name, (PageOf,), {"items": fields.List(fields.Nested(item))})


class PeriodArgs(Schema):
    """``?from=&to=``: the days of a statement or a report."""

    from_ = IsoDate(data_key="from", required=True)
    to = IsoDate(required=True)


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


def WithdrawnSqft() -> fields.Integer:  # noqa: N802
    """A reservation's ``withdrawn_sqft``, read-only and described in the OpenAPI document."""
    return fields.Integer(
        dump_only=True,
        metadata={
            "description": (
                "Square feet the withdrawal that posted the reservation took from it (the "
                "withdrawal's allocations of it). Less than `amount_sqft` when it was posted in "
                "part (the rest went back to its lots); 0 unless `status` is `posted`. A reversal "
                "on appeal leaves it as it was and sets `reversed_on_appeal`: the credits went "
                "back."
            )
        },
    )


def ServiceArea(**kwargs: Any) -> StrictInteger:  # noqa: N802
    """A bank service area number (1..10; the ruleset checks the upper bound)."""
    return StrictInteger(minimum=1, **kwargs)


# --- the bounds of the text a request carries --------------------------------------------------


def RecordId(**kwargs: Any) -> fields.String:  # noqa: N802
    """The id of a record the request names: at most 40 characters."""
    return fields.String(validate=validate.Length(max=40), **kwargs)


def _not_blank(value: str) -> None:
    if not visible(value):
        raise ValidationError("Must not be blank.")


def text_of(max_length: int) -> validate.Validator:
    """1..``max_length`` characters, at least one of them visible (``bank.text.visible``): a
    name, an address or a reason of spaces, or of zero-width or control characters, says
    nothing, and a notice would be mailed to it."""
    return validate.And(validate.Length(min=1, max=max_length), _not_blank)


def Name(**kwargs: Any) -> fields.String:  # noqa: N802
    """The name of a person, a body or a project: 1..300 characters, not blank."""
    return fields.String(validate=text_of(300), **kwargs)


def Address(**kwargs: Any) -> fields.String:  # noqa: N802
    """A mailing address: 1..1000 characters, not blank."""
    return fields.String(validate=text_of(1000), **kwargs)


def County(**kwargs: Any) -> fields.String:  # noqa: N802
    """A county's name: 1..100 characters, not blank."""
    return fields.String(validate=text_of(100), **kwargs)


def Reason(**kwargs: Any) -> fields.String:  # noqa: N802
    """Why something is done (a correction, a reversal, a release): 1..2000 characters, not
    blank."""
    return fields.String(required=True, validate=text_of(2000), **kwargs)


WETLAND_TYPES = [str(n) for n in range(1, 9)]
