"""The wheel's packages (everything else about it is in pyproject.toml, which cannot say this).

The code's packages are found, so a new folder of ``api``, ``bank`` or ``ledger`` ships without
anyone listing it; the top-level ``migrations/`` folder, where developers and alembic.ini keep
it, ships as the package ``wetbank_migrations``, so that an installed service migrates its
database (``api/schema_check.py``).  tests/system/test_wheel.py checks that the wheel holds
every source file.
"""

from setuptools import find_namespace_packages, setup

CODE = ("api", "bank", "ledger")

setup(
    packages=[
        *find_namespace_packages(
            include=[*CODE, *(f"{name}.*" for name in CODE)], exclude=["*__pycache__*"]
        ),
        "wetbank_migrations",
        "wetbank_migrations.versions",
    ],
    package_dir={"wetbank_migrations": "migrations"},
)
