"""`refaudit lsp` end to end: pytest-lsp's client drives the server over stdio.

Each server is a subprocess started the way an editor starts it, in the test's folder
with the test's environment (its own cache and data folders, from conftest). The fake
Crossref and OpenAlex of `tests.fakes` are served over HTTP and named to the server by
`REFAUDIT_<SOURCE>_URL`. The client announces Neovim 0.11's capabilities, and pytest-lsp
checks what the server sends against them. Every wait ends on the notification it waits
for; BOUND_S only bounds a server that never sends it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_lsp
from lsprotocol import types
from pygls import uris
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from tests.fakes import FakeUpstreams, crossref_work
from tests.mirror_dumps import BIBLIOGRAPHY as MIRRORED
from tests.mirror_dumps import build_test_mirror
from tests.test_serve_transports import served_over_http, server_environment
from tests.test_server import WIDGETS, upstreams

pytestmark = pytest.mark.asyncio

ROOT = Path(__file__).resolve().parent.parent
BOUND_S = 180  # a loaded machine needs seconds to start Python; no wait sleeps this long
SERVER = [sys.executable, "-m", "refaudit", "lsp"]

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
RESNET = crossref_work(
    "10.1109/cvpr.2016.90",
    "Deep Residual Learning for Image Recognition",
    authors=[("Kaiming", "He"), ("Xiangyu", "Zhang"), ("Shaoqing", "Ren"), ("Jian", "Sun")],
    year=2016,
    venue="2016 IEEE Conference on Computer Vision and Pattern Recognition (CVPR)",
    type="proceedings-article",
    page="770-778",
)
HE2013 = """
@inproceedings{he2016deep,
  title     = {Deep Residual Learning for Image Recognition},
  author    = {He, Kaiming and Zhang, Xiangyu and Ren, Shaoqing and Sun, Jian},
  booktitle = {Proceedings of the IEEE Conference on Computer Vision and Pattern Recognition},
  year      = {2013},
  doi       = {10.1109/CVPR.2016.90},
}
"""
PAPER = r"""\documentclass{article}
\begin{document}
Widgets~\cite{lovelace2017}, gravity~\citep[p.~3]{nobody2020, smith2021quantum}.
\bibliography{refs}
\end{document}
"""


def uri(path: Path) -> str:
    return uris.from_fs_path(str(path.resolve())) or ""


@pytest.fixture(autouse=True)
def upstream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeUpstreams]:
    """Crossref knows the widget paper and ResNet; the servers a test starts ask it over
    HTTP (autouse: it is in the environment before any server starts)."""
    fake = upstreams(WIDGETS, RESNET)
    with served_over_http(fake) as url:
        for name, value in server_environment(tmp_path, url).items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv(
            "PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
        )
        yield fake


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    (tmp_path / "refs.bib").write_text(REFS, encoding="utf-8")
    (tmp_path / "paper.tex").write_text(PAPER, encoding="utf-8")
    return tmp_path


async def initialize(client: LanguageClient, request: pytest.FixtureRequest) -> None:
    """Neovim's capabilities; initialization options from an indirect parameter."""
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("neovim"),
            root_uri=uri(Path.cwd()),
            initialization_options=getattr(request, "param", None),
        )
    )


