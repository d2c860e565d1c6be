"""Discovery: search the databases, fetch BibTeX for a work, show one work in full.

These are the functions behind `refaudit search`, `refaudit bibtex`, `refaudit show`
and the MCP tools of the same names. Everything they return comes from a database
record: a title is only turned into BibTeX after a search found a work whose title
agrees with it ("verified first"), and when every source fails the answer is
`unverified`, never `not_found`.

Records from several sources are merged into one `Work` per work (same DOI, same
arXiv id, or the same title, year and first author: `match.is_same_work`). Each
field of the merged record comes from the most authoritative source that has it
(`merge.FIELD_PRIORITY`), and `show` reports where the other sources disagree.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Collection, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from refaudit.asking import Ledger, ask
from refaudit.config import Settings
from refaudit.errors import InputError
from refaudit.identifiers import (
    DATACITE_ARXIV_PREFIX,
    is_datacite_arxiv_doi,
    normalize_doi,
    parse_arxiv_id,
)
from refaudit.merge import merge_records, priority
from refaudit.models import Notice, RunStats, SourceStatus, Work
from refaudit.notices import WITHDRAWING_KINDS
from refaudit.sources import registry, unusable_reason

if TYPE_CHECKING:
    import httpx

    from refaudit.sources import Sources
    from refaudit.sources.base import SearchQuery, Source

Status = Literal["ok", "retracted", "not_found", "unverified", "invalid"]
IdentifierKind = Literal["doi", "arxiv", "pmid", "s2", "openalex", "title"]

#: Reciprocal-rank fusion offset: small, because each source returns only a few hits
#: and its first hit deserves clearly more weight than its fifth.
RANK_OFFSET = 2
#: Added to a search hit whose title is the query itself, so a pasted title comes first.
EXACT_TITLE_BONUS = 1.0
#: Title-comparison kinds that make a title lookup confident enough to emit BibTeX.
CONFIDENT_TITLE_KINDS = frozenset({"exact", "minor", "word_form", "typo"})
#: How many hits each source returns when a title is looked up.
TITLE_CANDIDATES = 5
#: How many closest candidates a not-found title message names.
CLOSEST_SHOWN = 3
#: Citation-graph neighbours fetched before ranking them by citation count.
GRAPH_FETCH = 100

#: Fields `show` compares across sources.
_COMPARED_FIELDS = (
    "title",
    "authors",
    "year",
    "venue",
    "publisher",
    "volume",
    "issue",
    "pages",
    "type",
    "doi",
    "arxiv_id",
    "pmid",
    "citation_count",
)
_LOOKUPS: dict[str, tuple[str, str]] = {
    "doi": ("doi", "lookup_dois"),
    "arxiv": ("arxiv", "lookup_arxiv"),
    "pmid": ("pmid", "lookup_pmids"),
    "s2": ("s2", "lookup_ids"),
    "openalex": ("openalex", "lookup_ids"),
}
#: Sources that never hold arXiv's DataCite DOIs, so they are not asked for them.
_NOT_FOR_ARXIV_DOIS = frozenset(registry.SOURCE_NAMES) - registry.names_where("holds_arxiv_dois")

_DOI_FORM = re.compile(r"(?:doi:\s*|(?:https?://)?(?:dx\.)?doi\.org/)?10\.\S+", re.IGNORECASE)
_ARXIV_FORM = re.compile(
    r"arxiv:\s*\S+|(?:https?://)?(?:export\.)?arxiv\.org/(?:abs|pdf)/\S+", re.IGNORECASE
)
_BARE_ARXIV = re.compile(r"\d{4}\.\d{4,5}(?:v\d+)?|[a-z][a-z-]*(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?")
_PMID_FORM = re.compile(r"(?:pmid:?\s*)?(\d{1,9})", re.IGNORECASE)
_S2_HEX = re.compile(r"[0-9a-f]{40}", re.IGNORECASE)
_CORPUS_ID = re.compile(r"corpusid:\s*(\d+)", re.IGNORECASE)
_OPENALEX_ID = re.compile(r"(?:https?://)?(?:openalex\.org/)?(W\d+)", re.IGNORECASE)
_PREFIXED = re.compile(r"(doi|arxiv|pmid|corpusid)\s*:", re.IGNORECASE)
_BIBTEX_HEAD = re.compile(r"^\s*@\s*(\w+)\s*\{\s*([^,\s]*)\s*,")
_PREPRINT_RECORD_TYPES = frozenset({"preprint", "posted-content"})
_BIB_KEYS = re.compile(r"@\s*(\w+)\s*[{(]\s*([^,\s{}()]+)\s*,")
_NON_ENTRIES = frozenset({"string", "preamble", "comment"})
#: Agency BibTeX fields holding identifiers or URLs, which must reach LaTeX verbatim.
_VERBATIM_FIELDS = frozenset({"url", "doi", "eprint", "isbn", "issn", "archiveprefix", "file"})
#: Characters LaTeX treats specially that agencies leave bare in plain-text values.
_BARE_SPECIAL = re.compile(r"(?<!\\)[&%#_]")
#: A value already written as LaTeX (braces, commands, math) is escaped only where bare.
_LATEX_MARKUP = re.compile(r"[{}\\$]")


# --- results -------------------------------------------------------------------


@dataclass(frozen=True)
class Identifier:
    """What a user's identifier-or-title turned out to be, in canonical form."""

    kind: IdentifierKind
    value: str


