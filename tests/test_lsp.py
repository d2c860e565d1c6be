"""`refaudit lsp` end to end: a real language client (pygls's) drives the server over stdio.

The server is a subprocess, so the fake Crossref and OpenAlex of `tests.fakes` are
served over HTTP and the server is pointed at them with `REFAUDIT_<SOURCE>_URL`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from lsprotocol import types
from pygls import uris
from pygls.lsp.client import LanguageClient

from tests.test_serve_transports import served_over_http, server_environment
from tests.test_server import WIDGETS, upstreams

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parent.parent
WAIT_S = 15  # a loaded CI machine needs seconds to start Python and import the pipeline

REFS = """% The paper's references.
@article{lovelace2017,
  title   = {Deep learning for widget inspection},
  author  = {Lovelace, Ada and Turing, Alan},
  journal = {Journal of Widget Science},
  year    = {2017},
  doi     = {10.1234/widgets.2019},
}

@article{smith2021quantum,
  title   = {Quantum Gravity Priors for Large Language Models},
  author  = {Smith, John},
  journal = {Journal of Imaginary Results},
  year    = {2021},
}
"""
PAPER = r"""\documentclass{article}
\begin{document}
Widgets~\cite{lovelace2017}, gravity~\citep[p.~3]{nobody2020, smith2021quantum}.
\bibliography{refs}
\end{document}
"""


class Session:
    """What the client received from the server, with a way to wait for it."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.diagnostics: dict[str, list[types.Diagnostic]] = {}
        self.history: list[tuple[str, list[types.Diagnostic]]] = []
        self.messages: list[types.ShowMessageParams] = []
        self.logs: list[str] = []
        self.progress: list[Any] = []
        self.changed = asyncio.Event()

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            self.diagnostics[params.uri] = params.diagnostics
            self.history.append((params.uri, params.diagnostics))
            self.changed.set()

        @client.feature(types.WINDOW_SHOW_MESSAGE)
        def shown(params: types.ShowMessageParams) -> None:
            self.messages.append(params)
            self.changed.set()

        @client.feature(types.WINDOW_LOG_MESSAGE)
        def logged(params: types.LogMessageParams) -> None:
            self.logs.append(params.message)

        @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create(_params: types.WorkDoneProgressCreateParams) -> None:
            return None

        @client.feature(types.PROGRESS)
        def progress(params: types.ProgressParams) -> None:
            self.progress.append(params.value)

    async def until(self, done: Any, what: str) -> None:
        """Wait until `done()` holds, failing with `what` after WAIT_S."""
        deadline = time.monotonic() + WAIT_S
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {what}: {self.history, self.messages}")
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), min(left, 1.0))

    def open(self, path: Path) -> None:
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(
                    uri=uri(path),
                    language_id="bibtex" if path.suffix == ".bib" else "latex",
                    version=1,
                    text=path.read_text(encoding="utf-8"),
                )
            )
        )

    def save(self, path: Path) -> None:
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri(path)))
        )


def uri(path: Path) -> str:
    return uris.from_fs_path(str(path.resolve())) or ""


@asynccontextmanager
async def session(
    tmp_path: Path, environment: dict[str, str], *args: str, options: Any = None
) -> AsyncIterator[Session]:
    client = LanguageClient("refaudit-tests", "0")
    listening = Session(client)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("REFAUDIT_")},
        **environment,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    await client.start_io(sys.executable, "-m", "refaudit", "lsp", *args, env=env, cwd=tmp_path)
    try:
        capabilities = types.ClientCapabilities(
            window=types.WindowClientCapabilities(work_done_progress=True)
        )
        await asyncio.wait_for(
            client.initialize_async(
                types.InitializeParams(
                    capabilities=capabilities,
                    root_uri=uri(tmp_path),
                    initialization_options=options,
                )
            ),
            WAIT_S,
        )
        client.initialized(types.InitializedParams())
        yield listening
        await asyncio.wait_for(client.shutdown_async(None), WAIT_S)
        client.exit(None)
    finally:
        server = client._server  # the subprocess: a failed test must not leave it running
        if server is not None and server.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(server.wait(), 5)
            if server.returncode is None:
                server.kill()
        await client.stop()


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    (tmp_path / "refs.bib").write_text(REFS, encoding="utf-8")
    (tmp_path / "paper.tex").write_text(PAPER, encoding="utf-8")
    return tmp_path


@pytest.fixture
def upstream() -> Iterator[str]:
    with served_over_http(upstreams(WIDGETS)) as url:
        yield url


def codes(diagnostics: list[types.Diagnostic]) -> set[str]:
    return {str(d.code) for d in diagnostics}


