"""The `_schemas` record format: Confluent's exact key bytes, any field order on read."""

from __future__ import annotations

import pytest

from registry import records
from registry.records import RecordFormatError


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (
            records.schema_key("foo", 3),
            b'{"keytype":"SCHEMA","subject":"foo","version":3,"magic":1}',
        ),
        (records.config_key("foo"), b'{"keytype":"CONFIG","subject":"foo","magic":0}'),
        (records.config_key(None), b'{"keytype":"CONFIG","magic":0}'),
        (records.config_key(":.ctx:"), b'{"keytype":"CONFIG","subject":":.ctx:","magic":0}'),
        (records.mode_key("foo"), b'{"keytype":"MODE","subject":"foo","magic":0}'),
        (records.mode_key(None), b'{"keytype":"MODE","magic":0}'),
        (records.NOOP_KEY, b'{"keytype":"NOOP","magic":0}'),
        (
            records.delete_subject_key("foo"),
            b'{"keytype":"DELETE_SUBJECT","subject":"foo","magic":0}',
        ),
        (
            records.clear_subject_key("foo"),
            b'{"keytype":"CLEAR_SUBJECT","subject":"foo","magic":0}',
        ),
        (
            records.context_key(".ctx"),
            b'{"keytype":"CONTEXT","tenant":"default","context":".ctx","magic":0}',
        ),
        # the exporter records of registry.exporters (no Confluent counterpart in _schemas)
        (
            records.exporter_key(records.EXPORTER, "dr"),
            b'{"keytype":"EXPORTER","name":"dr","magic":0}',
        ),
        (
            records.exporter_key(records.EXPORTER_STATE, "dr"),
            b'{"keytype":"EXPORTER_STATE","name":"dr","magic":0}',
        ),
        (
            records.exporter_key(records.EXPORTER_LEASE, ""),
            b'{"keytype":"EXPORTER_LEASE","name":"","magic":0}',
        ),
    ],
)
def test_keys_have_confluents_exact_bytes(key: records.RecordKey, expected: bytes) -> None:
    assert records.encode_key(key) == expected
    assert records.decode_key(expected).identity == key.identity


def test_an_exporter_key_needs_a_name() -> None:
    with pytest.raises(RecordFormatError):
        records.decode_key(b'{"keytype":"EXPORTER","magic":0}')


def test_subject_with_quotes_and_unicode_is_json_escaped() -> None:
    raw = records.encode_key(records.schema_key('a"b\u00e9', 1))
    assert raw == '{"keytype":"SCHEMA","subject":"a\\"b\u00e9","version":1,"magic":1}'.encode()
    assert records.decode_key(raw).subject == 'a"b\u00e9'


def test_old_key_field_order_is_read_and_its_bytes_kept_for_tombstones() -> None:
    old = b'{"subject":"foo","version":1,"magic":0,"keytype":"SCHEMA"}'
    key = records.decode_key(old)
    assert (key.keytype, key.subject, key.version) == ("SCHEMA", "foo", 1)
    assert key.to_bytes() == old


@pytest.mark.parametrize(
    "raw",
    [
        b"not json",
        b"[1,2]",
        b'{"keytype":"BOGUS","magic":0}',
        b'{"keytype":"SCHEMA","subject":"foo","version":1,"magic":2}',
        b'{"keytype":"SCHEMA","subject":"foo","magic":1}',
        b'{"keytype":"DELETE_SUBJECT","magic":0}',
        b'{"keytype":"CONTEXT","magic":0}',
    ],
)
def test_malformed_keys_are_rejected(raw: bytes) -> None:
    with pytest.raises(RecordFormatError):
        records.decode_key(raw)


def test_values_omit_null_and_empty_fields_but_keep_false() -> None:
    value = {
        "subject": "s",
        "version": 1,
        "id": 1,
        "references": [],
        "metadata": None,
        "schema": '"string"',
        "deleted": False,
    }
    assert records.encode_value(value) == (
        b'{"subject":"s","version":1,"id":1,"schema":"\\"string\\"","deleted":false}'
    )
    assert records.encode_value(None) is None
    assert records.decode_value(None) is None
    assert records.decode_value(b"null") is None
    with pytest.raises(RecordFormatError):
        records.decode_value(b"[]")
