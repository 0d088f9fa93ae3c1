"""Issue 25 §6: an OpenAPI document a client generator and a person can use, the documentation
page, and problem types that resolve to a page explaining them.

The document is read as a client reads it, from ``GET /api/v1/openapi.json``, and checked against
what the service does: the roles each view declares, the writes that honour ``Idempotency-Key``,
the codes the errors carry, the endpoints that answer CSV.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from api import create_app, formats, openapi, openapi_problems, problem_types, problems
from api.context import AUTHENTICATES_IN_UNIT
from api.roles import declared
from bank import access as bank_access
from bank import errors as bank_errors
from bank.access import ROLES
from ledger import errors as ledger_errors
from ledger.errors import LedgerError

ROOT = Path(__file__).resolve().parents[2]
BASE = "/api/v1"
PUBLIC = {"GET /health", "GET /ready", "GET /reports/credit-availability"}
#: the main writes, which carry request examples
MAIN_WRITES = {
    "POST /accounts/{account_id}/deposits",
    "POST /transfers",
    "POST /accounts/{account_id}/reservations",
    "POST /plans",
    "POST /plans/{plan_id}/withdrawals",
    "POST /payments",
}


@pytest.fixture(scope="module")
def doc_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """An app whose document and pages are read; its database is never reached."""
    folder = tmp_path_factory.mktemp("openapi")
    app = create_app(
        {"DATABASE_URL": f"sqlite:///{folder / 'unused.sqlite3'}", "WETBANK_CHECK_SCHEMA": False}
    )
    yield app
    app.extensions["wetbank.db"].dispose()


@pytest.fixture(scope="module")
def doc(doc_app: Flask) -> dict[str, Any]:
    response = doc_app.test_client().get(f"{BASE}/openapi.json")
    assert response.status_code == 200
    document: dict[str, Any] = response.get_json()
    return document


def operations(doc: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``("METHOD /path", operation)`` for every operation, the path without the base."""
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                yield f"{method.upper()} {path.removeprefix(BASE)}", operation


def resolve(doc: dict[str, Any], node: Any) -> Any:
    """``node`` with its ``$ref`` followed (one level)."""
    if isinstance(node, dict) and "$ref" in node:
        section, kind, name = node["$ref"].removeprefix("#/").split("/")
        return doc[section][kind][name]
    return node


def handlers(app: Flask) -> dict[str, Any]:
    """``"METHOD /path"`` → the function that handles it."""
    out = {}
    for rule in app.url_map.iter_rules():
        view_class = getattr(app.view_functions[rule.endpoint], "view_class", None)
        if not rule.rule.startswith(BASE + "/") or view_class is None:
            continue
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule.rule.removeprefix(BASE))
        for method in rule.methods or ():
            if method not in ("HEAD", "OPTIONS"):
                out[f"{method} {path}"] = getattr(view_class, method.lower())
    return out


def parameter_names(doc: dict[str, Any], operation: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (p["in"], p["name"]) for p in (resolve(doc, p) for p in operation.get("parameters", []))
    }


# --- the operations -----------------------------------------------------------------------------


def test_every_operation_has_an_operation_id_a_summary_and_a_description(
    doc: dict[str, Any],
) -> None:
    ids = []
    for key, operation in operations(doc):
        assert re.fullmatch(r"(get|post|put|patch|delete)_[a-z0-9_]+", operation["operationId"])
        assert operation["operationId"].startswith(key.split()[0].lower()), key
        summary = operation["summary"]
        assert summary and "\n" not in summary and len(summary) < 240, (key, summary)
        assert "**Who may call it:**" in operation["description"], key
        assert "``" not in summary + operation["description"], key  # Markdown, not rST
        ids.append(operation["operationId"])
    assert len(ids) == len(set(ids)) > 50
    named = {key: op["operationId"] for key, op in operations(doc)}
    assert named["POST /transfers"] == "post_transfers"
    assert named["GET /reservations/{reservation_id}"] == "get_reservation_by_id"
    assert named["DELETE /tokens/{token_id}"] == "delete_token_by_id"


def test_a_summary_is_the_docstrings_first_sentence_and_the_description_the_rest() -> None:
    assert openapi.split_summary("Deposit under Subd. 12 (board). Then more.\n\nAnother.") == (
        "Deposit under Subd. 12 (board).",
        "Then more.\n\nAnother.",
    )
    assert openapi.split_summary("Per Minn. Stat. 15.99: a\nline.") == (
        "Per Minn. Stat. 15.99: a line.",
        "",
    )


