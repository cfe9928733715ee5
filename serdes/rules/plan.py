"""What a serializer or deserializer holds per schema to run its rules: built once when the
schema is first met, ``None`` when the schema has no rule to run, so a serde without rules
pays one ``is None`` test per message.

Serializers (rules run only with ``use.latest.version``/``use.latest.with.metadata``/
``use.schema.id``, on the schema those give, as confluent-kafka): :func:`write_plan` gives a
:class:`WritePlan` whose :meth:`~WritePlan.domain` runs WRITE domain rules on the value and
:meth:`~WritePlan.encoding` WRITE encoding rules on the encoded bytes.

Deserializers: :func:`read_plan` gives a :class:`ReadPlan` whose :meth:`~ReadPlan.encoding`
runs READ encoding rules on the payload, and :meth:`~ReadPlan.decoded` the migrations from
the writer's version to the reader's (UPGRADE/DOWNGRADE, JSONata typically) and then the
READ domain rules of the reader schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from serdes.errors import SchemaRegistryError
from serdes.rules.context import FieldTransformer
from serdes.rules.engine import Migration, RuleRunner, has_rules
from serdes.rules.model import RuleMode, RulePhase

__all__ = ["ReadPlan", "WritePlan", "read_plan", "write_plan"]


class WritePlan:
    __slots__ = (
        "field_transformer",
        "has_domain",
        "has_encoding",
        "inline_tags",
        "runner",
        "subject",
        "target",
    )

    def __init__(
        self,
        runner: RuleRunner,
        target: Any,
        field_transformer: FieldTransformer | None,
        inline_tags: dict[str, set[str]] | None,
        subject: str | None = None,
    ) -> None:
        self.subject = subject  # the subject the plan was built for, when it is one only
        self.runner = runner
        self.target = target
        self.field_transformer = field_transformer
        self.inline_tags = inline_tags
        self.has_domain = has_rules(target, RulePhase.DOMAIN, RuleMode.WRITE)
        self.has_encoding = has_rules(target, RulePhase.ENCODING, RuleMode.WRITE)

    def domain(self, ctx: Any, subject: str | None, value: Any) -> Any:
        if not self.has_domain or ctx is None or subject is None:
            return value
        return self.runner.execute(
            ctx,
            subject,
            RuleMode.WRITE,
            None,
            self.target,
            value,
            self.inline_tags,
            self.field_transformer,
        )

    def encoding(self, ctx: Any, subject: str | None, payload: bytes) -> bytes:
        if not self.has_encoding or ctx is None or subject is None:
            return payload
        return self.runner.execute(
            ctx,
            subject,
            RuleMode.WRITE,
            None,
            self.target,
            payload,
            None,
            None,
            phase=RulePhase.ENCODING,
        )


def write_plan(
    runner: RuleRunner,
    target: Any,
    field_transformer: Callable[[], FieldTransformer | None],
    inline_tags: Callable[[], dict[str, set[str]] | None],
    subject: str | None = None,
) -> WritePlan | None:
    """The plan for serializing with ``target`` (a Schema), or None when it has no WRITE
    rules. The walker and inline tags are only built when there are rules."""
    if not (
        has_rules(target, RulePhase.DOMAIN, RuleMode.WRITE)
        or has_rules(target, RulePhase.ENCODING, RuleMode.WRITE)
    ):
        return None
    return WritePlan(runner, target, field_transformer(), inline_tags(), subject)


class ReadPlan:
    __slots__ = (
        "field_transformer",
        "has_domain",
        "has_encoding",
        "inline_tags",
        "migrations",
        "runner",
        "target",
        "writer",
    )

    def __init__(
        self,
        runner: RuleRunner,
        writer: Any,
        target: Any,
        migrations: list[Migration],
        field_transformer: FieldTransformer | None,
        inline_tags: dict[str, set[str]] | None,
    ) -> None:
        self.runner = runner
        self.writer = writer
        self.target = target
        self.migrations = migrations
        self.field_transformer = field_transformer
        self.inline_tags = inline_tags
        self.has_encoding = has_rules(writer, RulePhase.ENCODING, RuleMode.READ)
        self.has_domain = has_rules(target, RulePhase.DOMAIN, RuleMode.READ)

    def encoding(self, ctx: Any, subject: str | None, payload: Any, original: bytes) -> Any:
        if not self.has_encoding or ctx is None or subject is None:
            return payload
        return self.runner.execute(
            ctx,
            subject,
            RuleMode.READ,
            None,
            self.writer,
            payload,
            None,
            None,
            original,
            phase=RulePhase.ENCODING,
        )

    def decoded(self, ctx: Any, subject: str | None, value: Any, original: bytes) -> Any:
        """The migrations, then the READ domain rules."""
        return self.domain(ctx, subject, self.migrate(ctx, subject, value), original)

    def migrate(self, ctx: Any, subject: str | None, value: Any) -> Any:
        """The migrations from the writer's version to the reader's."""
        if not self.migrations or ctx is None or subject is None:
            return value
        return self.runner.execute_migrations(ctx, subject, self.migrations, value)

    def domain(self, ctx: Any, subject: str | None, value: Any, original: bytes) -> Any:
        """The READ domain rules of the reader schema."""
        if not self.has_domain or ctx is None or subject is None:
            return value
        return self.runner.execute(
            ctx,
            subject,
            RuleMode.READ,
            None,
            self.target,
            value,
            self.inline_tags,
            self.field_transformer,
            original,
        )


def read_plan(
    runner: RuleRunner,
    client: Any,
    subject: str | None,
    writer: Any,
    target: Any,
    latest: Any,
    field_transformer: Callable[[], FieldTransformer | None],
    inline_tags: Callable[[], dict[str, set[str]] | None],
) -> ReadPlan | None:
    """The plan for reading frames of ``writer`` (a Schema) as ``target`` (the reader
    schema: ``latest``'s when the deserializer uses the latest version), or None when there
    is nothing to run. ``latest`` (a RegisteredSchema or None) decides the migrations."""
    migrations: list[Migration] = []
    if latest is not None and subject is not None:
        try:
            migrations = runner.migrations(client, subject, writer, latest)
        except SchemaRegistryError as exc:
            # The writer schema is not a version of the subject: nothing to migrate along.
            if exc.http_status_code != 404:
                raise
    if not (
        migrations
        or has_rules(writer, RulePhase.ENCODING, RuleMode.READ)
        or has_rules(target, RulePhase.DOMAIN, RuleMode.READ)
    ):
        return None
    return ReadPlan(runner, writer, target, migrations, field_transformer(), inline_tags())