class Client(LanguageClient):
    """pytest-lsp's client, which also keeps every publication of diagnostics in order
    (its own `diagnostics` holds the newest of each file)."""

    def __init__(self) -> None:
        super().__init__(converter_factory=default_converter)
        self.published: list[tuple[str, list[types.Diagnostic]]] = []
        keep_newest = DEFAULT_CLIENT_FEATURES[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

        def published(ls: Client, params: types.PublishDiagnosticsParams) -> None:
            keep_newest(ls, params)
            ls.published.append((params.uri, list(params.diagnostics)))

        register_lsp_features(
            self, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: published}
        )

    def history(self, path: Path) -> list[set[str]]:
        """The codes of each publication for `path`, oldest first."""
        return [codes(items) for at, items in self.published if at == uri(path)]

    async def until(self, method: str, done: Callable[[], Any], what: str) -> None:
        """Wait for notifications of `method` until `done()` holds. The check comes before
        each wait, and the loop handles one message at a time: none slips in between."""
        try:
            async with asyncio.timeout(BOUND_S):
                while not done():
                    await self.wait_for_notification(method)
        except TimeoutError:
            raise AssertionError(
                f"no {what} in {BOUND_S}s: {self.published}, {self.messages}"
            ) from None

    async def diagnostics_of(self, path: Path, count: int = 1) -> list[types.Diagnostic]:
        """`path`'s diagnostics once `count` publications for it have arrived."""
        await self.until(
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
            lambda: len(self.history(path)) >= count,
            f"publication {count} for {path.name}",
        )
        return list(self.diagnostics[uri(path)])

    async def message(self, count: int = 1) -> types.ShowMessageParams:
        await self.until(types.WINDOW_SHOW_MESSAGE, lambda: len(self.messages) >= count, "message")
        return self.messages[count - 1]

    def open(self, path: Path) -> None:
        self.text_document_did_open(
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
        self.text_document_did_save(
            types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri(path)))
        )

    async def hover(self, path: Path, line: int, character: int) -> str | None:
        found = await self.text_document_hover_async(
            types.HoverParams(
                types.TextDocumentIdentifier(uri(path)), types.Position(line, character)
            )
        )
        if found is None:
            return None
        assert isinstance(found.contents, types.MarkupContent)
        assert found.contents.kind == types.MarkupKind.Markdown
        return found.contents.value

    async def code_actions(self, path: Path, line: int) -> list[types.CodeAction]:
        """The actions offered on `line`, asked as an editor asks: with the diagnostics
        shown there."""
        shown = [
            d
            for d in self.diagnostics.get(uri(path), [])
            if d.range.start.line <= line <= d.range.end.line
        ]
        found = await self.text_document_code_action_async(
            types.CodeActionParams(
                types.TextDocumentIdentifier(uri(path)),
                types.Range(types.Position(line, 0), types.Position(line, 0)),
                types.CodeActionContext(diagnostics=shown),
            )
        )
        assert found is not None and all(isinstance(a, types.CodeAction) for a in found)
        return [a for a in found if isinstance(a, types.CodeAction)]


def codes(diagnostics: list[types.Diagnostic]) -> set[str]:
    return {str(d.code) for d in diagnostics}


def server(*args: str) -> ClientServerConfig:
    return ClientServerConfig(server_command=[*SERVER, *args], client_factory=Client)


async def session(lsp_client: Client, request: pytest.FixtureRequest) -> AsyncIterator[None]:
    """Initialize as Neovim does; at the end shut the server down, killing one that has
    not exited within BOUND_S so that a failing test cannot hang the suite."""
    await initialize(lsp_client, request)
    yield
    try:
        async with asyncio.timeout(BOUND_S):
            await lsp_client.shutdown_session()
    except TimeoutError:
        process = lsp_client._server  # the subprocess pygls started
        if process is not None:
            process.kill()
        raise AssertionError(f"the server did not exit within {BOUND_S}s") from None


client = pytest_lsp.fixture(config=server())(session)
offline_client = pytest_lsp.fixture(config=server("--offline"))(session)
mirror_client = pytest_lsp.fixture(config=server("--sources", "mirror"))(session)
strict_client = pytest_lsp.fixture(config=server("--fail-on", "flagged,retracted"))(session)


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """The text after a client applied `edits` (ASCII text: columns are characters)."""
    lines = text.split("\n")

    def at(position: types.Position) -> int:
        return sum(len(line) + 1 for line in lines[: position.line]) + position.character

    for edit in sorted(edits, key=lambda e: at(e.range.start), reverse=True):
        text = text[: at(edit.range.start)] + edit.new_text + text[at(edit.range.end) :]
    return text


