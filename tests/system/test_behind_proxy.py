"""Issue 25 §2: behind Debian's nginx terminating TLS, a person signs in to the pages.

nginx listens with a self-signed certificate and proxies to ``wetbank serve`` with the
``proxy_*`` lines of docs/operations.md §4, read from it: the client's scheme, host and address
in ``X-Forwarded-*``, a client's own ``X-Forwarded-Port`` and ``-Prefix`` cleared, nginx's
``$request_id`` as ``X-Request-Id``, and ``Host`` left to nginx (the upstream's name).  With
``WETBANK_TRUST_PROXY=1`` the sign-in form's ``Origin`` check sees the host the browser used,
and the flow ends on a signed-in page; a service that does not trust the proxy refuses the same
form, which shows the setting is what makes it work.  A prefix a client sends, even a plain path
the service would believe from its proxy, starts none of the URLs the service writes.
"""

from __future__ import annotations

import http.client
import json
import re
import ssl
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests.system.harness import HOST, ROOT, Server, board_token, free_port
from tests.system.ops_kit import Daemon, require_program, self_signed_certificate

pytestmark = pytest.mark.system


def documented_proxy_lines() -> list[str]:
    """The ``proxy_http_version`` and ``proxy_set_header`` lines of docs/operations.md §4's
    nginx configuration (the rest of it, ports and certificates, is the test's own)."""
    section = (ROOT / "docs" / "operations.md").read_text().split("## 4. Run", 1)[1]
    block = section.split("```nginx\n", 1)[1].split("```", 1)[0]
    lines = [
        line.split("#", 1)[0].strip()
        for line in block.splitlines()
        if line.strip().startswith(("proxy_http_version ", "proxy_set_header "))
    ]
    assert "proxy_set_header X-Forwarded-Proto $scheme;" in lines, lines
    return lines


def nginx_config(folder: Path, port: int, upstream: int, cert: Path, key: Path) -> Path:
    config = folder / "nginx.conf"
    documented = "\n".join(" " * 20 + line for line in documented_proxy_lines()).lstrip()
    config.write_text(
        textwrap.dedent(
            f"""\
            worker_processes 1;
            pid {folder}/nginx.pid;
            error_log {folder}/error.log info;
            events {{ worker_connections 64; }}
            http {{
                log_format main '$remote_addr "$request" $status $request_id';
                access_log {folder}/access.log main;
                client_body_temp_path {folder}/client_body;
                proxy_temp_path {folder}/proxy;
                fastcgi_temp_path {folder}/fastcgi;
                uwsgi_temp_path {folder}/uwsgi;
                scgi_temp_path {folder}/scgi;
                # bodies and responses stay in memory: nothing for the workers to write
                client_max_body_size 2m;
                client_body_buffer_size 2m;
                proxy_max_temp_file_size 0;

                upstream wetbank {{
                    server {HOST}:{upstream};
                    keepalive 8;
                }}
                server {{
                    listen {HOST}:{port} ssl;
                    ssl_certificate {cert};
                    ssl_certificate_key {key};
                    {documented}
                    location / {{
                        proxy_pass http://wetbank;
                    }}
                }}
            }}
            """
        )
    )
    return config


@dataclass
class Site:
    port: int
    context: ssl.SSLContext
    nginx: Daemon
    server: Server


@pytest.fixture
def behind_nginx(pg_url: str, tmp_path: Path) -> Iterator[tuple[Site, Site]]:
    """Two services behind one nginx, each on its own HTTPS port: one trusting the proxy."""
    nginx = require_program("nginx", "nginx")
    cert, key = self_signed_certificate(tmp_path)
    context = ssl.create_default_context(cafile=str(cert))
    trusting = Server(
        pg_url, 1, tmp_path / "trusting.log", env={"WETBANK_TRUST_PROXY": "1"}
    ).start()
    blind = Server(pg_url, 1, tmp_path / "blind.log").start()
    sites = []
    try:
        for name, server in (("trusting", trusting), ("blind", blind)):
            folder = tmp_path / f"nginx-{name}"
            folder.mkdir()
            port = free_port()
            config = nginx_config(folder, port, server.port, cert, key)
            daemon = Daemon(
                [nginx, "-c", str(config), "-p", str(folder), "-g", "daemon off;"],
                folder / "nginx.out",
                port,
            )
            sites.append(Site(port, context, daemon.__enter__(), server))
        yield sites[0], sites[1]
    finally:
        for site in sites:
            site.nginx.__exit__()
        trusting.stop()
        blind.stop()


