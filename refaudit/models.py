"""The records every stage of refaudit shares.

Parsing produces `Reference`s, sources produce `Work`s, verification turns a
reference plus candidate works into a `Result` made of `Finding`s and
integrity `Notice`s, and an `AuditReport` gathers the results of one run.
Everything is a plain dataclass so the CLI, the renderers and the MCP server
can serialise it with `to_dict` without knowing the pipeline.
"""

from __future__ import annotations

import dataclasses
import enum
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from refaudit.findings import FINDING_CODES, Severity
from refaudit.notices import WITHDRAWING_KINDS, NoticeKind

JSON_SCHEMA_VERSION = "2.3"

SEVERITY_RANK: dict[str, int] = {"info": 0, "warning": 1, "error": 2}


class Verdict(enum.StrEnum):
    """What refaudit concludes about one reference (a closed set)."""

    VERIFIED = "verified"
    MISMATCH = "mismatch"
    NOT_FOUND = "not_found"
    UNVERIFIED = "unverified"
    SKIPPED = "skipped"


@dataclass
class Person:
    """One author or editor. Organisations keep their whole name in `family`."""

    family: str
    given: str = ""
    particle: str = ""
    suffix: str = ""
    is_organisation: bool = False
    orcid: str | None = None

    @property
    def full_family(self) -> str:
        """Family name with its particle, e.g. "van der Waals"."""
        return f"{self.particle} {self.family}".strip()

    def display(self) -> str:
        if self.is_organisation or not self.given:
            return self.full_family
        name = f"{self.given} {self.full_family}"
        return f"{name}, {self.suffix}" if self.suffix else name


@dataclass(slots=True)  # slots: a batch holds thousands of them
class Reference:
    """One cited reference, as the user wrote it, with decoded fields.

    `fields` keeps the raw BibTeX values (after macro expansion and crossref
    inheritance); the typed attributes are decoded to Unicode. A free-text
    reference (a `\\bibitem` or an MCP call with a citation string) has
    `free_text` set and only the fields that could be extracted from it.
    """

    key: str
    entry_type: str = "misc"
    file: str | None = None
    line: int | None = None
    fields: dict[str, str] = field(default_factory=dict)
    title: str | None = None
    authors: list[Person] = field(default_factory=list)
    authors_truncated: bool = False
    editors: list[Person] = field(default_factory=list)
    year: int | None = None
    month: int | None = None
    venue: str | None = None
    publisher: str | None = None
    volume: str | None = None
    number: str | None = None
    pages: str | None = None
    doi: str | None = None
    arxiv_id: str | None = None
    arxiv_version: int | None = None
    pmid: str | None = None
    pmcid: str | None = None
    isbn: str | None = None
    url: str | None = None
    free_text: str | None = None
    ignore_reason: str | None = None
    origin: str | None = None
    """how a reference read from a Word file or a reference library was found: "zotero
    field code", "mendeley field code", "endnote field code" (the citation manager's own
    record, audited field by field), "printed text" (the printed reference list, read as
    free text) or "zotero library"; null for .bib, .tex and .bbl input"""
    text: str | None = None
    """the reference as printed in a PDF or Word document, in list order (null for
    .bib, .tex and .bbl input)"""
    label: str | None = None
    """the label printed before the reference in a PDF or Word list ("[12]", "12.",
    "[Smi20]"); null when the list prints none (author-year styles)"""
    page: int | None = None
    """the page of a PDF on which the reference starts"""


