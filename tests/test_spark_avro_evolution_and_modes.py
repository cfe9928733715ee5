"""Many writer schemas in one column, registry requests per process, FAILFAST and PERMISSIVE."""

from __future__ import annotations

import json
import re

import pytest
from pyspark.sql import functions as F
from pyspark.sql.avro.functions import from_avro

from spark_serdes import from_confluent_avro
from tests.fixtures.spark import CountingProxy, framed, register

V1 = {
    "type": "record", "name": "User", "namespace": "evo",
    "fields": [{"name": "id", "type": "int"}, {"name": "name", "type": "string"}],
}  # fmt: skip
V2 = {
    "type": "record", "name": "User", "namespace": "evo",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "email", "type": ["null", "string"], "default": None},
    ],
}  # fmt: skip
# Registered under another subject only: the driver does not know its id.
V_OTHER = {
    "type": "record", "name": "User", "namespace": "evo",
    "fields": [
        {"name": "id", "type": "int"},
        {"name": "name", "type": "string"},
        {"name": "email", "type": ["null", "string"], "default": None},
        {"name": "note", "type": "string", "default": ""},
    ],
}  # fmt: skip
ROWS = 3000


@pytest.fixture(scope="module")
def evolved(spark, spark_registry):  # type: ignore[no-untyped-def]
    url = spark_registry.url
    id1 = register(url, "evo-value", V1)
    id2 = register(url, "evo-value", V2)
    id3 = register(url, "evo-other-value", V_OTHER)
    values = []
    for n in range(ROWS):
        if n % 3 == 0:
            values += framed(id1, V1, [{"id": n, "name": f"u{n}"}])
        elif n % 3 == 1:
            values += framed(id2, V2, [{"id": n, "name": f"u{n}", "email": f"{n}@x"}])
        else:
            values += framed(id3, V_OTHER, [{"id": n, "name": f"u{n}", "email": None, "note": "x"}])
    df = spark.createDataFrame([(v, n) for n, v in enumerate(values)], "value binary, n int")
    return df.repartition(4, "n").cache(), (id1, id2, id3)


def _expected(df, ids):  # type: ignore[no-untyped-def]
    """Spark's own from_avro per writer id, each resolved to the latest schema (V2)."""
    writers = dict(zip(ids, (V1, V2, V_OTHER), strict=True))
    payload = F.expr("substring(value, 6)")
    prefix = F.expr("substring(value, 1, 5)")
    out = None
    for schema_id, writer in writers.items():
        col = from_avro(payload, json.dumps(writer), {"avroSchema": json.dumps(V2)})
        hit = prefix == F.lit(b"\x00" + schema_id.to_bytes(4, "big"))
        out = F.when(hit, col) if out is None else out.when(hit, col)
    return df.select("n", out.alias("v"))


def _plan(df) -> str:  # type: ignore[no-untyped-def]
    return str(df._jdf.queryExecution().executedPlan().toString())


@pytest.mark.parametrize(
    "options", [{"engine": "python"}, {"engine": "native", "unknownIds": "python"}]
)
def test_each_record_decodes_with_its_writer_schema_and_one_request_per_id_per_process(
    evolved, spark_registry, options
) -> None:  # type: ignore[no-untyped-def]
    df, ids = evolved
    proxy = CountingProxy(spark_registry.url)
    try:
        decoded = df.select(
            "n",
            from_confluent_avro("value", proxy.url, subject="evo-value", options=options).alias(
                "v"
            ),
        )
        assert "ArrowEvalPython" in _plan(decoded)
        expected = _expected(df, ids)
        assert decoded.schema == expected.schema
        got = sorted(decoded.collect())
        assert got == sorted(expected.collect())
        assert len(got) == ROWS
        assert got[2].v.asDict() == {"id": 2, "name": "u2", "email": None}
        assert got[4].v.asDict() == {"id": 4, "name": "u4", "email": "4@x"}
    finally:
        proxy.close()
    by_id = {
        int(m.group(1)): count
        for path, count in proxy.counts.items()
        if (m := re.fullmatch(r"GET /schemas/ids/(\d+)", path))
    }
    # The subject's own ids come with the plan (no executor request); the foreign id is
    # fetched at most once per Python worker process (local[2]: at most two), not per row.
    assert ids[0] not in by_id and ids[1] not in by_id
    assert 1 <= by_id.get(ids[2], 0) <= 2, proxy.counts


