"""The DEK registry's own topic next to ``_schemas``: Confluent keeps KEK and DEK records in
``_dek_registry_keys`` (compacted, one partition), and so does the Kafka store.

KEK/DEK records only depend on one another, never on the schema records, so the two topics need
no common order: the store reads the keys topic with a reader of its own
(``registry.store.kafka_reader.TopicReader``), and the registry applies those records to its key
index with their own offsets (the records carry ``log=KEYS_LOG``). Writes go through the
``_schemas`` leader's transactional producer, in the same transaction as any schema record, so
leadership and fencing cover them.
"""

from __future__ import annotations

from registry import records

DEFAULT_KEYS_TOPIC = "_dek_registry_keys"


def default_keys_topic(schemas_topic: str) -> str:
    """Confluent's name beside ``_schemas``; ``<topic>_dek_registry_keys`` beside any other
    topic, so registries on different topics of one cluster keep their keys apart."""
    if schemas_topic == "_schemas":
        return DEFAULT_KEYS_TOPIC
    return f"{schemas_topic}{DEFAULT_KEYS_TOPIC}"


def is_key_record(key: bytes) -> bool:
    """Whether a record key is a KEK or DEK key (it goes to the keys topic)."""
    try:
        return records.decode_key(key).keytype in records.ENCRYPTION_KEY_TYPES
    except records.RecordFormatError:
        return False
