"""Gathering evidence: which records the sources hold for each reference.

Identifiers are resolved first, in batches across the whole bibliography (one
Crossref request per ~90 DOIs, one S2 POST per 500 ids, …). References whose
identity is still open are then searched in stages, cheapest and broadest
source first, and escalated to slower sources and looser query variants only
while no convincing candidate has turned up. Every call records which source
answered and which failed, so the verdict can say "unverified" instead of
"not found" when a source was down.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from refaudit import match, planner
from refaudit.asking import Ledger, ask
from refaudit.identifiers import is_datacite_arxiv_doi
from refaudit.lookups import IdentifierLookups, looked_up
from refaudit.models import Reference, Result, Work
from refaudit.recognise import is_convincing, is_near, settles
from refaudit.sources import Sources, registry
from refaudit.sources.base import SearchQuery, Source
from refaudit.sources.doiorg import Registration
from refaudit.sources.pacing import request_priority

_T = TypeVar("_T")

SEARCH_LIMIT = 5
# A search's turn in its pool's queue (lower goes first; identifier look-ups are 0): a
# reference's later searches go before other references' first ones, so the references
# that escalate reach the slow pools (Semantic Scholar, DBLP) early and keep them busy.
# A reference whose cited identifier no source knows starts a step ahead: such a citation
# is most often invented, and calling it not found takes every search of its plan.
# Within a step, a search goes sooner the more searches its reference would still need
# were it to find nothing: in a busy pool, the searches served last should be those
# whose references end with them, not those that would then start a chain through
# the 1 request/s pools.
SEARCH_PRIORITY = 10.0
# A search whose reference goes on to a slower pool (Semantic Scholar, DBLP) that is
# running out of work goes ahead of the identifier look-ups queued in its own pool:
# those feed no slow pool, while every second the slowest pool waits is added to the
# run. Enough go ahead to keep that pool busy until the look-ups are sent: FEED_AHEAD
# calls, and as many more as it serves in the time the look-ups take.
FEEDING_PRIORITY = -1.0
FEED_AHEAD = 2


@dataclass
class Evidence(Ledger):
    """Everything the sources said about one reference, and how each source took part."""

    reference: Reference
    doi_records: list[Work] = field(default_factory=list)
    arxiv_records: list[Work] = field(default_factory=list)
    pmid_records: list[Work] = field(default_factory=list)
    candidates: list[Work] = field(default_factory=list)
    doi_asked: set[str] = field(default_factory=set)
    doi_failed: set[str] = field(default_factory=set)
    #: doi.org's answer about a cited DOI no source knows (None: not asked, or it failed)
    doi_registration: Registration | None = None
    arxiv_failed: set[str] = field(default_factory=set)
    #: while the search runs ahead of look-ups still out about it (`lookups.looked_up`)
    lookups_pending: asyncio.Future[None] | None = field(default=None, repr=False, compare=False)
    searched: bool = False
    #: the sources whose title or citation search answered about this reference
    searched_by: set[str] = field(default_factory=set)
    #: the verdict reached when this reference's search ended, and what it was reached on
    early: tuple[tuple[object, ...], Result] | None = field(default=None, repr=False, compare=False)
    #: the DOI of the work the early verdict identified, and the Crossref look-up it rode
    #: along with (for the retraction screen: no part of the verdict)
    screening: tuple[str, asyncio.Future[dict[str, Work]]] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def id_records(self) -> list[Work]:
        return self.doi_records + self.arxiv_records + self.pmid_records

    def decide_early(self, decide: Callable[[Evidence], Result]) -> None:
        """Reach the verdict now, while other references still wait for the slow pools."""
        self.early = (self._state(), decide(self))

    def verdict(self, decide: Callable[[Evidence], Result]) -> Result:
        """`decide(self)`, or the verdict reached early if nothing was added since."""
        if self.early is not None and self.early[0] == self._state():
            return self.early[1]
        return decide(self)

    def _state(self) -> tuple[object, ...]:
        """What a verdict is reached on: every record in order, and every source's part."""
        records = (self.doi_records, self.arxiv_records, self.pmid_records, self.candidates)
        return (
            tuple(tuple(map(id, kept)) for kept in records),
            tuple(self.statuses.items()),
            frozenset(self.doi_failed),
            self.doi_registration,
            frozenset(self.arxiv_failed),
            self.searched,
            frozenset(self.searched_by),
        )

    def sort_records(self) -> None:
        """Answers arrive in whatever order the network allows; verdicts must not depend on it."""
        for records in (self.doi_records, self.arxiv_records, self.pmid_records, self.candidates):
            records.sort(key=lambda work: registry.order(work.source))


