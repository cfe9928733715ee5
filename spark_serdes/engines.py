"""Which native engines a Spark session can run: asked of Spark's own analyzer, once per session.

Spark 4 ships ``from_avro`` (``org.apache.spark.sql.avro.functions``) in its SQL jar whether or
not the ``spark-avro`` data source is loaded; without it the analyzer refuses the function
(``AVRO_NOT_LOADED_SQL_FUNCTIONS_UNUSABLE``). So the probe is what the native engine needs: the
analyzed schema of ``from_avro`` on an empty relation. It asks the session it is given, classic
(a local JVM) or Spark Connect (the server's classpath: no JVM on the client), and runs no job.
"""

from __future__ import annotations

import threading
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

__all__ = ["is_connect", "native_avro_available", "session_or_active"]

_ANSWERS: dict[tuple[str, str], bool] = {}
_LOCK = threading.Lock()


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session (``SparkSession.builder.remote(...)``)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def session_or_active(spark: Any = None) -> Any:
    """``spark``, else the active session (classic or Connect), else ``None``."""
    if spark is not None:
        return spark
    try:
        return SparkSession.getActiveSession()
    except Exception:  # no session of the kind this process is in
        return None


def _session_key(spark: Any) -> str:
    if is_connect(spark):
        return f"connect:{spark.session_id}"
    return f"classic:{spark._jsparkSession.hashCode()}:{id(spark)}"


def _analyzes(spark: Any, probe: str) -> bool:
    key = (_session_key(spark), probe)
    answer = _ANSWERS.get(key)
    if answer is None:
        with _LOCK:
            answer = _ANSWERS.get(key)
            if answer is None:
                answer = _try_analyze(spark, probe)
                _ANSWERS[key] = answer
    return answer


def _try_analyze(spark: Any, probe: str) -> bool:
    try:
        if probe == "avro":
            from pyspark.sql.avro.functions import from_avro

            column = from_avro(F.lit(b"\x02"), '"int"')
        else:  # pragma: no cover - one probe per engine
            raise ValueError(probe)
        # classic analyzes at select(), Connect when the schema is asked for: neither runs a job
        return len(spark.range(0).select(column.alias("probe")).schema.fields) == 1
    except Exception:
        return False


def native_avro_available(spark: Any = None) -> bool:
    """Whether Spark's ``from_avro`` / ``to_avro`` can run in ``spark`` (default: the active
    session): the ``spark-avro`` data source loaded in the session (classic) or on the server
    (Spark Connect)."""
    session = session_or_active(spark)
    return session is not None and _analyzes(session, "avro")
