"""The exporter operations behind ``/exporters`` (Confluent's ``SchemaExporterResource``).

Each change is one ``Registry.write``: decided against the state under the store's write lock
(so two instances cannot both create the same exporter), recorded as EXPORTER / EXPORTER_STATE
records. A pause, resume, reset or update bumps the exporter's ``generation``; the engine's
progress writes carry the generation they started under and are dropped when it moved on."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from registry import records
from registry.exporters import model, secrets
from registry.exporters.index import Progress
from registry.exporters.model import ERROR, PAUSED, RUNNING, STARTING, Exporter

if TYPE_CHECKING:
    from registry.core import Draft, Registry


def _definition(registry: Registry, name: str) -> Exporter:
    found = registry.state.exporters.definitions.get(name)
    if found is None:
        raise model.not_found(name)
    return found


def _progress(registry: Registry, name: str) -> Progress:
    return registry.state.exporters.progress.get(name) or Progress()


def _drafts(exporter: Exporter | None, name: str, progress: Progress | None) -> list[Draft]:
    out: list[Draft] = []
    if exporter is not None:
        out.append((records.exporter_key(records.EXPORTER, name), exporter.value()))
    if progress is not None:
        out.append((records.exporter_key(records.EXPORTER_STATE, name), progress.value()))
    return out


# ---- reads -------------------------------------------------------------------------------


def list_exporters(registry: Registry) -> list[str]:
    return sorted(registry.state.exporters.definitions)


def describe(registry: Registry, name: str) -> dict[str, Any]:
    exporter = _definition(registry, name)
    return _present(
        {
            "name": exporter.name,
            "contextType": exporter.context_type,
            "context": exporter.context if exporter.context_type == "CUSTOM" else None,
            "subjects": list(exporter.subjects),
            "subjectRenameFormat": exporter.subject_rename_format,
            "config": secrets.masked(exporter.config),
        }
    )


def _present(body: dict[str, Any]) -> dict[str, Any]:
    """Fields without a value are left out, as Confluent's JSON leaves out nulls."""
    return {k: v for k, v in body.items() if v is not None}


def get_config(registry: Registry, name: str) -> dict[str, str]:
    return secrets.masked(_definition(registry, name).config)


def status(registry: Registry, name: str) -> dict[str, Any]:
    _definition(registry, name)
    progress = _progress(registry, name)
    return _present(
        {
            "name": name,
            "state": progress.state,
            "offset": progress.offset,
            "ts": progress.ts,
            "trace": progress.trace or None,
        }
    )


# ---- changes -----------------------------------------------------------------------------


def create(registry: Registry, body: dict[str, Any]) -> dict[str, str]:
    name = model.check_name(body.get("name"))
    if "config" not in body or not isinstance(body.get("config"), dict):
        raise model.invalid_config(f"{model.URL_KEY} is required")
    exporter = model.check_fields(body, Exporter(name=name))
    passphrase = registry.settings.exporter_secret
    exporter = _sealed(exporter, {}, passphrase)

    def decide() -> tuple[list[Draft], dict[str, str]]:
        index = registry.state.exporters
        if name in index.definitions:
            raise model.already_exists(name)
        if len(index.definitions) >= registry.settings.exporters_max:
            raise model.too_many(registry.settings.exporters_max)
        # a fresh generation: a worker still running for a deleted namesake cannot write
        generation = time.time_ns() // 1000
        return _drafts(exporter, name, Progress(STARTING, -1, "", generation)), {"name": name}

    return registry.write(decide)


def _sealed(exporter: Exporter, old: dict[str, str], passphrase: str) -> Exporter:
    config = secrets.seal(exporter.config, old, passphrase)
    return Exporter(
        name=exporter.name,
        context_type=exporter.context_type,
        context=exporter.context,
        subjects=exporter.subjects,
        subject_rename_format=exporter.subject_rename_format,
        config=config,
    )