class Browser:
    """An HTTPS client that keeps cookies, as a browser on https://127.0.0.1:PORT would."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.origin = f"https://{HOST}:{site.port}"
        self.cookies: dict[str, str] = {}
        self.set_cookie_headers: list[str] = []

    def request(
        self,
        method: str,
        path: str,
        form: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], str]:
        conn = http.client.HTTPSConnection(HOST, self.site.port, context=self.site.context)
        headers = dict(headers or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if form is not None:
            body = urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            headers["Origin"] = self.origin
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            text = response.read().decode()
        finally:
            conn.close()
        for header in response.headers.get_all("Set-Cookie") or []:
            self.set_cookie_headers.append(header)
            name, _, rest = header.partition("=")
            value = rest.split(";", 1)[0]
            if value and "Max-Age=0" not in header:
                self.cookies[name] = value
            else:
                self.cookies.pop(name, None)
        return response.status, {k.lower(): v for k, v in response.getheaders()}, text

    def sign_in(self, token: str) -> tuple[int, dict[str, str], str]:
        status, _headers, page = self.request("GET", "/sign-in?next=/audit")
        assert status == 200, page
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert csrf, page
        return self.request(
            "POST", "/sign-in", {"csrf_token": csrf.group(1), "token": token, "next": "/audit"}
        )


def test_behind_nginx_with_tls_a_board_member_signs_in_and_sees_the_audit_page(
    behind_nginx: tuple[Site, Site], pg_url: str
) -> None:
    trusting, blind = behind_nginx
    token = board_token(pg_url)

    browser = Browser(trusting)
    status, headers, _page = browser.sign_in(token)
    assert status == 303, _page
    assert headers["location"] == "/audit"  # a path: the browser stays on https://
    session = [h for h in browser.set_cookie_headers if h.startswith("wetbank_session=")]
    assert len(session) == 1 and "Secure" in session[0] and "HttpOnly" in session[0]

    status, headers, page = browser.request("GET", headers["location"])
    assert status == 200, page
    assert "Signed in as" in page and "Sign out" in page
    assert "<h1>Audit</h1>" in page and 'data-ok="true"' in page  # the board's page
    # nginx's request id is the service's: one id in both logs
    request_id = headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", request_id)
    # each side writes its log line once the response has gone: the client can be faster
    _eventually_holds(trusting.nginx.log_path.parent / "access.log", request_id)
    _eventually_holds(trusting.server.log_path, request_id)
    access = [
        json.loads(line)
        for line in trusting.server.log_path.read_text().splitlines()
        if line.startswith("{") and '"wetbank.access"' in line
    ]
    [line] = [a for a in access if a["request_id"] == request_id]
    assert (line["path"], line["status"], line["remote_addr"]) == ("/audit", 200, HOST)
    assert line["actor"].startswith("system tests (")

    # a client's own X-Forwarded-Prefix and -Port: a plain path the service would believe from
    # its proxy, but nginx clears them, so the URLs the service writes stay its own
    forged = {"X-Forwarded-Prefix": "/elsewhere", "X-Forwarded-Port": "1"}
    status, headers, _page = Browser(trusting).request("GET", "/accounts", headers=forged)
    assert (status, headers["location"]) == (303, "/sign-in?next=/accounts")
    status, _headers, page = Browser(trusting).request("GET", "/sign-in", headers=forged)
    assert status == 200 and 'action="/sign-in"' in page and "/elsewhere" not in page

    # the same form through the same nginx to a service that does not trust it: the Origin
    # names https://127.0.0.1:PORT, the service sees the upstream "wetbank", and refuses
    refused = Browser(blind)
    status, _headers, page = refused.sign_in(token)
    assert status == 400, page
    assert "wetbank_session" not in refused.cookies


def _eventually_holds(log: Path, text: str, seconds: float = 10.0) -> None:
    """Wait until ``log`` holds ``text`` (a line written after its response was sent)."""
    deadline = time.monotonic() + seconds
    while text not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline, f"{text} never reached {log}"
        time.sleep(0.05)