@dataclass
class SearchOutcome:
    """Merged, ranked search hits and how each source took part."""

    works: list[Work]
    sources: dict[str, SourceStatus]
    status: Literal["ok", "unverified"] = "ok"
    message: str = ""
    #: What each source was sent, as `Source.describe_search` shows it.
    queries: dict[str, str] = field(default_factory=dict)


@dataclass
class BibtexEntry:
    """BibTeX for one requested identifier, or why there is none."""

    identifier: str
    status: Status
    bibtex: str | None = None
    key: str | None = None
    source: str | None = None
    message: str = ""
    work: Work | None = None


@dataclass
class FieldOrigin:
    """Which source gave a merged field, and what the sources that disagree say."""

    field: str
    value: str
    source: str
    others: dict[str, str] = field(default_factory=dict)


@dataclass
class PaperDetails:
    """One work in full: merged record, per-source records, notices, citation graph."""

    identifier: str
    status: Status
    work: Work | None = None
    records: dict[str, Work] = field(default_factory=dict)
    notices: list[Notice] = field(default_factory=list)
    references: list[Work] = field(default_factory=list)
    citations: list[Work] = field(default_factory=list)
    sources: dict[str, SourceStatus] = field(default_factory=dict)
    message: str = ""
    fields: list[FieldOrigin] = field(default_factory=list)


@runtime_checkable
class CitationGraph(Protocol):
    """A source that can list the works a paper cites and the works citing it."""

    name: str

    async def references(self, paper_id: str, limit: int = 100) -> list[Work]: ...

    async def citations(self, paper_id: str, limit: int = 100) -> list[Work]: ...


@runtime_checkable
class BibtexProvider(Protocol):
    """A registration agency that serves its own BibTeX for its DOIs."""

    name: str

    async def fetch_bibtex(self, doi: str) -> str | None: ...


# --- identifiers -----------------------------------------------------------------


def parse_identifier(text: str) -> Identifier | None:
    """Classify `text` as DOI, arXiv id, PMID, S2 id, OpenAlex id or title; None if unusable.

    A string that announces an identifier (`doi:`, `arXiv:`, `PMID:`, `CorpusId:`)
    but does not hold a valid one is unusable rather than a title.
    """
    value = " ".join(text.split())
    if not value:
        return None
    if _DOI_FORM.fullmatch(value):
        doi = normalize_doi(value)
        return Identifier("doi", doi) if doi else None
    if _ARXIV_FORM.fullmatch(value) or _BARE_ARXIV.fullmatch(value):
        parsed = parse_arxiv_id(re.sub(r"\.pdf$", "", value, flags=re.IGNORECASE))
        return Identifier("arxiv", parsed[0]) if parsed else None
    pmid = _PMID_FORM.fullmatch(value)
    if pmid:
        return Identifier("pmid", pmid.group(1))
    if _S2_HEX.fullmatch(value):
        return Identifier("s2", value.lower())
    corpus = _CORPUS_ID.fullmatch(value)
    if corpus:
        return Identifier("s2", f"CorpusId:{corpus.group(1)}")
    openalex = _OPENALEX_ID.fullmatch(value)
    if openalex:
        return Identifier("openalex", openalex.group(1).upper())
    if _PREFIXED.match(value) or not any(char.isalpha() for char in value):
        return None
    return Identifier("title", value)


# --- merging and ranking ------------------------------------------------------------


@dataclass
class _Cluster:
    """Records of one work found by a search, with each source's best rank for it."""

    records: list[Work]
    ranks: dict[str, int]


