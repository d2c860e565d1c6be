"""What every renderer shares: the fail-policy context, the finding rows, locations, summaries.

Renderers import from here (never from the package), so `refaudit.render`
can dispatch to them without an import cycle.
"""

from __future__ import annotations

import functools
import json
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from refaudit.findings import DEFAULT_FAIL_ON
from refaudit.models import (
    SEVERITY_RANK,
    AuditReport,
    Finding,
    Result,
    Verdict,
)
from refaudit.policy import effective_findings, failing_findings, report_tally

if TYPE_CHECKING:
    from refaudit.baseline import Baseline

VERDICT_LABELS = {
    Verdict.VERIFIED: "verified",
    Verdict.MISMATCH: "mismatch",
    Verdict.NOT_FOUND: "not found",
    Verdict.UNVERIFIED: "unverified",
    Verdict.SKIPPED: "skipped",
}


def shown_verdict(result: Result) -> str:
    """The verdict as every human-readable format shows it: a withdrawn work is `retracted`."""
    return "retracted" if result.retracted else VERDICT_LABELS[result.verdict]


def verdict_counts(report: AuditReport) -> dict[str, int]:
    """References per shown verdict, in a fixed order; the counts add up to the total."""
    tally = report_tally(report)
    shown = {label: tally.verdicts[v] - tally.withdrawn[v] for v, label in VERDICT_LABELS.items()}
    order = ("verified", "mismatch", "not found", "retracted", "unverified", "skipped")
    return {label: tally.retracted if label == "retracted" else shown[label] for label in order}


@dataclass
class RenderContext:
    """What a renderer needs beyond the report: the fail policy, the baseline, verbosity."""

    fail_on: list[str] = field(default_factory=lambda: list(DEFAULT_FAIL_ON))
    baseline: Baseline | None = None
    details: bool = False
    verbose: bool = False
    quiet: bool = False

    def is_baselined(self, result: Result, finding: Finding) -> bool:
        return self.baseline is not None and self.baseline.contains(result, finding)

    def fails(self, result: Result) -> bool:
        return bool(failing_findings(result, self.fail_on, self.baseline))


@dataclass(frozen=True)
class Row:
    """One finding of one result, as every renderer walks them."""

    result: Result
    finding: Finding
    baselined: bool
    failing: bool


def rows(result: Result, context: RenderContext) -> list[Row]:
    """The result's findings (verdict findings synthesised), worst first, failing ones marked."""
    findings = effective_findings(result)
    if result.verdict == Verdict.SKIPPED:
        # A skipped entry was skipped on purpose: its findings read as suppressed everywhere.
        reason = result.reason or "skipped"
        findings = [f if f.suppressed else replace(f, suppressed=reason) for f in findings]
    failing = failing_findings(result, context.fail_on, context.baseline)
    ordered = sorted(findings, key=lambda f: (f.suppressed is not None, -SEVERITY_RANK[f.severity]))
    return [
        Row(
            result,
            finding,
            context.is_baselined(result, finding),
            finding in failing,
        )
        for finding in ordered
    ]


@dataclass(frozen=True)
class Group:
    """A section of the human-readable reports; the terminal and the HTML page list the same."""

    id: str
    title: str
    purpose: str
    """what the section asks of the reader"""
    style: str
    """the rich style of the section's title on a terminal"""


#: The sections in the order a reader acts on them (the wording is in groups.json).
GROUPS = tuple(
    Group(**group)
    for group in json.loads(resources.files(__package__).joinpath("groups.json").read_text("utf-8"))
)


def group_of(result: Result, result_rows: list[Row]) -> str:
    """The section a result is listed in: failing the run, else its worst active finding."""
    if result.verdict == Verdict.SKIPPED:
        return "suppressed"
    if any(row.failing for row in result_rows):
        return "failing"
    active = [row.finding.severity for row in result_rows if not row.finding.suppressed]
    if active:
        return max(active, key=SEVERITY_RANK.__getitem__)
    return "suppressed" if result_rows else "verified"


