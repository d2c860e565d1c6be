"""The HTML report: one self-contained page for editors, reviewers and co-authors.

Built from the same report model as the JSON (`render.json.report_model`), so
the page and the exit code tell the same story. Everything is inline — styles,
the script behind the filters and the copy buttons, the SVG chart — and every
link points at a DOI, a source record or a notice, never at an asset, so the
file opens offline and survives being attached to a CI run.
"""

from __future__ import annotations

import difflib
import html
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from refaudit.models import AuditReport, Notice, Result, Work
from refaudit.render.common import (
    GROUPS,
    RenderContext,
    Spool,
    StreamBase,
    display_path,
    group_of,
    rows,
    snapshot_line,
)
from refaudit.render.json import report_model, result_model
from refaudit.render.table import summary_lines

if TYPE_CHECKING:
    from refaudit.report import ReferenceResult, ReportedFinding

VERDICT_ORDER = ("retracted", "not found", "mismatch", "unverified", "verified", "skipped")
SEVERITY_ORDER = ("error", "warning", "info", "none")
_COLOURS = {
    "retracted": "#b3261e",
    "not found": "#d9480f",
    "mismatch": "#e8a317",
    "unverified": "#7b4fa0",
    "verified": "#2f7d32",
    "skipped": "#8a8f98",
    "error": "#b3261e",
    "warning": "#e8a317",
    "info": "#2b6cb0",
    "none": "#8a8f98",
}
_WORD = re.compile(r"\S+")


@dataclass
class _Tally:
    """What the summary, the charts and the filters need of all the results."""

    total: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    severities: Counter[str] = field(default_factory=Counter)  # skipped ones left out
    present: set[str] = field(default_factory=set)  # every worst severity, for the filters
    failing: int = 0
    failing_links: Spool = field(default_factory=Spool)  # a link to each, as they come

    def add(self, result: ReferenceResult) -> None:
        self.total += 1
        self.verdicts[_shown_verdict(result)] += 1
        if result.verdict != "skipped":
            self.severities[result.worst_severity or "none"] += 1
        self.present.add(result.worst_severity or "none")
        if result.failing:
            self.failing += 1
            self.failing_links.add(f"<a href='#ref-{_e(result.key)}'>{_e(result.key)}</a>", ", ")


class HtmlStream(StreamBase):
    """The HTML page written while the audit runs (a `ReportStream`).

    Each reference's card goes to the spool of its section as it comes; the
    summary, charts and filters are written from a tally once the audit is done.
    """

    def __init__(self, context: RenderContext) -> None:
        super().__init__(context)
        self._tally = _Tally()
        self._cards = {group.id: Spool() for group in GROUPS}

    def _render(self, result: Result) -> None:
        result_rows = rows(result, self._context)
        model = result_model(result, self._context, result_rows)
        self._tally.add(model)
        self._cards[group_of(result, result_rows)].add(_card(model), "\n")

    def write(self, report: AuditReport, write: Callable[[str], object]) -> None:
        model = report_model(report, self._context, with_results=False)
        title = "refaudit report: " + ", ".join(display_path(f) or f for f in model.files[:3])
        page = _PAGE.format(
            title=_e(title),
            style=_STYLE,
            script=_SCRIPT,
            header=_header(report, self._context, model.files),
            summary=_summary(self._tally, report, self._context),
            filters=_filters(self._tally),
            sections=_SECTIONS_SLOT,
            footer=_e(
                f"refaudit {model.tool.version} · report schema {model.schema_version} · "
                f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
            ),
        )
        head, tail = page.rsplit(_SECTIONS_SLOT, 1)
        before, _, after = head.partition(_FAILING_SLOT)
        write(before)
        for piece in self._tally.failing_links.pieces():
            write(piece)
        write(after)
        first = True
        for group in GROUPS:
            cards = self._cards[group.id]
            if not cards.count:
                cards.close()
                continue
            opened = "" if group.id in ("verified", "suppressed") else " open"
            write(
                ("" if first else "\n")
                + f"<section class='group {group.id}' id=group-{group.id}><details{opened}>"
                f"<summary><h2>{_e(group.title)} (<span class=count>{cards.count}</span>)</h2>"
                f"<span class=purpose>{_e(group.purpose)}</span></summary>"
            )
            for piece in cards.pieces():
                write(piece)
            write("</details></section>")
            first = False
        write(tail)


