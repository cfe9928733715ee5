"""The registry core: store + in-memory state + formats, the write path, and the rules shared
by every operation (subject validation, version ids, reference resolution, effective config and
mode). Operations live in a module per family: ``registry.reads``, ``registry.lookups``,
``registry.registration``, ``registry.compat_checks``, ``registry.deletion``, ``registry.configs``.
"""

from __future__ import annotations

import copy
import gc
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, TypeVar

from registry import budget, errors, records
from registry.formats.base import Dependency, InvalidSchemaError, ParsedSchema, SchemaFormat
from registry.group_commit import GroupCommit, Pending
from registry.path_numbers import java_int, java_trim
from registry.records import Record, RecordKey
from registry.settings import Settings
from registry.state import SchemaVersion, State
from registry.store.base import LogStore, WriteConflict
from registry.subjects import DEFAULT_CONTEXT, GLOBAL_CONTEXT, is_valid_subject, parse_subject
from registry.verdict_cache import VerdictCache

log = logging.getLogger(__name__)

T = TypeVar("T")
Draft = tuple[RecordKey, dict[str, Any] | None]
LATEST = -1
MAX_VERSION = 2**31 - 1
GLOBAL_KEY = f":{GLOBAL_CONTEXT}:"
READ_ONLY_MODES = ("READONLY", "READONLY_OVERRIDE")
#: config fields a subject's own config takes from the global record when it lacks them
GLOBAL_FALLBACK_FIELDS = (
    "normalize",
    "validateFields",
    "validateNewSchemas",
    "validateRules",
    "compatibilityPolicy",
    "compatibilityGroup",
)
MODES = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")


@dataclass
class SchemaRequest:
    """A parsed ``RegisterSchemaRequest`` body."""

    schema: str | None = None
    schema_type: str = "AVRO"
    references: list[dict[str, Any]] | None = None
    metadata: dict[str, Any] | None = None
    rule_set: dict[str, Any] | None = None
    id: int | None = None
    version: int | None = None


#: records applied at once after which the state is frozen out of the garbage collector
FREEZE_AFTER = 10_000
#: how many times a batch is decided again when the store reports a write conflict
CONFLICT_RETRIES = 3
#: how a parse failure that says nothing about the text begins (``formats.protobuf.compiler``)
TRANSIENT_PARSE_ERROR = "protoc failed"


#: memory a parsed schema takes per byte of its text (measured: a parsed Avro record of 683
#: bytes takes 8 KB with its canonical form), plus a fixed part
PARSED_BYTES_PER_TEXT_BYTE = 12
PARSED_FIXED_BYTES = 1024


def parsed_cost(text: str) -> int:
    """The estimated memory of a parsed schema of ``text`` (what the parse cache counts)."""
    return PARSED_FIXED_BYTES + PARSED_BYTES_PER_TEXT_BYTE * len(text)


