"""Identifier look-ups, sent while the references are still being read.

A reference's cited DOI, arXiv id and PMID are looked up in batches (one Crossref
request per ~90 DOIs, one Semantic Scholar POST per 500 ids, …). The batches fill as
the references arrive, and each is sent as soon as it is full: the first request
leaves while the rest of the file is parsed. A source's batches are those it would
cut from the whole list at once (`Source.id_batches` packs consecutive keys, so every
batch but the last is final as soon as the next one starts), so streaming sends the
same requests. A reference goes on to its search as soon as every request holding
one of its identifiers has answered; a reference whose identifier was answered before
it arrived takes the answer already in hand.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from refaudit.asking import Ledger, ask
from refaudit.errors import SourceError
from refaudit.identifiers import arxiv_id_from_doi, is_datacite_arxiv_doi
from refaudit.models import NotAskedWhy, Reference, SourceStatus, Work
from refaudit.sources import Sources, registry
from refaudit.sources.base import Source
from refaudit.sources.doiorg import TITLE as DOI_ORG
from refaudit.sources.doiorg import Registration


class Looked(Protocol):
    """What a look-up reads and writes of one reference's evidence (`evidence.Evidence`)."""

    reference: Reference
    statuses: dict[str, SourceStatus]
    doi_records: list[Work]
    arxiv_records: list[Work]
    pmid_records: list[Work]
    doi_asked: set[str]
    doi_failed: set[str]
    arxiv_failed: set[str]
    doi_registration: Registration | None
    #: while `then` runs ahead of look-ups still out about it: done once they answer
    lookups_pending: asyncio.Future[None] | None

    def answered(self, source: str, *, from_cache: bool = False) -> None: ...

    def failed(self, source: str, reason: str) -> None: ...

    def not_asked(self, source: str, why: NotAskedWhy, detail: str) -> None: ...


Item = TypeVar("Item", bound=Looked)

#: New keys between two looks at whether a source's batch is full: cutting batches takes
#: time in the keys waiting, and a batch holds dozens to hundreds of them.
CUT_EVERY = 16
#: The look-up method for each kind of identifier, and where its records go.
_METHODS = {
    "doi": "lookup_dois",
    "arxiv-doi": "lookup_dois",
    "arxiv": "lookup_arxiv",
    "pmid": "lookup_pmids",
}
_BUCKETS = {
    "lookup_dois": "doi_records",
    "lookup_arxiv": "arxiv_records",
    "lookup_pmids": "pmid_records",
}
#: Where a failed look-up is noted, so its silence is not read as "unregistered".
_FAILED_SETS = {"lookup_dois": "doi_failed", "lookup_arxiv": "arxiv_failed"}


@dataclass
class _Answer:
    """One request's outcome: how the source took part, and what it found."""

    status: SourceStatus
    found: dict[str, Work] | None


@dataclass
class _Channel(Generic[Item]):
    """One source's first-round look-ups of one kind of identifier."""

    name: str
    method: str
    source: Source
    index: dict[str, list[Item]]
    #: keys not yet in a request, in the order they came
    waiting: list[str] = field(default_factory=list)
    #: keys whose request answered, with its outcome
    answers: dict[str, _Answer] = field(default_factory=dict)

    async def request(self, keys: list[str]) -> _Answer:
        """One look-up request for `keys`, its outcome kept for the references that ask later."""
        probe = Ledger()
        found = await ask(probe, self.name, getattr(self.source, self.method)(keys))
        return _Answer(probe.statuses[self.name], found)


async def looked_up(item: Looked) -> None:
    """Return once the look-ups about `item` have answered as far as `then` would have
    waited for them (at once unless `then` was started early on it).

    The wait is kept on the item, not asked of the `IdentifierLookups`: a `then` that
    held the look-ups would make a cycle keeping a whole batch alive until the
    collector runs.
    """
    if item.lookups_pending is not None:
        await item.lookups_pending


