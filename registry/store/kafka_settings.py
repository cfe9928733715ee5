"""The ``kafka://`` store URL: :class:`KafkaSettings` and :func:`parse_kafka_url` (the options
are listed in :mod:`registry.store.kafka`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

from registry.store.kafka_keys import default_keys_topic

DEFAULT_TOPIC = "_schemas"
_SECRET_WORDS = ("password", "secret", "key", "token", "jaas")


class KafkaStoreError(Exception):
    """The topic cannot be used (wrong layout, unreachable cluster); start-up fails with it."""


@dataclass(frozen=True)
class KafkaSettings:
    """A parsed ``kafka://`` URL."""

    bootstrap: str
    topic: str = DEFAULT_TOPIC
    replication_factor: int | None = None
    election_topic: str = ""
    election_group: str = ""
    #: how long the leader's heartbeats may be missing before a follower claims
    election_lease_ms: int = 1500
    election_heartbeat_ms: int = 250
    #: how long a write that finds no leader waits for one (then 50004/50003)
    leader_wait_ms: int = 5000
    transactional_id: str = ""
    write_timeout: float = 10.0
    init_timeout: float = 60.0
    #: how long an open transaction with answered writes waits for another write before it is
    #: committed (0: every write is committed before it is answered; ``registry.store.kafka_txn``)
    txn_linger_ms: int = 10
    #: an open transaction is committed at most this long after its first write
    txn_max_open_ms: int = 50
    #: the DEK registry's topic ("" keeps KEKs and DEKs in ``topic``)
    keys_topic: str = ""
    #: librdkafka properties for every client (SASL, TLS, ...)
    client: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        shown = {
            k: ("***" if any(w in k.lower() for w in _SECRET_WORDS) else v)
            for k, v in self.client.items()
        }
        extra = "".join(f"&{k}={v}" for k, v in sorted(shown.items()))
        return f"kafka://{self.bootstrap}/?topic={self.topic}{extra}"


def parse_kafka_url(url: str) -> KafkaSettings:
    """Parse ``kafka://host:port[,host:port]/?topic=...``; raises :class:`ValueError`."""
    parts = urlsplit(url)
    if parts.scheme.lower() != "kafka":
        raise ValueError(f"not a kafka:// URL: {url!r}")
    bootstrap = parts.netloc
    if not bootstrap or "@" in bootstrap:
        raise ValueError(
            f"kafka store URL {url!r} needs brokers, e.g. kafka://localhost:9092/?topic=_schemas "
            "(credentials go in the query: sasl.username=...&sasl.password=...)"
        )
    if parts.path not in ("", "/"):
        raise ValueError(
            f"kafka store URL {url!r} has a path {parts.path!r}; the topic is a query parameter: "
            "kafka://host:9092/?topic=NAME"
        )
    options = dict(parse_qsl(parts.query, keep_blank_values=True, strict_parsing=False))
    topic = options.pop("topic", DEFAULT_TOPIC)
    if not topic:
        raise ValueError(f"empty topic in {url!r}")

    def number(name: str, default: int | None, *, least: int = 1) -> int | None:
        raw = options.pop(name, None)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise ValueError(f"{name}={raw!r} in {url!r} is not an integer") from None
        if value < least:
            raise ValueError(
                f"{name}={raw!r} in {url!r} must be "
                + ("positive" if least == 1 else f"at least {least}")
            )
        return value

    replication = number("replication.factor", None)
    # election.session.timeout.ms: the name of the lease when the election was a group's
    legacy = number("election.session.timeout.ms", None)
    lease = number("election.lease.ms", legacy or 1500)
    heartbeat = number("election.heartbeat.ms", None)
    leader_wait = number("leader.wait.ms", 5000)
    write_ms = number("write.timeout.ms", 10_000)
    init_ms = number("init.timeout.ms", 60_000)
    linger = number("txn.linger.ms", KafkaSettings.txn_linger_ms, least=0)
    max_open = number("txn.max.open.ms", KafkaSettings.txn_max_open_ms)
    assert linger is not None and max_open is not None
    assert lease is not None and write_ms is not None and init_ms is not None
    assert leader_wait is not None
    if heartbeat is None:
        heartbeat = max(20, min(250, lease // 6))
    if heartbeat * 3 > lease:
        raise ValueError(
            f"election.heartbeat.ms={heartbeat} in {url!r} must be at most a third of "
            f"election.lease.ms={lease}"
        )
    return KafkaSettings(
        bootstrap=bootstrap,
        topic=topic,
        replication_factor=replication,
        election_topic=options.pop("election.topic", f"{topic}-election"),
        election_group=options.pop("election.group", f"pyschemaregistry-{topic}"),
        election_lease_ms=lease,
        election_heartbeat_ms=heartbeat,
        leader_wait_ms=leader_wait,
        transactional_id=options.pop("transactional.id", f"pyschemaregistry-{topic}"),
        write_timeout=write_ms / 1000,
        init_timeout=init_ms / 1000,
        txn_linger_ms=linger,
        txn_max_open_ms=max_open,
        keys_topic=options.pop("keys.topic", default_keys_topic(topic)),
        client=options,
    )