def test_native_failfast_plan_is_jvm_only_and_an_id_it_does_not_cover_fails_naming_it(
    evolved, spark_registry
) -> None:  # type: ignore[no-untyped-def]
    """FAILFAST's default (unknownIds "error"): no Python UDF in the plan; the subject's ids
    decode as Spark's from_avro does; another id fails the query saying which and what to do."""
    df, ids = evolved
    proxy = CountingProxy(spark_registry.url)
    try:

        def decode(frame):  # type: ignore[no-untyped-def]
            return frame.select(
                "n",
                from_confluent_avro(
                    "value", proxy.url, subject="evo-value", options={"engine": "native"}
                ).alias("v"),
            )

        own = df.where(~F.expr("substring(value, 1, 5)").eqNullSafe(_frame(ids[2])))
        decoded = decode(own)
        assert "ArrowEvalPython" not in _plan(decoded) and "from_avro" in _plan(decoded)
        expected = _expected(own, ids)
        assert decoded.schema == expected.schema
        got = sorted(decoded.collect())
        assert len(got) == 2 * ROWS // 3 and got == sorted(expected.collect())
        with pytest.raises(Exception) as failure:
            decode(df).collect()
    finally:
        proxy.close()
    message = str(failure.value)
    assert (
        f"schema id {ids[2]} is not one of the Avro schema ids subject 'evo-value' had when the "
        f"query was planned ({ids[0]}, {ids[1]}): restart the query" in message
    ), message
    assert not any(p.startswith("GET /schemas/ids/") for p in proxy.counts), proxy.counts


def _frame(schema_id: int) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big")


def _bad_rows(spark, good_id: int):  # type: ignore[no-untyped-def]
    good = framed(good_id, V2, [{"id": 1, "name": "ok", "email": None}])[0]
    rows = [
        (0, good),
        (1, b"\x07\x00\x00\x00\x01abc"),  # unknown magic byte
        (2, b"\x00\x00"),  # truncated frame
        (3, b"\x00" + (987654).to_bytes(4, "big") + b"\x02"),  # unknown schema id
        (4, b"\x00" + good_id.to_bytes(4, "big") + b"\xff\xff\xff\xff\xff\xff"),  # bad Avro
        (5, None),  # tombstone
    ]
    return spark.createDataFrame(rows, "n int, value binary")


@pytest.mark.parametrize(
    "options",
    [{"engine": "python"}, {"engine": "native"}, {"engine": "native", "unknownIds": "error"}],
)
def test_permissive_gives_null_and_the_reason(evolved, spark, spark_registry, options) -> None:  # type: ignore[no-untyped-def]
    _, ids = evolved
    df = _bad_rows(spark, ids[1])
    out = df.select(
        "n",
        from_confluent_avro(
            "value",
            spark_registry.url,
            subject="evo-value",
            options={"mode": "PERMISSIVE", "errorField": "error", **options},
        ).alias("d"),
    )
    # PERMISSIVE's default for ids the plan does not cover is the Python engine
    assert ("ArrowEvalPython" in _plan(out)) == (options.get("unknownIds") != "error")
    rows = {r.n: r.d for r in out.collect()}
    assert rows[0].value.asDict() == {"id": 1, "name": "ok", "email": None}
    assert rows[0].error is None
    assert all(rows[n].value is None for n in range(1, 6))
    assert rows[5].error is None
    assert "magic byte 7" in rows[1].error
    assert "truncated" in rows[2].error
    if options.get("unknownIds") == "error":  # not looked up: the plan's ids are all it knows
        assert "schema id 987654 is not one of the Avro schema ids" in rows[3].error
    else:
        assert "schema id 987654" in rows[3].error and "not found" in rows[3].error
    assert f"schema id {ids[1]}" in rows[4].error and "Avro" in rows[4].error
    # PERMISSIVE makes every field nullable, as Spark's from_avro does
    value_type = out.schema["d"].dataType["value"].dataType
    assert all(field.nullable for field in value_type.fields), value_type


