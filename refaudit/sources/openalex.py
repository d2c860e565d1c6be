"""OpenAlex: an open index of works that joins DOIs, PubMed ids, arXiv copies and citations.

API docs: https://docs.openalex.org/api-entities/works

What refaudit asks:
- DOI lookups as one OR filter per batch: `GET /works?filter=doi:A|B|…&per_page=N`
  (BATCH_SIZE ids; OpenAlex allows up to 100 values in one OR filter).
  OpenAlex silently drops values it cannot parse from an OR list, so every DOI is
  validated first and those with a `|` or `,` (filter syntax) are fetched alone.
  A single DOI asked while the pool is busy (on a server, one call's citation or
  retraction check) shares its filter with the DOIs other calls ask about meanwhile.
- OpenAlex work ids (`filter=openalex:W1|W2`) and PMIDs (`filter=ids.pmid:1|2`).
- Title search: `GET /works?search=<title>&per_page=N`. `search` ANDs its words over
  title and abstract, so author names and years are left out of the query. Title
  searches that arrive within a few of the pool's intervals of each other go as one
  request, `search=(title one) OR (title two) OR …&per_page=200` (OpenAlex's boolean
  search; the URL stays under its ~4 KB bound), and each title takes the works that
  hold its words (`_TitleSearch.may_match`). A title whose works would not all fit
  its own page, or a batch whose works overflow one page, is asked again on its own,
  so every title gets what its own search would give; that answer is cached as its
  own search's, so a later run asks nothing. A title holding search syntax (quotes,
  parentheses, AND/OR/NOT) is always searched alone.
- Topic search (novelty): `filter=title_and_abstract.search:<key terms>`, which ANDs
  the terms over title and abstract.
- `is_retracted`, `cited_by_count`, the abstract (rebuilt from its inverted index).

Rate limit: 10 requests/s and a daily budget per key. Since February 2026 an API
key (OPENALEX_API_KEY) is required for real use; it is sent as `api_key`. Etiquette:
set `mailto` (REFAUDIT_MAILTO), sent as a parameter.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from refaudit.config import Settings
from refaudit.errors import NothingToAsk, UnexpectedResponse
from refaudit.identifiers import arxiv_id_from_doi, normalize_doi, parse_arxiv_id
from refaudit.models import Person, Work
from refaudit.names import person_from_name
from refaudit.sources.base import SearchQuery, Source, all_at_once
from refaudit.sources.client import SourceClient
from refaudit.sources.coalesce import Coalescer, client_coalescer
from refaudit.sources.mapping import (
    as_dict,
    as_dicts,
    as_int,
    chunked,
    first_text,
    normalize_orcid,
    unique,
)
from refaudit.sources.pacing import RateLimit
from refaudit.sources.response import Fetched
from refaudit.text import strip_markup

NAME = "openalex"
#: OpenAlex allows 100 values in one OR filter.
BATCH_SIZE = 100
RATE_LIMIT = RateLimit(rps=10, burst=5, concurrency=5)
#: The encoded `search` of a batched title search at most: OpenAlex bounds the whole URL
#: at about 4 KB, and `select` and the contact address take the rest.
MAX_SEARCH_CHARS = 3000
#: Works a batched title search asks for: OpenAlex's largest page.
BATCH_PAGE = 200
#: Search syntax (phrases, grouping, operators): a title holding any is searched alone.
_BOOLEAN_SYNTAX = re.compile(r'[()"]|\b(?:AND|OR|NOT)\b')
_WORD = re.compile(r"[^\W_]+")

SELECT_FIELDS = (
    "id",
    "doi",
    "title",
    "display_name",
    "publication_year",
    "publication_date",
    "ids",
    "type",
    "primary_location",
    "locations",
    "authorships",
    "biblio",
    "cited_by_count",
    "is_retracted",
    "abstract_inverted_index",
)
_OPENALEX_PREFIX = re.compile(r"^(?:https?://)?(?:openalex\.org/)?", re.IGNORECASE)
_WORK_ID = re.compile(r"^W\d+$")
_FILTER_SYNTAX = re.compile(r"[|,]")
#: Works one search by names and year returns: an author's output of a year.
NAMES_PAGE = 50
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([^\s?#]+)", re.IGNORECASE)


class OpenAlexSource(Source):
    """DOI, PMID and OpenAlex-id lookups, title search and the citation graph (api.openalex.org)."""

    name = NAME
    batches_searches = True

    def __init__(self, client: SourceClient, settings: Settings) -> None:
        super().__init__(client, settings)
        self._auth: list[tuple[str, Any]] = []
        if settings.mailto:
            self._auth.append(("mailto", settings.mailto))
        if settings.api_key(NAME):
            self._auth.append(("api_key", settings.api_key(NAME)))
        self._offline = settings.offline
        self._titles: Coalescer[_TitleSearch, list[Work]] = client_coalescer(
            client, self._search_titles, _fits_one_search
        )
        self._dois: Coalescer[str, dict[str, Work]] = client_coalescer(
            client, self._lookup_together, lambda dois: len(unique(dois)) <= BATCH_SIZE
        )

    def id_batches(self, keys: list[str]) -> list[list[str]]:
        alone = [[d] for d in keys if not _fits_filter(d)]
        return alone + list(chunked([d for d in keys if _fits_filter(d)], BATCH_SIZE))

    async def lookup_dois(self, dois: list[str]) -> dict[str, Work]:
        wanted = unique([normalize_doi(doi) for doi in dois])
        if len(wanted) == 1 and _fits_filter(wanted[0]):
            return await self._lookup_one(wanted[0])
        found: dict[str, Work] = {}
        for doi in (d for d in wanted if not _fits_filter(d)):
            work = await self._fetch_single(f"doi:{quote(doi, safe='/')}")
            if work is not None and work.doi == doi:
                found[doi] = work
        batchable = [d for d in wanted if _fits_filter(d)]
        found.update(await self._by_filter("doi", batchable, lambda work: work.doi))
        return found

    async def _lookup_one(self, doi: str) -> dict[str, Work]:
        """One citation's DOI (a reference checked alone, a retraction check): on a server,
        while the pool is busy, it shares an OR filter with the DOIs other calls ask about
        meanwhile rather than queue a request of its own."""
        cached = self.client.cached("/works", self._filter_params("doi", [doi]))
        if cached is None:
            found = await self._dois.ask(doi, at_once=self.client.idle("default"))
        else:
            found = {work.doi: work for work in map(to_work, _results(cached)) if work.doi}
        return {doi: found[doi]} if doi in found else {}

    async def _lookup_together(self, dois: list[str]) -> list[dict[str, Work]]:
        """One OR filter for `dois`; each DOI's part of a shared answer is cached as the
        answer to its own filter, so a later call asks for it alone without sending anything."""
        wanted = unique(dois)
        fetched = await self.client.get(
            "/works", self._filter_params("doi", wanted), ttl="integrity"
        )
        items = {}
        for item in _results(fetched):
            work = to_work(item)
            if work.doi in wanted:
                items[work.doi] = (work, item)
        for doi in wanted if len(wanted) > 1 else ():
            results = [items[doi][1]] if doi in items else []
            answer = {"meta": {"count": len(results)}, "results": results}
            self.client.remember(
                "/works", self._filter_params("doi", [doi]), json.dumps(answer), ttl="integrity"
            )
        return [{doi: work for doi, (work, _item) in items.items()}] * len(dois)

    async def lookup_ids(self, ids: list[str]) -> dict[str, Work]:
        wanted = unique([_work_id(value) for value in ids])
        return await self._by_filter("openalex", wanted, lambda work: work.openalex_id)

    async def lookup_pmids(self, pmids: list[str]) -> dict[str, Work]:
        wanted = unique([p.strip() for p in pmids if p and p.strip().isdigit()])
        return await self._by_filter("ids.pmid", wanted, lambda work: work.pmid)

    async def _by_filter(
        self, key: str, wanted: list[str], key_of: Callable[[Work], str | None]
    ) -> dict[str, Work]:
        """The works whose `key` is one of `wanted`: one OR-filter per batch, all sent at once."""
        batches = list(chunked(wanted, BATCH_SIZE))
        answers = await all_at_once(self._filter(key, batch) for batch in batches)
        found: dict[str, Work] = {}
        for batch, works in zip(batches, answers, strict=True):
            for work in works:
                value = key_of(work)
                if value is not None and value in batch:
                    found[value] = work
        return found

    async def search(self, query: SearchQuery) -> list[Work]:
        text = self.describe_search(query)
        if not text:
            raise NothingToAsk(NAME)
        if query.topic_terms or query.year_from or query.year_to or _BOOLEAN_SYNTAX.search(text):
            return await self._search_alone(query, text)
        asked = _TitleSearch.of(text, min(BATCH_PAGE, max(1, query.limit)))
        cached = self.client.cached("/works", self._title_params(asked))
        if cached is not None:
            return [to_work(item) for item in _results(cached)]
        if self._offline:
            return await self._search_one(asked)  # the client says it is not in the cache
        return await self._titles.ask(asked)

    def _title_params(self, asked: _TitleSearch) -> list[tuple[str, Any]]:
        """The parameters of `asked` searched on its own (also its key in the cache)."""
        return self._search_params(asked.text, asked.limit)

    def _search_params(self, search: str, per_page: int) -> list[tuple[str, Any]]:
        return [
            ("search", search),
            ("per_page", per_page),
            ("select", ",".join(SELECT_FIELDS)),
            *self._auth,
        ]

    async def _search_one(self, asked: _TitleSearch) -> list[Work]:
        fetched = await self.client.get("/works", self._title_params(asked), ttl="search")
        return [to_work(item) for item in _results(fetched)]

    async def _search_titles(self, batch: list[_TitleSearch]) -> list[list[Work]]:
        """Each title search of `batch`'s works, from one request where they share it."""
        if len(batch) == 1:
            return [await self._search_one(batch[0])]
        params = self._search_params(_batch_search(batch), BATCH_PAGE)
        fetched = await self.client.get("/works", params, ttl="search", cache=False)
        items = _results(fetched)
        count = as_int(
            as_dict(fetched.member(kind=dict, missing="no list").get("meta")).get("count")
        )
        if count is None or count > len(items):
            # Some works did not fit the page: which titles they belong to is unknown.
            half = len(batch) // 2
            first, second = await all_at_once(
                [self._search_titles(batch[:half]), self._search_titles(batch[half:])]
            )
            return [*first, *second]
        answers: list[list[Work]] = []
        alone: list[int] = []
        helds = [_held(item) for item in items]
        for index, asked in enumerate(batch):
            mine = [item for item, held in zip(items, helds, strict=True) if asked.may_match(held)]
            if len(mine) > asked.limit:
                # Its own search would rank them and keep the best: ask it.
                alone.append(index)
                answers.append([])
                continue
            answer = {
                "meta": {"count": len(mine), "page": 1, "per_page": asked.limit},
                "results": mine,
            }
            self.client.remember(
                "/works", self._title_params(asked), json.dumps(answer), ttl="search"
            )
            answers.append([to_work(item) for item in mine])
        singles = await all_at_once(self._search_one(batch[index]) for index in alone)
        for index, works in zip(alone, singles, strict=True):
            answers[index] = works
        return answers

    async def _search_alone(self, query: SearchQuery, text: str) -> list[Work]:
        filters = []
        params: list[tuple[str, Any]] = [
            ("per_page", min(200, max(1, query.limit))),
            ("select", ",".join(SELECT_FIELDS)),
        ]
        if query.topic_terms:
            filters.append(f"title_and_abstract.search:{text}")
        elif _names_and_year(query):
            # A citation string without a title: `search` reads titles and abstracts,
            # which hold none of its names or venue. Its bylines are searched instead,
            # within the cited year, and a longer page holds that author's year.
            names = dict.fromkeys(_FILTER_SYNTAX.sub(" ", name) for name in query.authors)
            filters += [f"raw_author_name.search:{name}" for name in names]
            params[0] = ("per_page", NAMES_PAGE)
        else:
            params.insert(0, ("search", text))
        years = _year_filter(query.year_from, query.year_to)
        if years:
            filters.append(f"publication_year:{years}")
        if filters:
            params.append(("filter", ",".join(filters)))
        fetched = await self.client.get("/works", [*params, *self._auth], ttl="search")
        return [to_work(item) for item in _results(fetched)]

    def describe_search(self, query: SearchQuery) -> str:
        """A topic's key terms (ANDed over title and abstract), else the title or free text."""
        if query.topic_terms:
            return " ".join(_FILTER_SYNTAX.sub(" ", term) for term in query.topic_terms).strip()
        return strip_markup(query.title) or query.free_text or ""

    async def changes_since(
        self, day: str, per_page: int = 200
    ) -> AsyncIterator[list[dict[str, Any]]]:
        """Every work changed since `day`, a page at a time (`mirror update`).

        `filter=from_updated_date:` with cursor paging; pages are never cached.
        """
        cursor: str | None = "*"
        while cursor:
            params = [
                ("filter", f"from_updated_date:{day}"),
                ("per_page", per_page),
                ("cursor", cursor),
            ]
            fetched = await self.client.get("/works", [*params, *self._auth], cache=False)
            results = _results(fetched)
            if not results:
                return
            yield results
            cursor = fetched.json().get("meta", {}).get("next_cursor")

    async def references(self, paper_id: str, limit: int = 100) -> list[Work]:
        """Works `paper_id` cites that OpenAlex has resolved, most cited first."""
        return await self._related("cited_by", paper_id, limit)

    async def citations(self, paper_id: str, limit: int = 100) -> list[Work]:
        """Works citing `paper_id`, most cited first."""
        return await self._related("cites", paper_id, limit)

    async def _related(self, relation: str, paper_id: str, limit: int) -> list[Work]:
        work_id = _work_id(paper_id)
        if not work_id:
            return []
        params = [
            ("filter", f"{relation}:{work_id}"),
            ("sort", "cited_by_count:desc"),
            ("per_page", min(200, max(1, limit))),
            ("select", ",".join(SELECT_FIELDS)),
        ]
        fetched = await self.client.get("/works", [*params, *self._auth])
        return [to_work(item) for item in _results(fetched)]

    def _filter_params(self, field: str, values: list[str]) -> list[tuple[str, Any]]:
        """The parameters of one OR filter (also its key in the cache)."""
        return [
            ("filter", f"{field}:{'|'.join(values)}"),
            ("per_page", len(values)),
            ("select", ",".join(SELECT_FIELDS)),
            *self._auth,
        ]

    async def _filter(self, field: str, values: list[str]) -> list[Work]:
        # Lookups carry `is_retracted`, which must not be trusted from a week-old answer.
        fetched = await self.client.get(
            "/works", self._filter_params(field, values), ttl="integrity"
        )
        return [to_work(item) for item in _results(fetched)]

    async def _fetch_single(self, key: str) -> Work | None:
        fetched = await self.client.get(f"/works/{key}", self._auth, ttl="integrity")
        if fetched.status == 404:
            return None
        return to_work(fetched.member(kind=dict, missing="work answer is not an object"))


