"""Fixed SQL on a PostgreSQL connection the caller holds, sent through psycopg directly, prepared
(``ledger.verify_sql``): the PostgreSQL store's ``execute`` (``ledger.store.postgresql``)."""

from ledger.store.postgresql import execute as execute_on

__all__ = ["execute_on"]