async def gather_evidence(
    references: list[Reference] | AsyncIterable[list[Reference]],
    sources: Sources,
    *,
    on_done: Callable[[], None] | None = None,
    decide: Callable[[Evidence], Result] | None = None,
) -> list[Evidence]:
    """Resolve identifiers in batches and search where identity is still open, pipelined.

    `references` may arrive in groups while the file is read: a group's identifiers
    join the look-up batches, sent as each fills (`lookups.IdentifierLookups`), and its
    references without an identifier start searching at once. So the first request
    leaves with the first entries, and the slow search pools get work from the first
    second of a run. Each identified reference joins the search queue as soon as the
    look-up requests holding its identifiers answer.
    With `decide`, each reference's verdict is reached as soon as its search ends,
    while the slow pools still work for others, instead of all at the end of the
    run (`Evidence.verdict` gives it, unless the quota-bound sources added to it).
    """
    evidence: list[Evidence] = []
    feed = _SlowPoolFeed(sources)
    # Matching work runs in a worker thread while a paced pool waits to send: when a
    # thousand references' identifiers resolve at once, deciding on the event loop held
    # every pool's next request back for a second. Sources without a pool (a local
    # mirror) have no request to hold back, and the hand-over would cost more than it saves.
    paced = bool(sources.clients)

    async def matching(work: Callable[..., _T], *args: Any) -> _T:
        return await asyncio.to_thread(work, *args) if paced else work(*args)

    async def search_one(item: Evidence) -> None:
        if await matching(needs_search, item):
            await _search(item, sources, feed)
        else:
            _decided_without_search(item, sources)
        await looked_up(item)
        item.sort_records()
        if decide is not None:
            await matching(item.decide_early, decide)
            _ride_for_screening(item, sources)
        if on_done:
            on_done()

    lookups: IdentifierLookups[Evidence] = IdentifierLookups(
        sources, search_one, known=_searches_known
    )
    searches: list[asyncio.Task[None]] = []
    try:
        async for group in _groups(references):
            for reference in group:
                evidence.append(item := Evidence(reference))
                if _has_identifier(reference):
                    lookups.add(item)
                else:
                    searches.append(asyncio.ensure_future(search_one(item)))
        await asyncio.gather(lookups.finish(), *searches)
    finally:
        lookups.cancel()
        for task in searches:
            task.cancel()
    await _ask_budgeted(evidence, sources)
    for item in evidence:
        item.sort_records()
    return evidence


async def _groups(
    references: list[Reference] | AsyncIterable[list[Reference]],
) -> AsyncIterator[list[Reference]]:
    if isinstance(references, list):
        yield references
    else:
        async for group in references:
            yield group


def _has_identifier(reference: Reference) -> bool:
    return bool(reference.doi or reference.arxiv_id or reference.pmid)