@dataclass(frozen=True)
class _TitleSearch:
    """One title search: its text, how many works it asks for, and the words (reduced
    as `_reduce` reduces them, four letters or more) a work must hold to match it."""

    text: str
    limit: int
    words: tuple[str, ...] = ()

    @classmethod
    def of(cls, text: str, limit: int) -> _TitleSearch:
        return cls(text, limit, tuple(w for w in map(_reduce, _words(text)) if len(w) >= 4))

    def may_match(self, held: _Held) -> bool:
        """The work whose words are `held` has every word of the title in its title or
        abstract.

        OpenAlex stems words and drops stop words; this test is looser than its
        (plurals reduced, then a shared beginning of three to five letters, words
        under four letters ignored), so a work this search found through its title
        or abstract is never lost (one found through its full text alone does not
        carry the cited title and is left out). A work of another title in the batch
        that passes it too is almost always one this search finds as well; if it
        makes more works than the page holds, the title is asked again alone.
        """
        return all(_akin(word, held) for word in self.words)


#: By length k (3-5): the first k letters of a work's words longer than k, and of those
#: exactly k + 1 letters long.
_Held = dict[int, tuple[set[str], set[str]]]


def _batch_search(batch: list[_TitleSearch]) -> str:
    """One `search` for every title of `batch`: OpenAlex's boolean OR of each."""
    return " OR ".join(f"({asked.text})" for asked in batch)


