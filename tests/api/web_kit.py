"""Reading the pages in tests: sign in through the form, and pull figures out of the HTML.

The pages mark what tests (and people with assistive tools) read with stable attributes:
``data-credit-class`` rows, ``data-field`` cells, ``data-code`` blockers.  The parser here is the
standard library's, so a test reads the same markup a browser would, not a regex over it.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any
from urllib.parse import quote

from flask.testing import FlaskClient

SESSION_COOKIE = "wetbank_session"


def audit_events(api: Any) -> list[dict[str, Any]]:
    """Every access event recorded so far, oldest first, page by page: the shared database holds
    every test's, far more than one page."""
    events: list[dict[str, Any]] = []
    cursor = None
    while True:
        query = "/audit/events?limit=200" + (f"&cursor={quote(cursor)}" if cursor else "")
        body = api.get(query).json
        events += body["items"]
        cursor = body["next_cursor"]
        if not cursor:
            return events


def csrf_of(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert match, "the page has no CSRF field"
    return match.group(1)


def sign_in(client: FlaskClient, token: str, next_path: str = "/") -> Any:
    """Fill in and post the sign-in form as a browser would; returns the POST's response."""
    form = client.get("/sign-in")
    assert form.status_code == 200
    return client.post(
        "/sign-in",
        data={
            "csrf_token": csrf_of(form.get_data(as_text=True)),
            "token": token,
            "next": next_path,
        },
    )


def signed_in(client: FlaskClient, token: str) -> FlaskClient:
    response = sign_in(client, token)
    assert response.status_code == 303, response.get_data(as_text=True)
    return client


class Element:
    """One element: its tag, attributes, children and the text inside it."""

    def __init__(self, tag: str, attrs: dict[str, str]) -> None:
        self.tag = tag
        self.attrs = attrs
        self.children: list[Element] = []
        self.parts: list[str] = []

    @property
    def text(self) -> str:
        return " ".join(" ".join(self.parts).split())

    def all(self, tag: str | None = None, **attrs: str) -> list[Element]:
        """Every descendant with ``tag`` whose attributes include ``attrs`` (``data_x`` for
        ``data-x``, ``class_`` for ``class``)."""
        wanted = {k.rstrip("_").replace("_", "-"): v for k, v in attrs.items()}
        found = []
        for child in self.children:
            if (tag is None or child.tag == tag) and all(
                child.attrs.get(k) == v for k, v in wanted.items()
            ):
                found.append(child)
            found += child.all(tag, **attrs)
        return found

    def one(self, tag: str | None = None, **attrs: str) -> Element:
        found = self.all(tag, **attrs)
        assert len(found) == 1, f"expected one <{tag} {attrs}>, found {len(found)}"
        return found[0]

    def has(self, tag: str | None = None, **attrs: str) -> bool:
        return bool(self.all(tag, **attrs))


VOID = {"meta", "link", "input", "br", "img", "hr", "source", "col", "area", "base", "wbr"}


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Element(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        for element in self.stack[1:]:
            element.parts.append(data)


def parse(html: str) -> Element:
    parser = _Parser()
    parser.feed(html)
    parser.close()
    return parser.root


def number(text: str) -> int:
    """``"45,000"`` → ``45000``."""
    return int(text.replace(",", "").replace("+", ""))


def page_balances(document: Element) -> dict[str, dict[str, int]]:
    """The account page's balances table, by credit class code."""
    table = document.one("table", id="balances")
    return {
        row.attrs["data-credit-class"]: {
            cell.attrs["data-field"]: number(cell.text)
            for cell in row.all("td")
            if cell.attrs.get("data-field")
        }
        for row in table.all("tr")
        if "data-credit-class" in row.attrs
    }
