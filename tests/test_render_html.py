"""The HTML report: self-contained, grouped by what needs action, and working in a real browser.

The browser test drives headless Chromium (the Debian `chromium` package) over the
DevTools protocol: it opens the report from a file, fails on any console error or
uncaught exception, and ticks the filter boxes the way a reader would. It is skipped
where Chromium is not installed.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest
from report_samples import sample_report, streamed
from typer.testing import CliRunner

from refaudit import audit
from refaudit.cli import app
from refaudit.render import RenderContext, render

CHROMIUM = next(
    (
        shutil.which(name)
        for name in ("chromium", "chromium-browser", "google-chrome")
        if shutil.which(name)
    ),
    None,
)


class _Collector(HTMLParser):
    """Tags with their attributes, and the text of each element with an id."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def html_report(**context: Any) -> str:
    return render(sample_report(), "html", RenderContext(**context))


def test_the_report_is_one_file_with_no_external_assets() -> None:
    page = html_report()
    collector = _Collector()
    collector.feed(page)
    tags = {tag for tag, _ in collector.tags}
    assert {"style", "script", "svg"} <= tags
    assert "link" not in tags and "img" not in tags and "iframe" not in tags
    assert not any(attrs.get("src") for _, attrs in collector.tags), "scripts are inline"
    assert "@import" not in page and "url(" not in page
    links = [attrs["href"] for tag, attrs in collector.tags if tag == "a" and attrs.get("href")]
    assert all(href.startswith(("#ref-", "https://")) for href in links), links


def test_references_are_grouped_by_what_needs_action() -> None:
    page = html_report()
    order = [
        page.index(f"id=group-{name}") for name in ("failing", "error", "warning", "suppressed")
    ]
    assert order == sorted(order)
    failing = page[page.index("id=group-failing") : page.index("id=group-error")]
    assert "smith2021quantum" in failing and "wakefield1998" in failing
    assert "lecun2015deep" not in failing, "an error that the policy does not fail on"
    assert "2 reference(s) fail the run" in page
    assert "data-verdict='retracted'" in page, "a retracted work is not shown as verified"


def test_the_page_files_each_reference_in_the_section_the_terminal_lists_it_in() -> None:
    """An unverified reference whose verdict finding the report adds (none from the
    pipeline) is a warning in both, under the same titles."""
    report = sample_report()
    (unverified,) = [r for r in report.results if r.reference.key == "offline2020"]
    unverified.findings = []
    page = render(report, "html", RenderContext())
    table = render(report, "table", RenderContext())
    warnings = page[page.index("id=group-warning") : page.index("id=group-suppressed")]
    assert "id='ref-offline2020'" in warnings
    assert table.index("Warnings (1)") < table.index("offline2020") < table.index("Suppressed")
    for title, count in (("Failing the run", 2), ("Warnings", 1), ("Suppressed and skipped", 1)):
        assert f"{title} ({count})" in table
        assert f"{title} (<span class=count>{count}</span>)" in page


def test_cited_and_found_are_side_by_side_with_the_changed_words_marked() -> None:
    page = html_report()
    assert "<td><del>2016</del></td><td><ins>2015</ins></td>" in page
    assert "<del>436--445</del>" in page and "<ins>436-444</ins>" in page


def test_links_lead_to_the_doi_the_record_and_the_notice() -> None:
    page = html_report()
    assert "href='https://doi.org/10.1016/s0140-6736(10)60175-4'" in page  # the notice
    assert "href='https://doi.org/10.1038/nature14539'" in page  # the matched record's DOI
    assert "retraction notice 2010-02-06" in page


def test_the_corrected_bibtex_is_there_to_copy_and_text_is_escaped() -> None:
    report = sample_report()
    report.results[0].reference.title = "<script>alert(1)</script> & more"
    page = render(report, "html", RenderContext())
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in page
    lecun = page[page.index("id='ref-lecun2015deep'") :]
    assert "Corrected BibTeX" in lecun[: lecun.index("</article>")]
    assert "class=copy" in page


def test_check_writes_the_html_report_and_still_summarises_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def fake_audit_paths(paths, settings, *, on_batch=None, tally=None, **kwargs):
        return streamed(sample_report(), on_batch, tally)

    monkeypatch.setattr(audit, "audit_paths", fake_audit_paths)
    (tmp_path / "refs.bib").write_text("@misc{a, title={A}}\n")
    result = CliRunner().invoke(app, ["check", "refs.bib", "--format", "html", "-o", "report.html"])
    assert result.exit_code == 1
    assert (tmp_path / "report.html").read_text(encoding="utf-8").startswith("<!doctype html>")
    assert "2 reference(s) fail (--fail-on not_found,doi,retracted)" in result.stderr