def _searches_known(item: Evidence) -> bool:
    """The look-ups still out about a reference cannot change its searches, which may
    start now: a record of its cited DOI is in hand (the DOI is not disproved), and no
    record could identify the work (`_answers_matter`: a short title cited without year
    or authors), so every search of its plan is sent whatever else they find.

    Its first searches then reach the slow pools (Semantic Scholar) with the first
    look-up's answer, not the slowest one's.
    """
    reference = item.reference
    # The cheap tests first: this runs on the event loop as look-ups answer.
    if not item.doi_records or reference.year or reference.authors or reference.free_text:
        return False
    return not _answers_matter(reference) and needs_search(item)


def _decided_without_search(item: Evidence, sources: Sources) -> None:
    """Record why the sources not asked about a reference that needs no search were left out."""
    reference = item.reference
    detail = planner.nothing_to_check(reference) or (
        "the cited identifier led to the cited work"
        if reference.title or reference.free_text
        else "no title or citation text to search with"
    )
    for name in sources.enabled:
        item.not_asked(name, "decided", detail)


async def _ask_budgeted(evidence: list[Evidence], sources: Sources) -> None:
    """Ask the key-gated, quota-bound sources about what the free ones left open.

    Each is asked about a reference only where its answer can change the verdict
    (see `_budget_not_needed`). Cited DOIs are looked up in batches first; what is
    still open is searched by title.
    """
    free = [n for n in sources.enabled if registry.entry(n).asked == "always"]
    for entry in registry.SOURCES:
        source = sources.get(entry.name)
        if entry.asked != "undecided" or source is None:
            continue
        wanted = []
        for item in evidence:
            if not _still_open(item):
                continue
            why = _budget_not_needed(item, source, free)
            if why is None:
                wanted.append(item)
            else:
                item.not_asked(entry.name, "decided", why)
        await _ask_source(entry.name, source, wanted)


def _budget_not_needed(item: Evidence, source: Source, free: list[str]) -> str | None:
    """Why asking a quota-bound source about an open reference could not change its verdict.

    None to ask it: no free source is enabled, a free source failed on the
    reference (it would otherwise be unverified), or the source `decides` the
    reference (IEEE Xplore for IEEE and IET venues and DOIs) and may hold a
    record the free indexes did not show. Publishers deposit their records with
    the DOI registrar, which the free general indexes harvest (IEEE deposits
    every Xplore DOI with Crossref), so it may not:
    - when a general index searched the citation (or the registrar looked its
      DOI up) and found nothing near it: the quota-bound index would find
      nothing either, and the verdict stays `not_found`;
    - when the registrar's record of the near work is in hand: it is the
      publisher's own deposit, which the quota-bound index would only repeat.
    A near record only another index gave is worth the authoritative record,
    which confirms or refutes its discrepancy.
    """
    title = registry.entry(source.name).title
    if not free or _free_source_failed(item):
        return None
    if not source.decides(item.reference):
        return f"the free sources answered; {title} is asked only where one fails"
    near = [w for w in item.id_records + item.candidates if is_near(item.reference, w)]
    deposited = next(
        (
            w
            for w in near
            if w.doi and w.source in registry.BY_NAME and registry.entry(w.source).registers_dois
        ),
        None,
    )
    if deposited is not None:
        return (
            f"{registry.entry(deposited.source).title} gave the publisher's own record of "
            f"the work the citation is near ({deposited.doi}); {title} would repeat it"
        )
    if near:
        return None
    general = sorted(
        registry.entry(n).title
        for n in item.searched_by
        if n in registry.BY_NAME and planner.is_general(n)
    )
    if general:
        return (
            f"{' and '.join(general)} searched and found nothing near the citation; "
            f"{title}'s records are indexed there too"
        )
    reference = item.reference
    registrars = [
        registry.entry(n).title
        for n in item.asked
        if n in registry.BY_NAME and registry.entry(n).registers_dois
    ]
    if reference.doi and not (reference.title or reference.free_text) and registrars:
        return f"{registrars[0]}, where {title} deposits its DOIs, does not know the cited DOI"
    return None