@dataclass
class Notice:
    """An integrity notice (retraction, correction, …) attached to a work."""

    kind: NoticeKind
    notice_doi: str | None = None
    """the DOI of the notice itself (the retraction note), when it has one"""
    date: str | None = None
    """when the notice was issued (ISO 8601, as precise as the source gives it)"""
    label: str | None = None
    """the notice's own wording of its kind ("Retraction", "Expression of concern")"""
    source: str | None = None
    """who issued the record of the notice ("publisher", "retraction-watch", or a source)"""
    reported_by: str | None = None
    """the sources that reported it, comma-separated when several agree"""
    record_id: str | None = None
    """the notice's id in the issuer's records (Crossref's record-id, Retraction Watch's)"""
    reason: str | None = None
    """the reasons given for the notice (Retraction Watch's), where known"""
    target_doi: str | None = None
    """the DOI the notice is about (set when a notice record names its target)"""


@dataclass
class Work:
    """A work as one upstream source describes it, in refaudit's vocabulary."""

    source: str
    source_id: str | None = None
    """the record's id at its source (the evidence a finding cites)"""
    url: str | None = None
    """where a reader can see the record"""
    type: str | None = None
    """the kind of work in the source's words (Crossref `journal-article`, OpenAlex `article`)"""
    title: str | None = None
    """the title, markup removed"""
    raw_title: str | None = None
    """the title as the source gives it, markup (MathML, HTML) kept"""
    subtitle: str | None = None
    title_aliases: list[str] = field(default_factory=list)
    """the work's titles in other languages (Crossref's `original-title`)"""
    authors: list[Person] = field(default_factory=list)
    authors_partial: bool = False
    """the source lists only some of the authors (Scopus' STANDARD view: the first), so a
    cited author it does not list is unknown, not wrong"""
    year: int | None = None
    """the year of publication the source gives"""
    date: str | None = None
    venue: str | None = None
    venue_short: str | None = None
    """the venue's abbreviation as the source gives it ("Phys. Rev. Lett.")"""
    venue_aliases: list[str] = field(default_factory=list)
    """the venue's other names in this record (S2 alternate names, Crossref's other titles)"""
    publisher: str | None = None
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    doi: str | None = None
    arxiv_id: str | None = None
    arxiv_version: int | None = None
    """the arXiv version the record describes (2 for v2), when it names one"""
    journal_ref: str | None = None
    """arXiv's free-text journal reference"""
    primary_category: str | None = None
    """arXiv's primary category ("cs.CL")"""
    pmid: str | None = None
    pmcid: str | None = None
    s2_id: str | None = None
    openalex_id: str | None = None
    dblp_key: str | None = None
    isbn: list[str] = field(default_factory=list)
    """the book's ISBNs"""
    abstract: str | None = None
    citation_count: int | None = None
    is_retracted: bool | None = None
    """the source's own retraction flag (OpenAlex `is_retracted`); null when it has none"""
    notices: list[Notice] = field(default_factory=list)
    """integrity notices the record carries about this work"""
    score: float | None = None
    """search relevance (higher is better)"""
    published_version_doi: str | None = None
    """DOI of the published version of a preprint (DataCite IsVersionOf, arXiv journal DOI)"""
    found_in: list[str] = field(default_factory=list)
    """the sources a merged record (search hit, `show`) was assembled from"""

    def ids(self) -> dict[str, str]:
        """The identifiers this record carries, for evidence and de-duplication."""
        names = ("doi", "arxiv_id", "pmid", "pmcid", "s2_id", "openalex_id", "dblp_key")
        return {name: getattr(self, name) for name in names if getattr(self, name)}


@dataclass
class Finding:
    """One piece of evidence: which field, what was cited, what a source says."""

    code: str
    """kebab-case finding code (docs/verdicts.md), e.g. year-mismatch"""
    severity: Severity
    message: str
    field: str | None = None
    cited: str | None = None
    """the value in the citation"""
    found: str | None = None
    """the value the source records"""
    source: str | None = None
    record: str | None = None
    """the record id at that source (the evidence)"""
    suppressed: str | None = None
    """why this finding does not count (an ignore comment, configuration), or null"""

    @classmethod
    def of(cls, code: str, message: str, **evidence: str | None) -> Finding:
        """A finding with the severity and field `findings.FINDING_CODES` gives its code."""
        entry = FINDING_CODES[code]
        if entry.severity is None:
            raise ValueError(f"{code} takes its severity from the retraction policy")
        if len(entry.fields) == 1:
            evidence.setdefault("field", entry.fields[0])
        return cls(code, entry.severity, message, **evidence)


