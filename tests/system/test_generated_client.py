"""Issue 25 §6: a client generated from the running service's OpenAPI document works, and its
transfer is replayed on a repeat of its Idempotency-Key.

openapi-python-client (the ``dev`` extra) generates a Python package from the document a live
``wetbank serve`` answers at ``/api/v1/openapi.json``; the test imports it and moves credits with
it as an integrator would, through the functions and models the document's operationIds,
headers and schemas made: the transfer, its replay, a conflicting reuse of the key, and a
refusal parsed as a ``Problem`` whose ``code`` is one of the enum's.
"""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.system import harness

pytestmark = pytest.mark.system

PACKAGE = "wetbank_client"


def generator() -> str:
    """The generator's command, installed beside this Python (the ``dev`` extra)."""
    found = Path(sys.executable).parent / "openapi-python-client"
    if found.exists():
        return str(found)
    on_path = shutil.which("openapi-python-client")
    if on_path is None:
        pytest.fail("openapi-python-client is not installed: pip install -e '.[dev]'")
    return on_path


@pytest.fixture
def served(pg_url: str, tmp_path: Path) -> Iterator[tuple[harness.Server, harness.Bank]]:
    server = harness.Server(pg_url, workers=2, log_path=tmp_path / "server.log")
    with server, harness.Client(server.port) as client:
        bank = harness.seed(client, pg_url, [20_000, 0])
        yield server, bank


@pytest.fixture
def generated(served: tuple[harness.Server, harness.Bank], tmp_path: Path) -> Iterator[ModuleType]:
    """The client package, generated from the document the server answers, imported."""
    server, _bank = served
    with harness.Client(server.port) as client:
        status, _headers, document = client.call("GET", "/openapi.json")
    assert status == 200
    (tmp_path / "openapi.json").write_text(json.dumps(document))
    # no formatting hooks: the generated code is imported, not read
    (tmp_path / "generator.yaml").write_text("post_hooks: []\n")
    done = subprocess.run(
        [
            generator(),
            "generate",
            "--path",
            str(tmp_path / "openapi.json"),
            "--config",
            str(tmp_path / "generator.yaml"),
            "--meta",
            "none",
            "--output-path",
            str(tmp_path / PACKAGE),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Warning" not in done.stdout + done.stderr, done.stdout + done.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def client_module(package: ModuleType, name: str) -> Any:
    return importlib.import_module(f"{package.__name__}.{name}")


def test_the_generated_clients_transfer_is_replayed_on_a_repeat_of_its_key(
    served: tuple[harness.Server, harness.Bank], generated: ModuleType
) -> None:
    server, bank = served
    source, target = bank.accounts
    post_transfers = client_module(generated, "api.movements.post_transfers")
    get_account = client_module(generated, "api.accounts.get_account_by_id")
    models = client_module(generated, "models")
    client = generated.AuthenticatedClient(
        base_url=f"http://{harness.HOST}:{server.port}", token=bank.holder_token, timeout=30.0
    )

    def transfer(amount: int, key: str, request_id: str) -> Any:
        body = models.TransferIn(
            from_account_id=source,
            to_account_id=target,
            credit_class=harness.CREDIT_CLASS,
            amount_sqft=amount,
            memo="sold through the generated client",
        )
        return post_transfers.sync_detailed(
            client=client, body=body, idempotency_key=key, x_request_id=request_id
        )

    with client:
        first = transfer(1_500, "generated-client-1", "gen-first")
        assert first.status_code == 201, first.content
        assert isinstance(first.parsed, models.TransferOut)
        assert first.parsed.amount_sqft == 1_500 and first.parsed.from_account_id == source
        assert first.headers["X-Request-Id"] == "gen-first"
        assert "Idempotent-Replayed" not in first.headers

        again = transfer(1_500, "generated-client-1", "gen-again")
        assert again.status_code == 201
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.headers["X-Request-Id"] == "gen-again"
        assert json.loads(again.content) == json.loads(first.content)  # the same body
        assert again.parsed.id == first.parsed.id
        assert again.parsed.transaction_id == first.parsed.transaction_id

        # the key with another request: a problem, parsed with its code from the enum
        other = transfer(1_000, "generated-client-1", "gen-other")
        assert other.status_code == 409
        assert isinstance(other.parsed, models.Problem)
        assert other.parsed.code == models.ProblemCode.IDEMPOTENCY_CONFLICT
        assert other.parsed.type_ == "/problems/idempotency_conflict"

        # one transfer was written, whatever the client repeated
        account = get_account.sync(client=client, account_id=source)
        assert isinstance(account, models.AccountOut)
        assert sum(row.available_sqft for row in account.balances) == 20_000 - 1_500

        # a refusal of the domain, parsed the same way
        too_much = transfer(10**6, "generated-client-2", "gen-too-much")
        assert too_much.status_code == 422
        assert too_much.parsed.code == models.ProblemCode.INSUFFICIENT_CREDITS
    with harness.Client(server.port, bank.board) as board:
        assert board.ok("GET", "/audit/verify", status=200)["ok"]
