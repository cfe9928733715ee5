"""The Arrow UDF an encoder's Python engine runs, and the argument Spark can pass to it.

Spark (4.1) fails a Python UDF whose argument is a struct built in the call with aliased fields
in a nested struct (``F.struct(F.struct(F.lit("x").alias("street")).alias("address"))``): the
analyser leaves the inner aliases in place and execution raises ``[INTERNAL_ERROR] Cannot
evaluate expression: street``. Passing the column as a field of a one-field struct lets Spark
resolve those aliases first; for any other column it is the same value.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

__all__ = ["encoder_udf"]


def encoder_udf(encode: Callable[[pa.Array], pa.Array], column: Column) -> Column:
    """``encode`` over ``column`` as a vectorised Arrow UDF giving bytes."""
    argument = F.struct(column.alias("v")).getField("v")
    return F.arrow_udf(encode, T.BinaryType())(argument)
