"""``schema-registry exporter ...`` (as the Confluent CLI's ``confluent schema-registry
exporter``) and ``schema-registry compare`` (are two registries, or two contexts, identical?).

Exit codes as the other commands: 0 success (``compare``: identical), 1 ``compare`` found
differences, 2 usage, input or registry error.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from registry.cli_tools.errors import EXIT_INCOMPATIBLE, EXIT_OK, ToolError
from registry.cli_tools.remote import RegistryClient, RemoteError
from registry.subjects import DEFAULT_CONTEXT, parse_subject

ACTIONS = ("create", "update", "list", "describe", "status", "pause", "resume", "reset", "delete")


def _name(name: str) -> str:
    return quote(name, safe="")


def add_exporter_command(commands: Any, connection: Any) -> None:
    """``exporter`` and its sub-commands; ``connection`` adds the registry options."""
    exporter = commands.add_parser("exporter", help="manage schema exporters (Schema Linking)")
    actions = exporter.add_subparsers(dest="exporter_command", required=True)
    for action in ACTIONS:
        sub = actions.add_parser(action, help=f"{action} schema exporter(s)")
        if action != "list":
            sub.add_argument("name", help="exporter name")
        if action in ("create", "update"):
            sub.add_argument(
                "--config",
                action="append",
                default=[],
                metavar="KEY=VALUE|FILE",
                help="destination config: key=value pairs (comma separated) or a file of "
                "key=value lines; schema.registry.url is required on create",
            )
            default = None if action == "update" else "*"
            sub.add_argument(
                "--subjects", default=default, help="comma-separated subjects or patterns (*)"
            )
            sub.add_argument(
                "--subject-format",
                default=None if action == "update" else "${subject}",
                help="subject rename format (${subject})",
            )
            sub.add_argument(
                "--context-type",
                default=None if action == "update" else "AUTO",
                type=str.upper,
                choices=("AUTO", "CUSTOM", "NONE"),
            )
            sub.add_argument("--context-name", help="destination context of CUSTOM")
        sub.add_argument("--format", choices=("text", "json"), default="text")
        connection(sub)

    compare = commands.add_parser(
        "compare",
        help="compare two registries: subjects, versions, ids, schemas, configs and modes "
        "(exit 0 identical, 1 different)",
    )
    connection(compare)
    compare.add_argument("--to-url", required=True, help="the other registry's URL")
    compare.add_argument("--to-user", metavar="USER:PASSWORD", help="its basic auth")
    compare.add_argument("--to-token", help="its bearer token")
    compare.add_argument("--context", default=DEFAULT_CONTEXT, help="context compared (.)")
    compare.add_argument("--to-context", help="context on the other registry (default: --context)")
    compare.add_argument(
        "--subjects", default="*", help="comma-separated subject names or globs compared (*)"
    )
    compare.add_argument(
        "--ignore-modes",
        action="store_true",
        help="leave subject modes out (an exporter's copies are in IMPORT until the cutover)",
    )
    compare.add_argument("--format", choices=("text", "json"), default="text")


def _config(values: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        path = Path(value)
        if "=" not in value and path.is_file():
            lines = path.read_text().splitlines()
        else:
            lines = value.split(",")
        for line in lines:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, sep, val = line.partition("=")
            if not sep:
                raise ToolError(f"--config {line!r}: expected key=value")
            out[key.strip()] = val.strip()
    return out


def run_exporter(args: argparse.Namespace, client: RegistryClient) -> int:
    action = args.exporter_command
    if action == "list":
        result: Any = client.call("GET", "/exporters")
    elif action in ("describe", "status"):
        suffix = "/status" if action == "status" else ""
        result = client.call("GET", f"/exporters/{_name(args.name)}{suffix}")
    elif action in ("pause", "resume", "reset"):
        result = client.call("PUT", f"/exporters/{_name(args.name)}/{action}")
    elif action == "delete":
        client.call("DELETE", f"/exporters/{_name(args.name)}")
        result = {"name": args.name, "deleted": True}
    else:
        body: dict[str, Any] = {}
        if action == "create":
            body["name"] = args.name
        config = _config(args.config)
        if config or action == "create":
            body["config"] = config
        if args.subjects is not None:
            body["subjects"] = [s.strip() for s in args.subjects.split(",") if s.strip()]
        if args.subject_format is not None:
            body["subjectRenameFormat"] = args.subject_format
        if args.context_type is not None:
            body["contextType"] = args.context_type
        if args.context_name is not None:
            body["context"] = args.context_name
        if action == "create":
            result = client.call("POST", "/exporters", body)
        else:
            result = client.call("PUT", f"/exporters/{_name(args.name)}", body)
    _show(result, args.format)
    return EXIT_OK


def _show(result: Any, fmt: str) -> None:
    if fmt == "json":
        print(json.dumps(result, indent=2, sort_keys=True))
    elif isinstance(result, list):
        for item in result:
            print(item)
    elif isinstance(result, dict):
        width = max((len(k) for k in result), default=0)
        for key, value in result.items():
            shown = value if isinstance(value, str) else json.dumps(value)
            print(f"{key.ljust(width)}  {shown}")


# ---- compare --------------------------------------------------------------------------------


def snapshot(
    client: RegistryClient, context: str, *, modes: bool, patterns: tuple[str, ...] = ("*",)
) -> dict[str, Any]:
    """Every subject of ``context`` (by its name without the context): its versions (soft-
    deleted ones too) with id, type, text and references, its own config, and its own mode."""
    context = context if context.startswith(".") else "." + context
    prefix = "" if context == DEFAULT_CONTEXT else f":{context}:"
    subjects = client.call(
        "GET", "/subjects", params={"deleted": "true", "subjectPrefix": prefix or ":.:"}
    )
    out: dict[str, Any] = {}
    for subject in subjects:
        qs = parse_subject(subject)
        if qs.context != context or not qs.name:
            continue
        if not any(fnmatch.fnmatchcase(qs.name, p) for p in patterns):
            continue
        seg = quote(subject, safe="")
        versions: dict[str, Any] = {}
        listed = client.call("GET", f"/subjects/{seg}/versions", None, {"deleted": "true"})
        for version in listed:
            got = client.call(
                "GET", f"/subjects/{seg}/versions/{version}", None, {"deleted": "true"}
            )
            versions[str(version)] = {
                "id": got.get("id"),
                "schemaType": got.get("schemaType", "AVRO"),
                "schema": got.get("schema"),
                "references": got.get("references") or [],
            }
        live = _optional(client, f"/subjects/{seg}/versions") or []
        entry: dict[str, Any] = {"versions": versions, "live": live}
        entry["config"] = _optional(client, f"/config/{seg}")
        if modes:
            entry["mode"] = _optional(client, f"/mode/{seg}")
        out[qs.name] = entry
    return out


def _optional(client: RegistryClient, path: str) -> Any:
    try:
        return client.call("GET", path)
    except RemoteError as exc:
        if exc.status == 404:
            return None
        raise


def differences(left: dict[str, Any], right: dict[str, Any]) -> list[str]:
    """What differs between two :func:`snapshot` results, one line each."""
    out: list[str] = []
    for subject in sorted(set(left) | set(right)):
        a, b = left.get(subject), right.get(subject)
        if a is None or b is None:
            out.append(f"{subject}: only in the {'first' if b is None else 'second'} registry")
            continue
        for version in sorted(set(a["versions"]) | set(b["versions"]), key=int):
            va, vb = a["versions"].get(version), b["versions"].get(version)
            if va is None or vb is None:
                where = "first" if vb is None else "second"
                out.append(f"{subject} version {version}: only in the {where} registry")
            elif va != vb:
                fields = sorted(k for k in va if va[k] != vb.get(k))
                out.append(f"{subject} version {version}: {', '.join(fields)} differ")
        if a["live"] != b["live"]:
            out.append(f"{subject}: live versions {a['live']} and {b['live']}")
        for part in ("config", "mode"):
            if part in a and a[part] != b.get(part):
                out.append(f"{subject}: {part} {a[part]} and {b.get(part)}")
    return out


def run_compare(args: argparse.Namespace, left: RegistryClient, right: RegistryClient) -> int:
    modes = not args.ignore_modes
    patterns = tuple(p.strip() for p in args.subjects.split(",") if p.strip()) or ("*",)
    first = snapshot(left, args.context, modes=modes, patterns=patterns)
    second = snapshot(right, args.to_context or args.context, modes=modes, patterns=patterns)
    found = differences(first, second)
    versions = sum(len(s["versions"]) for s in first.values())
    if args.format == "json":
        print(json.dumps({"identical": not found, "differences": found}, indent=2))
    else:
        for line in found:
            print(line)
        verdict = "identical" if not found else f"{len(found)} difference(s)"
        print(f"{len(first)} subjects, {versions} versions compared: {verdict}")
    return EXIT_OK if not found else EXIT_INCOMPATIBLE
