"""The pages' forms: fields rendered server-side, posted with the session's CSRF secret and an
``Idempotency-Key`` of their own, read by the API's own input schemas, and handed to the same
``bank`` use cases as the API.

A form page renders its fields with the session's CSRF secret and a fresh key in hidden fields.
Its POST checks the caller's role and the secret, turns the fields into the JSON body the API
would have received (whole numbers, amounts typed in dollars as cents, booleans, nested objects
and lists from dotted names such as ``impact.area_sqft`` or ``recipients.0.name``) and loads it
with the API's schema, so a field is refused for the same reasons and in the same words as
through the API (an amount's bounds said in dollars).  The key is claimed, the
use case runs and the redirect it earned is stored in one unit of work: a second submit of the
same form answers that redirect again and writes nothing.  Every form posts so (``post``).  A
refusal rolls all of it back and shows the form again, as it is now, with the problem's sentence
beside its field (or above the form); a refusal about the act's state (``settles``: the act is
not open now, so sending the form again could only be refused again) shows the sentence alone,
with no form, as a GET of an act that is not open does.  Blank numbered rows are left out of
the body and the rest close up, so an error's path (which counts the body's rows) is turned
back into the form's own row before it is placed (``Body``).
"""

from __future__ import annotations

import functools
import hashlib
import re
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Concatenate, ParamSpec, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from flask import Blueprint, Response, g, redirect, request, url_for
from marshmallow import Schema, ValidationError
from sqlalchemy.orm import Session
from werkzeug.wrappers import Response as BaseResponse

from api import problems
from api.context import database
from api.problems import ApiProblem
from api.ratelimit import check_write
from api.strict_json import unstorable
from api.web import flash
from api.web.errors import error_page
from api.web.pages import page as page  # the forms' pages render as every page does
from api.web.signin import (
    CSRF_FIELD,
    ENDED,
    BadForm,
    SignInRequired,
    check_signed_in_post,
    signed_in_actor,
)
from bank import access
from bank.access import Actor
from bank.errors import BankError, code_of
from ledger.errors import LedgerError

KEY_FIELD = "idempotency_key"
#: keys a form makes are stored apart from the API's under the same token
KEY_SCOPE = "web:"
_KEY = re.compile(r"[A-Za-z0-9_-]{16,200}")
#: a whole number as people write it: plain digits, or commas between groups of three digits
#: (``12,000``, ``1,234,567``).  Anything else (``1,5``, ``10,00``, ``1_000``, ``12 000``) is sent
#: as typed, and the schema refuses it beside its field: a misplaced separator never changes the
#: amount.
_WHOLE = re.compile(r"[+-]?(?:[0-9]+|[1-9][0-9]{0,2}(?:,[0-9]{3})+)")
#: an amount of dollars as people write it: a sign, a dollar sign, whole dollars written as
#: ``_WHOLE`` writes them, and at most two digits of cents (``12,000.50``, ``$12000.5``, ``-$5``,
#: ``.75``).  Anything else (``1.234``, ``1,5``, ``12 dollars``) is refused beside its field with
#: ``MONEY_WANTED``: a misplaced separator or a third decimal never changes the amount.
_DOLLARS = re.compile(
    r"(?P<sign>[+-]?)\$?\s*(?P<dollars>[0-9]+|[1-9][0-9]{0,2}(?:,[0-9]{3})+)?"
    r"(?:\.(?P<cents>[0-9]{1,2}))?"
)
MONEY_WANTED = "Write an amount in dollars, such as 12,000 or 12,000.50."
#: a number in a schema's message on a field in cents (``Must be greater than or equal to 1``)
_AMOUNT = re.compile(r"(?<![\w.])-?[0-9]+(?![\w.][0-9])")
#: a word that is an id or a code, not English: letters and digits joined by underscores
_CODE = re.compile(r"[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+\b")
#: the schemas' messages, said as a person filling in a form needs them
PLAIN = {
    "Missing data for required field.": "Fill in this field.",
    "Not a valid integer.": "Write a whole number.",
    "Not a valid date.": "Write a date as YYYY-MM-DD.",
    "Shorter than minimum length 1.": "Choose or fill in at least one.",
    "Field may not be null.": "Fill in this field.",
}
#: what the page a form redirects to says was just recorded, by its code (``confirmation``);
#: said once, by ``flash``, never from the address
CONFIRMATIONS: dict[str, str] = {}
#: the field of the redirect kept under a form's key that names its confirmation (``done``):
#: ``post`` takes it off the address and says it by ``flash``
DONE = "done"


