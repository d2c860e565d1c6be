"""PubMed through NCBI E-utilities.

Docs: https://www.ncbi.nlm.nih.gov/books/NBK25499/

What refaudit asks: `esummary.fcgi?db=pubmed&id=1,2,3&retmode=json` for
PMIDs (up to 200 per call); DOIs and bibliographic searches go through
`esearch.fcgi?term=…` (`"doi"[doi] OR …`, `word[ti] AND Family[au]`) and then
esummary. Docsums carry PubMed's integrity links: publication type
"Retracted Publication" and `references` such as "Retraction in" or
"Expression of concern in", which become Notices.

Rate limit: 3 requests per second without an API key, 10 with one
(`NCBI_API_KEY`). Etiquette: every request names `tool=refaudit` and, when
configured, the contact `email`. NCBI reports an exceeded rate inside a
200 body (`{"error": "API rate limit exceeded"}`); that is retried like a 429.
"""

from __future__ import annotations

import re
from typing import Any

from refaudit.config import Settings
from refaudit.errors import NothingToAsk, RateLimited, UnexpectedResponse
from refaudit.identifiers import normalize_doi
from refaudit.models import Notice, Person, Work
from refaudit.names import display_name_to_person
from refaudit.notices import normalize_notice_kind
from refaudit.sources.base import SearchQuery, Source, all_at_once
from refaudit.sources.client import SourceClient
from refaudit.sources.mapping import chunked, query_words, year_from
from refaudit.sources.pacing import RateLimit
from refaudit.sources.response import Fetched
from refaudit.sources.types import work_type
from refaudit.text import strip_markup

NAME = "pubmed"
BATCH_SIZE = 200
DOI_BATCH_SIZE = 50
RATE_LIMIT = RateLimit(rps=3.0, burst=1)
KEYED_RATE_LIMIT = RateLimit(rps=10.0, burst=1)
MAX_TITLE_WORDS = 10
MONTHS = {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)}
# Links on the updated paper that announce an integrity notice (the notice itself says "… of").
NOTICE_REFTYPES = frozenset(
    {
        "retraction in",
        "partial retraction in",
        "retracted and republished in",
        "erratum in",
        "expression of concern in",
    }
)


def rate_limits(settings: Settings) -> dict[str, RateLimit]:
    """NCBI allows 10 rps to callers with an API key, 3 to everyone else."""
    return {"default": KEYED_RATE_LIMIT if settings.api_key(NAME) else RATE_LIMIT}


class PubMedSource(Source):
    """PMID and DOI lookups and title/author search against E-utilities."""

    name = NAME

    def __init__(self, client: SourceClient, settings: Settings) -> None:
        super().__init__(client, settings)
        self._etiquette = {
            "tool": "refaudit",
            "email": settings.mailto,
            "api_key": settings.api_key(NAME),
        }

    async def lookup_pmids(self, pmids: list[str]) -> dict[str, Work]:
        wanted = list(dict.fromkeys(p.strip() for p in pmids if p.strip().isdigit()))
        found: dict[str, Work] = {}
        for answer in await all_at_once(map(self._summaries, chunked(wanted, BATCH_SIZE))):
            found.update(answer)
        return found

    async def lookup_dois(self, dois: list[str]) -> dict[str, Work]:
        wanted = list(dict.fromkeys(d for d in (normalize_doi(x) for x in dois) if d))
        found: dict[str, Work] = {}
        for answer in await all_at_once(map(self._by_dois, chunked(wanted, DOI_BATCH_SIZE))):
            found.update(answer)
        return found

    async def _by_dois(self, dois: list[str]) -> dict[str, Work]:
        """One esearch for a batch of DOIs, then the summaries of what it found."""
        term = " OR ".join(f'"{doi}"[doi]' for doi in dois)
        pmids = await self._esearch(term, retmax=2 * len(dois), ttl="lookup")
        summaries = await self._summaries(pmids)
        return {work.doi: work for work in summaries.values() if work.doi and work.doi in dois}

    async def search(self, query: SearchQuery) -> list[Work]:
        terms = search_terms(query)
        if not terms:
            raise NothingToAsk(NAME, "PubMed is searched by title words; the citation has none")
        for term in terms:
            pmids = await self._esearch(term, retmax=query.limit, ttl="search")
            if pmids:
                summaries = await self._summaries(pmids)
                return [summaries[p] for p in pmids if p in summaries]
        return []

    async def _esearch(self, term: str, *, retmax: int, ttl: str) -> list[str]:
        fetched = await self.client.get(
            "/esearch.fcgi",
            {"db": "pubmed", "term": term, "retmode": "json", "retmax": retmax, **self._etiquette},
            ttl=ttl,
            accept=(200,),
            check=check_body,
        )
        missing = "esearch answer without esearchresult"
        result = fetched.member("esearchresult", kind=dict, missing=missing)
        if result.get("ERROR"):
            raise UnexpectedResponse(NAME, f"esearch error: {result['ERROR']}", url=fetched.url)
        return [str(pmid) for pmid in result.get("idlist") or []]

    async def _summaries(self, pmids: list[str]) -> dict[str, Work]:
        if not pmids:
            return {}
        fetched = await self.client.get(
            "/esummary.fcgi",
            {"db": "pubmed", "id": ",".join(pmids), "retmode": "json", **self._etiquette},
            ttl="integrity",  # docsums carry "Retracted Publication" and "Retraction in" links
            accept=(200,),
            check=check_body,
        )
        result = fetched.member("result", kind=dict, missing="esummary answer without result")
        found: dict[str, Work] = {}
        for uid in result.get("uids") or []:
            docsum = result.get(str(uid))
            if isinstance(docsum, dict) and not docsum.get("error"):
                found[str(uid)] = to_work(docsum)
        return found


