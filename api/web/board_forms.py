"""What the board's forms share: who may use them, and a refusal's sentence beside its field.

The forms themselves are ``api.web.forms``' (CSRF secret, their own Idempotency-Key claimed in
the write's unit of work, the API's input schemas, 303 on success).  A domain refusal that names
no field in its ``errors`` but says which field or which deposit action it is about
(``field=``, ``action_index=``: Subd. 12's refusals) is shown beside that field here too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from api.context import ruleset
from api.web import forms
from api.web.forms import Field
from bank.errors import BankError

T = TypeVar("T")

BOARD = "board"


#: a board form's route: its view is given the signed-in board member first, and anyone else
#: the 403 page (sign-in first)
board_only = forms.signed_in(BOARD)


def calling(use_case: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``use_case(*args, **kwargs)``, its refusal shown beside the field it names."""
    try:
        return use_case(*args, **kwargs)
    except BankError as refused:
        name_field(refused)
        raise


def name_field(error: BankError) -> None:
    """Give a refusal that names its field (or action) but no ``errors`` its sentence there:
    ``api.web.forms.refusal`` places each of a refusal's ``errors`` beside its field."""
    name = field_of(error)
    if name and not error.fields.get("errors"):
        error.fields["errors"] = {name: [error.detail]}


def field_of(error: BankError) -> str | None:
    """The form field a refusal is about: ``actions.<i>.<field>`` for a deposit's action."""
    where = error.fields.get("field")
    index = error.fields.get("action_index")
    if isinstance(index, int):
        return f"actions.{index}.{where if isinstance(where, str) else 'credit_sqft'}"
    return where if isinstance(where, str) else None


def columns(row: Any, *names: str) -> dict[str, Any]:
    """A record's fields as a form's starting values (``None`` as blank)."""
    values = {name: getattr(row, name) for name in names}
    return {name: "" if value is None else value for name, value in values.items()}


def service_area() -> Field:
    """The bank service area's field: a number, as the API takes it."""
    count = ruleset().service_area_count
    return Field("service_area", "Bank service area", "number", True, hint=f"1 to {count}.")


def labelled(names: Any) -> tuple[tuple[str, str], ...]:
    """Names such as ``upland_buffer`` as a menu's choices (``upland buffer``)."""
    return tuple((str(name), str(name).replace("_", " ")) for name in names)
