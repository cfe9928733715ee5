"""Candidates (a requested schema parsed, canonicalised, its references pinned) and
``POST /subjects/{subject}``: finding a schema among a subject's versions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from registry import errors, invalid_schemas
from registry.core import (
    Registry,
    SchemaRequest,
    iter_live,
)
from registry.formats.base import InvalidSchemaError, ParsedSchema
from registry.identity import schema_hash
from registry.rulesets import merge_metadata, merge_rule_sets
from registry.state import SchemaVersion
from registry.subjects import DEFAULT_CONTEXT, parse_subject

CONFLUENT_VERSION = "confluent:version"
#: ``SchemaVersion.forms`` bits: whether the stored text is known to equal its canonical
#: (normalised) re-print, or known to differ from it
CANONICAL_SAME, CANONICAL_DIFFERS, NORMALIZED_SAME, NORMALIZED_DIFFERS = 1, 2, 4, 8


@dataclass
class Candidate:
    """A requested schema after parsing, canonicalisation and reference pinning."""

    text: str
    schema_type: str
    references: list[dict[str, Any]]
    metadata: dict[str, Any] | None
    rule_set: dict[str, Any] | None
    #: the requested text parsed (``parsed``, on first use: a text stored as its own canonical
    #: form is found without it)
    parse: Callable[[], ParsedSchema] = field(repr=False, compare=False)

    @cached_property
    def parsed(self) -> ParsedSchema:
        return self.parse()

    @cached_property
    def digest(self) -> bytes:
        """Its identity hash (asked several times by one registration; fields never change)."""
        return schema_hash(self.text, self.references, self.metadata, self.rule_set)


def make_candidate(
    reg: Registry,
    subject: str,
    req: SchemaRequest,
    *,
    normalize: bool,
    strict: bool,
    include_deleted_refs: bool,
) -> Candidate:
    if req.schema is None or not req.schema.strip():
        raise errors.invalid_schema("Empty schema")
    references = [dict(r) for r in req.references or []]

    def invalid(reason: object) -> errors.RegistryError:
        if isinstance(reason, InvalidSchemaError) and reason.validation:
            # parsed, then failed 8.x's ``ParsedSchema.validate``
            return errors.invalid_schema(
                invalid_schemas.validation_message(
                    subject,
                    req.schema_type,
                    req.schema,
                    references,
                    req.metadata,
                    req.rule_set,
                    req.version,
                    reason.confluent or str(reason),
                )
            )
        if isinstance(reason, InvalidSchemaError) and reason.confluent:
            reason = reason.confluent
        # Confluent 8.5's wording: ``loadSchema`` wraps the format provider's message
        return errors.invalid_schema(
            invalid_schemas.message(
                subject,
                req.schema_type,
                req.schema,
                references,
                req.metadata,
                req.rule_set,
                str(reason),
            )
        )

    pinned = []
    for ref in references:
        try:
            target = reg.resolve_reference(subject, ref, include_deleted=include_deleted_refs)
        except errors.RegistryError as exc:
            # Confluent resolves references inside the format's parser, whose failure message
            # wraps the reason
            raise invalid(exc.message) from exc
        pinned.append({"name": ref["name"], "subject": ref["subject"], "version": target.version})
    if normalize:
        pinned = _sorted_unique(pinned)

    def parse() -> ParsedSchema:
        try:
            return reg.parse(
                subject,
                req.schema_type,
                str(req.schema),
                pinned,
                strict=strict,
                include_deleted_refs=include_deleted_refs,
            )
        except InvalidSchemaError as exc:
            raise invalid(exc) from exc

    if not strict and not normalize:
        stored = stored_as_canonical(reg, subject, req, pinned)
        if stored is not None:  # the text is its own canonical form: no parse needed
            return Candidate(
                stored.schema, stored.schema_type, pinned, req.metadata, req.rule_set, parse
            )
    parsed = parse()
    try:
        text = parsed.normalized() if normalize else parsed.canonical()
    except InvalidSchemaError as exc:
        raise invalid(exc) from exc
    return Candidate(text, parsed.schema_type, pinned, req.metadata, req.rule_set, lambda: parsed)


def stored_as_canonical(
    reg: Registry,
    subject: str,
    req: SchemaRequest,
    pinned: list[dict[str, Any]],
    *,
    learn: bool = True,
) -> SchemaVersion | None:
    """A version in ``subject``'s context whose stored text is exactly the requested one, of
    the same type, with the same (pinned) references, and known to be its own canonical form
    (so the request's lenient parse would re-print it unchanged, and its candidate is the
    stored text); None otherwise. Found through the identity hash of the text as given, as if
    it were canonical. Whether a stored text is canonical is learnt once per version (its
    ``forms``), by parsing it the first time it is asked (not with ``learn=False``: then a
    version whose form is not known yet is not taken)."""
    ctx = reg.state.context_of(subject)
    text = str(req.schema)
    schema_id = ctx.hashes.get(schema_hash(text, pinned, req.metadata, req.rule_set))
    if schema_id is None:
        return None
    sv = ctx.any_version_of(schema_id)
    if (
        sv is None
        or sv.schema != text
        or sv.schema_type != reg.format_of(req.schema_type).schema_type
        or _ref_keys(sv.references) != _ref_keys(pinned)
    ):
        return None
    if not sv.forms & (CANONICAL_SAME | CANONICAL_DIFFERS):
        if not learn:
            return None
        try:
            canonical = reg.parse_stored(sv).canonical()
        except (errors.RegistryError, InvalidSchemaError):
            return None
        sv.forms |= CANONICAL_SAME if canonical == sv.schema else CANONICAL_DIFFERS
    return sv if sv.forms & CANONICAL_SAME else None


def _sorted_unique(refs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen = {}
    for ref in refs:
        seen[(ref["name"], ref["subject"], ref["version"])] = ref
    return [seen[k] for k in sorted(seen)]


def can_lookup(reg: Registry, cand: Candidate, sv: SchemaVersion, normalize: bool) -> bool:
    """Confluent's "same schema" test beyond the identity hash: equal canonical text (of the
    stored schema re-parsed, for texts another registry wrote), equal references, metadata equal
    ignoring ``confluent:version``; or a reference-free candidate equal to the stored schema with
    its references inlined."""
    if cand.schema_type != sv.schema_type:
        return False
    if not _metadata_matches(cand.metadata, sv) or _given(cand.rule_set) != _given(sv.rule_set):
        return False
    same_refs = _ref_keys(cand.references) == _ref_keys(sv.references)
    if same_refs and cand.text == sv.schema:
        return True
    # Confluent's ``equivalent``: JSON Schema compares the candidate's text with the stored
    # schema's canonical text as stored, so a normalised candidate only finds a schema that
    # was stored normalised (a new id, issue 13); Avro and Protobuf compare the schemas, for
    # which normalising both sides stands in (a Protobuf text finds its descriptor form)
    normalize_stored = normalize and cand.schema_type != "JSON"
    same, differs = (
        (NORMALIZED_SAME, NORMALIZED_DIFFERS)
        if normalize_stored
        else (CANONICAL_SAME, CANONICAL_DIFFERS)
    )
    if same_refs and sv.forms & same:
        return False  # the stored form is the stored text, which is not the candidate's
    if not same_refs and not (not cand.references and sv.references):
        return False
    try:
        stored = reg.parse_stored(sv)
    except errors.RegistryError:
        return False
    if same_refs:
        stored_text = stored.normalized() if normalize_stored else stored.canonical()
        sv.forms |= same if stored_text == sv.schema else differs
        return stored_text == cand.text
    if not cand.references and sv.references:
        return cand.parsed.formatted("resolved") == stored.formatted("resolved")
    return False


def _metadata_matches(metadata: dict[str, Any] | None, sv: SchemaVersion) -> bool:
    """Confluent 8.x's ``canLookupIgnoringVersion``: metadata must be equal, except that a
    ``confluent:version`` only one side has is ignored (the candidate's must then name the
    stored version)."""
    mine, theirs = _version_number(metadata), _version_number(sv.metadata)
    if mine is None and theirs is not None:
        return _present(metadata) == _without_version(sv.metadata)
    if mine is not None and theirs is None:
        return mine == sv.version and _without_version(metadata) == _present(sv.metadata)
    # ``equivalent``: ``Objects.equals`` of the two, so an empty ``{}`` is not a missing one
    return _given(metadata) == _given(sv.metadata)


def _given(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """Metadata or a rule set as Confluent's entity holds it: None when not given, else its
    non-empty fields (``{"tags": {}}`` is the same as ``{}``)."""
    return None if value is None else _present(value)


def _version_number(metadata: dict[str, Any] | None) -> int | None:
    value = ((metadata or {}).get("properties") or {}).get(CONFLUENT_VERSION)
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _present(metadata: dict[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (metadata or {}).items() if v}


def _ref_keys(refs: Sequence[dict[str, Any]]) -> list[tuple[Any, Any, Any]]:
    return [(r.get("name"), r.get("subject"), r.get("version")) for r in refs]


def _without_version(metadata: dict[str, Any] | None) -> dict[str, Any]:
    if not metadata:
        return {}
    props = dict(metadata.get("properties") or {})
    props.pop(CONFLUENT_VERSION, None)
    out = {k: v for k, v in metadata.items() if v}
    if props:
        out["properties"] = props
    else:
        out.pop("properties", None)
    return out


def lookup_in_subject(
    reg: Registry,
    subject: str,
    req: SchemaRequest,
    *,
    normalize: bool,
    deleted: bool = False,
    latest_only: bool = False,
) -> SchemaVersion | None:
    """Find ``req`` among the subject's versions (3.5 of the reference); None if absent."""
    versions = reg.state.versions(subject)
    if not versions or req.schema is None or not req.schema.strip():
        # Confluent's ``canonicalizeSchema`` gives no schema for an empty text, and the look-up
        # then matches nothing (40403), where a registration refuses it (42201 "Empty schema")
        return None
    cand = make_candidate(
        reg, subject, req, normalize=normalize, strict=False, include_deleted_refs=True
    )
    ctx = reg.state.context_of(subject)
    if not latest_only:
        schema_id = ctx.hashes.get(cand.digest)
        if schema_id is not None:
            for sv in sorted(versions.values(), key=lambda v: -v.version):
                if sv.id == schema_id and (deleted or not sv.deleted):
                    return sv
    ordered = sorted(versions.values(), key=lambda v: -v.version)
    if latest_only:
        live = iter_live(ordered)
        ordered = live[:1]
    for sv in ordered:
        if (deleted or not sv.deleted) and can_lookup(reg, cand, sv, normalize):
            return sv
    return None