async def test_a_bib_file_shows_findings_on_its_entries_with_hover_and_corrections(
    client: Client, paper: Path, upstream: FakeUpstreams
) -> None:
    refs = paper / "refs.bib"
    original = REFS + HE2013
    refs.write_text(original, encoding="utf-8")
    client.open(refs)
    found = {str(d.data["key"]): d for d in await client.diagnostics_of(refs)}
    assert {key: str(d.code) for key, d in found.items()} == {
        "lovelace2017": "year-mismatch",
        "smith2021quantum": "not-found",
        "he2016deep": "year-mismatch",
    }
    # Each on its entry's lines (0-based), from `@article{` to the closing brace.
    lines = {key: (d.range.start.line, d.range.end.line) for key, d in found.items()}
    assert lines == {"lovelace2017": (1, 7), "smith2021quantum": (9, 14), "he2016deep": (16, 22)}
    year = found["lovelace2017"]
    assert year.severity == types.DiagnosticSeverity.Error
    assert year.source == "refaudit"
    assert year.code_description is not None
    assert year.code_description.href.endswith("verdicts.md#year-mismatch")
    assert year.message.startswith("lovelace2017: Year should be 2019 (cited: 2017; correct: 2019)")
    assert "crossref: https://doi.org/10.1234/widgets.2019" in year.message  # the record
    assert "https://" not in found["smith2021quantum"].message  # no record to link
    # The default gate (not found, DOI errors, retractions) fails the fabricated entry only.
    assert {key: d.data["fails"] for key, d in found.items()} == {
        "lovelace2017": False,
        "smith2021quantum": True,
        "he2016deep": False,
    }
    # `$/progress`: one token the client was asked to create, begun, counted, ended.
    assert len(client.progress_reports) == 1
    (progress,) = client.progress_reports.values()
    assert [p.kind for p in progress[:1] + progress[-1:]] == ["begin", "end"]
    last = progress[-2]
    assert isinstance(last, types.WorkDoneProgressReport)
    assert (last.message, last.percentage) == ("refs.bib: 3/3 references", 100)

    hover = await client.hover(refs, 4, 5)
    assert hover is not None
    assert hover.startswith("**refaudit: mismatch** `lovelace2017`")
    assert "record (crossref): Deep learning for widget inspection, 2019" in hover
    assert "cited *2017*, correct *2019* (crossref doi:10.1234/widgets.2019)" in hover
    assert await client.hover(refs, 8, 0) is None  # between entries

    one, every = await client.code_actions(refs, 3)
    assert (one.title, one.kind) == ("refaudit: correct lovelace2017 (year)", "quickfix")
    assert [str(d.code) for d in one.diagnostics or []] == ["year-mismatch"]
    assert every.title == "refaudit: correct all 2 mismatched entries in refs.bib"
    assert every.kind == types.CodeActionKind.SourceFixAll
    assert one.edit is not None and one.edit.changes is not None
    assert every.edit is not None and every.edit.changes is not None
    assert apply(original, list(one.edit.changes[uri(refs)])) == original.replace(
        "year    = {2017}", "year    = {2019}"
    )
    corrected = apply(original, list(every.edit.changes[uri(refs)]))
    assert corrected == original.replace("year    = {2017}", "year    = {2019}").replace(
        "year      = {2013}", "year      = {2016}"
    )

    # Byte for byte what `refaudit fix` writes (from the cache this audit filled).
    fixed = paper / "fixed.bib"
    command = [sys.executable, "-m", "refaudit", "fix", str(refs), "-o", str(fixed), "--offline"]
    await asyncio.to_thread(subprocess.run, [*command, "-q"], check=True, timeout=BOUND_S)
    assert fixed.read_text(encoding="utf-8") == corrected

    # The author saves the corrected file: only the fabricated entry is left, and the
    # corrected entries are answered from the cache.
    asked = len(upstream.requests)
    refs.write_text(corrected, encoding="utf-8")
    client.save(refs)
    assert codes(await client.diagnostics_of(refs, 2)) == {"not-found"}
    assert len(upstream.requests) == asked


