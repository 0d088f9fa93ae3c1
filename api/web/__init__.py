"""Web pages and their forms over the same ``bank`` services as the API (issues #9, #26).

Server-rendered Jinja templates and one stylesheet, nothing loaded from elsewhere and no
JavaScript.  A person signs in by pasting an API token once; the pages then act exactly as that
token does through the API.
"""

from __future__ import annotations

from flask import Flask

from api.web import (
    board,
    compliance_page,
    copy_forms,
    documents,
    errors,
    filters,
    flash,
    forms,
    holder_forms,
    lgu_forms,
    lists,
    pages,
    payment_page,
    signin,
)
from api.web.blueprint import web

# a blueprint is set up once, on import; each app (tests make many) then registers it
filters.register(web)
flash.register(web)
signin.register(web)
errors.register(web)
forms.register(web)
copy_forms.register(web)
pages.load()
lists.load()
compliance_page.load()
board.load()
lgu_forms.load()
copy_forms.load()
holder_forms.load()
documents.load()
payment_page.load()


def register(app: Flask) -> None:
    """Add the pages, their sign-in and their HTML error pages to the app."""
    app.config.setdefault("WETBANK_COOKIE_SECURE", True)
    errors.register_routing_errors(app)
    app.register_blueprint(web)