def test_public_operations_carry_no_security_and_the_rest_say_who_may_call_them(
    doc: dict[str, Any], doc_app: Flask
) -> None:
    assert doc["security"] == [{"bearer": []}]
    by_key = handlers(doc_app)
    public = set()
    for key, operation in operations(doc):
        if "security" in operation:
            assert operation["security"] == [], key
            public.add(key)
            assert "401" not in operation["responses"], key
            assert "anyone, without a token" in operation["description"], key
            continue
        assert operation["responses"]["401"] == {"$ref": "#/components/responses/Unauthorized"}
        roles = declared(by_key[key])
        assert roles, f"{key} declares no roles"
        if set(roles) == set(ROLES):
            assert "403" not in operation["responses"] and "any token" in operation["description"]
        else:
            assert "403" in operation["responses"], key
            for role in ROLES:
                assert (f"`{role}`" in operation["description"]) == (role in roles), (key, role)
    assert public == PUBLIC


def test_writes_declare_the_idempotency_key_and_every_response_its_request_id(
    doc: dict[str, Any], doc_app: Flask
) -> None:
    by_key = handlers(doc_app)
    idempotent = 0
    for key, operation in operations(doc):
        names = parameter_names(doc, operation)
        assert ("header", "X-Request-Id") in names, key
        # reads check their token in their unit of work too (``api.reads``): no key for them
        is_write = key.split()[0] in ("POST", "PUT", "PATCH", "DELETE")
        writes = is_write and bool(getattr(by_key[key], AUTHENTICATES_IN_UNIT, False))
        assert (("header", "Idempotency-Key") in names) == writes, key
        if key.startswith("GET "):
            assert ("header", "Idempotency-Key") not in names, key
        idempotent += writes
        for status, response in operation["responses"].items():
            headers = resolve(doc, response).get("headers", {})
            assert "X-Request-Id" in headers, (key, status)
            replayed = "Idempotent-Replayed" in headers
            assert replayed == (writes and status.startswith("2")), (key, status)
    assert idempotent > 30
    request_id = doc["components"]["headers"]["X-Request-Id"]
    assert request_id["required"] is True
    key = doc["components"]["parameters"]["IdempotencyKey"]
    assert key["schema"] == {"type": "string", "minLength": 1, "maxLength": 255}


def test_each_operation_lists_the_problems_it_can_give(doc: dict[str, Any], doc_app: Flask) -> None:
    by_key = handlers(doc_app)
    for key, operation in operations(doc):
        method, path = key.split(" ", 1)
        responses = operation["responses"]
        assert {"400", "503", "default"} <= set(responses), key
        if "{" in path:
            assert "404" in responses, key
        if method != "GET":
            for status in ("409", "413", "422"):
                assert status in responses, (key, status)
        if any(kind == "query" for kind, _name in parameter_names(doc, operation)):
            assert "422" in responses, key  # a filter's value, or a ``?format=``, not taken
        if formats.words(by_key[key]):
            assert "422" in responses, key  # ``?format=`` names one it does not answer in
        if method != "GET" and getattr(by_key[key], AUTHENTICATES_IN_UNIT, False):
            assert "429" in responses, key  # the write rate limit (``api.ratelimit``)
        if method == "GET":
            assert "429" not in responses, key  # reads are not rate limited
        if "requestBody" in operation:
            assert "415" in responses, key
        for status, response in responses.items():
            if status[0] in "45" or status == "default":
                body = resolve(doc, response)["content"][problems.PROBLEM_JSON]
                assert body["schema"] == {"$ref": "#/components/schemas/Problem"}, (key, status)
    for status in (429, 503):
        name = openapi_problems.PROBLEM_RESPONSES[status][0]
        assert "Retry-After" in doc["components"]["responses"][name]["headers"]


def test_each_problem_response_lists_its_codes_with_an_example_of_each(
    doc: dict[str, Any],
) -> None:
    listed = set()
    for name, response in doc["components"]["responses"].items():
        examples = response["content"][problems.PROBLEM_JSON]["examples"]
        for code, example in examples.items():
            assert example["value"]["code"] == code
            assert example["value"]["status"] == problem_types.status_of(code)
            assert f"(/problems/{code})" in response["description"], (name, code)
            listed.add(code)
    assert listed == set(problem_types.codes())


# --- the codes ----------------------------------------------------------------------------------


