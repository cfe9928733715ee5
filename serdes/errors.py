"""The two error types of the client side.

``SchemaRegistryError`` is what the registry answered (HTTP status, Confluent ``error_code``,
message). ``SerializationError`` is confluent-kafka's own class, re-exported, so that
``SerializingProducer``/``DeserializingConsumer`` wrap ours exactly as they wrap theirs and an
application's ``except SerializationError`` keeps working after swapping imports.
"""

from __future__ import annotations

from confluent_kafka.serialization import SerializationError

__all__ = [
    "OAuthTokenError",
    "SchemaRegistryError",
    "SerializationEOFError",
    "SerializationError",
    "SerializationTypeError",
    "SerializationValueError",
    "UnknownSchemaError",
    "like",
]


class SerializationValueError(SerializationError, ValueError):
    """Raised where confluent-kafka raises ``ValueError`` (a value that does not fit the schema
    under strict validation, a schema with references but no registry client): catchable as
    either, so ``except ValueError`` written for confluent-kafka keeps working."""


class SerializationTypeError(SerializationError, TypeError):
    """Raised where confluent-kafka raises ``TypeError``: catchable as either."""


class SerializationEOFError(SerializationError, EOFError):
    """A frame ends inside its Protobuf message indexes, where confluent-kafka raises
    ``EOFError``: catchable as either."""


class SchemaRegistryError(Exception):
    """An error answered by the Schema Registry (or the failure to reach any of its URLs).

    ``error_code`` is Confluent's code (40401 subject not found, 40403 schema not found, ...) or
    -1 when the answer carried none.
    """

    UNKNOWN = -1

    def __init__(self, http_status_code: int, error_code: int, error_message: str) -> None:
        super().__init__(error_message)
        self.http_status_code = http_status_code
        self.error_code = error_code
        self.error_message = error_message

    def __repr__(self) -> str:
        return (
            f"SchemaRegistryError(http code {self.http_status_code}, "
            f"error code {self.error_code}, {self.error_message!r})"
        )

    def __str__(self) -> str:
        return (
            f"{self.error_message} (HTTP status code {self.http_status_code}, "
            f"SR code {self.error_code})"
        )


class UnknownSchemaError(SerializationError, SchemaRegistryError):
    """A frame names a schema id or GUID the registry does not know (HTTP 404).

    Both a ``SerializationError`` (bad input, so the producer/consumer wrappers treat it as one)
    and a ``SchemaRegistryError`` carrying the registry's answer (as confluent-kafka raises it).
    """

    def __init__(self, what: str, cause: SchemaRegistryError) -> None:
        self.message = (
            f"unknown schema {what}: the registry answered HTTP {cause.http_status_code} "
            f"(error code {cause.error_code}): {cause.error_message}"
        )
        SerializationError.__init__(self, self.message)
        self.http_status_code = cause.http_status_code
        self.error_code = cause.error_code
        self.error_message = cause.error_message

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"UnknownSchemaError({self.message!r})"


def like(cause: BaseException, message: str) -> SerializationError:
    """A ``SerializationError`` for ``cause`` that is also catchable as the ``ValueError``,
    ``TypeError`` or ``EOFError`` confluent-kafka lets through in the same situation."""
    if isinstance(cause, EOFError):
        return SerializationEOFError(message)
    if isinstance(cause, ValueError):
        return SerializationValueError(message)
    if isinstance(cause, TypeError):
        return SerializationTypeError(message)
    return SerializationError(message)


class OAuthTokenError(Exception):
    """A bearer token could not be obtained (confluent-kafka's ``error.OAuthTokenError``)."""

    def __init__(
        self, message: str, status_code: int | None = None, response_text: str | None = None
    ):
        self.message = message
        self.status_code = status_code
        self.response_text = response_text
        super().__init__(f"{message} (HTTP {status_code}): {response_text}")
