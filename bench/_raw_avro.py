"""The raw-library baseline of the Avro bench rows: fastavro's schemaless writer and reader on a
parsed schema through BytesIO, with the ``(value, ctx)`` signature of a serde."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any


def raw_avro(parsed: Any) -> tuple[Callable[..., bytes], Callable[..., Any]]:
    """``(raw_ser, raw_de)`` for the fastavro-parsed schema ``parsed``."""
    import fastavro

    def raw_ser(rec: Any, _ctx: Any = None) -> bytes:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, parsed, rec)
        return out.getvalue()

    def raw_de(body: bytes, _ctx: Any = None) -> Any:
        return fastavro.schemaless_reader(io.BytesIO(body), parsed, None)

    return raw_ser, raw_de