async def _ask_source(name: str, source: Source, wanted: list[Evidence]) -> None:
    """Batched DOI look-ups for `wanted`, then one title search per reference still open."""
    by_doi: dict[str, list[Evidence]] = {}
    for item in wanted:
        if item.reference.doi and "doi" in source.capabilities:
            by_doi.setdefault(item.reference.doi.lower(), []).append(item)
    dois = list(by_doi)
    size = source.doi_batch_size or len(dois) or 1

    async def lookup(batch: list[str]) -> None:
        served = [item for doi in batch for item in by_doi[doi]]
        found = await ask(served, name, source.lookup_dois(batch))
        if found is None:
            # Its silence about these DOIs is no answer: they are not "unregistered".
            for item in served:
                item.doi_failed.add(name)
        for doi, work in (found or {}).items():
            for item in by_doi.get(doi, []):
                item.doi_records.append(work)

    await asyncio.gather(*(lookup(dois[i : i + size]) for i in range(0, len(dois), size)))

    async def search(item: Evidence) -> None:
        queries = search_queries(item.reference)
        if not queries or not _still_open(item):
            return
        works = await ask(item, name, source.search(queries[0]))
        item.candidates.extend(works or [])

    await asyncio.gather(*(search(item) for item in wanted if item.reference.title))


def _still_open(item: Evidence) -> bool:
    """No record settles the reference's identity yet."""
    reference = item.reference
    records = item.id_records + item.candidates
    if reference.title or reference.free_text:
        return not any(settles(reference, work) for work in records)
    return bool(reference.doi or reference.arxiv_id or reference.pmid) and not item.id_records


def _free_source_failed(item: Evidence) -> bool:
    return any(registry.entry(name).asked == "always" for name in item.failures)


def _ride_for_screening(item: Evidence, sources: Sources) -> None:
    """Ask Crossref about the DOI the early verdict identified in the next look-up sent
    with room for it (`Source.ride_doi`), so the screen need not ask for it at the end."""
    crossref = sources.get("crossref")
    matched = item.early[1].matched if item.early is not None else None
    doi = (matched.doi or "").lower() if matched is not None else ""
    if crossref is None or not doi or not _needs_crossref_record(item, doi):
        return
    ride = crossref.ride_doi(doi)
    if ride is not None:
        answer = asyncio.ensure_future(ride)
        # Read at the end only if the verdict still rests on this DOI: a failure is no error.
        answer.add_done_callback(lambda done: done.cancelled() or done.exception())
        item.screening = (doi, answer)


def _needs_crossref_record(item: Evidence, doi: str) -> bool:
    """The retraction screen still wants Crossref's record of `doi` (its notices)."""
    known = any(
        w.source == "crossref" and (w.doi or "").lower() == doi
        for w in item.id_records + item.candidates
    )
    return not known and not is_datacite_arxiv_doi(doi)


async def complete_for_screening(
    wanted: list[tuple[Evidence, str]], sources: Sources, evidence: Sequence[Evidence] = ()
) -> None:
    """Fetch Crossref's record for identified DOIs it has not given yet.

    A reference found by search (no DOI cited) still needs Crossref's `updated-by`
    notices for the retraction screen. Its DOI rode along with a look-up sent during
    the search where one had room (`_ride_for_screening`); the rest go now, together,
    in one filter per ~100 DOIs, and a DOI whose ride failed is asked again after them.
    A ride the final verdict no longer rests on (of any reference in `evidence`) is
    called off. A record Crossref's own search returned carries the notices already
    (the same fields are selected), so its DOI is not asked for again.
    """
    crossref = sources.get("crossref")
    if crossref is None:
        return
    everyone = [*evidence, *(item for item, _ in wanted)]
    wanted = [(item, doi) for item, doi in wanted if _needs_crossref_record(item, doi)]
    kept = {id(item): doi for item, doi in wanted}
    for item in everyone:
        if item.screening is not None and kept.get(id(item)) != item.screening[0]:
            item.screening[1].cancel()
            item.screening = None
    for item, doi in wanted:
        if item.screening is None and (ride := crossref.ride_doi(doi)) is not None:
            item.screening = (doi, asyncio.ensure_future(ride))
    crossref.release_rides()
    again: dict[str, list[Evidence]] = {}
    for item, doi in wanted:
        if item.screening is not None:
            found = await ask(item, "crossref", item.screening[1])
            if found is not None:
                item.candidates.extend([found[doi]] if doi in found else [])
                continue
        again.setdefault(doi, []).append(item)
    # Each DOI on its own (so each is in the cache on its own, whatever rode along in this
    # run), sent together at once.
    asked = [
        ask(items, "crossref", crossref.lookup_doi(doi, at_once=True))
        for doi, items in again.items()
    ]
    for items, work in zip(again.values(), await asyncio.gather(*asked), strict=True):
        if work is not None:
            for item in items:
                item.candidates.append(work)