def _fits_one_search(batch: list[_TitleSearch]) -> bool:
    return len(quote(_batch_search(batch), safe="")) <= MAX_SEARCH_CHARS


def _words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKD", strip_markup(text) or "").lower()
    return _WORD.findall("".join(c for c in folded if not unicodedata.combining(c)))


def _reduce(word: str) -> str:
    """A plural's singular (studies → study, networks → network), as search engines stem."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "shes", "ches", "xes", "zes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _held(item: dict[str, Any]) -> _Held:
    """The words of a work's title and abstract, as `_TitleSearch.may_match` reads them."""
    text = " ".join(
        part
        for part in (
            first_text(item.get("display_name")),
            first_text(item.get("title")),
            abstract_from_index(item.get("abstract_inverted_index")),
        )
        if part
    )
    held: _Held = {k: (set(), set()) for k in (3, 4, 5)}
    for word in {_reduce(w) for w in _words(text)}:
        for k, (longer, next_up) in held.items():
            if len(word) > k:
                longer.add(word[:k])
            if len(word) == k + 1:
                next_up.add(word[:k])
    return held


def _akin(word: str, held: _Held) -> bool:
    """Some held word shares its beginning with `word`: all but one letter of the shorter
    of the two, and at most five."""
    most = min(len(word), 6) - 1
    if word[:most] in held[most][0]:
        return True
    return any(word[:k] in held[k][1] for k in range(3, most))


