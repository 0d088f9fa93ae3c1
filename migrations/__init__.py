"""Alembic's migration scripts; installed from the wheel as the package ``wetbank_migrations``."""