#: Stands for the sections while the page around them is filled in.
_SECTIONS_SLOT = "\u0000refaudit-sections\u0000"
#: Stands for the links to the failing references in the summary.
_FAILING_SLOT = "\u0000refaudit-failing\u0000"


def _shown_verdict(result: ReferenceResult) -> str:
    return "retracted" if result.retracted else result.verdict.replace("_", " ")


def _header(report: AuditReport, context: RenderContext, files: list[str]) -> str:
    names = ", ".join(f"<code>{_e(display_path(f) or f)}</code>" for f in files) or "(no files)"
    policy = ",".join(context.fail_on)
    notes = [f"Fail policy: <code>--fail-on {_e(policy)}</code>"]
    if context.baseline is not None:
        notes.append("a baseline is applied: known findings do not fail the run")
    snapshot = snapshot_line(report)
    if snapshot:
        notes.append(_e(snapshot))
    return (
        f"<h1>refaudit report</h1><p class=files>{names}</p><p class=meta>{' · '.join(notes)}</p>"
    )


def _summary(tally: _Tally, report: AuditReport, context: RenderContext) -> str:
    verdicts, severities = tally.verdicts, tally.severities
    if tally.failing:
        verdict = (
            f"<p class='outcome fail'>{tally.failing} reference(s) fail the run: "
            f"{_FAILING_SLOT}</p>"
        )
    else:
        verdict = "<p class='outcome pass'>Nothing fails the run.</p>"
    unverified = verdicts.get("unverified", 0)
    if unverified:
        verdict += (
            f"<p class='outcome warn'>{unverified} reference(s) unverified: no source could "
            "check them. That is not a clean result.</p>"
        )
    counts_line, cost_line = summary_lines(report, context)[:2]
    return (
        "<section class=summary aria-label=Summary>"
        f"{verdict}"
        f"<div class=charts>{_bar('By verdict', VERDICT_ORDER, verdicts, tally.total)}"
        f"{_bar('By worst finding', SEVERITY_ORDER, severities, sum(severities.values()))}</div>"
        f"<p class=meta>{_e(counts_line)}<br>{_e(cost_line)}</p></section>"
    )


def _bar(title: str, order: tuple[str, ...], counts: Counter[str], total: int) -> str:
    """A stacked horizontal bar (inline SVG) with a legend that carries the numbers."""
    width, height, x = 320, 18, 0.0
    parts = []
    for name in order:
        count = counts.get(name, 0)
        if not count or not total:
            continue
        span = width * count / total
        parts.append(
            f"<rect x='{x:.1f}' y='0' width='{span:.1f}' height='{height}' "
            f"fill='{_COLOURS[name]}'><title>{_e(name)}: {count}</title></rect>"
        )
        x += span
    legend = "".join(
        f"<li><span class=swatch style='background:{_COLOURS[name]}'></span>"
        f"{_e(name)} <b>{counts[name]}</b></li>"
        for name in order
        if counts.get(name)
    )
    label = _e(title)
    return (
        f"<figure><figcaption>{label}</figcaption>"
        f"<svg role=img aria-label='{label}' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}'>{''.join(parts)}</svg>"
        f"<ul class=legend>{legend}</ul></figure>"
    )


def _filters(tally: _Tally) -> str:
    verdicts = set(tally.verdicts)
    severities = tally.present

    def boxes(name: str, order: tuple[str, ...], present: set[str]) -> str:
        return "".join(
            f"<label><input type=checkbox name={name} value='{_e(value)}' checked> "
            f"{_e(value)}</label>"
            for value in order
            if value in present
        )

    return (
        "<form class=filters aria-label=Filters>"
        f"<fieldset><legend>Verdict</legend>{boxes('verdict', VERDICT_ORDER, verdicts)}"
        "</fieldset>"
        f"<fieldset><legend>Worst finding</legend>"
        f"{boxes('severity', SEVERITY_ORDER, severities)}</fieldset>"
        "<p class=shown aria-live=polite></p></form>"
    )