def raised_codes(app: Flask) -> set[str]:
    """Every code the service can put in a problem, found where it is raised: each error class
    of the domain and the engine (as the app's handler answers it), the HTTP layer's tables, and
    every ``ApiProblem(...)`` or ``problem(...)`` written in the api package."""
    found = set(problems.STATUS_BY_CODE) | set(problems.CODE_BY_STATUS.values())
    with app.test_request_context(f"{BASE}/health"):
        for module in (bank_errors, bank_access, ledger_errors):
            for _name, kind in inspect.getmembers(module, inspect.isclass):
                if issubclass(kind, LedgerError):
                    error = kind.__new__(kind)
                    LedgerError.__init__(error, "refused")
                    found.add(app.handle_user_exception(error).get_json()["code"])
    call = re.compile(r"\b(?:ApiProblem|problem)\(\s*\d{3},\s*\"([a-z_]+)\"")
    for source in (ROOT / "api").rglob("*.py"):
        found.update(call.findall(source.read_text()))
    return found


def test_a_payments_and_a_securitys_status_are_enums_of_what_the_service_writes(
    doc: dict[str, Any],
) -> None:
    """A client generator types ``status`` of a payment and of a security as the values the
    service writes and filters by, not as any string."""
    from bank import securities
    from bank.money_tables import PAYMENT_STATUSES

    schemas = doc["components"]["schemas"]
    assert schemas["PaymentOut"]["properties"]["status"]["enum"] == list(PAYMENT_STATUSES)
    assert schemas["SecurityOut"]["properties"]["status"]["enum"] == list(securities.STATUSES)


def test_the_problem_code_is_an_enum_of_every_stable_code(
    doc: dict[str, Any], doc_app: Flask
) -> None:
    schema = doc["components"]["schemas"]["Problem"]
    enum = schema["properties"]["code"]["enum"]
    assert schema["required"] == ["code"]
    assert set(enum) == set(problem_types.codes()) == set(problem_types.CATALOGUE)
    raised = raised_codes(doc_app)
    assert {"not_found", "insufficient_credits", "unauthorized", "schema_behind"} <= raised
    assert raised <= set(enum), raised - set(enum)
    for code, kind in problem_types.CATALOGUE.items():
        expected = problems.STATUS_BY_CODE.get(code) or {
            v: k for k, v in problems.CODE_BY_STATUS.items()
        }.get(code)
        if expected is not None:
            assert kind.status == expected, code


def test_the_guide_lists_every_code_with_its_status() -> None:
    guide = (ROOT / "docs" / "http.md").read_text()
    table = dict(re.findall(r"^\| `([a-z_]+)` \| (\d{3}) \|", guide, re.MULTILINE))
    assert {code: int(status) for code, status in table.items()} == {
        code: kind.status for code, kind in problem_types.CATALOGUE.items()
    }


# --- content types and examples ---------------------------------------------------------------


def test_the_exports_declare_text_csv_and_the_notices_html_and_pdf(
    doc: dict[str, Any], doc_app: Flask
) -> None:
    by_key = handlers(doc_app)
    exports = {key for key, view in by_key.items() if "wants_csv()" in inspect.getsource(view)}
    assert len(exports) >= 5
    for key, operation in operations(doc):
        content = operation["responses"]["200"]["content"] if key.startswith("GET") else {}
        offers_csv = "text/csv" in content
        assert offers_csv == (key in exports), key
        if offers_csv:
            assert "application/json" in content, key
            assert ("query", "format") in parameter_names(doc, operation), key
    notice = dict(operations(doc))["GET /plans/{plan_id}/notices/application"]
    assert set(notice["responses"]["200"]["content"]) == {"text/html", "application/pdf"}
    assert ("query", "format") in parameter_names(doc, notice)


def test_the_main_writes_carry_request_examples_their_schemas_accept(
    doc: dict[str, Any], doc_app: Flask
) -> None:
    by_key = handlers(doc_app)
    with_examples = set()
    for key, operation in operations(doc):
        body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
        if not body.get("examples"):
            continue
        with_examples.add(key)
        schema = by_key[key]._apidoc["arguments"]["parameters"][0]["schema"]
        loader = schema() if isinstance(schema, type) else schema
        for name, example in body["examples"].items():
            assert example["summary"], (key, name)
            loader.load(example["value"])  # a ValidationError fails the test
    assert MAIN_WRITES <= with_examples, MAIN_WRITES - with_examples


# --- problem types resolve to pages -----------------------------------------------------------


