"""The audit trail (docs/audit.md): one event for every request that changes state and every
request refused by authentication or authorisation, to pluggable sinks.

* :mod:`registry.audit.changes`: the write-path hook (what a write decided, and hashes of the
  state it touched before and after);
* :mod:`registry.audit.middleware`: the HTTP hook (who, from where, which operation, outcome);
* :mod:`registry.audit.events`: the event's shape (CloudEvents 1.0, Confluent's field names);
* :mod:`registry.audit.sinks`, :mod:`registry.audit.kafka_sink`: file, stdout, Kafka;
* :mod:`registry.audit.hub`: fail open or closed, metrics;
* :mod:`registry.audit.reader`: reading the file sink back (``schema-registry audit``, the UI).
"""

from __future__ import annotations

from typing import Any

from registry.audit.hub import AuditCollector, Auditor
from registry.audit.sinks import register_sink


def install(app: Any, registry: Any) -> Auditor | None:
    """Turn the audit trail on for ``app`` when the settings name a sink: the write-path hook
    on ``registry``, the middleware on ``app`` (``app.state.auditor``)."""
    from registry.audit import middleware
    from registry.audit.changes import observe_change

    auditor = Auditor.from_settings(registry.settings)
    app.state.auditor = auditor
    if auditor is None:
        return None
    registry.change_observer = observe_change
    middleware.install(app, auditor)
    return auditor


__all__ = ["AuditCollector", "Auditor", "install", "register_sink"]
