"""When a run fails: the `--fail-on` vocabulary and the rules behind each word.

A rule matches *findings*, never whole results, so that a baseline can waive
exactly the findings it already knows and an ignored (suppressed) finding never
fails a build. Verdicts with no finding of their own (`not_found`,
`unverified`, `skipped`) get one synthesised by `effective_findings`, so every
renderer and the baseline see the same list.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from refaudit.errors import CIRCUIT_OPEN
from refaudit.findings import DEFAULT_FAIL_ON, INTEGRITY_CODES, RETRACTION_CODES, parse_fail_on
from refaudit.models import SEVERITY_RANK, AuditReport, Finding, Result, Verdict, verdict_counts

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
    """The results that make the run fail under `fail_on` (in report order).

    Only a report whose results are in hand has them; a streamed one
    (`AuditReport.tally`) says how many and names the first few.
    """
    if report.tally is not None:
        raise ValueError("the report kept counts, not results: read report.tally.failing")
    words = parse_fail_on(fail_on)
    return [result for result in report.results if failing_findings(result, words, baseline)]


#: Failing references a tally names: the closing line lists the first five.
NAMED_FAILING = 5


@dataclass
class Tally:
    """What the summary, the exit code and the closing lines read of a run's results.

    Each result is counted once (`add`), as its batch is decided, so a long run may
    drop its results and keep only these numbers (`AuditReport.tally`);
    `report_tally` counts a report whose results are all in hand the same way.
    Failing references are judged under `fail_on` and `baseline`.
    """

    fail_on: tuple[str, ...] = DEFAULT_FAIL_ON
    baseline: Waiver | None = None
    total: int = 0
    verdicts: Counter[Verdict] = field(default_factory=Counter)
    withdrawn: Counter[Verdict] = field(default_factory=Counter)
    """references whose work a notice withdraws, by verdict (shown as `retracted`)"""
    failing: int = 0
    failing_keys: list[str] = field(default_factory=list)
    """the keys of the first NAMED_FAILING failing references, in input order"""
    consulted: set[str] = field(default_factory=set)
    """sources that answered (or were read from the cache) for some reference"""
    failures: dict[str, Counter[str]] = field(default_factory=dict)
    """per failing source, how often each reason came up among checked references"""
    answered: bool = False
    """some source answered about some checked (not skipped) reference"""

    def __post_init__(self) -> None:
        self.fail_on = tuple(parse_fail_on(self.fail_on))

    def add(self, result: Result) -> None:
        """Count one decided result."""
        self.total += 1
        self.verdicts[result.verdict] += 1
        if result.retracted:
            self.withdrawn[result.verdict] += 1
        if self.fail_on and failing_findings(result, self.fail_on, self.baseline):
            self.failing += 1
            if len(self.failing_keys) < NAMED_FAILING:
                self.failing_keys.append(result.reference.key)
        checked = result.verdict != Verdict.SKIPPED
        for name, status in result.sources.items():
            if status.state in ("answered", "cached"):
                self.consulted.add(name)
                self.answered = self.answered or checked
            elif status.state == "failed" and checked:
                reason = (status.reason or "failed").removeprefix(CIRCUIT_OPEN)
                self.failures.setdefault(name, Counter())[reason] += 1

    @property
    def checked(self) -> int:
        """References the sources were asked about (all but the skipped ones)."""
        return self.total - self.verdicts[Verdict.SKIPPED]

    @property
    def retracted(self) -> int:
        return self.withdrawn.total()

    def counts(self) -> dict[str, int]:
        """References per verdict (`AuditReport.counts`), plus how many are retracted."""
        return verdict_counts(self.verdicts, self.retracted)

    def nothing_answered(self) -> bool:
        """Sources were asked about references and not one of them answered."""
        return bool(self.failures) and not self.answered

    def unverified_share(self) -> float:
        """Share of checked references that no source could verify."""
        return self.verdicts[Verdict.UNVERIFIED] / self.checked if self.checked else 0.0


def report_tally(
    report: AuditReport, fail_on: Iterable[str] | None = None, baseline: Waiver | None = None
) -> Tally:
    """The report's counts: the tally it kept while streaming, else its results counted.

    `fail_on` None: the caller reads nothing that depends on the fail policy. A
    streamed report was counted under one policy and can answer only for that one.
    """
    words = tuple(parse_fail_on(fail_on)) if fail_on is not None else None
    kept = report.tally
    if kept is not None:
        if not isinstance(kept, Tally):
            raise TypeError(f"a report's kept counts are a policy.Tally, not {type(kept).__name__}")
        if words is not None and (words, baseline) != (kept.fail_on, kept.baseline):
            raise ValueError(
                "the report kept counts, not results: it was judged under --fail-on "
                f"{','.join(kept.fail_on)} and its own baseline only"
            )
        return kept
    tally = Tally(words if words is not None else (), baseline)
    for result in report.results:
        tally.add(result)
    return tally