def _cluster(answers: Sequence[tuple[str, Sequence[Work]]]) -> list[_Cluster]:
    """Group every source's hits into works, remembering where each source ranked them."""
    from refaudit.match import is_same_work

    clusters: list[_Cluster] = []
    for source, hits in answers:
        for rank, hit in enumerate(hits):
            home = next((c for c in clusters if any(is_same_work(r, hit) for r in c.records)), None)
            if home is None:
                clusters.append(_Cluster([hit], {source: rank}))
                continue
            home.records.append(hit)
            home.ranks[source] = min(rank, home.ranks.get(source, rank))
    return clusters


def _relevance(cluster: _Cluster, query: str, merged: Work) -> float:
    """Reciprocal-rank fusion over sources, plus a bonus when the title is the query."""
    from refaudit.match import normalize_text

    score = sum(1 / (RANK_OFFSET + rank) for rank in cluster.ranks.values())
    if merged.title and normalize_text(merged.title) == normalize_text(query):
        score += EXACT_TITLE_BONUS
    return round(score, 4)


def _within_years(work: Work, year_from: int | None, year_to: int | None) -> bool:
    if work.year is None:
        return True
    return (year_from is None or work.year >= year_from) and (
        year_to is None or work.year <= year_to
    )


def rank_by_citations(works: Sequence[Work], limit: int) -> list[Work]:
    """Most-cited first (unknown counts last), keeping the first of each duplicate."""
    from refaudit.match import is_same_work

    unique: list[Work] = []
    for work in works:
        if not any(is_same_work(work, kept) for kept in unique):
            unique.append(work)
    unique.sort(key=lambda work: -(work.citation_count or -1))
    return unique[:limit]


# --- source calls ---------------------------------------------------------------------


async def _lookup(
    kind: str,
    value: str,
    opened: Sources,
    tracker: Ledger,
    records: dict[str, Work],
    *,
    skip: Collection[str] = (),
) -> None:
    """Ask every capable source lacking a record for `value`; add what they find."""
    capability, method = _LOOKUPS[kind]
    targets = [
        source
        for source in opened.with_capability(capability)
        if source.name not in records and source.name not in skip
    ]
    answers = await asyncio.gather(
        *(ask(tracker, source.name, getattr(source, method)([value])) for source in targets)
    )
    for source, answer in zip(targets, answers, strict=True):
        if answer:
            records[source.name] = next(iter(answer.values()))


@dataclass
class _Resolution:
    status: Status
    records: dict[str, Work] = field(default_factory=dict)
    message: str = ""

    @property
    def work(self) -> Work | None:
        return merge_records(list(self.records.values())) if self.records else None

    @property
    def published_work(self) -> Work | None:
        """The work as published, when its records include the published version.

        A conference paper with an arXiv preprint resolves (by OpenAlex or Semantic
        Scholar id, by title) to records of both, and the preprint's (arXiv, DataCite) outrank the
        aggregators' field by field: merged, the entry would be the preprint's. The
        preprint's records only fill in fields the published ones lack (its arXiv id).
        """
        published = [work for work in self.records.values() if not _is_preprint_record(work)]
        preprints = [work for work in self.records.values() if _is_preprint_record(work)]
        if not published or not preprints:
            return self.work
        merged = merge_records([_without_arxiv_doi(work) for work in published])
        if not merged.arxiv_id:
            merged.arxiv_id = next((w.arxiv_id for w in preprints if w.arxiv_id), None)
        merged.found_in = [*merged.found_in, *(w.source for w in preprints)]
        pooled = merge_records(list(self.records.values()))
        merged.notices, merged.is_retracted = pooled.notices, pooled.is_retracted
        return merged


def _is_preprint_record(work: Work) -> bool:
    """A record of the preprint: typed so, on a preprint server, or only arXiv's DOI."""
    from refaudit.match import is_preprint_venue

    return (
        (work.type or "").lower() in _PREPRINT_RECORD_TYPES
        or is_preprint_venue(work.venue)
        or (not work.venue and is_datacite_arxiv_doi(work.doi or ""))
    )


def _without_arxiv_doi(work: Work) -> Work:
    """An aggregator's published record may carry the preprint's DataCite DOI; drop it."""
    return dataclasses.replace(work, doi=None) if is_datacite_arxiv_doi(work.doi or "") else work