@pytest.mark.parametrize("client", [{"texlab": True}], indirect=True)
async def test_a_paper_puts_findings_on_its_bib_file_and_hovers_on_citations(
    client: Client, paper: Path
) -> None:
    tex, refs = paper / "paper.tex", paper / "refs.bib"
    # An entry the paper does not cite, and one a syntax error cuts short.
    refs.write_text(REFS + HE2013 + "\n@article{broken2020,\n  title = {Unclosed\n", "utf-8")
    client.open(tex)
    # texlab already reports the undefined `nobody2020`, the uncited entry and the syntax
    # error: the option leaves them out. The paper marks where it cites the reference
    # that fails the run (the fabricated one; a wrong year does not fail by default).
    (cited,) = await client.diagnostics_of(tex)
    line = PAPER.splitlines()[2]
    assert cited.code == "not-found" and cited.message.startswith("smith2021quantum: ")
    start = line.index("smith2021quantum")
    assert (cited.range.start.line, cited.range.start.character) == (2, start)
    assert (cited.range.end.line, cited.range.end.character) == (2, start + 16)
    (entry,) = cited.related_information or []
    assert entry.location.uri == uri(refs) and entry.message == "the entry in refs.bib"
    assert (entry.location.range.start.line, entry.location.range.end.line) == (9, 14)
    assert codes(client.diagnostics[uri(refs)]) == {"year-mismatch", "not-found"}

    column = PAPER.splitlines()[2].index("smith2021quantum") + 3
    hover = await client.hover(tex, 2, column)
    assert hover is not None
    assert hover.startswith("**refaudit: not found** `smith2021quantum` — fails the run")
    assert await client.hover(tex, 2, 1) is None  # not on a citation key

    # Settings without a `refaudit` section (Neovim sends an empty table, other editors
    # every server's settings) leave the initialization options as they were.
    for settings in ({}, None, {"texlab": {"diagnostics": {"ignoredPatterns": []}}}):
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings=settings)
        )
    assert await client.hover(tex, 0, 0) is None  # a round trip: they were handled
    assert len(client.history(tex)) == 1

    def problems() -> dict[str, types.Diagnostic]:
        return {str(d.code): d for d in client.diagnostics[uri(refs)] if d.data is None}

    # Only the syntax rules left out (refaudit's section of the editor's settings): the
    # uncited entry shows, the syntax error still does not.
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"refaudit": {"ignore": ["syntax"]}})
    )
    await client.diagnostics_of(tex, 2)
    assert set(problems()) == {"uncited-entry"}
    # Every rule back on (Helix sends its `config` as it is, without a section): the
    # undefined citation shows in the paper, the syntax error in the .bib file.
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"ignore": []})
    )
    shown = {str(d.code): d for d in await client.diagnostics_of(tex, 3)}
    assert set(shown) == {"undefined-citation", "not-found"}
    undefined = shown["undefined-citation"]
    assert undefined.range.start.line == 2
    assert "nobody2020" in undefined.message
    assert set(problems()) == {"uncited-entry", "parse-error"}
    uncited, syntax = problems()["uncited-entry"], problems()["parse-error"]
    assert (uncited.range.start.line, uncited.range.end.line) == (16, 22)  # he2016deep
    assert uncited.severity == types.DiagnosticSeverity.Information
    assert syntax.range.start.line == 24
    assert syntax.code_description is not None
    assert syntax.code_description.href.endswith("docs/inputs.md#problems")


async def test_audits_run_on_open_and_save_never_on_a_keystroke(
    client: Client, paper: Path
) -> None:
    refs = paper / "refs.bib"
    client.open(refs)
    assert codes(await client.diagnostics_of(refs)) == {"year-mismatch", "not-found"}
    edited = REFS.split("@article{smith2021quantum")[0]
    for version, text in enumerate((REFS + "\n@article{", edited), start=2):
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version, uri(refs)),
                [types.TextDocumentContentChangeWholeDocument(text)],
            )
        )
    refs.write_text(edited, encoding="utf-8")
    client.save(refs)
    assert codes(await client.diagnostics_of(refs, 2)) == {"year-mismatch"}
    # Two audits (two progress tokens, two publications): the open and the save.
    assert len(client.progress_reports) == 2
    assert client.history(refs) == [{"year-mismatch", "not-found"}, {"year-mismatch"}]


