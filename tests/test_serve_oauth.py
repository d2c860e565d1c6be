"""`refaudit serve --transport http` as an OAuth 2.1 resource server, against a throwaway issuer.

The issuer is a small HTTP server in the test process: its RSA key is generated here,
and it publishes RFC 8414 metadata and a JWKS. The refaudit server runs as a real
subprocess that finds the keys through the issuer's metadata; every token is sent over
real HTTP, and the good one drives the SDK's client end to end.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from typer.testing import CliRunner

from refaudit.cli import app
from tests.test_serve_transports import (
    INITIALIZE,
    MCP_HEADERS,
    STARTUP_TIMEOUT_S,
    served_over_http,
    server_environment,
    spawned_http_server,
)
from tests.test_server import WIDGETS, WIDGETS_DOI, upstreams

pytestmark = pytest.mark.anyio

SCOPE = "refaudit"
KID = "issuer-key-1"


class Issuer:
    """An authorization server that publishes metadata and one signing key, and mints tokens."""

    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.jwks_requests = 0
        self.url = ""

    def jwks(self) -> dict[str, Any]:
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [public | {"kid": KID, "use": "sig", "alg": "RS256"}]}

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "jwks_uri": f"{self.url}/jwks.json",
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "response_types_supported": ["code"],
        }

    def token(self, audience: str, *, key: Any = None, kid: str = KID, **claims: Any) -> str:
        now = int(time.time())
        payload = {
            "iss": self.url,
            "sub": "researcher-7",
            "aud": audience,
            "iat": now,
            "exp": now + 600,
            "scope": f"openid {SCOPE}",
            "client_id": "agent-a",
        } | claims
        return jwt.encode(payload, key or self.key, algorithm="RS256", headers={"kid": kid})


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    authority = Issuer()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/.well-known/oauth-authorization-server":
                body = authority.metadata()
            elif self.path == "/jwks.json":
                authority.jwks_requests += 1
                body = authority.jwks()
            else:
                self.send_error(404)
                return
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_args: Any) -> None:
            """Quiet: a test's output is its assertions."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    authority.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield authority
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def oauth_server(tmp_path_factory: pytest.TempPathFactory, issuer: Issuer) -> Iterator[str]:
    """A server whose tokens come from `issuer`, with Crossref knowing the widgets paper."""
    tmp_path = tmp_path_factory.mktemp("oauth-server")
    with served_over_http(upstreams(WIDGETS)) as upstream:
        environment = server_environment(tmp_path, upstream) | {
            "REFAUDIT_OAUTH_ISSUER": issuer.url,
            "REFAUDIT_OAUTH_SCOPES": SCOPE,
            "REFAUDIT_CLIENT_REFERENCES_PER_MINUTE": "3",
        }
        with spawned_http_server(tmp_path, environment) as url:
            yield url


