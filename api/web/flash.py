"""What an act just did, said once on the page it leads to: a form's confirmation ("The token is
revoked"), or the sign-in page's word on why a session ended.

Never from the address: a link from elsewhere (``?done=token-revoked``) could then make a page
confirm an act that never happened.  The answer that did the act sets a cookie of the site's
own naming what to say (``say``), signed with the app's secret key, bound to the session the
browser goes on in (none, once a session has ended) and to the address it is sent to, and good
for a minute.  The next page the browser asks for reads it (``said``) and drops it: the page
it was meant for says it once; another page, a reload, or the cookie sent in another session
says nothing."""

from __future__ import annotations

from typing import TypeVar
from urllib.parse import parse_qsl, unquote, urlsplit

from flask import Blueprint, Response, current_app, g, request
from itsdangerous import BadSignature, URLSafeTimedSerializer
from werkzeug.wrappers import Response as BaseResponse

from bank.web_sessions import SignedIn

#: a response of any kind (Flask's, or werkzeug's a ``redirect`` makes)
R = TypeVar("R", bound=BaseResponse)
FLASH_COOKIE = "wetbank_flash"
#: seconds: the browser follows a redirect at once
LIFETIME = 60


def register(blueprint: Blueprint) -> None:
    blueprint.after_app_request(_drop_once_read)


def say(response: R, code: str, session: SignedIn | None) -> R:
    """``response`` (a redirect), telling the page it leads to to say ``code`` once, in
    ``session``: the session the browser will be in there (``None``: no session)."""
    target = _address(str(response.location))
    response.set_cookie(
        FLASH_COOKIE,
        _signer(session).dumps([code, target]),
        max_age=LIFETIME,
        secure=_secure(),
        httponly=True,
        samesite="Lax",
    )
    g.flash_set = True
    return response


def said() -> str | None:
    """The code this page is to say, if the act before it sent the browser here, in the
    session it is in now (``signin`` has resumed it, or not, before the page is drawn)."""
    cookie = request.cookies.get(FLASH_COOKIE)
    if not cookie or not _is_page():
        return None
    try:
        code, target = _signer(g.get("web")).loads(cookie, max_age=LIFETIME)
    except (BadSignature, ValueError, TypeError):
        return None
    if isinstance(code, str) and isinstance(target, str) and _is_here(target):
        return code
    return None


def _drop_once_read(response: Response) -> Response:
    """The first page after the act reads the cookie: it is dropped there, said or not."""
    if request.cookies.get(FLASH_COOKIE) and _is_page() and not g.get("flash_set"):
        response.delete_cookie(FLASH_COOKIE, secure=_secure(), httponly=True, samesite="Lax")
    return response


def _is_page() -> bool:
    return not request.path.startswith("/api/") and request.endpoint != "web.static"


def _signer(session: SignedIn | None) -> URLSafeTimedSerializer:
    # the session's own secret in the salt: the signature holds in that session alone
    bound = session.csrf_secret if session is not None else ""
    return URLSafeTimedSerializer(current_app.secret_key or "", salt=f"wetbank.flash {bound}")


def _secure() -> bool:
    return bool(current_app.config.get("WETBANK_COOKIE_SECURE", True))


def _address(location: str) -> str:
    """A redirect's path and query, without its fragment (which browsers do not send)."""
    parts = urlsplit(location)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _is_here(target: str) -> bool:
    """Whether this request asks for ``target``: its path and its query's fields alike."""
    parts = urlsplit(target)
    asked = sorted(request.args.items(multi=True))
    sent = sorted(parse_qsl(parts.query, keep_blank_values=True))
    return unquote(parts.path) == request.path and sent == asked
