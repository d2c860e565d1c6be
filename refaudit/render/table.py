"""The terminal report: findings grouped by severity, a summary line, optional details."""

from __future__ import annotations

import io
from typing import Any

from refaudit.models import SEVERITY_RANK, AuditReport, Result, Verdict
from refaudit.render import (
    VERDICT_LABELS,
    RenderContext,
    Row,
    consulted_sources,
    display_path,
    finding_source,
    location,
    mirror_line,
    report_summary,
    rows,
    snapshot_line,
    source_failures,
)

_GROUPS = (
    ("error", "Errors", "red"),
    ("warning", "Warnings", "yellow"),
    ("info", "Notes", "cyan"),
    ("suppressed", "Suppressed and skipped", "dim"),
    ("verified", "Verified", "green"),
)
_SEVERITY_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}


def group_of(result: Result, result_rows: list[Row]) -> str:
    """The table a result is listed in: its worst active finding, else why it is quiet."""
    if result.verdict == Verdict.SKIPPED:
        return "suppressed"
    active = [row.finding.severity for row in result_rows if not row.finding.suppressed]
    if active:
        return max(active, key=SEVERITY_RANK.__getitem__)
    return "suppressed" if result_rows else "verified"


def render_table(report: AuditReport, context: RenderContext, console: Any) -> None:
    """Print the report on a rich Console (colour follows the console, NO_COLOR included).

    With `context.quiet` only the findings that fail the run (one line each, so a
    pre-commit hook still says which entry to fix) and the summary are printed.
    """
    from rich.table import Table
    from rich.text import Text

    if context.quiet:
        _print_failing_lines(report, context, console)
        _print_summary(report, context, console)
        return
    grouped: dict[str, list[tuple[Result, list[Row]]]] = {name: [] for name, _, _ in _GROUPS}
    for result in report.results:
        result_rows = rows(result, context)
        grouped[group_of(result, result_rows)].append((result, result_rows))

    for name, title, colour in _GROUPS:
        members = grouped[name]
        if not members:
            continue
        if name == "verified" and not context.verbose:
            console.print(
                Text(f"{len(members)} verified reference(s) not listed (use --verbose)", "dim")
            )
            continue
        table = Table(
            title=Text(f"{title} ({len(members)})", style=f"bold {colour}"),
            title_justify="left",
            show_lines=False,
            expand=False,
        )
        table.add_column("key", style="bold", overflow="fold")
        table.add_column("verdict")
        table.add_column("finding", overflow="fold", ratio=3)
        table.add_column("source", overflow="fold")
        for result, result_rows in members:
            _add_result(table, result, result_rows)
        console.print(table)

    if report.problems:
        console.print(Text("Input problems", style="bold magenta"))
        for problem in report.problems:
            where = ":".join(
                str(p) for p in (display_path(problem.file), problem.line) if p is not None
            )
            key = f" [{problem.key}]" if problem.key else ""
            style = _SEVERITY_STYLE.get(problem.severity, "")
            console.print(Text.assemble((f"  {where}{key}", "bold"), " ", (problem.message, style)))

    if context.details:
        _print_details(report, context, console)
    _print_summary(report, context, console)


def _print_failing_lines(report: AuditReport, context: RenderContext, console: Any) -> None:
    """`refs.bib:205 key code: message`, one line per finding that fails the run."""
    from rich.text import Text

    for result in report.results:
        for row in rows(result, context):
            if row.failing:
                finding = row.finding
                console.print(
                    Text.assemble(
                        (location(result), "bold"),
                        f" {result.reference.key} ",
                        (f"{finding.code}: ", _SEVERITY_STYLE.get(finding.severity, "")),
                        finding.message,
                    )
                )


def _add_result(table: Any, result: Result, result_rows: list[Row]) -> None:
    from rich.text import Text

    verdict = VERDICT_LABELS[result.verdict]
    if not result_rows:
        table.add_row(result.reference.key, Text(verdict, "green"), "", _matched_source(result))
        return
    for index, row in enumerate(result_rows):
        finding = row.finding
        text = Text(f"{finding.code}: ", style=_SEVERITY_STYLE.get(finding.severity, ""))
        text.append(finding.message, style="dim" if finding.suppressed else "")
        if finding.suppressed and finding.suppressed != finding.message:
            text.append(f"  [suppressed: {finding.suppressed}]", style="dim italic")
        if row.baselined:
            text.append("  [baseline]", style="dim italic")
        if row.failing:
            text.append("  ✗ fails", style="bold red")
        first = index == 0
        table.add_row(
            result.reference.key if first else "",
            Text(verdict, _verdict_style(result)) if first else "",
            text,
            finding_source(result, finding),
        )


def _verdict_style(result: Result) -> str:
    return {
        Verdict.VERIFIED: "green",
        Verdict.MISMATCH: "yellow",
        Verdict.NOT_FOUND: "red",
        Verdict.UNVERIFIED: "magenta",
        Verdict.SKIPPED: "dim",
    }[result.verdict]


def _matched_source(result: Result) -> str:
    if not result.matched:
        return ""
    record = result.matched.source_id or result.matched.doi
    return f"{result.matched.source} {record}" if record else result.matched.source