async def test_diagnostics_hover_and_fixes_on_a_bib_file(paper: Path, upstream: str) -> None:
    refs = paper / "refs.bib"
    async with session(paper, server_environment(paper, upstream)) as lsp:
        lsp.open(refs)
        await lsp.until(lambda: lsp.diagnostics.get(uri(refs)), "diagnostics on refs.bib")
        found = {d.code: d for d in lsp.diagnostics[uri(refs)]}
        assert set(found) == {"year-mismatch", "not-found"}
        year = found["year-mismatch"]
        # The entry's lines (0-based): from `@article{lovelace2017,` to its closing brace.
        assert (year.range.start.line, year.range.end.line) == (1, 7)
        assert year.severity == types.DiagnosticSeverity.Error
        assert year.source == "refaudit"
        assert year.code_description.href.endswith("verdicts.md#year-mismatch")
        assert "(cited: 2017; correct: 2019)" in year.message
        assert year.data["record"] == "crossref doi:10.1234/widgets.2019"
        fabricated = found["not-found"]
        assert (fabricated.range.start.line, fabricated.range.end.line) == (9, 14)
        assert fabricated.data["fails"] is True
        # Progress was shown: begun, reported, ended.
        kinds = [value["kind"] for value in lsp.progress]
        assert kinds[0] == "begin" and kinds[-1] == "end"

        hover = await lsp.client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri(refs)), types.Position(4, 5))
        )
        assert hover is not None
        text = hover.contents.value
        assert text.startswith("**refaudit: mismatch** `lovelace2017`")
        assert "cited *2017*, correct *2019* (crossref doi:10.1234/widgets.2019)" in text

        actions = await lsp.client.text_document_code_action_async(
            types.CodeActionParams(
                types.TextDocumentIdentifier(uri(refs)),
                types.Range(types.Position(3, 0), types.Position(3, 0)),
                types.CodeActionContext(diagnostics=[year]),
            )
        )
        titles = [action.title for action in actions]
        assert titles == [
            "refaudit: correct lovelace2017 (year)",
            "refaudit: correct all 1 mismatched entries in refs.bib",
        ]
        edits = actions[0].edit.changes[uri(refs)]
        fixed = apply(REFS, edits)
        assert fixed == REFS.replace("year    = {2017}", "year    = {2019}")


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """The text after a client applied `edits` (ASCII text: columns are characters)."""
    lines = text.split("\n")

    def at(position: types.Position) -> int:
        return sum(len(line) + 1 for line in lines[: position.line]) + position.character

    for edit in sorted(edits, key=lambda e: at(e.range.start), reverse=True):
        text = text[: at(edit.range.start)] + edit.new_text + text[at(edit.range.end) :]
    return text


async def test_a_paper_puts_findings_on_its_bib_file_and_hovers_on_citations(
    paper: Path, upstream: str
) -> None:
    tex, refs = paper / "paper.tex", paper / "refs.bib"
    options = {"texlab": True}  # texlab already reports the undefined `nobody2020`
    async with session(paper, server_environment(paper, upstream), options=options) as lsp:
        lsp.open(tex)
        await lsp.until(lambda: uri(tex) in lsp.diagnostics, "the paper's diagnostics")
        assert codes(lsp.diagnostics[uri(refs)]) == {"year-mismatch", "not-found"}
        assert not lsp.diagnostics[uri(tex)]

        def hover_at(line: int, character: int) -> Any:
            return lsp.client.text_document_hover_async(
                types.HoverParams(
                    types.TextDocumentIdentifier(uri(tex)), types.Position(line, character)
                )
            )

        column = PAPER.splitlines()[2].index("smith2021quantum") + 3
        hover = await hover_at(2, column)
        assert hover.contents.value.startswith("**refaudit: not found** `smith2021quantum` — fails")
        assert await hover_at(2, 1) is None  # not on a citation key

        # Turning the texlab rules back on shows the undefined citation in the paper.
        lsp.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"refaudit": {"ignore": []}})
        )
        await lsp.until(lambda: lsp.diagnostics.get(uri(tex)), "diagnostics on paper.tex")
        undefined = lsp.diagnostics[uri(tex)]
        assert codes(undefined) == {"undefined-citation"}
        assert undefined[0].range.start.line == 2


async def test_a_newer_audit_cancels_the_stale_one(paper: Path) -> None:
    """The first audit is slow; a save with the fabricated entry removed replaces it, and
    the fabricated entry is never shown."""
    fake = upstreams(WIDGETS)
    asked, release = threading.Event(), threading.Event()
    plain = fake.handler

    def slow(request: httpx.Request) -> httpx.Response:
        asked.set()
        release.wait(WAIT_S)
        return plain(request)

    fake.handler = slow  # type: ignore[method-assign]
    refs = paper / "refs.bib"
    with served_over_http(fake) as url:
        async with session(paper, server_environment(paper, url)) as lsp:
            lsp.open(refs)
            await lsp.until(asked.is_set, "the first audit to ask Crossref")
            refs.write_text(REFS.split("@article{smith2021quantum")[0], encoding="utf-8")
            lsp.save(refs)
            await lsp.until(lambda: lsp.logs, "the stale audit to be replaced")
            release.set()
            await lsp.until(lambda: lsp.diagnostics.get(uri(refs)), "diagnostics")
            await asyncio.sleep(0.5)  # anything the stale audit could still send
    assert "a newer audit of refs.bib replaces one" in lsp.logs[0]
    published = [codes(items) for target, items in lsp.history if target == uri(refs)]
    assert published == [{"year-mismatch"}]


async def test_unreachable_sources_are_said_plainly_and_the_cache_answers_offline(
    paper: Path, upstream: str
) -> None:
    refs = paper / "refs.bib"
    environment = server_environment(paper, upstream)
    async with session(paper, environment, "--offline") as lsp:
        lsp.open(refs)
        await lsp.until(lambda: lsp.messages, "a message")
        assert lsp.messages[0].type == types.MessageType.Warning
        assert "no source answered: offline, and none of the 2 reference(s) is in the cache" in (
            lsp.messages[0].message
        )
        await lsp.until(lambda: lsp.diagnostics.get(uri(refs)), "diagnostics")
        assert codes(lsp.diagnostics[uri(refs)]) == {"unverified"}
    # Online once fills the cache; offline again, the cache answers and nothing is unverified.
    async with session(paper, environment) as lsp:
        lsp.open(refs)
        await lsp.until(lambda: lsp.diagnostics.get(uri(refs)), "diagnostics")
    async with session(paper, environment, "--offline") as lsp:
        lsp.open(refs)
        await lsp.until(lambda: lsp.diagnostics.get(uri(refs)), "diagnostics")
        assert codes(lsp.diagnostics[uri(refs)]) == {"year-mismatch", "not-found"}
        assert lsp.messages == []
