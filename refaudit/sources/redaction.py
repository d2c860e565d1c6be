"""Keeping API keys and contact addresses out of logs, caches and other hosts.

Keys travel as query parameters for some APIs; httpx logs every request URL, and
some APIs echo the URL in their answers, so both are scrubbed before anything
is written down. Cache keys leave the secret parameters out (`SECRET_PARAMS`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

SECRET_PARAMS = frozenset({"api_key", "apikey", "insttoken", "mailto", "email", "tool", "key"})
_SECRET_VALUE = re.compile(r"(?<=[?&])(" + "|".join(sorted(SECRET_PARAMS)) + r")=[^&\s\"]*")


def redact(text: str) -> str:
    """Mask API keys and contact addresses in a URL (or a log line that contains one)."""
    return _SECRET_VALUE.sub(r"\1=***", text)


def without_secrets(text: str, secrets: Iterable[str]) -> str:
    """`text` with every API key (as written, or URL-encoded) replaced by `***`.

    Some APIs echo the request URL in their answers (OpenAlex's `meta`), so a key
    sent as a parameter would otherwise be stored in the cache in clear.
    """
    for secret in secrets:
        if len(secret) >= 4:
            for form in {secret, quote(secret, safe=""), quote_plus(secret)}:
                text = text.replace(form, "***")
    return text


class _RedactSecrets(logging.Filter):
    """httpx logs every request URL at INFO; keys sent as query parameters must not show."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        return True


logging.getLogger("httpx").addFilter(_RedactSecrets())
