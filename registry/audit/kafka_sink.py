"""The ``kafka`` audit sink: CloudEvents 1.0 in structured JSON mode (``content-type:
application/cloudevents+json``), one record per event, keyed by the event's subject, on a
topic (Confluent's audit logs use ``confluent-audit-log-events``, the default here).

Turned on by ``audit_kafka=kafka://host:9092[,host:9092]/?topic=NAME`` (other query parameters
are librdkafka properties: SASL, TLS; ``replication.factor`` is used when the topic is created,
``confirm.timeout.ms`` bounds a fail-closed answer's wait for its acknowledgement, 10 s).
The producer is idempotent (``acks=all``); one thread serves its delivery reports. An event
counts as written once the broker acknowledged it, as dropped when delivery failed. In
fail-closed mode a change's answer waits for the acknowledgement of its event
(:meth:`KafkaSink.confirm`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from registry.audit.sinks import SinkError
from registry.settings import Settings

log = logging.getLogger(__name__)

DEFAULT_TOPIC = "confluent-audit-log-events"
CONTENT_TYPE = b"application/cloudevents+json; charset=UTF-8"
#: seconds a fail-closed answer waits for the broker's acknowledgement of its event
CONFIRM_TIMEOUT = 10.0
#: seconds between probes of unreachable brokers
PROBE_INTERVAL = 2.0


def parse_audit_url(url: str) -> tuple[str, str, int | None, dict[str, str]]:
    """Brokers, topic, replication factor and librdkafka properties of an ``audit_kafka``
    URL; raises :class:`ValueError`."""
    parts = urlsplit(url)
    if parts.scheme.lower() != "kafka" or not parts.netloc or "@" in parts.netloc:
        raise ValueError(
            f"SCHEMA_REGISTRY_AUDIT_KAFKA={url!r}: expected kafka://host:9092/?topic=NAME "
            "(credentials as query parameters: sasl.username=...&sasl.password=...)"
        )
    options = dict(parse_qsl(parts.query, keep_blank_values=True))
    topic = options.pop("topic", DEFAULT_TOPIC) or DEFAULT_TOPIC
    raw_rf = options.pop("replication.factor", None)
    try:
        rf = int(raw_rf) if raw_rf is not None else None
    except ValueError:
        raise ValueError(f"replication.factor={raw_rf!r} is not an integer") from None
    return parts.netloc, topic, rf, options


def _confirm_timeout(options: dict[str, str]) -> float:
    raw = options.pop("confirm.timeout.ms", None)
    if raw is None:
        return CONFIRM_TIMEOUT
    try:
        return int(raw) / 1000
    except ValueError:
        raise ValueError(f"confirm.timeout.ms={raw!r} is not an integer") from None


class KafkaSink:
    name = "kafka"

    def __init__(
        self,
        bootstrap: str,
        topic: str = DEFAULT_TOPIC,
        replication_factor: int | None = None,
        client: dict[str, str] | None = None,
    ) -> None:
        from confluent_kafka import Producer

        self.topic = topic
        self.bootstrap = bootstrap
        self.replication_factor = replication_factor
        self.client = dict(client or {})
        self.written = 0
        self.dropped = 0
        #: seconds a fail-closed answer waits for the acknowledgement of its event
        self.confirm_timeout = CONFIRM_TIMEOUT
        self._down = False
        self._pending: set[asyncio.Future[None]] = set()
        self._stop = threading.Event()
        self._producer: Any = Producer(
            {
                "bootstrap.servers": bootstrap,
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": 5,
                "error_cb": self._on_error,
                **self.client,
            }
        )
        self._created = False
        #: whether :meth:`confirm` is used (fail-closed mode): only then are deliveries awaited
        self.confirming = False
        self._poller = threading.Thread(target=self._poll, name="audit-kafka", daemon=True)
        self._poller.start()

    @classmethod
    def from_settings(cls, settings: Settings) -> KafkaSink | None:
        if not settings.audit_kafka:
            return None
        bootstrap, topic, rf, client = parse_audit_url(settings.audit_kafka)
        confirm_timeout = _confirm_timeout(client)
        sink = cls(bootstrap, topic, rf, client)
        sink.confirm_timeout = confirm_timeout
        return sink

    def start(self) -> None:
        """Create the topic when it does not exist (one partition: events stay in order); the
        sink is unhealthy while the brokers cannot be reached."""
        if self._created:
            return
        try:
            self._create_topic(self.confirm_timeout)
        except Exception:
            self._down = True
            raise

    def _create_topic(self, timeout: float) -> None:
        from confluent_kafka import KafkaError, KafkaException
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap, **self.client})
        metadata = admin.list_topics(timeout=timeout)
        if self.topic not in metadata.topics:
            rf = self.replication_factor or min(3, len(metadata.brokers))
            futures = admin.create_topics([NewTopic(self.topic, 1, rf)])
            try:
                futures[self.topic].result(timeout)
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise
        self._created = True

    def _on_error(self, error: Any) -> None:
        from confluent_kafka import KafkaError

        if error.code() in (KafkaError._ALL_BROKERS_DOWN, KafkaError._TRANSPORT):
            self._down = True
        log.warning("audit Kafka sink: %s", error)

    def _poll(self) -> None:
        """Serve delivery reports; while the brokers are unreachable, probe them every
        :data:`PROBE_INTERVAL` seconds, so a fail-closed registry, producing nothing while
        the sink is down, notices when they are back."""
        probed = 0.0
        while not self._stop.is_set():
            self._producer.poll(0.1)
            if self._down and time.monotonic() - probed > PROBE_INTERVAL:
                probed = time.monotonic()
                try:
                    self._producer.list_topics(self.topic, timeout=PROBE_INTERVAL)
                    if not self._created:
                        self._create_topic(PROBE_INTERVAL)
                except Exception:  # KafkaException: still unreachable
                    continue
                self._down = False

    def write(self, line: bytes, event: dict[str, object]) -> None:
        key = event.get("subject")
        future: asyncio.Future[None] | None = None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None and self.confirming:
            future = loop.create_future()
            self._pending.add(future)
            future.add_done_callback(self._pending.discard)

        def delivered(err: Any, msg: Any) -> None:
            if err is None:
                self.written += 1
                self._down = False
            else:
                self.dropped += 1
                self._down = True  # until a probe or a later delivery succeeds
                log.error("audit event not delivered to %s: %s", self.topic, err)
            if future is not None and loop is not None:
                loop.call_soon_threadsafe(_settle, future, err)

        try:
            self._producer.produce(
                self.topic,
                value=line,
                key=str(key).encode() if key else None,
                headers=[("content-type", CONTENT_TYPE)],
                on_delivery=delivered,
            )
        except Exception as exc:  # BufferError (queue full), KafkaException
            if future is not None:
                future.cancel()
            raise SinkError(f"audit Kafka topic {self.topic}: {exc}") from exc

    async def confirm(self) -> None:
        pending = list(self._pending)
        if not pending:
            return
        try:
            await asyncio.wait_for(asyncio.gather(*pending), self.confirm_timeout)
        except (TimeoutError, SinkError) as exc:
            raise SinkError(
                f"audit Kafka topic {self.topic}: {exc or 'no acknowledgement'}"
            ) from exc

    def healthy(self) -> bool:
        return not self._down

    def flush(self, timeout: float = 10.0) -> int:
        return int(self._producer.flush(timeout))

    def close(self) -> None:
        """Deliver what is queued (waiting at most ``confirm_timeout``), then let the producer
        go (its handle is destroyed with the last reference)."""
        self._stop.set()
        self._poller.join(timeout=5)
        left = self.flush(self.confirm_timeout)
        if left:
            self.dropped += left
            log.error("audit Kafka sink closed with %d events undelivered", left)
        self._producer = _Closed()


class _Closed:
    """A closed sink's producer: every call fails as an unavailable broker would."""

    def produce(self, *args: Any, **kwargs: Any) -> None:
        raise BufferError("the audit Kafka sink is closed")

    def flush(self, timeout: float = 0) -> int:
        return 0

    def poll(self, timeout: float = 0) -> int:
        return 0


def _settle(future: asyncio.Future[None], err: Any) -> None:
    if future.done():
        return
    if err is None:
        future.set_result(None)
    else:
        future.set_exception(SinkError(str(err)))