async def _resolve(text: str, opened: Sources, tracker: Ledger) -> _Resolution:
    """Find the database records of the work `text` names (an identifier or a title)."""
    identifier = parse_identifier(text)
    if identifier is None:
        return _Resolution(
            "invalid", message=f"{text.strip()!r} is neither an identifier nor a title"
        )
    if identifier.kind == "title":
        return await _resolve_title(identifier.value, opened, tracker)
    records: dict[str, Work] = {}
    asked: set[tuple[str, str]] = {(identifier.kind, identifier.value)}
    skip = _NOT_FOR_ARXIV_DOIS if is_datacite_arxiv_doi(identifier.value) else ()
    await _lookup(identifier.kind, identifier.value, opened, tracker, records, skip=skip)
    if identifier.kind == "arxiv":
        arxiv_doi = f"{DATACITE_ARXIV_PREFIX}arxiv.{identifier.value}".lower()
        asked.add(("doi", arxiv_doi))
        await _lookup("doi", arxiv_doi, opened, tracker, records, skip=_NOT_FOR_ARXIV_DOIS)
    records = _consistent(records)
    if records:
        await _complete(records, opened, tracker, asked)
        return _Resolution("ok", records)
    return _nothing_found(f"no source knows {identifier.kind} {identifier.value}", tracker)


def _consistent(records: dict[str, Work]) -> dict[str, Work]:
    """Drop records describing another version of the work than the most authoritative one.

    Semantic Scholar answers an arXiv id with the published paper; its DOI then
    differs from the preprint's DataCite DOI and `is_same_work` keeps them apart.
    """
    from refaudit.match import is_same_work

    if not records:
        return records
    anchor = min(records.values(), key=lambda work: priority(work.source))
    return {name: work for name, work in records.items() if is_same_work(anchor, work)}


async def _complete(
    records: dict[str, Work], opened: Sources, tracker: Ledger, asked: set[tuple[str, str]]
) -> None:
    """Ask the remaining sources by the DOI and arXiv id the found records carry."""
    merged = merge_records(list(records.values()))
    wanted = [("doi", normalize_doi(merged.doi)), ("arxiv", merged.arxiv_id)]
    for kind, value in wanted:
        if not value or (kind, value) in asked:
            continue
        asked.add((kind, value))
        skip = _NOT_FOR_ARXIV_DOIS if kind == "doi" and is_datacite_arxiv_doi(value) else ()
        found: dict[str, Work] = {}
        await _lookup(kind, value, opened, tracker, found, skip=[*skip, *records])
        kept = _consistent({**records, **found})
        records.clear()
        records.update(kept)


def _nothing_found(message: str, tracker: Ledger) -> _Resolution:
    """not_found only when every source asked really answered; otherwise unverified."""
    if tracker.outcome() == "absent":
        return _Resolution("not_found", message=message)
    if not tracker.asked:
        return _Resolution(
            "unverified", message=f"no source could answer ({tracker.failure_text()})"
        )
    return _Resolution(
        "unverified", message=f"{message}, but some sources failed ({tracker.failure_text()})"
    )


async def _search_all(
    searchers: Sequence[Source], query: SearchQuery, tracker: Ledger
) -> list[tuple[str, list[Work]]]:
    answers = await asyncio.gather(
        *(ask(tracker, source.name, source.search(query)) for source in searchers)
    )
    return [
        (source.name, list(answer or [])) for source, answer in zip(searchers, answers, strict=True)
    ]


async def _resolve_title(title: str, opened: Sources, tracker: Ledger) -> _Resolution:
    """Search for `title`; accept only a work whose title agrees with it."""
    from refaudit.match import compare_titles
    from refaudit.sources.base import SearchQuery

    answers = await _search_all(
        opened.with_capability("search"),
        SearchQuery(title=title, limit=TITLE_CANDIDATES),
        tracker,
    )
    scored = []
    for cluster in _cluster(answers):
        merged = merge_records(cluster.records)
        comparison = compare_titles(title, merged.title or "", merged.subtitle)
        scored.append((comparison, merged, cluster))
    scored.sort(key=lambda item: (-item[0].score, -(item[1].citation_count or 0)))
    confident = [item for item in scored if item[0].kind in CONFIDENT_TITLE_KINDS]
    if confident:
        best = max(confident, key=lambda item: (item[0].score, item[1].citation_count or 0))
        records = {work.source: work for work in reversed(best[2].records)}
        await _complete(records, opened, tracker, set())
        return _Resolution("ok", records)
    closest = "; ".join(_describe(merged) for _, merged, _ in scored[:CLOSEST_SHOWN])
    message = f"no work titled {title!r} found"
    if closest:
        message += f"; closest: {closest}"
    return _nothing_found(message, tracker)


def _describe(work: Work) -> str:
    parts = [f"“{work.title}”"]
    if work.year:
        parts.append(str(work.year))
    identifier = work.doi or (f"arXiv:{work.arxiv_id}" if work.arxiv_id else None)
    if identifier:
        parts.append(identifier)
    return " ".join(parts)


