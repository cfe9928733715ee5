"""Schema tags on Protobuf schemas (Confluent 8.x): ``POST /subjects/{s}/versions/{v}/tags``
rewrites ``(confluent.message_meta)`` / ``(confluent.field_meta)`` options as
``ProtobufSchema.copy(tagsToAdd, tagsToRemove)`` does, and ``findTags`` reads them back.

The expected texts are those of Confluent's ``ProtobufSchemaTest``
(testBasicAddAndRemoveSchemaTags, testAddDuplicateTags, testComplexRemove,
testOptionalOneOfFieldName, testInvalidPath), registered through the API (which accepts them as
Confluent does: ``APPLE = 6`` first in a proto3 enum, the undeclared ``otherOption``).
testInvalidPath's field named like its oneof is renamed: protobuf refuses that schema
(Confluent's registry too, when it builds the descriptor)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer as CProtoDeserializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer as CProtoSerializer
from confluent_kafka.schema_registry.rules.cel.cel_field_executor import CelFieldExecutor
from confluent_kafka.serialization import MessageField, SerializationContext
from fastapi.testclient import TestClient
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message_factory import GetMessageClass

from registry.formats.protobuf.tag_paths import JavaHashMap
from tests.api_helpers import error
from tests.conftest import LiveServer

BASIC = """syntax = "proto3";
package com.example.mynamespace;

import "confluent/meta.proto";
import "confluent/type/decimal.proto";

option java_package = "io.confluent.kafka.serializers.protobuf.test";
option java_outer_classname = "ComplexProto";
option (confluent.file_meta).tags = "FILE";

message SampleRecord {
  option (confluent.message_meta).tags = "OTHER";

  int32 my_field1 = 1 [
    (confluent.field_meta).tags = "OTHER",
    (confluent.field_meta).tags = "PRIVATE"
  ];
  double my_field2 = 2 [(confluent.field_meta) = {
    tags: [ "PRIVATE" ]
  }];
  NestedRecord my_field3 = 3 [(confluent.field_meta) = {
    doc: "field_meta"
  }];

  message NestedRecord {
    int64 nested_filed1 = 4;
  }
  enum Kind {
    option (confluent.enum_meta).tags = "ENUM";
    APPLE = 6 [(confluent.enum_value_meta) = {
      tags: [
        "CONST"
      ]
    }];
    BANANA = 7;
  }
}
"""
BASIC_TAGGED = """syntax = "proto3";
package com.example.mynamespace;

import "confluent/meta.proto";
import "confluent/type/decimal.proto";

option java_package = "io.confluent.kafka.serializers.protobuf.test";
option java_outer_classname = "ComplexProto";
option (confluent.file_meta).tags = "FILE";

message SampleRecord {
  option (confluent.message_meta) = {
    tags: [
      "OTHER",
      "PII"
    ]
  };

  int32 my_field1 = 1 [(confluent.field_meta) = {
    tags: [
      "OTHER",
      "PRIVATE",
      "PII"
    ]
  }];
  double my_field2 = 2 [(confluent.field_meta) = {
    tags: [
      "PRIVATE",
      "PII"
    ]
  }];
  NestedRecord my_field3 = 3 [(confluent.field_meta) = {
    doc: "field_meta",
    tags: [
      "PII"
    ]
  }];

  message NestedRecord {
    option (confluent.message_meta) = {
      tags: [
        "PII"
      ]
    };
  
    int64 nested_filed1 = 4 [(confluent.field_meta) = {
      tags: [
        "PII"
      ]
    }];
  }
  enum Kind {
    option (confluent.enum_meta).tags = "ENUM";
    APPLE = 6 [(confluent.enum_value_meta) = {
      tags: [
        "CONST"
      ]
    }];
    BANANA = 7;
  }
}
"""  # noqa: W293 (Confluent's printer indents the blank line after nested options)
BASIC_REMOVED = """syntax = "proto3";
package com.example.mynamespace;

import "confluent/meta.proto";
import "confluent/type/decimal.proto";

option java_package = "io.confluent.kafka.serializers.protobuf.test";
option java_outer_classname = "ComplexProto";
option (confluent.file_meta).tags = "FILE";

