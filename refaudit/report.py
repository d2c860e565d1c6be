"""The report refaudit hands out: `check --format json` and every MCP tool return these models.

The records inside a report (`Reference`, `Work`, `Person`, `Notice`,
`Finding`, `SourceStatus`, …) are the dataclasses of `refaudit.models`:
pydantic reads their fields and attribute docstrings, so a field is defined
once, in the record, and appears in the JSON, the MCP output schemas and
`render/report.schema.json` alike. This module only adds the shapes around
them. Regenerate the committed schema with `python -m refaudit.report` after
changing any of them (a test fails while it is stale).

`JSON_SCHEMA_VERSION`: the minor number grows when keys are added, the major
number when a key changes meaning or disappears (docs/json-schema.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from refaudit.discovery.entries import BibtexEntry
from refaudit.discovery.resolve import Status as LookupStatus
from refaudit.models import (
    JSON_SCHEMA_VERSION,
    Finding,
    InputProblem,
    MirrorState,
    Notice,
    Reference,
    RetractionRecord,
    RunStats,
    Severity,
    SnapshotState,
    SourceStatus,
    Verdict,
    Work,
)

SCHEMA_PATH = Path(__file__).parent / "render" / "report.schema.json"
SCHEMA_ID = "https://github.com/refaudit/refaudit/blob/main/refaudit/render/report.schema.json"


class _Model(BaseModel):
    """Field descriptions come from attribute docstrings, here and in the records."""

    model_config = ConfigDict(use_attribute_docstrings=True)


@dataclass
class ReportedFinding(Finding):
    """A finding as a report lists it: the evidence plus how the fail policy treats it."""

    baselined: bool = False
    """the baseline file already records this finding, so it does not fail the run"""
    failing: bool = False
    """this finding fails the run under `fail_on` and the baseline"""


class ReferenceResult(_Model):
    """The verdict on one reference, with all the evidence behind it."""

    key: str
    file: str | None = None
    line: int | None = None
    verdict: Verdict
    confidence: float
    """0–1, how sure the identification is"""
    flagged: bool
    """fails the configured policy (`fail_on` and the baseline): what makes `refaudit check`
    exit 1 for this reference"""
    failing: bool
    """the same as `flagged` (kept for reports before 2.0)"""
    worst_severity: Severity | None = None
    retracted: bool
    """a notice that withdraws the work applies (retraction, withdrawal, removal, …)"""
    reason: str | None = None
    """why the verdict, e.g. which sources failed for an unverified reference"""
    findings: list[ReportedFinding] = Field(default_factory=list)
    """the evidence, worst first; not_found, unverified and skipped carry their own finding"""
    integrity: list[Notice] = Field(default_factory=list)
    """integrity notices on the matched work (concerns and corrections too), oldest first"""
    sources: dict[str, SourceStatus] = Field(default_factory=dict)
    """how each source took part: answered, failed (with why), cached or not asked"""
    matched: Work | None = None
    """the record the reference was identified with"""
    corrected_bibtex: str | None = None
    """the corrected entry (what `refaudit fix` writes), or null"""
    reference: Reference
    """everything parsed from the citation: raw `fields`, decoded title, authors, ids"""


class ToolInfo(_Model):
    name: Literal["refaudit"] = "refaudit"
    version: str


class Summary(_Model):
    """The counts every format prints."""

    total: int
    verified: int
    mismatch: int
    not_found: int
    unverified: int
    skipped: int
    retracted: int
    """references whose work a notice withdraws"""
    flagged: int
    """references that fail the run under the policy (results with `flagged` true)"""
    failing: int
    """the same as `flagged` (kept for reports before 2.0)"""
    problems: int
    """input problems met while parsing"""


class Report(_Model):
    """One audit run: `refaudit check --format json`, MCP `verify_bibliography`."""

    schema_version: str = JSON_SCHEMA_VERSION
    tool: ToolInfo
    files: list[str]
    """inputs read"""
    offline: bool
    """the run answered from the cache only"""
    retraction_snapshot: SnapshotState | None = None
    """the Retraction Watch snapshot screening used; null when the report was never screened"""
    mirror: MirrorState | None = None
    """the local mirror evidence came from first; null when none was used"""
    fail_on: list[str]
    """the fail policy in force"""
    baseline: bool
    """a baseline file was applied"""
    summary: Summary
    stats: RunStats
    problems: list[InputProblem]
    """problems with the input itself (file, line, entry)"""
    results: list[ReferenceResult]
    """one per reference, in input order"""


# --- discovery and retraction tools (MCP) -------------------------------------

SearchStatus = Literal["ok", "unverified"]


class SearchResults(_Model):
    """Merged search hits, best first, and how each source took part."""

    status: SearchStatus
    """unverified: no source could answer (not evidence that nothing exists)"""
    message: str
    works: list[Work]
    sources: dict[str, SourceStatus]


class BibtexResults(_Model):
    entries: list[BibtexEntry]
    bibtex: str
    """every entry found, ready to paste into a .bib file"""


class FieldProvenance(_Model):
    """Which source gave a field of the merged record, and what disagreeing sources say."""

    field: str
    value: str
    source: str
    others: dict[str, str] = Field(default_factory=dict)


class PaperDetailsResult(_Model):
    """One work in full: merged record, each source's record, notices, citation graph."""

    identifier: str
    status: LookupStatus
    message: str = ""
    work: Work | None = None
    records: dict[str, Work] = Field(default_factory=dict)
    fields: list[FieldProvenance] = Field(default_factory=list)
    notices: list[Notice] = Field(default_factory=list)
    references: list[Work] = Field(default_factory=list)
    citations: list[Work] = Field(default_factory=list)
    sources: dict[str, SourceStatus] = Field(default_factory=dict)
    citation_count: int | None = None
    """how many works cite it, the highest count a source gives"""
    references_listed: int | None = None
    """how many of the works it cites are listed (null when not asked)"""
    citations_listed: int | None = None
    """how many citing works are listed (null when not asked)"""