def _open(
    settings: Settings,
    transport: httpx.AsyncBaseTransport | None,
    names: list[str] | None = None,
    stats: RunStats | None = None,
) -> AbstractAsyncContextManager[Sources]:
    """The sources, counting requests, cache hits and failures into `stats` when given."""
    from refaudit.sources import open_sources

    return open_sources(settings, stats or RunStats(), transport=transport, names=names)


# --- public API --------------------------------------------------------------------------


async def search_works(
    query: str,
    settings: Settings,
    *,
    year_from: int | None = None,
    year_to: int | None = None,
    sources: list[str] | None = None,
    limit: int = 10,
    topic_terms: Sequence[str] = (),
    transport: httpx.AsyncBaseTransport | None = None,
    stats: RunStats | None = None,
) -> SearchOutcome:
    """Search every chosen source and return merged works, best first.

    Relevance is reciprocal-rank fusion over the sources (a work several sources
    rank high comes first; an exact title match gets a bonus), ties broken by
    citation count. With `topic_terms` the query is a research topic: sources search
    titles and abstracts (those that AND their words get only these terms) and hits
    carry their abstracts.

    Raises:
        InputError: empty query, unknown source, or no chosen source can search.
    """
    from refaudit.sources.base import SearchQuery

    text = " ".join(query.split())
    if not text:
        raise InputError("the search query is empty")
    if limit < 1:
        raise InputError("--limit must be at least 1")
    for name in sources or []:
        problem = unusable_reason(name, settings)
        if problem:
            raise InputError(problem[0], hint=problem[1])
    tracker = Ledger()
    async with _open(settings, transport, sources, stats) as asked:
        searchers = [
            source
            # Quota-bound sources (Scopus, IEEE Xplore) search only when named.
            for source in asked.with_capability("search", budgeted=sources is not None)
            if sources is None or source.name in sources
        ]
        if not searchers:
            raise InputError("none of the chosen sources can search")
        search = SearchQuery(
            free_text=text,
            year_from=year_from,
            year_to=year_to,
            limit=limit,
            topic_terms=list(topic_terms),
        )
        queries = {source.name: source.describe_search(search) for source in searchers}
        answers = await _search_all(searchers, search, tracker)
    ranked: list[Work] = []
    for cluster in _cluster(answers):
        merged = merge_records(cluster.records)
        if _within_years(merged, year_from, year_to):
            merged.score = _relevance(cluster, text, merged)
            ranked.append(merged)
    ranked.sort(key=lambda work: (-(work.score or 0), -(work.citation_count or 0)))
    outcome = SearchOutcome(ranked[:limit], dict(tracker.statuses), queries=queries)
    if tracker.failures and not tracker.asked:
        outcome.status = "unverified"
        outcome.message = f"no source could answer ({tracker.failure_text()})"
    elif tracker.failures:
        outcome.message = f"results may be incomplete: {tracker.failure_text()}"
    return outcome


async def bibtex_entries(
    identifiers: list[str],
    settings: Settings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    stats: RunStats | None = None,
) -> list[BibtexEntry]:
    """BibTeX for each identifier or title, from the databases, keys unique across the list.

    Crossref DOIs use Crossref's own BibTeX (content negotiation), DataCite DOIs
    (arXiv's 10.48550 included) DataCite's; anything else is written from the
    merged record. Keys follow refaudit's `{family}{year}{firstword}` convention.
    """
    trackers = [Ledger() for _ in identifiers]
    async with _open(settings, transport, stats=stats) as opened:
        resolutions = await asyncio.gather(
            *(
                _resolve(text, opened, tracker)
                for text, tracker in zip(identifiers, trackers, strict=True)
            )
        )
        texts = await asyncio.gather(
            *(
                _fetch_bibtex(_entry_work(text, resolution), opened, tracker)
                for text, resolution, tracker in zip(
                    identifiers, resolutions, trackers, strict=True
                )
                if resolution.records
            )
        )
    fetched = iter(texts)
    taken: set[str] = set()
    entries: list[BibtexEntry] = []
    for text, resolution in zip(identifiers, resolutions, strict=True):
        work = _entry_work(text, resolution)
        if work is None:
            entries.append(BibtexEntry(text, resolution.status, message=resolution.message))
            continue
        bibtex, source, note = next(fetched)
        status: Status = "retracted" if is_withdrawn(work) else "ok"
        entry = BibtexEntry(text, status, bibtex, source=source, message=note, work=work)
        entries.append(rekey(entry, taken))
    return entries