class Registry:
    """One registry instance: applies the store's log to its state and serialises writes."""

    def __init__(
        self,
        store: LogStore,
        settings: Settings | None = None,
        formats: Mapping[str, SchemaFormat] | None = None,
    ) -> None:
        self.store = store
        self.settings = settings or Settings()
        self.formats: dict[str, SchemaFormat] = dict(formats or default_formats(self.settings))
        self.state = State()
        self._write_lock = threading.RLock()
        #: the writes waiting for the store (``registry.group_commit``)
        self._group = GroupCommit(self._commit_batch, self._write_lock)
        #: parsed schemas, and the error of a text that did not parse (raised again as a copy),
        #: by (type, text, dependencies, strict), least recently used first, with the memory
        #: each is estimated to take (:func:`parsed_cost`); registrations parse before the
        #: write lock, so several threads use it (``_parse_cache_lock``)
        self._parse_cache: OrderedDict[
            tuple[Any, ...], tuple[ParsedSchema | InvalidSchemaError, int]
        ] = OrderedDict()
        self._parse_cache_bytes = 0
        self._parse_cache_lock = threading.Lock()
        #: compatibility verdicts (``registry.compat_checks``)
        self.verdicts = VerdictCache()
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None
        #: called in the writer's context with each write's drafts before they are applied to
        #: the state; what it returns is called once they are (``registry.audit.changes``)
        self.change_observer: (
            Callable[[Sequence[Draft], State], Callable[[], None] | None] | None
        ) = None

    # ---- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        self.store.open()
        count = 0
        # a separate keys log first (KEKs and DEKs depend on nothing else; once iter_all
        # ends, the store's listener may apply new records concurrently)
        for record in getattr(self.store, "iter_keys", list)():
            self.state.apply(record)
        for record in self.store.iter_all():
            self.state.apply(record)
            count += 1
            if count % FREEZE_AFTER == 0:
                gc.freeze()  # the collector's full passes would walk the replayed state again
        # the replayed state is millions of long-lived objects: without this every full
        # garbage collection walks them all (registration cost 3x at 200,000 records)
        gc.collect()
        gc.freeze()
        log.info(
            "replayed %d records from %s (offset %d)",
            count,
            self.store.description,
            self.state.offset,
        )
        if self.settings.poll_interval > 0:
            self._poller = threading.Thread(target=self._poll, name="store-poller", daemon=True)
            self._poller.start()

    def stop(self) -> None:
        self._stop.set()
        self._group.close()
        if self._poller is not None:
            self._poller.join(timeout=5)
        self.store.close()

    def refresh(self) -> None:
        """Apply records other processes have committed since our last one."""
        with self._write_lock:
            applied = self._catch_up(self.store)
        if applied >= FREEZE_AFTER:
            # a replay going on in the background (Kafka): keep its objects out of the
            # collector's full passes too, as :meth:`start` does
            gc.freeze()

    def _catch_up(self, source: Any) -> int:
        """Apply what ``source`` (the store or a write's transaction) has after our state,
        and what its separate keys log has, if it keeps one; return how many records."""
        batch = source.read_after(self.state.offset)
        self.state.apply_all(batch)
        count = len(batch)
        read_keys = getattr(source, "read_keys_after", None)
        if read_keys is not None:
            keys = read_keys(self.state.encryption_keys.offset)
            self.state.apply_all(keys)
            count += len(keys)
        return count

    def _poll(self) -> None:
        while not self._stop.wait(self.settings.poll_interval):
            try:
                self.refresh()
            except Exception:  # keep polling whatever the store did
                log.exception("polling the store failed")

    # ---- the write path -------------------------------------------------------------------

    def write(self, decide: Callable[[], tuple[Sequence[Draft], T]]) -> T:
        """Run ``decide`` on the write path and return its result once its records are durable
        in the store and applied to the state (or raise its error). Writes arriving together
        are committed as one batch (``registry.group_commit``)."""
        return self._group.write(decide)

    def write_async(self, decide: Callable[[], tuple[Sequence[Draft], T]]) -> Awaitable[T]:
        """:meth:`write` from the event loop: awaiting the answer costs no worker thread."""
        return self._group.write_async(decide)

    def _commit_batch(self, batch: list[Pending]) -> None:
        """:meth:`_commit_batch_once`, decided again (up to :data:`CONFLICT_RETRIES` times) when
        the store finds, before committing, that records the decision had not seen were
        committed before the batch's own (:class:`WriteConflict`: nothing was committed)."""
        conflict: WriteConflict | None = None
        for attempt in range(CONFLICT_RETRIES + 1):
            try:
                self._commit_batch_once(batch)
                return
            except WriteConflict as exc:
                log.warning("write decided again (attempt %d): %s", attempt + 2, exc)
                for pending in batch:
                    pending.result = pending.error = None
                    pending.staged = 0
                conflict = exc
        for pending in batch:
            pending.error = errors.store_error(f"Error while writing to the store: {conflict}")
            pending.done = True

    def _commit_batch_once(self, batch: list[Pending]) -> None:
        """Catch up under the store's exclusive lock; decide the writes one after another, each
        against the state plus the records the earlier ones drafted (applied tentatively, with
        offset and timestamp -1, through the state's undo journal); undo the tentative records
        at once, before any I/O; then append every draft in one store transaction and, once it
        is committed, apply the committed records (offsets and timestamps assigned), so the
        state is exactly what replaying the log gives. Readers see a batch's records only
        while its writes are being decided (CPU work, the expensive parts of which were done
        before the write lock: ``registry.registration``), never while the commit is in
        flight. A write whose ``decide`` raises fails alone. When the transaction fails,
        every write decided after the first one that drafted records fails with the store's
        error (their answers may rest on records that were never stored)."""
        first_draft: int | None = None
        decided = False
        try:
            try:
                with self.store.exclusive() as txn:
                    self._catch_up(txn)
                    staged: list[tuple[bytes, bytes | None]] = []
                    self.state.begin_tentative()
                    try:
                        for index, pending in enumerate(batch):
                            self._decide_one(pending, staged)
                            if pending.staged and first_draft is None:
                                first_draft = index
                    finally:
                        self.state.rollback()
                    decided = True
                    if staged:
                        txn.append(staged)
            except (errors.RegistryError, WriteConflict):
                raise
            except Exception as exc:
                log.exception("store write failed")
                raise errors.store_error(f"Error while writing to the store: {exc}") from exc
        except errors.RegistryError as exc:
            if not decided:
                start = 0  # nothing was decided
            elif first_draft is None:
                start = len(batch)  # every answer rests on committed records only
            else:
                start = first_draft
            for pending in batch[start:]:
                pending.result = None
                pending.error = _clone_error(exc)
            for pending in batch:
                pending.done = True
            return
        self.state.apply_all(txn.appended)
        for pending in batch:
            pending.done = True

    def _decide_one(self, pending: Pending, staged: list[tuple[bytes, bytes | None]]) -> None:
        try:
            # in the writer's own context: its work allowance (``registry.budget``), not that of
            # the thread committing the batch
            waited = time.monotonic() - pending.queued_at
            drafts, pending.result = pending.context.run(_decide_after, pending.decide, waited)
            encoded = [(key.to_bytes(), records.encode_value(value)) for key, value in drafts]
        except errors.RegistryError as exc:
            pending.error = exc
            return
        except Exception as exc:
            log.exception("deciding a write failed")
            pending.error = errors.store_error(f"Error while writing to the store: {exc}")
            return
        observed = self._observe(pending, drafts) if self.change_observer is not None else None
        for key, value in encoded:
            self.state.apply(Record(key=key, value=value, offset=-1, timestamp=-1))
        if observed is not None:
            try:
                observed()
            except Exception:
                log.exception("observing a write failed")
        staged.extend(encoded)
        pending.staged = len(encoded)

    def _observe(self, pending: Pending, drafts: Sequence[Draft]) -> Callable[[], None] | None:
        """:attr:`change_observer` of ``drafts`` in the writer's context; never raises (an
        observer's failure does not fail the write)."""
        observer = self.change_observer
        if observer is None or not drafts:
            return None
        try:
            return pending.context.run(observer, drafts, self.state)
        except Exception:
            log.exception("observing a write failed")
            return None

    # ---- shared rules ---------------------------------------------------------------------

    def format_of(self, schema_type: str) -> SchemaFormat:
        fmt = self.formats.get(schema_type)
        if fmt is None:
            raise errors.invalid_schema(f"Invalid schema type {schema_type}")
        return fmt

    def parse(
        self,
        subject: str,
        schema_type: str,
        text: str,
        references: Sequence[Mapping[str, Any]],
        *,
        strict: bool,
        include_deleted_refs: bool,
    ) -> ParsedSchema:
        """Parse with references resolved in ``subject``'s context. Raises 42201 for a
        reference that does not resolve and :class:`InvalidSchemaError` for invalid text."""
        fmt = self.format_of(schema_type)
        deps = tuple(self.dependencies(subject, references, include_deleted=include_deleted_refs))
        cache_key = (fmt.schema_type, text, deps, strict)
        cached = self._parse_cache.get(cache_key)
        if cached is None and not strict:
            # a text that passed the strict checks parses the same without them (a
            # registration parses strictly before its look-up asks for the lenient parse)
            strict_key = (fmt.schema_type, text, deps, True)
            stricter = self._parse_cache.get(strict_key)
            if stricter is not None and _lenient_alike(stricter[0]):
                cache_key, cached = strict_key, stricter
        if cached is not None:
            with suppress(KeyError):  # another thread may have just evicted it
                self._parse_cache.move_to_end(cache_key)
            if isinstance(cached[0], InvalidSchemaError):
                raise copy.copy(cached[0])
            return cached[0]
        try:
            try:
                parsed = fmt.parse(text, deps, strict=strict)
            except RecursionError as exc:
                raise InvalidSchemaError("Schema is nested too deeply") from exc
        except InvalidSchemaError as exc:
            # the same text fails the same way: a registration checked before the write lock
            # (``registry.registration``) is not parsed again inside it. Not a protoc child
            # that died (killed, out of memory): that may go otherwise next time
            if not str(exc).startswith(TRANSIENT_PARSE_ERROR):
                self._remember_parsed(cache_key, copy.copy(exc), parsed_cost(text))
            raise
        self._remember_parsed(cache_key, parsed, parsed_cost(text))
        return parsed

    def _remember_parsed(
        self, cache_key: tuple[Any, ...], parsed: ParsedSchema | InvalidSchemaError, cost: int
    ) -> None:
        """Cache ``parsed``, dropping the least recently used entries while the cache is over
        ``parse_cache_bytes`` (estimated) or ``parse_cache_size`` entries."""
        with self._parse_cache_lock:
            cache = self._parse_cache
            old = cache.pop(cache_key, None)
            if old is not None:
                self._parse_cache_bytes -= old[1]
            cache[cache_key] = (parsed, cost)
            self._parse_cache_bytes += cost
            max_bytes, max_count = self.settings.parse_cache_bytes, self.settings.parse_cache_size
            while len(cache) > 1 and (
                self._parse_cache_bytes > max_bytes or len(cache) > max_count
            ):
                _, (_, dropped) = cache.popitem(last=False)
                self._parse_cache_bytes -= dropped

    def has_parsed(self, schema_type: str, text: str) -> bool:
        """Whether a reference-free ``text`` is in the parse cache (lookups of it then need
        no parsing and can be answered without a worker thread)."""
        entry = self._parse_cache.get((schema_type, text, (), False))
        return entry is not None and isinstance(entry[0], ParsedSchema)

    def parse_stored(self, sv: SchemaVersion) -> ParsedSchema:
        try:
            return self._parse_stored(sv)
        except InvalidSchemaError as exc:
            raise errors.invalid_schema(f"Stored schema {sv.id} is invalid: {exc}") from exc

    def _parse_stored(self, sv: SchemaVersion) -> ParsedSchema:
        return self.parse(
            sv.subject,
            sv.schema_type,
            sv.schema,
            sv.references,
            strict=False,
            include_deleted_refs=True,
        )

    def dependencies(
        self, subject: str, references: Sequence[Mapping[str, Any]], *, include_deleted: bool
    ) -> list[Dependency]:
        """The transitive closure of ``references``, dependencies first, each name once."""
        out: list[Dependency] = []
        seen: set[str] = set()
        self._collect(subject, references, include_deleted, out, seen, 0)
        return out

    def _collect(
        self,
        subject: str,
        references: Sequence[Mapping[str, Any]],
        include_deleted: bool,
        out: list[Dependency],
        seen: set[str],
        depth: int,
    ) -> None:
        if depth > 64:
            raise errors.invalid_schema("Schema references are nested too deeply")
        for ref in references:
            name = ref.get("name")
            if name in seen:
                continue
            target = self.resolve_reference(subject, ref, include_deleted=include_deleted)
            seen.add(str(name))
            self._collect(target.subject, target.references, include_deleted, out, seen, depth + 1)
            out.append(Dependency(str(name), target.schema))

    def resolve_reference(
        self, subject: str, ref: Mapping[str, Any], *, include_deleted: bool
    ) -> SchemaVersion:
        name, ref_subject, version = ref.get("name"), ref.get("subject"), ref.get("version")
        # Confluent refuses only a missing field; an empty name is a name
        if name is None or not ref_subject or version is None:
            raise errors.invalid_schema(
                f"Invalid reference: {{name='{_java(name)}', subject='{_java(ref_subject)}', "
                f"version={_java(version)}}}"
            )
        target_subject = parse_subject(subject).sibling(str(ref_subject)).qualified
        versions = self.state.versions(target_subject)
        sv: SchemaVersion | None
        if version == LATEST:
            live = [v for v in versions.values() if not v.deleted]
            sv = max(live, key=lambda v: v.version) if live else None
        else:
            sv = versions.get(int(version))
            if sv is not None and sv.deleted and not include_deleted:
                sv = None
        if sv is None:
            raise errors.invalid_schema(
                f'No schema reference found for subject "{ref_subject}" and version {version}'
            )
        return sv

    def valid_subject(self, subject: str) -> str:
        if not is_valid_subject(subject):
            raise errors.invalid_subject(subject)
        return parse_subject(subject).qualified

    # ---- config and mode resolution -------------------------------------------------------

    def stored_config(self, key: str | None) -> dict[str, Any] | None:
        setting = self.state.configs.get(key)
        return dict(setting.value) if setting else None

    def effective_config(self, subject: str | None) -> dict[str, Any]:
        """Confluent's ``getConfigInScope``: the subject's own record (a missing level is the
        server default; :data:`GLOBAL_FALLBACK_FIELDS` it lacks come from the global record),
        else the context or global record, then ``:.__GLOBAL:``, then the server default
        level."""
        default = {"compatibilityLevel": self.settings.compatibility_level}
        scope = self._scope_key(subject)
        if subject and not _is_scope_key(subject):
            own = self.stored_config(subject)
            if own is not None:
                # Confluent's Config.mergeConfigs (all lines since June 2026): these fields
                # fall back to the global record's
                top = self.stored_config(None) or {}
                inherited = {k: top[k] for k in GLOBAL_FALLBACK_FIELDS if top.get(k) is not None}
                return {**default, **inherited, **{k: v for k, v in own.items() if v is not None}}
        for key in (scope, GLOBAL_KEY):
            found = self.stored_config(key)
            if found is not None:
                return {**default, **found}
        return default

    def effective_mode(self, subject: str | None) -> str:
        """Confluent 7.9's ``getModeInScope``: a global READONLY_OVERRIDE beats every other
        mode; else the subject's, its context's (or the global one), then READWRITE."""
        top = self.state.modes.get(None)
        if top is not None and top.value.get("mode") == "READONLY_OVERRIDE":
            return "READONLY_OVERRIDE"
        scope = self._scope_key(subject)
        keys: list[str | None] = [scope, GLOBAL_KEY]
        if subject and not _is_scope_key(subject):
            keys.insert(0, subject)
        for key in keys:
            setting = self.state.modes.get(key)
            if setting is not None and setting.value.get("mode"):
                return str(setting.value["mode"])
        return "READWRITE"

    @staticmethod
    def _scope_key(subject: str | None) -> str | None:
        if not subject:
            return None
        return parse_subject(subject).context_key if subject != GLOBAL_KEY else GLOBAL_KEY


