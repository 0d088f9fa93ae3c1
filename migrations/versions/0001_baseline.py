"""baseline: ledger tables, constraints, indexes and triggers

Revision ID: 0001
Revises: (none)
Create Date: 2026-12-03 05:59:30.777669
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger.ddl import drop_triggers, install_triggers


revision: str = '0001'
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('ledger_accounts',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('code', sa.String(length=200), nullable=False),
    sa.Column('asset', sa.String(length=100), nullable=False),
    sa.Column('name', sa.String(length=300), nullable=False),
    sa.Column('no_overdraft', sa.Boolean(), nullable=False),
    sa.Column('no_overcredit', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_ledger_accounts')),
    sa.UniqueConstraint('code', name=op.f('uq_ledger_accounts_code'))
    )
    op.create_table('ledger_transactions',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('kind', sa.String(length=64), nullable=False),
    sa.Column('state', sa.String(length=8), nullable=False),
    sa.Column('pending', sa.Boolean(), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('reverses_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
    sa.Column('idempotency_key', sa.String(length=300), nullable=False),
    sa.Column('request_hash', sa.String(length=64), nullable=False),
    sa.Column('effective_on', sa.Date(), nullable=False),
    sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('actor', sa.String(length=300), nullable=True),
    sa.Column('request_id', sa.String(length=200), nullable=True),
    sa.Column('memo', sa.Text(), nullable=True),
    sa.CheckConstraint("state IN ('open', 'sealed')", name=op.f('ck_ledger_transactions_state')),
    sa.ForeignKeyConstraint(['reverses_id'], ['ledger_transactions.id'], name=op.f('fk_ledger_transactions_reverses_id_ledger_transactions')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_ledger_transactions')),
    sa.UniqueConstraint('idempotency_key', name=op.f('uq_ledger_transactions_idempotency_key')),
    sa.UniqueConstraint('reverses_id', name=op.f('uq_ledger_transactions_reverses_id'))
    )
    op.create_table('ledger_balances',
    sa.Column('account_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('asset', sa.String(length=100), nullable=False),
    sa.Column('no_overdraft', sa.Boolean(), nullable=False),
    sa.Column('no_overcredit', sa.Boolean(), nullable=False),
    sa.Column('debits_posted', sa.BigInteger(), nullable=False),
    sa.Column('credits_posted', sa.BigInteger(), nullable=False),
    sa.Column('debits_pending', sa.BigInteger(), nullable=False),
    sa.Column('credits_pending', sa.BigInteger(), nullable=False),
    sa.Column('version', sa.BigInteger(), nullable=False),
    sa.CheckConstraint('NOT no_overcredit OR credits_posted + credits_pending <= debits_posted', name=op.f('ck_ledger_balances_no_overcredit')),
    sa.CheckConstraint('NOT no_overdraft OR debits_posted + debits_pending <= credits_posted', name=op.f('ck_ledger_balances_no_overdraft')),
    sa.CheckConstraint('debits_posted >= 0 AND credits_posted >= 0 AND debits_pending >= 0 AND credits_pending >= 0', name=op.f('ck_ledger_balances_non_negative')),
    sa.ForeignKeyConstraint(['account_id'], ['ledger_accounts.id'], name=op.f('fk_ledger_balances_account_id_ledger_accounts')),
    sa.PrimaryKeyConstraint('account_id', name=op.f('pk_ledger_balances'))
    )
    op.create_table('ledger_chain',
    sa.Column('seq', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('transaction_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('prev_hash', sa.String(length=64), nullable=False),
    sa.Column('hash', sa.String(length=64), nullable=False),
    sa.Column('chained_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['transaction_id'], ['ledger_transactions.id'], name=op.f('fk_ledger_chain_transaction_id_ledger_transactions')),
    sa.PrimaryKeyConstraint('seq', name=op.f('pk_ledger_chain')),
    sa.UniqueConstraint('transaction_id', name=op.f('uq_ledger_chain_transaction_id'))
    )
    op.create_table('ledger_chain_queue',
    sa.Column('transaction_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=False, nullable=False),
    sa.ForeignKeyConstraint(['transaction_id'], ['ledger_transactions.id'], name=op.f('fk_ledger_chain_queue_transaction_id_ledger_transactions')),
    sa.PrimaryKeyConstraint('transaction_id', name=op.f('pk_ledger_chain_queue'))
    )
    op.create_table('ledger_entries',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('transaction_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('account_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('asset', sa.String(length=100), nullable=False),
    sa.Column('amount', sa.BigInteger(), nullable=False),
    sa.Column('phase', sa.String(length=8), nullable=False),
    sa.Column('balance_after', sa.BigInteger(), nullable=False),
    sa.Column('account_version', sa.BigInteger(), nullable=False),
    sa.Column('effective_on', sa.Date(), nullable=False),
    sa.Column('resolves_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
    sa.Column('resolution', sa.String(length=8), nullable=True),
    sa.CheckConstraint("(phase = 'release') = (resolves_id IS NOT NULL) AND (resolves_id IS NULL) = (resolution IS NULL) AND (resolution IS NULL OR resolution IN ('posted', 'voided', 'expired'))", name=op.f('ck_ledger_entries_release')),
    sa.CheckConstraint("phase IN ('posted', 'pending', 'release')", name=op.f('ck_ledger_entries_phase')),
    sa.CheckConstraint('amount <> 0', name=op.f('ck_ledger_entries_non_zero')),
    sa.ForeignKeyConstraint(['account_id'], ['ledger_accounts.id'], name=op.f('fk_ledger_entries_account_id_ledger_accounts')),
    sa.ForeignKeyConstraint(['resolves_id'], ['ledger_transactions.id'], name=op.f('fk_ledger_entries_resolves_id_ledger_transactions')),
    sa.ForeignKeyConstraint(['transaction_id'], ['ledger_transactions.id'], name=op.f('fk_ledger_entries_transaction_id_ledger_transactions')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_ledger_entries')),
    sa.UniqueConstraint('resolves_id', 'account_id', name='uq_ledger_entries_resolves_once')
    )
    with op.batch_alter_table('ledger_entries', schema=None) as batch_op:
        batch_op.create_index('ix_ledger_entries_account_effective', ['account_id', 'effective_on', 'id'], unique=False)
        batch_op.create_index('ix_ledger_entries_account_id_id', ['account_id', 'id'], unique=False)
        batch_op.create_index(batch_op.f('ix_ledger_entries_transaction_id'), ['transaction_id'], unique=False)

    op.create_table('ledger_open_pending',
    sa.Column('transaction_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('account_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('debits', sa.BigInteger(), nullable=False),
    sa.Column('credits', sa.BigInteger(), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['account_id'], ['ledger_accounts.id'], name=op.f('fk_ledger_open_pending_account_id_ledger_accounts')),
    sa.ForeignKeyConstraint(['transaction_id'], ['ledger_transactions.id'], name=op.f('fk_ledger_open_pending_transaction_id_ledger_transactions')),
    sa.PrimaryKeyConstraint('transaction_id', 'account_id', name=op.f('pk_ledger_open_pending'))
    )
    with op.batch_alter_table('ledger_open_pending', schema=None) as batch_op:
        batch_op.create_index('ix_ledger_open_pending_account', ['account_id', 'expires_at'], unique=False)
    install_triggers(op.get_bind())


def downgrade() -> None:
    drop_triggers(op.get_bind())
    with op.batch_alter_table('ledger_open_pending', schema=None) as batch_op:
        batch_op.drop_index('ix_ledger_open_pending_account')

    op.drop_table('ledger_open_pending')
    with op.batch_alter_table('ledger_entries', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_ledger_entries_transaction_id'))
        batch_op.drop_index('ix_ledger_entries_account_id_id')
        batch_op.drop_index('ix_ledger_entries_account_effective')

    op.drop_table('ledger_entries')
    op.drop_table('ledger_chain_queue')
    op.drop_table('ledger_chain')
    op.drop_table('ledger_balances')
    op.drop_table('ledger_transactions')
    op.drop_table('ledger_accounts')