def needs_search(item: Evidence) -> bool:
    """Search unless an identifier already led to a record the citation clearly describes."""
    reference = item.reference
    if not (reference.title or reference.free_text) or planner.nothing_to_check(reference):
        return False
    convincing = [w for w in item.id_records if is_convincing(reference, w)]
    if not convincing:
        return True
    # Cited as published but identified only through its preprint: find the published
    # version so the venue and year can be checked against it.
    cited_venue = reference.venue or ""
    only_preprints = all(w.type == "preprint" or w.source == "arxiv" for w in convincing)
    return bool(cited_venue) and only_preprints and not match.is_preprint_venue(cited_venue)


@dataclass
class _SlowPoolFeed:
    """Which searches go ahead of the identifier look-ups, to feed an idle slower pool."""

    sources: Sources
    #: searches sent ahead, not yet answered, by the slower source they lead to
    on_the_way: Counter[str] = field(default_factory=Counter)

    def claim(self, source: str, later: list[str]) -> str | None:
        """A source later in the plan, slower than `source`, running out of work: the
        search about to be sent to `source` goes ahead for it, and is counted on its way
        there until `ask` has its answer."""
        upstream = self.sources.clients.get(source)
        if upstream is None:  # a local mirror: no pool to wait in
            return None
        for name in later:
            slow = self.sources.clients.get(name)
            if slow is None or slow.slowest_rps >= upstream.slowest_rps:
                continue
            served = upstream.waiting_first() * slow.slowest_rps / upstream.slowest_rps
            if slow.backlog() + self.on_the_way[name] < FEED_AHEAD + served:
                self.on_the_way[name] += 1
                return name
        return None

    async def ask(self, fed: str | None, call: Awaitable[list[Work] | None]) -> list[Work] | None:
        """Await a search; one sent ahead for `fed` is no longer on its way once answered."""
        try:
            return await call
        finally:
            if fed is not None:
                self.on_the_way[fed] -= 1


