"""Every exception refaudit raises, in one leaf module (it imports nothing from refaudit).

    RefauditError            base; `hint` is shown under the message
    ├── InputError           unusable input file: names the file (and line / entry)
    ├── ConfigError          a bad setting: names the setting and where it came from
    ├── MirrorError          a local mirror is missing, unreadable or cannot be built
    └── SourceError          one upstream failed: names the source (and URL)
        ├── SourceUnavailable    timeout, connection error, 5xx, circuit open
        ├── RateLimited          still 429 after retries; carries `retry_after`
        ├── OfflineMiss          --offline and the answer is not in the cache
        ├── KeyRejected          the API refused the key: the source is off for the run
        ├── QuotaSpent           the key's request budget is spent until a known time
        └── UnexpectedResponse   the body is not shaped as the API documents

A `SourceError` never becomes "not found": the verification engine turns it into
an `unverified` verdict that names the source and this message.
"""

from __future__ import annotations

#: How a failure reads when a source's circuit breaker is open; the reason follows.
CIRCUIT_OPEN = "circuit open after repeated failures: "


class RefauditError(Exception):
    """Base class; `hint` is an optional next step for the user."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class InputError(RefauditError):
    """An input file cannot be used at all (missing, binary, empty, unknown kind)."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        key: str | None = None,
        hint: str | None = None,
    ) -> None:
        location = ":".join(str(part) for part in (file, line) if part is not None)
        if key:
            location = f"{location} [{key}]" if location else f"[{key}]"
        super().__init__(f"{location}: {message}" if location else message, hint=hint)
        self.file = file
        self.line = line
        self.key = key


class ConfigError(RefauditError):
    """A setting is invalid; the message names the setting and its origin."""


class MirrorError(RefauditError):
    """A local mirror (`refaudit mirror`) is missing, unreadable or cannot be built."""


class SourceError(RefauditError):
    """An upstream source could not give an answer."""

    def __init__(self, source: str, message: str, *, url: str | None = None) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
        self.reason = message
        self.url = url


class SourceUnavailable(SourceError):
    """Timeout, connection failure, 5xx after retries, or the circuit breaker is open."""


class RateLimited(SourceError):
    """The source kept answering 429 after every retry."""

    def __init__(
        self, source: str, message: str, *, url: str | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(source, message, url=url)
        self.retry_after = retry_after


class NothingToAsk(SourceError):
    """The query gives the source nothing it searches by (PubMed, IEEE Xplore and Scopus
    search title words; a citation string may have none): the source was not asked, so
    its silence is neither an answer that nothing is there nor a failure."""

    def __init__(self, source: str, message: str = "nothing in the citation to search by") -> None:
        super().__init__(source, message)


class OfflineMiss(SourceError):
    """Offline mode and the cache holds no answer for this request."""


class KeyRejected(SourceError):
    """The API refused the configured key; asking again cannot help, so the run stops asking."""


class QuotaSpent(SourceError):
    """The key's quota is spent; nothing is sent to the source before `until` (epoch seconds)."""

    def __init__(self, source: str, message: str, *, until: float, url: str | None = None) -> None:
        super().__init__(source, message, url=url)
        self.until = until


class UnexpectedResponse(SourceError):
    """The response does not have the documented shape (names what is missing)."""
