"""Sign-in by pasting a token, the session cookie, and CSRF protection of the pages' forms.

The session cookie carries only a random secret (``bank.web_sessions`` keeps its hash); it is
HTTP-only, SameSite=Lax and Secure unless ``WETBANK_COOKIE_SECURE`` is turned off for plain-HTTP
development.  Every form posts a CSRF secret: before sign-in the double-submit kind (a SameSite=
Strict cookie echoed in a hidden field), after it the session's own.  A cross-site ``Origin`` is
refused outright.
"""

from __future__ import annotations

import hmac
import secrets
import unicodedata
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

from flask import (
    Blueprint,
    Response,
    current_app,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from werkzeug.wrappers import Response as BaseResponse

from api.context import database
from api.web import flash
from bank import access, web_sessions

SESSION_COOKIE = "wetbank_session"
CSRF_COOKIE = "wetbank_signin_csrf"
CSRF_FIELD = "csrf_token"
#: a response of any kind (Flask's, or werkzeug's a ``redirect`` makes)
R = TypeVar("R", bound=BaseResponse)
#: why a session ended, said once by the sign-in page it is sent to (``ended_session``), by a
#: cookie of the site's own (``flash``), never by a query parameter: no link from elsewhere can
#: make the page say a token was revoked.  (The codes differ from every form's confirmation's.)
ENDED_BY_REVOCATION = "session-ended-by-revocation"
#: ... because the person revoked the token they were signed in with (``board_tokens``)
ENDED_BY_OWN_REVOCATION = "session-ended-by-own-revocation"
ENDED = {
    ENDED_BY_REVOCATION: "The token you signed in with has been revoked, so you are signed "
    "out: sign in with another token to go on.",
    ENDED_BY_OWN_REVOCATION: "The token is revoked: it stopped working at once. It was the "
    "token you signed in with, so you are signed out: sign in with another token to go on.",
}


class SignInRequired(Exception):
    """The page needs a signed-in person: send them to sign in, and back here after."""


class BadForm(Exception):
    """A form arrived without its CSRF secret, or from another site."""


def register(blueprint: Blueprint) -> None:
    blueprint.before_app_request(_load_session)
    blueprint.add_url_rule("/sign-in", view_func=sign_in_form, methods=["GET"])
    blueprint.add_url_rule("/sign-in", view_func=sign_in, methods=["POST"])
    blueprint.add_url_rule("/sign-out", view_func=sign_out, methods=["POST"])
    blueprint.app_context_processor(lambda: {"signed_in": g.get("web"), "csrf_field": CSRF_FIELD})


def _load_session() -> None:
    """Pages only: the person a session cookie stands for becomes the request's actor."""
    g.web = None
    if request.path.startswith("/api/") or request.endpoint == "web.static":
        return  # the API authenticates bearer tokens only; the stylesheet needs no one
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie:
        return
    g.web = web_sessions.resume(database(), cookie)
    if g.web is not None:
        g.actor = g.web.actor


def signed_in_actor() -> access.Actor:
    """The signed-in person, or a redirect to the sign-in page."""
    if g.get("web") is None:
        raise SignInRequired()
    actor: access.Actor = g.web.actor
    return actor


def sign_in_form() -> Any:
    if g.get("web") is not None:
        return redirect(_safe_next(request.args.get("next")), 303)
    return _render_sign_in(200, error=None)


def sign_in() -> Any:
    _check_origin()
    expected = request.cookies.get(CSRF_COOKIE, "")
    if not _same_secret(request.form.get(CSRF_FIELD, ""), expected):
        raise BadForm()
    token = request.form.get("token", "").strip()
    if not token:
        return _render_sign_in(422, error="Paste your API token to sign in.")
    earlier = request.cookies.get(SESSION_COOKIE)  # a new sign-in ends this browser's last one
    started = web_sessions.sign_in(database(), token, earlier, _trail())
    if started is None:
        return _render_sign_in(401, error="That token is unknown or has been revoked.")
    cookie, _who = started
    response = redirect(_safe_next(request.form.get("next")), 303)
    response.set_cookie(
        SESSION_COOKIE,
        cookie,
        max_age=int(web_sessions.LIFETIME.total_seconds()),
        secure=_secure(),
        httponly=True,
        samesite="Lax",
    )
    response.delete_cookie(CSRF_COOKIE, secure=_secure(), httponly=True, samesite="Strict")
    return response


def sign_out() -> Any:
    _check_origin()
    cookie = request.cookies.get(SESSION_COOKIE)
    if g.get("web") is None or not cookie:
        return redirect(url_for("web.index"), 303)
    check_form_secret()
    web_sessions.sign_out(database(), cookie, g.web, _trail())
    return forget_session(redirect(url_for("web.index"), 303))


def forget_session(response: R) -> R:
    """``response``, telling the browser to drop its session cookie (the session has ended)."""
    response.delete_cookie(SESSION_COOKIE, secure=_secure(), httponly=True, samesite="Lax")
    return response


def ended_session(response: R, why: str) -> R:
    """``response`` (to the sign-in page), telling the browser to drop its session cookie and
    the sign-in page why the session ended (``ENDED``, by ``flash``: the page is in no
    session)."""
    flash.say(response, why, None)
    return forget_session(response)


def ended_by_revocation() -> bool:
    """Whether this request's session cookie names a session its token's revocation ended."""
    cookie = request.cookies.get(SESSION_COOKIE)
    return cookie is not None and web_sessions.ended_by_revocation(database(), cookie)


def check_signed_in_post() -> None:
    """A signed-in form's post: from this site, echoing the session's CSRF secret."""
    _check_origin()
    check_form_secret()


def check_form_secret() -> None:
    """A signed-in form must echo the session's CSRF secret."""
    if not _same_secret(request.form.get(CSRF_FIELD, ""), g.web.csrf_secret):
        raise BadForm()


def _render_sign_in(status: int, error: str | None) -> Response:
    secret = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(32)
    body = render_template(
        "sign_in.html",
        error=error,
        ended=ENDED.get(flash.said() or ""),
        signin_csrf=secret,
        next=_safe_next(request.values.get("next")),
    )
    response = Response(body, status=status, mimetype="text/html")
    response.set_cookie(CSRF_COOKIE, secret, secure=_secure(), httponly=True, samesite="Strict")
    return response


def _trail() -> web_sessions.Trail:
    return web_sessions.Trail(f"{request.method} {request.path}", g.get("request_id"))


def _same_secret(sent: str, expected: str) -> bool:
    return bool(sent) and bool(expected) and hmac.compare_digest(sent, expected)


def _check_origin() -> None:
    """Browsers name the page a form came from; one from another site is refused."""
    origin = request.headers.get("Origin")
    if origin and origin != "null" and urlsplit(origin).netloc != request.host:
        raise BadForm()


def _safe_next(target: str | None) -> str:
    r"""``target`` if it is a path on this site, else the home page (no open redirect).

    Browsers forgive a lot in a ``Location``: they drop TAB, CR and LF (``/<TAB>/evil.example``
    is ``//evil.example``), read ``\`` as ``/``, and take ``//host`` as another site.  So the
    target must parse with no scheme and no host, begin with exactly one ``/``, and hold no
    backslash or control character, also once percent-decoded (``/%09/evil.example``).
    """
    if target and is_local_path(target):
        return target
    return url_for("web.index")


def is_local_path(target: str) -> bool:
    forms = [target]
    for _ in range(3):  # a few rounds catch double encoding (%2509 is %09 is TAB)
        decoded = unquote(forms[-1])
        if decoded == forms[-1]:
            break
        forms.append(decoded)
    for form in forms:
        if "\\" in form or any(unicodedata.category(c) == "Cc" for c in form):
            return False
        if not form.startswith("/") or form.startswith("//"):
            return False
        parts = urlsplit(form)
        if parts.scheme or parts.netloc:
            return False
    return True


def _secure() -> bool:
    return bool(current_app.config.get("WETBANK_COOKIE_SECURE", True))
