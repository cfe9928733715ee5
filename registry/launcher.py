"""The ``schema-registry`` command's entry point: a clear message when the server extra is
missing (``pip install pyschemaregistry`` is serdes alone), else :func:`registry.cli.main`."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence

# one module of each distribution the server cannot start without (the ``server`` extra)
SERVER_MODULES = ("fastapi", "uvicorn", "sqlalchemy", "alembic", "psycopg", "grpc_tools", "yaml")


def missing_server_modules() -> list[str]:
    return [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]


def main(argv: Sequence[str] | None = None) -> int:
    missing = missing_server_modules()
    if missing:
        print(
            "schema-registry: the registry server is not installed (missing: "
            f"{', '.join(missing)}); install it with: pip install 'pyschemaregistry[server]'",
            file=sys.stderr,
        )
        return 2
    from registry.cli import main as cli_main

    return cli_main(argv)