@pytest.mark.parametrize(
    ("n", "message"),
    [(1, "magic byte 7"), (3, "schema id 987654"), (4, "payload does not decode as Avro")],
)
def test_failfast_names_the_schema_id_and_reason(
    evolved, spark, spark_registry, n, message
) -> None:  # type: ignore[no-untyped-def]
    _, ids = evolved
    df = _bad_rows(spark, ids[1]).where(F.col("n").isin(0, n))
    decoded = df.select(
        from_confluent_avro(
            "value", spark_registry.url, subject="evo-value", options={"engine": "python"}
        )
    )
    with pytest.raises(Exception, match=message):
        decoded.collect()


@pytest.mark.parametrize(
    ("n", "unknown_ids", "message"),
    [
        (1, "error", "Unknown magic byte 7 at offset 0"),
        (1, "python", "magic byte 7"),
        (2, "error", "truncated frame: 2 bytes"),
        (2, "python", "truncated"),
        (3, "error", "schema id 987654 is not one of the Avro schema ids"),
        (3, "python", "schema id 987654: not found in the registry"),
        (4, "error", "schema id {good}: payload does not decode as Avro: the bytes are not"),
        (4, "python", "schema id {good}: payload does not decode as Avro: "),
    ],
)
def test_failfast_native_names_the_schema_id_and_reason(
    evolved, spark, spark_registry, n, unknown_ids, message
) -> None:  # type: ignore[no-untyped-def]
    _, ids = evolved
    df = _bad_rows(spark, ids[1]).where(F.col("n").isin(0, n, 5))
    decoded = df.select(
        from_confluent_avro(
            "value",
            spark_registry.url,
            subject="evo-value",
            options={"engine": "native", "unknownIds": unknown_ids},
        )
    )
    with pytest.raises(Exception, match=re.escape(message.format(good=ids[1]))):
        decoded.collect()


def test_unknown_ids_option_is_checked(spark_registry) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=r"unknownIds must be one of \('error', 'python'\)"):
        from_confluent_avro(
            "value", spark_registry.url, subject="evo-value", options={"unknownIds": "skip"}
        )


def test_streaming_query_fails_on_a_version_registered_after_it_started_and_a_restart_decodes_it(
    spark, spark_registry, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    """Native FAILFAST in Structured Streaming: the plan knows the subject's ids at start; a
    record of a version registered later fails the micro-batch naming the id, and a restart
    from the checkpoint (a new plan) decodes it, losing nothing."""
    url = spark_registry.url
    subject = "evo-stream-value"
    id1 = register(url, subject, V1)
    source, checkpoint = tmp_path / "in", tmp_path / "checkpoint"
    seen: list[tuple[int, str]] = []  # every micro-batch's rows, as foreachBatch got them

    def write(name: str, schema_id: int, schema: dict, records: list[dict]) -> None:
        rows = [(v,) for v in framed(schema_id, schema, records)]
        spark.createDataFrame(rows, "value binary").write.parquet(str(source / name))

    def start():  # type: ignore[no-untyped-def]
        stream = spark.readStream.schema("value binary").parquet(str(source / "*"))
        decoded = stream.select(
            from_confluent_avro("value", url, subject=subject, options={"engine": "native"}).alias(
                "v"
            )
        ).select("v.*")
        return (
            decoded.writeStream.foreachBatch(
                lambda batch, _: seen.extend((r.id, r.name) for r in batch.collect())
            )
            .option("checkpointLocation", str(checkpoint))
            .start()
        )

    write("a", id1, V1, [{"id": n, "name": f"a{n}"} for n in range(3)])
    query = start()
    try:
        query.processAllAvailable()
        id2 = register(url, subject, V2)
        write("b", id2, V2, [{"id": 10, "name": "b", "email": "b@x"}])
        with pytest.raises(Exception, match=rf"schema id {id2} is not one of the Avro schema ids"):
            query.processAllAvailable()
    finally:
        query.stop()
    restarted = start()
    try:
        restarted.processAllAvailable()
    finally:
        restarted.stop()
    # the failed micro-batch was not committed: the restart ran it again, with V2 as reader
    assert sorted(seen) == [(0, "a0"), (1, "a1"), (2, "a2"), (10, "b")]
