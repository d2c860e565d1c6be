"""`kill -9` at named points: what was there before survives, and the next run says so.

Each case runs refaudit in a child process with `REFAUDIT_CRASH_AT=<point>`, which
makes it SIGKILL itself there (`refaudit.crashpoint`): no `finally`, no cleanup, as
with a power cut. The points are fixed, so the cases never flake. Afterwards the
previous mirror, snapshot, bibliography and cache must be intact and usable, and
the next run must name what was interrupted.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from refaudit.cache import QuotaRow, ResponseCache
from refaudit.config import load_settings
from refaudit.crashpoint import CRASH_AT
from refaudit.mirror import open_store
from refaudit.retractions.download import download_snapshot
from tests.adversarial.test_retraction_updates import csv_with, installed_rows, serving
from tests.mirror_dumps import RESNET_DOI, build_test_mirror, write_dumps
from tests.test_serve_transports import served_over_http, server_environment
from tests.test_server import WIDGETS, upstreams

ROOT = Path(__file__).parents[2]
KILLED = -signal.SIGKILL
WRONG_YEAR = """@article{lovelace2019,
  title = {Deep learning for widget inspection},
  author = {Lovelace, Ada},
  year = {2017},
  doi = {10.1234/widgets.2019},
}
"""


def run(
    arguments: list[str], environment: dict[str, str], *, crash_at: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`python <arguments>` with only `environment` of refaudit's settings, maybe killed."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("REFAUDIT_")}
    extra = {CRASH_AT: crash_at} if crash_at else {}
    return subprocess.run(
        [sys.executable, *arguments],
        env=inherited
        | environment
        | extra
        | {"PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def killed(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == KILLED, (result.returncode, result.stderr[-2000:])


@pytest.mark.parametrize("point", ["mirror-build-loaded", "mirror-build-publish"])
def test_a_killed_mirror_build_leaves_the_previous_mirror(tmp_path: Path, point: str) -> None:
    location = build_test_mirror(tmp_path / "first")
    before = open_store(location).info()
    dumps = write_dumps(tmp_path / "second")
    build = ["-m", "refaudit", "mirror", "build", "--db", location, "--quiet"]
    build += ["--crossref", str(dumps["crossref"])]
    environment = server_environment(tmp_path)

    killed(run(build, environment, crash_at=point))
    leftovers = list(Path(location).parent.glob("*.building-*"))
    store = open_store(location)
    after, found = store.info(), store.lookup("crossref", "doi", [RESNET_DOI])
    store.close()
    rebuilt = run(build, environment)

    assert len(leftovers) == 1
    assert (after.built_at, after.records) == (before.built_at, before.records)
    assert len(found) == 1
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "note: an earlier mirror build was interrupted" in rebuilt.stderr
    assert "the previous mirror is intact" in rebuilt.stderr
    assert not list(Path(location).parent.glob("*.building-*"))


def update_in_child(location: str) -> None:
    """`mirror update` against fakes; run in a child process that is killed midway."""
    from refaudit.mirror.update import update_mirror
    from tests.fakes import FakeUpstreams, crossref_list, crossref_work, openalex_list

    fake = FakeUpstreams()
    added = crossref_work("10.5555/new.1", "Sparse mixtures of experts revisited", year=2026)
    fake.json("crossref", r"^/works$", crossref_list([added]))
    fake.json("openalex", r"^/works$", openalex_list([]))
    store = open_store(location, writable=True)
    asyncio.run(
        update_mirror(
            store, load_settings(), parts=["crossref", "openalex"], transport=fake.transport()
        )
    )


def test_a_killed_mirror_update_keeps_what_it_wrote_and_is_named_next_time(
    tmp_path: Path,
) -> None:
    location = build_test_mirror(tmp_path)
    child = f"from tests.adversarial.test_crash_safety import update_in_child as u; u({location!r})"

    killed(run(["-c", child], server_environment(tmp_path), crash_at="mirror-update-page"))
    store = open_store(location)
    kept = store.lookup("crossref", "doi", ["10.5555/new.1", RESNET_DOI])
    store.close()
    run_again = run(["-c", child], server_environment(tmp_path))
    store = open_store(location)
    finished = store.info().meta
    store.close()

    assert len(kept) == 2
    assert run_again.returncode == 0, run_again.stderr
    assert finished["update_running"] == ""
    assert finished["updated_at"]


def test_the_update_after_a_killed_one_names_it(tmp_path: Path) -> None:
    from refaudit.mirror.update import update_mirror
    from tests.fakes import FakeUpstreams, crossref_list, openalex_list

    location = build_test_mirror(tmp_path)
    child = f"from tests.adversarial.test_crash_safety import update_in_child as u; u({location!r})"
    killed(run(["-c", child], server_environment(tmp_path), crash_at="mirror-update-page"))
    fake = FakeUpstreams()
    fake.json("crossref", r"^/works$", crossref_list([]))
    fake.json("openalex", r"^/works$", openalex_list([]))
    store = open_store(location, writable=True)
    try:
        report = asyncio.run(
            update_mirror(
                store, load_settings(), parts=["crossref", "openalex"], transport=fake.transport()
            )
        )
    finally:
        store.close()

    assert report.lines()[0].startswith("note: an earlier mirror update (started ")
    assert "was interrupted; the records it wrote are kept" in report.lines()[0]


@pytest.mark.anyio
async def test_a_killed_snapshot_update_leaves_the_installed_snapshot(tmp_path: Path) -> None:
    environment = server_environment(tmp_path)
    settings = load_settings()
    settings.data_dir = Path(environment["REFAUDIT_DATA_DIR"])
    await download_snapshot(settings, transport=serving(csv_with(400)))
    newer = tmp_path / "newer.csv"
    newer.write_bytes(csv_with(450))
    update = ["-m", "refaudit", "retractions", "update", "--url", str(newer)]

    killed(run(update, environment, crash_at="retractions-staged"))
    rows_after_kill = installed_rows(settings)
    leftovers = list(settings.resolved_data_dir().glob(".rw-*"))
    again = run(update, environment)

    assert rows_after_kill == 400
    assert len(leftovers) == 1
    assert again.returncode == 0, again.stderr
    assert "note: an earlier snapshot update was interrupted" in again.stderr
    assert "the previous snapshot is intact" in again.stderr
    assert installed_rows(settings) == 450
    assert not list(settings.resolved_data_dir().glob(".rw-*"))


@pytest.fixture
def widgets_upstream() -> object:
    with served_over_http(upstreams(WIDGETS)) as url:
        yield url


@pytest.mark.parametrize("point", ["backup-written", "atomic-write"])
def test_a_killed_fix_in_place_leaves_the_bibliography(
    tmp_path: Path, widgets_upstream: str, point: str
) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(WRONG_YEAR, encoding="utf-8")
    environment = server_environment(tmp_path, widgets_upstream)
    fix = ["-m", "refaudit", "fix", str(bib), "--in-place", "--quiet"]

    killed(run(fix, environment, crash_at=point))
    after_kill = bib.read_text(encoding="utf-8")
    temporary = list(tmp_path.glob(".refs.bib.*.tmp"))
    again = run(fix, environment)

    assert after_kill == WRONG_YEAR
    assert len(temporary) == (1 if point == "atomic-write" else 0)
    assert again.returncode in (0, 1), again.stderr
    assert "year = {2019}" in bib.read_text(encoding="utf-8")
    assert (tmp_path / "refs.bib.bak").read_text(encoding="utf-8") == WRONG_YEAR
    assert not list(tmp_path.glob(".refs.bib.*.tmp"))
    if point == "atomic-write":
        assert "note: an earlier write of" in again.stderr
        assert "was removed and refs.bib was left as it was" in again.stderr


def test_a_run_killed_while_caching_answers_leaves_a_usable_cache(
    tmp_path: Path, widgets_upstream: str
) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(WRONG_YEAR, encoding="utf-8")
    environment = server_environment(tmp_path, widgets_upstream)
    check = ["-m", "refaudit", "check", str(bib), "--format", "json", "--quiet"]

    killed(run(check, environment, crash_at="cache-put"))
    cache = ResponseCache.in_dir(Path(environment["REFAUDIT_CACHE_DIR"]))
    entries = cache.info().entries
    cache.close()
    info = run(["-m", "refaudit", "cache", "info"], environment)
    again = run(check, environment)

    assert entries == 1
    assert info.returncode == 0, info.stderr
    assert again.returncode == 0, again.stderr
    assert '"verdict": "mismatch"' in again.stdout


def save_quotas_in_child(cache_dir: str) -> None:
    """Spend a key's budget call by call; run in a child process that is killed midway."""
    cache = ResponseCache.in_dir(Path(cache_dir))
    for used in range(1, 6):
        cache.save_quota(QuotaRow("ieee", "key-1", 200, used, 200 - used, 2e9, None))


def test_a_run_killed_while_counting_quota_keeps_the_last_count(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    child = "from tests.adversarial.test_crash_safety import save_quotas_in_child as s; "
    child += f"s({str(cache_dir)!r})"

    killed(run(["-c", child], server_environment(tmp_path), crash_at="quota-save:3"))
    cache = ResponseCache.in_dir(cache_dir)
    row = cache.quota("ieee", "key-1")
    cache.close()

    assert row is not None
    assert (row.used, row.remaining) == (3, 197)