async def _search(item: Evidence, sources: Sources, feed: _SlowPoolFeed) -> None:
    """Ask the planned sources in order until one settles the identity or the budget is spent."""
    item.searched = True
    reference = item.reference
    searchable = [n for n in sources.enabled if "search" in sources.get(n).capabilities]  # type: ignore[union-attr]
    kind = planner.kind_of(reference)
    for name in sources.enabled:
        why = planner.cannot_index(name, kind) if name in searchable else None
        if why:
            item.not_asked(name, "cannot_index", why)
        elif name not in searchable:
            item.not_asked(name, "decided", "it cannot search; no identifier to look up")
    order = planner.search_order(reference, searchable)
    for name in searchable:
        if name not in order and name not in item.statuses:
            item.not_asked(name, "decided", "its search is not used for this kind of citation")
    budget = planner.SEARCH_BUDGET
    head_start = 1 if _identifier_unknown(item) else 0
    disproved = _identifier_disproved(item)
    answers_matter = _answers_matter(reference)
    queries = search_queries(reference)
    request_priority.set(SEARCH_PRIORITY - head_start)
    # When nothing found can change the plan, its searches go out together instead.
    first, record = (
        await _general_index_first(item, sources, order, queries)
        if answers_matter
        else (None, None)
    )
    if record is not None:
        _leave_unasked(item, sources, f"{record.source} found the cited work")
        return
    if first is not None:
        budget -= 1
    for number, query in enumerate(queries):
        # Only searches count towards settling: an identifier look-up that found
        # nothing says nothing about the title.
        searched: list[str] = [first] if first is not None and number == 0 else []
        sent: set[str] = set(searched)
        for name in order:
            if name in sent:
                continue
            identified = _identified(item)
            why = planner.search_skipped(
                reference, name, kind, searched, searchable, identified, disproved
            )
            if why:
                item.not_asked(name, "decided", why)
                continue
            if budget == 0:
                detail = f"the search budget ({planner.SEARCH_BUDGET} requests) was spent"
                _leave_unasked(item, sources, detail)
                return
            later = [n for n in order[order.index(name) + 1 :] if not (number == 0 and n == first)]
            planned = _planned_after(
                reference, later, kind, [*searched, name], searchable, identified, disproved
            )
            # When nothing found can change the plan, its searches are certain: they go
            # out together rather than one round trip after another.
            wave = [name] if answers_matter else [name, *planned][:budget]
            # A wave asks every source of the plan at once: none waits on another.
            fed = feed.claim(name, planned) if len(wave) == 1 else None
            calls = []
            for step, asked in enumerate(wave):
                turn = SEARCH_PRIORITY if fed is None else FEEDING_PRIORITY
                request_priority.set(
                    turn
                    - head_start
                    - (planner.SEARCH_BUDGET - budget)
                    - min(len(planned) - step, budget - 1) / planner.SEARCH_BUDGET
                )
                budget -= 1
                call = sources.get(asked).search(query)  # type: ignore[union-attr]
                calls.append(asyncio.ensure_future(feed.ask(fed, ask(item, asked, call))))
            sent.update(wave)
            for asked, works in zip(wave, await asyncio.gather(*calls), strict=True):
                if works is not None:
                    searched.append(asked)
                    item.searched_by.add(asked)
                item.candidates.extend(works or [])
            settled = next((w for w in item.candidates if settles(reference, w)), None)
            if settled is not None:
                _leave_unasked(item, sources, f"{settled.source} found the cited work")
                return


async def _general_index_first(
    item: Evidence, sources: Sources, order: list[str], queries: list[SearchQuery]
) -> tuple[str | None, Work | None]:
    """Search a general index before the registrar's matcher: the index's name if it
    answered, and the registrar's record if it settles the citation.

    A plan that opens with the registrar's matcher (Crossref, for journal articles)
    costs a request a reference in the registrar's slowest pool. A general index that
    answers many titles in one request (OpenAlex) is searched first instead; if it
    names the work's DOI, the registrar's record is fetched by that DOI, in one request
    with the other DOIs asked about meanwhile. A record that settles the citation is
    what the matcher would have found, and ends the plan; otherwise (the index's own
    record settling it included) the plan goes on with the matcher, the index already
    answered.
    """
    registrar = sources.get(order[0]) if order else None
    if registrar is None or not registry.entry(registrar.name).matcher:
        return None, None
    if not (queries and queries[0].title):
        return None, None  # a citation string: only the matcher reads it whole
    index = next(
        (
            source
            for name in order[1:]
            if planner.is_general(name)
            and (source := sources.get(name)) is not None
            and source.batches_searches
        ),
        None,
    )
    if index is None:
        return None, None
    reference = item.reference
    works = await ask(item, index.name, index.search(queries[0]))
    if works is None:
        return None, None
    item.searched_by.add(index.name)
    item.candidates.extend(works)
    doi = next((w.doi for w in works if w.doi and is_convincing(reference, w)), None)
    if doi is None or is_datacite_arxiv_doi(doi.lower()):
        return index.name, None
    record = await ask(Ledger(), registrar.name, registrar.lookup_doi(doi))
    if record is None or not settles(reference, record):
        return index.name, None
    item.answered(registrar.name)
    item.searched_by.add(registrar.name)
    item.candidates.append(record)
    return index.name, record


