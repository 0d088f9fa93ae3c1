"""Reply schemas derived from the frozen dataclasses the bank's use cases return, so that a
reply's shape is written once, in ``bank/``: ``AppealOut = reply_schema(AppealView, "AppealOut")``.

Each field of the dataclass becomes a field of the schema, in the dataclass's order, by its type
hint: ``str``, ``int``, ``bool``, ``date``, ``datetime`` (a ``Timestamp``: always UTC with its
offset), ``X | None`` (the same field, null allowed), ``list[X]`` and ``tuple[X, ...]`` (a list),
``dict[str, X]`` (an object), and a class with a reply schema of its own (nested): a dataclass
derived before, or a row the API shows through a hand-written schema (``register``).  A name
ending in ``_`` to dodge a Python keyword (``from_``) goes on the wire without it.

The schema keeps the name it is given: flask-smorest names the OpenAPI component after it.
"""

from __future__ import annotations

import dataclasses
import keyword
import types
import typing
from collections.abc import Callable, Iterable
from datetime import date, datetime
from typing import Any, Final

from marshmallow import Schema, fields

from api.schemas.common import CreditClassOut, Timestamp
from bank.credits import CreditClass

_SCALARS: Final[dict[object, Callable[..., fields.Field[Any]]]] = {
    str: fields.String,
    int: fields.Integer,
    bool: fields.Boolean,
    date: fields.Date,
    datetime: Timestamp,
}

#: the reply schema of each class a reply nests, by that class (exactly: not its subclasses,
#: whose replies carry more)
_SCHEMAS: dict[type, type[Schema]] = {}


def register(cls: type, schema: type[Schema]) -> None:
    """Show ``cls`` wherever a reply nests it as ``schema``: for a row (not a dataclass) the API
    shows some columns of, or a dataclass whose schema is not derived."""
    known = _SCHEMAS.get(cls)
    if known is not None:
        raise TypeError(f"{cls.__qualname__} already replies as {known.__name__}")
    _SCHEMAS[cls] = schema


def reply_schema(
    view_cls: type,
    name: str,
    *,
    only: Iterable[str] | None = None,
    exclude: Iterable[str] = (),
    **overrides: fields.Field[Any],
) -> type[Schema]:
    """A ``Schema`` named ``name`` with the fields of the dataclass ``view_cls``: all of them, or
    ``only`` those, less ``exclude``; ``overrides`` gives the field of a name whose API type is
    not the one its hint maps to.  A schema of all the fields becomes ``view_cls``'s own: a
    later reply that nests ``view_cls`` nests it."""
    if not dataclasses.is_dataclass(view_cls):
        raise TypeError(f"{view_cls!r} is not a dataclass")
    names = [f.name for f in dataclasses.fields(view_cls)]
    chosen = _chosen(view_cls, names, only, exclude)
    unknown = sorted(set(overrides) - set(chosen))
    if unknown:
        raise TypeError(f"{name}: no field {', '.join(unknown)} in {view_cls.__qualname__}")
    hints = typing.get_type_hints(view_cls)
    attrs: dict[str, Any] = {}
    for field_name in chosen:
        if field_name in overrides:
            field = overrides[field_name]
        else:
            field = _field(hints[field_name], f"{name}.{field_name}")
        if _dodges_keyword(field_name) and field.data_key is None:
            field.data_key = field_name[:-1]
        attrs[field_name] = field
    schema = type(name, (Schema,), attrs)
    if chosen == names:
        register(view_cls, schema)
    return schema


def _chosen(
    view_cls: type, names: list[str], only: Iterable[str] | None, exclude: Iterable[str]
) -> list[str]:
    """The names of ``view_cls``'s fields a schema has, in their order."""
    kept = set(names if only is None else only)
    dropped = set(exclude)
    unknown = sorted((kept | dropped) - set(names))
    if unknown:
        raise TypeError(f"no field {', '.join(unknown)} in {view_cls.__qualname__}")
    return [n for n in names if n in kept and n not in dropped]


def _dodges_keyword(name: str) -> bool:
    return name.endswith("_") and keyword.iskeyword(name[:-1])


def _field(hint: Any, where: str, **kwargs: Any) -> fields.Field[Any]:
    """The field of a value of type ``hint``; ``where`` names it in an error."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        present = [a for a in args if a is not type(None)]
        if len(present) == 1 and len(args) == 2:
            return _field(present[0], where, allow_none=True, **kwargs)
    elif origin is list or (origin is tuple and len(args) == 2 and args[1] is Ellipsis):
        return fields.List(_field(args[0], where), **kwargs)
    elif origin is dict and args[0] is str:
        if args[1] is Any:
            return fields.Dict(**kwargs)
        return fields.Dict(keys=fields.String(), values=_field(args[1], where), **kwargs)
    elif hint in _SCALARS:
        return _SCALARS[hint](**kwargs)
    elif hint in _SCHEMAS:
        return fields.Nested(_SCHEMAS[hint], **kwargs)
    elif isinstance(hint, type) and dataclasses.is_dataclass(hint):
        raise TypeError(
            f"{where}: no reply schema for the dataclass {hint.__qualname__}; "
            "derive one before a reply that nests it"
        )
    raise TypeError(f"{where}: a reply schema maps no {hint!r} (give the field as an override)")


# a credit class is shown by its four columns that name it, never its ledger accounts
register(CreditClass, CreditClassOut)