def _entry_work(text: str, resolution: _Resolution) -> Work | None:
    """The published version's record, unless `text` names the preprint (arXiv id or DOI)."""
    identifier = parse_identifier(text)
    names_preprint = identifier is not None and (
        identifier.kind == "arxiv" or is_datacite_arxiv_doi(identifier.value)
    )
    return resolution.work if names_preprint else resolution.published_work


def is_withdrawn(work: Work) -> bool:
    """A notice withdraws the work itself (retraction, withdrawal, removal), or a source says so."""
    return work.is_retracted is True or any(
        notice.kind in WITHDRAWING_KINDS for notice in own_notices(work)
    )


async def bibtex_for_works(
    works: Sequence[Work],
    settings: Settings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    stats: RunStats | None = None,
) -> list[BibtexEntry]:
    """BibTeX for already merged records (search hits), keys unique across the list."""
    tracker = Ledger()
    async with _open(settings, transport, stats=stats) as opened:
        texts = await asyncio.gather(*(_fetch_bibtex(work, opened, tracker) for work in works))
    taken: set[str] = set()
    entries = []
    for work, (bibtex, source, note) in zip(works, texts, strict=True):
        label = work.doi or (f"arXiv:{work.arxiv_id}" if work.arxiv_id else work.title or "")
        entry = BibtexEntry(label, "ok", bibtex, source=source, message=note, work=work)
        entries.append(rekey(entry, taken))
    return entries


async def paper_details(
    identifier: str,
    settings: Settings,
    *,
    references: bool = False,
    citations: bool = False,
    limit: int = 20,
    transport: httpx.AsyncBaseTransport | None = None,
    stats: RunStats | None = None,
) -> PaperDetails:
    """The merged record of one work, each source's record, notices and citation graph."""
    tracker = Ledger()
    async with _open(settings, transport, stats=stats) as opened:
        resolution = await _resolve(identifier, opened, tracker)
        work = resolution.work
        details = PaperDetails(identifier, resolution.status, message=resolution.message)
        if work is not None:
            details.work = work
            details.records = resolution.records
            details.notices = own_notices(work)
            details.fields = field_origins(resolution.records)
            details.message = _integrity_note(work)
            if references:
                details.references = await _neighbours(
                    "references", work, resolution.records, opened, tracker, limit
                )
            if citations:
                details.citations = await _neighbours(
                    "citations", work, resolution.records, opened, tracker, limit
                )
    details.sources = dict(tracker.statuses)
    return details


# --- BibTeX -------------------------------------------------------------------------------


def _agency(work: Work) -> str | None:
    """The registration agency whose own BibTeX to ask for, when the DOI is known to it."""
    if not work.doi:
        return None
    if is_datacite_arxiv_doi(work.doi) or "datacite" in work.found_in:
        return "datacite"
    if "crossref" in work.found_in:
        return "crossref"
    return None


async def _fetch_bibtex(
    work: Work | None, opened: Sources, tracker: Ledger
) -> tuple[str, str, str]:
    """(BibTeX, origin, note): the agency's own entry, else one written from the record."""
    from refaudit.bibtex import work_to_entry

    assert work is not None
    agency = _agency(work)
    source = opened.get(agency) if agency else None
    note = ""
    if agency and work.doi and isinstance(source, BibtexProvider):
        text = await ask(tracker, agency, source.fetch_bibtex(work.doi))
        if text and _BIBTEX_HEAD.match(text):
            return one_field_per_line(text), agency, _integrity_note(work)
        status = tracker.statuses.get(agency)
        failure = status.reason if status and status.state == "failed" else "no BibTeX returned"
        note = f"{agency} BibTeX unavailable ({failure}); "
    built_from = ", ".join(work.found_in)
    note += f"built from the merged record ({built_from})"
    integrity = _integrity_note(work)
    return work_to_entry(work), "record", f"{note}. {integrity}" if integrity else note


def one_field_per_line(bibtex: str) -> str:
    """Lay out an agency's entry one field per line and make its values LaTeX-safe.

    Crossref and DataCite write plain text into their BibTeX (`Q&A`, `0.05%`,
    `436–444`): a `%` comments out the rest of the line and a bare `&` stops LaTeX.
    Each value is escaped and its title's acronyms braced as refaudit's own entries are;
    values already written as LaTeX keep their markup, identifiers stay untouched.
    """
    text = bibtex.strip()
    head = _BIBTEX_HEAD.match(text)
    if not head or not text.endswith("}"):
        return text + "\n"
    body = text[head.end() : -1]
    fields: list[str] = []
    depth, quoted, start = 0, False, 0
    for index, char in enumerate(body):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == '"' and depth == 0:
            quoted = not quoted
        elif char == "," and depth == 0 and not quoted:
            fields.append(body[start:index])
            start = index + 1
    fields.append(body[start:])
    lines = [f"  {_latex_safe_field(part.strip())}," for part in fields if part.strip()]
    return f"@{head.group(1)}{{{head.group(2)},\n" + "\n".join(lines) + "\n}\n"


