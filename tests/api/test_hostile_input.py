"""Issue 21 §5, hostile input: CSV cells a spreadsheet would run as formulas, open redirects
after sign-in, cursors the server never issued, bodies over the size limit (with and without a
Content-Length) and authorization decided before a body is read.  Each on SQLite and
PostgreSQL, through the Flask test client; ``tests/system/test_hostile_input.py`` repeats the
chunked body against a real gunicorn server."""

from __future__ import annotations

import base64
import csv
import io
import json
import re
from typing import Any
from urllib.parse import unquote

import pytest
from flask import Flask
from sqlalchemy import text

from api.roles import declared
from bank.access import ROLES
from tests.api.conftest import Api
from tests.api.kit import Kit, ok, on, problem, unique
from tests.api.web_kit import csrf_of, parse, signed_in
from tests.system.test_authorization_matrix import MATRIX

CSV = {"Accept": "text/csv"}
FORMULA = '=HYPERLINK("http://evil.example","x")'
DAY = "2026-06-01"


@pytest.fixture
def kit(api: Api, app: Flask) -> Kit:
    return Kit(api, app)


def csv_rows(response: Any) -> list[dict[str, str]]:
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    assert response.mimetype == "text/csv"
    return list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))


# --- CSV cells ---------------------------------------------------------------------------------


