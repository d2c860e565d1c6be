"""A request as `SourceClient` sends it: its options, its wire form and its cache key.

The mirror image of `response.py`. A request is written out once (`Outgoing`) and sent
the same way by every retry and hedge; the key its answer is cached under leaves the
secret parameters out, so a key or contact address never reaches the cache.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict
from urllib.parse import quote, urlencode

from refaudit.sources.redaction import SECRET_PARAMS

if TYPE_CHECKING:
    from refaudit.sources.response import Fetched

Params = Mapping[str, Any] | Sequence[tuple[str, Any]] | None
Check = Callable[["Fetched"], None]


class RequestOptions(TypedDict, total=False):
    """How `SourceClient.get` and `post` send a request and treat its answer."""

    headers: Mapping[str, str] | None
    #: the cache's lifetime class for the answer ("lookup", "search", …)
    ttl: str
    #: statuses that are answers (others are failures, some retried)
    accept: Sequence[int]
    #: raises on a body that is not what the caller asked for (never cached)
    check: Check | None
    cache: bool
    #: the rate-limit pool the request waits in
    pool: str
    #: characters the query keeps unescaped (the API reads them as they are), so that a
    #: list bounded by the URL's length (Crossref's `filter=doi:…,doi:…`) holds more
    literal: str


@dataclass(frozen=True)
class Outgoing:
    """A request as it goes on the wire: the same for each retry and hedge of it."""

    method: str
    url: str
    pairs: list[tuple[str, str]]
    json_body: Any
    headers: Mapping[str, str] | None
    literal: str = ""

    def target(self) -> tuple[str, tuple[tuple[str, str], ...] | None]:
        """The URL and the parameters httpx is given (which escapes all but letters,
        digits and `-._~`): the query is written out here when characters stay literal."""
        if not self.literal or not self.pairs:
            return self.url, tuple(self.pairs) or None
        return f"{self.url}?{urlencode(self.pairs, safe=self.literal, quote_via=quote)}", None


def query_pairs(params: Params) -> list[tuple[str, str]]:
    """The query's parameters as text, in order; a None value leaves its parameter out."""
    if params is None:
        return []
    items = params.items() if isinstance(params, Mapping) else params
    return [(str(k), str(v)) for k, v in items if v is not None]


def cache_key(method: str, url: str, pairs: list[tuple[str, str]], body: str | None) -> str:
    """What the answer is cached under: the same request in any parameter order, with no
    secret parameter in it."""
    public = sorted((k, v) for k, v in pairs if k not in SECRET_PARAMS)
    return f"{method} {url}?{urlencode(public)} {body or ''}"