# --- a real browser ----------------------------------------------------------------


class Browser:
    """Just enough of the Chrome DevTools protocol to load a page and evaluate script."""

    def __init__(self, websocket: Any) -> None:
        self.websocket = websocket
        self.problems: list[str] = []
        self._next_id = 0

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        ident = self._next_id
        await self.websocket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(await self.websocket.recv())
            self._note(message)
            if message.get("id") == ident:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message.get("result", {})

    async def evaluate(self, expression: str) -> Any:
        answer = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in answer:
            raise AssertionError(answer["exceptionDetails"])
        return answer["result"].get("value")

    def _note(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            self.problems.append(str(params["exceptionDetails"]))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning"):
            self.problems.append(str(params.get("args")))
        elif method == "Log.entryAdded" and params["entry"].get("level") in ("error", "warning"):
            self.problems.append(params["entry"].get("text", ""))


async def _with_page(url: str, script: Any) -> Any:
    import websockets

    profile = tempfile.mkdtemp(prefix="refaudit-chromium-")
    process = subprocess.Popen(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        endpoint = _devtools_endpoint(process)
        port = re.search(r":(\d+)/", endpoint).group(1)  # type: ignore[union-attr]
        pages = httpx.get(f"http://127.0.0.1:{port}/json/list").json()
        target = next(p for p in pages if p["type"] == "page")
        async with websockets.connect(target["webSocketDebuggerUrl"], max_size=None) as socket:
            browser = Browser(socket)
            for domain in ("Runtime", "Log", "Page"):
                await browser.call(f"{domain}.enable")
            await browser.call("Page.navigate", url=url)
            for _ in range(100):
                if await browser.evaluate("document.readyState") == "complete":
                    break
                await asyncio.sleep(0.05)
            return await script(browser)
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(profile, ignore_errors=True)


def _devtools_endpoint(process: subprocess.Popen[str]) -> str:
    assert process.stderr is not None
    for line in process.stderr:
        if "DevTools listening on" in line:
            return line.split("DevTools listening on", 1)[1].strip()
    raise AssertionError("chromium did not start its DevTools endpoint")


@pytest.mark.skipif(CHROMIUM is None, reason="needs chromium (Debian package)")
def test_the_report_renders_in_chromium_without_errors_and_the_filters_work(
    tmp_path: Path,
) -> None:
    pytest.importorskip("websockets")
    page = tmp_path / "report.html"
    page.write_text(html_report(verbose=True), encoding="utf-8")

    async def exercise(browser: Browser) -> dict[str, Any]:
        visible = "document.querySelectorAll('article.ref:not([hidden])').length"
        seen: dict[str, Any] = {"all": await browser.evaluate(visible)}
        seen["shown"] = await browser.evaluate("document.querySelector('.shown').textContent")
        # Untick every verdict but "not found": one card, in the failing group, remains.
        await browser.evaluate(
            "document.querySelectorAll('input[name=verdict]').forEach(b => {"
            " if (b.value !== 'not found') b.click(); })"
        )
        seen["not found"] = await browser.evaluate(
            "Array.from(document.querySelectorAll('article.ref:not([hidden])'), a => a.id)"
        )
        seen["groups"] = await browser.evaluate(
            "Array.from(document.querySelectorAll('section.group:not([hidden])'), s => s.id)"
        )
        # Back to every verdict, then hide warnings and notes by severity.
        await browser.evaluate(
            "document.querySelectorAll('input[name=verdict]:not(:checked)').forEach(b => b.click())"
        )
        await browser.evaluate(
            "document.querySelectorAll('input[name=severity]').forEach(b => {"
            " if (b.value !== 'error') b.click(); })"
        )
        seen["errors"] = await browser.evaluate(
            "Array.from(document.querySelectorAll('article.ref:not([hidden])'), a => a.id)"
        )
        await browser.evaluate("document.querySelector('button.copy').click()")
        seen["problems"] = list(browser.problems)
        return seen

    seen = asyncio.run(_with_page(page.as_uri(), exercise))
    assert seen["problems"] == [], "no console errors or uncaught exceptions"
    assert seen["all"] == 6 and seen["shown"] == "6 of 6 references shown"
    assert seen["not found"] == ["ref-smith2021quantum"]
    assert seen["groups"] == ["group-failing"]
    assert set(seen["errors"]) == {"ref-smith2021quantum", "ref-wakefield1998", "ref-lecun2015deep"}


def test_an_outage_is_named_once_per_card_not_spelled_out() -> None:
    page = html_report()
    card = page[page.index("id='ref-offline2020'") :]
    card = card[: card.index("</article>")]
    assert "unverified (sources down: crossref, openalex)" in card