def update(registry: Registry, name: str, body: dict[str, Any]) -> dict[str, str]:
    """``PUT /exporters/{name}``: the fields given replace those stored (``config`` is merged);
    the exporter must be paused (40963)."""
    if "name" in body and body["name"] not in (None, name):
        raise model.invalid_name(body["name"])
    return _change_definition(registry, name, body)


def update_config(registry: Registry, name: str, config: Any) -> dict[str, str]:
    """``PUT /exporters/{name}/config``: merged into the stored config; paused only (40963)."""
    return _change_definition(registry, name, {"config": model.check_config(config)})


def _change_definition(registry: Registry, name: str, body: dict[str, Any]) -> dict[str, str]:
    passphrase = registry.settings.exporter_secret

    def decide() -> tuple[list[Draft], dict[str, str]]:
        old = _definition(registry, name)
        progress = _progress(registry, name)
        if progress.state != PAUSED:
            raise model.not_paused(name)
        changed = _sealed(model.check_fields(body, old), old.config, passphrase)
        bumped = Progress(
            PAUSED, progress.offset, progress.trace, progress.generation + 1, progress.exported
        )
        return _drafts(changed, name, bumped), {"name": name}

    return registry.write(decide)


def delete(registry: Registry, name: str) -> None:
    def decide() -> tuple[list[Draft], None]:
        _definition(registry, name)
        keys = registry.state.exporters.keys
        drafts: list[Draft] = []
        for keytype in (records.EXPORTER, records.EXPORTER_STATE):
            raw = keys.get((keytype, name))
            key = records.exporter_key(keytype, name)
            drafts.append((records.decode_key(raw) if raw else key, None))
        return drafts, None

    registry.write(decide)


def pause(registry: Registry, name: str) -> dict[str, str]:
    def decide() -> tuple[list[Draft], dict[str, str]]:
        _definition(registry, name)
        p = _progress(registry, name)
        if p.state == PAUSED:
            return [], {"name": name}
        paused = Progress(PAUSED, p.offset, p.trace, p.generation + 1, p.exported)
        return _drafts(None, name, paused), {"name": name}

    return registry.write(decide)


def resume(registry: Registry, name: str) -> dict[str, str]:
    """From PAUSED or ERROR; 40961 when running."""

    def decide() -> tuple[list[Draft], dict[str, str]]:
        _definition(registry, name)
        p = _progress(registry, name)
        if p.state not in (PAUSED, ERROR):
            raise model.already_running(name)
        state = RUNNING if p.offset >= 0 else STARTING
        resumed = Progress(state, p.offset, "", p.generation + 1, p.exported)
        return _drafts(None, name, resumed), {"name": name}

    return registry.write(decide)


def reset(registry: Registry, name: str) -> dict[str, str]:
    """Back to the start of the log (still paused: resume starts the export over)."""

    def decide() -> tuple[list[Draft], dict[str, str]]:
        _definition(registry, name)
        p = _progress(registry, name)
        if p.state != PAUSED:
            raise model.not_paused(name)
        return _drafts(None, name, Progress(PAUSED, -1, "", p.generation + 1, 0)), {"name": name}

    return registry.write(decide)


def record_progress(registry: Registry, name: str, generation: int, progress: Progress) -> bool:
    """The engine's write: ``progress`` unless the exporter was deleted or its generation moved
    on (a pause, reset or update came first); whether it was written."""

    def decide() -> tuple[list[Draft], bool]:
        current = registry.state.exporters.progress.get(name)
        if name not in registry.state.exporters.definitions or current is None:
            return [], False
        if current.generation != generation or current.state == PAUSED:
            return [], False
        same = (current.state, current.offset, current.trace, current.exported) == (
            progress.state,
            progress.offset,
            progress.trace,
            progress.exported,
        )
        if same:
            return [], True
        return _drafts(None, name, progress), True

    return registry.write(decide)
