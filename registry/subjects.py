"""Subject names and contexts: ``:.ctx:name`` qualified names, validation, the default context.

A *qualified subject* ``:.team:orders`` is subject ``orders`` in context ``.team``; an unqualified
name lives in the default context ``.``. Names are kept qualified everywhere inside the registry
(default-context subjects stay unprefixed, as Confluent stores them).
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_CONTEXT = "."
GLOBAL_CONTEXT = ".__GLOBAL"
WILDCARD = ":*:"
RESERVED_SUBJECTS = frozenset({"__GLOBAL", "__EMPTY"})


@dataclass(frozen=True, slots=True)
class QualifiedSubject:
    context: str
    name: str

    @property
    def qualified(self) -> str:
        """The stored form: bare name in the default context, ``:.ctx:name`` elsewhere."""
        if self.context == DEFAULT_CONTEXT:
            return self.name
        return f":{self.context}:{self.name}"

    @property
    def context_key(self) -> str | None:
        """The config/mode key of this subject's context: ``None`` (global) or ``:.ctx:``."""
        if self.context == DEFAULT_CONTEXT:
            return None
        return f":{self.context}:"

    def sibling(self, name: str) -> QualifiedSubject:
        """Resolve ``name`` (maybe qualified) relative to this subject's context."""
        other = parse_subject(name)
        if name.startswith(":"):
            return other
        return QualifiedSubject(self.context, other.name)


def parse_subject(subject: str) -> QualifiedSubject:
    """Split ``:.ctx:name`` into context and name (Confluent's ``QualifiedSubject``): ``:.ctx``
    without its closing colon is the context itself (an empty name), like ``:.ctx:``; anything
    not starting with ``:.`` is in the default context."""
    if subject.startswith(":."):
        end = subject.find(":", 2)
        if end < 0:
            context, name = subject[1:], ""
        else:
            context, name = subject[1:end], subject[end + 1 :]
        if context in ("", DEFAULT_CONTEXT):
            return QualifiedSubject(DEFAULT_CONTEXT, name)
        return QualifiedSubject(context, name)
    return QualifiedSubject(DEFAULT_CONTEXT, subject)


def qualify(subject: str) -> str:
    """The canonical stored form of a subject path parameter (``:.:foo`` becomes ``foo``)."""
    return parse_subject(subject).qualified


def is_valid_subject(subject: str) -> bool:
    """Confluent's rule: no ISO control characters, not a reserved name, not global context."""
    if any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in subject):
        return False
    qs = parse_subject(subject)
    if qs.name in RESERVED_SUBJECTS:
        return False
    return qs.context != GLOBAL_CONTEXT


def is_valid_context(context: str) -> bool:
    if context == DEFAULT_CONTEXT:
        return True
    if not context.startswith(".") or ":" in context or len(context) < 2:
        return False
    return not any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F or ch in "/*" for ch in context)


def matches_prefix(subject: str, prefix: str) -> bool:
    """``subjectPrefix`` semantics: ``:*:`` matches every context; ``:.ctx:`` a whole context;
    otherwise a plain string prefix of the qualified name (an unqualified prefix is in the
    default context)."""
    if prefix in ("", WILDCARD):
        return prefix == WILDCARD or parse_subject(subject).context == DEFAULT_CONTEXT
    if prefix.startswith(WILDCARD):
        return parse_subject(subject).name.startswith(prefix[len(WILDCARD) :])
    qp = parse_subject(prefix)
    qs = parse_subject(subject)
    return qs.context == qp.context and qs.name.startswith(qp.name)
