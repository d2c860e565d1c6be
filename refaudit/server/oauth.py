"""OAuth 2.1 resource-server mode: the HTTP transport accepts JWTs from one issuer.

Following the MCP authorization specification, the server publishes its Protected
Resource Metadata (RFC 9728) and answers a request without a valid token with 401
and a `WWW-Authenticate` header naming that metadata (the SDK's middleware does both,
given `AuthSettings` and a `TokenVerifier`). This module is the verifier: a JWT counts
only when its signature checks against the issuer's published keys with an asymmetric
algorithm (never `none`, never an HMAC secret), its issuer is the configured one, its
audience is this server's resource URL, and it has not expired. A missing scope is
answered 403 by the SDK, from the scopes the verifier reports.

The keys (JWKS) are fetched asynchronously with a bounded time and size, cached, and
fetched again for an unknown key id at most every `JWKS_MIN_REFRESH_S`, so a flood of
forged key ids cannot turn the server into a load on the issuer. PyJWT checks the
signatures and claims; its own `PyJWKClient` is not used because it blocks the event
loop and refetches the key set for every unknown key id.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import jwt
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings

from refaudit.config import ServeSettings
from refaudit.errors import ConfigError
from refaudit.server.http import is_loopback
from refaudit.sources.connection import tls_context

log = logging.getLogger(__name__)

#: Signature algorithms accepted: the asymmetric ones (a public JWKS cannot hold an HMAC secret).
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA")
#: How long fetched keys are used before they are fetched again.
JWKS_TTL_S = 300.0
#: Least time between two fetches triggered by a key id the cached set lacks.
JWKS_MIN_REFRESH_S = 30.0
#: Bounds on one fetch of the issuer's metadata or keys.
FETCH_TIMEOUT_S = 5.0
MAX_DOCUMENT_BYTES = 512 * 1024
#: Clock skew tolerated on `exp`, `nbf` and `iat`.
LEEWAY_S = 30


@dataclass(frozen=True)
class OAuthConfig:
    """The checked OAuth settings of one server: who issues tokens and for which resource."""

    issuer: str
    resource: str
    scopes: tuple[str, ...]
    jwks_url: str | None

    @classmethod
    def from_settings(cls, serve: ServeSettings, listening_on: str) -> OAuthConfig | None:
        """The configuration, or None without an issuer; `listening_on` is the default resource."""
        if not serve.oauth_issuer:
            return None
        resource = serve.oauth_resource or listening_on
        if not serve.oauth_resource and not is_loopback(urlsplit(resource).hostname or ""):
            raise ConfigError(
                f"OAuth needs the URL clients reach this server at ({resource} is only the bind)",
                hint="set --oauth-resource https://… (or `serve.oauth_resource`)",
            )
        for what, url in (
            ("issuer", serve.oauth_issuer),
            ("resource", resource),
            ("JWKS URL", serve.oauth_jwks_url),
        ):
            if url is not None:
                _require_https(what, url)
        return cls(
            issuer=serve.oauth_issuer,
            resource=resource,
            scopes=tuple(serve.oauth_scopes),
            jwks_url=serve.oauth_jwks_url,
        )

    def auth_settings(self) -> AuthSettings:
        """What the SDK needs to publish the metadata and require a token on /mcp."""
        return AuthSettings(
            issuer_url=self.issuer,  # type: ignore[arg-type]
            resource_server_url=self.resource,  # type: ignore[arg-type]
            required_scopes=list(self.scopes) or None,
            validate_token_resource=True,
        )


def _require_https(what: str, url: str) -> None:
    """Keys and tokens are trusted only over https (plain http to this machine only)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme == "https" and host:
        return
    if parts.scheme == "http" and is_loopback(host):
        return
    raise ConfigError(
        f"OAuth {what} {url!r} must be an https URL (plain http only to this machine)"
    )


