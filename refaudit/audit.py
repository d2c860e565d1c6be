"""The one pipeline: parse → batched lookups → search → verify → screen → AuditReport.

The CLI and the MCP server both call these functions; neither decides anything
about references itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from refaudit.config import Settings
from refaudit.models import AuditReport, Bibliography, Reference

if TYPE_CHECKING:
    import httpx

Progress = Callable[[int, int], None]
"""Called as progress(done, total) while references are checked."""


async def audit_references(
    references: Sequence[Reference],
    settings: Settings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Progress | None = None,
) -> AuditReport:
    """Verify and screen `references`; one Result per reference, in input order."""
    raise NotImplementedError


async def audit_bibliography(
    bibliography: Bibliography,
    settings: Settings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Progress | None = None,
) -> AuditReport:
    """Audit parsed references and carry the parser's problems into the report."""
    report = await audit_references(
        bibliography.references, settings, transport=transport, progress=progress
    )
    report.problems = list(bibliography.problems) + report.problems
    report.files = list(bibliography.files)
    return report


async def audit_paths(
    paths: Sequence[Path],
    settings: Settings,
    *,
    all_entries: bool = False,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Progress | None = None,
) -> AuditReport:
    """Parse every file (.bib/.tex/.bbl) and audit all their references together."""
    from refaudit.parsing import parse_file

    combined = Bibliography()
    for path in paths:
        parsed = parse_file(Path(path), all_entries=all_entries)
        combined.references.extend(parsed.references)
        combined.problems.extend(parsed.problems)
        combined.files.extend(parsed.files or [str(path)])
    return await audit_bibliography(combined, settings, transport=transport, progress=progress)