@dataclass(frozen=True)
class Field:
    """One input.  ``name`` is its path in the API's body (``impact.area_sqft``)."""

    name: str
    label: str
    #: ``money`` is an amount in dollars (``12,000.50``) sent as the API's whole cents
    kind: str = "text"  # text | textarea | number | money | date | checkbox | select | checkboxes
    required: bool = False
    choices: tuple[tuple[str, str], ...] = ()
    hint: str = ""
    #: a menu on a numbered row whose choice keeps the row, as a typed field filled in would:
    #: the row's blank fields are then refused beside them, not the row silently left out
    keeps_row: bool = False
    #: a typed field that, filled in, is sent as the field of this name in place of that one's
    #: choice (a record its menu does not offer, named by its id); refused, it is marked itself
    stands_for: str = ""

    @property
    def id(self) -> str:
        return "f-" + self.name.replace(".", "-")


@dataclass(frozen=True)
class Fieldset:
    """Fields that belong together, under a legend."""

    legend: str
    fields: tuple[Field, ...]
    hint: str = ""


Item = Field | Fieldset


@dataclass
class Form:
    """A form as the template renders it: its fields, what was entered, what was refused."""

    action: str
    items: tuple[Item, ...]
    submit: str
    values: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    key: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    #: the act is not open now (``post``): the form is shown as its refusal alone, no fields
    closed: bool = False

    @property
    def csrf(self) -> str:
        return str(g.web.csrf_secret)

    @property
    def csrf_field(self) -> str:
        return CSRF_FIELD

    @property
    def key_field(self) -> str:
        return KEY_FIELD

    def fields(self) -> list[Field]:
        return list(_fields(self.items))

    def value(self, name: str) -> Any:
        """What the field shows: as typed, or as given; an amount given in cents (a money
        field filled in beforehand) in dollars."""
        value = self.values.get(name, "")
        if isinstance(value, int) and not isinstance(value, bool):
            if any(f.name == name and f.kind == "money" for f in self.fields()):
                return dollars(value)
        return value


def _fields(items: Iterable[Item]) -> Iterable[Field]:
    for item in items:
        yield from (item.fields if isinstance(item, Fieldset) else (item,))


@dataclass(frozen=True)
class Refused:
    """Why a submitted form was not used: its status, and the sentences to show."""

    status: int
    errors: dict[str, str]
    problems: list[str]
    #: the refusal's stable code (``conflict``, ``validation_error`` ...), when a use case
    #: refused; ``""`` for what the form's own reading refused
    code: str = ""


#: the codes of refusals about the act's state, not about what was typed: the record is not in
#: a state that allows the act (``conflict``), the act does not apply to it (``not_eligible``),
#: or not for the caller (``forbidden``), or the account it sends from is frozen
#: (``account_frozen``, until the board unfreezes it).  The same codes may refuse what was
#: chosen (a closed account typed to receive, credits of a frozen bank site, a reservation of a
#: frozen account in a withdrawal): the forms that can meet those pass ``post`` an ``open_now``
#: that keeps them open.
SETTLING_CODES = frozenset({"conflict", "not_eligible", "forbidden", "account_frozen"})


def settles(why: Refused) -> bool:
    """Whether ``why`` is about the act's state (``SETTLING_CODES``) and names no field of the
    form: sending the form again, as it is or changed, would be refused again."""
    return why.code in SETTLING_CODES and not why.errors


T = TypeVar("T")


def read_once_then_anew(first: T, read: Callable[[], T]) -> Callable[[], T]:
    """What a ``post`` form is drawn from: ``first`` (as the view read it) the first time, for
    reading what was sent, and ``read()`` anew each time after, so a form shown again after a
    refusal offers what is so then."""
    pending = [first]

    def source() -> T:
        return pending.pop() if pending else read()

    return source


