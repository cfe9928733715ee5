"""``/dek-registry/v1/keks`` routes (Confluent's ``DekRegistryResource``): thin wrappers over
``registry.deks``.

A KEK name in the path is decoded (:func:`decoded`) before ``registry.deks`` checks it, so
``/keks/a%2Fb`` is the name ``a/b``, which Confluent's ``checkName`` refuses (422, 42271); a DEK
subject in the path is decoded and made canonical (:func:`subject_param`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from registry import deks, errors
from registry.api import docs
from registry.api.bodies import flag, json_body
from registry.api.deps import decoded, registry_of, subject_param
from registry.api.responses import reply
from registry.auth import visibility
from registry.core import parse_version

router = APIRouter(prefix="/dek-registry/v1", tags=["DEK Registry (v1)"])

_STR = {"type": "string"}
_PROPS = {"type": "object", "additionalProperties": _STR}
docs.COMPONENTS.update(
    {
        "Kek": {
            "type": "object",
            "properties": {
                "name": _STR,
                "kmsType": _STR,
                "kmsKeyId": _STR,
                "kmsProps": _PROPS,
                "doc": _STR,
                "shared": {"type": "boolean"},
                "ts": {"type": "integer", "format": "int64"},
                "deleted": {"type": "boolean"},
            },
        },
        "Dek": {
            "type": "object",
            "properties": {
                "kekName": _STR,
                "subject": _STR,
                "version": {"type": "integer", "format": "int32"},
                "algorithm": {"type": "string", "enum": list(deks.ALGORITHMS)},
                "encryptedKeyMaterial": _STR,
                "keyMaterial": _STR,
                "ts": {"type": "integer", "format": "int64"},
                "deleted": {"type": "boolean"},
            },
        },
        "CreateKekRequest": {
            "type": "object",
            "required": ["name", "kmsType", "kmsKeyId"],
            "properties": {
                "name": _STR,
                "kmsType": _STR,
                "kmsKeyId": _STR,
                "kmsProps": _PROPS,
                "doc": _STR,
                "shared": {"type": "boolean"},
                "deleted": {"type": "boolean"},
            },
        },
        "UpdateKekRequest": {
            "type": "object",
            "properties": {"kmsProps": _PROPS, "doc": _STR, "shared": {"type": "boolean"}},
        },
        "CreateDekRequest": {
            "type": "object",
            "properties": {
                "subject": _STR,
                "version": {"type": "integer", "format": "int32"},
                "algorithm": {"type": "string", "enum": list(deks.ALGORITHMS)},
                "encryptedKeyMaterial": _STR,
                "deleted": {"type": "boolean"},
            },
        },
    }
)
KEK = docs.ref("Kek")
DEK = docs.ref("Dek")
NO_CONTENT = docs.answers(None, 404, 422, status=204)


def _object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise errors.RegistryError(400, "The request body must be a JSON object")
    return body


def _version(version: str) -> int:
    return parse_version(version)


# ---- KEKs -----------------------------------------------------------------------------------


@router.get("/keks", responses=docs.answers(docs.STRINGS))
async def list_keks(request: Request, deleted: str | None = None) -> Response:
    return reply(request, deks.list_keks(registry_of(request), flag(deleted)))


@router.post(
    "/keks",
    openapi_extra=docs.body("CreateKekRequest"),
    responses=docs.answers(KEK, 400, 409, 415, 422),
)
async def create_kek(request: Request, context: str | None = None) -> Response:
    body = _object(await json_body(request))
    return reply(request, await run_in_threadpool(deks.create_kek, registry_of(request), body))


@router.get("/keks/{name}", responses=docs.answers(KEK, 404, 422))
async def get_kek(
    request: Request, name: str, deleted: str | None = None, context: str | None = None
) -> Response:
    return reply(request, deks.get_kek(registry_of(request), decoded(name), flag(deleted)))


@router.put(
    "/keks/{name}",
    openapi_extra=docs.body("UpdateKekRequest"),
    responses=docs.answers(KEK, 400, 404, 415, 422),
)
async def update_kek(request: Request, name: str) -> Response:
    body = _object(await json_body(request))
    return reply(
        request, await run_in_threadpool(deks.update_kek, registry_of(request), decoded(name), body)
    )


@router.delete("/keks/{name}", status_code=204, responses=NO_CONTENT)
async def delete_kek(request: Request, name: str, permanent: str | None = None) -> Response:
    await run_in_threadpool(deks.delete_kek, registry_of(request), decoded(name), flag(permanent))
    return Response(status_code=204)


@router.post("/keks/{name}/undelete", status_code=204, responses=NO_CONTENT)
async def undelete_kek(request: Request, name: str) -> Response:
    await run_in_threadpool(deks.undelete_kek, registry_of(request), decoded(name))
    return Response(status_code=204)


# ---- DEKs -----------------------------------------------------------------------------------


@router.get("/keks/{name}/deks", responses=docs.answers(docs.STRINGS, 404, 422))
async def list_dek_subjects(request: Request, name: str, deleted: str | None = None) -> Response:
    found = deks.list_dek_subjects(registry_of(request), decoded(name), flag(deleted))
    return reply(request, visibility.subjects(request, found))


@router.post(
    "/keks/{name}/deks",
    openapi_extra=docs.body("CreateDekRequest"),
    responses=docs.answers(DEK, 400, 404, 409, 415, 422),
)
async def create_dek(request: Request, name: str) -> Response:
    return await _create_dek(request, name, None)


@router.post(
    "/keks/{name}/deks/{subject}",
    openapi_extra=docs.body("CreateDekRequest"),
    responses=docs.answers(DEK, 400, 404, 409, 415, 422),
)
async def create_dek_for_subject(request: Request, name: str, subject: str) -> Response:
    return await _create_dek(request, name, subject)


@router.get("/keks/{name}/deks/{subject}", responses=docs.answers(DEK, 404, 422))
async def get_dek(
    request: Request,
    name: str,
    subject: str,
    algorithm: str | None = None,
    deleted: str | None = None,
) -> Response:
    return await _get_dek(request, name, subject, None, algorithm, deleted)


@router.delete("/keks/{name}/deks/{subject}", status_code=204, responses=NO_CONTENT)
async def delete_dek(
    request: Request,
    name: str,
    subject: str,
    algorithm: str | None = None,
    permanent: str | None = None,
) -> Response:
    return await _delete_deks(request, name, subject, None, algorithm, permanent)


@router.post("/keks/{name}/deks/{subject}/undelete", status_code=204, responses=NO_CONTENT)
async def undelete_dek(
    request: Request, name: str, subject: str, algorithm: str | None = None
) -> Response:
    return await _undelete_deks(request, name, subject, None, algorithm)


@router.get("/keks/{name}/deks/{subject}/versions", responses=docs.answers(docs.INTS, 404, 422))
async def list_dek_versions(
    request: Request,
    name: str,
    subject: str,
    algorithm: str | None = None,
    deleted: str | None = None,
) -> Response:
    found = deks.list_dek_versions(
        registry_of(request),
        decoded(name),
        subject_param(subject),
        deks.algorithm_param(algorithm),
        flag(deleted),
    )
    return reply(request, found)


@router.get("/keks/{name}/deks/{subject}/versions/{version}", responses=docs.answers(DEK, 404, 422))
async def get_dek_version(
    request: Request,
    name: str,
    subject: str,
    version: str,
    algorithm: str | None = None,
    deleted: str | None = None,
) -> Response:
    return await _get_dek(request, name, subject, version, algorithm, deleted)


@router.delete(
    "/keks/{name}/deks/{subject}/versions/{version}", status_code=204, responses=NO_CONTENT
)
async def delete_dek_version(
    request: Request,
    name: str,
    subject: str,
    version: str,
    algorithm: str | None = None,
    permanent: str | None = None,
) -> Response:
    return await _delete_deks(request, name, subject, version, algorithm, permanent)


@router.post(
    "/keks/{name}/deks/{subject}/versions/{version}/undelete",
    status_code=204,
    responses=NO_CONTENT,
)
async def undelete_dek_version(
    request: Request, name: str, subject: str, version: str, algorithm: str | None = None
) -> Response:
    return await _undelete_deks(request, name, subject, version, algorithm)


# One body per DEK operation, whether the route names a version or not (a subject's own routes
# pass ``version=None``). The subject is checked before the version, as each route always did.


async def _create_dek(request: Request, name: str, subject: str | None) -> Response:
    body = _object(await json_body(request))
    kek_name = decoded(name)
    args = (kek_name, body) if subject is None else (kek_name, body, subject_param(subject))
    return reply(request, await run_in_threadpool(deks.create_dek, registry_of(request), *args))


async def _get_dek(
    request: Request,
    name: str,
    subject: str,
    version: str | None,
    algorithm: str | None,
    deleted: str | None,
) -> Response:
    found = await run_in_threadpool(
        deks.get_dek,
        registry_of(request),
        decoded(name),
        subject_param(subject),
        deks.MIN_VERSION if version is None else _version(version),
        deks.algorithm_param(algorithm),
        flag(deleted),
    )
    return reply(request, found)


async def _delete_deks(
    request: Request,
    name: str,
    subject: str,
    version: str | None,
    algorithm: str | None,
    permanent: str | None,
) -> Response:
    await run_in_threadpool(
        deks.delete_deks,
        registry_of(request),
        decoded(name),
        subject_param(subject),
        None if version is None else _version(version),
        deks.algorithm_param(algorithm),
        flag(permanent),
    )
    return Response(status_code=204)


async def _undelete_deks(
    request: Request, name: str, subject: str, version: str | None, algorithm: str | None
) -> Response:
    await run_in_threadpool(
        deks.undelete_deks,
        registry_of(request),
        decoded(name),
        subject_param(subject),
        None if version is None else _version(version),
        deks.algorithm_param(algorithm),
    )
    return Response(status_code=204)
