"""Writing files the user owns without ever losing a byte of them.

Every write goes to a temporary file in the target's folder and is renamed over
the target, so a crash, a full disk or a read-only folder leaves the original as
it was. Rewriting a file in place also checks that nobody changed it since it was
read (size, modification time and content hash) and keeps a numbered backup that
never replaces an older one.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from refaudit.crashpoint import crash_point, left_behind, pid_tag
from refaudit.errors import InputError

log = logging.getLogger(__name__)

#: The process umask, read once at import (reading it means setting it, which is not thread-safe).
_UMASK = os.umask(0)
os.umask(_UMASK)

#: Numbered backups kept beside a rewritten file before refaudit refuses to add another.
MAX_BACKUPS = 1000


@dataclass(frozen=True)
class FileState:
    """What a file looked like when it was read: enough to notice any later edit."""

    path: Path
    size: int
    mtime_ns: int
    sha256: str
    data: bytes

    @classmethod
    def read(cls, path: Path) -> FileState:
        """Read a file and remember its state; symlinks are followed to the real file."""
        real = path.resolve()
        try:
            with real.open("rb") as stream:
                before = os.fstat(stream.fileno())
                data = stream.read()
        except OSError as error:
            raise InputError(f"cannot read file: {_reason(error)}", file=str(path)) from None
        return cls(real, before.st_size, before.st_mtime_ns, hashlib.sha256(data).hexdigest(), data)

    def changed_since(self) -> str | None:
        """Why the file on disk is no longer the one that was read, or None."""
        try:
            now = self.path.stat()
            data = self.path.read_bytes()
        except OSError as error:
            return f"it can no longer be read ({_reason(error)})"
        if now.st_size != self.size or hashlib.sha256(data).hexdigest() != self.sha256:
            return "its content changed"
        if now.st_mtime_ns != self.mtime_ns:
            return "it was rewritten (modification time changed)"
        return None


def refuse_overwriting_inputs(output: Path, inputs: Iterable[Path], *, option: str = "-o") -> None:
    """Refuse an output path that is (or links to) one of the inputs."""
    target = output.resolve()
    for source in inputs:
        if source.resolve() == target:
            raise InputError(
                f"{option} {output} is an input of this run; refusing to overwrite it",
                hint="write the output to another file",
            )


def write_atomically(path: Path, data: bytes, *, mode_from: Path | None = None) -> None:
    """Write `data` to `path` through a temporary file in the same folder and a rename.

    Raises InputError with one clear sentence (full disk, read-only folder, no
    permission); the previous content of `path`, if any, is untouched then.
    """
    write_atomically_with(path, lambda stream: stream.write(data), mode_from=mode_from)


def write_atomically_with(
    path: Path, writer: Callable[[BinaryIO], object], *, mode_from: Path | None = None
) -> None:
    """`write_atomically` for content too large to hold at once: `writer` writes it piecewise."""
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _remove_interrupted_writes(path)
        handle, temporary = tempfile.mkstemp(
            dir=folder, prefix=f".{path.name}.{pid_tag()}.", suffix=".tmp"
        )
    except OSError as error:
        raise _write_error(path, error) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            writer(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, _mode_for(path, mode_from))
        crash_point("atomic-write")
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise _write_error(path, error) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _remove_interrupted_writes(path: Path) -> None:
    """Remove what a killed earlier write of `path` left beside it, and say so."""
    for leftover in left_behind(path.parent, f".{path.name}."):
        leftover.unlink(missing_ok=True)
        log.warning(
            "note: an earlier write of %s was interrupted; its unfinished copy %s was removed"
            " and %s was left as it was",
            path,
            leftover.name,
            path.name,
        )


def rewrite_in_place(state: FileState, data: bytes) -> Path:
    """Replace the file `state` was read from with `data`, keeping a numbered backup.

    Refuses when the file changed since it was read. Returns the backup's path.
    """
    why = state.changed_since()
    if why is not None:
        raise InputError(
            f"{why} since refaudit read it; not rewritten, so that edit is not lost",
            file=str(state.path),
            hint="run the command again on the current file",
        )
    backup = next_backup_path(state.path)
    try:
        # O_EXCL: a backup appearing between the name check and here is never replaced.
        descriptor = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.chmod(backup, _mode_for(state.path, state.path))
    except OSError as error:
        raise _write_error(backup, error) from None
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(state.data)
            stream.flush()
            os.fsync(stream.fileno())
    except OSError as error:
        backup.unlink(missing_ok=True)
        raise _write_error(backup, error) from None
    crash_point("backup-written")
    write_atomically(state.path, data, mode_from=state.path)
    return backup


def next_backup_path(path: Path) -> Path:
    """`refs.bib.bak`, else the first free `refs.bib.bak.N`: an existing backup is never reused."""
    first = path.with_name(path.name + ".bak")
    if not os.path.lexists(first):
        return first
    for number in range(1, MAX_BACKUPS + 1):
        candidate = path.with_name(f"{path.name}.bak.{number}")
        if not os.path.lexists(candidate):
            return candidate
    raise InputError(
        f"{MAX_BACKUPS} backups of this file already exist; not rewritten",
        file=str(path),
        hint="delete old .bak files, or write the result elsewhere with -o",
    )


def _mode_for(path: Path, mode_from: Path | None) -> int:
    """The permissions a written file gets: those of `mode_from` (or of the file it
    replaces), else what the user's umask gives a new file, never mkstemp's 0600."""
    for existing in (mode_from, path):
        if existing is not None:
            try:
                return existing.stat().st_mode & 0o7777
            except OSError:
                continue
    return 0o666 & ~_UMASK


def _write_error(path: Path, error: OSError) -> InputError:
    return InputError(f"cannot write: {_reason(error)}; nothing was changed", file=str(path))


def _reason(error: OSError) -> str:
    if error.errno == errno.ENOSPC:
        return "no space left on the device"
    if error.errno == errno.EROFS:
        return "the file system is read-only"
    if error.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return error.strerror or str(error)
