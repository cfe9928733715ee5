"""The ``schema-registry`` command: ``serve``, ``db upgrade``, and the schema-repository
commands of ``registry.cli_tools`` (``check``, ``register``, ``plan``, ...)."""

from __future__ import annotations

import argparse
import gc
import logging
import signal
import sys
from collections.abc import Sequence

from registry.settings import Settings

log = logging.getLogger("registry")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="schema-registry", description="A Confluent-compatible Schema Registry."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the REST server")
    serve.add_argument(
        "--host", help="address to listen on (default 127.0.0.1; env SCHEMA_REGISTRY_HOST)"
    )
    serve.add_argument("--port", type=int, help="port (default 8081; env SCHEMA_REGISTRY_PORT)")
    serve.add_argument(
        "--store",
        help="store URL: sqlite:///file.db (default "
        "sqlite:///schema-registry.db) or postgresql://...; env "
        "SCHEMA_REGISTRY_STORE",
    )
    serve.add_argument("--log-level", help="DEBUG, INFO, WARNING (env SCHEMA_REGISTRY_LOG_LEVEL)")
    serve.add_argument("--log-format", help="text or json (env SCHEMA_REGISTRY_LOG_FORMAT)")
    serve.add_argument("--tls-certfile", help="PEM certificate chain: serve HTTPS")
    serve.add_argument("--tls-keyfile", help="PEM private key of --tls-certfile")
    serve.add_argument("--tls-ca-file", help="CA bundle that client certificates must chain to")
    serve.add_argument(
        "--tls-client-auth", help="client certificates: none (default), optional or required"
    )
    serve.add_argument(
        "--avro-7-9-validation",
        action="store_true",
        default=None,
        help="validate new Avro schemas as Confluent 7.9 did (defaults only with normalize, "
        "namespaces unchecked; env SCHEMA_REGISTRY_AVRO_7_9_VALIDATION)",
    )
    serve.add_argument(
        "--audit-file",
        help="audit every change and refusal to this JSON-lines file, rotated by size "
        "(env SCHEMA_REGISTRY_AUDIT_FILE)",
    )
    serve.add_argument(
        "--audit-kafka",
        help="audit events also to Kafka as CloudEvents: kafka://host:9092/?topic=NAME "
        "(env SCHEMA_REGISTRY_AUDIT_KAFKA)",
    )
    serve.add_argument(
        "--audit-stdout",
        action="store_true",
        default=None,
        help="audit events also to standard output (env SCHEMA_REGISTRY_AUDIT_STDOUT)",
    )
    serve.add_argument(
        "--audit-fail-closed",
        action="store_true",
        default=None,
        help="refuse changes while an audit sink is unavailable (env "
        "SCHEMA_REGISTRY_AUDIT_FAIL_CLOSED; default: serve and count dropped events)",
    )
    serve.add_argument(
        "--audit-reads",
        action="store_true",
        default=None,
        help="audit reads too (env SCHEMA_REGISTRY_AUDIT_READS)",
    )

    serve.add_argument(
        "--v8-fields-by-header",
        action="store_true",
        default=None,
        help="answer guid, ts, deleted and Avro's schemaType only to requests carrying "
        "Confluent-Accept-Unknown-Properties or Confluent-Client-Version, as Confluent Cloud "
        "(default: always, as Confluent Platform 8.x; env SCHEMA_REGISTRY_V8_FIELDS_BY_HEADER)",
    )

    user = commands.add_parser("user", help="manage the HTTP Basic users file")
    user_commands = user.add_subparsers(dest="user_command", required=True)
    user_add = user_commands.add_parser(
        "add", help="add a user or change its password (reads the password from stdin)"
    )
    user_add.add_argument("name")
    user_add.add_argument(
        "--file", help="users file (default: env SCHEMA_REGISTRY_AUTH_USERS_FILE)"
    )
    user_add.add_argument(
        "--password-stdin",
        action="store_true",
        help="read the password from standard input instead of prompting",
    )

    db = commands.add_parser("db", help="database maintenance")
    db_commands = db.add_subparsers(dest="db_command", required=True)
    upgrade = db_commands.add_parser("upgrade", help="apply Alembic migrations to the store")
    upgrade.add_argument("--store", help="store URL (env SCHEMA_REGISTRY_STORE)")

    from registry import cli_tools  # check, validate, register, download, config, plan, apply

    cli_tools.add_commands(commands)
    from registry import copy as store_copy  # copy --from STORE --to STORE
    from registry.audit import cli as audit_cli  # audit [--subject S] [--follow] ...

    audit_cli.add_command(commands)

    store_copy.add_command(commands)

    args = parser.parse_args(argv)
    if args.command in cli_tools.COMMANDS:
        return cli_tools.run(args)
    if args.command == "copy":
        return store_copy.run(args)
    if args.command == "audit":
        return audit_cli.run(args)
    if args.command == "user":
        from registry.auth.commands import user_add

        return user_add(args)
    try:
        settings = Settings.from_env(
            host=getattr(args, "host", None),
            port=getattr(args, "port", None),
            store=getattr(args, "store", None),
            log_level=getattr(args, "log_level", None),
            log_format=getattr(args, "log_format", None),
            tls_certfile=getattr(args, "tls_certfile", None),
            tls_keyfile=getattr(args, "tls_keyfile", None),
            tls_ca_file=getattr(args, "tls_ca_file", None),
            tls_client_auth=getattr(args, "tls_client_auth", None),
            avro_7_9_validation=getattr(args, "avro_7_9_validation", None),
            audit_file=getattr(args, "audit_file", None),
            audit_kafka=getattr(args, "audit_kafka", None),
            audit_stdout=getattr(args, "audit_stdout", None),
            audit_fail_closed=getattr(args, "audit_fail_closed", None),
            audit_reads=getattr(args, "audit_reads", None),
            v8_fields_by_header=getattr(args, "v8_fields_by_header", None),
        )
        from registry.logging_setup import configure as configure_logging

        configure_logging(settings.log_level, settings.log_format)
    except ValueError as exc:
        parser.error(str(exc))
    if args.command == "serve":
        return serve_forever(settings)
    if args.command == "db" and args.db_command == "upgrade":
        from registry.store.sql import upgrade_database

        upgrade_database(settings.store)
        log.info("database at %s is up to date", _safe(settings.store))
        return 0
    return 2