def always_open() -> bool:
    """``post``'s ``open_now`` for a form whose act no record's state closes (recording
    something new, amending an area, a deposit into the account typed, revoking a token, which
    a token revoked already takes with nothing changed): what its use case refuses is what was
    typed."""
    return True


@dataclass(frozen=True)
class Body:
    """The JSON body a form makes (``read``), and where its numbered rows came from.

    Blank rows are left out and the rest close up into the API's lists, so the body's
    ``actions.1`` may be the form's ``actions.2``: ``rows`` gives, for each list (by its dotted
    path in the body), the form's row number of each item kept, in order."""

    data: dict[str, Any]
    rows: dict[str, tuple[int, ...]] = field(default_factory=dict)
    #: a field of the body sent from a typed field that ``stands_for`` it: the typed field's name
    typed: dict[str, str] = field(default_factory=dict)
    #: the form's money fields whose text is no amount in dollars, each with why
    unreadable: dict[str, str] = field(default_factory=dict)
    #: the form's money fields: the schema's bounds on them, in cents, are said in dollars
    money: frozenset[str] = frozenset()

    def row(self, path: str, position: int) -> int:
        """The form's row number of item ``position`` of the body's list ``path``."""
        kept = self.rows.get(path, ())
        return kept[position] if 0 <= position < len(kept) else position

    def form_path(self, path: str) -> str:
        """A path in the body, as an error names it (``actions.1.area_sqft``), as the form
        names the field (``actions.2.area_sqft``)."""
        parts = path.split(".")
        named = [
            str(self.row(".".join(parts[:at]), int(part)))
            if part.isdigit() and ".".join(parts[:at]) in self.rows
            else part
            for at, part in enumerate(parts)
        ]
        return self.typed.get(".".join(named), ".".join(named))

    def refused(self, why: Refused, schema: bool = False) -> Refused:
        """``why`` with each error beside the form's field (paths from the schema or a use
        case count the body's rows), and each money field that was no amount in dollars.  The
        ``schema``'s bounds on a money field (``Must be greater than or equal to 1``) count
        cents: they are said in dollars."""
        errors = {self.form_path(path): message for path, message in why.errors.items()}
        for name in self.money & errors.keys() if schema else ():
            errors[name] = _AMOUNT.sub(lambda m: "$" + dollars(int(m[0])), errors[name])
        return Refused(why.status, errors | self.unreadable, list(why.problems), why.code)


def register(blueprint: Blueprint) -> None:
    blueprint.app_context_processor(lambda: {"form_notice": _confirmation()})


def confirmation(code: str, sentence: str) -> str:
    """Name what a form's redirect confirms (``done``); returns ``code``."""
    if code in CONFIRMATIONS or code in ENDED:  # a page would say another act's sentence
        raise ValueError(f"the confirmation {code!r} is named twice")
    CONFIRMATIONS[code] = sentence
    return code


def _confirmation() -> str | None:
    """What the form just sent from this browser's session did, if it sent it to this page."""
    return CONFIRMATIONS.get(flash.said() or "") if request else None


def user(*roles: str) -> Actor | Response:
    """The signed-in person if their role may use the form; else the 403 page to answer."""
    who = signed_in_actor()
    if who.role not in roles:
        return error_page(403, f"Only {' or '.join(roles)} users may use this form.")
    return who


P = ParamSpec("P")
R = TypeVar("R")


def signed_in(
    *roles: str,
) -> Callable[[Callable[Concatenate[Actor, P], R]], Callable[P, R | Response]]:
    """A form's route for ``roles`` only: the view is given the signed-in person (``user``)
    before its URL's arguments; anyone else gets ``user``'s answer instead."""

    def guard(view: Callable[Concatenate[Actor, P], R]) -> Callable[P, R | Response]:
        @functools.wraps(view)
        def guarded(*args: P.args, **kwargs: P.kwargs) -> R | Response:
            who = user(*roles)
            if isinstance(who, Response):
                return who
            return view(who, *args, **kwargs)

        return guarded

    return guard


