"""Run protoc once in a child process (see ``compiler._run_child``): reads
``{"file": ..., "roots": [...], "max_errors": n}`` as JSON on stdin and writes, as JSON on
stdout, either
``{"descriptors": [base64, ...]}`` (the serialized ``FileDescriptorProto`` of each module
``get_protos`` returns, taken out of the generated Python here, where scanning megabytes of it
holds no server's GIL) or
``{"errors": [[filename, line, column, message], ...], "first": ..., "total": n}`` (the first
``max_errors`` of protoc's errors, the first one placed in the schema, the count). Imports only
grpc_tools, so the child starts quickly."""

from __future__ import annotations

import ast
import base64
import json
import os
import re
import sys
from typing import Any

from grpc_tools import _protoc_compiler

# possessive runs: the literal of a large file is scanned in C a run at a time, not a character
# at a time through an alternation
_SERIALIZED = re.compile(rb"AddSerializedFile\((b'(?:[^'\\]++|\\.)*+')\)", re.DOTALL)


def descriptor_bytes(code: bytes) -> bytes | None:
    """The serialized ``FileDescriptorProto`` protoc's Python generator embeds in ``code``."""
    match = _SERIALIZED.search(code)
    if match is None:  # pragma: no cover - protoc's Python generator always embeds it
        return None
    serialized: bytes = ast.literal_eval(match[1].decode("latin-1"))
    return serialized


def _error(error: Any) -> list[Any]:
    return [
        error.filename.decode("latin-1"),
        error.line,
        error.column,
        error.message.decode("latin-1"),
    ]


def main() -> None:
    request = json.load(sys.stdin)
    roots = [os.fsencode(root) for root in request["roots"]]
    try:
        modules = _protoc_compiler.get_protos(os.fsencode(request["file"]), roots)
    except _protoc_compiler.ProtocErrors as exc:
        errors = exc.errors()
        # a hostile text can have one error per byte: send the ones quoted, and the first with a
        # position in the schema itself (what a repair looks at), and how many there were
        first = next(
            (e for e in errors if e.filename == os.fsencode(request["file"]) and e.line >= 0),
            None,
        )
        answer = {
            "errors": [_error(error) for error in errors[: request["max_errors"]]],
            "first": None if first is None else _error(first),
            "total": len(errors),
        }
        json.dump(answer, sys.stdout)
        return
    found = [descriptor_bytes(code) for _, code in modules]
    encoded = [None if d is None else base64.b64encode(d).decode("ascii") for d in found]
    json.dump({"descriptors": encoded}, sys.stdout)


if __name__ == "__main__":
    main()
