"""Every upstream source and endpoint refaudit knows, one entry each.

This is the only place that names sources. Configuration (base URLs, their
`REFAUDIT_<SOURCE>_URL` overrides, key variables), the evidence order (which
source resolves which identifier, search stages, whose fields win), the
retraction screen and the `refaudit sources` command all read it. A new source
is one module of the shape in `base.py` plus one `[[source]]` table in
registry.toml (docs/architecture.md walks through it). The module itself is
imported only when a run opens the source.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from importlib import resources
from typing import Any, Literal


@dataclass(frozen=True)
class Credential:
    """One secret a source reads: its config-file field and the environment variables for it.

    The first variable is the documented one; later ones are names other tools use.
    """

    setting: str
    env: tuple[str, ...]

    def storage_key(self, source: str) -> str:
        """Where `Settings.api_keys` keeps it: the source name for its API key."""
        return source if self.setting == "api_key" else f"{source}.{self.setting}"


@dataclass(frozen=True)
class Quota:
    """A published request budget per key: `calls` per window."""

    calls: int
    window: Literal["day", "week"]
    #: "utc-midnight": the window is the calendar day in UTC; "first-request": it starts
    #: at the key's first request (the API says when in a reset header).
    resets: Literal["utc-midnight", "first-request"]

    @property
    def window_s(self) -> int:
        return 86_400 if self.window == "day" else 7 * 86_400


@dataclass(frozen=True)
class SourceEntry:
    """What refaudit needs to know about one source before importing its module."""

    name: str
    title: str
    #: "package.module:ClassName" of the `Source` subclass
    target: str
    base_url: str
    #: published request limits, as people read them (pacing itself is in the module)
    limits: str
    #: what the source can do: doi, arxiv, pmid, s2, openalex (native ids), search,
    #: topic (searches titles and abstracts for a research idea: novelty), integrity
    #: (reports retractions)
    capabilities: frozenset[str]
    credentials: tuple[Credential, ...] = ()
    #: without a key the source is not asked at all
    requires_key: bool = False
    key_help: str = ""
    quota: Quota | None = None
    #: "always": part of the regular evidence pass; "undecided": asked only for the
    #: references the free sources left unmatched or in doubt (keyed, budgeted sources)
    asked: Literal["always", "undecided"] = "always"
    #: identifier kind ("doi", "arxiv", "pmid", "arxiv-doi" = arXiv's DataCite DOIs)
    #: → resolution round: 0 = every such identifier, 1 = those round 0 did not find
    resolves: Mapping[str, int] = field(default_factory=dict)
    #: title-search stage (0 first), and the stage for citations without a title
    search_stage: int | None = None
    free_text_stage: int | None = None
    #: a bibliographic reference matcher (scored `query.bibliographic`): asked first for
    #: journal articles and whole citation strings (planner.py)
    matcher: bool = False
    #: kinds of work it holds (article, conference, book, thesis, report, preprint,
    #: dataset); empty = every kind
    holds: frozenset[str] = frozenset()
    #: the one field it indexes ("biomedicine", "computing"); None = every field
    field: str | None = None
    #: nothing it holds is older than this year
    first_year: int | None = None
    #: kinds it indexes so fully that its silence means absence; None = all it holds.
    #: A DOI agency covers only the kinds registered with DOIs as a rule: Crossref
    #: holds some theses and reports, but most live in repositories without one.
    covers: frozenset[str] | None = None
    #: its pool is among the slowest: searched only after every other source, in stage order
    last_resort: bool = False
    #: a DOI registration agency: a DOI prefix belongs to exactly one of them
    registers_dois: bool = False
    #: a publisher's own index: it holds every DOI under these prefixes and no other
    #: (empty: any DOI of a work it holds)
    doi_prefixes: tuple[str, ...] = ()
    #: its search ranks by word overlap, so a title with a changed or misspelt word
    #: still finds the work (Crossref's query.bibliographic, S2's ranked search)
    ranked: bool = False
    #: whose value wins when records disagree (lower wins; see merge.py); registration
    #: agencies and publishers first, then curated indexes, then aggregators
    field_priority: int = 99
    #: its type vocabulary tells journal articles from proceedings papers
    authoritative_type: bool = False
    #: holds DataCite's arXiv DOIs (10.48550/arXiv.*)
    holds_arxiv_dois: bool = True
    #: order in which it is asked for citation-graph neighbours
    citation_graph: int | None = None
    #: asked live by `refaudit retractions check`
    screens_retractions: bool = False
    #: rank of its account of a notice after the publisher's and Retraction Watch's;
    #: notices it reports without naming a source are credited to it
    notice_provenance: int | None = None
    #: its bare "retracted" flag becomes a dateless notice when no source names one
    retraction_flag: bool = False
    #: publishes a bulk data file that `refaudit mirror build` loads (its records are
    #: stored as the API returns them and read by the module's `to_work`; a bulk layout
    #: that differs from the API's is reshaped by the module's `from_bulk`)
    mirrored: bool = False

    @property
    def url_env(self) -> str:
        return f"REFAUDIT_{self.name.upper()}_URL"

    @property
    def key_env(self) -> tuple[str, ...]:
        """Environment variables for the API key itself (the first is documented)."""
        return next((c.env for c in self.credentials if c.setting == "api_key"), ())


@dataclass(frozen=True)
class Endpoint:
    """A configurable upstream that is not a verification source."""

    name: str
    base_url: str
    credentials: tuple[Credential, ...] = ()

    @property
    def url_env(self) -> str:
        return f"REFAUDIT_{self.name.upper()}_URL"


def _source_entry(table: dict[str, Any]) -> SourceEntry:
    """One `[[source]]` table of registry.toml: word lists become the fields' sets."""
    unknown = set(table) - {f.name for f in fields(SourceEntry)}
    if unknown:
        raise ValueError(f"registry.toml: {table.get('name')}: unknown keys {sorted(unknown)}")
    values = dict(table)
    for name in ("capabilities", "holds", "covers"):
        if name in values:
            values[name] = frozenset(values[name])
    values["doi_prefixes"] = tuple(values.get("doi_prefixes", ()))
    values["credentials"] = tuple(
        Credential(c["setting"], tuple(c["env"])) for c in values.get("credentials", ())
    )
    if "quota" in values:
        values["quota"] = Quota(**values["quota"])
    return SourceEntry(**values)