SourceState = Literal["answered", "failed", "not_asked", "cached"]
#: Why a source was left out: the verdict could no longer change ("decided"), the
#: source cannot hold this kind of work ("cannot_index"), or the citation gives it
#: nothing it searches by ("no_query": no title words for a title search).
NotAskedWhy = Literal["decided", "cannot_index", "no_query"]


@dataclass
class SourceStatus:
    """How one source took part in checking one reference (`why` only when not asked)."""

    state: SourceState
    reason: str | None = None
    """why a source failed or was not asked"""
    why: NotAskedWhy | None = None
    """for `not_asked`: `decided` (the verdict could no longer change), `cannot_index` or
    `no_query` (nothing in the citation this source searches by)"""


@dataclass(slots=True)
class Result:
    """The verdict on one reference with everything that backs it."""

    reference: Reference
    verdict: Verdict
    confidence: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    matched: Work | None = None
    integrity: list[Notice] = field(default_factory=list)
    sources: dict[str, SourceStatus] = field(default_factory=dict)
    corrected_bibtex: str | None = None
    reason: str | None = None

    @property
    def worst_severity(self) -> Severity | None:
        active = [f.severity for f in self.findings if not f.suppressed]
        if not active:
            return None
        return max(active, key=SEVERITY_RANK.__getitem__)

    @property
    def retracted(self) -> bool:
        """A notice that withdraws the work applies (`notices.WITHDRAWING_KINDS`)."""
        return any(notice.kind in WITHDRAWING_KINDS for notice in self.integrity)

    @property
    def flagged(self) -> bool:
        """HALLMARK's notion: not found, or an unsuppressed error finding."""
        return self.verdict == Verdict.NOT_FOUND or self.worst_severity == "error"


# Frozen: once found, a problem is a fact about the input; a step that learns more (a
# missing .bib read from the paper's compiled .bbl instead) puts a new one in its place.
@dataclass(frozen=True)
class InputProblem:
    """Something wrong with the input itself (file, line, entry), not with a citation."""

    file: str
    message: str
    line: int | None = None
    """1-based, where the problem starts; null when it concerns the whole file"""
    key: str | None = None
    """the citation key of the entry concerned, when there is one"""
    severity: Severity = "warning"
    code: str = "input"
    """kebab-case, named in every output (parse-error, duplicate-key, undefined-citation, …)"""


@dataclass
class Bibliography:
    """What parsing an input file yields: references plus the problems met on the way."""

    references: list[Reference] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    cited_keys: list[str] | None = None


@dataclass
class RunStats:
    """Cost of one run, per source."""

    requests: dict[str, int] = field(default_factory=dict)
    cache_hits: dict[str, int] = field(default_factory=dict)
    rate_limited: dict[str, int] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0
    floor_s: float = 0.0
    """the longest any one source's published rate needs for the requests sent to it
    (a pool's burst is not counted, so a short run can finish under it)"""
    floor_ratio: float | None = None
    """wall time over that floor (null under a second of floor): 1.0 is the limits' pace"""

    def add(self, other: RunStats) -> None:
        """Count another run's requests, cache hits, rate limits and failures into these."""
        for name in ("requests", "cache_hits", "rate_limited", "failures"):
            total = getattr(self, name)
            for source, count in getattr(other, name).items():
                total[source] = total.get(source, 0) + count


RETRACTION_WATCH = "retractionwatch"


