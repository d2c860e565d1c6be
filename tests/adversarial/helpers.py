"""Helpers for the hostile-input cases: a hang becomes a test failure, not a stuck CI job."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

import pytest


@contextlib.contextmanager
def finishes_within(seconds: int) -> Iterator[None]:
    """Fail (rather than hang) when the block runs far longer than linear work could.

    The bound is a generous guard against quadratic blow-ups (minutes), not a speed
    target: bench/hostile_inputs.py measures the actual scaling.
    """
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def expire(signum: int, frame: object) -> None:
        pytest.fail(f"still running after {seconds}s: the work is not linear in the input")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