def _card(result: ReferenceResult) -> str:
    verdict = _shown_verdict(result)
    severity = result.worst_severity or "none"
    where = ":".join(str(p) for p in (display_path(result.file), result.line) if p)
    reference = result.reference
    cited = " · ".join(
        str(part)
        for part in (reference.title or reference.free_text, reference.venue, reference.year)
        if part
    )
    failed = sorted(name for name, st in result.sources.items() if st.state == "failed")
    findings = "".join(_finding(f, failed) for f in result.findings)
    links = _links(result.matched, result.integrity, reference.doi)
    bibtex = ""
    corrected = _corrected_bibtex(result)
    if corrected:
        bibtex = (
            "<div class=bibtex><h4>Corrected BibTeX</h4>"
            "<button type=button class=copy>Copy</button>"
            f"<pre><code>{_e(corrected.rstrip())}</code></pre></div>"
        )
    return (
        f"<article class=ref id='ref-{_e(result.key)}' data-verdict='{_e(verdict)}' "
        f"data-severity='{severity}'>"
        f"<header><span class='badge v-{_slug(verdict)}'>{_e(verdict)}</span> "
        f"<b class=key>{_e(result.key)}</b> <span class=where>{_e(where)}</span>"
        f"{'<span class=fails>fails the run</span>' if result.failing else ''}</header>"
        f"<p class=cited>{_e(cited)}</p>"
        f"{f'<ul class=findings>{findings}</ul>' if findings else ''}"
        f"{links}{bibtex}</article>"
    )


def _corrected_bibtex(result: ReferenceResult) -> str | None:
    """The entry `refaudit fix` would write, for references whose metadata is wrong."""
    if result.verdict != "mismatch" or result.matched is None:
        return None
    if result.corrected_bibtex:
        return result.corrected_bibtex
    from refaudit.bibtex import corrected_entry

    return corrected_entry(result.reference, result.matched, list(result.findings))


def _finding(finding: ReportedFinding, failed: list[str]) -> str:
    marks = []
    if finding.failing:
        marks.append("<span class=fails>fails</span>")
    if finding.baselined:
        marks.append("<span class=tag>baseline</span>")
    if finding.suppressed:
        marks.append(f"<span class=tag>suppressed: {_e(finding.suppressed)}</span>")
    evidence = " ".join(p for p in (finding.source, finding.record) if p)
    message = finding.message
    if finding.code == "unverified" and failed:
        # The summary names each failing source once; the card says which ones.
        message = f"unverified (sources down: {', '.join(failed)})"
    compare = ""
    if finding.cited is not None:
        cited, found = _word_diff(finding.cited or "", finding.found or "")
        compare = (
            "<table class=compare><tr><th>cited</th><th>found</th></tr>"
            f"<tr><td>{cited or '—'}</td><td>{found or '—'}</td></tr></table>"
        )
    return (
        f"<li class='finding s-{finding.severity}'>"
        f"<span class='sev s-{finding.severity}'>{finding.severity}</span> "
        f"<code>{_e(finding.code)}</code> {_e(message)} {' '.join(marks)}"
        f"{f'<span class=evidence>{_e(evidence)}</span>' if evidence else ''}{compare}</li>"
    )


def _word_diff(cited: str, found: str) -> tuple[str, str]:
    """Both values escaped, with the words only one side has marked."""
    left, right = _WORD.findall(cited), _WORD.findall(found)
    matcher = difflib.SequenceMatcher(
        a=[w.casefold() for w in left], b=[w.casefold() for w in right]
    )
    cited_html: list[str] = []
    found_html: list[str] = []
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        old, new = " ".join(left[a1:a2]), " ".join(right[b1:b2])
        if tag == "equal":
            cited_html.append(_e(old))
            found_html.append(_e(new))
            continue
        if old:
            cited_html.append(f"<del>{_e(old)}</del>")
        if new:
            found_html.append(f"<ins>{_e(new)}</ins>")
    return " ".join(cited_html), " ".join(found_html)


