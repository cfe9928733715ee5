"""Counting the work a piece of code does instead of timing it (a unit test on a shared, loaded
machine cannot assert wall-clock bounds; speed is measured in bench/)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any


def python_calls(work: Callable[[], object]) -> int:
    """The number of Python function calls ``work()`` makes (deterministic for a given input):
    code that goes quadratic in its input makes quadratically many calls."""
    count = 0

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal count
        if event == "call":
            count += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(previous)
    return count


def assert_linear(work_for: Callable[[int], int], size: int, per_item: int) -> None:
    """``work_for(n)`` (a count of steps for an input of ``n`` items) grows linearly: doubling
    the input at most doubles the work (plus 5 %), and each item costs at most ``per_item``."""
    small, large = work_for(size), work_for(2 * size)
    assert large <= 2.1 * small, f"{size} items: {small} steps; {2 * size} items: {large} steps"
    assert small <= per_item * size, f"{size} items cost {small} steps, over {per_item} each"
