"""When a run fails: the `--fail-on` vocabulary and the rules behind each word.

A rule matches *findings*, never whole results, so that a baseline can waive
exactly the findings it already knows and an ignored (suppressed) finding never
fails a build. Verdicts with no finding of their own (`not_found`,
`unverified`, `skipped`) get one synthesised by `effective_findings`, so every
renderer and the baseline see the same list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from refaudit.findings import INTEGRITY_CODES, RETRACTION_CODES, parse_fail_on
from refaudit.models import SEVERITY_RANK, AuditReport, Finding, Result, Verdict

# The synthesised finding for verdicts the pipeline may leave without one.
_VERDICT_FINDINGS: dict[Verdict, str] = {
    Verdict.NOT_FOUND: "not-found",
    Verdict.UNVERIFIED: "unverified",
    Verdict.SKIPPED: "skipped",
}
_VERDICT_MESSAGES = {
    "not-found": "no source knows this reference",
    "unverified": "no source could check this reference",
    "skipped": "not checked",
}


class Waiver(Protocol):
    """Findings a run already accepted (`baseline.Baseline`): they never fail it."""

    def contains(self, result: Result, finding: Finding) -> bool: ...


@dataclass(frozen=True)
class FailRule:
    """One parsed `--fail-on` word."""

    name: str
    matches: Callable[[Result, Finding], bool]


def effective_findings(result: Result) -> list[Finding]:
    """The result's findings, plus one standing for its verdict when the pipeline gave none."""
    code = _VERDICT_FINDINGS.get(result.verdict)
    if code is None or any(f.code == code for f in result.findings):
        return list(result.findings)
    # An ignored entry has every finding suppressed; its verdict's finding follows suit.
    reasons = {f.suppressed for f in result.findings}
    inherited = reasons.pop() if len(reasons) == 1 else None
    skipped = (result.reason or "skipped") if result.verdict == Verdict.SKIPPED else None
    verdict_finding = Finding.of(
        code, _verdict_message(result, code), suppressed=skipped or inherited
    )
    return [verdict_finding, *result.findings]


def _verdict_message(result: Result, code: str) -> str:
    """The verdict's finding in a few words; an outage is named once per run, not per entry."""
    failed = sorted(name for name, s in result.sources.items() if s.state == "failed")
    if result.verdict == Verdict.UNVERIFIED and failed:
        return f"unverified (sources down: {', '.join(failed)})"
    return result.reason or _VERDICT_MESSAGES[code]


def _at_least(severity: str) -> Callable[[Result, Finding], bool]:
    return lambda _result, finding: SEVERITY_RANK[finding.severity] >= SEVERITY_RANK[severity]


def _verdict(verdict: Verdict) -> Callable[[Result, Finding], bool]:
    """Match the verdict's own finding, or (for mismatch) its warnings and errors."""
    own_code = _VERDICT_FINDINGS.get(verdict)

    def matches(result: Result, finding: Finding) -> bool:
        if result.verdict != verdict:
            return False
        if own_code:
            return finding.code == own_code
        return SEVERITY_RANK[finding.severity] >= SEVERITY_RANK["warning"]

    return matches


def _rule(word: str) -> FailRule:
    named: dict[str, Callable[[Result, Finding], bool]] = {
        "error": _at_least("error"),
        "warning": _at_least("warning"),
        "info": _at_least("info"),
        "flagged": lambda r, f: r.flagged and (f.code == "not-found" or f.severity == "error"),
        "not_found": _verdict(Verdict.NOT_FOUND),
        "mismatch": _verdict(Verdict.MISMATCH),
        "unverified": _verdict(Verdict.UNVERIFIED),
        "doi": lambda _r, f: f.code.startswith("doi-") and f.severity == "error",
        "retracted": lambda _r, f: f.code in RETRACTION_CODES,
        "integrity": lambda _r, f: f.code in INTEGRITY_CODES and f.severity != "info",
        "none": lambda _r, _f: False,
    }
    if word in named:
        return FailRule(word, named[word])
    code = word.replace("_", "-")
    return FailRule(word, lambda _r, f: f.code == code)


def failing_findings(
    result: Result, fail_on: Iterable[str], baseline: Waiver | None = None
) -> list[Finding]:
    """The findings of `result` that trip a rule and are neither suppressed nor baselined."""
    if result.verdict == Verdict.SKIPPED:
        return []
    rules = [_rule(word) for word in parse_fail_on(fail_on)]
    failing = []
    for finding in effective_findings(result):
        if finding.suppressed:
            continue
        if baseline is not None and baseline.contains(result, finding):
            continue
        if any(rule.matches(result, finding) for rule in rules):
            failing.append(finding)
    return failing


def failing_results(
    report: AuditReport, fail_on: Iterable[str], baseline: Waiver | None = None
) -> list[Result]:
    """The results that make the run fail under `fail_on` (in report order)."""
    words = parse_fail_on(fail_on)
    return [result for result in report.results if failing_findings(result, words, baseline)]


def nothing_answered(report: AuditReport) -> bool:
    """True when sources were asked about references and not one of them answered."""
    states = {
        status.state
        for result in report.results
        if result.verdict != Verdict.SKIPPED
        for status in result.sources.values()
    }
    return "failed" in states and not states & {"answered", "cached"}


def unverified_share(report: AuditReport) -> float:
    """Share of checked (not skipped) references that no source could verify."""
    checked = [r for r in report.results if r.verdict != Verdict.SKIPPED]
    if not checked:
        return 0.0
    return sum(1 for r in checked if r.verdict == Verdict.UNVERIFIED) / len(checked)
