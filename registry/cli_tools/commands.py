"""Argument parsing and the handlers of the schema-repository commands.

Exit codes, for every command: 0 success (compatible), 1 incompatible (a check failed, or the
registry refused a version as incompatible), 2 usage or input error (unparseable schema,
missing file, unknown revision, registry unreachable).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import traceback
from pathlib import Path
from typing import Any

from registry.cli_tools import exporter_commands, output, plan, plan_exporters
from registry.cli_tools.check import (
    DEFAULT_LEVEL,
    Workspace,
    check_offline,
    check_online,
    validate,
)
from registry.cli_tools.errors import EXIT_ERROR, EXIT_INCOMPATIBLE, EXIT_OK, ToolError
from registry.cli_tools.project import declared_references, load_project
from registry.cli_tools.remote import (
    Connection,
    RegistryClient,
    RemoteError,
    reference_body,
    resolve_latest,
)
from registry.cli_tools.schemafiles import SUFFIXES, SchemaSpec, schema_type_of, subject_for
from registry.compatibility import parse_level

COMMANDS = (
    "check",
    "validate",
    "register",
    "download",
    "config",
    "plan",
    "apply",
    "exporter",
    "compare",
)


def add_commands(commands: Any) -> None:
    """Add the commands to the ``schema-registry`` sub-parsers."""
    check = commands.add_parser(
        "check",
        help="is each local schema compatible with its subject? (exit 0 yes, 1 no, 2 error)",
        description="Check local schemas against a registry, or offline against previous "
        "versions given as files or as they were at a git revision.",
    )
    _selection(check)
    _connection(check)
    check.add_argument(
        "--offline", action="store_true", help="check without a registry (needs --against)"
    )
    check.add_argument(
        "--against",
        metavar="git:REV|PATH",
        help="previous versions: git:REV (the files at a revision), a file, or a directory "
        "(DIR/SUBJECT/* as versions, or DIR/<file name>); implies --offline",
    )
    check.add_argument(
        "--level",
        action="append",
        default=[],
        metavar="[SUBJECT=]LEVEL",
        help=f"offline compatibility level, for all or one subject (default {DEFAULT_LEVEL})",
    )
    _format(check)

    validate_cmd = commands.add_parser("validate", help="parse local schemas (exit 0 or 2)")
    _selection(validate_cmd)
    _format(validate_cmd)

    register = commands.add_parser("register", help="register local schemas as new versions")
    _selection(register)
    _connection(register)

    download = commands.add_parser("download", help="write subjects' latest schemas to files")
    _connection(download)
    download.add_argument(
        "--subject-pattern",
        action="append",
        default=[],
        metavar="REGEX",
        help="subjects to download (full match; repeatable; default all)",
    )
    download.add_argument("--output-dir", "-o", type=Path, default=Path("."), metavar="DIR")

    config = commands.add_parser("config", help="show or set compatibility levels")
    _connection(config)
    config.add_argument("subject", nargs="?", help="subject (default: the global level)")
    config.add_argument("--level", help="set this level (default: show the level)")

    for name, text in (
        ("plan", "show what apply would change in the registry (exit 1 if incompatible)"),
        ("apply", "register versions and set levels as the project file says"),
    ):
        cmd = commands.add_parser(name, help=text)
        cmd.add_argument(
            "project",
            nargs="?",
            type=Path,
            default=Path("schema-registry.yaml"),
            help="project file (default schema-registry.yaml)",
        )
        _connection(cmd)
        cmd.add_argument("--format", choices=("text", "json"), default="text")

    exporter_commands.add_exporter_command(commands, _connection)


def run(args: argparse.Namespace) -> int:
    handler = {
        "check": _check,
        "validate": _validate,
        "register": _register,
        "download": _download,
        "config": _config,
        "plan": _plan,
        "apply": _apply,
        "exporter": _exporter,
        "compare": _compare,
    }[args.command]
    try:
        return handler(args)
    except ToolError as exc:
        print(f"schema-registry {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except RemoteError as exc:
        print(f"schema-registry {args.command}: registry error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except Exception:
        # a crash must not read as "incompatible" (1) in CI
        traceback.print_exc()
        return EXIT_ERROR


# ---- options ------------------------------------------------------------------------------------


def _selection(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", type=Path, metavar="FILE", help="schema files")
    parser.add_argument(
        "--project",
        type=Path,
        metavar="YAML",
        help="project file listing subjects, files, types, levels, references "
        "(FILE arguments then select among its subjects by file)",
    )
    parser.add_argument("--subject", help="subject of the one FILE (default: named after it)")
    parser.add_argument(
        "--subject-template",
        default="{stem}",
        help="subject named after each file: {stem} (default), e.g. {stem}-value",
    )
    parser.add_argument("--type", help="schema type when not told by the extension")
    parser.add_argument(
        "-I",
        "--include",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="more directories where references are found",
    )


def _connection(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("registry connection")
    group.add_argument("--url", help="registry URL (env SCHEMA_REGISTRY_URL)")
    group.add_argument(
        "--user", metavar="USER:PASSWORD", help="basic auth (env SCHEMA_REGISTRY_USER_INFO)"
    )
    group.add_argument("--token", help="bearer token (env SCHEMA_REGISTRY_TOKEN)")
    group.add_argument("--ca-cert", type=Path, help="CA bundle to verify the server")
    group.add_argument("--cert", type=Path, help="client certificate (PEM)")
    group.add_argument("--key", type=Path, help="client certificate key (PEM)")
    group.add_argument("--insecure", action="store_true", help="do not verify TLS certificates")
    group.add_argument("--timeout", type=float, default=30.0, help="seconds per request")


def _format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=output.FORMATS,
        default="text",
        help="text (default), json, or github (workflow annotations on the lines)",
    )


def _client(args: argparse.Namespace) -> RegistryClient:
    url = args.url or os.environ.get("SCHEMA_REGISTRY_URL")
    if not url:
        raise ToolError("no registry URL: give --url or set SCHEMA_REGISTRY_URL (or --offline)")
    for option in ("ca_cert", "cert", "key"):
        path = getattr(args, option)
        if path is not None and not path.is_file():
            raise ToolError(f"--{option.replace('_', '-')} {path}: no such file")
    return RegistryClient(
        Connection(
            url=url,
            user_info=args.user or os.environ.get("SCHEMA_REGISTRY_USER_INFO"),
            token=args.token or os.environ.get("SCHEMA_REGISTRY_TOKEN"),
            ca_cert=args.ca_cert,
            cert=args.cert,
            key=args.key,
            insecure=args.insecure,
            timeout=args.timeout,
        )
    )


def _specs(args: argparse.Namespace) -> tuple[list[SchemaSpec], Workspace]:
    """The subjects to work on: from the project file (optionally narrowed to FILE
    arguments), or one per FILE named after it."""
    if args.project is not None:
        specs = load_project(args.project)
        declared = declared_references(specs)
        if args.files:
            wanted = {f.resolve() for f in args.files}
            unknown = wanted - {s.file.resolve() for s in specs}
            if unknown:
                names = ", ".join(sorted(str(p) for p in unknown))
                raise ToolError(f"not in {args.project}: {names}")
            specs = [s for s in specs if s.file.resolve() in wanted]
    else:
        if not args.files:
            raise ToolError("give schema FILEs or --project YAML")
        if args.subject and len(args.files) > 1:
            raise ToolError("--subject needs exactly one FILE")
        if "{" not in args.subject_template:
            raise ToolError("--subject-template must contain {stem} or {name}")
        specs = [
            SchemaSpec(
                subject=args.subject or subject_for(f, args.subject_template),
                file=f,
                schema_type=schema_type_of(f, args.type),
            )
            for f in args.files
        ]
        declared = {}
    return specs, Workspace(list(args.include), declared, args.subject_template)


def _levels(values: list[str]) -> tuple[str, dict[str, str]]:
    default = DEFAULT_LEVEL
    per_subject: dict[str, str] = {}
    for value in values:
        subject, _, name = value.rpartition("=")
        level = parse_level(name)
        if level is None:
            raise ToolError(f"--level {value}: unknown level {name!r}")
        if subject:
            per_subject[subject] = level
        else:
            default = level
    return default, per_subject


# ---- handlers -----------------------------------------------------------------------------------


def _exporter(args: argparse.Namespace) -> int:
    with _client(args) as client:
        return exporter_commands.run_exporter(args, client)


def _compare(args: argparse.Namespace) -> int:
    other = argparse.Namespace(
        **{**vars(args), "url": args.to_url, "user": args.to_user, "token": args.to_token}
    )
    with _client(args) as left, _client(other) as right:
        return exporter_commands.run_compare(args, left, right)


def _check(args: argparse.Namespace) -> int:
    specs, ws = _specs(args)
    if args.offline or args.against:
        default, per_subject = _levels(args.level)
        results = check_offline(
            specs,
            ws,
            args.against,
            lambda spec: per_subject.get(spec.subject) or spec.level or default,
        )
    else:
        if args.level:
            raise ToolError("--level applies offline; online the registry's level applies")
        with _client(args) as client:
            results = check_online(specs, ws, client)
    output.write(results, args.format, sys.stdout)
    return output.exit_code(results)


def _validate(args: argparse.Namespace) -> int:
    specs, ws = _specs(args)
    results = validate(specs, ws)
    output.write(results, args.format, sys.stdout)
    return output.exit_code(results)


def _register(args: argparse.Namespace) -> int:
    specs, ws = _specs(args)
    versions: dict[str, int] = {}
    with _client(args) as client:
        for spec, loaded in plan.load_in_order(specs, ws):
            if isinstance(loaded, ToolError):
                raise loaded
            refs = resolve_latest(client, reference_body(loaded.direct, versions))
            try:
                schema_id = client.register(spec.subject, loaded.text, spec.schema_type, refs)
            except RemoteError as exc:
                if exc.status == 409:
                    print(f"INCOMPATIBLE {spec.subject} ({spec.file}): {exc.message}")
                    return EXIT_INCOMPATIBLE
                raise
            found = client.lookup(spec.subject, loaded.text, spec.schema_type, refs)
            version = int(found["version"]) if found else 0
            versions[spec.subject] = version
            print(f"registered {spec.subject} version {version} id {schema_id} ({spec.file})")
    return EXIT_OK


def _download(args: argparse.Namespace) -> int:
    try:
        patterns = [re.compile(p) for p in args.subject_pattern or [".*"]]
    except re.error as exc:
        raise ToolError(f"--subject-pattern: {exc}") from None
    args.output_dir.mkdir(parents=True, exist_ok=True)
    count = 0
    with _client(args) as client:
        for subject in client.subjects():
            if not any(p.fullmatch(subject) for p in patterns):
                continue
            latest = client.latest(subject)
            if latest is None:
                continue
            kind = latest.get("schemaType", "AVRO")
            text = latest["schema"]
            if kind in ("AVRO", "JSON"):
                text = json.dumps(json.loads(text), indent=2) + "\n"
            target = args.output_dir / f"{subject.replace('/', '_')}{SUFFIXES.get(kind, '.txt')}"
            target.write_text(text, encoding="utf-8")
            print(f"{subject} version {latest['version']} -> {target}")
            count += 1
    if count == 0:
        print("no subject matched")
    return EXIT_OK


def _config(args: argparse.Namespace) -> int:
    with _client(args) as client:
        if args.level is None:
            level = client.subject_level(args.subject, default_to_global=True)
            print(f"{args.subject or '(global)'}: {level}")
            return EXIT_OK
        level = parse_level(args.level)
        if level is None:
            raise ToolError(f"--level {args.level}: unknown level")
        client.set_level(args.subject, level)
        print(f"{args.subject or '(global)'}: {level}")
    return EXIT_OK


def _plan(args: argparse.Namespace) -> int:
    specs = load_project(args.project)
    ws = Workspace([], declared_references(specs))
    exporters = plan_exporters.load_exporters(args.project)
    with _client(args) as client:
        actions = plan.make_plan(specs, ws, client)
        for kind, text in plan_exporters.plan_lines(exporters, client):
            actions.append(plan.Action(text.split(":")[0], args.project, kind, text))
        plan.write(actions, args.format, sys.stdout)
    return plan.exit_code(actions)


def _apply(args: argparse.Namespace) -> int:
    specs = load_project(args.project)
    ws = Workspace([], declared_references(specs))
    exporters = plan_exporters.load_exporters(args.project)
    with _client(args) as client:
        code = plan.apply(specs, ws, client, sys.stdout)
        if code == EXIT_OK and exporters:
            changed = plan_exporters.apply_exporters(exporters, client, sys.stdout)
            print(f"{changed} exporter change(s) applied")
        return code
