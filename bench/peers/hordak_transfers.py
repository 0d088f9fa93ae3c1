"""django-hordak 2.0's in-process transfer, run by the peer environment's Python.

``setup URL ACCOUNTS``: migrate hordak's tables into the database at URL and create ACCOUNTS
asset accounts.  ``run URL ACCOUNTS SECONDS START``: from the wall-clock time START, for SECONDS,
move 0.01 USD between two random accounts with ``Account.transfer_to`` in one atomic block
(hordak's own deferred trigger checks each transaction balances at commit); print the latencies
in ms as JSON.  The worker runs no overdraft check and no HTTP: it is the Python peer's
fastest path.
"""

from __future__ import annotations

import json
import random
import sys
import time


def configure(url: str) -> None:
    import dj_database_url
    import django
    from django.conf import settings

    settings.configure(
        DATABASES={"default": dj_database_url.parse(url.replace("+psycopg", ""))},
        INSTALLED_APPS=[
            "django.contrib.contenttypes",
            "django.contrib.auth",
            "mptt",
            "hordak",
        ],
        USE_TZ=True,
        DEFAULT_CURRENCY="USD",
        HORDAK_CURRENCIES=["USD"],
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
    )
    django.setup()


def setup(accounts: int) -> None:
    from django.core.management import call_command
    from hordak.models import Account

    call_command("migrate", verbosity=0)
    for i in range(accounts):
        Account.objects.create(name=f"bench {i}", code=f"{i:04d}", type="AS", currencies=["USD"])


def run(accounts: int, seconds: float, start_at: float) -> list[float]:
    from django.db import transaction
    from djmoney.money import Money
    from hordak.models import Account

    rng = random.Random()
    pool = list(Account.objects.filter(name__startswith="bench ")[:accounts])
    amount = Money("0.01", "USD")

    def one() -> None:
        src, dst = rng.sample(pool, 2)
        with transaction.atomic():
            src.transfer_to(dst, amount)

    for _ in range(3):  # connection, prepared plans
        one()
    time.sleep(max(0.0, start_at - time.time()))
    latencies: list[float] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        started = time.perf_counter()
        one()
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


if __name__ == "__main__":
    command, url, accounts = sys.argv[1], sys.argv[2], int(sys.argv[3])
    configure(url)
    if command == "setup":
        setup(accounts)
    else:
        print(json.dumps(run(accounts, float(sys.argv[4]), float(sys.argv[5]))))
