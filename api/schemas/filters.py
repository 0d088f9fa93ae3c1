"""Query schemas of the listings' filters (docs/http.md "Lists") and the ``external_refs`` field
that plans, withdrawals, payments and securities take (``bank.external_refs``)."""

from __future__ import annotations

from typing import Any

from marshmallow import ValidationError, fields, validate

from api.pagination import PageArgs
from bank import external_refs


class ExternalRefs(fields.Dict):
    """``{"permit": "WCA-2026-118", ...}``: at most 10 names of 1..40 of ``[a-z0-9_-]``, each
    with text of 1..200 characters."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault(
            "metadata",
            {
                "description": "The integrator's own references: at most 10, names of 1 to 40 "
                "of a-z, 0-9, _ and -, values of 1 to 200 characters.",
                "example": {"permit": "WCA-2026-118", "parcel": "86-012-3400"},
                "maxProperties": external_refs.MAX_REFS,
            },
        )
        super().__init__(keys=fields.String(), values=fields.String(), **kwargs)

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> dict[str, str]:
        found = external_refs.problems(value)
        if found:
            raise ValidationError(found)
        return dict(value)


def external_refs_in() -> ExternalRefs:
    """The ``external_refs`` of a create request: optional, none by default."""
    return ExternalRefs(load_default=dict)


class ExternalRefFilter(fields.String):
    """``?external_ref=permit:WCA-2026-118``: the records whose reference ``permit`` is exactly
    ``WCA-2026-118``; loaded as ``(key, value)``."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault(
            "metadata",
            {
                "description": "name:value: only the records whose reference of that name is "
                "exactly that value",
                "example": "permit:WCA-2026-118",
            },
        )
        super().__init__(load_default=None, **kwargs)

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> Any:
        text = super()._deserialize(value, attr, data, **kwargs)
        parsed = external_refs.parse_filter(text)
        if parsed is None:
            raise ValidationError("name:value, a reference's name and its exact value")
        return parsed


class AccountListArgs(PageArgs):
    """``GET /accounts``: ``?holder_id=`` keeps that holder's accounts."""

    holder_id = fields.String(
        load_default=None,
        validate=validate.Length(min=1, max=40),
        metadata={"description": "only this holder's accounts"},
    )
