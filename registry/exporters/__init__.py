"""Schema exporters (Confluent's Schema Linking): keep another registry in sync.

An exporter is a cursor over the registry's record log plus a client of a destination
registry's REST API. Its definition (``EXPORTER``), its progress (``EXPORTER_STATE``: state,
offset, error trace) and, on SQL stores, the lease naming the one instance that runs exporters
(``EXPORTER_LEASE``) are records of the log itself, written through ``Registry.write``: every
store carries them, replicas agree, and ``copy`` and replay take them along.

Modules: ``model`` (request validation and the subject/context mapping, pure), ``secrets``
(credentials encrypted at rest), ``index`` (the records applied to the state), ``service`` (the
operations behind the REST routes), ``actions`` (a log record as destination requests, pure),
``destination`` (the HTTP client), ``engine`` (the threads that run exporters on the leader).
"""
