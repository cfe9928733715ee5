"""``scan.comment_end``: where a Protobuf comment starting at a slash ends, the one rule that
``strip_comments`` and the nesting limit's scan share."""

from __future__ import annotations

import random
import re

from registry.formats.protobuf.scan import comment_end

# the comment a whole-text regex matched at a slash: the reference semantics
_OLD_COMMENT = re.compile(r"//[^\n]*|/\*.*?(?:\*/|\Z)", re.S)


def test_comment_end_examples() -> None:
    text = "a // x\nb /* y */ c / d /* open"
    assert comment_end(text, 2) == text.index("\n")  # the newline is not the comment's
    assert comment_end(text, 9) == text.index("*/") + 2
    assert comment_end(text, text.index("/ d")) == text.index("/ d")  # a lone slash
    assert comment_end(text, text.rindex("/*")) == len(text)  # unterminated: to the end
    assert comment_end("// to the end", 0) == len("// to the end")
    assert comment_end("/*/", 0) == 3  # "*/" cannot share the opening star
    assert comment_end("/**/", 0) == 4


def test_comment_end_agrees_with_the_regex_at_every_slash() -> None:
    rng = random.Random(3)
    for _ in range(5_000):
        text = "".join(rng.choice(["/", "*", "\n", "a", "*/", "/*"]) for _ in range(12))
        for at in (i for i, c in enumerate(text) if c == "/"):
            found = _OLD_COMMENT.match(text, at)
            assert comment_end(text, at) == (found.end() if found else at), (text, at)