def test_a_memo_that_is_a_formula_reads_back_as_text_in_every_csv(kit: Kit, app: Flask) -> None:
    memos = [FORMULA, "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "plain"]
    with on(DAY):
        source = kit.funded(10_000)
        target = kit.account(source["holder"]["id"])
        moved = [
            ok(
                kit.api.post(
                    "/transfers",
                    {
                        "from_account_id": source["id"],
                        "to_account_id": target,
                        "credit_class": source["unrestricted"],
                        "amount_sqft": 500,
                        "memo": memo,
                    },
                )
            )
            for memo in memos
        ]
    expected = {"'" + m for m in memos[:-1]} | {"plain"}
    period = f"from={DAY}&to={DAY}"

    journal = csv_rows(kit.api.get(f"/audit/journal?account_id={source['id']}", headers=CSV))
    by_tx = {row["transaction_id"]: row for row in journal}
    assert {by_tx[t["transaction_id"]]["memo"] for t in moved} == expected

    statement = csv_rows(kit.api.get(f"/accounts/{source['id']}/statement?{period}", headers=CSV))
    sent = [row for row in statement if row["row"] == "entry" and row["kind"] == "transfer"]
    assert {row["memo"] for row in sent} == expected
    # an amount is a number, written as one: never prefixed, never quoted
    assert {row["amount_sqft"] for row in sent} == {"-500"}
    raw = kit.api.get(f"/accounts/{source['id']}/statement?{period}", headers=CSV)
    text = raw.get_data(as_text=True)
    assert ",-500," in text and "'-500" not in text and '"-500"' not in text
    assert '"\'=HYPERLINK(""http://evil.example"",""x"")"' in text

    entries = csv_rows(kit.api.get(f"/accounts/{source['id']}/entries", headers=CSV))
    assert {row["memo"] for row in entries if row["kind"] == "transfer"} == expected
    assert {row["amount_sqft"] for row in entries if row["kind"] == "transfer"} == {"-500"}

    # the page's statement download is the same CSV
    client = signed_in(app.test_client(), source["holder"]["token"])
    page = client.get(f"/accounts/{source['id']}/statement.csv?{period}")
    assert page.get_data(as_text=True) == text


# --- next= after sign-in -----------------------------------------------------------------------

#: as sent in the query string of ``GET /sign-in``
OFF_SITE = [
    "/%09/evil.example",  # a browser drops the TAB: //evil.example
    "/%0d%0a/evil.example",
    "/%2509/evil.example",  # the same, encoded twice
    "//evil.example",
    "/%2F/evil.example",
    "/\\evil.example",
    "/%5Cevil.example",
    "https://evil.example/",
    "https:/evil.example",
    "javascript:alert(1)",
    "evil.example",
    "/\x7f/evil.example",
]


def next_in_form(response: Any) -> str:
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    return str(parse(response.get_data(as_text=True)).one("input", name="next").attrs["value"])


@pytest.mark.parametrize(
    "address",
    [
        "/audit/journal?kind=%00",
        "/audit/journal?format=csv&kind=%00",
        "/audit/journal?format=csv&account_id=a%00",
        "/plans?q=%00",
    ],
)
def test_a_nul_in_a_query_parameter_is_422_before_anything_streams(api: Api, address: str) -> None:
    """A CSV export would otherwise answer 200 and its header, then fail on PostgreSQL."""
    response = api.get(address)
    body = problem(response, 422, "validation_error")
    assert body["errors"] and response.mimetype == "application/problem+json"


@pytest.mark.parametrize("target", OFF_SITE)
def test_sign_in_follows_next_only_to_a_path_on_this_site(
    app: Flask, holder: dict[str, str], target: str
) -> None:
    # the whole flow: the form keeps home as next; posted as is, the target is refused too
    for as_sent in (True, False):
        client = app.test_client()
        form = client.get(f"/sign-in?next={target}")
        assert next_in_form(form) == "/"
        response = client.post(
            "/sign-in",
            data={
                "csrf_token": csrf_of(form.get_data(as_text=True)),
                "token": holder["token"],
                "next": next_in_form(form) if as_sent else unquote(target),
            },
        )
        assert response.status_code == 303
        assert response.headers["Location"] == "/"

    # signed in already, the sign-in page redirects at once: also home
    again = client.get(f"/sign-in?next={target}")
    assert again.status_code == 303 and again.headers["Location"] == "/"


def test_sign_in_keeps_a_path_on_this_site(app: Flask, holder: dict[str, str]) -> None:
    client = app.test_client()
    form = client.get("/sign-in?next=/plans/x")
    assert next_in_form(form) == "/plans/x"
    response = client.post(
        "/sign-in",
        data={
            "csrf_token": csrf_of(form.get_data(as_text=True)),
            "token": holder["token"],
            "next": next_in_form(form),
        },
    )
    assert response.status_code == 303 and response.headers["Location"] == "/plans/x"
    again = client.get("/sign-in?next=/accounts/acct_x%3Ffrom%3D2026-01-01")
    assert again.headers["Location"] == "/accounts/acct_x?from=2026-01-01"


# --- cursors -----------------------------------------------------------------------------------


def b64(value: Any) -> str:
    raw = value if isinstance(value, bytes) else json.dumps(value).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.fixture
def listings(kit: Kit, app: Flask, holder: dict[str, str]) -> dict[str, str]:
    """Every listing that takes ``cursor``, each with at least two rows to page through."""
    with on(DAY):
        funded = kit.funded(10_000)
        other = kit.funded(10_000)
        for _ in range(2):
            ok(
                kit.api.post(
                    "/transfers",
                    {
                        "from_account_id": funded["id"],
                        "to_account_id": other["id"],
                        "credit_class": funded["unrestricted"],
                        "amount_sqft": 100,
                    },
                )
            )
        for _ in range(2):
            plan = kit.board_plan(funded["lgu"]["id"], received_on=DAY)
            fee = {"kind": "processing_fee", "amount_cents": 100, "payer": "A. Payer"}
            ok(kit.api.post("/payments", {**fee, "plan_id": plan["id"], "received_on": DAY}))
        guaranteed = kit.board_plan(
            funded["lgu"]["id"],
            received_on=DAY,
            method="project_specific",
            security_required_cents=100,
        )
        for _ in range(2):
            security = {"kind": "cash", "issuer": "Surety Co", "amount_cents": 100}
            security |= {"irrevocable": True, "issued_on": DAY, "expires_on": "2030-01-01"}
            ok(kit.api.post(f"/plans/{guaranteed['id']}/securities", security))
        for _ in range(2):
            body = kit.reservation_body(plan["id"], funded["unrestricted"], 100)
            ok(kit.api.post(f"/accounts/{funded['id']}/reservations", body))
    for _ in range(2):  # refused requests are audit events
        assert kit.api.get("/audit/verify", token=holder["token"]).status_code == 403
    return {
        "accounts": "/accounts",
        "entries": f"/accounts/{funded['id']}/entries",
        "other entries": f"/accounts/{other['id']}/entries",
        "lots": f"/accounts/{other['id']}/lots",  # its own lot and the one transferred in
        "reservations": f"/accounts/{funded['id']}/reservations",
        "plans": "/plans",
        "payments": "/payments",
        "securities": "/securities",
        "journal": "/audit/journal",
        "events": "/audit/events",
    }


def issued_cursor(api: Api, path: str) -> str:
    body = ok(api.get(f"{path}?limit=1"), 200)
    assert body["next_cursor"], path
    return str(body["next_cursor"])


#: the listings of an account's rows: one name for every account's (a cursor names a row, looked
#: up in the account asked for)
ACCOUNT_LISTINGS = re.compile(r"^/accounts/[^/]+/(lots|reservations)$")


def crafted(path: str) -> list[str]:
    """Cursors the server never issued: text, base64 of other bytes, JSON of other shapes, a
    key of the wrong type or kind."""
    name = ACCOUNT_LISTINGS.sub(r"/accounts/{account_id}/\1", path)
    wrong_keys: list[Any] = [None, True, 1.5, -1, 2**64, "1", "x' OR '1'='1", {"id": 1}, [1]]
    prefixes = {"/accounts": "acct", "/plans": "plan", "/payments": "pay", "/securities": "sec"}
    prefixes |= {"/accounts/{account_id}/lots": "lot", "/accounts/{account_id}/reservations": "res"}
    if name in prefixes:  # keyed by an id of their own kind
        own, other = prefixes[name], "acct" if name != "/accounts" else "plan"
        wrong_keys += [f"{other}_0123456789abcdef", f"{own}_xyz", f"{own}_" + "0" * 65, 1]
    if name.endswith("/entries"):  # keyed by a place in the chain: (seq, entry id)
        wrong_keys += [[1, 2, 3], [-1, 1], [1, -1], [1, 2**64], [1.5, 1], [True, 1], ["1", "2"]]
        wrong_keys += [[None, 1], [[1], 1], {"seq": 1, "entry_id": 1}]
    return [
        "not a cursor",
        "%%%",
        "abc",
        "A" * 5_000,
        b64(b"\xff\xfe\x00"),
        b64({"seq": 1}),
        b64(1),
        b64("acct_0000000000000000"),
        b64([name]),
        b64([name, 1, 2]),
        b64(["/elsewhere", 1]),
        b64([[name], 1]),
        b64([name, 1]) + "==",
        *(b64([name, key]) for key in wrong_keys),
    ]


def test_a_cursor_the_server_did_not_issue_is_400_on_every_listing(
    kit: Kit, listings: dict[str, str]
) -> None:
    issued = {label: issued_cursor(kit.api, path) for label, path in listings.items()}
    for label, path in listings.items():
        # its own cursor pages on
        assert ok(kit.api.get(f"{path}?limit=1&cursor={issued[label]}"), 200)["items"]
        others = [cursor for other, cursor in issued.items() if other != label]
        for cursor in crafted(path) + others:
            response = kit.api.get(path, query_string={"limit": 1, "cursor": cursor})
            assert response.status_code == 400, (label, cursor[:100], response.json)
            body = problem(response, 400, "bad_request")
            assert "cursor" in body["detail"], (label, cursor)


# --- bodies over the size limit ----------------------------------------------------------------

ONE_MIB = 1024 * 1024


def padded(body: dict[str, Any], size: int) -> bytes:
    """``body`` as JSON followed by spaces to ``size`` bytes: cut anywhere after the JSON, the
    rest still parses (so a truncated body would be acted on)."""
    raw = json.dumps(body).encode()
    return raw + b" " * (size - len(raw))


def post_chunked(client: Any, path: str, raw: bytes, token: str | None) -> Any:
    """A body without Content-Length, as a server hands over a ``Transfer-Encoding: chunked``
    one: de-chunked, its stream terminated by the server (``wsgi.input_terminated``)."""
    headers = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return client.post(
        path,
        input_stream=io.BytesIO(raw),
        headers=headers,
        environ_overrides={"wsgi.input_terminated": True},
    )


def count(app: Flask, table: str) -> int:
    with app.extensions["wetbank.db"].engine.connect() as connection:
        return int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())


