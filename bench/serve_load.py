"""The MCP server under load: many agents' sessions at once against realistic limits.

Starts ../shared/scholarsim (`realistic` limits by default) and `refaudit serve
--transport http` pointed at it, then drives the server with N concurrent MCP
client sessions (the SDK's streamable HTTP client), each making its calls one
after the other: `verify_reference` on citations of the public sets, and in
every session `check_retractions` and `search_references`, and in every fifth a
`verify_bibliography` of a 50-entry file under the server's --root (the public
`gen.bib`, cut in fifties). The server runs as it would for an institution: in
OAuth mode, each session a researcher with a token of its own from a throwaway
issuer (so each has its own fair share). Reports failed calls, latency percentiles,
throughput, each session's median latency against the overall median
(starvation), the simulator's 429s, wall time against the floor of the requests
the server sent, and the server's peak RSS. Last, it sends SIGTERM while a
second wave of calls is in flight: each must complete or fail cleanly and the
server must exit 0 promptly.

    python bench/serve_load.py                        # 50 sessions x 20 calls, realistic
    python bench/serve_load.py --sessions 5 --calls 4 --config no-limits
    python bench/serve_load.py --log requests.jsonl   # keep scholarsim's request log
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from simulator import SHARED, simulator_env, start_simulator

PUBLIC = SHARED / "bench" / "public"
#: Every fifth session audits one bibliography of this many entries.
BIBLIOGRAPHY_ENTRIES = 50
STARTUP_TIMEOUT_S = 60
#: A SIGTERM'd server must be gone within this many seconds.
SHUTDOWN_BOUND_S = 30


@dataclass
class Call:
    session: int
    tool: str
    arguments: dict[str, Any]
    seconds: float = 0.0
    error: str | None = None
    #: the server's answer came back (an error result counts: it is a clean answer)
    answered: bool = False


@dataclass
class Workload:
    citations: list[dict[str, Any]]
    dois: list[str]
    queries: list[str]
    bibliographies: list[str]
    calls: list[list[Call]] = field(default_factory=list)


def _entries(text: str) -> list[str]:
    return [chunk for chunk in re.split(r"(?m)^(?=@)", text) if chunk.startswith("@")]


def prepare(root: Path, sessions: int, calls: int) -> Workload:
    """Citations, DOIs, queries and 50-entry files drawn from the public sets."""
    from refaudit.parsing import parse_bibtex

    references = parse_bibtex((PUBLIC / "hallmark-dev_public.bib").read_text()).references
    citations = []
    for reference in references:
        if not reference.title:
            continue
        citation: dict[str, Any] = {"title": reference.title}
        if reference.authors:
            citation["authors"] = [f"{p.family}, {p.given}".strip(", ") for p in reference.authors]
        if reference.year:
            citation["year"] = reference.year
        if reference.doi:
            citation["doi"] = reference.doi
        citations.append(citation)
    retracted = parse_bibtex((PUBLIC / "retractions.bib").read_text()).references
    dois = [reference.doi for reference in retracted if reference.doi]
    scale = parse_bibtex((PUBLIC / "scale-1000.bib").read_text()).references
    queries = [reference.title for reference in scale if reference.title]
    entries = _entries((PUBLIC / "gen.bib").read_text())
    bibliographies = []
    for number in range(0, len(entries) - BIBLIOGRAPHY_ENTRIES + 1, BIBLIOGRAPHY_ENTRIES):
        name = f"part{number // BIBLIOGRAPHY_ENTRIES:02d}.bib"
        (root / name).write_text("".join(entries[number : number + BIBLIOGRAPHY_ENTRIES]))
        bibliographies.append(name)
    workload = Workload(citations, dois, queries, bibliographies)
    counters = {"citation": 0, "doi": 0, "query": 0, "bib": 0}

    def take(kind: str, pool: list[Any]) -> Any:
        item = pool[counters[kind] % len(pool)]
        counters[kind] += 1
        return item

    for session in range(sessions):
        plan = []
        for index in range(calls):
            if index == 0 and session % 5 == 0:
                plan.append(
                    Call(session, "verify_bibliography", {"path": take("bib", bibliographies)})
                )
            elif index % 5 == 1:
                plan.append(Call(session, "check_retractions", {"dois": [take("doi", dois)]}))
            elif index % 5 == 3:
                plan.append(
                    Call(
                        session, "search_references", {"query": take("query", queries), "limit": 5}
                    )
                )
            else:
                plan.append(Call(session, "verify_reference", take("citation", citations)))
        workload.calls.append(plan)
    return workload


class Issuer:
    """A throwaway OAuth authorization server: one RSA key, its JWKS, tokens for each session."""

    def __init__(self) -> None:
        from cryptography.hazmat.primitives.asymmetric import rsa

        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        numbers = self.key.public_key().public_numbers()

        def b64(value: int) -> str:
            raw = value.to_bytes((value.bit_length() + 7) // 8, "big")
            return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

        jwk = {"kty": "RSA", "kid": "k1", "use": "sig", "n": b64(numbers.n), "e": b64(numbers.e)}
        body = json.dumps({"keys": [jwk]}).encode()

        class Keys(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: Any) -> None:
                """Quiet."""

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Keys)
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"
        threading.Thread(target=self._http.serve_forever, daemon=True).start()

    def token(self, audience: str, subject: str) -> str:
        import jwt

        now = int(time.time())
        claims = {"iss": self.url, "aud": audience, "sub": subject, "iat": now}
        claims |= {"exp": now + 6 * 3600, "scope": "refaudit"}
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": "k1"})

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()


class Server:
    """`refaudit serve --transport http` as a child process, with its peak RSS."""

    def __init__(self, url: str, root: Path, cache: Path, issuer: Issuer) -> None:
        environment = {k: v for k, v in os.environ.items() if not k.startswith("REFAUDIT_")}
        environment |= simulator_env(url) | {
            "REFAUDIT_CACHE_DIR": str(cache),
            "REFAUDIT_DATA_DIR": str(cache),
            "REFAUDIT_MAILTO": "bench@refaudit.invalid",
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "refaudit", "serve", "-t", "http", "--port", "0"]
            + ["--root", str(root), "--oauth-issuer", issuer.url, "--oauth-scope", "refaudit"]
            + ["--oauth-jwks-url", f"{issuer.url}/jwks.json"],
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.url = self._wait_for_url()

    def _wait_for_url(self) -> str:
        found: list[str] = []
        ready = threading.Event()

        def read() -> None:
            assert self.process.stderr is not None
            for line in self.process.stderr:
                match = re.search(r"listening on (http://\S+)", line)
                if match and not found:
                    found.append(match.group(1))
                    ready.set()
                elif not match:
                    print(f"  server: {line.rstrip()}", file=sys.stderr)
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(STARTUP_TIMEOUT_S) or not found:
            self.process.kill()
            raise SystemExit("refaudit serve did not start")
        return found[0]

    def peak_rss_mb(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        kilobytes = int(re.search(r"VmHWM:\s+(\d+)", status).group(1))  # type: ignore[union-attr]
        return kilobytes / 1024

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def _client(url: str, token: str) -> Any:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=3600)
    )
    return http, Client(streamable_http_client(url, http_client=http))


async def run_session(
    url: str, token: str, plan: list[Call], ready: asyncio.Event | None = None
) -> None:
    """The session's calls one after the other; any failure is kept on its call.

    `ready` is set once the session is open, just before its first call is sent.
    """
    pending = iter(plan)
    call: Call | None = None
    started = time.monotonic()
    try:
        http, client = _client(url, token)
        async with http, client:
            # As agents do; the client also checks each result against the listed schemas.
            await client.list_tools()
            if ready is not None:
                ready.set()
            for call in pending:
                started = time.monotonic()
                result = await client.call_tool(call.tool, call.arguments)
                call.seconds = time.monotonic() - started
                call.answered = True
                if result.is_error:
                    call.error = str(result.content[0].text)[:200]  # type: ignore[union-attr]
    except BaseException as exc:  # noqa: BLE001 - every failure is counted and shown
        for unfinished in ([call] if call and not call.answered else []) + list(pending):
            unfinished.error = _reason(exc)
            unfinished.seconds = time.monotonic() - started
        if isinstance(exc, asyncio.CancelledError):
            raise


def _reason(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"[:200]


def sim_stats(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{url}/_sim/stats", timeout=10) as response:
        return json.load(response)


async def server_requests(url: str, token: str) -> dict[str, int]:
    """Requests the server sent, per source, from its `refaudit://sources` resource."""
    http, client = _client(url, token)
    async with http, client:
        resource = await client.read_resource("refaudit://sources")
    sources = json.loads(resource.contents[0].text)  # type: ignore[union-attr]
    return {
        item["name"]: int(item.get("health", {}).get("requests") or 0)
        for item in sources["sources"]
        if item.get("health", {}).get("requests")
    }


def slowest_rates() -> dict[str, float]:
    """Each source's slowest published pace (what `bench/runs.py`'s floor divides by)."""
    from refaudit.config import load_settings
    from refaudit.sources import load, rate_limits_for, registry

    settings = load_settings()
    return {
        name: min(limit.rps for limit in rate_limits_for(load(name)[1], settings).values())
        for name in registry.SOURCE_NAMES
    }


def floor_s(requests: dict[str, int], rates: dict[str, float]) -> float:
    """What the published limits need for these requests (sources in parallel)."""
    return max(
        (count / rates[name] for name, count in requests.items() if name in rates), default=0.0
    )


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def shutdown_wave(
    server: Server, issuer: Issuer, workload: Workload, sessions: int
) -> dict[str, Any]:
    """Calls in flight when SIGTERM comes: each completes or fails cleanly; exit 0, promptly."""
    plans = [[Call(n, "verify_reference", workload.citations[-(n + 1)])] for n in range(sessions)]
    opened = [asyncio.Event() for _ in plans]
    tasks = [
        asyncio.create_task(
            run_session(server.url, issuer.token(server.url, f"late-{n}"), plan, event)
        )
        for n, (plan, event) in enumerate(zip(plans, opened, strict=True))
    ]
    await asyncio.wait_for(asyncio.gather(*(event.wait() for event in opened)), STARTUP_TIMEOUT_S)
    await asyncio.sleep(0.5)
    signalled = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    done, pending = await asyncio.wait(tasks, timeout=SHUTDOWN_BOUND_S)
    for task in pending:
        task.cancel()
    try:
        code = await asyncio.to_thread(server.process.wait, SHUTDOWN_BOUND_S)
    except subprocess.TimeoutExpired:
        code = None
    calls = [plan[0] for plan in plans]
    return {
        "in flight": len(calls),
        "completed": sum(call.answered and call.error is None for call in calls),
        "clean errors": sum(call.error is not None for call in calls),
        "hung": len(pending),
        "exit code": code,
        "exit after (s)": round(time.monotonic() - signalled, 1),
        "errors seen": sorted({call.error.split(":")[0] for call in calls if call.error}),
    }


async def drive(args: argparse.Namespace) -> int:
    simulator, sim_url = start_simulator(args.config, args.log)
    with tempfile.TemporaryDirectory(prefix="refaudit-serve-load-") as folder:
        root, cache = Path(folder) / "papers", Path(folder) / "cache"
        root.mkdir()
        os.environ.update(simulator_env(sim_url), REFAUDIT_MAILTO="bench@refaudit.invalid")
        workload = prepare(root, args.sessions, args.calls)
        rates = slowest_rates()
        issuer = Issuer()
        server = Server(sim_url, root, cache, issuer)
        try:
            print(f"{args.sessions} sessions x {args.calls} calls, scholarsim {args.config}")
            tokens = [issuer.token(server.url, f"researcher-{n}") for n in range(args.sessions)]
            started = time.monotonic()
            await asyncio.gather(
                *(
                    run_session(server.url, token, plan)
                    for token, plan in zip(tokens, workload.calls, strict=True)
                )
            )
            wall = time.monotonic() - started
            requests = await server_requests(server.url, issuer.token(server.url, "bench"))
            stats = sim_stats(sim_url)
            rss = server.peak_rss_mb()
            shutdown = await shutdown_wave(server, issuer, workload, args.shutdown_sessions)
        finally:
            server.stop()
            issuer.close()
            simulator.terminate()
            simulator.wait(timeout=10)
    calls = [call for plan in workload.calls for call in plan]
    failed = [call for call in calls if call.error]
    latencies = [call.seconds for call in calls]
    overall = statistics.median(latencies)
    medians = [statistics.median(call.seconds for call in plan) for plan in workload.calls]
    floor = floor_s(requests, rates)
    too_many = sum(int(source.get("429", 0)) for source in stats.get("sources", {}).values())
    print(f"calls: {len(calls)}, failed: {len(failed)}")
    for call in failed[:10]:
        print(f"  session {call.session} {call.tool}: {call.error}")
    per_tool = {}
    for tool in sorted({call.tool for call in calls}):
        times = [call.seconds for call in calls if call.tool == tool]
        per_tool[tool] = f"{len(times)} calls, p50 {statistics.median(times):.1f} s"
    for tool, line in per_tool.items():
        print(f"  {tool}: {line}")
    print(
        f"latency p50 {overall:.1f} s, p95 {percentile(latencies, 0.95):.1f} s, "
        f"p99 {percentile(latencies, 0.99):.1f} s; throughput {len(calls) / wall:.2f} calls/s"
    )
    print(
        f"session medians: slowest {max(medians):.1f} s = {max(medians) / overall:.2f}x the "
        f"overall median (fastest {min(medians) / overall:.2f}x)"
    )
    slowest = workload.calls[medians.index(max(medians))]
    print("  its calls: " + ", ".join(f"{c.tool.split('_')[0]} {c.seconds:.1f}" for c in slowest))
    sent = sum(requests.values())
    print(
        f"upstream: {sent} requests ({', '.join(f'{k} {v}' for k, v in sorted(requests.items()))})"
    )
    refused = {name: int(source.get("429", 0)) for name, source in stats.get("sources", {}).items()}
    print(
        f"upstream 429s: {too_many}"
        + "".join(f", {name} {count}" for name, count in sorted(refused.items()) if count)
    )
    print(
        f"wall {wall:.1f} s, floor {floor:.1f} s, wall/floor {wall / floor:.2f}x"
        if floor
        else f"wall {wall:.1f} s"
    )
    print(f"server peak RSS: {rss:.0f} MB")
    print("SIGTERM with calls in flight: " + ", ".join(f"{k} {v}" for k, v in shutdown.items()))
    ok = (
        not failed
        and max(medians) <= 3 * overall
        and too_many == 0
        and shutdown["hung"] == 0
        and shutdown["exit code"] == 0
    )
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--calls", type=int, default=20, help="calls per session")
    parser.add_argument("--config", default="realistic", help="scholarsim config name or file")
    parser.add_argument("--log", type=Path, help="append scholarsim's request log to this file")
    parser.add_argument(
        "--shutdown-sessions", type=int, default=10, help="calls in flight at SIGTERM"
    )
    return asyncio.run(drive(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