class IdentifierLookups(Generic[Item]):
    """The cited identifiers of one batch of references, looked up as they arrive.

    `add` each reference with an identifier as it is read; `finish` once the last
    one was added. `then` runs on each reference once its identifiers are answered,
    or sooner, once an answer came and `known` says the answers still out cannot
    change the requests `then` sends (it waits for them with `looked_up` before it
    reaches a verdict).
    """

    def __init__(
        self,
        sources: Sources,
        then: Callable[[Item], Awaitable[None]],
        *,
        known: Callable[[Item], bool] | None = None,
    ) -> None:
        self._sources = sources
        self._then = then
        #: says that what the look-ups still out find cannot change what `then` asks
        self._known = known
        self.items: list[Item] = []
        self._by_doi: dict[str, list[Item]] = {}
        self._by_arxiv: dict[str, list[Item]] = {}
        self._by_pmid: dict[str, list[Item]] = {}
        self._indexes = {
            "doi": self._by_doi,
            "arxiv-doi": self._by_doi,
            "arxiv": self._by_arxiv,
            "pmid": self._by_pmid,
        }
        self._channels: dict[str, list[_Channel[Item]]] = {}
        for kind, method in _METHODS.items():
            self._channels[kind] = [
                _Channel(name, method, source, self._indexes[kind])
                for name in registry.resolvers(kind, 0)
                if (source := sources.get(name)) is not None
            ]
        self._unanswered: Counter[int] = Counter()  # by id(item): requests it waits for
        self._requests: list[asyncio.Task[None]] = []
        self._follow_ups: dict[int, asyncio.Task[None]] = {}

    def add(self, item: Item) -> None:
        """Look `item`'s identifiers up; each full batch is sent at once."""
        self.items.append(item)
        ref = item.reference
        keys: list[tuple[str, str]] = []
        if ref.doi:
            doi = ref.doi.lower()
            item.doi_asked.add(doi)
            keys.append(("arxiv-doi" if is_datacite_arxiv_doi(doi) else "doi", doi))
            derived = arxiv_id_from_doi(ref.doi)
            if derived and not ref.arxiv_id:
                keys.append(("arxiv", derived))
        if ref.arxiv_id:
            keys.append(("arxiv", ref.arxiv_id))
        if ref.pmid:
            keys.append(("pmid", ref.pmid))
        touched: list[_Channel[Item]] = []
        for kind, key in keys:
            index = self._indexes[kind]
            new = key not in index
            index.setdefault(key, []).append(item)
            for channel in self._channels[kind]:
                if key in channel.answers:
                    _record(channel, [item], channel.answers[key], [key])
                    continue
                self._unanswered[id(item)] += 1
                if new:
                    channel.waiting.append(key)
                    touched.append(channel)
        for channel in touched:
            if len(channel.waiting) % CUT_EVERY:
                continue
            batches = channel.source.id_batches(channel.waiting)
            for batch in batches[:-1]:
                self._send(channel, batch)
            channel.waiting = batches[-1] if batches else []
        if not self._unanswered[id(item)] and not _awaits_round_two(item):
            self._settle(item)

    async def finish(self) -> None:
        """Send what is left, ask again about unknown DOIs, and wait for every `then`.

        A reference whose DOI is still unknown waits for the second round, which the
        whole first round informs.
        """
        try:
            for channels in self._channels.values():
                for channel in channels:
                    for batch in channel.source.id_batches(channel.waiting):
                        self._send(channel, batch)
                    channel.waiting = []
            await asyncio.gather(*self._requests)
            for item in self.items:
                if not _awaits_round_two(item):
                    self._settle(item)
            await self._second_round()
            await self._ask_doi_org()
            for item in self.items:
                self._settle(item)
            await asyncio.gather(*self._follow_ups.values())
        finally:
            self.cancel()

    def cancel(self) -> None:
        """Stop every request and follow-up still running (the audit was abandoned)."""
        for task in [*self._requests, *self._follow_ups.values()]:
            task.cancel()

    def _send(self, channel: _Channel[Item], batch: list[str]) -> None:
        self._requests.append(asyncio.ensure_future(self._first_round(channel, batch)))

    async def _first_round(self, channel: _Channel[Item], keys: list[str]) -> None:
        answer: _Answer | None = None
        try:
            answer = await channel.request(keys)
        finally:
            for key in keys:
                waiting = channel.index[key]
                if answer is not None:
                    channel.answers[key] = answer
                    _record(channel, waiting, answer, [key])
                for item in waiting:
                    self._unanswered[id(item)] -= 1
                    if self._unanswered[id(item)] <= 0 and not _awaits_round_two(item):
                        self._settle(item)
                    elif answer is not None and self._may_start(item):
                        self._go_on(item, early=True)

    def _may_start(self, item: Item) -> bool:
        """`then` may start on `item` before its other look-ups answer (`known`)."""
        return self._known is not None and id(item) not in self._follow_ups and self._known(item)

    def _settle(self, item: Item) -> None:
        """`item`'s look-ups have answered: `then` goes on, or its early run may decide."""
        pending = item.lookups_pending
        if pending is not None and not pending.done():
            pending.set_result(None)
        self._go_on(item)

    def _go_on(self, item: Item, *, early: bool = False) -> None:
        if id(item) in self._follow_ups:
            return
        if early:
            item.lookups_pending = asyncio.get_running_loop().create_future()
        self._follow_ups[id(item)] = asyncio.ensure_future(self._then(item))

    async def _second_round(self) -> None:
        """Ask again about the DOIs the first round did not find.

        They may be DataCite's (Zenodo, figshare, …) or known to Semantic Scholar only:
        ask before calling them unregistered.
        """
        by_doi = self._by_doi
        registry_dois = [d for d in by_doi if not is_datacite_arxiv_doi(d)]
        unknown = [d for d in registry_dois if not any(i.doi_records for i in by_doi[d])]
        # A prefix belongs to one registration agency: a DOI whose prefix another agency
        # registered (seen in this run's answers) cannot be DataCite's.
        registered = {
            _prefix(work.doi): work.source
            for item in self.items
            for work in item.doi_records
            if work.doi and _registers_dois(work.source)
        }
        round_two = []
        for name in registry.resolvers("doi", 1):
            asked = unknown
            if _registers_dois(name):
                asked = [d for d in unknown if registered.get(_prefix(d), name) == name]
                for doi in set(unknown) - set(asked):
                    agency = registry.entry(registered[_prefix(doi)]).title
                    for item in by_doi[doi]:
                        item.not_asked(
                            name,
                            "cannot_index",
                            f"DOI prefix {_prefix(doi)} is registered with {agency}",
                        )
            source = self._sources.get(name)
            if source is not None and asked:
                channel = _Channel(name, "lookup_dois", source, by_doi)
                round_two.append(self._lookup(channel, asked))
        await asyncio.gather(*round_two)

    async def _lookup(self, channel: _Channel[Item], keys: list[str]) -> None:
        answer = await channel.request(keys)
        _record(channel, [item for key in keys for item in channel.index[key]], answer, keys)

    async def _ask_doi_org(self) -> None:
        """Ask doi.org about every DOI that neither Crossref nor DataCite holds.

        They are two of the DOI registration agencies: a DOI of CNKI, JaLC, KISTI or
        mEDRA is unknown to both, yet real (OpenAlex may hold its work). Only doi.org can
        say that a DOI does not exist, and which agency registered one that does.
        """
        resolver = self._sources.resolver
        if resolver is None:
            return
        by_doi = self._by_doi
        unknown = [
            doi
            for doi, items in by_doi.items()
            if not is_datacite_arxiv_doi(doi)
            and not any(item.doi_failed or _registered_by_a_source(item) for item in items)
        ]

        async def ask_one(doi: str) -> None:
            try:
                registration = await resolver.registration(doi)
            except SourceError:
                for item in by_doi[doi]:
                    item.doi_failed.add(DOI_ORG)
                return
            for item in by_doi[doi]:
                item.doi_registration = registration

        await asyncio.gather(*(ask_one(doi) for doi in unknown))