def _names_and_year(query: SearchQuery) -> bool:
    """A citation string read without a title, with its authors and a cited year."""
    return (
        bool(query.free_text and not query.title and query.authors and query.year_from)
        and query.year_from == query.year_to
    )


def _year_filter(year_from: int | None, year_to: int | None) -> str | None:
    if year_from and year_from == year_to:
        return str(year_from)
    if year_from and year_to:
        return f"{year_from}-{year_to}"
    if year_from:
        return f">{year_from - 1}"
    if year_to:
        return f"<{year_to + 1}"
    return None


def _fits_filter(doi: str) -> bool:
    """`|` and `,` are filter syntax: a DOI holding either is fetched alone."""
    return not _FILTER_SYNTAX.search(doi)


def _work_id(value: str | None) -> str | None:
    if not value:
        return None
    candidate = _OPENALEX_PREFIX.sub("", value.strip()).upper()
    return candidate if _WORK_ID.match(candidate) else None


def _results(fetched: Fetched) -> list[dict[str, Any]]:
    return fetched.records("results", missing="work list without results")


def to_work(item: dict[str, Any]) -> Work:
    """An OpenAlex work object as a Work."""
    openalex_id = _work_id(first_text(item.get("id")))
    if not openalex_id:
        raise UnexpectedResponse(NAME, "work without an OpenAlex id")
    ids = as_dict(item.get("ids"))
    doi = normalize_doi(first_text(item.get("doi")) or first_text(ids.get("doi")))
    raw_title = first_text(item.get("display_name")) or first_text(item.get("title"))
    primary = as_dict(item.get("primary_location"))
    source = as_dict(primary.get("source"))
    biblio = as_dict(item.get("biblio"))
    arxiv = _arxiv(item, doi)
    retracted = item.get("is_retracted")
    return Work(
        source=NAME,
        source_id=openalex_id,
        url=f"https://openalex.org/{openalex_id}",
        type=first_text(item.get("type")),
        title=strip_markup(raw_title),
        raw_title=raw_title,
        authors=[p for p in map(_person, as_dicts(item.get("authorships"))) if p is not None],
        year=as_int(item.get("publication_year")),
        date=first_text(item.get("publication_date")),
        venue=first_text(source.get("display_name")),
        publisher=first_text(source.get("host_organization_name")),
        volume=first_text(biblio.get("volume")),
        issue=first_text(biblio.get("issue")),
        pages=_pages(first_text(biblio.get("first_page")), first_text(biblio.get("last_page"))),
        doi=doi,
        arxiv_id=arxiv[0] if arxiv else None,
        arxiv_version=arxiv[1] if arxiv else None,
        pmid=_last_segment(first_text(ids.get("pmid"))),
        pmcid=_pmcid(first_text(ids.get("pmcid"))),
        openalex_id=openalex_id,
        abstract=abstract_from_index(item.get("abstract_inverted_index")),
        citation_count=as_int(item.get("cited_by_count")),
        is_retracted=retracted if isinstance(retracted, bool) else None,
    )


