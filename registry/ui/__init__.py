"""The web UI's static assets (``static/``), served at ``/ui`` by :mod:`registry.api.ui`.

The UI is a pure client of the registry's public REST API from the browser: plain JavaScript
modules and CSS, no build step, nothing fetched from elsewhere."""