@dataclass
class RetractionRecord:
    """One row of the Retraction Watch database, with ISO dates and a normalised kind."""

    record_id: str
    kind: NoticeKind
    nature: str
    title: str
    journal: str | None
    publisher: str | None
    authors: list[str]
    notice_date: str | None
    notice_doi: str | None
    notice_pmid: str | None
    original_date: str | None
    original_doi: str | None
    original_pmid: str | None
    reason: str | None
    subject: str | None = None
    institution: str | None = None
    country: str | None = None
    urls: list[str] | None = None
    article_type: str | None = None
    paywalled: str | None = None
    notes: str | None = None

    def to_notice(self) -> Notice:
        return Notice(
            kind=self.kind,
            notice_doi=self.notice_doi,
            date=self.notice_date,
            label=self.nature,
            source="retraction-watch",
            reported_by=f"{RETRACTION_WATCH} snapshot",
            record_id=self.record_id,
            reason=self.reason,
            target_doi=self.original_doi,
        )


@dataclass
class SnapshotState:
    """The Retraction Watch snapshot screening used, so a reader can judge how current it was.

    `available` is False when no snapshot was installed: offline, retractions
    were then only seen in cached source records.
    """

    available: bool
    downloaded_at: str | None = None
    age_days: float | None = None
    rows: int | None = None
    newest_notice_date: str | None = None


@dataclass
class MirrorState:
    """The local mirror (`refaudit mirror`) a run took evidence from first, and how current it was.

    Records it supplied keep the name of the upstream they come from (`crossref`,
    `openalex`); per reference, `sources.mirror` says whether the mirror answered.
    """

    location: str
    """the SQLite file, or the PostgreSQL URL without its password"""
    backend: Literal["sqlite", "postgresql"]
    built_at: str | None = None
    """ISO 8601 time of `refaudit mirror build`"""
    updated_at: str | None = None
    """ISO 8601 time of the last `refaudit mirror update`, or null"""
    age_days: float | None = None
    """days since the newer of the two"""
    records: dict[str, int] = field(default_factory=dict)
    """records per upstream (`crossref`, `openalex`, `retraction_watch`)"""


class KeptCounts(Protocol):
    """What a streamed run keeps in place of its results (`policy.Tally`, which also
    judges them under the fail policy): the counts `AuditReport.counts` reports."""

    def counts(self) -> dict[str, int]: ...


def verdict_counts(verdicts: Counter[Verdict], retracted: int) -> dict[str, int]:
    """References per verdict (every verdict named, zero or not), plus how many are retracted."""
    counts = {verdict.value: verdicts[verdict] for verdict in Verdict}
    counts["retracted"] = retracted
    return counts


@dataclass(repr=False)
class AuditReport:
    """Everything one `refaudit check` run found."""

    results: list[Result] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    stats: RunStats = field(default_factory=RunStats)
    offline: bool = False
    #: set by screening; None for a report that was never screened
    retraction_snapshot: SnapshotState | None = None
    #: set when evidence came from a local mirror (`--mirror`, `--sources mirror`)
    mirror: MirrorState | None = None
    #: the counts of a streamed run (`audit_references(tally=...)`), whose `results`
    #: hold only what its `on_batch` kept; None: every result is in `results`
    tally: KeptCounts | None = None

    def __repr__(self) -> str:
        # Short on purpose: asyncio.run formats the repr of its main task, result
        # included, when it restores the SIGINT handler; a full repr of 100,000
        # results would be built (hundreds of megabytes) only to be cut to 30 characters.
        return f"<AuditReport: {len(self.results)} results, {len(self.problems)} problems>"

    def counts(self) -> dict[str, int]:
        """References per verdict, and how many are retracted (also counted by verdict)."""
        if self.tally is not None:
            return self.tally.counts()
        verdicts = Counter(result.verdict for result in self.results)
        return verdict_counts(verdicts, sum(result.retracted for result in self.results))


def to_dict(value: Any) -> Any:
    """Turn any refaudit record into JSON-ready data (enums become their values)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_dict(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): to_dict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_dict(v) for v in value]
    return value