def test_a_body_over_the_limit_is_413_with_or_without_a_content_length(
    app: Flask, kit: Kit, board_token: str
) -> None:
    client = app.test_client()
    name = unique("Chunked")
    over = padded({"name": name}, ONE_MIB + 10)
    holders = count(app, "holders")

    chunked = post_chunked(client, "/api/v1/holders", over, board_token)
    sized = kit.api.post("/holders", data=over, headers={"Content-Type": "application/json"})

    for response in (chunked, sized):
        problem(response, 413, "payload_too_large")
    assert count(app, "holders") == holders
    # a bodiless action is refused too, not done with its body ignored
    account_id = kit.account(kit.holder()["id"])
    frozen = post_chunked(client, f"/api/v1/accounts/{account_id}/freeze", over, board_token)
    problem(frozen, 413, "payload_too_large")
    assert kit.account_body(account_id)["status"] == "open"
    # a page's form too
    assert post_chunked(client, "/sign-in", over, None).status_code == 413

    # at the limit and under it, the same chunked request is judged on its content
    for size in (ONE_MIB, 1_000):
        body = {"name": unique("Chunked")}
        created = ok(post_chunked(client, "/api/v1/holders", padded(body, size), board_token))
        assert created["name"] == body["name"]
    assert count(app, "holders") == holders + 2 + 1  # the two, and the freeze test's holder


