"""A page whose one form records something new (a holder, an LGU, a bank site, an account, a
plan), on ``form_page.html``: GET shows the form, POST records what was sent through
``api.web.forms`` and goes to the page that shows the new record; refused, the form is shown
again as it was sent, with why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from flask import Response, request, url_for
from marshmallow import Schema

from api.web import forms
from api.web.blueprint import web
from api.web.forms import Form, Item
from bank.access import Actor


@dataclass(frozen=True, kw_only=True)
class NewRecord:
    """Such a page: its address, who may use it, its texts, its fields and the API's schema
    for them, and ``record``, which calls the use case and names the page to go to."""

    path: str
    endpoints: tuple[str, str]  # the GET's and the POST's
    roles: tuple[str, ...]
    heading: str
    items: Callable[[Actor], tuple[Item, ...]]
    submit: str
    schema: type[Schema]
    record: Callable[[Actor, dict[str, Any]], str]
    intro: str = ""
    #: the fields a GET fills in from its query (``?holder_id=`` from the holder's row)
    prefill: tuple[str, ...] = ()

    def form(self, who: Actor) -> Form:
        return Form(url_for(f"web.{self.endpoints[1]}"), self.items(who), self.submit)

    def page(self, form: Form, status: int = 200) -> Response:
        context = {"heading": self.heading, "intro": self.intro, "form": form}
        return forms.page("form_page.html", status, **context)

    def declare(self) -> None:
        """Declare the page's GET and POST routes."""

        @forms.signed_in(*self.roles)
        def show(who: Actor) -> Response:
            form = self.form(who)
            form.values = {name: request.args.get(name, "") for name in self.prefill}
            return self.page(form)

        @forms.signed_in(*self.roles)
        def post(who: Actor) -> Any:
            record = partial(self.record, who)
            blank = partial(self.form, who)
            # nothing's state closes a new record's form: what is refused is what was typed
            return forms.post(
                who, blank, self.schema(), record, self.page, open_now=forms.always_open
            )

        web.add_url_rule(self.path, self.endpoints[0], show, methods=["GET"])
        web.add_url_rule(self.path, self.endpoints[1], post, methods=["POST"])