def _with_previous_metadata(
    reg: Registry, subject: str, req: SchemaRequest
) -> SchemaRequest | None:
    """Confluent's second lookup (``maybeSetMetadataRuleSet`` against the latest version):
    the request with the metadata and rule set a registration would give it; None if that
    changes nothing."""
    live = iter_live(reg.state.versions(subject).values())
    if not live:
        return None
    prev = max(live, key=lambda v: v.version)
    config = reg.effective_config(subject)
    metadata = merge_metadata(
        merge_metadata(
            config.get("defaultMetadata"),
            req.metadata if req.metadata is not None else prev.metadata,
        ),
        config.get("overrideMetadata"),
    )
    rule_set = merge_rule_sets(
        merge_rule_sets(
            config.get("defaultRuleSet"),
            req.rule_set if req.rule_set is not None else prev.rule_set,
        ),
        config.get("overrideRuleSet"),
    )
    if metadata is None and rule_set is None:
        return None
    populated = SchemaRequest(**{**vars(req), "metadata": metadata, "rule_set": rule_set})
    return (
        None
        if (populated.metadata, populated.rule_set) == (req.metadata, req.rule_set)
        else populated
    )


def lookup(
    reg: Registry, subject: str, req: SchemaRequest, *, normalize: bool, deleted: bool = False
) -> SchemaVersion:
    """``POST /subjects/{subject}``. Like Confluent 7.9 the name is not validated: an
    invalid one simply has no versions (40401)."""
    subject = parse_subject(subject).qualified
    normalize = normalize or bool(reg.effective_config(subject).get("normalize"))
    candidates = [subject]
    qs = parse_subject(subject)
    if qs.context == DEFAULT_CONTEXT:
        candidates += [
            f":{name}:{qs.name}" for name in reg.state.context_names() if name != DEFAULT_CONTEXT
        ]
    any_versions = False
    for name in candidates:
        versions = reg.state.versions(name)
        if not [v for v in versions.values() if deleted or not v.deleted]:
            continue
        any_versions = True
        found = lookup_in_subject(reg, name, req, normalize=normalize, deleted=deleted)
        if found is None:
            # as registration would: metadata and rule set from the latest version and config
            populated = _with_previous_metadata(reg, name, req)
            if populated is not None:
                found = lookup_in_subject(
                    reg, name, populated, normalize=normalize, deleted=deleted
                )
        if found is not None:
            return found
    if not any_versions:
        raise errors.subject_not_found(subject)
    raise errors.schema_not_found()
