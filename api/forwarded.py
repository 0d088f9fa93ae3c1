"""The ``X-Forwarded-*`` headers of the proxies ``WETBANK_TRUST_PROXY`` says are in front.

Werkzeug's ProxyFix believes them as sent.  The prefix becomes ``SCRIPT_NAME``, which starts
every URL the service writes (redirects, the pages' links, forms and stylesheet): a prefix of
``//evil.example`` would make them point at another site, should a proxy pass on what a client
sent.  So a prefix that is not a plain absolute path, and a port that is not a number, are
ignored, as if no proxy had sent them; the documented nginx (docs/operations.md §4) clears both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from werkzeug.middleware.proxy_fix import ProxyFix

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

#: ``/a/b``: segments of letters, digits and ``-._~`` only: no ``//`` (another host), no
#: scheme, no quotes, nothing that would end the URL it starts
PLAIN_PATH = re.compile(r"(?:/[A-Za-z0-9._~-]+)+/?")
PORT = re.compile(r"[0-9]{1,5}")


class ForwardedHeaders(ProxyFix):
    """ProxyFix, less a forwarded prefix or port that could send a URL elsewhere."""

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        prefix = self._get_real_value(self.x_prefix, environ.get("HTTP_X_FORWARDED_PREFIX"))
        if prefix and not PLAIN_PATH.fullmatch(prefix):
            del environ["HTTP_X_FORWARDED_PREFIX"]
        port = self._get_real_value(self.x_port, environ.get("HTTP_X_FORWARDED_PORT"))
        if port and not PORT.fullmatch(port):
            del environ["HTTP_X_FORWARDED_PORT"]
        return super().__call__(environ, start_response)