message SampleRecord {
  option (confluent.message_meta) = {
    tags: [
      "PII"
    ]
  };

  int32 my_field1 = 1 [(confluent.field_meta) = {
    tags: [
      "PRIVATE",
      "PII"
    ]
  }];
  double my_field2 = 2 [(confluent.field_meta) = {
    tags: [
      "PII"
    ]
  }];
  NestedRecord my_field3 = 3 [(confluent.field_meta) = {
    doc: "field_meta"
  }];

  message NestedRecord {
    int64 nested_filed1 = 4 [(confluent.field_meta) = {
      tags: [
        "PII"
      ]
    }];
  }
  enum Kind {
    option (confluent.enum_meta).tags = "ENUM";
    APPLE = 6 [(confluent.enum_value_meta) = {
      tags: [
        "CONST"
      ]
    }];
    BANANA = 7;
  }
}
"""
HEAD = """syntax = "proto3";
package com.example.mynamespace;

import "confluent/meta.proto";
import "confluent/type/decimal.proto";

option java_package = "io.confluent.kafka.serializers.protobuf.test";
option java_outer_classname = "ComplexProto";

"""
DUPLICATE = (
    HEAD
    + """message SampleRecord {
  int32 my_field1 = 1 [(confluent.field_meta).tags = "PRIVATE"];
  double my_field2 = 2 [(confluent.field_meta) = {
    tags: [
      "PRIVATE"
    ]
  }];
  NestedRecord my_field3 = 3 [(confluent.field_meta) = {
    doc: "field_meta"
  }];

  message NestedRecord {
    int64 nested_filed1 = 4;
  }
}
"""
)
DUPLICATE_TAGGED = DUPLICATE.replace(
    '[(confluent.field_meta).tags = "PRIVATE"];',
    '[(confluent.field_meta) = {\n    tags: [\n      "PRIVATE"\n    ]\n  }];',
)
COMPLEX = (
    HEAD
    + """message SampleRecord {
  int32 my_field1 = 1 [(confluent.field_meta).tags = "PRIVATE"];
  double my_field2 = 2 [(confluent.field_meta) = {
    doc: "no tag"
  }];
  NestedRecord my_field3 = 3 [(confluent.field_meta) = {
    doc: "field_meta",
    tags: [
      "PII",
      "PRIVATE"
    ]
  }];
  int32 my_field4 = 5 [
    otherOption = "foo",
    (confluent.field_meta).tags = "PRIVATE"
  ];
  oneof some_val {
    int32 other_id = 11 [(confluent.field_meta).tags = "PRIVATE"];
    string one_id = 12;
  }

  message NestedRecord {
    int64 nested_filed1 = 4 [(confluent.field_meta).tags = ["PII"]];
  }
}
"""
)
COMPLEX_REMOVED = (
    HEAD
    + """message SampleRecord {
  int32 my_field1 = 1;
  double my_field2 = 2 [(confluent.field_meta) = {
    doc: "no tag"
  }];
  NestedRecord my_field3 = 3 [(confluent.field_meta) = {
    doc: "field_meta",
    tags: [
      "PII"
    ]
  }];
  int32 my_field4 = 5 [otherOption = "foo"];

  oneof some_val {
    int32 other_id = 11;
    string one_id = 12;
  }

  message NestedRecord {
    int64 nested_filed1 = 4 [(confluent.field_meta) = {
      tags: [
        "PII"
      ]
    }];
  }
}
"""
)
ONEOF = """syntax = "proto3";
package com.example.mynamespace;

message SampleRecord {
  oneof test_oneof {
    string f1 = 1;
    int32 f2 = 2;
  }
}
"""
ONEOF_TAGGED = """syntax = "proto3";
package com.example.mynamespace;

message SampleRecord {
  oneof test_oneof {
    string f1 = 1 [(confluent.field_meta) = {
      tags: [
        "TAG1",
        "TAG2"
      ]
    }];
    int32 f2 = 2 [(confluent.field_meta) = {
      tags: [
        "TAG3",
        "TAG4"
      ]
    }];
  }
}
"""
INVALID = """syntax = "proto3";
package com.example.mynamespace;

