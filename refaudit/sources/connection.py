"""How refaudit connects out: one TLS context, and the User-Agent it names itself by.

Every HTTP client refaudit opens (a source's, the URL check's, the Zotero reader's, the
OAuth key fetch) trusts the certificates of one TLS context, read once per CA setting
instead of once per client.
"""

from __future__ import annotations

import functools
import os
import ssl
import threading
from typing import TYPE_CHECKING

import certifi

from refaudit.version import installed_version

if TYPE_CHECKING:
    from refaudit.config import Settings

_TLS_LOCK = threading.Lock()


def tls_context() -> ssl.SSLContext:
    """The process's TLS context for the CA setting in force (one build per setting; a
    caller arriving while another thread builds it waits for that build)."""
    with _TLS_LOCK:
        return _tls_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


def read_ca_bundle_early() -> None:
    """Build `tls_context` in a worker thread while the run reads its inputs.

    OpenSSL reads the CA bundle without holding the GIL, on another core: the first
    source client then finds the context built instead of waiting ~20 ms for it.
    """
    threading.Thread(target=tls_context, name="refaudit-tls", daemon=True).start()


@functools.cache
def _tls_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    """One TLS context for every client of the process, built as httpx builds its own.

    Loading the CA bundle takes ~60 ms: once per source client it put most of half a
    second before a run's first request. SSL_CERT_FILE, then SSL_CERT_DIR, replaces
    certifi's bundle as in httpx; they are the cache's key, so a changed one is read.
    """
    if cert_file:
        return ssl.create_default_context(cafile=cert_file)
    if cert_dir:
        return ssl.create_default_context(capath=cert_dir)
    return ssl.create_default_context(cafile=certifi.where())


def user_agent(settings: Settings) -> str:
    """Crossref and OpenAlex route callers with a contact address to their polite pools."""
    contact = f"; mailto:{settings.mailto}" if settings.mailto else ""
    return f"refaudit/{installed_version()} (https://github.com/refaudit/refaudit{contact})"
