"""A local mirror of the Crossref and OpenAlex bulk files and the Retraction Watch CSV.

`refaudit mirror build` loads the public dumps (`loaders`) into a store
(`store`: SQLite by default, PostgreSQL for scale), `refaudit mirror update`
brings it forward from the live APIs (`update`), and the `mirror` source
(`refaudit.sources.mirror`) lets `check` and `batch` take their evidence from it
first (`evidence`), or only from it with `--sources mirror`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from refaudit.config import MIRROR_SOURCE, Settings
from refaudit.mirror.store import (
    MirrorBuilder,
    MirrorInfo,
    MirrorStore,
    display_location,
    is_postgres,
)
from refaudit.models import MirrorState

FILENAME = "mirror.sqlite3"


def default_location(settings: Settings) -> str:
    """The embedded mirror's file, in the platform's data folder."""
    return str(settings.resolved_data_dir() / FILENAME)


def mirror_location(settings: Settings, given: str | None = None) -> str | None:
    """Where the mirror is (None: none configured and `mirror` not among the sources).

    `given` (a `--db` flag) wins, then `--mirror` / REFAUDIT_MIRROR / `[mirror] url`;
    an empty value, or `mirror` in the sources alone, means the default SQLite file.
    """
    value = given if given is not None else settings.mirror
    if value is None and MIRROR_SOURCE not in settings.sources:
        return None
    if not value or value == "default":
        return default_location(settings)
    return value if is_postgres(value) else str(Path(value).expanduser())


def open_mirror(settings: Settings) -> MirrorStore | None:
    """The configured mirror, opened for reading; MirrorError when it cannot be."""
    location = mirror_location(settings)
    return open_store(location) if location else None


def mirror_state(info: MirrorInfo) -> MirrorState:
    """What a report says about the mirror it used: where, how big, how old."""
    return MirrorState(
        location=display_location(info.location),
        backend=info.backend,
        built_at=info.built_at,
        updated_at=info.updated_at,
        age_days=info.age_days(),
        records=dict(info.records),
    )


def open_store(location: str, *, writable: bool = False) -> MirrorStore:
    """The mirror at `location`; MirrorError when nothing was built there yet."""
    if is_postgres(location):
        from refaudit.mirror.postgres import PostgresStore

        return PostgresStore(location)
    from refaudit.mirror.sqlite import SqliteStore

    return SqliteStore(Path(location), writable=writable)


@contextmanager
def new_builder(location: str) -> Iterator[MirrorBuilder]:
    """A builder for `location`; anything short of `publish()` leaves the old mirror in place."""
    if is_postgres(location):
        from refaudit.mirror.postgres import PostgresBuilder

        builder: MirrorBuilder = PostgresBuilder(location)
    else:
        from refaudit.mirror.sqlite import SqliteBuilder

        builder = SqliteBuilder(Path(location))
    try:
        yield builder
    except BaseException:
        builder.discard()
        raise
