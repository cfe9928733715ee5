"""Run protoc once in a child process (see ``compiler._run_child``): reads
``{"file": ..., "roots": [...], "max_errors": n}`` as JSON on stdin and writes, as JSON on
stdout, either
``{"modules": [[name, code], ...]}`` (what ``get_protos`` returns, bytes as latin-1 text) or
``{"errors": [[filename, line, column, message], ...], "first": ..., "total": n}`` (the first
``max_errors`` of protoc's errors, the first one placed in the schema, the count). Imports only
grpc_tools, so the child starts quickly."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from grpc_tools import _protoc_compiler


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
    found = [[name.decode("latin-1"), code.decode("latin-1")] for name, code in modules]
    json.dump({"modules": found}, sys.stdout)


if __name__ == "__main__":
    main()
