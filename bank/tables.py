"""Imports every module that defines tables, so the shared metadata is complete."""

import bank.access  # noqa: F401
import bank.parties  # noqa: F401
import ledger.schema  # noqa: F401
