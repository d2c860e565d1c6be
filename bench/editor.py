"""The language server as an editor meets it: time from opening a .bib file to its
diagnostics, cold (empty cache) and on a re-open (a fresh server, the cache kept).

Starts ../shared/scholarsim (realistic limits by default), runs `refaudit lsp` as a
subprocess driven by pygls's language client over stdio, opens the file, waits for
its diagnostics, and reads the simulator's request count. Then a new server opens
the same file again: a re-open must send no request and answer in about the time
Python takes to start.

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
import urllib.request
from pathlib import Path

from lsprotocol import types
from pygls import uris
from pygls.lsp.client import LanguageClient
from simulator import simulator_env, start_simulator

ROOT = Path(__file__).resolve().parents[1]


def sent(url: str) -> int:
    with urllib.request.urlopen(f"{url}/_sim/stats") as answer:
        stats = json.load(answer)
    return int(stats.get("total", stats.get("totals", {})).get("requests", 0))


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
    process, url = start_simulator(options.config)
    try:
        with tempfile.TemporaryDirectory() as folder:
            env = {
                **{k: v for k, v in os.environ.items() if not k.startswith("REFAUDIT_")},
                **simulator_env(url),
                "REFAUDIT_CACHE_DIR": folder,
                "REFAUDIT_DATA_DIR": folder,
                "REFAUDIT_MAILTO": "bench@refaudit.invalid",
                "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            }
            print(f"{path.name}: {entries} entries, simulator config {options.config}")
            print("| open | diagnostics | requests | seconds to diagnostics |")
            print("| --- | --- | --- | --- |")
            for label in ("cold (empty cache)", "re-open (new server, cache kept)"):
                before = sent(url)
                seconds, count = asyncio.run(open_once(path, env, options.timeout))
                print(f"| {label} | {count} | {sent(url) - before} | {seconds:.2f} |")
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    main()
