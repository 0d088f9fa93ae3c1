"""Imports every module that defines tables, so the shared metadata is complete."""

import ledger.schema  # noqa: F401
