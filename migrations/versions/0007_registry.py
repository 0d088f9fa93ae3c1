"""registry seals and the bank site credit register

Every registry record that says who holds credits or what a transaction did is sealed like the
ledger's rows (``ledger.row_seals``, ``bank.registry``): triggers copy each new row's sealed
columns into ``ledger_row_seals`` and refuse UPDATEs of them, DELETE and TRUNCATE; rows already
there are sealed now.  ``bank_site_credit_areas`` is a site's register of the area each credited
category covers (Subd. 12 (c) caps a restoration, not a request); each site that already has
deposits registers, per category, the largest area one of its deposits stated.
``deposit_reversals`` records the compensating transaction that undid a mistaken deposit.

The sealed tables are listed here as they were when this revision was written, so that a later
change to ``bank.registry`` cannot change what this revision did; a test checks the two agree.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-05 11:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from ledger import row_seals
from ledger.row_seals import SealedTable

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SEALED = {
    "bank_sites": ("id", "id holder_id service_area created_at"),
    "bank_accounts": ("id", "id number holder_id service_area county created_at"),
    "credit_classes": (
        "code",
        "code service_area wetland_type restricted issuance_account_id withdrawn_account_id",
    ),
    "lots": (
        "id",
        "id account_id label credit_class bank_site_id deposit_id parent_lot_id "
        "federally_approved ledger_account_id created_at",
    ),
    "deposits": (
        "id",
        "id account_id bank_site_id effective_on banking_plan_reference banking_plan_approved_on "
        "banking_plan_lgu_id wetland_type completed_on federally_approved "
        "designated_for_replacement paid_by_performer paid_back_with_interest ruleset "
        "transaction_id total_credit_sqft recorded_at actor",
    ),
    "deposit_actions": (
        "id",
        "id deposit_id position category area_sqft credit_sqft cap_sqft restricted credit_class "
        "lot_id details",
    ),
    "deposit_reversals": (
        "deposit_id",
        "deposit_id transaction_id effective_on reason recorded_at actor",
    ),
    "bank_site_credit_areas": (
        "id",
        "id bank_site_id category area_sqft source reason deposit_id recorded_at actor",
    ),
    "transfers": (
        "id",
        "id from_account_id to_account_id credit_class amount_sqft price_per_sqft_cents memo "
        "transaction_id recorded_at actor",
    ),
    "transfer_lots": ("id", "id transfer_id from_lot_id to_lot_id amount_sqft"),
    "reservations": (
        "id",
        "id account_id plan_id credit_class lot_id amount_sqft expires_on created_at actor",
    ),
    "reservation_lots": ("id", "id reservation_id lot_id amount_sqft pending_transaction_id"),
    "withdrawals": ("id", "id plan_id transaction_id withdrawn_sqft created_at actor"),
    "withdrawal_allocations": (
        "id",
        "id withdrawal_id reservation_id lot_id credit_class amount_sqft portion",
    ),
    "payments": (
        "id",
        "id kind amount_cents payer received_on plan_id appeal_id lgu_id transaction_id ruleset "
        "created_at actor",
    ),
    "securities": (
        "id",
        "id plan_id kind issuer amount_cents irrevocable issued_on expires_on "
        "pending_transaction_id created_at",
    ),
}

SEALED_TABLES = tuple(
    SealedTable(name, id_column, tuple(columns.split()))
    for name, (id_column, columns) in _SEALED.items()
)

_CONTENT = sa.Text().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "ledger_row_seals",
        sa.Column("table_name", sa.String(length=63), nullable=False),
        sa.Column("row_id", sa.String(length=100), nullable=False),
        sa.Column("content", _CONTENT, nullable=False),
        sa.PrimaryKeyConstraint("table_name", "row_id", name=op.f("pk_ledger_row_seals")),
    )
    op.create_table(
        "bank_site_credit_areas",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("bank_site_id", sa.String(length=40), nullable=False),
        sa.Column("category", sa.String(length=40), nullable=False),
        sa.Column("area_sqft", sa.BigInteger(), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("deposit_id", sa.String(length=40), nullable=True),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(length=300), nullable=False),
        sa.ForeignKeyConstraint(
            ["bank_site_id"],
            ["bank_sites.id"],
            name=op.f("fk_bank_site_credit_areas_bank_site_id_bank_sites"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bank_site_credit_areas")),
    )
    op.create_index(
        op.f("ix_bank_site_credit_areas_bank_site_id"),
        "bank_site_credit_areas",
        ["bank_site_id"],
    )
    op.create_table(
        "deposit_reversals",
        sa.Column("deposit_id", sa.String(length=40), nullable=False),
        sa.Column("transaction_id", sa.BigInteger(), nullable=False),
        sa.Column("effective_on", sa.Date(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(length=300), nullable=False),
        sa.ForeignKeyConstraint(
            ["deposit_id"], ["deposits.id"], name=op.f("fk_deposit_reversals_deposit_id_deposits")
        ),
        sa.ForeignKeyConstraint(
            ["transaction_id"],
            ["ledger_transactions.id"],
            name=op.f("fk_deposit_reversals_transaction_id_ledger_transactions"),
        ),
        sa.PrimaryKeyConstraint("deposit_id", name=op.f("pk_deposit_reversals")),
        sa.UniqueConstraint("transaction_id", name=op.f("uq_deposit_reversals_transaction_id")),
    )
    _register_existing_sites()
    connection = op.get_bind()
    row_seals.install(connection, SEALED_TABLES)
    for table in SEALED_TABLES:
        row_seals.seal_existing(connection, table)


def _register_existing_sites() -> None:
    """Each site with deposits registers, per category, the largest area one deposit stated."""
    op.execute(
        """
        INSERT INTO bank_site_credit_areas
            (bank_site_id, category, area_sqft, source, reason, recorded_at, actor)
        SELECT per_deposit.bank_site_id, per_deposit.category, max(per_deposit.area), 'migrated',
               'the largest area one deposit stated before the register existed',
               CURRENT_TIMESTAMP, 'migration 0007'
        FROM (SELECT d.bank_site_id, a.category, sum(a.area_sqft) AS area
              FROM deposit_actions AS a JOIN deposits AS d ON d.id = a.deposit_id
              GROUP BY d.bank_site_id, d.id, a.category) AS per_deposit
        GROUP BY per_deposit.bank_site_id, per_deposit.category
        """
    )


def downgrade() -> None:
    connection = op.get_bind()
    row_seals.uninstall(connection, SEALED_TABLES, functions=True)
    op.drop_table("deposit_reversals")
    op.drop_index(op.f("ix_bank_site_credit_areas_bank_site_id"), "bank_site_credit_areas")
    op.drop_table("bank_site_credit_areas")
    op.drop_table("ledger_row_seals")
