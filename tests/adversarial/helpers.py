"""Helpers for the hostile-input cases.

A hang becomes a test failure, not a stuck CI job; a permission case runs without root's
exemption from file permissions even when the suite runs as root.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import signal
import sys
from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest

T = TypeVar("T")


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


# Linux capabilities that let root read, search and write whatever the permissions say.
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2
_CAPABILITY_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _drop_permission_override() -> str | None:
    """Give up root's exemption from file permissions; None, or why that failed."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        header = _CapHeader(_CAPABILITY_VERSION_3, 0)
        data = (_CapData * 2)()
        if libc.capget(ctypes.byref(header), data) != 0:
            return f"capget: {os.strerror(ctypes.get_errno())}"
        keep = ~((1 << _CAP_DAC_OVERRIDE) | (1 << _CAP_DAC_READ_SEARCH)) & 0xFFFFFFFF
        data[0].effective &= keep
        data[0].permitted &= keep
        if libc.capset(ctypes.byref(header), data) != 0:
            return f"capset: {os.strerror(ctypes.get_errno())}"
    except (AttributeError, OSError) as error:
        return str(error)
    return None


def as_unprivileged(work: Callable[[], T]) -> T:
    """`work()` run where file permissions apply, and its return value.

    Root ignores them, so as root `work` runs in a forked child that first drops
    the capabilities exempting it (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH); it stays
    uid 0, so it can still read the interpreter under /root, which `nobody` could
    not. The answer comes back pickled. Skips, saying why, where the capabilities
    cannot be dropped (not Linux).
    """
    if os.geteuid() != 0:
        return work()
    if not sys.platform.startswith("linux"):
        pytest.skip("running as root, and dropping root's permission override needs Linux")
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's coverage is not collected
        os.close(reader)
        answer: tuple[str, object]
        try:
            why = _drop_permission_override()
            answer = ("skip", why) if why else ("ok", work())
        except BaseException as error:  # noqa: BLE001 - everything goes back to the parent
            answer = ("error", repr(error))
        with os.fdopen(writer, "wb") as out:
            pickle.dump(answer, out)
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as incoming:
        data = incoming.read()
    os.waitpid(child, 0)
    status, value = pickle.loads(data)
    if status == "skip":
        pytest.skip(f"running as root and root's permission override cannot be dropped: {value}")
    if status == "error":
        pytest.fail(f"without root's permission override: {value}")
    return value  # type: ignore[no-any-return]
