"""What the operations tests run beside the service: Debian's programs (nginx, PgBouncer,
OpenSSL, pg_dump) as child processes on loopback ports, each stopped at the end."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.system.harness import HOST

SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def require_program(name: str, package: str) -> str:
    """The program's path; skipped locally when it is missing, a failure in CI (``.ci/run``
    installs ``package``)."""
    found = shutil.which(name, path=f"{os.environ.get('PATH', '')}:{SYSTEM_PATH}")
    if found:
        return found
    message = f"{name} is not installed (apt-get install {package})"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " (CI=true: .ci/run installs it)", pytrace=False)
    pytest.skip(message)


def wait_for_port(
    port: int, timeout: float = 30, proc: subprocess.Popen[bytes] | None = None
) -> None:
    """Until something accepts connections on the loopback ``port``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the process exited with {proc.returncode}")
        with socket.socket() as s:
            s.settimeout(1)
            if s.connect_ex((HOST, port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {HOST}:{port} after {timeout} s")


class Daemon:
    """A program kept in the foreground in its own process group, its output in a log file."""

    def __init__(self, args: list[str], log_path: Path, port: int, **popen: object) -> None:
        self.args, self.log_path, self.port, self.popen = args, log_path, port, popen
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Daemon:
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                self.args,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                **self.popen,  # type: ignore[call-overload]
            )
        try:
            wait_for_port(self.port, proc=self.proc)
        except RuntimeError as error:
            self.__exit__()
            raise RuntimeError(f"{error}: {self.log()}") from error
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is None:
            return
        for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        self.proc = None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-3000:]
        except OSError:
            return ""


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and localhost (OpenSSL), and its key."""
    openssl = require_program("openssl", "openssl")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key