def filled(form: Form) -> Form:
    """``form`` with what was posted, to show again."""
    values: dict[str, Any] = {}
    for f in form.fields():
        if f.kind == "checkboxes":
            values[f.name] = request.form.getlist(f.name)
        elif f.kind == "checkbox":
            values[f.name] = f.name in request.form
        else:
            values[f.name] = request.form.get(f.name, "")
    form.values = values
    return form


def refused(form: Form, why: Refused) -> Form:
    """``form`` as posted, with the refusal's sentences: each beside its field if it has one."""
    filled(form)
    names = {f.name: f for f in form.fields()}
    for path, message in why.errors.items():
        if path in names:
            form.errors[path] = message
        else:
            form.problems.append(f"{_label_of(path)}: {message}")
    form.problems[:0] = why.problems
    return form


def _label_of(path: str) -> str:
    """``recipients`` → ``Recipients``; the schema's own ``_schema`` says nothing."""
    if path == "_schema":
        return "The form"
    return path.replace("_", " ").replace(".", " ").capitalize()


# --- the POST ----------------------------------------------------------------------------------


def post(
    who: Actor,
    form: Callable[[], Form],
    schema: Schema,
    act: Callable[[dict[str, Any]], str],
    show: Callable[[Form, int], Response],
    *,
    open_now: Callable[[], bool] | None = None,
) -> Any:
    """Check the form's secret, load the fields of the form ``form`` makes with ``schema`` and
    run ``act`` (which calls a use case and returns the page to redirect to) in one unit of work
    with the form's key; redirect (303), or, refused, ``show`` a fresh form (``form`` is asked
    again, after the refusal: what it offers is as it is now) as it was sent, with why, at the
    refusal's status.

    A refusal about the act's state (``settles``) closes the form (``Form.closed``): it is
    shown as the refusal alone, as a GET of an act that is not open shows it, for a form sent
    again could only be refused again; a refusal of what was typed shows the form to correct.
    ``open_now``, the page's own weighing of whether the act is open (``plan_acts.act_refusal``,
    ``money.open_acts``, the account's ``accounts.send_refusal``; ``always_open`` for an act no
    record's state closes), is asked after such a refusal: an act still open (refused for
    something typed that the use case alone checks, such as a peatland approval without its
    record, or a transfer to a closed account) keeps its form.

    A session whose token was revoked while the form was on its way can send no form at all:
    the answer is the sign-in page, saying why (``signin.ENDED``).  The one act that may end
    with the caller's own token revoked is that revocation (``access.revoke_token`` confirms
    the token before it revokes it)."""

    def again(why: Refused) -> Response:
        shown = refused(form(), why)
        shown.closed = settles(why) and not (open_now is not None and open_now())
        return show(shown, why.status)

    check_signed_in_post()
    key = request.form.get(KEY_FIELD, "")
    if not _KEY.fullmatch(key):
        raise BadForm()
    try:
        check_write(who.token_id)
    except ApiProblem as limited:
        return error_page(limited.status, limited.detail, limited.headers)
    sent = form()
    unusable = unstorable_fields(sent)
    if unusable:
        return again(Refused(422, unusable, ["Check the fields marked below."]))
    body = read(sent)
    try:
        data = schema.load(body.data)
    except ValidationError as invalid:
        why = Refused(422, flatten(invalid.messages), ["Check the fields marked below."])
        return again(body.refused(why, schema=True))
    if body.unreadable:
        return again(body.refused(Refused(422, {}, ["Check the fields marked below."])))
    fingerprint = _fingerprint()

    def unit(session: Session) -> str:
        stored = access.claim_key(session, who.token_id, KEY_SCOPE + key, fingerprint)
        if stored is not None:
            return _replayed(stored, fingerprint)
        location = act(data)
        access.confirm_token(session, who.token_id)
        access.store_result(session, who.token_id, KEY_SCOPE + key, 303, location, "text/uri-list")
        return location

    try:
        location = database().run(unit)
    except access.TokenRevoked:
        # the session's token was revoked while the form was on its way: no form can be sent
        # with it any more, so the answer is the sign-in page, saying why (``signin``)
        raise SignInRequired() from None
    except LedgerError as error:
        return again(body.refused(refusal(error)))
    return _confirmed(location)


