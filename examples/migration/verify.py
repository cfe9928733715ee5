"""Compare two registries through their REST APIs: every subject (soft-deleted ones too), its
versions with their ids, schema types, schemas and references, and the subject's config and
mode. Exit 0 when they are the same, 1 (listing the differences) when not.

    python verify.py http://old-registry:8081 http://new-registry:8081
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

import httpx


def snapshot(url: str) -> dict[str, Any]:
    """What a registry holds, keyed so that two snapshots compare with ``==``."""
    with httpx.Client(base_url=url, timeout=30) as http:

        def get(path: str, **params: Any) -> Any:
            answer = http.get(path, params=params)
            if answer.status_code == 404:
                return None
            answer.raise_for_status()
            return answer.json()

        state: dict[str, Any] = {"config": get("/config"), "mode": get("/mode")}
        for subject in sorted(get("/subjects", deleted="true")):
            quoted = httpx.URL(f"/subjects/{subject}").raw_path.decode()  # names with spaces
            versions = get(f"{quoted}/versions", deleted="true") or []
            state[subject] = {
                "config": get(f"/config/{subject}", defaultToGlobal="false"),
                "mode": get(f"/mode/{subject}", defaultToGlobal="false"),
                "versions": {
                    version: {
                        key: value
                        for key, value in get(
                            f"{quoted}/versions/{version}", deleted="true"
                        ).items()
                        if key in ("id", "schemaType", "schema", "references", "metadata")
                    }
                    for version in versions
                },
            }
        return state


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    found = []
    for key in sorted(set(old) | set(new)):
        if key not in new:
            found.append(f"{key}: only in the first registry")
        elif key not in old:
            found.append(f"{key}: only in the second registry")
        elif old[key] != new[key]:
            found.append(f"{key}: differs: {old[key]!r} != {new[key]!r}")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first")
    parser.add_argument("second")
    args = parser.parse_args(argv)
    found = differences(snapshot(args.first), snapshot(args.second))
    for line in found:
        print(line)
    print("identical" if not found else f"{len(found)} difference(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
