"""The terminal report: findings grouped by what they need, a summary, optional details.

On a terminal the findings are tables; piped (a CI log, an editor) each finding
is one line, `path:line: severity code [key] message`, like ruff's concise output.
"""

from __future__ import annotations

import io
import itertools
import json
from collections.abc import Callable, Iterator
from typing import Any

from refaudit.models import AuditReport, InputProblem, Result, Verdict
from refaudit.policy import report_tally
from refaudit.render.common import (
    GROUPS,
    RenderContext,
    Row,
    Spool,
    StreamBase,
    consulted_sources,
    display_path,
    finding_message,
    finding_source,
    group_of,
    location,
    mirror_line,
    rows,
    shown_verdict,
    snapshot_line,
    source_failures,
    verdict_counts,
)

_SEVERITY_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}
_NARROW = 100


#: Results per printed table. A group longer than this is printed as consecutive
#: tables with one header and the widths the whole group needs: rich lays out (and
#: holds) every row of a table before printing it, so a thousand results (a few
#: megabytes of cells and lines) bound what one table costs, and any bibliography a
#: person reads as a table still prints as one.
TABLE_CHUNK = 1000


class TableStream(StreamBase):
    """The terminal report written while the audit runs (a `ReportStream`).

    Each listed result's rows go to the spool of its group as its batch comes (piped
    or quiet: its finding lines), its details to another, and the widths each
    column needs are tracked on the way; `print` prints the groups in their fixed
    order once the audit is done, reading the spools back a table at a time. The
    output is that of one table per group whenever a group fits in TABLE_CHUNK.
    Without a console it writes the plain 120-column text of `--output FILE`.
    """

    def __init__(
        self, context: RenderContext, console: Any = None, *, concise: bool | None = None
    ) -> None:
        from rich.console import Console

        super().__init__(context)
        if console is None:
            console = Console(
                file=io.StringIO(), width=120, no_color=True, color_system=None, soft_wrap=False
            )
            concise = False
        self._console = console
        self._concise = context.quiet or (
            concise if concise is not None else not self._console.is_terminal
        )
        # Below 100 columns the source joins the finding's text instead of a column.
        self._narrow = self._console.width < _NARROW
        self._groups = {group.id: _Group() for group in GROUPS}
        self._lines = Spool()  # concise: one finding per line
        self._details = Spool()

    def _render(self, result: Result) -> None:
        result_rows = rows(result, self._context)
        if self._concise:
            for row in result_rows:
                if not row.finding.suppressed and (row.failing or not self._context.quiet):
                    self._lines.add(_encode([_finding_line(row)]) + "\n")
            return
        name = group_of(result, result_rows)
        if name == "verified" and not self._context.verbose:
            self._groups[name].count += 1
        else:
            self._groups[name].add(_cells(result, result_rows, narrow=self._narrow), self._console)
        if self._context.details:
            for line in _detail_lines(result, result_rows):
                self._details.add(_encode(line) + "\n")

    def write(self, report: AuditReport, write: Callable[[str], object]) -> None:
        """Print the report as text through `write` (the console this stream was made with)."""
        self._console.file = _Writer(write)
        self.print(report)

    def print(self, report: AuditReport) -> None:
        """Print the report on the console; the spools are read once and closed."""
        from rich.text import Text

        console, context = self._console, self._context
        if self._concise:
            for line in self._lines.lines():
                console.print(*_decode(line), soft_wrap=True)
            _print_problem_lines(report, console, errors_only=context.quiet)
            _print_summary(report, context, console)
            return
        for section in GROUPS:
            group = self._groups[section.id]
            if not group.count:
                continue
            if section.id == "verified" and not context.verbose:
                console.print(
                    Text(f"{group.count} verified reference(s) not listed (use --verbose)", "dim")
                )
                continue
            group.print(
                Text(f"{section.title} ({group.count})", style=f"bold {section.style}"),
                self._narrow,
                console,
            )

        if report.problems:
            console.print(Text("Input problems", style="bold magenta"))
            for problem in report.problems:
                where = _problem_place(problem)
                key = f" [{problem.key}]" if problem.key else ""
                style = _SEVERITY_STYLE.get(problem.severity, "")
                console.print(
                    Text.assemble((f"  {where}{key}", "bold"), " ", (problem.message, style))
                )

        if context.details:
            console.print(Text("Details", style="bold"))
            for line in self._details.lines():
                console.print(*_decode(line), sep="")
        _print_summary(report, context, console)


