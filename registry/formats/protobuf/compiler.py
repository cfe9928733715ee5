"""Compile ``.proto`` text with the real protobuf compiler (protoc bundled in grpcio-tools).

protoc runs in-process through ``grpc_tools._protoc_compiler.get_protos``, which reports errors
as exceptions (nothing is printed) and returns, for the schema and every file it imports, the
Python module protoc generated; each module embeds its file's serialized
``FileDescriptorProto``, which is all we keep. The schema and its dependencies are written to a
fresh temporary directory (protoc reads from disk); the well-known types
(``google/protobuf/*.proto``, shipped with grpcio-tools), ``google/type/*.proto`` (shipped with
googleapis-common-protos) and Confluent's ``confluent/meta.proto`` and
``confluent/type/decimal.proto`` (shipped in this package) resolve without references.
"""

from __future__ import annotations

import atexit
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2
from grpc_tools import _protoc_compiler

from registry import budget
from registry.formats.base import Dependency, InvalidSchemaError
from registry.formats.protobuf.protoc_child import descriptor_bytes
from registry.formats.protobuf.repair import Repairs, import_stub, missing_imports, repair

#: the file name the schema itself is compiled under (never shown: errors drop it)
MAIN_FILE = "__registry_schema__.proto"
#: ``google/type`` files Confluent resolves without references
GOOGLE_TYPES = (
    "calendar_period",
    "color",
    "date",
    "datetime",
    "dayofweek",
    "decimal",
    "expr",
    "fraction",
    "interval",
    "latlng",
    "money",
    "month",
    "phone_number",
    "postal_address",
    "quaternion",
    "timeofday",
)
#: how many refused texts are repaired and compiled again (see ``repair``) before giving up
MAX_REPAIRS = 32
_PACKAGE = re.compile(r"package\s+([\w.]+)\s*;")
_LOCK = threading.Lock()
#: texts of at least this many bytes are compiled in a child process (setting
#: ``protoc_subprocess_bytes``, see :func:`configure`); 0: every text in-process
subprocess_bytes = 64 * 1024
#: seconds between two looks at the request's allowance while a child compiles
_POLL = 0.02
_CHILD = Path(__file__).with_name("protoc_child.py")
_CACHE_LOCK = threading.Lock()
#: texts of at least this many bytes are compiled in a child process (setting
#: ``protoc_subprocess_bytes``, see :func:`configure`); 0: every text in-process
subprocess_bytes = 64 * 1024
#: seconds between two looks at the request's allowance while a child compiles
_POLL = 0.02
_CHILD = Path(__file__).with_name("protoc_child.py")
_include_roots: list[bytes] | None = None
_cache_root: Path | None = None
_dep_roots: dict[str, bytes] = {}


@dataclass(frozen=True)
class Compiled:
    """The schema's descriptor and every file it depends on (dependencies first)."""

    main: descriptor_pb2.FileDescriptorProto
    files: tuple[descriptor_pb2.FileDescriptorProto, ...]
    #: custom options left out of the descriptors (see ``repair``): printed as written
    unresolved: frozenset[str] = frozenset()


def _builtin_roots() -> list[bytes]:
    """Include directories for files that resolve without references (built once)."""
    global _include_roots
    if _include_roots is None:
        import grpc_tools

        roots = [
            Path(__file__).parent / "proto",
            Path(grpc_tools.__file__).parent / "_proto",
        ]
        try:
            import google.type as google_type

            source = Path(next(iter(google_type.__path__)))
            target = Path(tempfile.mkdtemp(prefix="registry-google-types-"))
            atexit.register(shutil.rmtree, target, True)
            (target / "google" / "type").mkdir(parents=True)
            for name in GOOGLE_TYPES:
                if (source / f"{name}.proto").exists():
                    shutil.copy(source / f"{name}.proto", target / "google" / "type")
            roots.append(target)
        except ImportError:  # googleapis-common-protos missing: google/type needs references
            pass
        _include_roots = [os.fsencode(root) for root in roots]
    return _include_roots


def _safe_path(name: str) -> bool:
    parts = name.split("/")
    return (
        bool(name)
        and not name.startswith("/")
        and "\\" not in name
        and "\x00" not in name
        and all(part not in ("", ".", "..") for part in parts)
    )


#: protoc errors quoted in an invalid-schema message (a hostile file can produce one per byte)
MAX_ERRORS = 20


