"""A source's answer as source modules read it, and what an unusable answer means.

`Fetched` is the same whether it came from the network or the cache; its body is
parsed once, and a JSON or XML body that does not parse is caught before a
source reads it. A status the client retries becomes the `SourceError` it stands for.
"""

from __future__ import annotations

import email.utils
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from refaudit.errors import RateLimited, SourceError, SourceUnavailable, UnexpectedResponse

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

M = TypeVar("M", dict[str, Any], list[Any])

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
KEPT_HEADERS = frozenset(
    {
        "content-type",
        "retry-after",
        "x-rate-limit-limit",
        "x-rate-limit-interval",
        "x-concurrency-limit",
        "x-api-pool",
        "location",
        # the key-gated sources' quota and error headers (never the key they echo)
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-reset",
        "x-els-status",
        "x-error-detail-header",
    }
)


_UNPARSED: Any = object()


class Malformed(UnexpectedResponse):
    """A body cut short or garbled in transit: retried like a 5xx, never cached."""


@dataclass
class Fetched:
    """A response (live or cached) reduced to what source modules need."""

    status: int
    text: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    from_cache: bool = False
    source: str = ""
    _json: Any = field(default=_UNPARSED, init=False, repr=False, compare=False)
    _xml: Any = field(default=_UNPARSED, init=False, repr=False, compare=False)

    @property
    def content(self) -> bytes:
        """The body's bytes, for a client that reads bodies as bytes (`binary=True`)."""
        return self.text.encode("latin-1")

    def json(self) -> Any:
        if self._json is _UNPARSED:
            try:
                self._json = json.loads(self.text)
            except json.JSONDecodeError as exc:
                raise UnexpectedResponse(
                    self.source, f"invalid JSON ({exc.msg} at {exc.pos})", url=self.url
                ) from exc
        return self._json

    def member(self, *path: str, kind: type[M], missing: str) -> M:
        """The JSON body's member at `path` (keys, outermost first), which must be a `kind`.

        Without it the answer is not one the source documents: UnexpectedResponse
        saying what is `missing`, never a KeyError deep in a parser.
        """
        value = self.json()
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if not isinstance(value, kind):
            raise UnexpectedResponse(self.source, missing, url=self.url)
        return value

    def records(self, *path: str, missing: str) -> list[dict[str, Any]]:
        """The objects of the JSON list at `path` (anything else in the list is left out);
        no list there: UnexpectedResponse saying what is `missing`, as for `member`."""
        listed = self.member(*path, kind=list, missing=missing)
        return [item for item in listed if isinstance(item, dict)]

    def xml(self) -> ET.Element:
        """The parsed XML body (parsed once: the client checks it before sources read it).

        defusedxml refuses entity expansion and external references, so a hostile
        upstream body cannot blow up memory or read local files.
        """
        if self._xml is _UNPARSED:
            # Imported here: most runs read JSON only, and the XML parser is not worth
            # loading before their first request.
            import xml.etree.ElementTree as ET

            from defusedxml import DefusedXmlException
            from defusedxml.ElementTree import fromstring as defused_fromstring

            try:
                self._xml = defused_fromstring(self.text)
            except (ET.ParseError, DefusedXmlException) as exc:
                raise UnexpectedResponse(self.source, f"invalid XML ({exc})", url=self.url) from exc
        return self._xml

    def malformed(self) -> str | None:
        """Why a body that its content type says is JSON or XML does not parse, if it does not."""
        kind = self.headers.get("content-type", "").lower()
        try:
            if "json" in kind:
                self.json()
            elif "xml" in kind:
                self.xml()
        except UnexpectedResponse as exc:
            return exc.reason
        return None


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date); None if unreadable."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None  # "soon" and other words: the caller backs off as usual
        seconds = parsed.timestamp() - time.time()
    if seconds != seconds or seconds == float("inf"):
        return None
    return max(0.0, seconds)


def retryable_status(source: str, fetched: Fetched) -> SourceError:
    if fetched.status == 429:
        return RateLimited(
            source,
            "rate limited (HTTP 429)",
            url=fetched.url,
            retry_after=retry_after_seconds(fetched.headers.get("retry-after")),
        )
    return SourceUnavailable(source, f"HTTP {fetched.status}", url=fetched.url)


def excerpt(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"