def _print_details(report: AuditReport, context: RenderContext, console: Any) -> None:
    """Each discrepancy as cited vs correct, with the source and record that say so."""
    from rich.text import Text

    console.print(Text("Details", style="bold"))
    for result in report.results:
        result_rows = [r for r in rows(result, context) if not r.finding.suppressed]
        header = Text.assemble(
            (result.reference.key, "bold"),
            f"  {location(result)}  {VERDICT_LABELS[result.verdict]}",
            f"  confidence {result.confidence:.2f}" if result.confidence else "",
        )
        console.print(header)
        for row in result_rows:
            finding = row.finding
            console.print(
                Text(f"  {finding.code}", style=_SEVERITY_STYLE[finding.severity]),
                Text(f" ({finding.field})" if finding.field else ""),
                Text(f": {finding.message}"),
                sep="",
            )
            if finding.cited is not None or finding.found is not None:
                console.print(Text(f"      cited:   {finding.cited or '—'}"))
                console.print(Text(f"      correct: {finding.found or '—'}", style="green"))
            evidence = " ".join(p for p in (finding.source, finding.record) if p)
            if evidence:
                console.print(Text(f"      source:  {evidence}", style="dim"))
        for notice in result.integrity:
            parts = [notice.kind.value, notice.date, notice.notice_doi, notice.source]
            console.print(
                Text("      notice:  " + " ".join(p for p in parts if p), style="magenta")
            )
        for line in source_plan_lines(result):
            console.print(Text(f"  {line}", style="dim"))


def source_plan_lines(result: Result) -> list[str]:
    """Which sources were asked about a reference, and why each of the others was not."""
    asked = [n for n, s in result.sources.items() if s.state in ("answered", "cached")]
    failed = [
        f"{n} ({s.reason or 'failed'})" for n, s in result.sources.items() if s.state == "failed"
    ]
    lines = [f"asked: {', '.join(asked) or 'none'}"]
    if failed:
        lines.append(f"failed: {'; '.join(failed)}")
    lines += [
        f"not asked: {name} ({status.why}: {status.reason})"
        for name, status in result.sources.items()
        if status.state == "not_asked" and status.why
    ]
    return lines


def summary_lines(report: AuditReport, context: RenderContext) -> list[str]:
    """The summary lines (counts; cost; the snapshot's age if relevant) every text format shows."""
    summary = report_summary(report, context)
    counts = " · ".join(
        f"{summary[key]} {label}"
        for key, label in (
            ("verified", "verified"),
            ("mismatch", "mismatch"),
            ("not_found", "not found"),
            ("retracted", "retracted"),
            ("unverified", "unverified"),
            ("skipped", "skipped"),
        )
    )
    stats = report.stats
    sources = ", ".join(consulted_sources(report)) or "none"
    cost = (
        f"sources: {sources} · {sum(stats.requests.values())} requests · "
        f"{sum(stats.cache_hits.values())} cache hits · {stats.elapsed_s:.1f} s"
    )
    if stats.floor_ratio is not None:
        cost += f" (rate-limit floor {stats.floor_s:.1f} s: {stats.floor_ratio:.2f}×)"
    if report.offline:
        cost += " · offline"
    notes = [line for line in (mirror_line(report), snapshot_line(report)) if line]
    return [f"{summary['total']} references: {counts}", cost, *notes]


def _print_summary(report: AuditReport, context: RenderContext, console: Any) -> None:
    from rich.text import Text

    first, second, *snapshot = summary_lines(report, context)
    console.print(Text(first, style="bold"))
    console.print(Text(second, style="dim"))
    missing = not (report.retraction_snapshot and report.retraction_snapshot.available)
    for line in snapshot:
        console.print(Text(line, style="yellow" if missing else "dim"))
    for line, style in outcome_lines(report, context):
        console.print(Text(line, style=style))


def outcome_lines(report: AuditReport, context: RenderContext) -> list[tuple[str, str]]:
    """(line, style): what was not checked and why, one line per failing source; what fails."""
    lines: list[tuple[str, str]] = []
    unverified = sum(1 for r in report.results if r.verdict is Verdict.UNVERIFIED)
    if unverified:
        lines.append(
            (f"{unverified} reference(s) unverified — not checked, not cleared", "bold yellow")
        )
        for name, reason, count in source_failures(report):
            lines.append((f"  {name}: {reason} ({count} reference(s))", "yellow"))
    failing = [r for r in report.results if context.fails(r)]
    policy = ",".join(context.fail_on)
    if failing:
        keys = ", ".join(r.reference.key for r in failing[:5])
        more = f" and {len(failing) - 5} more" if len(failing) > 5 else ""
        lines.append(
            (f"{len(failing)} reference(s) fail (--fail-on {policy}): {keys}{more}", "bold red")
        )
    elif unverified:
        lines.append((f"nothing fails among the references checked (--fail-on {policy})", ""))
    else:
        lines.append((f"nothing fails (--fail-on {policy})", "green"))
    return lines


def render_table_text(report: AuditReport, context: RenderContext) -> str:
    """The table as plain text (for --output FILE): no colour, fixed width."""
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, width=120, no_color=True, color_system=None, soft_wrap=False)
    render_table(report, context, console)
    return buffer.getvalue()