def _error_text(exc: Exception) -> str:
    lines = []
    errors = exc.errors()  # type: ignore[attr-defined]
    for error in errors[:MAX_ERRORS]:
        filename = os.fsdecode(error.filename)
        message = error.message.decode("utf-8", "replace")
        where = f"{error.line + 1}:{error.column + 1}" if error.line >= 0 else ""
        if filename == MAIN_FILE:
            lines.append(f"{where}: {message}" if where else message)
        else:
            lines.append(f"{filename}:{where}: {message}" if where else f"{filename}: {message}")
    total = exc.total if isinstance(exc, ChildProtocErrors) else len(errors)
    if total > MAX_ERRORS:
        lines.append(f"... and {total - MAX_ERRORS} more errors")
    return "; ".join(lines) or str(exc)


_SYNTAX = re.compile(r"^\s*(?:syntax|edition)\s*=", re.MULTILINE)
# an unterminated comment runs to the end (``\Z``): every match succeeds, so the scan is linear
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?(?:\*/|\Z)", re.DOTALL)


def _with_syntax(text: str) -> str:
    """Declare proto2 (protoc's default) on the first line of a file that declares no syntax,
    so that protoc does not log a warning to stderr; line numbers stay the same."""
    if _SYNTAX.search(_COMMENTS.sub(" ", text)):
        return text
    return 'syntax = "proto2"; ' + text


def _dependency_root(dep: Dependency) -> bytes:
    """An include directory holding just ``dep`` at its import path, written once per process
    (dependencies are registered schemas: the same few texts are imported again and again)."""
    global _cache_root
    key = hashlib.sha256(f"{dep.name}\0{dep.schema}".encode()).hexdigest()
    with _CACHE_LOCK:
        cached = _dep_roots.get(key)
        if cached is not None:
            return cached
        if _cache_root is None:
            _cache_root = Path(tempfile.mkdtemp(prefix="registry-proto-deps-"))
            atexit.register(shutil.rmtree, _cache_root, True)
        root = _cache_root / key
        path = root / dep.name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_with_syntax(dep.schema), encoding="utf-8")
        _dep_roots[key] = os.fsencode(root)
        return _dep_roots[key]


def _bundled(name: str) -> bool:
    """Whether ``name`` resolves without a reference (well-known and Confluent types)."""
    return _safe_path(name) and any(
        (Path(os.fsdecode(root)) / name).is_file() for root in _builtin_roots()
    )


def _first_error(exc: Exception) -> tuple[int, int, str] | None:
    if isinstance(exc, ChildProtocErrors):
        first = exc.first
        if first is None:
            return None
        return first.line + 1, first.column + 1, first.message.decode("utf-8", "replace")
    for error in exc.errors():  # type: ignore[attr-defined]
        if os.fsdecode(error.filename) == MAIN_FILE and error.line >= 0:
            return error.line + 1, error.column + 1, error.message.decode("utf-8", "replace")
    return None


def configure(protoc_subprocess_bytes: int) -> None:
    """Set the size from which texts are compiled in a child process (the server's setting)."""
    global subprocess_bytes
    subprocess_bytes = protoc_subprocess_bytes


@dataclass(frozen=True)
class _ChildError:
    """One protoc error reported by the child (shaped like ``_protoc_compiler``'s)."""

    filename: bytes
    line: int
    column: int
    message: bytes


class ChildProtocErrors(Exception):
    """protoc refused the text in the child process: the errors quoted (the first
    ``MAX_ERRORS``), the first placed in the schema itself, and how many there were."""

    def __init__(self, errors: list[_ChildError], first: _ChildError | None, total: int) -> None:
        super().__init__("protoc errors")
        self._errors = errors
        self.first = first
        self.total = total

    def errors(self) -> list[_ChildError]:
        return self._errors


def _child_error(error: list[Any]) -> _ChildError:
    name, line, column, message = error
    return _ChildError(name.encode("latin-1"), line, column, message.encode("latin-1"))