#: The sources, as registry.toml lists them: facts about each API, kept as data.
SOURCES: tuple[SourceEntry, ...] = tuple(
    _source_entry(table)
    for table in tomllib.loads(
        resources.files(__package__).joinpath("registry.toml").read_text("utf-8")
    )["source"]
)

ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("doi", "https://doi.org"),
    Endpoint("retractionwatch", "https://api.labs.crossref.org/data/retractionwatch"),
    # Inputs rather than evidence: a paper's source files, a reference library.
    Endpoint("arxiv_eprint", "https://arxiv.org"),
    Endpoint("zotero", "https://api.zotero.org", (Credential("api_key", ("ZOTERO_API_KEY",)),)),
    Endpoint("zotero_local", "http://localhost:23119/api"),
)
#: Everything with a configurable base URL: the sources and the other endpoints.
UPSTREAMS: tuple[SourceEntry | Endpoint, ...] = (*SOURCES, *ENDPOINTS)

#: The local mirror (`refaudit mirror`): the `mirrored` sources' records and the
#: Retraction Watch rows on this machine. Not among SOURCES: it needs no HTTP client,
#: is asked only when configured (`--mirror`, REFAUDIT_MIRROR, `--sources mirror`),
#: and then before them; its location is a SQLite file or a postgresql:// URL.
MIRROR = SourceEntry(
    name="mirror",
    title="Local mirror",
    target="refaudit.sources.mirror:MirrorSource",
    base_url="",
    limits="none: local",
    capabilities=frozenset({"doi", "arxiv", "pmid", "openalex", "search", "integrity"}),
)

BY_NAME: dict[str, SourceEntry] = {entry.name: entry for entry in SOURCES}
SOURCE_NAMES: tuple[str, ...] = tuple(BY_NAME)
ENDPOINT_NAMES: tuple[str, ...] = tuple(endpoint.name for endpoint in ENDPOINTS)


def entry(name: str) -> SourceEntry:
    return BY_NAME[name]


def order(source: str) -> int:
    """A source's place in the registry, which orders records from several sources."""
    return SOURCE_NAMES.index(source) if source in BY_NAME else len(SOURCE_NAMES)


@functools.cache
def stages(kind: Literal["title", "free_text"]) -> tuple[tuple[str, ...], ...]:
    """Search stages: names per stage, each stage asked only if the earlier ones left it open
    (the registry is fixed: worked out once, not for every reference's search plan)."""
    attribute = "search_stage" if kind == "title" else "free_text_stage"
    numbers = sorted({getattr(e, attribute) for e in SOURCES if getattr(e, attribute) is not None})
    return tuple(
        tuple(e.name for e in SOURCES if getattr(e, attribute) == number) for number in numbers
    )


def resolvers(kind: str, round_number: int) -> tuple[str, ...]:
    """Sources asked to resolve identifiers of `kind` in a resolution round."""
    return tuple(e.name for e in SOURCES if e.resolves.get(kind) == round_number)


def holds_doi(name: str, doi: str) -> bool:
    """Whether `name`, asked about `doi`, would have its record: its silence means absence.

    The DOI resolvers (registration agencies and the general indexes asked in the
    resolution rounds), the budgeted sources asked about the DOIs the free ones left
    open, and the local mirror (which holds the resolvers' records); a publisher's
    index only for its own prefixes.
    """
    if name == MIRROR.name:
        return True
    source = BY_NAME.get(name)
    if source is None or "doi" not in source.capabilities:
        return False
    if source.doi_prefixes and not doi.lower().startswith(source.doi_prefixes):
        return False
    return "doi" in source.resolves or source.asked == "undecided"


def by_field_priority() -> tuple[str, ...]:
    return tuple(e.name for e in sorted(SOURCES, key=lambda e: e.field_priority))


def having(capability: str) -> tuple[str, ...]:
    """Names of the sources with `capability`, in registry order."""
    return tuple(e.name for e in SOURCES if capability in e.capabilities)


def names_where(attribute: str) -> frozenset[str]:
    """Names of the sources whose boolean `attribute` is set."""
    return frozenset(e.name for e in SOURCES if getattr(e, attribute))


def ranked_by(attribute: str) -> tuple[str, ...]:
    """Names of the sources with an integer `attribute`, lowest first."""
    ranked = [e for e in SOURCES if getattr(e, attribute) is not None]
    return tuple(e.name for e in sorted(ranked, key=lambda e: getattr(e, attribute)))