def test_a_pages_form_over_the_limit_is_answered_with_a_page(
    app: Flask, kit: Kit, board_token: str
) -> None:
    """A form over the size limit, with a Content-Length or chunked, signed in or not, is
    answered 413 with an HTML page saying so, not the API's problem document; nothing is
    written.  The API's 413 stays a problem."""
    board = signed_in(app.test_client(), board_token)
    name = unique("Oversized")
    hidden = {"csrf_token": csrf_of(board.get("/holders/new").get_data(as_text=True))}
    form = {**hidden, "idempotency_key": "o" * 24, "name": name, "address": "x" * (ONE_MIB + 10)}
    encoded = "&".join(f"{k}={v}" for k, v in form.items()).encode()
    urlencoded = {"Content-Type": "application/x-www-form-urlencoded"}
    holders = count(app, "holders")
    answers = {
        "sized": board.post("/holders/new", data=form),
        "chunked": board.post(
            "/holders/new",
            input_stream=io.BytesIO(encoded),
            headers={**urlencoded, "Transfer-Encoding": "chunked"},
            environ_overrides={"wsgi.input_terminated": True},
        ),
        "signed out": app.test_client().post("/sign-in", data={"token": "x" * (ONE_MIB + 10)}),
    }
    for how, answer in answers.items():
        assert (answer.status_code, answer.mimetype) == (413, "text/html"), how
        page = parse(answer.get_data(as_text=True))
        assert page.one("h1").text == "Too much to send", how
        assert "shorten" in page.one("p", data_status="413").text, how
    assert count(app, "holders") == holders
    assert ok(kit.api.get("/holders", query_string={"q": name}), 200)["items"] == []
    json_type = {"Content-Type": "application/json"}
    sized = kit.api.post("/holders", data=padded({"name": name}, ONE_MIB + 10), headers=json_type)
    problem(sized, 413, "payload_too_large")


# --- authorization before the body -------------------------------------------------------------

#: a role's tokens, as the authorization matrix names them
ROLE_OF = {
    "board": "board",
    "lgu": "lgu",
    "other_lgu": "lgu",
    "holder": "holder",
    "other_holder": "holder",
}
WRITES = ("POST", "PUT", "PATCH", "DELETE")
COUNTED = (
    "holders",
    "lgus",
    "bank_sites",
    "bank_accounts",
    "deposits",
    "lots",
    "transfers",
    "reservations",
    "plans",
    "payments",
    "securities",
    "api_tokens",
    "idempotency_records",
    "ledger_transactions",
)


#: the documentation's routes (the document, the docs page and its assets): no endpoints
DOCUMENTATION = ("/api/v1/openapi", "/api/v1/docs")