def _planned_after(
    reference: Reference,
    later: list[str],
    kind: planner.Kind,
    answered: list[str],
    searchable: list[str],
    identified: bool,
    disproved: bool,
) -> list[str]:
    """The `later` sources the plan would still search, were the `answered` ones (the
    one about to be asked included) to find nothing."""
    planned: list[str] = []
    for name in later:
        if not planner.search_skipped(
            reference, name, kind, [*answered, *planned], searchable, identified, disproved
        ):
            planned.append(name)
    return planned


def _answers_matter(reference: Reference) -> bool:
    """What one search finds can change which searches follow it.

    The plan stops early once a record is convincing (it identifies the work, or
    settles it). A record giving back exactly what the citation says is the most
    convincing there could be: when even it is not (a short title with no year and no
    authors: other works share it), nothing found changes the plan. A citation string
    is excepted: it may be re-read around a record's title, with fields it then shows.
    """
    if not reference.title or reference.free_text:
        return True
    echo = Work(
        source="citation",
        title=reference.title,
        authors=list(reference.authors),
        year=reference.year,
        volume=reference.volume,
        pages=reference.pages,
    )
    return is_convincing(reference, echo)


def _identifier_unknown(item: Evidence) -> bool:
    """The reference cites an identifier, and the sources asked about it know none of it."""
    return _has_identifier(item.reference) and not item.id_records


def _identifier_disproved(item: Evidence) -> bool:
    """The cited DOI is unknown to every source asked about it, one of which would hold it
    (the rule `doi-not-registered` is reported on): the citation is already shown wrong."""
    doi = item.reference.doi
    if not doi or item.doi_records or item.doi_failed:
        return False
    if item.doi_registration is not None and item.doi_registration.registered:
        return False  # doi.org resolves it: another agency's real DOI
    return any(registry.holds_doi(name, doi) for name in item.asked)


def _identified(item: Evidence) -> bool:
    """A convincing record of the cited work is in hand (through an identifier or a search)."""
    return any(is_convincing(item.reference, w) for w in item.id_records + item.candidates)


def _leave_unasked(item: Evidence, sources: Sources, detail: str) -> None:
    for name in sources.enabled:
        item.not_asked(name, "decided", detail)


def search_queries(reference: Reference) -> list[SearchQuery]:
    """The main query, then looser variants that survive a misspelt or invented word.

    A title in two languages ("原题 [English title]") is searched by each language
    first, then whole.
    """
    authors = [p.family for p in reference.authors if p.family][:3]
    if reference.title:
        # A title cited in two languages is searched in each: an index holds one of them.
        languages = match.title_languages(reference.title)
        titles = [*languages, reference.title] if len(languages) > 1 else [reference.title]
        queries = [
            SearchQuery(title=title, authors=authors, year=reference.year, limit=SEARCH_LIMIT)
            for title in titles
        ]
        if reference.free_text:
            queries.append(SearchQuery(free_text=reference.free_text, limit=SEARCH_LIMIT))
        return queries
    if reference.free_text:
        # A title-less citation (ACS, AIP, RSC) names its work by authors, venue and
        # year, and only a record of the cited year can match it (`locator_match`):
        # the search is kept to that year, where a common name no longer buries it.
        year = reference.year if reference.venue else None
        return [
            SearchQuery(
                free_text=reference.free_text,
                authors=authors,
                year=reference.year,
                year_from=year,
                year_to=year,
                limit=SEARCH_LIMIT,
            )
        ]
    return []
