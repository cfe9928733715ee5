"""Authentication (HTTP Basic against a users file, JWT bearer tokens) and per-subject
authorisation of the REST API. :func:`registry.auth.middleware.install` wires them in."""