def endpoints(app: Flask) -> dict[str, Any]:
    """``"METHOD /path"`` (as the OpenAPI document writes it) → the function that handles it."""
    out = {}
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/v1/") or rule.rule.startswith(DOCUMENTATION):
            continue
        view = app.view_functions[rule.endpoint]
        view_class = getattr(view, "view_class", None)
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            path = rule.rule.removeprefix("/api/v1").replace("<", "{").replace(">", "}")
            handler = getattr(view_class, method.lower()) if view_class else view
            out[f"{method} {path}"] = handler
    return out


def matrix_roles(spec: str) -> set[str] | None:
    """The roles a row of the authorization matrix allows; ``None`` for a public endpoint."""
    if spec == "public":
        return None
    if spec == "*":
        return set(ROLES)
    return {ROLE_OF[name] for name in spec.split()}


def test_every_endpoint_declares_the_roles_of_the_authorization_matrix(app: Flask) -> None:
    served = endpoints(app)
    assert not set(served) - set(MATRIX), sorted(set(served) - set(MATRIX))
    for key, handler in served.items():
        assert (set(declared(handler) or ()) or None) == matrix_roles(MATRIX[key]), key


def hostile_requests(method: str, path: str) -> list[tuple[str, dict[str, Any]]]:
    """What a caller may send: ``{}``, JSON that does not parse, another content type, a body
    over the limit (sized and chunked), a bad query, a bad Idempotency-Key."""
    json_type = {"Content-Type": "application/json"}
    over = b'{"x": "' + b"x" * ONE_MIB + b'"}'
    sent = [
        ("{}", {"json": {}}),
        ("no body", {}),
        ("malformed", {"data": b'{"a": ', "headers": json_type}),
        ("duplicate key", {"data": b'{"a": 1, "a": 2}', "headers": json_type}),
        ("text/plain", {"data": b"hello", "headers": {"Content-Type": "text/plain"}}),
        ("over the limit", {"data": over, "headers": json_type}),
        (
            "chunked over the limit",
            {
                "input_stream": io.BytesIO(over),
                "headers": {**json_type, "Transfer-Encoding": "chunked"},
                "environ_overrides": {"wsgi.input_terminated": True},
            },
        ),
        ("bad query", {"query_string": {"limit": "lots", "cursor": "x", "as_of": "June"}}),
    ]
    if method in WRITES:
        sent.append(("bad Idempotency-Key", {"json": {}, "headers": {"Idempotency-Key": ""}}))
    return sent


def test_a_role_an_endpoint_refuses_gets_403_whatever_it_sends(
    app: Flask, api: Api, holder: dict[str, str], lgu: dict[str, str]
) -> None:
    tokens = {"board": api.token, "holder": holder["token"], "lgu": lgu["token"]}
    client = app.test_client()
    before = {table: count(app, table) for table in COUNTED}
    checked = 0
    for key, handler in endpoints(app).items():
        allowed = declared(handler)
        if allowed is None:
            continue
        method, template = key.split(" ", 1)
        path = "/api/v1" + re.sub(r"\{\w+\}", "x_0123456789abcdef", template)
        for role in sorted(set(ROLES) - set(allowed)):
            for label, request in hostile_requests(method, path):
                headers = {**request.pop("headers", {}), "Authorization": f"Bearer {tokens[role]}"}
                response = client.open(path, method=method, headers=headers, **request)
                assert response.status_code == 403, (key, role, label, response.json)
                problem(response, 403, "forbidden")
                checked += 1
    assert checked > 400
    assert {table: count(app, table) for table in COUNTED} == before


def test_a_board_only_endpoint_answers_a_holders_empty_body_403_and_the_boards_422(
    api: Api, holder: dict[str, str], lgu: dict[str, str]
) -> None:
    """The issue's example: a holder posting ``{}`` heard 422 listing the required fields."""
    for path in ("/holders", "/lgus", "/bank-sites", "/accounts", "/accounts/x_0/deposits"):
        for token in (holder["token"], lgu["token"]):
            body = problem(api.post(path, {}, token=token), 403, "forbidden")
            assert "errors" not in body
        refused = api.post(path, {})  # the board: its body is judged
        assert refused.status_code in (404, 422), (path, refused.json)