class ReportStream(Protocol):
    """A report written while the audit runs (an `audit_references` on_batch hook and a writer).

    `add` renders a batch's results (to a `Spool`) and keeps none of them; the
    summary, the exit code and the closing lines read the report's tally
    (`policy.Tally`). `write` puts the report together once the audit is done.
    The bytes are those of rendering the whole report at once.
    """

    def add(self, results: list[Result]) -> list[Result]: ...

    def write(self, report: AuditReport, write: Callable[[str], object]) -> None: ...


class StreamBase:
    """What every `ReportStream` shares: its context, and each result rendered as it is
    added (`_render`), then let go."""

    def __init__(self, context: RenderContext) -> None:
        self._context = context

    def add(self, results: list[Result]) -> list[Result]:
        for result in results:
            self._render(result)
        return []

    def _render(self, result: Result) -> None:
        raise NotImplementedError


class FindingStream(StreamBase):
    """A stream in which each unsuppressed finding becomes one piece of text (a CI
    annotation, a Code Quality issue), spooled until the report is written."""

    #: Written between two pieces.
    separator = ""

    def __init__(self, context: RenderContext) -> None:
        super().__init__(context)
        self._spool = Spool()

    def _render(self, result: Result) -> None:
        for row in rows(result, self._context):
            if not row.finding.suppressed:
                self._spool.add(self._piece(row), self.separator)

    def _piece(self, row: Row) -> str:
        raise NotImplementedError


def render_whole(stream: ReportStream, report: AuditReport) -> str:
    """The text `stream` writes for a report whose results are all in hand."""
    stream.add(list(report.results))
    parts: list[str] = []
    stream.write(report, parts.append)
    return "".join(parts)


class Spool:
    """Text rendered as the results come, kept in a temporary file and read back once."""

    def __init__(self) -> None:
        # surrogatepass: a lone surrogate from a UTF-16 file comes back as it went in.
        self._file: IO[str] = tempfile.TemporaryFile(
            "w+", encoding="utf-8", errors="surrogatepass", newline=""
        )
        self.count = 0  # pieces written

    def add(self, text: str, separator: str = "") -> None:
        """Append `text`, after `separator` unless it is the first piece."""
        if self.count:
            self._file.write(separator)
        self._file.write(text)
        self.count += 1

    def pieces(self) -> Iterator[str]:
        """Everything written, in pieces of at most a megabyte; the spool is then closed."""
        with self._file:
            self._file.seek(0)
            yield from iter(functools.partial(self._file.read, 1 << 20), "")

    def lines(self) -> Iterator[str]:
        """Everything written, a line at a time (pieces that each end in a newline); the
        spool is then closed."""
        with self._file:
            self._file.seek(0)
            yield from self._file

    def close(self) -> None:
        """Drop the spool (closing it again is harmless)."""
        self._file.close()


def display_path(file: str | None) -> str | None:
    """A path relative to the working directory when it lies below it (for CI annotations)."""
    if not file:
        return None
    path = Path(file)
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix() if not path.is_absolute() else str(path)


def location(result: Result) -> str:
    """`file:line` of the entry, `file [12], page 9` for one printed in a PDF (or just the
    key when the reference came from no file)."""
    reference = result.reference
    path = display_path(reference.file)
    if not path:
        return reference.key
    if reference.page is not None:
        return f"{path} {reference.label or reference.key}, page {reference.page}"
    return f"{path}:{reference.line}" if reference.line else path


def with_comparison(
    text: str,
    finding: Finding,
    *,
    compared: str = " (cited: {cited}; correct: {found})",
    sourced: str = " [{evidence}]",
) -> str:
    """`text`, then what was cited against what the record says (`compared`) and the source
    and record that say it (`sourced`); each part only when the finding has something for it,
    a missing side shown as "—". Every format words the parts its own way."""
    if finding.cited is not None or finding.found is not None:
        text += compared.format(cited=finding.cited or "—", found=finding.found or "—")
    evidence = " ".join(p for p in (finding.source, finding.record) if p)
    if evidence and sourced:
        text += sourced.format(evidence=evidence)
    return text


def finding_source(result: Result, finding: Finding) -> str:
    """Which source backs the finding; for unverified results, the sources that failed."""
    if finding.source:
        return finding.source
    if result.verdict == Verdict.UNVERIFIED:
        failed = [name for name, status in result.sources.items() if status.state == "failed"]
        return ", ".join(failed)
    return result.matched.source if result.matched else ""