#: young objects between two collections of the youngest generation (Python's default 700):
#: a registration allocates thousands (its parsed schema), so the default collected every
#: few requests, each time walking everything allocated since (15% of a write's CPU)
GC_YOUNG_THRESHOLD = 20_000
#: how long a thread may hold the GIL while another waits for it (Python's default 5 ms): the
#: group-commit thread gives the GIL up at each database call and then waited up to 5 ms for
#: the event loop to hand it back, which made it the write path's bottleneck
SWITCH_INTERVAL_SECONDS = 0.001


def tune_interpreter() -> None:
    """The server process's garbage collector and GIL switch interval (see above)."""
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, middle, old)
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)


def serve_forever(settings: Settings) -> int:
    import uvicorn

    from registry.api.app import create_app
    from registry.core import Registry
    from registry.store.factory import open_store

    try:
        store = open_store(settings.store)
    except ValueError as exc:
        log.error("%s", exc)
        return 2
    from registry.api.http_protocol import protocol_for
    from registry.tls import certificate_protocol, uvicorn_options

    try:
        tls = uvicorn_options(settings)
        registry = Registry(store, settings)
        app = create_app(registry)
    except ValueError as exc:  # an unusable TLS or authentication setting
        log.error("%s", exc)
        return 2
    log.info("using store %s", store.description)
    tune_interpreter()
    http = protocol_for(settings.read_timeout, settings.max_url_bytes, settings.max_header_bytes)
    if tls.pop("http", None) is not None:  # client certificates name principals
        http = certificate_protocol(http)
    scheme = "https" if tls else "http"
    log.info("listening on %s://%s:%d", scheme, settings.host, settings.port)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level.lower(),
        access_log=False,
        server_header=False,
        log_config=None,  # uvicorn's records go through our handler (text or JSON)
        timeout_graceful_shutdown=settings.shutdown_timeout,
        http=http,
        **tls,
    )
    # uvicorn handles SIGTERM and SIGINT: it stops accepting, finishes in-flight requests, runs
    # the app's shutdown (which closes the store), then re-raises the signal to the handlers
    # that were installed before it: ours turn that into a clean exit.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _exit_cleanly)
    # schema work runs in worker threads: hand the GIL back to the event loop every 1 ms (not
    # Python's default 5 ms), so /live and small requests answer while a big check runs
    sys.setswitchinterval(0.001)
    uvicorn.Server(config).run()
    log.info("stopped")
    return 0


def _exit_cleanly(signum: int, frame: object) -> None:
    log.info("stopped on %s", signal.Signals(signum).name)
    sys.exit(0)


def _safe(url: str) -> str:
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url


if __name__ == "__main__":
    sys.exit(main())