def _links(matched: Work | None, notices: list[Notice], cited_doi: str | None) -> str:
    links = []
    if cited_doi:
        links.append(_link(f"https://doi.org/{cited_doi}", f"cited DOI {cited_doi}"))
    if matched is not None:
        if matched.doi and matched.doi.lower() != (cited_doi or "").lower():
            links.append(_link(f"https://doi.org/{matched.doi}", f"DOI {matched.doi}"))
        record = record_url(matched)
        if record:
            links.append(_link(record, f"{matched.source} record"))
    for notice in notices:
        label = f"{notice.kind.value.replace('_', ' ')} notice {notice.date or ''}".strip()
        if notice.notice_doi:
            links.append(_link(f"https://doi.org/{notice.notice_doi}", label))
        else:
            links.append(f"<span>{_e(label)}</span>")
    return f"<p class=links>{' · '.join(links)}</p>" if links else ""


def record_url(work: Work) -> str | None:
    """Where a person can see the record the verdict rests on (its own page, else its DOI).

    A record carries its own source's native id, so the first id present names the page.
    """
    if work.url and work.url.startswith(("https://", "http://")):
        return work.url
    pages = (
        (work.openalex_id, "https://openalex.org/{}"),
        (work.s2_id, "https://www.semanticscholar.org/paper/{}"),
        (work.dblp_key, "https://dblp.org/rec/{}"),
        (work.pmid, "https://pubmed.ncbi.nlm.nih.gov/{}/"),
        (work.arxiv_id, "https://arxiv.org/abs/{}"),
        (work.doi, "https://doi.org/{}"),
    )
    return next((page.format(native) for native, page in pages if native), None)


def _link(url: str, text: str) -> str:
    return f"<a href='{_e(url)}' rel=noreferrer>{_e(text)}</a>"


def _slug(text: str) -> str:
    return text.replace(" ", "-")


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


