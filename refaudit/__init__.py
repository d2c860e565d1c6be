"""refaudit: audit bibliographies for fabricated, mis-cited and retracted references."""

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
    "Reference",
    "RefauditError",
    "Result",
    "SourceError",
    "SourceUnavailable",
    "UnexpectedResponse",
    "Verdict",
    "Work",
]