class FixedEntry(_Model):
    """One entry `correct_bibliography` rewrote."""

    key: str
    line: int
    action: str
    """corrected (fields a source contradicts replaced) or added-ids"""
    fields: list[str]


class LeftEntry(_Model):
    """A mismatched entry `correct_bibliography` left as it was, and why."""

    key: str
    reason: str


class CorrectedBibliography(_Model):
    """BibTeX with the contradicted fields corrected, as `refaudit fix` writes it."""

    bibtex: str
    """the corrected text; every byte outside the corrected fields is the input's"""
    diff: str
    """unified diff from the input to the corrected text (empty when nothing changed)"""
    corrected: list[FixedEntry]
    left: list[LeftEntry]
    summary: Summary
    """the audit behind the corrections"""


class DoiIntegrity(_Model):
    """What is known about one DOI's integrity, and which sources were asked."""

    input: str
    doi: str | None = None
    status: str
    """invalid | retraction | partial_retraction | removal | withdrawal | expression_of_concern
    | correction | reinstatement | clean | not-found | unknown (sources failed: not evidence
    of anything)"""
    withdrawn: bool
    """a notice that withdraws the work applies"""
    found: bool | None = None
    """null when no source could answer"""
    title: str | None = None
    notices: list[Notice] = Field(default_factory=list)
    sources: dict[str, SourceStatus] = Field(default_factory=dict)
    snapshot_age_days: float | None = None


class RetractionCheck(_Model):
    results: list[DoiIntegrity]
    credit: str


class RetractionList(_Model):
    """Rows of the local Retraction Watch snapshot."""

    records: list[RetractionRecord]
    credit: str


class NoticeDetails(_Model):
    """One integrity notice and the papers it concerns."""

    notice_doi: str
    found: bool | None
    """null when the answer is unknown (source failed)"""
    notices: list[Notice] = Field(default_factory=list)
    records: list[RetractionRecord] = Field(default_factory=list)
    origin: str | None = None
    reason: str | None = None
    credit: str


def report_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of `Report`, as committed in `SCHEMA_PATH`."""
    schema = Report.model_json_schema(mode="serialization")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
        "title": "refaudit report",
        "description": "Output of `refaudit check --format json`. See docs/json-schema.md.",
    }


def schema_text() -> str:
    return json.dumps(report_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    SCHEMA_PATH.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")
