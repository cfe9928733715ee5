"""Print the OpenAPI document the server serves (committed as ``openapi/openapi.json``)."""

from __future__ import annotations

import json
from typing import Any


def document() -> dict[str, Any]:
    from registry.api.app import create_app
    from registry.core import Registry
    from registry.store.factory import open_store

    # the store is never opened: building the document touches no storage
    app = create_app(Registry(open_store("sqlite:///unused.db")), manage_lifecycle=False)
    return app.openapi()


def render() -> str:
    return json.dumps(document(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    print(render(), end="")
