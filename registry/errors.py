"""The registry's one error type and Confluent's catalogue of error codes and messages.

Every failure the REST layer reports is a :class:`RegistryError`; its ``error_code`` is
Confluent's, and the HTTP status is derived from it (the first three digits of a five-digit
code, the code itself for a three-digit one). Message texts follow Confluent Schema Registry
7.9, typos included, because some UIs show them.
"""

from __future__ import annotations


class RegistryError(Exception):
    """A request the registry refuses, carrying Confluent's ``error_code``."""

    def __init__(self, error_code: int, message: str, http_status: int | None = None) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message
        self.http_status = http_status or status_for(error_code)

    def body(self) -> dict[str, object]:
        return {"error_code": self.error_code, "message": self.message}


def status_for(error_code: int) -> int:
    return error_code // 100 if error_code >= 10000 else error_code


# ---- 404 ----------------------------------------------------------------------------------


def subject_not_found(subject: str) -> RegistryError:
    return RegistryError(40401, f"Subject '{subject}' not found.")


def version_not_found(version: int | str) -> RegistryError:
    return RegistryError(40402, f"Version {version} not found.")


def schema_not_found(schema_id: int | str | None = None) -> RegistryError:
    if schema_id is None:
        return RegistryError(40403, "Schema not found")
    return RegistryError(40403, f"Schema {schema_id} not found")


def subject_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(
        40404, f"Subject '{subject}' was soft deleted.Set permanent=true to delete permanently"
    )


def subject_not_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(
        40405, f"Subject '{subject}' was not deleted first before being permanently deleted"
    )


def version_soft_deleted(subject: str, version: int) -> RegistryError:
    return RegistryError(
        40406,
        f"Subject '{subject}' Version {version} was soft deleted."
        "Set permanent=true to delete permanently",
    )


def version_not_soft_deleted(subject: str, version: int) -> RegistryError:
    return RegistryError(
        40407,
        f"Subject '{subject}' Version {version} was not deleted first before being "
        "permanently deleted",
    )


def subject_compatibility_not_configured(subject: str) -> RegistryError:
    return RegistryError(
        40408, f"Subject '{subject}' does not have subject-level compatibility configured"
    )


def subject_mode_not_configured(subject: str) -> RegistryError:
    return RegistryError(40409, f"Subject '{subject}' does not have subject-level mode configured")


# ---- 409 ----------------------------------------------------------------------------------


def incompatible_schema(subject: str, messages: list[str]) -> RegistryError:
    details = "[" + ", ".join(messages) + "]"
    return RegistryError(
        409,
        "Schema being registered is incompatible with an earlier schema for subject "
        f'"{subject}", details: {details}',
    )


# ---- 422 ----------------------------------------------------------------------------------


def invalid_schema(reason: str) -> RegistryError:
    return RegistryError(42201, reason)


def invalid_version(version: object) -> RegistryError:
    return RegistryError(
        42202,
        f"The specified version '{version}' is not a valid version id. Allowed values are "
        'between [1, 2^31-1] and the string "latest"',
    )


def invalid_compatibility_level(level: object = None) -> RegistryError:
    return RegistryError(
        42203,
        "Invalid compatibility level. Valid values are none, backward, forward, full, "
        "backward_transitive, forward_transitive, and full_transitive",
    )


def invalid_mode(message: str | None = None) -> RegistryError:
    return RegistryError(
        42204, message or "Invalid mode. Valid values are READWRITE, READONLY, and IMPORT."
    )


def operation_not_permitted(message: str) -> RegistryError:
    return RegistryError(42205, message)


def reference_exists(schema_key: str) -> RegistryError:
    """Confluent 8.x's ``RestReferenceExistsException`` text around the schema key."""
    return RegistryError(42206, f"One or more references exist to the schema {schema_key}.")


def invalid_subject(subject: str) -> RegistryError:
    return RegistryError(42208, f"The specified subject '{subject}' is not a valid.")


def schema_too_large(message: str) -> RegistryError:
    return RegistryError(42209, message)


def invalid_ruleset(message: str) -> RegistryError:
    return RegistryError(42210, message)


def context_not_empty(context: str) -> RegistryError:
    return RegistryError(42211, f"The specified context '{context}' is not empty.")


def invalid_association(prop: str, detail: str) -> RegistryError:
    return RegistryError(
        42212,
        f"The association specified an invalid value for property: '{prop}', detail: {detail}",
    )


# ---- associations (Confluent 8.x) ---------------------------------------------------------


def association_not_found(resource: str) -> RegistryError:
    return RegistryError(40410, f"Association for '{resource}' not found.")


def association_for_resource_exists(association_type: str, resource: str) -> RegistryError:
    return RegistryError(
        40903,
        f"An association of type '{association_type}' already exists for resource '{resource}'",
    )


def association_for_subject_exists(subject: str) -> RegistryError:
    return RegistryError(40904, f"An association already exists for subject '{subject}'")


def strong_association_exists(subject: str) -> RegistryError:
    return RegistryError(40905, f"A strong association already exists for subject '{subject}'")


def no_active_subject_version(subject: str) -> RegistryError:
    return RegistryError(40907, f"No active (non-deleted) version exists for subject '{subject}'")


def association_frozen(association_type: str, subject: str) -> RegistryError:
    # the double space is Confluent's
    return RegistryError(
        40908, f"The association of type  '{association_type}' is frozen for subject '{subject}'"
    )


# ---- 5xx ----------------------------------------------------------------------------------


def store_error(message: str) -> RegistryError:
    return RegistryError(50001, message)


def operation_timeout(message: str) -> RegistryError:
    return RegistryError(50002, message)


def forwarding_failed(message: str) -> RegistryError:
    return RegistryError(50003, message)


def unknown_leader(message: str = "Leader not known.") -> RegistryError:
    return RegistryError(50004, message)
