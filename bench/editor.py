"""The language server as an editor meets it: time from opening a .bib file to its
diagnostics, cold (empty cache) and on a re-open (a fresh server, the cache kept).

Starts ../shared/scholarsim (realistic limits by default), runs `refaudit lsp` as a
subprocess driven by pygls's language client over stdio, opens the file and waits for
its diagnostics. Then a new server opens the same file again: a re-open must send no
request and answer in about the time Python takes to start.

Each open's requests are those that reached the simulator while it ran (arrival times
in its request log), counted once every request has been answered: a slow request of
the cold open (a hedged one the server gave up on) that the simulator answers during
the re-open belongs to the cold open.

    python bench/editor.py ../shared/bench/public/retractions.bib [--config realistic]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls import uris
from pygls.lsp.client import LanguageClient
from simulator import simulator_env, start_simulator

ROOT = Path(__file__).resolve().parents[1]
#: seconds without a new answer in the log after which every request has been answered
#: (realistic.json's slowest injected delay is 8 s)
QUIET_S = 15.0


def arrivals(log: Path) -> list[float]:
    """When each logged request reached the simulator, once it has answered them all: the
    log stops growing for `QUIET_S` (longer than the slowest injected latency)."""
    lines, quiet_since = -1, time.monotonic()
    while time.monotonic() - quiet_since < QUIET_S:
        time.sleep(0.5)
        now = len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0
        if now != lines:
            lines, quiet_since = now, time.monotonic()
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    return [float(json.loads(line)["t"]) for line in text.splitlines() if line.strip()]


async def open_once(path: Path, env: dict[str, str], timeout: float) -> tuple[float, int]:
    """(seconds from didOpen to diagnostics, diagnostics received) with a fresh server."""
    client = LanguageClient("bench", "0")
    received = asyncio.Event()
    count = 0

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: types.PublishDiagnosticsParams) -> None:
        nonlocal count
        if params.uri == uris.from_fs_path(str(path)):
            count = len(params.diagnostics)
            received.set()

    await client.start_io(sys.executable, "-m", "refaudit", "lsp", env=env)
    await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities()))
    client.initialized(types.InitializedParams())
    started = time.perf_counter()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(
                uri=uris.from_fs_path(str(path)) or "",
                language_id="bibtex",
                version=1,
                text=path.read_text(encoding="utf-8"),
            )
        )
    )
    await asyncio.wait_for(received.wait(), timeout)
    elapsed = time.perf_counter() - started
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return elapsed, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bib", type=Path)
    parser.add_argument("--config", default="realistic")
    parser.add_argument("--timeout", type=float, default=900)
    options = parser.parse_args()
    path = options.bib.resolve()
    entries = path.read_text(encoding="utf-8").count("\n@")
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "requests.jsonl"
        process, url = start_simulator(options.config, log)
        try:
            env = {
                **{k: v for k, v in os.environ.items() if not k.startswith("REFAUDIT_")},
                **simulator_env(url),
                "REFAUDIT_CACHE_DIR": folder,
                "REFAUDIT_DATA_DIR": folder,
                "REFAUDIT_MAILTO": "bench@refaudit.invalid",
                "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            }
            opens = []
            for label in ("cold (empty cache)", "re-open (new server, cache kept)"):
                began = time.time()
                seconds, count = asyncio.run(open_once(path, env, options.timeout))
                opens.append((label, began, count, seconds))
            arrived = arrivals(log)
        finally:
            process.terminate()
            process.wait(timeout=10)
    print(f"{path.name}: {entries} entries, simulator config {options.config}")
    print("| open | diagnostics | requests | seconds to diagnostics |")
    print("| --- | --- | --- | --- |")
    ends = [began for _, began, _, _ in opens[1:]] + [float("inf")]
    for (label, began, count, seconds), end in zip(opens, ends, strict=True):
        requests = sum(began <= t < end for t in arrived)
        print(f"| {label} | {count} | {requests} | {seconds:.2f} |")


if __name__ == "__main__":
    main()