def check_body(fetched: Fetched) -> None:
    """NCBI answers an exceeded rate with HTTP 200 and an error body: make it a retry."""
    if '"error"' not in fetched.text[:300]:
        return
    body = fetched.json()
    message = body.get("error") if isinstance(body, dict) else None
    if isinstance(message, str) and "rate limit" in message.lower():
        raise RateLimited(NAME, message, url=fetched.url)


def search_terms(query: SearchQuery) -> list[str]:
    """esearch terms to try in turn: title words with the first author, then title words alone."""
    words = query_words(query.title, drop_stopwords=True)[:MAX_TITLE_WORDS]
    if not words:
        return []
    title = " AND ".join(f"{word}[ti]" for word in words)
    if query.year_from or query.year_to:
        title += f" AND {query.year_from or 1800}:{query.year_to or 3000}[dp]"
    terms = []
    if query.authors:
        family = display_name_to_person(query.authors[0], medline_order=True).full_family
        if query_words(family):
            terms.append(f'{title} AND "{family}"[au]')
    terms.append(title)
    return terms


def to_work(docsum: Any) -> Work:
    """One esummary docsum → Work, with PubMed's retraction and correction links as Notices."""
    if not isinstance(docsum, dict) or not docsum.get("uid"):
        raise UnexpectedResponse(NAME, "docsum without uid")
    uid = str(docsum["uid"])
    ids = {
        str(entry.get("idtype")): str(entry.get("value"))
        for entry in docsum.get("articleids") or []
        if isinstance(entry, dict) and entry.get("value")
    }
    raw_title = docsum.get("title")
    pubtypes = [str(p) for p in docsum.get("pubtype") or []]
    notices = [
        notice for notice in map(_notice, docsum.get("references") or []) if notice is not None
    ]
    retracted = "Retracted Publication" in pubtypes or any(
        n.kind.value in ("retraction", "withdrawal", "removal") for n in notices
    )
    pmc = ids.get("pmc") or ids.get("pmcid")
    return Work(
        source=NAME,
        source_id=uid,
        url=f"https://pubmed.ncbi.nlm.nih.gov/{uid}/",
        # types.json's order decides among several: a notice is also a "Journal Article".
        type=work_type(NAME, *pubtypes),
        title=_clean_title(raw_title),
        raw_title=raw_title,
        authors=[
            _person(author)
            for author in docsum.get("authors") or []
            if isinstance(author, dict) and author.get("name")
        ],
        year=year_from(docsum.get("pubdate")) or year_from(docsum.get("sortpubdate")),
        date=pubmed_date(docsum.get("pubdate")),
        venue=docsum.get("fulljournalname") or docsum.get("source") or None,
        venue_short=docsum.get("source") or None,
        volume=docsum.get("volume") or None,
        issue=docsum.get("issue") or None,
        pages=expand_pages(docsum.get("pages")),
        doi=normalize_doi(ids.get("doi")),
        pmid=uid,
        pmcid=re.sub(r"^(?:pmc-id:\s*)?", "", pmc).split(";")[0].upper() if pmc else None,
        is_retracted=retracted,
        notices=notices,
    )


def _clean_title(raw: str | None) -> str | None:
    """PubMed ends every title with a period and brackets translated titles: drop both."""
    title = strip_markup(raw)
    if not title:
        return None
    if title.startswith("[") and title.rstrip(".").endswith("]"):
        title = title.rstrip(".")[1:-1]
    return title[:-1] if title.endswith(".") and not title.endswith("..") else title


def _person(author: dict[str, Any]) -> Person:
    """ "Wakefield AJ" → Person("Wakefield", "A. J."); collective names are organisations."""
    name = " ".join(str(author["name"]).split())
    if author.get("authtype") == "CollectiveName":
        return Person(family=name, is_organisation=True)
    return display_name_to_person(name, medline_order=True)


def pubmed_date(value: Any) -> str | None:
    """ "1998 Feb 28" → "1998-02-28"; "1998 Feb" → "1998-02"; "1998" → "1998"."""
    parts = str(value or "").split()
    year = year_from(parts[0]) if parts else None
    if year is None:
        return None
    month = MONTHS.get(parts[1][:3].lower()) if len(parts) > 1 else None
    if month is None:
        return str(year)
    day = parts[2] if len(parts) > 2 and parts[2].isdigit() else None
    return f"{year}-{month:02d}-{int(day):02d}" if day else f"{year}-{month:02d}"


def expand_pages(pages: Any) -> str | None:
    """MEDLINE abbreviates page ranges ("637-41"); spell them out ("637-641")."""
    text = str(pages or "").strip()
    match = re.fullmatch(r"(\d+)-(\d+)", text)
    if match and len(match.group(2)) < len(match.group(1)):
        first, last = match.groups()
        return f"{first}-{first[: len(first) - len(last)]}{last}"
    return text or None


def _notice(reference: Any) -> Notice | None:
    if not isinstance(reference, dict):
        return None
    reftype = str(reference.get("reftype") or "")
    if reftype.lower() not in NOTICE_REFTYPES:
        return None
    refsource = " ".join(str(reference.get("refsource") or "").split())
    pmid = reference.get("pmid")
    label = f"{reftype}: {refsource}" if refsource else reftype
    if pmid:
        label += f" (PMID {pmid})"
    date_part = refsource.split(". ", 1)[1].split(";")[0] if ". " in refsource else ""
    return Notice(
        kind=normalize_notice_kind(reftype),
        date=pubmed_date(date_part),
        label=label,
        reported_by=NAME,
    )