def finding_message(result: Result, finding: Finding) -> str:
    """The message as shown: an outage is named once per run, so per reference it is short."""
    failed = [name for name, status in result.sources.items() if status.state == "failed"]
    if finding.code == "unverified" and failed:
        return f"unverified (sources down: {', '.join(sorted(failed))})"
    return finding.message


def failed_sources_text(result: Result) -> str:
    """`crossref: timeout; openalex: 503` for the sources that failed on this reference."""
    return "; ".join(
        f"{name}: {status.reason}" if status.reason else name
        for name, status in result.sources.items()
        if status.state == "failed"
    )


def consulted_sources(report: AuditReport) -> list[str]:
    """Sources that answered at least once, from the network or the cache."""
    names = {n for n, count in report.stats.cache_hits.items() if count}
    return sorted(names | report_tally(report).consulted)


def source_failures(report: AuditReport) -> list[tuple[str, str, int]]:
    """(source, its most frequent failure, references it failed on) for each failing source."""
    return [
        (name, reasons.most_common(1)[0][0], reasons.total())
        for name, reasons in report_tally(report).failures.items()
    ]


def outage_line(report: AuditReport) -> str:
    """One line for a run in which no source answered: what failed, host by host."""
    checked = report_tally(report).checked
    if report.offline:
        return (
            f"no source answered: offline, and none of the {checked} reference(s) is in the"
            " cache (run once online to fill it)"
        )
    hosts_by_kind: dict[str, list[str]] = {}
    for _name, reason, _count in source_failures(report):
        kind, joiner, host = reason.rpartition(" for ")
        if not joiner:
            kind, host = reason, ""
        hosts = hosts_by_kind.setdefault(kind + joiner, [])
        if host and host not in hosts:
            hosts.append(host)
    why = "; ".join(kind + ", ".join(hosts) for kind, hosts in hosts_by_kind.items())
    return f"could not reach any source: {why} — none of the {checked} reference(s) was checked"


def snapshot_line(report: AuditReport) -> str | None:
    """How current the Retraction Watch data behind the run were (None: nothing worth saying).

    Online runs without a snapshot still screen via Crossref and OpenAlex, so
    only offline runs, which depend on the snapshot, point out that it is missing.
    """
    state = report.retraction_snapshot
    if state is None:
        return None
    if state.available:
        days = round(state.age_days or 0.0)
        downloaded = (state.downloaded_at or "")[:10] or "unknown date"
        return (
            f"retraction screening: Retraction Watch snapshot of {downloaded} "
            f"({days} day{'' if days == 1 else 's'} old)"
        )
    if not report.offline:
        return None
    return (
        "retraction screening: no Retraction Watch snapshot — run `refaudit retractions update`;"
        " offline, only notices in cached source records were screened"
    )


def mirror_line(report: AuditReport) -> str | None:
    """Which local mirror the evidence came from, and how old its data are."""
    state = report.mirror
    if state is None:
        return None
    days = round(state.age_days or 0.0)
    stamp = (state.updated_at or state.built_at or "")[:10] or "unknown date"
    return (
        f"mirror: {state.location} ({state.backend}, data of {stamp}, "
        f"{days} day{'' if days == 1 else 's'} old)"
    )


def report_summary(report: AuditReport, context: RenderContext) -> dict[str, Any]:
    """The counts every format prints, plus how many references fail the run."""
    tally = report_tally(report, context.fail_on, context.baseline)
    counts = tally.counts()
    return {
        "total": tally.total,
        **{k: counts[k] for k in ("verified", "mismatch", "not_found", "unverified", "skipped")},
        "retracted": counts["retracted"],
        "flagged": tally.failing,
        "failing": tally.failing,
        "problems": len(report.problems),
    }


# XML 1.0 allows tab, newline, carriage return, U+0020–U+D7FF, U+E000–U+FFFD and U+10000 up:
# the rest, spelt out (its complement costs the regex compiler 3 ms on every start).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """`text` with every character XML 1.0 forbids written as a visible escape (`\\x01`).

    Keys and titles come from user files and upstream records; one control character
    would otherwise make a JUnit or SARIF file unreadable to the CI that consumes it.
    """
    return _NOT_XML.sub(lambda found: f"\\x{ord(found.group()):02x}", text)