def _lenient_alike(parsed: ParsedSchema | InvalidSchemaError) -> bool:
    """Whether a strict parse stands for the lenient one: a success, and not Confluent 7.9's
    Avro rules (whose normalised form checks defaults when strict)."""
    return isinstance(parsed, ParsedSchema) and not getattr(parsed, "legacy_7_9", False)


def _decide_after(decide: Callable[[], T], waited: float) -> T:
    """Run ``decide`` (in its writer's context) with the time it waited in the queue left out
    of its request's work allowance."""
    budget.exclude_wait(waited)
    return decide()


def _clone_error(exc: errors.RegistryError) -> errors.RegistryError:
    """A copy of ``exc`` for each writer of a failed batch (each thread raises its own)."""
    clone = type(exc).__new__(type(exc))
    clone.__dict__.update(exc.__dict__)
    clone.args = exc.args
    clone.__cause__ = exc.__cause__
    return clone


def _is_scope_key(subject: str) -> bool:
    qs = parse_subject(subject)
    return qs.name == "" or subject == GLOBAL_KEY


def _java(value: object) -> str:
    return "null" if value is None else str(value)


def parse_version(value: str | int, *, allow_latest: bool = True) -> int:
    """A version path parameter: ``latest`` (any case) or ``-1`` is :data:`LATEST`; otherwise an
    integer in [1, 2^31-1]; anything else is 42202."""
    if isinstance(value, str):
        text = java_trim(value)  # Confluent's VersionId: trim, then Integer.parseInt
        if text.lower() == "latest":
            return LATEST
        parsed = java_int(text)
        if parsed is None:
            raise errors.invalid_version(value)
        number = parsed
    else:
        number = value
    if number == LATEST and allow_latest:
        return LATEST
    if number < 1 or number > MAX_VERSION:
        raise errors.invalid_version(value)
    return number


def default_formats(settings: Settings | None = None) -> dict[str, SchemaFormat]:
    """The formats installed: Avro always, others when their modules are present."""
    from registry.formats.avro import AvroFormat

    legacy = settings is not None and settings.avro_7_9_validation
    found: dict[str, SchemaFormat] = {"AVRO": AvroFormat(legacy_7_9=legacy)}
    for module, name in (
        ("registry.formats.protobuf", "ProtobufFormat"),
        ("registry.formats.json_schema", "JsonSchemaFormat"),
    ):
        try:
            mod = __import__(module, fromlist=[name])
        except ImportError:
            continue
        factory = getattr(mod, name, None)
        if factory is None:  # a package still being written (no exports yet) is not installed
            continue
        fmt = factory()
        found[fmt.schema_type] = fmt
    return found


def context_of_key(key: str | None) -> str:
    return parse_subject(key).context if key else DEFAULT_CONTEXT


def iter_live(versions: Iterable[SchemaVersion]) -> list[SchemaVersion]:
    return [v for v in versions if not v.deleted]