def _record(
    channel: _Channel[Item], items: Iterable[Item], answer: _Answer, keys: list[str]
) -> None:
    """What one request said about `keys`, written on the references that cite them."""
    items = list(items)
    for item in items:
        if answer.status.state == "failed":
            item.failed(channel.name, answer.status.reason or "failed")
        else:
            item.answered(channel.name)
    if answer.found is None:
        failed_set = _FAILED_SETS.get(channel.method)
        if failed_set:
            for item in items:
                getattr(item, failed_set).add(channel.name)
        return
    wanted = {id(item) for item in items}
    for key in keys:
        work = answer.found.get(key)
        if work is None:
            continue
        for item in channel.index[key]:
            if id(item) in wanted:
                getattr(item, _BUCKETS[channel.method]).append(work)


def _awaits_round_two(item: Looked) -> bool:
    doi = item.reference.doi
    return doi is not None and not is_datacite_arxiv_doi(doi.lower()) and not item.doi_records


def _registered_by_a_source(item: Looked) -> bool:
    """A registration agency among the sources (Crossref, DataCite) holds the cited DOI."""
    return any(_registers_dois(work.source) for work in item.doi_records)


def _registers_dois(source: str) -> bool:
    """The source is a DOI registration agency (Crossref, DataCite): its silence on a DOI
    of its own prefix means the DOI is not registered there."""
    return source in registry.BY_NAME and registry.entry(source).registers_dois


def _prefix(doi: str) -> str:
    return doi.split("/", 1)[0].lower()