message SampleRecord {
  oneof test_oneof {
    string f1 = 1;
    int32 f2 = 2;
  }
}
"""


def entity(path: str, kind: str = "sr_field", *tags: str) -> dict[str, Any]:
    return {"schemaEntity": {"entityPath": path, "entityType": kind}, "tags": list(tags)}


def register(client: TestClient, subject: str, text: str) -> dict[str, Any]:
    body = {"schema": text, "schemaType": "PROTOBUF"}
    response = client.post(f"/subjects/{subject}/versions", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


def tag(client: TestClient, subject: str, version: int | str, **body: Any) -> Any:
    return client.post(f"/subjects/{subject}/versions/{version}/tags", json=body)


def schema_text(client: TestClient, subject: str, version: int) -> str:
    return client.get(f"/subjects/{subject}/versions/{version}/schema").text


def test_tags_are_added_and_removed_as_confluent_rewrites_the_proto(client: TestClient) -> None:
    register(client, "s", BASIC)
    to_add = [
        entity(".SampleRecord.my_field1", "sr_field", "PII"),
        entity(".SampleRecord.my_field2", "sr_field", "PII"),
        entity(".SampleRecord.my_field3", "sr_field", "PII"),
        entity(".SampleRecord.NestedRecord.nested_filed1", "sr_field", "PII"),
        entity(".SampleRecord", "sr_record", "PII"),
        entity(".SampleRecord.NestedRecord", "sr_record", "PII"),
    ]
    added = tag(client, "s", 1, tagsToAdd=to_add)
    assert added.status_code == 200, added.text
    assert (added.json()["version"], added.json()["schemaType"]) == (2, "PROTOBUF")
    assert schema_text(client, "s", 2) == BASIC_TAGGED
    to_remove = [
        entity(".SampleRecord.my_field1", "sr_field", "OTHER"),
        entity(".SampleRecord.my_field2", "sr_field", "PRIVATE"),
        entity(".SampleRecord.my_field3", "sr_field", "PII"),
        entity(".SampleRecord.NestedRecord.nested_filed1", "sr_field", "DOES_NOT_EXIST"),
        entity(".SampleRecord", "sr_record", "OTHER"),
        entity(".SampleRecord.NestedRecord", "sr_record", "PII"),
    ]
    removed = tag(client, "s", "latest", tagsToRemove=to_remove)
    assert removed.status_code == 200, removed.text
    assert removed.json()["version"] == 3
    assert schema_text(client, "s", 3) == BASIC_REMOVED


@pytest.mark.parametrize(
    ("text", "add", "remove", "expected"),
    [
        (
            DUPLICATE,
            [entity(".SampleRecord.my_field1", "sr_field", "PRIVATE")],
            [],
            DUPLICATE_TAGGED,
        ),
        (
            COMPLEX,
            [],
            [
                entity(f".SampleRecord.{path}", "sr_field", "PRIVATE")
                for path in (
                    "my_field1",
                    "my_field2",
                    "my_field3",
                    "my_field4",
                    "NestedRecord.nested_filed1",
                    "some_val.other_id",
                )
            ],
            COMPLEX_REMOVED,
        ),
        (
            ONEOF,
            [
                entity(".SampleRecord.f1", "sr_field", "TAG1"),
                entity(".SampleRecord.test_oneof.f1", "sr_field", "TAG2"),
                entity("SampleRecord.f2", "sr_field", "TAG3"),
                entity("SampleRecord.test_oneof.f2", "sr_field", "TAG4"),
            ],
            [],
            ONEOF_TAGGED,
        ),
    ],
    ids=["duplicate", "complex_remove", "oneof_paths"],
)
def test_tag_rewrites_match_confluents_expected_texts(
    client: TestClient, text: str, add: list[Any], remove: list[Any], expected: str
) -> None:
    register(client, "s", text)
    response = tag(client, "s", 1, tagsToAdd=add, tagsToRemove=remove)
    assert response.status_code == 200, response.text
    assert schema_text(client, "s", 2) == expected
    # no import of confluent/meta.proto is added: the text is registered without it
    assert ("confluent/meta.proto" in expected) == ("confluent/meta.proto" in text)


@pytest.mark.parametrize(
    ("path", "kind", "message"),
    [
        ("SampleRecord", "sr_field", "No matching Field with name 'SampleRecord' found"),
        ("SampleRecord.bad_oneof.f1", "sr_field", "No matching Field with name 'f1' found"),
        ("SampleRecord.f3", "sr_field", "No matching Field with name 'f3' found"),
        ("badRecord", "sr_record", "No matching Message with name 'badRecord' found"),
        ("..SampleRecord", "sr_record", "No matching Message with name '' found"),
        (".SampleRecord.f1", "sr_record", "No matching Message with name 'f1' found"),
    ],
)
def test_a_path_naming_nothing_is_refused_and_nothing_is_stored(
    client: TestClient, path: str, kind: str, message: str
) -> None:
    register(client, "s", INVALID)
    response = tag(client, "s", 1, tagsToAdd=[entity(path, kind, "TAG1")])
    text = error(response, 422, 42201)
    assert text == f"java.lang.IllegalArgumentException: {message} in the schema"
    assert client.get("/subjects/s/versions").json() == [1]


def test_find_tags_lists_protobuf_tagged_messages_and_fields(client: TestClient) -> None:
    register(client, "s", BASIC)
    tag(
        client,
        "s",
        1,
        tagsToAdd=[entity("SampleRecord.NestedRecord.nested_filed1", "sr_field", "PII")],
    )
    version = client.get("/subjects/s/versions/2", params={"findTags": "PII"}).json()
    assert version["schemaTags"] == [
        {
            "schemaEntity": {
                "entityPath": "SampleRecord.NestedRecord.nested_filed1",
                "entityType": "sr_field",
            },
            "tags": ["PII"],
        }
    ]
    every = client.get(f"/schemas/ids/{version['id']}", params={"findTags": "*"}).json()
    assert [(t["schemaEntity"]["entityPath"], t["tags"]) for t in every["schemaTags"]] == [
        ("SampleRecord", ["OTHER"]),
        ("SampleRecord.my_field1", ["OTHER", "PRIVATE"]),
        ("SampleRecord.my_field2", ["PRIVATE"]),
        ("SampleRecord.NestedRecord.nested_filed1", ["PII"]),
    ]
    assert (
        "schemaTags" not in client.get("/subjects/s/versions/1", params={"findTags": "PII"}).json()
    )


OPTION_KEYS = ["otherOption", "confluent.field_meta", "deprecated", "packed"]


def test_options_are_collected_in_java_hashmap_order() -> None:
    """``mergeOptions`` collects into a ``HashMap``: its iteration order (bins, then chains;
    ``merge`` inserts at a chain's head, ``put`` at its tail) decides the printed order.
    Expected orders from OpenJDK 17."""
    merged = JavaHashMap()
    for key in [
        "otherOption",
        "confluent.field_meta",
        "deprecated",
        "packed",
        *"abcdefghijklmnopq",
    ]:
        merged.merge(key, key)
    merged.remove("deprecated")
    merged.put("deprecated", "deprecated")
    for key in ["r", "s"]:
        merged.merge(key, key)
    merged.put("zz", "zz")
    merged.put("aa", "aa")
    for key in ["x", "y", "z", "bb", "cc", "dd", "ee", "ff"]:
        merged.merge(key, key)
    assert ",".join(merged.values()) == (
        "ff,dd,bb,zz,deprecated,confluent.field_meta,packed,ee,cc,aa,a,b,c,d,e,f,g,h,i,j,k,l,"
        "m,n,o,otherOption,p,q,r,s,x,y,z"
    )


# ---- a tagged schema used by confluent-kafka's Protobuf serdes ---------------------------------

USER = """syntax = "proto3";
package tagged;

message User {
  string name = 1;
  int32 age = 2;
}
"""


def _user_class() -> Any:
    proto = descriptor_pb2.FileDescriptorProto(name="tagged/user.proto", package="tagged")
    proto.syntax = "proto3"
    user = proto.message_type.add(name="User")
    F = descriptor_pb2.FieldDescriptorProto
    user.field.add(name="name", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    user.field.add(name="age", number=2, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return GetMessageClass(pool.FindMessageTypeByName("tagged.User"))


def test_confluent_kafka_serdes_use_a_tagged_protobuf_schema(live_server: LiveServer) -> None:
    """A schema tagged through the API (no ``confluent/meta.proto`` import: Confluent adds
    none) still drives confluent-kafka 2.x: its serializer reads the field tags to run a
    CEL_FIELD rule on the PII field, and the deserializer reads the record back."""
    CelFieldExecutor.register()
    client = ConfluentClient({"url": live_server.url})
    name = "users"
    with httpx.Client(base_url=live_server.url) as http:
        body = {"schema": USER, "schemaType": "PROTOBUF"}
        assert http.post(f"/subjects/{name}-value/versions", json=body).status_code == 200
        rule = {
            "name": "mask",
            "kind": "TRANSFORM",
            "mode": "WRITE",
            "type": "CEL_FIELD",
            "tags": ["PII"],
            "expr": "'***'",
        }
        tagged = http.post(
            f"/subjects/{name}-value/versions/1/tags",
            json={
                "tagsToAdd": [entity("User.name", "sr_field", "PII")],
                "ruleSet": {"domainRules": [rule]},
            },
        )
        assert tagged.status_code == 200, tagged.text
        text = http.get(f"/subjects/{name}-value/versions/2/schema").text
    assert "(confluent.field_meta)" in text and "import" not in text
    User = _user_class()
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    serializer = CProtoSerializer(User, client, conf={**conf, "use.deprecated.format": False})
    ctx = SerializationContext(name, MessageField.VALUE)
    payload = serializer(User(name="alice", age=30), ctx)
    deserializer = CProtoDeserializer(User, {"use.deprecated.format": False}, client)
    read = deserializer(payload, ctx)
    assert (read.name, read.age) == ("***", 30)
