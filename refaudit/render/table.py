"""The terminal report: findings grouped by what they need, a summary, optional details.

On a terminal the findings are tables; piped (a CI log, an editor) each finding
is one line, `path:line: severity code [key] message`, like ruff's concise output.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from refaudit.models import SEVERITY_RANK, AuditReport, Result, Verdict
from refaudit.render.common import (
    RenderContext,
    Row,
    StatusMaps,
    consulted_sources,
    display_path,
    finding_message,
    finding_source,
    light_result,
    location,
    mirror_line,
    rows,
    shown_verdict,
    snapshot_line,
    source_failures,
    verdict_counts,
)

_GROUPS = (
    ("failing", "Failing the run", "bold red"),
    ("error", "Errors", "red"),
    ("warning", "Warnings", "yellow"),
    ("info", "Notes", "cyan"),
    ("suppressed", "Suppressed and skipped", "dim"),
    ("verified", "Verified", "green"),
)
_SEVERITY_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}
_NARROW = 100


def group_of(result: Result, result_rows: list[Row]) -> str:
    """The table a result is listed in: failing the run, else its worst active finding."""
    if result.verdict == Verdict.SKIPPED:
        return "suppressed"
    if any(row.failing for row in result_rows):
        return "failing"
    active = [row.finding.severity for row in result_rows if not row.finding.suppressed]
    if active:
        return max(active, key=SEVERITY_RANK.__getitem__)
    return "suppressed" if result_rows else "verified"


def table_batches(context: RenderContext) -> Callable[[list[Result]], list[Result]]:
    """An audit `on_batch` hook: results the table will not list are kept light.

    A verified reference without findings is only counted (unless --verbose), so its
    matched record and corrected entry need not be held until the table is printed.
    """
    statuses: StatusMaps = {}

    def keep(results: list[Result]) -> list[Result]:
        return [
            result if context.verbose or rows(result, context) else light_result(result, statuses)
            for result in results
        ]

    return keep


def render_table(
    report: AuditReport, context: RenderContext, console: Any, *, concise: bool | None = None
) -> None:
    """Print the report on a rich Console (colour follows the console, NO_COLOR included).

    `concise` (default: the console is not a terminal) prints one line per
    active finding instead of tables; with `context.quiet` only the findings that
    fail the run, so a pre-commit hook still says which entry to fix.
    """
    from rich.table import Table
    from rich.text import Text

    if context.quiet or (concise if concise is not None else not console.is_terminal):
        _print_finding_lines(report, context, console, only_failing=context.quiet)
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
        # Below 100 columns the source joins the finding's text instead of a column.
        narrow = console.width < _NARROW
        cells = [_cells(result, result_rows, narrow=narrow) for result, result_rows in members]
        # Identifiers (DOIs, arXiv ids, URLs, dates) are never folded: their column is
        # at least as wide as the longest one, up to a cap that keeps 80 columns usable.
        table.add_column("key", style="bold", min_width=_widest(cells, 0, 24))
        table.add_column("verdict", no_wrap=True)
        table.add_column("finding", ratio=1, min_width=_widest(cells, 2, 32))
        if not narrow:
            table.add_column("source", min_width=_widest(cells, 3, 16))
        for row in (row for rows_of_result in cells for row in rows_of_result):
            table.add_row(*(row[:3] if narrow else row))
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


def _print_finding_lines(
    report: AuditReport, context: RenderContext, console: Any, *, only_failing: bool
) -> None:
    """`refs.bib:205: error not-found [key] message`, one line per active finding."""
    from rich.text import Text

    for result in report.results:
        for row in rows(result, context):
            finding = row.finding
            if finding.suppressed or (only_failing and not row.failing):
                continue
            where = location(result)
            message = _one_line(finding_message(result, finding))
            tail = " [baseline]" if row.baselined else ""
            console.print(
                Text.assemble(
                    (f"{where}:", "bold"),
                    " ",
                    (f"{finding.severity} {finding.code}", _SEVERITY_STYLE[finding.severity]),
                    f" [{result.reference.key}] {message}{tail}",
                ),
                soft_wrap=True,
            )
    if only_failing:
        return
    for problem in report.problems:
        where = ":".join(
            str(p) for p in (display_path(problem.file), problem.line) if p is not None
        )
        key = f" [{problem.key}]" if problem.key else ""
        console.print(
            Text.assemble(
                (f"{where}:", "bold"),
                " ",
                (f"{problem.severity} {problem.code}", _SEVERITY_STYLE.get(problem.severity, "")),
                f"{key} {_one_line(problem.message)}",
            ),
            soft_wrap=True,
        )


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cells(
    result: Result, result_rows: list[Row], *, narrow: bool
) -> list[tuple[Any, Any, Any, Any]]:
    """The table rows of one result: key and verdict on its first row, one finding per row."""
    from rich.text import Text

    verdict = Text(shown_verdict(result), _verdict_style(result))
    if not result_rows:
        record = _matched_record(result)
        source = result.matched.source if result.matched else ""
        shown = Text(f"matched {record}" if record else "", style="dim")
        if narrow and source:
            shown.append(f" ({source})" if record else source, style="dim")
        return [(result.reference.key, verdict, shown, source)]
    cells = []
    for index, row in enumerate(result_rows):
        finding = row.finding
        text = Text(f"{finding.code}: ", style=_SEVERITY_STYLE.get(finding.severity, ""))
        text.append(finding_message(result, finding), style="dim" if finding.suppressed else "")
        if finding.suppressed and finding.suppressed != finding.message:
            text.append(f"  [suppressed: {finding.suppressed}]", style="dim italic")
        if row.baselined:
            text.append("  [baseline]", style="dim italic")
        if row.failing:
            text.append("  ✗ fails", style="bold red")
        source = finding_source(result, finding)
        if narrow and source:
            text.append(f"  ({source})", style="dim")
        first = index == 0
        cells.append(
            (
                result.reference.key if first else "",
                verdict if first else "",
                text,
                source,
            )
        )
    return cells


def _widest(cells: list[list[tuple[Any, ...]]], column: int, cap: int) -> int:
    """The longest unbreakable word in a column (at most `cap`), so rich never folds it."""
    words = (
        len(word)
        for rows_of_result in cells
        for row in rows_of_result
        for word in str(row[column]).split()
    )
    return min(cap, max(words, default=1))


def _verdict_style(result: Result) -> str:
    if result.retracted:
        return "bold red"
    return {
        Verdict.VERIFIED: "green",
        Verdict.MISMATCH: "yellow",
        Verdict.NOT_FOUND: "red",
        Verdict.UNVERIFIED: "magenta",
        Verdict.SKIPPED: "dim",
    }[result.verdict]


def _matched_record(result: Result) -> str:
    if not result.matched:
        return ""
    return result.matched.source_id or result.matched.doi or ""


def _print_details(report: AuditReport, context: RenderContext, console: Any) -> None:
    """Each discrepancy as cited vs correct, with the source and record that say so."""
    from rich.text import Text

    console.print(Text("Details", style="bold"))
    for result in report.results:
        result_rows = [r for r in rows(result, context) if not r.finding.suppressed]
        header = Text.assemble(
            (result.reference.key, "bold"),
            f"  {location(result)}  {shown_verdict(result)}",
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
    """The summary lines (counts; cost; the snapshot's age if relevant) every text format shows.

    Each reference is counted once, under the verdict the tables show, so the counts
    add up to the total (a retracted work is `retracted`, not also `verified`).
    """
    counts = verdict_counts(report)
    shown = " · ".join(f"{count} {label}" for label, count in counts.items())
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
    return [f"{len(report.results)} references: {shown}", cost, *notes]


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
    render_table(report, context, console, concise=False)
    return buffer.getvalue()