class JwksCache:
    """The issuer's public keys, fetched on first use and kept for `JWKS_TTL_S`."""

    def __init__(
        self,
        config: OAuthConfig,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._config = config
        self._transport = transport
        self._clock = clock
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched_at: float | None = None
        self._jwks_url = config.jwks_url
        self._lock = anyio.Lock()

    async def key(self, kid: str | None) -> jwt.PyJWK | None:
        """The key with id `kid` (the only key when the token names none), or None."""
        async with self._lock:
            now = self._clock()
            stale = self._fetched_at is None or now - self._fetched_at > JWKS_TTL_S
            unknown = self._pick(kid) is None
            may_refresh = self._fetched_at is None or now - self._fetched_at > JWKS_MIN_REFRESH_S
            if stale or (unknown and may_refresh):
                await self._refresh(now)
            return self._pick(kid)

    def _pick(self, kid: str | None) -> jwt.PyJWK | None:
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    async def _refresh(self, now: float) -> None:
        """Fetch the keys; on failure keep the ones held (a token they sign still counts)."""
        try:
            async with httpx.AsyncClient(
                transport=self._transport,
                verify=tls_context(),
                timeout=FETCH_TIMEOUT_S,
                follow_redirects=False,
            ) as client:
                if self._jwks_url is None:
                    self._jwks_url = await self._discover(client)
                document = await _fetch_json(client, self._jwks_url)
            keys = jwt.PyJWKSet.from_dict(document).keys
        except (httpx.HTTPError, ValueError, jwt.PyJWTError, ConfigError) as exc:
            log.warning("cannot fetch the OAuth issuer's keys: %s", exc)
            self._fetched_at = now if self._keys else self._fetched_at
            return
        self._keys = {
            str(key.key_id or index): key
            for index, key in enumerate(keys)
            if key.public_key_use in (None, "sig")
        }
        self._fetched_at = now

    async def _discover(self, client: httpx.AsyncClient) -> str:
        """The `jwks_uri` of the issuer's metadata (RFC 8414, then OpenID Connect Discovery)."""
        issuer = self._config.issuer.rstrip("/")
        parts = urlsplit(issuer)
        origin = f"{parts.scheme}://{parts.netloc}"
        for url in (
            f"{origin}/.well-known/oauth-authorization-server{parts.path}",
            f"{issuer}/.well-known/openid-configuration",
        ):
            try:
                metadata = await _fetch_json(client, url)
            except (httpx.HTTPStatusError, ValueError):
                continue
            if str(metadata.get("issuer", "")).rstrip("/") != issuer:
                raise ConfigError(f"{url} names another issuer: {metadata.get('issuer')!r}")
            jwks_uri = metadata.get("jwks_uri")
            if isinstance(jwks_uri, str):
                _require_https("JWKS URL", jwks_uri)
                return jwks_uri
        raise ConfigError(f"the issuer {issuer} publishes no jwks_uri in its metadata")


async def _fetch_json(client: httpx.AsyncClient, url: str) -> dict[str, Any]:
    """A JSON object from `url`, read up to `MAX_DOCUMENT_BYTES`."""
    async with client.stream("GET", url, headers={"accept": "application/json"}) as response:
        response.raise_for_status()
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_DOCUMENT_BYTES:
                raise ValueError(f"{url}: more than {MAX_DOCUMENT_BYTES:,} bytes")
    document = json.loads(body)
    if not isinstance(document, dict):
        raise ValueError(f"{url}: not a JSON object")
    return document


class JwtVerifier:
    """The SDK's `TokenVerifier` for JWTs signed by the configured issuer."""

    def __init__(self, config: OAuthConfig, keys: JwksCache | None = None) -> None:
        self._config = config
        self._keys = keys or JwksCache(config)
        resource = config.resource.rstrip("/")
        self._audiences = [resource, resource + "/"]

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's subject, client and scopes, or None when it does not count here."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return None
        algorithm = header.get("alg")
        if algorithm not in ALGORITHMS:
            return None
        key = await self._keys.key(header.get("kid"))
        if key is None:
            return None
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=self._audiences,
                issuer=self._config.issuer,
                leeway=LEEWAY_S,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.PyJWTError as exc:
            log.info("refused a bearer token: %s", exc)
            return None
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id") or claims.get("azp") or claims["sub"]),
            scopes=_scopes(claims),
            expires_at=int(claims["exp"]),
            resource=self._config.resource,
            subject=str(claims["sub"]),
            claims={"iss": claims["iss"]},
        )


def _scopes(claims: dict[str, Any]) -> list[str]:
    """RFC 9068's space-separated `scope`, or the `scp` list some issuers send instead."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        return scope.split()
    listed = claims.get("scp")
    if isinstance(listed, list):
        return [str(item) for item in listed]
    return []
