"""Renderers: an AuditReport in, text out. Presentation only — no decisions.

Whether a reference fails the run is the policy's call (`refaudit.policy`);
renderers receive that answer through `RenderContext` so every format tells
the same story as the exit code.
"""

from __future__ import annotations

from collections.abc import Callable

from refaudit.models import AuditReport
from refaudit.render.common import (
    VERDICT_LABELS,
    RenderContext,
    ReportStream,
    Row,
    consulted_sources,
    display_path,
    failed_sources_text,
    finding_message,
    finding_source,
    location,
    mirror_line,
    outage_line,
    render_whole,
    report_summary,
    rows,
    shown_verdict,
    snapshot_line,
    source_failures,
    verdict_counts,
    xml_safe,
)

FORMATS = ("table", "json", "markdown", "sarif", "junit", "github", "gitlab", "html")
__all__ = [
    "FORMATS",
    "RenderContext",
    "ReportStream",
    "Row",
    "VERDICT_LABELS",
    "consulted_sources",
    "display_path",
    "failed_sources_text",
    "finding_message",
    "finding_source",
    "location",
    "mirror_line",
    "outage_line",
    "render",
    "report_stream",
    "report_summary",
    "rows",
    "shown_verdict",
    "snapshot_line",
    "source_failures",
    "verdict_counts",
    "xml_safe",
]


def render(report: AuditReport, format: str, context: RenderContext) -> str:
    """Render `report` as text in one of FORMATS (the table without colour)."""
    if format == "json":
        from refaudit.render.json import render_json

        return render_json(report, context)  # serialised a result at a time, nothing spooled
    return render_whole(report_stream(format, context), report)


def report_stream(format: str, context: RenderContext) -> ReportStream:
    """The writer that renders `format` while the audit runs (the table as `--output` text).

    Only its own module is imported: the report models some formats build cost a fifth
    of a second, which the audit's first requests need not wait for.
    """
    stream: Callable[[RenderContext], ReportStream]
    match format:
        case "table":
            from refaudit.render.table import TableStream as stream
        case "json":
            from refaudit.render.json import JsonStream as stream
        case "markdown":
            from refaudit.render.markdown import MarkdownStream as stream
        case "sarif":
            from refaudit.render.sarif import SarifStream as stream
        case "junit":
            from refaudit.render.junit import JunitStream as stream
        case "github":
            from refaudit.render.github import GithubStream as stream
        case "gitlab":
            from refaudit.render.gitlab import GitlabStream as stream
        case "html":
            from refaudit.render.html import HtmlStream as stream
        case _:
            raise ValueError(f"unknown format {format!r}; choose from {', '.join(FORMATS)}")
    return stream(context)
