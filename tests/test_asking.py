"""One rule for every caller: nothing found is "absent" only when every source asked answered."""

from __future__ import annotations

import pytest

from refaudit.asking import Ledger, ask
from refaudit.errors import OfflineMiss, SourceUnavailable
from refaudit.models import SourceStatus

pytestmark = pytest.mark.anyio


async def _answer() -> dict[str, str]:
    return {}


async def _down() -> dict[str, str]:
    raise SourceUnavailable("crossref", "HTTP 503")


async def _offline() -> dict[str, str]:
    raise OfflineMiss("openalex", "offline and not in the cache")


async def test_absent_only_when_every_source_asked_answered() -> None:
    ledger = Ledger()
    assert await ask(ledger, "openalex", _answer()) == {}
    assert ledger.outcome() == "absent"
    assert await ask(ledger, "crossref", _down()) is None
    assert ledger.outcome() == "unknown"
    assert ledger.failures == {"crossref": "HTTP 503"}
    # Only the sources that could hold the thing count.
    assert ledger.outcome(holders=["openalex"]) == "absent"


async def test_nothing_asked_or_only_planned_out_is_unknown() -> None:
    ledger = Ledger()
    assert ledger.outcome() == "unknown"
    ledger.not_asked("arxiv", "cannot_index", "a book from 1890")
    assert ledger.outcome() == "unknown"
    assert ledger.statuses["arxiv"] == SourceStatus("not_asked", "a book from 1890", "cannot_index")


async def test_a_failure_on_one_call_is_not_erased_by_an_answer_to_another() -> None:
    ledger = Ledger()
    await ask(ledger, "crossref", _down())
    await ask(ledger, "crossref", _answer())
    assert ledger.statuses["crossref"].state == "failed"
    ledger.not_asked("crossref", "decided", "the DOI settled it")
    assert ledger.statuses["crossref"].state == "failed"


async def test_one_call_serving_many_ledgers_records_on_each() -> None:
    ledgers = [Ledger(), Ledger()]
    await ask(ledgers, "openalex", _offline())
    assert all(
        ledger.failures == {"openalex": "offline: offline and not in the cache"}
        for ledger in ledgers
    )