def test_a_problem_type_resolves_to_the_page_that_explains_its_code(api: Any) -> None:
    refused = [
        api.get("/me", token=""),  # 401
        api.get("/accounts/acct_0000000000000000"),  # 404
        api.post("/holders", {}),  # 422
        api.post("/holders", data="{", headers={"Content-Type": "text/plain"}),  # 415
    ]
    pages = api.client
    for response in refused:
        problem = response.get_json()
        assert problem["type"] == f"/problems/{problem['code']}", problem
        page = pages.get(problem["type"])  # relative: resolved against the service
        assert page.status_code == 200 and page.mimetype == "text/html"
        text = page.get_data(as_text=True)
        assert f"<code>{problem['code']}</code>" in text
        assert f'data-status="{problem["status"]}"' in text
        assert problem["title"] in text


def test_every_code_has_a_page_and_the_index_lists_them(doc_app: Flask) -> None:
    client = doc_app.test_client()
    index = client.get("/problems").get_data(as_text=True)
    for code in problem_types.codes():
        kind = problem_types.CATALOGUE[code]
        page = client.get(f"/problems/{code}")
        assert page.status_code == 200, code
        text = page.get_data(as_text=True)
        assert f'data-status="{kind.status}"' in text and "What to do" in text
        assert f'href="/problems/{code}"' in index
        assert "`" not in text.split("<main", 1)[1].split("<pre>", 1)[0], code
        assert "script-src" not in page.headers["Content-Security-Policy"]  # the site's policy
    unknown = client.get("/problems/no_such_code")
    assert unknown.status_code == 404 and unknown.mimetype == "text/html"


# --- the documentation page -------------------------------------------------------------------


