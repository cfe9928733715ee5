"""Arrow batches as Python values, for the Python engine's encoders (Avro, JSON Schema,
Protobuf): the raw Arrow type of a column, its rows as plain Python values, and its Spark type.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pyarrow as pa
from pyspark.sql import types as T

__all__ = ["arrow_to_pylist", "raw_arrow", "spark_type_of"]


def raw_arrow(data_type: pa.DataType) -> pa.DataType:
    """``data_type`` with timestamps as int64 (micros), dates as int32 (days), all nullable.

    (Spark marks non-nullable children, but a null parent's children are null in Arrow.)
    """
    if pa.types.is_timestamp(data_type):
        return pa.int64()
    if pa.types.is_date32(data_type):
        return pa.int32()
    if pa.types.is_struct(data_type):
        return pa.struct([pa.field(f.name, raw_arrow(f.type)) for f in data_type])
    if pa.types.is_map(data_type):
        return pa.map_(data_type.key_type, pa.field("value", raw_arrow(data_type.item_type)))
    if pa.types.is_list(data_type):
        return pa.list_(pa.field("element", raw_arrow(data_type.value_type)))
    if pa.types.is_large_list(data_type):
        return pa.large_list(pa.field("element", raw_arrow(data_type.value_type)))
    return data_type


def arrow_to_pylist(array: pa.Array) -> list[Any]:
    """``array.to_pylist()``, built column by column (several times faster for structs).

    pyarrow makes a scalar object per nested value; here every leaf column is converted in one
    call and the rows are zipped together: structs as dicts, lists as lists, maps as lists of
    ``(key, value)`` pairs, nulls as None, exactly as ``to_pylist`` gives them.
    """
    kind = array.type
    if pa.types.is_struct(kind):
        names = [f.name for f in kind]
        children = [arrow_to_pylist(child) for child in array.flatten()]
        rows: list[Any] = [
            dict(zip(names, values, strict=True)) for values in zip(*children, strict=True)
        ]
        if not names:
            rows = [{} for _ in range(len(array))]
    elif pa.types.is_map(kind):
        offsets = array.offsets.to_pylist()
        base = offsets[0]
        size = offsets[-1] - base
        keys = arrow_to_pylist(array.keys.slice(base, size))  # .keys/.items are not sliced
        items = arrow_to_pylist(array.items.slice(base, size))
        rows = [
            list(zip(keys[a - base : b - base], items[a - base : b - base], strict=True))
            for a, b in pairwise(offsets)
        ]
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
        values = arrow_to_pylist(array.flatten())
        offsets = array.offsets.to_pylist()
        base = offsets[0]
        rows = [values[a - base : b - base] for a, b in pairwise(offsets)]
    else:
        return array.to_pylist()
    if array.null_count:
        for i, valid in enumerate(array.is_valid().to_pylist()):
            if not valid:
                rows[i] = None
    return rows


def spark_type_of(data_type: pa.DataType) -> T.DataType:
    """The Spark type of an Arrow UDF's input (timestamps without a zone are ``timestamp_ntz``)."""
    from pyspark.sql.pandas.types import from_arrow_type

    return from_arrow_type(data_type, prefer_timestamp_ntz=True)
