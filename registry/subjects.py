"""Subject names and contexts: ``:.ctx:name`` qualified names, validation, the default context.

A *qualified subject* ``:.team:orders`` is subject ``orders`` in context ``.team``; an unqualified
name lives in the default context ``.``. Names are kept qualified everywhere inside the registry
(default-context subjects stay unprefixed, as Confluent stores them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

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
    """Split ``:.ctx:name`` (see :func:`_parse`); names up to 200 characters are remembered
    (a registration asks for the same subject about ten times), longer ones not, so the memory
    stays bounded whatever names clients send."""
    if len(subject) <= 200:
        return _parse_remembered(subject)
    return _parse(subject)


@lru_cache(maxsize=4096)
def _parse_remembered(subject: str) -> QualifiedSubject:
    return _parse(subject)


def _parse(subject: str) -> QualifiedSubject:
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


#: ISO control characters (Java's ``Character.isISOControl``: U+0000-U+001F, U+007F-U+009F)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def subject_problem(subject: str) -> str | None:
    """Why ``subject`` cannot be written to (registered, deleted, configured as a subject), or
    ``None``. Confluent's ``isValidSubject``: no ISO control characters, not ``__GLOBAL`` or
    ``__EMPTY``, not in the ``.__GLOBAL`` context. Stricter on purpose (README, "Subject
    names"), for names that would stand for something else than one subject:

    * an empty name (``""``, ``:.:``, ``:.ctx:``, ``:.ctx``): ``:.ctx:`` is the context itself
      in ``/config`` and ``/mode``, so such a subject could not have its own settings
      (Confluent 8.3 refuses them too with ``schema.reject.empty.subject=true``);
    * ``:*:...``: the all-contexts wildcard of ``subjectPrefix`` (Confluent reads it as a
      context named ``*``);
    * a context name that cannot be written in a ``/contexts/{context}/...`` URL or a rule
      (``/`` or ``*`` in it, as :func:`is_valid_context`).
    """
    if _CONTROL.search(subject) is not None:
        return "it contains a control character"
    if subject.startswith(WILDCARD):
        return f"'{WILDCARD}' is the wildcard of every context, not a context"
    qs = parse_subject(subject)
    if qs.name in RESERVED_SUBJECTS:
        return f"'{qs.name}' is reserved"
    if qs.context == GLOBAL_CONTEXT:
        return f"'{GLOBAL_CONTEXT}' holds global settings only"
    if not is_valid_context(qs.context):
        return f"the context name '{qs.context}' may not contain '/' or '*'"
    if qs.name == "":
        return "the subject name is empty"
    return None


def is_valid_subject(subject: str) -> bool:
    """Whether ``subject`` may be written to (:func:`subject_problem` finds nothing)."""
    return subject_problem(subject) is None


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