class _References(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href", "data-spec-url") and value:
                self.urls.append(value)


def test_the_docs_page_is_public_and_loads_only_its_own_assets(doc_app: Flask) -> None:
    client = doc_app.test_client()
    page = client.get(f"{BASE}/docs")  # no token
    assert page.status_code == 200 and page.mimetype == "text/html"
    policy = page.headers["Content-Security-Policy"]
    sources = {word for directive in policy.split(";") for word in directive.split()[1:]}
    assert sources <= {"'self'", "'none'", "data:"}, policy
    assert "unsafe" not in policy and "default-src 'none'" in policy
    html = page.get_data(as_text=True)
    references = _References()
    references.feed(html)
    assert len(references.urls) >= 5
    scripts = 0
    for url in references.urls:
        assert url.startswith("/") and not url.startswith("//"), url
        asset = client.get(url)
        asset.close()  # a file the test client opened
        assert asset.status_code == 200, url
        scripts += asset.mimetype == "text/javascript"
    assert scripts == 2
    assert "<script>" not in html and "http" not in html  # no inline script, nothing elsewhere
    bundle = client.get(f"{BASE}/docs/assets/swagger-ui-bundle.js")
    bundle.close()
    assert bundle.headers["X-Content-Type-Options"] == "nosniff"
    init = client.get(f"{BASE}/docs/assets/docs.js")
    assert "validatorUrl: null" in init.get_data(as_text=True)
    init.close()


def test_a_reservations_withdrawn_sqft_is_described_and_read_only(doc):
    """Wherever a reservation is shown (its own reply, its account's list, its plan's), the
    square feet withdrawn from it are a read-only integer the document explains."""
    schemas = doc["components"]["schemas"]
    for name in ("ReservationOut", "AccountReservationOut", "PlanReservationOut"):
        field = schemas[name]["properties"]["withdrawn_sqft"]
        assert field["type"] == "integer" and field["readOnly"] is True, (name, field)
        assert "posted in part" in field["description"], (name, field)


def test_a_revisions_displacement_is_measured_from_the_application_last_received_as_new(doc):
    """Subd. 6 (c)(2): the distance is read from the same application the revised area is
    compared with, sent and shown alike, so that small moves cannot add up unnoticed."""
    schemas = doc["components"]["schemas"]
    for name in ("RevisionIn", "RevisionOut"):
        described = schemas[name]["properties"]["displacement_ft"]["description"]
        assert "last received as new" in described, (name, described)
        assert "same baseline the revised area is compared with" in described, name


def test_a_decision_says_it_waits_for_the_notice_of_application(doc):
    described = doc["paths"]["/api/v1/plans/{plan_id}/decision"]["post"]["description"]
    assert "Subd. 6 (b)" in described and "`comment_period_open`" in described


def _query_parameters(doc: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []) if isinstance(operation, dict) else []:
                if isinstance(parameter, dict) and parameter.get("in") == "query":
                    yield f"{method.upper()} {path[len(BASE) :]} ?{parameter['name']}", parameter


def test_no_query_parameter_offers_null_among_its_values(doc):
    """A query string carries no null: an optional enumerated filter (``?role=``, ``?status=``,
    ``?kind=``) lists only the values it takes, so that a client generator offers no
    ``role=null`` (which is 422)."""
    enumerated = {
        where: p["schema"] for where, p in _query_parameters(doc) if "enum" in p["schema"]
    }
    assert "GET /tokens ?role" in enumerated and "GET /audit/journal ?kind" in enumerated
    offering_null = {
        where: schema
        for where, schema in enumerated.items()
        if None in schema["enum"] or schema.get("nullable") or "default" in schema
    }
    assert offering_null == {}
    assert enumerated["GET /tokens ?role"]["enum"] == list(ROLES)
    assert enumerated["GET /tokens ?role"]["type"] == "string"


def test_every_date_a_request_carries_states_the_range_it_takes(doc: dict[str, Any]) -> None:
    """A date outside 1900-01-01..2199-12-31, or a date of something that has happened after
    today, is ``validation_error`` (docs/http.md); OpenAPI 3.0 cannot bound a date string, so
    each date's description says the range: the query's and each request body's."""
    sentences = ("From 1900-01-01 to 2199-12-31.", "From 1900-01-01 to today.")
    dates = []
    for name, operation in operations(doc):
        for parameter in map(lambda p: resolve(doc, p), operation.get("parameters", [])):
            if parameter.get("schema", {}).get("format") == "date":
                dates.append((name, parameter["name"], parameter.get("description", "")))
        body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
        schema = resolve(doc, body.get("schema"))
        for field, prop in (schema or {}).get("properties", {}).items():
            if resolve(doc, prop).get("format") == "date":
                dates.append((name, field, resolve(doc, prop).get("description", "")))
    assert len(dates) > 20
    assert [d for d in dates if not d[2].endswith(sentences)] == []
    # a date of something that has happened may not lie in the future
    received = [d[2] for d in dates if d[:2] == ("POST /payments", "received_on")]
    assert received == ["From 1900-01-01 to today."]
    expires = [d[2] for d in dates if d[:2] == ("POST /plans/{plan_id}/securities", "expires_on")]
    assert expires and expires[0].endswith("to 2199-12-31.")
    (postmark,) = [d[2] for d in dates if d[:2] == ("POST /payments", "postmarked_on")]
    assert "petition" in postmark  # the field's own description is kept, the range after it


#: the lists answered whole (docs/http.md "Lists, cursors and CSV"); every other list is paged,
#: and a new list is paged or named here
WHOLE_LISTS = {
    "GET /service-areas",  # the ruleset's bank service areas, a fixed few
    "GET /reports/credit-availability",  # a row per service area and credit class
    "GET /reports/lgu-compliance",  # a report: a row per LGU, over the period asked
    "GET /plans/{plan_id}/notices",  # two per application of one plan
    # the board's freezes, unfreezes and closes of one account or site
    "GET /accounts/{account_id}/status-history",
    "GET /bank-sites/{site_id}/status-history",
}


def test_every_long_list_is_paged_and_says_how(doc: dict[str, Any]) -> None:
    """A list (a reply of ``items``) takes ``limit`` and ``cursor`` and answers ``next_cursor``,
    each described, unless it is one of the few bounded lists answered whole."""
    paged, whole = set(), set()
    for name, operation in operations(doc):
        content = operation.get("responses", {}).get("200", {}).get("content", {})
        schema = resolve(doc, content.get("application/json", {}).get("schema"))
        properties = (schema or {}).get("properties", {})
        if properties.get("items", {}).get("type") != "array":
            continue
        if "next_cursor" not in properties:
            whole.add(name)
            continue
        paged.add(name)
        assert "null on the last page" in properties["next_cursor"]["description"], name
        parameters = {p["name"]: p for p in map(lambda p: resolve(doc, p), operation["parameters"])}
        assert parameters["limit"]["schema"]["maximum"] == 500, name
        assert "1 to 500" in parameters["limit"]["description"], name
        assert "next_cursor" in parameters["cursor"]["description"], name
    assert {"GET /payments", "GET /securities", "GET /plans", "GET /accounts"} <= paged
    assert {"GET /accounts/{account_id}/lots", "GET /accounts/{account_id}/reservations"} <= paged
    assert whole == WHOLE_LISTS, sorted(whole)