def _confirmed(location: str) -> BaseResponse:
    """The redirect to ``location`` (kept under the form's key, so a second submit answers it
    again), its confirmation (``done``) said by ``flash`` in this session, not by the address."""
    parts = urlsplit(location)
    fields = parse_qsl(parts.query, keep_blank_values=True)
    code = next((value for name, value in fields if name == DONE), None)
    if code is None:
        return redirect(location, 303)
    # the rest of the query written as ``url_for`` writes it
    query = urlencode([f for f in fields if f[0] != DONE], safe="!$'()*,/:;?@")
    return flash.say(redirect(urlunsplit(parts._replace(query=query)), 303), code, g.web)


class _KeyReused(BankError):
    code = "idempotency_conflict"


def _replayed(stored: access.StoredResult, fingerprint: str) -> str:
    if stored.request_hash != fingerprint or stored.status != 303 or not stored.body:
        raise _KeyReused(
            "this form was already sent with other values; it is shown again to send anew"
        )
    return stored.body


def refusal(error: LedgerError) -> Refused:
    """A use case's refusal as a person reads it: the sentence, and each field's own."""
    status = problems.status_of_error(error)
    if status == 500:
        return Refused(500, {}, [problems.UNEXPECTED])
    if status == 404:
        return Refused(404, {}, ["There is no such record, or you may not see it."])
    errors = error.fields.get("errors") or {}
    return Refused(status, flatten(errors), [sentence(error.detail)], code_of(error))


def sentence(text: str) -> str:
    """``"the expiry is in the past"`` → ``"The expiry is in the past."``; a sentence that
    starts with an id or a code (``res_81827e7e…``, ``replacement_wetland``) keeps it as written."""
    text = " ".join(str(text).split())
    if not text:
        return text
    if not _CODE.match(text):
        text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def flatten(messages: Any, prefix: str = "") -> dict[str, str]:
    """Nested error messages by dotted path (``recipients.0.name``), each a sentence."""
    out: dict[str, str] = {}
    if not isinstance(messages, dict):
        return {prefix.rstrip(".") or "_schema": _said(messages)}
    for key, value in messages.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, path + "."))
        else:
            out[path] = _said(value)
    return out


def _said(value: Any) -> str:
    texts = value if isinstance(value, list) else [value]
    return " ".join(sentence(PLAIN.get(str(t), str(t))) for t in texts if not isinstance(t, dict))


def _fingerprint() -> str:
    """The form's path and fields (not its secret or key): a second submit matches the first."""
    items = sorted(
        (name, value)
        for name, values in request.form.lists()
        if name not in (CSRF_FIELD, KEY_FIELD)
        for value in values
    )
    raw = f"POST {request.path}\n" + "\n".join(f"{n}={v}" for n, v in items)
    return hashlib.sha256(raw.encode()).hexdigest()


# --- reading the fields ------------------------------------------------------------------------


def unstorable_fields(form: Form) -> dict[str, str]:
    """The fields whose text no record can hold (a NUL pasted in, an unpaired surrogate), each
    with why: the form comes back with them marked rather than failing in the database."""
    marked = {}
    for f in form.fields():
        for text in request.form.getlist(f.name):
            why = unstorable(text)
            if why is not None:
                marked[f.name] = sentence(f"This {why}")
    return marked


def body_of(form: Form) -> dict[str, Any]:
    """The JSON body the API would get (``read``'s)."""
    return read(form).data