_STYLE = """
:root { --fg:#1d1f23; --muted:#5f6670; --line:#d8dce2; --bg:#fff; --soft:#f4f6f8; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
  background: var(--bg); margin: 0 auto; max-width: 72rem; padding: 1.5rem; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
h2 { display: inline; font-size: 1.2rem; margin: 0; }
h4 { margin: .5rem 0 .25rem; font-size: .9rem; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: .88em; }
.meta, .purpose, .where, .evidence { color: var(--muted); }
.purpose { margin-left: .5rem; font-size: .9rem; }
.summary { border: 1px solid var(--line); border-radius: 8px; padding: 1rem; margin: 1rem 0; }
.outcome { font-weight: 600; margin: 0 0 .5rem; }
.outcome.fail { color: #b3261e; } .outcome.pass { color: #2f7d32; }
.outcome.warn { color: #7b4fa0; }
.charts { display: flex; flex-wrap: wrap; gap: 2rem; }
figure { margin: 0; } figcaption { font-size: .85rem; color: var(--muted); }
.legend { list-style: none; padding: 0; margin: .3rem 0 0; display: flex; flex-wrap: wrap;
  gap: .2rem .8rem; font-size: .85rem; }
.swatch { display: inline-block; width: .8em; height: .8em; border-radius: 2px;
  margin-right: .3em; }
.filters { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; position: sticky;
  top: 0; background: var(--bg); padding: .5rem 0; border-bottom: 1px solid var(--line);
  z-index: 1; }
.filters fieldset { border: 1px solid var(--line); border-radius: 6px; padding: .2rem .6rem; }
.filters label { margin-right: .6rem; white-space: nowrap; }
.group { margin: 1rem 0; } .group summary { cursor: pointer; padding: .3rem 0; }
.ref { border: 1px solid var(--line); border-left: 4px solid var(--line); border-radius: 6px;
  padding: .6rem .8rem; margin: .6rem 0; break-inside: avoid; }
.ref[data-severity=error] { border-left-color: #b3261e; }
.ref[data-severity=warning] { border-left-color: #e8a317; }
.ref[data-severity=info] { border-left-color: #2b6cb0; }
.key { font-family: ui-monospace, Menlo, monospace; }
.cited { margin: .3rem 0; }
.badge, .sev, .tag, .fails { display: inline-block; border-radius: 4px; padding: 0 .4em;
  font-size: .8rem; font-weight: 600; }
.badge { color: #fff; background: #8a8f98; }
.v-retracted { background: #b3261e; } .v-not-found { background: #d9480f; }
.v-mismatch { background: #e8a317; color: #1d1f23; } .v-unverified { background: #7b4fa0; }
.v-verified { background: #2f7d32; }
.sev.s-error { color: #b3261e; } .sev.s-warning { color: #9a6700; } .sev.s-info { color: #2b6cb0; }
.fails { background: #fde8e7; color: #b3261e; margin-left: .4rem; }
.tag { background: var(--soft); color: var(--muted); }
.findings { padding-left: 1.1rem; margin: .3rem 0; } .finding { margin: .25rem 0; }
.evidence { display: block; font-size: .85rem; }
.compare { border-collapse: collapse; margin: .3rem 0; width: 100%; table-layout: fixed; }
.compare th, .compare td { border: 1px solid var(--line); padding: .25rem .5rem; text-align: left;
  vertical-align: top; overflow-wrap: anywhere; }
.compare th { background: var(--soft); font-weight: 600; font-size: .8rem; width: 50%; }
del { background: #fde8e7; color: #8c1d18; text-decoration: line-through; }
ins { background: #e3f4e4; color: #1e5a22; text-decoration: none; font-weight: 600; }
.links a { margin-right: .2rem; white-space: nowrap; }
.bibtex { position: relative; }
.bibtex pre { background: var(--soft); padding: .6rem; border-radius: 6px; overflow-x: auto; }
.copy { position: absolute; right: .4rem; top: 1.9rem; font-size: .8rem; cursor: pointer; }
footer { margin-top: 2rem; font-size: .8rem; color: var(--muted); }
@media print {
  .filters, .copy { display: none !important; }
  body { max-width: none; padding: 0; font-size: 11pt; }
  .ref, .ref[hidden] { display: block !important; }
  .group[hidden] { display: block !important; }
  a { color: inherit; }
  a[href^="https://doi.org/"]::after { content: " (" attr(href) ")"; font-size: .8em; }
  details > summary { list-style: none; }
}
"""

_SCRIPT = """
(function () {
  "use strict";
  const form = document.querySelector("form.filters");
  function chosen(name) {
    return new Set(Array.from(form.querySelectorAll("input[name=" + name + "]:checked"),
      (box) => box.value));
  }
  function apply() {
    const verdicts = chosen("verdict");
    const severities = chosen("severity");
    let shown = 0;
    const cards = document.querySelectorAll("article.ref");
    cards.forEach((card) => {
      card.hidden = !(verdicts.has(card.dataset.verdict) && severities.has(card.dataset.severity));
      if (!card.hidden) shown += 1;
    });
    document.querySelectorAll("section.group").forEach((group) => {
      const visible = group.querySelectorAll("article.ref:not([hidden])").length;
      group.hidden = visible === 0;
      group.querySelector(".count").textContent = String(visible);
    });
    form.querySelector(".shown").textContent = shown + " of " + cards.length + " references shown";
  }
  form.addEventListener("change", apply);
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button.copy");
    if (!button) return;
    const text = button.parentElement.querySelector("pre").textContent;
    const done = () => { button.textContent = "Copied"; };
    const fallback = () => {
      const range = document.createRange();
      range.selectNodeContents(button.parentElement.querySelector("pre"));
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      button.textContent = "Selected: press Ctrl+C";
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, fallback);
    } else {
      fallback();
    }
  });
  apply();
})();
"""

_PAGE = """<!doctype html>
<html lang=en>
<head>
<meta charset=utf-8>
<meta name=viewport content="width=device-width, initial-scale=1">
<meta name=generator content=refaudit>
<title>{title}</title>
<style>{style}</style>
</head>
<body>
<header>{header}</header>
{summary}
{filters}
<main>
{sections}
</main>
<footer>{footer}</footer>
<script>{script}</script>
</body>
</html>
"""