async def test_a_newer_audit_cancels_the_stale_one(
    client: Client, paper: Path, upstream: FakeUpstreams
) -> None:
    """The first audit waits on Crossref; a save with the fabricated entry removed replaces
    it, and what the stale audit would have said is never shown."""
    asked, release = threading.Event(), threading.Event()
    answer = upstream.handler

    def slow(request: httpx.Request) -> httpx.Response:
        asked.set()
        release.wait(BOUND_S)
        return answer(request)

    upstream.handler = slow  # type: ignore[method-assign]
    refs = paper / "refs.bib"
    try:
        client.open(refs)
        assert await asyncio.to_thread(asked.wait, BOUND_S), "the first audit asked nothing"
        refs.write_text(REFS.split("@article{smith2021quantum")[0], encoding="utf-8")
        client.save(refs)
        await client.until(types.WINDOW_LOG_MESSAGE, lambda: client.log_messages, "a log line")
    finally:
        release.set()
    assert "a newer audit of refs.bib replaces one" in client.log_messages[0].message
    assert codes(await client.diagnostics_of(refs)) == {"year-mismatch"}
    # Both audits' progress has ended (the stale one's too, so no spinner is left
    # turning), and a round trip after them shows nothing more came.
    await client.until(
        types.PROGRESS,
        lambda: (
            len(client.progress_reports) == 2
            and all(p and p[-1].kind == "end" for p in client.progress_reports.values())
        ),
        "both audits' progress to end",
    )
    await client.hover(refs, 4, 5)
    assert client.history(refs) == [{"year-mismatch"}]


async def test_offline_says_plainly_what_is_unverified_and_answers_from_the_cache(
    offline_client: Client, client: Client, paper: Path, upstream: FakeUpstreams
) -> None:
    refs = paper / "refs.bib"
    offline_client.open(refs)
    said = await offline_client.message()
    assert said.type == types.MessageType.Warning
    assert "refs.bib: no source answered: offline, and none of the 2 reference(s) is in " in (
        said.message
    )
    unverified = await offline_client.diagnostics_of(refs)
    assert codes(unverified) == {"unverified"}
    assert {d.severity for d in unverified} == {types.DiagnosticSeverity.Warning}
    assert upstream.requests == []

    # Online once fills the cache; offline, the cache answers and nothing is unverified.
    client.open(refs)
    assert codes(await client.diagnostics_of(refs)) == {"year-mismatch", "not-found"}
    asked = len(upstream.requests)
    offline_client.save(refs)
    assert codes(await offline_client.diagnostics_of(refs, 2)) == {"year-mismatch", "not-found"}
    assert len(offline_client.messages) == 1
    # Reopening the file sends no request either.
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri(refs)))
    )
    client.open(refs)
    assert codes(await client.diagnostics_of(refs, 2)) == {"year-mismatch", "not-found"}
    assert len(upstream.requests) == asked


async def test_a_mirror_answers_without_network_and_a_missing_one_is_named(
    mirror_client: Client, tmp_path: Path, upstream: FakeUpstreams
) -> None:
    refs = tmp_path / "refs.bib"
    refs.write_text(MIRRORED, encoding="utf-8")
    mirror_client.open(refs)
    said = await mirror_client.message()
    assert said.type == types.MessageType.Error
    assert "no mirror at" in said.message and "refaudit mirror build" in said.message

    build_test_mirror(tmp_path / "dumps", str(tmp_path / "data" / "mirror.sqlite3"))
    mirror_client.save(refs)
    severity: dict[tuple[str, str], types.DiagnosticSeverity | None] = {}
    for d in await mirror_client.diagnostics_of(refs):
        severity[str(d.data["key"]), str(d.code)] = d.severity
    error, warning, information = (
        types.DiagnosticSeverity.Error,
        types.DiagnosticSeverity.Warning,
        types.DiagnosticSeverity.Information,
    )
    assert severity == {
        ("he2016typo", "author-mismatch"): error,
        ("he2016typo", "title-typo"): warning,
        ("he2016typo", "doi-available"): information,
        ("wakefield1998", "retracted"): error,
        ("wakefield1998", "corrected"): information,
        ("vaswani2017", "doi-available"): information,
        ("invented2021", "not-found"): error,
    }
    assert upstream.requests == []  # the mirror answered everything
    assert len(mirror_client.messages) == 1  # and nothing was left unverified