class _Writer:
    """A file for rich's Console that hands each piece of text to `write`."""

    def __init__(self, write: Callable[[str], object]) -> None:
        self.write = write

    def flush(self) -> None:
        pass


class _Group:
    """One group's listed results: their rows spooled, and what its columns need."""

    def __init__(self) -> None:
        from rich.measure import Measurement

        self.count = 0
        self.rows = Spool()  # one line per result: its rows' cells
        self.words = [1, 1, 1, 1]  # the longest word in each column
        self.measured = [Measurement(0, 0)] * 4  # each column's cells, as rich measures them

    def add(self, cells: list[tuple[Any, Any, Any, Any]], console: Any) -> None:
        from rich.measure import Measurement

        self.count += 1
        self.rows.add(_encode([list(row) for row in cells]) + "\n")
        for row in cells:
            for column, cell in enumerate(row):
                words = str(cell).split()
                self.words[column] = max(self.words[column], *map(len, words), 0)
                low, high = Measurement.get(console, console.options, cell)
                widest = self.measured[column]
                self.measured[column] = Measurement(
                    max(widest.minimum, low), max(widest.maximum, high)
                )

    def print(self, title: Any, narrow: bool, console: Any) -> None:
        """The group as one table, or as tables of TABLE_CHUNK results sharing its widths."""
        from rich.table import Table

        def table(widths: list[int] | None, *, first: bool) -> Any:
            made = Table(
                title=title if first else None,
                title_justify="left",
                show_header=first,
                show_lines=False,
                expand=False,
            )
            # Identifiers (DOIs, arXiv ids, URLs, dates) are never folded: their column is
            # at least as wide as the longest one, up to a cap that keeps 80 columns usable.
            fixed: list[int | None] = [*widths] if widths else [None] * 4
            made.add_column("key", style="bold", min_width=min(24, self.words[0]), width=fixed[0])
            made.add_column("verdict", no_wrap=True, width=fixed[1])
            made.add_column("finding", ratio=1, min_width=min(32, self.words[2]), width=fixed[2])
            if not narrow:
                made.add_column("source", min_width=min(16, self.words[3]), width=fixed[3])
            return made

        widths = (
            None if self.count <= TABLE_CHUNK else self._widths(table(None, first=True), console)
        )
        lines = self.rows.lines()
        for start in range(0, self.count, TABLE_CHUNK):
            chunk = table(widths, first=start == 0)
            for line in itertools.islice(lines, TABLE_CHUNK):
                for row in _decode(line):
                    chunk.add_row(*(row[:3] if narrow else row))
            console.print(chunk)

    def _widths(self, table: Any, console: Any) -> list[int]:
        """The widths rich gives the columns of this group as one table.

        One row of stand-ins measuring as each whole column does is laid out, and each
        notes the width it is given, so every chunk's table can be given the same.
        """
        cells = [_Measured(measured) for measured in self.measured[: len(table.columns)]]
        table.add_row(*cells)
        for _ in console.render(table):
            pass
        return [cell.width for cell in cells]


class _Measured:
    """A stand-in cell: measures as given, and notes the width it is laid out in."""

    def __init__(self, measurement: Any) -> None:
        self.measurement = measurement
        self.width = 0

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        return self.measurement

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        self.width = options.max_width
        yield from ()


def render_table(
    report: AuditReport, context: RenderContext, console: Any, *, concise: bool | None = None
) -> None:
    """Print the report on a rich Console (colour follows the console, NO_COLOR included).

    `concise` (default: the console is not a terminal) prints one line per
    active finding instead of tables; with `context.quiet` only the findings that
    fail the run, so a pre-commit hook still says which entry to fix.
    """
    stream = TableStream(context, console, concise=concise)
    stream.add(report.results)
    stream.print(report)


def _finding_line(row: Row) -> Any:
    """`refs.bib:205: error not-found [key] message`: one active finding, piped."""
    from rich.text import Text

    result, finding = row.result, row.finding
    message = _one_line(finding_message(result, finding))
    tail = " [baseline]" if row.baselined else ""
    return Text.assemble(
        (f"{location(result)}:", "bold"),
        " ",
        (f"{finding.severity} {finding.code}", _SEVERITY_STYLE[finding.severity]),
        f" [{result.reference.key}] {message}{tail}",
    )


