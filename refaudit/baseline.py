"""Baselines: the findings a project already knows about, so CI fails only on new ones.

A finding is identified by the citation key, the finding code, the field and
the DOI the entry cites. Messages, found values and sources are left out on
purpose: they change when upstream records change, and a baseline must not
break because Crossref fixed a typo. Editing the entry's DOI makes its old
findings new again, which is what a reviewer would expect.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from refaudit.errors import InputError
from refaudit.models import AuditReport, Finding, Result
from refaudit.policy import effective_findings
from refaudit.safewrite import write_atomically

BASELINE_FILE = ".refaudit-baseline.json"
BASELINE_VERSION = 1

Fingerprint = tuple[str, str, str, str]


def fingerprint(result: Result, finding: Finding) -> Fingerprint:
    """(key, code, field, cited DOI) — empty strings for what is absent."""
    return (result.reference.key, finding.code, finding.field or "", result.reference.doi or "")


@dataclass
class Baseline:
    """A set of known finding fingerprints, read from or written to a JSON file."""

    known: set[Fingerprint] = field(default_factory=set)

    def contains(self, result: Result, finding: Finding) -> bool:
        return fingerprint(result, finding) in self.known


def build_baseline(report: AuditReport) -> Baseline:
    """Every unsuppressed finding of the report (suppressed ones need no baseline)."""
    return Baseline(
        {
            fingerprint(result, finding)
            for result in report.results
            for finding in effective_findings(result)
            if not finding.suppressed
        }
    )


def write_baseline(baseline: Baseline, path: Path) -> None:
    """Write the baseline sorted, one finding per line, so diffs stay reviewable."""
    entries = [
        {"key": key, "code": code, "field": name or None, "doi": doi or None}
        for key, code, name, doi in sorted(baseline.known)
    ]
    lines = ",\n".join("    " + json.dumps(entry, ensure_ascii=False) for entry in entries)
    created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    body = f"[\n{lines}\n  ]" if entries else "[]"
    text = (
        f'{{\n  "version": {BASELINE_VERSION},\n  "created": "{created}",\n'
        f'  "findings": {body}\n}}\n'
    )
    write_atomically(path, text.encode("utf-8"))


def read_baseline(path: Path) -> Baseline:
    """Load a baseline file; a missing or malformed file is an InputError naming it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InputError(
            "baseline file not found", file=str(path), hint="create it with `refaudit baseline`"
        ) from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read baseline: {exc}", file=str(path)) from exc
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        raise InputError("not a refaudit baseline (no findings list)", file=str(path))
    if data.get("version") != BASELINE_VERSION:
        raise InputError(f"unsupported baseline version {data.get('version')!r}", file=str(path))
    known: set[Fingerprint] = set()
    for entry in data["findings"]:
        if not isinstance(entry, dict) or not entry.get("key") or not entry.get("code"):
            raise InputError(f"baseline entry without key or code: {entry!r}", file=str(path))
        known.add(
            (
                str(entry["key"]),
                str(entry["code"]),
                entry.get("field") or "",
                entry.get("doi") or "",
            )
        )
    return Baseline(known)
