"""Create registry_log: the ``_schemas`` record log, one row per record, keyed by offset.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "registry_log",
        # the primary key is the offset index: read_after is a range scan on it. On SQLite an
        # INTEGER PRIMARY KEY is the rowid, so the table itself is ordered by offset.
        sa.Column(
            "offset",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=False,
        ),
        sa.Column("key", sa.LargeBinary(), nullable=False),
        sa.Column("value", sa.LargeBinary(), nullable=True),
        sa.Column("timestamp_ms", sa.BigInteger(), nullable=False),
        sa.CheckConstraint('"offset" >= 0', name="registry_log_offset_nonnegative"),
    )


def downgrade() -> None:
    op.drop_table("registry_log")