def _print_problem_lines(report: AuditReport, console: Any, *, errors_only: bool) -> None:
    """`refs.bib:3: error parse-error [key] message`, one line per input problem, piped;
    `errors_only` (`--quiet`) keeps those that left something out of the audit."""
    from rich.text import Text

    for problem in report.problems:
        if errors_only and problem.severity != "error":
            continue
        where = _problem_place(problem)
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


def _problem_place(problem: InputProblem) -> str:
    """`refs.bib:12`: where an input problem is (the file alone when it has no line)."""
    return ":".join(str(p) for p in (display_path(problem.file), problem.line) if p is not None)


def _encode(value: Any) -> str:
    """Cells or printed lines as one line of JSON: strings stay strings, rich Text keeps
    its style and spans."""
    from rich.text import Text

    def plain(item: Any) -> Any:
        if isinstance(item, Text):
            spans = [[span.start, span.end, str(span.style)] for span in item.spans]
            return {"text": item.plain, "style": str(item.style), "spans": spans}
        if isinstance(item, list):
            return [plain(part) for part in item]
        return item

    return json.dumps(plain(value))


def _decode(line: str) -> Any:
    """What `_encode` wrote, with each rich Text rebuilt."""
    from rich.text import Span, Text

    def rebuilt(item: dict[str, Any]) -> Text:
        spans = [Span(start, end, style) for start, end, style in item["spans"]]
        return Text(item["text"], style=item["style"], spans=spans)

    return json.loads(line, object_hook=rebuilt)


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


def _detail_lines(result: Result, result_rows: list[Row]) -> Iterator[list[Any]]:
    """Each discrepancy as cited vs correct, with the source and record that say so:
    the rich Texts of each printed line (printed side by side)."""
    from rich.text import Text

    yield [
        Text.assemble(
            (result.reference.key, "bold"),
            f"  {location(result)}",
            f" ({result.reference.origin})" if result.reference.origin else "",
            f"  {shown_verdict(result)}",
            f"  confidence {result.confidence:.2f}" if result.confidence else "",
        )
    ]
    for row in result_rows:
        finding = row.finding
        if finding.suppressed:
            continue
        yield [
            Text(f"  {finding.code}", style=_SEVERITY_STYLE[finding.severity]),
            Text(f" ({finding.field})" if finding.field else ""),
            Text(f": {finding.message}"),
        ]
        if finding.cited is not None or finding.found is not None:
            yield [Text(f"      cited:   {finding.cited or '—'}")]
            yield [Text(f"      correct: {finding.found or '—'}", style="green")]
        evidence = " ".join(p for p in (finding.source, finding.record) if p)
        if evidence:
            yield [Text(f"      source:  {evidence}", style="dim")]
    for notice in result.integrity:
        parts = [notice.kind.value, notice.date, notice.notice_doi, notice.source]
        yield [Text("      notice:  " + " ".join(p for p in parts if p), style="magenta")]
    for line in source_plan_lines(result):
        yield [Text(f"  {line}", style="dim")]


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
    total = sum(counts.values())
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
    return [f"{total} references: {shown}", cost, *notes]


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
    tally = report_tally(report, context.fail_on, context.baseline)
    unverified = tally.verdicts[Verdict.UNVERIFIED]
    if unverified:
        lines.append(
            (f"{unverified} reference(s) unverified — not checked, not cleared", "bold yellow")
        )
        for name, reason, count in source_failures(report):
            lines.append((f"  {name}: {reason} ({count} reference(s))", "yellow"))
    unread = sum(problem.severity == "error" for problem in report.problems)
    if unread:
        # An entry left out or a bibliography not read is not among the references at all.
        lines.append(
            (
                f"{unread} input error(s) — what they name was not read, so not checked",
                "bold yellow",
            )
        )
    policy = ",".join(context.fail_on)
    if tally.failing:
        keys = ", ".join(tally.failing_keys)
        unnamed = tally.failing - len(tally.failing_keys)
        more = f" and {unnamed} more" if unnamed else ""
        lines.append(
            (f"{tally.failing} reference(s) fail (--fail-on {policy}): {keys}{more}", "bold red")
        )
    elif unverified:
        lines.append((f"nothing fails among the references checked (--fail-on {policy})", ""))
    else:
        lines.append((f"nothing fails (--fail-on {policy})", "green"))
    return lines