def _run_child(roots: list[bytes]) -> list[bytes | None]:
    """Compile in a child process, killed as soon as the request's allowance runs out or its
    client goes away (protoc in-process holds the GIL and cannot be interrupted)."""
    request = json.dumps(
        {
            "file": MAIN_FILE,
            "roots": [os.fsdecode(root) for root in roots],
            "max_errors": MAX_ERRORS,
        }
    )
    allowance = budget.current()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(
            [sys.executable, str(_CHILD)], stdin=subprocess.PIPE, stdout=out, stderr=err
        )
        try:
            assert child.stdin is not None
            child.stdin.write(request.encode())
            child.stdin.close()
            while True:
                try:
                    child.wait(_POLL)
                    break
                except subprocess.TimeoutExpired:
                    if allowance is not None:
                        allowance.check()
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        out.seek(0)
        raw = out.read()
        if child.returncode != 0 or not raw:
            err.seek(0)
            detail = err.read().decode("utf-8", "replace").strip().splitlines()[-1:]
            raise InvalidSchemaError(f"protoc failed: {' '.join(detail) or child.returncode}")
    answer = json.loads(raw)
    if "errors" in answer:
        first = answer["first"]
        raise ChildProtocErrors(
            [_child_error(error) for error in answer["errors"]],
            None if first is None else _child_error(first),
            answer["total"],
        )
    return [None if d is None else base64.b64decode(d) for d in answer["descriptors"]]


def _run(text: str, roots: list[bytes], extra: dict[str, str]) -> list[bytes | None]:
    """The serialized descriptor of each file protoc compiled (the schema's last)."""
    with tempfile.TemporaryDirectory(prefix="registry-proto-") as tmp:
        (Path(tmp) / MAIN_FILE).write_text(_with_syntax(text), encoding="utf-8")
        for name, content in extra.items():
            path = Path(tmp) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        if 0 < subprocess_bytes <= len(text.encode("utf-8")):
            return _run_child([os.fsencode(tmp), *roots])
        with _LOCK:
            modules = _protoc_compiler.get_protos(MAIN_FILE.encode(), [os.fsencode(tmp), *roots])
        return [descriptor_bytes(code) for _, code in modules]


def _package(code: str) -> str:
    """The package the first ``package`` statement at the start of a line declares (found with
    ``str.find``: a multi-line ``^`` regex tried every position of a large text holding the
    GIL)."""
    at = code.find("package")
    while at >= 0:
        start = at  # back over the whitespace before it (runs are disjoint: linear in all)
        while start > 0 and code[start - 1].isspace():
            start -= 1
        if start == 0 or "\n" in code[start:at]:
            match = _PACKAGE.match(code, at)
            if match is not None:
                return match[1]
        at = code.find("package", at + 1)
    return ""


def compile_proto(text: str, dependencies: Sequence[Dependency]) -> Compiled:
    """Compile ``text`` (imports resolve through ``dependencies`` by import path). A text
    protoc refuses but Confluent accepts is compiled after a repair (``repair``), undone on the
    schema's descriptor."""
    for dep in dependencies:
        if not _safe_path(dep.name) or dep.name == MAIN_FILE:
            raise InvalidSchemaError(f"Invalid reference name '{dep.name}' for an import")
    roots = [*(_dependency_root(dep) for dep in dependencies), *_builtin_roots()]
    names = [dep.name for dep in dependencies]
    repairs = Repairs()
    for name in missing_imports(text, names, _bundled):
        if _safe_path(name) and name != MAIN_FILE:
            # Confluent resolves types from every reference, whatever the import is called
            repairs.files[name] = import_stub(names)
    package = _package(_COMMENTS.sub(" ", text))
    current = text
    for _ in range(MAX_REPAIRS + 1):
        try:
            descriptors = _run(current, roots, repairs.files)
            break
        except (_protoc_compiler.ProtocErrors, ChildProtocErrors) as exc:
            error = _first_error(exc)
            fixed = repair(current, error, package, repairs) if error is not None else None
            if fixed is None:
                raise InvalidSchemaError(_error_text(exc)) from None
            current = fixed
    else:  # pragma: no cover - MAX_REPAIRS repairs that each lead to another refusal
        raise InvalidSchemaError("Too many errors in schema")
    files = []
    for serialized in descriptors:
        if serialized is None:  # pragma: no cover - protoc's Python generator always embeds it
            raise InvalidSchemaError("protoc produced no descriptor")
        files.append(descriptor_pb2.FileDescriptorProto.FromString(serialized))
    repairs.undo(files[-1])
    return Compiled(main=files[-1], files=tuple(files), unresolved=frozenset(repairs.unresolved))
