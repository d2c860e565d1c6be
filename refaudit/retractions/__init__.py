"""Retraction screening: the Retraction Watch snapshot, notice merging and DOI checks.

The pipeline calls `screen_results` after verification; the CLI's `retractions`
commands and the MCP server call the lookup functions. See docs/retractions.md.
"""

from __future__ import annotations

from refaudit.models import RetractionRecord
from refaudit.retractions.download import UpdateReport, download_snapshot
from refaudit.retractions.lookup import (
    DoiScreening,
    NoticeLookup,
    check_dois,
    get_notice,
    recent_retractions,
    retractions_by_author,
    search_retractions,
)
from refaudit.retractions.screen import (
    collect_notices,
    findings_for,
    merge_notices,
    screen_results,
    severity_for,
)
from refaudit.retractions.store import CREDIT, Snapshot, SnapshotStatus

__all__ = [
    "CREDIT",
    "DoiScreening",
    "NoticeLookup",
    "RetractionRecord",
    "Snapshot",
    "SnapshotStatus",
    "UpdateReport",
    "check_dois",
    "collect_notices",
    "download_snapshot",
    "findings_for",
    "get_notice",
    "merge_notices",
    "recent_retractions",
    "retractions_by_author",
    "screen_results",
    "search_retractions",
    "severity_for",
]
