"""PySpark column functions for Confluent-framed Kafka payloads (Avro, Protobuf, JSON Schema).

    from spark_serdes import from_confluent_avro
    decoded = kafka_df.select(
        from_confluent_avro("value", "http://registry:8081", subject="orders-value").alias("v")
    ).select("v.*")

See :mod:`spark_serdes.functions` for engines, modes and options, and
:mod:`spark_serdes.encoders` for the ``to_confluent_*`` encoders.
"""

from spark_serdes.encoders import to_confluent_avro, to_confluent_json, to_confluent_protobuf
from spark_serdes.engines import native_avro_available
from spark_serdes.functions import from_confluent_avro
from spark_serdes.json_schema import from_confluent_json
from spark_serdes.protobuf import from_confluent_protobuf

__all__ = [
    "from_confluent_avro",
    "from_confluent_json",
    "from_confluent_protobuf",
    "native_avro_available",
    "to_confluent_avro",
    "to_confluent_json",
    "to_confluent_protobuf",
]