def read(form: Form) -> Body:
    """The JSON body the API would get: blank fields left out, whole numbers as numbers,
    checkboxes as booleans, dotted names nested, numbered rows as lists (a row whose typed
    fields are all blank is left out, whatever its menus say, unless a menu that ``keeps_row``
    is chosen; a typed field that ``stands_for`` another, filled in, is sent in its place); and
    which form row each item of a list came from."""
    typed = {
        f.stands_for: f.name
        for f in form.fields()
        if f.stands_for and request.form.get(f.name, "").strip()
    }
    tree: dict[str, Any] = {}
    unreadable: dict[str, str] = {}
    for f in form.fields():
        if _row_is_blank(form, f) or f.name in typed:
            continue
        value = _value(f)
        if f.kind == "money" and isinstance(value, str):
            unreadable[f.name] = MONEY_WANTED
        if value is not None:
            _put(tree, (f.stands_for or f.name).split("."), value)
    pruned, rows = _pruned(tree)
    data = pruned if isinstance(pruned, dict) else {}
    money = frozenset(f.name for f in form.fields() if f.kind == "money")
    return Body(data, rows if isinstance(pruned, dict) else {}, typed, unreadable, money)


def _value(f: Field) -> Any:
    if f.kind == "checkbox":
        return f.name in request.form
    if f.kind == "checkboxes":
        return request.form.getlist(f.name)
    text = request.form.get(f.name, "").strip()
    if not text:
        return None
    if f.kind == "number" and _WHOLE.fullmatch(text):
        return int(text.replace(",", ""))
    if f.kind == "money":
        cents = cents_of(text)
        return text if cents is None else cents
    return text


def cents_of(text: str) -> int | None:
    """``"$12,000.50"`` → ``1200050``; ``None`` if ``text`` is no amount in dollars
    (``_DOLLARS``)."""
    written = _DOLLARS.fullmatch(text.strip())
    if written is None or not (written["dollars"] or written["cents"]):
        return None
    whole = int((written["dollars"] or "0").replace(",", ""))
    cents = whole * 100 + int((written["cents"] or "0").ljust(2, "0"))
    return -cents if written["sign"] == "-" else cents


def dollars(cents: int) -> str:
    """``1200050`` → ``"12,000.50"``: an amount of cents as a money field shows it."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{whole:,}.{part:02d}"


def _row_is_blank(form: Form, f: Field) -> bool:
    parts = f.name.split(".")
    rows = [i for i, part in enumerate(parts) if part.isdigit()]
    if not rows:
        return False
    prefix = ".".join(parts[: rows[-1] + 1]) + "."
    row = [other for other in form.fields() if other.name.startswith(prefix)]
    if any(other.keeps_row and request.form.get(other.name, "").strip() for other in row):
        return False
    typed = [other for other in row if other.kind not in ("select", "checkbox")]
    return all(not request.form.get(other.name, "").strip() for other in typed)


def _put(tree: dict[str, Any], path: list[str], value: Any) -> None:
    node = tree
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = value


def _pruned(node: Any) -> tuple[Any, dict[str, tuple[int, ...]]]:
    """Empty objects left out; an object keyed ``0``, ``1``, … becomes a list in that order.
    With it, for each list made (by its dotted path in what is returned, ``""`` for ``node``
    itself), the key each of its items had: the form's row number."""
    if not isinstance(node, dict):
        return node, {}
    kept: dict[str, tuple[Any, dict[str, tuple[int, ...]]]] = {}
    for key, child in node.items():
        value, rows = _pruned(child)
        if value not in ({}, None):
            kept[key] = (value, rows)
    if kept and all(key.isdigit() for key in kept):
        order = sorted(kept, key=int)
        listed: dict[str, tuple[int, ...]] = {"": tuple(int(key) for key in order)}
        for position, key in enumerate(order):
            listed.update(_under(str(position), kept[key][1]))
        return [kept[key][0] for key in order], listed
    named: dict[str, tuple[int, ...]] = {}
    for key, (_kept, rows) in kept.items():
        named.update(_under(key, rows))
    return ({key: value for key, (value, _rows) in kept.items()} or None), named


def _under(prefix: str, rows: dict[str, tuple[int, ...]]) -> dict[str, tuple[int, ...]]:
    return {f"{prefix}.{path}" if path else prefix: kept for path, kept in rows.items()}


def done(endpoint: str, code: str, anchor: str = "", **values: Any) -> str:
    """The page a form redirects to, confirming ``code`` (``_confirmed``)."""
    return url_for(endpoint, done=code, **values) + (f"#{anchor}" if anchor else "")
