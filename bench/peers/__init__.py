"""Peer ledgers measured beside this one, each in its own virtual environment.

django-hordak (a double-entry ledger for Django) is installed on first use into ``.venv-peers``
from ``bench/peers/requirements.txt``, outside the service's own dependencies; its transfer runs
in that environment's Python, in worker processes started together, so its rate is measured
over the same kind of window as the other lines'.  Where the environment cannot be made (no
package index), the line says so and no ratio is printed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from bench.common import Result, busy_cores, cpu_times, create_database, drop_database

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
VENV = ROOT / ".venv-peers"
REQUIREMENTS = HERE / "requirements.txt"
HORDAK = HERE / "hordak_transfers.py"
#: how long before the window the workers are started: Django's import and connection set-up
LEAD_SECONDS = 4.0


def python() -> Path | None:
    """The peer environment's interpreter, made (or brought up to date) from REQUIREMENTS."""
    interpreter = VENV / "bin" / "python"
    stamp = VENV / ".requirements"
    wanted = REQUIREMENTS.read_text()
    if interpreter.exists() and stamp.exists() and stamp.read_text() == wanted:
        return interpreter
    try:
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, capture_output=True)
        subprocess.run(
            [str(interpreter), "-m", "pip", "install", "--quiet", "-r", str(REQUIREMENTS)],
            check=True,
            capture_output=True,
        )
    except subprocess.CalledProcessError:
        return None
    stamp.write_text(wanted)
    return interpreter


class Hordak:
    """django-hordak's tables and accounts in a database of their own, for the run's length."""

    def __init__(self, accounts: int) -> None:
        self.accounts = accounts
        self.interpreter = python()
        self.url: str | None = None
        if self.interpreter is not None:
            self.url = create_database()
            self._call("setup")

    def __enter__(self) -> Hordak:
        return self

    def __exit__(self, *_exc: object) -> None:
        if self.url is not None:
            drop_database(self.url)

    @property
    def available(self) -> bool:
        return self.url is not None

    def run(self, workers: int, seconds: float, label: str) -> Result | None:
        """``workers`` processes calling ``transfer_to`` for ``seconds`` from the same moment."""
        if self.interpreter is None or self.url is None:
            return None
        start_at = time.time() + LEAD_SECONDS
        procs = [
            subprocess.Popen(
                self._command("run", str(seconds), str(start_at)),
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(workers)
        ]
        time.sleep(max(0.0, start_at - time.time()))
        before = cpu_times()
        time.sleep(seconds)
        after = cpu_times()
        latencies: list[float] = []
        for proc in procs:
            out, _ = proc.communicate()
            if proc.returncode != 0:
                raise RuntimeError(f"the django-hordak worker failed ({proc.returncode})")
            latencies += json.loads(out)
        return Result(label, len(latencies), seconds, latencies, busy_cores(before, after))

    def _command(self, *args: str) -> list[str]:
        if self.interpreter is None or self.url is None:
            raise RuntimeError("django-hordak's environment could not be made")
        command, *rest = args
        return [str(self.interpreter), str(HORDAK), command, self.url, str(self.accounts), *rest]

    def _call(self, *args: str) -> None:
        subprocess.run(self._command(*args), check=True, capture_output=True)