BIBITEMS = r"""\begin{thebibliography}{2}

\bibitem[Lovelace and Turing(2017)]{lovelace2017}
A.~Lovelace and A.~Turing, ``Deep learning for widget inspection,'' \emph{Journal of
  Widget Science}, 2017, doi:10.1234/widgets.2019.

\bibitem[Smith(2021)]{smith2021quantum}
J.~Smith, ``Quantum gravity priors for large language models,'' \emph{Journal of
  Imaginary Results}, 2021.

\end{thebibliography}
"""


async def test_bbl_files_biber_and_bibitem_get_findings_and_hover_on_their_entries(
    client: Client, tmp_path: Path
) -> None:
    """An arXiv source's biber .bbl (this fake Crossref knows only ResNet of its five) and a
    `thebibliography` list: each finding spans its entry."""
    biber = tmp_path / "paper.bbl"
    shutil.copy(ROOT / "tests" / "fixtures" / "tex" / "arxiv-source" / "paper.bbl", biber)
    client.open(biber)
    spans: dict[str, set[tuple[int, int]]] = {}
    for found in await client.diagnostics_of(biber):
        spans.setdefault(str(found.data["key"]), set()).add(
            (found.range.start.line, found.range.end.line)
        )
    # From `\entry{key}` to its `\endentry` (0-based lines); he2016 is verified.
    assert spans == {
        "lecun2015": {(63, 94)},
        "vaswani2017": {(95, 118)},
        "waals1873": {(119, 135)},
        "who2020": {(136, 149)},
    }
    hover = await client.hover(biber, 40, 8)
    assert hover is not None and hover.startswith("**refaudit: verified** `he2016`")

    items = tmp_path / "refs.bbl"
    items.write_text(BIBITEMS, encoding="utf-8")
    client.open(items)
    found = {str(d.data["key"]): d for d in await client.diagnostics_of(items)}
    assert {key: str(d.code) for key, d in found.items()} == {
        "lovelace2017": "year-mismatch",
        "smith2021quantum": "not-found",
    }
    assert (found["lovelace2017"].range.start.line, found["lovelace2017"].range.end.line) == (2, 4)
    assert (
        found["smith2021quantum"].range.start.line,
        found["smith2021quantum"].range.end.line,
    ) == (6, 8)
    hover = await client.hover(items, 7, 10)
    assert hover is not None and hover.startswith("**refaudit: not found** `smith2021quantum`")


async def test_a_new_file_is_audited_once_saved(client: Client, tmp_path: Path) -> None:
    """A buffer with no file behind it yet is not an error; its first save audits it."""
    new = tmp_path / "chapter-refs.bib"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri(new), language_id="bibtex", version=1, text="")
        )
    )
    assert await client.hover(new, 0, 0) is None  # a round trip: the open was handled
    new.write_text(REFS, encoding="utf-8")
    client.save(new)
    assert codes(await client.diagnostics_of(new)) == {"year-mismatch", "not-found"}
    assert client.messages == []
    assert len(client.progress_reports) == 1


async def test_fail_on_says_which_references_fail_the_run(
    strict_client: Client, paper: Path
) -> None:
    """`--fail-on` as for `check`: under the strict gate a wrong year fails the run too."""
    refs = paper / "refs.bib"
    strict_client.open(refs)
    found = {str(d.data["key"]): d.data["fails"] for d in await strict_client.diagnostics_of(refs)}
    assert found == {"lovelace2017": True, "smith2021quantum": True}
    hover = await strict_client.hover(refs, 4, 5)
    assert hover is not None
    assert hover.startswith(
        "**refaudit: mismatch** `lovelace2017` — fails the run (`--fail-on flagged,retracted`)"
    )
