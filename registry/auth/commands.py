"""``schema-registry user add NAME``: write a salted password hash to the users file."""

from __future__ import annotations

import argparse
import getpass
import os
import sys

from registry.auth.passwords import set_user
from registry.settings import ENV_PREFIX


def user_add(args: argparse.Namespace) -> int:
    path = args.file or os.environ.get(ENV_PREFIX + "AUTH_USERS_FILE", "")
    if not path:
        print(
            "schema-registry user add: give --file or set SCHEMA_REGISTRY_AUTH_USERS_FILE",
            file=sys.stderr,
        )
        return 2
    if args.password_stdin or not sys.stdin.isatty():
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = getpass.getpass(f"password for {args.name}: ")
        if getpass.getpass("again: ") != password:
            print("schema-registry user add: the passwords differ", file=sys.stderr)
            return 2
    if not password:
        print("schema-registry user add: empty password", file=sys.stderr)
        return 2
    try:
        new = set_user(path, args.name, password)
    except (ValueError, OSError) as exc:
        print(f"schema-registry user add: {exc}", file=sys.stderr)
        return 2
    print(f"{'added' if new else 'changed the password of'} {args.name} in {path}")
    return 0