def _latex_safe_field(part: str) -> str:
    """`name = {value}` with the value escaped for LaTeX (bare macros like `month=May` kept)."""
    from refaudit.bibtex import page_range, protect_title

    name, equals, value = part.partition("=")
    delimited = value.strip()
    field_name = name.strip().lower()
    if not equals or field_name in _VERBATIM_FIELDS or len(delimited) < 2:
        return part
    opening, inner, closing = delimited[0], delimited[1:-1], delimited[-1]
    if (opening, closing) not in (("{", "}"), ('"', '"')):
        return part
    if field_name == "pages":
        inner = page_range(inner)
    if field_name == "title" and not _LATEX_MARKUP.search(inner):
        inner = protect_title(inner)
    else:
        inner = _BARE_SPECIAL.sub(lambda match: "\\" + match.group(0), inner)
    return f"{name}{equals}{value[: len(value) - len(value.lstrip())]}{opening}{inner}{closing}"


def own_notices(work: Work) -> list[Notice]:
    """The notices about `work` itself: a notice record also lists the notice it is."""
    own = normalize_doi(work.doi)
    return [
        notice
        for notice in work.notices
        if not (own and notice.target_doi and normalize_doi(notice.target_doi) != own)
    ]


def _integrity_note(work: Work) -> str:
    """A warning worth showing next to any BibTeX or details of a flagged work.

    A retraction notice's own record is not a retracted work: it is named as the
    notice it is, with the DOI it concerns.
    """
    own = own_notices(work)
    notes = [
        f"note: this is the {notice.kind.value.replace('_', ' ')} notice for {notice.target_doi}"
        for notice in work.notices
        if notice not in own
    ]
    kinds = sorted({notice.kind.value.replace("_", " ") for notice in own})
    serious = sorted({n.kind.value.replace("_", " ") for n in own if n.kind in WITHDRAWING_KINDS})
    if serious:
        notes.append(f"warning: this work has a {', '.join(serious)} notice")
    elif work.is_retracted:
        notes.append("warning: a source marks this work as retracted")
    elif kinds:
        notes.append(f"notices: {', '.join(kinds)}")
    return "; ".join(dict.fromkeys(notes))


def metadata_entry(work: Work) -> BibtexEntry:
    """BibTeX written from metadata the caller already holds (no source is asked)."""
    from refaudit.bibtex import work_to_entry

    label = work.doi or (f"arXiv:{work.arxiv_id}" if work.arxiv_id else work.title or "")
    return BibtexEntry(
        label,
        "ok",
        work_to_entry(work),
        source="metadata",
        message="written from the metadata given, not checked against a source",
        work=work,
    )


def rekey(entry: BibtexEntry, taken: set[str]) -> BibtexEntry:
    """Give `entry` refaudit's key for its work, unique against `taken` (which it joins)."""
    from refaudit.bibtex import make_key

    if entry.bibtex is None or entry.work is None:
        return entry
    lowered = {key.lower() for key in taken}
    key = make_key(entry.work, lowered)
    taken.add(key)
    bibtex = _BIBTEX_HEAD.sub(lambda m: f"@{m.group(1)}{{{key},", entry.bibtex, count=1)
    return dataclasses.replace(entry, bibtex=bibtex, key=key)


def bib_file_keys(text: str) -> set[str]:
    """Citation keys defined in a .bib file's text (lower case: BibTeX ignores case)."""
    return {
        key.lower() for kind, key in _BIB_KEYS.findall(text) if kind.lower() not in _NON_ENTRIES
    }