def abstract_from_index(index: Any) -> str | None:
    """Rebuild the abstract OpenAlex ships as {word: [positions]}."""
    if not isinstance(index, dict) or not index:
        return None
    placed: dict[int, str] = {}
    for word, positions in index.items():
        for position in positions if isinstance(positions, list) else []:
            if isinstance(position, int):
                placed[position] = word
    return " ".join(placed[i] for i in sorted(placed)) or None


def _person(authorship: dict[str, Any]) -> Person | None:
    author = as_dict(authorship.get("author"))
    name = first_text(authorship.get("raw_author_name")) or first_text(author.get("display_name"))
    if not name:
        return None
    person = person_from_name(name)
    person.orcid = normalize_orcid(author.get("orcid")) or normalize_orcid(
        authorship.get("raw_orcid")
    )
    return person


def _arxiv(item: dict[str, Any], doi: str | None) -> tuple[str, int | None] | None:
    from_doi = arxiv_id_from_doi(doi)
    if from_doi:
        return from_doi, None
    for location in as_dicts(item.get("locations")) + [as_dict(item.get("primary_location"))]:
        location_id = first_text(location.get("id")) or ""
        if location_id.lower().startswith("arxiv:"):
            parsed = parse_arxiv_id(location_id[len("arxiv:") :])
            if parsed:
                return parsed
        match = _ARXIV_URL.search(first_text(location.get("landing_page_url")) or "")
        if match:
            parsed = parse_arxiv_id(match.group(1).removesuffix(".pdf"))
            if parsed:
                return parsed
    return None


def _pages(first: str | None, last: str | None) -> str | None:
    if first and last and first != last:
        return f"{first}-{last}"
    return first or last


def _last_segment(url: str | None) -> str | None:
    segment = url.rstrip("/").rsplit("/", 1)[-1] if url else None
    return segment if segment and segment.isdigit() else None


def _pmcid(url: str | None) -> str | None:
    segment = url.rstrip("/").rsplit("/", 1)[-1].upper() if url else None
    if not segment:
        return None
    return segment if segment.startswith("PMC") else f"PMC{segment}"
