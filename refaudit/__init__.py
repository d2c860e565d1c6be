"""refaudit: audit bibliographies for fabricated, mis-cited and retracted references.

The public names are loaded on first use, so `refaudit --help` does not pay
for the models and the pipeline.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "audit_bibliography": "refaudit.audit",
    "audit_paths": "refaudit.audit",
    "audit_references": "refaudit.audit",
    "load_settings": "refaudit.config",
    "Settings": "refaudit.config",
    "ConfigError": "refaudit.errors",
    "InputError": "refaudit.errors",
    "RateLimited": "refaudit.errors",
    "RefauditError": "refaudit.errors",
    "SourceError": "refaudit.errors",
    "SourceUnavailable": "refaudit.errors",
    "UnexpectedResponse": "refaudit.errors",
    "AuditReport": "refaudit.models",
    "Bibliography": "refaudit.models",
    "Finding": "refaudit.models",
    "Notice": "refaudit.models",
    "NoticeKind": "refaudit.models",
    "Person": "refaudit.models",
    "Reference": "refaudit.models",
    "Result": "refaudit.models",
    "Verdict": "refaudit.models",
    "Work": "refaudit.models",
    "parse_file": "refaudit.parsing",
    "parse_bibtex": "refaudit.parsing",
}

__all__ = [
    "AuditReport",
    "Bibliography",
    "ConfigError",
    "Finding",
    "InputError",
    "Notice",
    "NoticeKind",
    "Person",
    "RateLimited",
    "RefauditError",
    "Reference",
    "Result",
    "Settings",
    "SourceError",
    "SourceUnavailable",
    "UnexpectedResponse",
    "Verdict",
    "Work",
    "audit_bibliography",
    "audit_paths",
    "audit_references",
    "load_settings",
    "parse_bibtex",
    "parse_file",
]

if TYPE_CHECKING:
    from refaudit.audit import audit_bibliography, audit_paths, audit_references
    from refaudit.config import Settings, load_settings
    from refaudit.errors import (
        ConfigError,
        InputError,
        RateLimited,
        RefauditError,
        SourceError,
        SourceUnavailable,
        UnexpectedResponse,
    )
    from refaudit.models import (
        AuditReport,
        Bibliography,
        Finding,
        Notice,
        NoticeKind,
        Person,
        Reference,
        Result,
        Verdict,
        Work,
    )
    from refaudit.parsing import parse_bibtex, parse_file


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'refaudit' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
