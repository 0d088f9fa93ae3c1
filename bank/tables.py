"""Imports every module that defines tables, so the shared metadata is complete."""

import bank.access  # noqa: F401
import bank.access_tables  # noqa: F401
import bank.appeals  # noqa: F401
import bank.credits  # noqa: F401
import bank.deposit_tables  # noqa: F401
import bank.deposits  # noqa: F401
import bank.money_tables  # noqa: F401
import bank.notice_tables  # noqa: F401
import bank.parties  # noqa: F401
import bank.party_edits  # noqa: F401
import bank.party_tables  # noqa: F401
import bank.plan_tables  # noqa: F401
import bank.reservation_tables  # noqa: F401
import bank.site_register  # noqa: F401
import bank.transfer_tables  # noqa: F401
import bank.web_sessions  # noqa: F401
import bank.withdrawal_tables  # noqa: F401
import bank.withdrawals  # noqa: F401
import ledger.schema  # noqa: F401