def append_to_bib(
    path: Path, entries: Sequence[BibtexEntry], *, rename: bool
) -> tuple[list[BibtexEntry], list[tuple[BibtexEntry, str]]]:
    """Append the entries that have BibTeX to `path`, separated by blank lines.

    An entry whose DOI the file already cites, or whose key the file already
    uses for the same DOI, is not written again. Another work under a key the
    file uses is refused unless `rename`, which gives it a unique key instead.
    Returns the entries as written, and those left out with the reason.

    Raises:
        InputError: the file cannot be read or written, or keys clash without `rename`.
    """
    try:
        existing = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", file=str(path)) from exc
    present = bib_file_keys(existing)
    cited = _cited_dois(existing, path)
    writable: list[BibtexEntry] = []
    skipped: list[tuple[BibtexEntry, str]] = []
    for entry in entries:
        if not entry.bibtex:
            continue
        doi = normalize_doi(entry.work.doi) if entry.work and entry.work.doi else None
        same_key = entry.key and entry.key.lower() in present and doi and cited.get(doi)
        if doi and doi in cited:
            skipped.append((entry, f"already in {path} as {cited[doi]}"))
        elif same_key:
            skipped.append((entry, f"already in {path} as {entry.key}"))
        else:
            writable.append(entry)
    clashes = [entry.key for entry in writable if entry.key and entry.key.lower() in present]
    if clashes and not rename:
        raise InputError(
            f"keys already in the file: {', '.join(clashes)}",
            file=str(path),
            hint="pass --rename to give the new entries unique keys",
        )
    if rename:
        taken = set(present)
        writable = [rekey(entry, taken) for entry in writable]
    blocks = [entry.bibtex.strip() for entry in writable if entry.bibtex]
    if not blocks:
        return [], skipped
    if not existing.strip() or existing.endswith("\n\n"):
        separator = ""
    else:
        separator = "\n" if existing.endswith("\n") else "\n\n"
    try:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(separator + "\n\n".join(blocks) + "\n")
    except OSError as exc:
        raise InputError(f"cannot write: {exc}", file=str(path)) from exc
    return writable, skipped


def _cited_dois(text: str, path: Path) -> dict[str, str]:
    """DOI → citation key of every entry in a .bib text."""
    if not text.strip():
        return {}
    from refaudit.parsing import parse_bibtex

    bibliography = parse_bibtex(text, file=str(path))
    return {
        normalize_doi(reference.doi) or reference.doi.lower(): reference.key
        for reference in bibliography.references
        if reference.doi
    }


# --- show ----------------------------------------------------------------------------------


def _display(name: str, value: object) -> str:
    if value is None or value == [] or value == "":
        return ""
    if name == "authors":
        return "; ".join(person.display() for person in value)  # type: ignore[attr-defined]
    return str(value)


def _comparable(name: str, work: Work) -> str:
    """The form in which two sources' values count as the same (spelling, initials aside)."""
    from refaudit.match import normalize_text

    value = _display(name, getattr(work, name))
    if name == "authors":
        return "; ".join(normalize_text(person.full_family) for person in work.authors)
    if name in ("doi", "arxiv_id", "pmid", "year", "citation_count"):
        return value.lower()
    if name == "pages":
        return re.sub(r"\s*[-\u2013\u2014]+\s*", "-", value)
    return normalize_text(value)


def field_origins(records: dict[str, Work]) -> list[FieldOrigin]:
    """For each compared field: the merged value, its source, and the sources that differ."""
    ordered = sorted(records.values(), key=lambda work: priority(work.source))
    merged = merge_records(ordered)
    origins: list[FieldOrigin] = []
    for name in _COMPARED_FIELDS:
        chosen = _display(name, getattr(merged, name))
        if not chosen:
            continue
        having = [w for w in ordered if _display(name, getattr(w, name))]
        same = [w for w in having if _comparable(name, w) == _comparable(name, merged)]
        others = {w.source: _display(name, getattr(w, name)) for w in having if w not in same}
        winner = same[0].source if same else merged.source
        origins.append(FieldOrigin(name, chosen, winner, others))
    return origins


def _graph_ids(work: Work, source: str) -> str | None:
    """The id a citation-graph source accepts for `work`."""
    if source == "semanticscholar":
        if work.s2_id:
            return work.s2_id
        if work.doi and not is_datacite_arxiv_doi(work.doi):
            return f"DOI:{work.doi}"
        return f"ARXIV:{work.arxiv_id}" if work.arxiv_id else None
    if source == "openalex":
        return work.openalex_id
    return None


async def _neighbours(
    direction: Literal["references", "citations"],
    work: Work,
    records: dict[str, Work],
    opened: Sources,
    tracker: Ledger,
    limit: int,
) -> list[Work]:
    """The works `work` cites (or that cite it), most cited first.

    Semantic Scholar is asked first; OpenAlex answers when S2 failed or knows no
    neighbours, since each graph misses links the other has.
    """
    for name in registry.ranked_by("citation_graph"):
        source = opened.get(name)
        record = records.get(name, work)
        paper_id = _graph_ids(record, name)
        if not isinstance(source, CitationGraph) or not paper_id:
            continue
        call = getattr(source, direction)(paper_id, max(limit, GRAPH_FETCH))
        answer = await ask(tracker, name, call)
        if answer:
            return rank_by_citations(answer, limit)
    return []