def _segment(value: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def _handmade(header: dict[str, Any], claims: dict[str, Any], secret: bytes | None) -> str:
    """A JWT PyJWT would refuse to write: unsigned, or HMAC-signed with a public key."""
    signing_input = f"{_segment(header)}.{_segment(claims)}"
    if secret is None:
        return signing_input + "."
    digest = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def refused_tokens(issuer: Issuer, resource: str) -> dict[str, str]:
    """Each way a token can be wrong, by name; every other claim is a good token's."""
    now = int(time.time())
    claims = jwt.decode(issuer.token(resource), options={"verify_signature": False})
    public_pem = issuer.key.public_key().public_bytes(
        Encoding.PEM, PublicFormat.SubjectPublicKeyInfo
    )
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    no_expiry = {name: value for name, value in claims.items() if name != "exp"}
    return {
        "expired": issuer.token(resource, iat=now - 4000, exp=now - 3600),
        "wrong audience": issuer.token("refaudit"),
        "another resource": issuer.token("http://127.0.0.1:1/mcp"),
        "wrong issuer": issuer.token(resource, iss="http://127.0.0.1:9/evil"),
        "bad signature": issuer.token(resource, key=stranger),
        "alg none": _handmade({"alg": "none", "typ": "JWT", "kid": KID}, claims, None),
        "hmac with the public key": _handmade(
            {"alg": "HS256", "typ": "JWT", "kid": KID}, claims, public_pem
        ),
        "no expiry": jwt.encode(no_expiry, issuer.key, algorithm="RS256", headers={"kid": KID}),
        "unknown key id": issuer.token(resource, kid="forged"),
        "not a jwt": "s3cret-token-for-tests",
    }


async def _initialize(url: str, token: str | None) -> httpx.Response:
    headers = dict(MCP_HEADERS)
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.post(url, json=INITIALIZE, headers=headers)


async def test_the_server_publishes_its_protected_resource_metadata(
    oauth_server: str, issuer: Issuer
) -> None:
    origin = oauth_server.removesuffix("/mcp")
    async with httpx.AsyncClient(timeout=10) as http:
        metadata = (await http.get(f"{origin}/.well-known/oauth-protected-resource/mcp")).json()
    missing = await _initialize(oauth_server, None)

    assert metadata["resource"] == oauth_server
    assert metadata["authorization_servers"] == [issuer.url]
    assert metadata["scopes_supported"] == [SCOPE]
    assert missing.status_code == 401
    challenge = missing.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp"' in challenge


async def test_every_kind_of_wrong_token_is_refused(oauth_server: str, issuer: Issuer) -> None:
    statuses = {
        name: (await _initialize(oauth_server, token)).status_code
        for name, token in refused_tokens(issuer, oauth_server).items()
    }
    without_scope = await _initialize(oauth_server, issuer.token(oauth_server, scope="openid"))

    assert statuses == dict.fromkeys(statuses, 401)
    assert without_scope.status_code == 403
    assert 'error="insufficient_scope"' in without_scope.headers["www-authenticate"]


async def test_forged_key_ids_do_not_make_the_server_hammer_the_issuer(
    oauth_server: str, issuer: Issuer
) -> None:
    await _initialize(oauth_server, issuer.token(oauth_server))
    fetched = issuer.jwks_requests
    for number in range(8):
        response = await _initialize(
            oauth_server, issuer.token(oauth_server, kid=f"forged-{number}")
        )
        assert response.status_code == 401

    assert issuer.jwks_requests - fetched <= 1


async def test_a_good_token_works_end_to_end_with_the_sdk_client(
    oauth_server: str, issuer: Issuer
) -> None:
    http_client = create_mcp_http_client(
        headers={"Authorization": f"Bearer {issuer.token(oauth_server)}"}
    )
    with anyio.fail_after(STARTUP_TIMEOUT_S):
        async with (
            http_client,
            Client(streamable_http_client(oauth_server, http_client=http_client)) as client,
        ):
            result = await client.call_tool("verify_reference", {"doi": WIDGETS_DOI})

    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert result.structured_content["verdict"] == "verified"
    assert result.structured_content["matched"]["year"] == 2019


async def test_each_token_subject_has_a_fair_share_of_its_own(
    oauth_server: str, issuer: Issuer
) -> None:
    async def verify(subject: str, count: int) -> Any:
        token = issuer.token(oauth_server, sub=subject)
        http_client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with (
            http_client,
            Client(streamable_http_client(oauth_server, http_client=http_client)) as client,
        ):
            return await client.call_tool(
                "verify_references", {"references": [{"doi": WIDGETS_DOI}] * count}
            )

    with anyio.fail_after(STARTUP_TIMEOUT_S):
        spent = await verify("researcher-1", 3)
        refused = await verify("researcher-1", 1)
        neighbour = await verify("researcher-2", 3)

    assert not spent.is_error and not neighbour.is_error
    assert refused.is_error
    assert "has checked 3 references in the last minute" in refused.content[0].text  # type: ignore[union-attr]


def test_serve_refuses_a_token_and_an_issuer_together() -> None:
    result = CliRunner().invoke(
        app,
        ["serve", "-t", "http", "--token", "t", "--oauth-issuer", "https://auth.example.org"],
    )

    assert result.exit_code == 2
    assert "not both" in result.output


def test_serve_refuses_an_issuer_over_plain_http_elsewhere(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["serve", "-t", "http", "--port", "0", "--oauth-issuer", "http://auth.example.org"],
        env={"REFAUDIT_CACHE_DIR": str(tmp_path)},
    )

    assert result.exit_code == 2
    assert "must be an https URL" in result.output


def test_serve_beyond_loopback_needs_the_public_resource_url(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["serve", "-t", "http", "--host", "0.0.0.0", "--port", "0"]
        + ["--oauth-issuer", "https://auth.example.org"],
        env={"REFAUDIT_CACHE_DIR": str(tmp_path)},
    )

    assert result.exit_code == 2
    assert "set --oauth-resource" in result.output


async def test_fetching_the_issuers_keys_again_does_not_read_the_ca_bundle_again(
    issuer: Issuer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each refresh opens a client; the CA bundle (~60 ms of CPU) is read once a process."""
    import ssl

    from refaudit.server.oauth import JWKS_TTL_S, JwksCache, OAuthConfig

    built: list[object] = []
    create = ssl.create_default_context

    def counted(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        built.append(kwargs)
        return create(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", counted)
    now = [0.0]
    config = OAuthConfig(issuer.url, "http://127.0.0.1:1/mcp", (SCOPE,), None)
    keys = JwksCache(config, clock=lambda: now[0])
    fetched = issuer.jwks_requests
    for _ in range(3):
        assert await keys.key(KID) is not None
        now[0] += JWKS_TTL_S + 1

    assert issuer.jwks_requests - fetched == 3 and len(built) <= 1
