"""`refaudit lsp`: a language server (pygls, stdio) for .bib, .tex and .bbl files.

A thin layer over the one pipeline (`refaudit.audit.audit_paths`): a document is
audited when it is opened or saved, never per keystroke, in a background task with
the persistent response cache (so reopening a file sends no request). A newer audit
of the same document cancels the one under way, and only the newest publishes.
Findings become diagnostics on the entry's lines; hover shows the verdict and its
evidence; code actions apply the corrections `refaudit fix` would make.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls import uris
from pygls.lsp.server import LanguageServer

from refaudit.audit import audit_paths
from refaudit.config import Settings
from refaudit.errors import RefauditError
from refaudit.integrations.locate import (
    Edit,
    Position,
    Span,
    citations,
    entry_spans,
    fix_all_edits,
    fix_edit,
    key_at,
    line_span,
)
from refaudit.models import AuditReport, InputProblem, Result, Verdict
from refaudit.policy import report_tally
from refaudit.render.common import (
    RenderContext,
    Row,
    failed_sources_text,
    finding_message,
    outage_line,
    rows,
    shown_verdict,
    with_comparison,
)
from refaudit.render.html import record_url
from refaudit.render.sarif import DOCS
from refaudit.version import installed_version

SUFFIXES = (".bib", ".tex", ".bbl")
#: What texlab reports too, by the name an editor's configuration uses to turn it off.
TEXLAB_RULES: dict[str, frozenset[str]] = {
    "syntax": frozenset({"parse-error", "duplicate-key", "duplicate-field", "undefined-macro"}),
    "undefined-citation": frozenset({"undefined-citation"}),
    "unused-entry": frozenset({"uncited-entry"}),
}
#: Where the input problems' codes are explained (one table).
PROBLEMS = DOCS.removesuffix("verdicts.md") + "inputs.md#problems"
_SEVERITIES = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}


@dataclass
class Options:
    """What the editor asks for (`initializationOptions`, or `settings.refaudit` of
    workspace/didChangeConfiguration): rule groups or finding codes to leave out."""

    ignore: frozenset[str] = frozenset()

    @staticmethod
    def given(data: Any) -> bool:
        """Whether `data` holds refaudit's options: a `refaudit` section, or the options
        themselves (Helix sends its `config` as they are); `texlab` as a section of its
        own is that server's settings."""
        if not isinstance(data, dict):
            return False
        if isinstance(data.get("refaudit"), dict):
            return True
        return isinstance(data.get("ignore"), list) or data.get("texlab") is True

    @classmethod
    def read(cls, data: Any) -> Options:
        if not isinstance(data, dict):
            return cls()
        data = data.get("refaudit", data)
        names = data.get("ignore") if isinstance(data, dict) else None
        words = {str(name) for name in names} if isinstance(names, list) else set()
        if isinstance(data, dict) and data.get("texlab") is True:
            words |= set(TEXLAB_RULES)
        codes = set(words)
        for group in words & set(TEXLAB_RULES):
            codes |= TEXLAB_RULES[group]
        return cls(frozenset(codes))


@dataclass
class DocumentAudit:
    """The newest finished audit of one open document."""

    report: AuditReport
    published: set[str] = field(default_factory=set)
    """the URIs this audit put diagnostics on (a .tex file's go on its .bib files too)"""

    def by_key(self) -> dict[str, Result]:
        found: dict[str, Result] = {}
        for result in self.report.results:
            found.setdefault(result.reference.key, result)
        return found


class RefauditServer(LanguageServer):
    """The server's state: settings, options, each document's audit task and last report."""

    def __init__(self, settings: Settings) -> None:
        super().__init__("refaudit", installed_version())
        self.settings = settings
        self.options = Options()
        self.context = RenderContext(fail_on=list(settings.fail_on))
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.audits: dict[str, DocumentAudit] = {}
        self._tokens = itertools.count(1)

    # -- auditing -------------------------------------------------------------

    def schedule(self, uri: str) -> None:
        """Audit `uri` in the background, cancelling an audit of it still under way."""
        path = Path(uris.to_fs_path(uri) or "")
        if path.suffix.lower() not in SUFFIXES or not path.is_file():
            return  # a new buffer not saved yet: its first save audits it
        stale = self.tasks.pop(uri, None)
        if stale is not None and not stale.done():
            stale.cancel()
            self.window_log_message(
                types.LogMessageParams(
                    types.MessageType.Log, f"refaudit: a newer audit of {path.name} replaces one"
                )
            )
        task = asyncio.ensure_future(self._audit_or_say_why(uri, path))
        self.tasks[uri] = task

    async def _audit_or_say_why(self, uri: str, path: Path) -> None:
        """A background task's error is otherwise lost, and the editor waits for
        diagnostics that never come: say that the audit failed; the log has the trace."""
        try:
            await self._audit(uri, path)
        except Exception as exc:  # a cancellation is no Exception: it passes through
            self.window_log_message(
                types.LogMessageParams(types.MessageType.Error, traceback.format_exc())
            )
            self._say(
                types.MessageType.Error,
                f"refaudit: could not audit {path.name} ({type(exc).__name__}: {exc}); "
                "the language server's log has the details",
            )

    async def _audit(self, uri: str, path: Path) -> None:
        with self._progress(path) as progress:
            try:
                report = await audit_paths([path], self.settings, progress=progress)
            except RefauditError as exc:
                if self.tasks.get(uri) is asyncio.current_task():
                    hint = f" — {exc.hint}" if exc.hint else ""  # the next step, as `check` shows
                    self._say(types.MessageType.Error, f"refaudit: {exc}{hint}")
                return
        if self.tasks.get(uri) is not asyncio.current_task():
            return  # a newer audit of this document has started; it publishes
        previous = self.audits.get(uri)
        audit = DocumentAudit(report)
        self.audits[uri] = audit
        self.publish(uri, audit, previous.published if previous else set())
        self._report_unverified(path, report)

    @contextlib.contextmanager
    def _progress(self, path: Path) -> Iterator[Any]:
        """`$/progress` for one audit when the client takes it, else nothing."""
        window = self.client_capabilities.window
        if not (window and window.work_done_progress):
            yield None
            return
        token = f"refaudit-{next(self._tokens)}"
        self.window_work_done_progress_create(types.WorkDoneProgressCreateParams(token=token))
        self.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(title="refaudit", message=path.name, percentage=0)
        )

        def update(done: int, total: int) -> None:
            share = round(100 * done / total) if total else 0
            message = f"{path.name}: {done}/{total} references"
            self.work_done_progress.report(
                token, types.WorkDoneProgressReport(message=message, percentage=share)
            )

        try:
            yield update
        finally:
            self.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))

    def _report_unverified(self, path: Path, report: AuditReport) -> None:
        """Say plainly when references could not be checked: they are neither cleared nor
        flagged, and a diagnostic alone reads like a verdict."""
        tally = report_tally(report)
        unverified = tally.verdicts[Verdict.UNVERIFIED]
        if not unverified:
            return
        if tally.nothing_answered():
            message = f"refaudit: {path.name}: {outage_line(report)}"
        else:
            reasons = "; ".join(
                sorted(
                    {failed_sources_text(r) for r in report.results if r.verdict == "unverified"}
                    - {""}
                )
            )
            message = (
                f"refaudit: {unverified} of {tally.checked} reference(s) in {path.name} are "
                "unverified: no source could check them, so they are neither cleared nor "
                "flagged" + (f" ({reasons})" if reasons else "")
            )
        self._say(types.MessageType.Warning, message)

    def _say(self, kind: types.MessageType, message: str) -> None:
        self.window_show_message(types.ShowMessageParams(kind, message))

    # -- diagnostics ----------------------------------------------------------

    def publish(self, uri: str, audit: DocumentAudit, before: set[str]) -> None:
        """Put the audit's diagnostics on every file it covers; clear those it no longer has."""
        found = self.diagnostics(audit.report)
        found.setdefault(uri, [])
        if uri.lower().endswith(".tex"):
            found[uri] += self.at_citations(uri, audit.report)
        for target in before - set(found):
            found[target] = []
        for target, diagnostics in found.items():
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=target, diagnostics=diagnostics)
            )
        audit.published = {target for target, items in found.items() if items} | {uri}

    def diagnostics(self, report: AuditReport) -> dict[str, list[types.Diagnostic]]:
        """The report's findings and input problems as diagnostics, by file URI."""
        found: dict[str, list[types.Diagnostic]] = {}
        spans: dict[str, dict[str, Span]] = {}

        def entries(uri: str, file: str) -> dict[str, Span]:
            if uri not in spans:
                spans[uri] = entry_spans(self._text(uri), Path(file))
            return spans[uri]

        for result in report.results:
            file = result.reference.file
            if not file:
                continue
            uri = uris.from_fs_path(str(Path(file).resolve())) or file
            where = entries(uri, file).get(result.reference.key) or line_span(
                self._text(uri), result.reference.line or 1
            )
            for row in rows(result, self.context):
                if row.finding.suppressed or row.finding.code in self.options.ignore:
                    continue
                found.setdefault(uri, []).append(_diagnostic(row, where))
        for problem in report.problems:
            if problem.code in self.options.ignore or not problem.file:
                continue
            uri = uris.from_fs_path(str(Path(problem.file).resolve())) or problem.file
            where = line_span(self._text(uri), problem.line or 1)
            entry = entries(uri, problem.file).get(problem.key or "")
            if entry is not None and entry.start.line == where.start.line:
                where = entry  # the entry the problem is about, not another of its key
            found.setdefault(uri, []).append(_problem(problem, where))
        return found

    def at_citations(self, uri: str, report: AuditReport) -> list[types.Diagnostic]:
        """In the paper itself, each citation of a reference that fails the run, where the
        author writes; the related information points to the entry."""
        cited = citations(self._text(uri))
        found: list[types.Diagnostic] = []
        entries: dict[str, dict[str, Span]] = {}
        for result in report.results:
            file, key = result.reference.file, result.reference.key
            failing = [
                row
                for row in rows(result, self.context)
                if row.failing
                and not row.finding.suppressed
                and row.finding.code not in self.options.ignore
            ]
            if not file or key not in cited or not failing:
                continue
            source = uris.from_fs_path(str(Path(file).resolve())) or file
            if source not in entries:
                entries[source] = entry_spans(self._text(source), Path(file))
            entry = entries[source].get(key) or line_span(
                self._text(source), result.reference.line or 1
            )
            where = types.Location(uri=source, range=_range(entry))
            for row in failing:
                for span in cited[key]:
                    diagnostic = _diagnostic(row, span)
                    diagnostic.related_information = [
                        types.DiagnosticRelatedInformation(where, f"the entry in {Path(file).name}")
                    ]
                    found.append(diagnostic)
        return found

    def _text(self, uri: str) -> str:
        """The document as the editor holds it, else as saved."""
        document = self.workspace.text_documents.get(uri)
        if document is not None:
            return document.source
        path = uris.to_fs_path(uri)
        try:
            return Path(path or uri).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    # -- hover and code actions ----------------------------------------------

    def result_at(self, uri: str, at: Position) -> Result | None:
        """The result for the key under the cursor: from this document's audit, else from any
        audit that covered this file (a .bib file a paper cites)."""
        path = Path(uris.to_fs_path(uri) or uri)
        key = key_at(self._text(uri), path, at)
        if key is None:
            return None
        own = self.audits.get(uri)
        if own is not None and key in own.by_key():
            return own.by_key()[key]
        return self.results_in(path).get(key)

    def results_in(self, path: Path) -> dict[str, Result]:
        """The newest result of each entry of `path`, from every audit that read it."""
        wanted = path.resolve()
        found: dict[str, Result] = {}
        for audit in self.audits.values():
            for result in audit.report.results:
                file = result.reference.file
                if file and Path(file).resolve() == wanted:
                    found.setdefault(result.reference.key, result)
        return found

    def code_actions(
        self, uri: str, span: Span, shown: Sequence[types.Diagnostic] = ()
    ) -> list[types.CodeAction]:
        """Per entry in `span`, its correction (naming the diagnostics of `shown` it
        resolves); and one action correcting the whole file."""
        path = Path(uris.to_fs_path(uri) or uri)
        if path.suffix.lower() != ".bib":
            return []
        text = self._text(uri)
        results = self.results_in(path)
        entries = entry_spans(text, path)
        actions = []
        for key, result in results.items():
            entry = entries.get(key)
            if entry is None or not _overlaps(entry, span):
                continue
            edit = fix_edit(text, result)
            if edit is not None:
                what = "add the DOI to" if edit.action == "added-ids" else "correct"
                fields = f" ({', '.join(edit.fields)})" if edit.fields else ""
                action = _action(f"refaudit: {what} {key}{fields}", uri, [edit])
                action.diagnostics = [d for d in shown if _key_of(d) == key] or None
                actions.append(action)
        every = fix_all_edits(text, list(results.values()))
        if every:
            title = f"refaudit: correct all {len(every)} mismatched entries in {path.name}"
            actions.append(_action(title, uri, every, kind=types.CodeActionKind.SourceFixAll))
        return actions


def _key_of(diagnostic: types.Diagnostic) -> str | None:
    data = diagnostic.data if diagnostic.source == "refaudit" else None
    return str(data.get("key")) if isinstance(data, dict) else None


def _overlaps(entry: Span, span: Span) -> bool:
    return (entry.start.line, entry.start.character) <= (span.end.line, span.end.character) and (
        span.start.line,
        span.start.character,
    ) <= (entry.end.line, entry.end.character)


def _range(span: Span) -> types.Range:
    return types.Range(
        start=types.Position(span.start.line, span.start.character),
        end=types.Position(span.end.line, span.end.character),
    )


def _problem(problem: InputProblem, where: Span) -> types.Diagnostic:
    return types.Diagnostic(
        range=_range(where),
        message=problem.message,
        severity=_SEVERITIES.get(problem.severity, types.DiagnosticSeverity.Warning),
        code=problem.code,
        code_description=types.CodeDescription(href=PROBLEMS),
        source="refaudit",
    )


def _diagnostic(row: Row, where: Span) -> types.Diagnostic:
    finding, result = row.finding, row.result
    message = with_comparison(
        f"{result.reference.key}: {finding_message(result, finding)}", finding, sourced=""
    )
    link = record_url(result.matched) if result.matched else None
    if link and result.matched is not None:
        # Editors show the message, not `data`: the record the verdict rests on, linked.
        message += f" — {result.matched.source}: {link}"
    return types.Diagnostic(
        range=_range(where),
        message=message,
        severity=_SEVERITIES[finding.severity],
        code=finding.code,
        code_description=types.CodeDescription(href=f"{DOCS}#{finding.code}"),
        source="refaudit",
        data={
            "key": result.reference.key,
            "verdict": result.verdict.value,
            "fails": row.failing,
            "record": " ".join(p for p in (finding.source, finding.record) if p) or None,
            "url": link,
        },
    )


def _action(
    title: str,
    uri: str,
    edits: list[Edit],
    kind: types.CodeActionKind = types.CodeActionKind.QuickFix,
) -> types.CodeAction:
    changes = [types.TextEdit(range=_range(edit.span), new_text=edit.text) for edit in edits]
    return types.CodeAction(
        title=title, kind=kind, edit=types.WorkspaceEdit(changes={uri: changes})
    )


def hover_text(result: Result, context: RenderContext) -> str:
    """The verdict and its evidence, as Markdown."""
    lines = [f"**refaudit: {shown_verdict(result)}** `{result.reference.key}`"]
    if context.fails(result):
        lines[0] += " — fails the run (`--fail-on " + ",".join(context.fail_on) + "`)"
    if result.matched is not None:
        work = result.matched
        link = record_url(work)
        said = ", ".join(str(p) for p in (work.title, work.year, work.venue) if p)
        lines.append(f"\nrecord ({work.source}): {said}" + (f" — [{link}]({link})" if link else ""))
    items = [row for row in rows(result, context) if not row.finding.suppressed]
    if items:
        lines.append("")
    for row in items:
        finding = row.finding
        line = f"- `{finding.code}` ({finding.severity}): {finding_message(result, finding)}"
        compared = " — cited *{cited}*, correct *{found}*"
        lines.append(with_comparison(line, finding, compared=compared, sourced=" ({evidence})"))
    for notice in result.integrity:
        label = notice.label or notice.kind
        lines.append(f"- notice: {label} {notice.date or ''} {notice.notice_doi or ''}".rstrip())
    return "\n".join(lines)


def build_server(settings: Settings) -> RefauditServer:
    """The server with its handlers (a function, so tests and the command build the same)."""
    server = RefauditServer(settings)

    @server.feature(types.INITIALIZE)
    def initialize(ls: RefauditServer, params: types.InitializeParams) -> None:
        ls.options = Options.read(params.initialization_options)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RefauditServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: RefauditServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RefauditServer, params: types.DidCloseTextDocumentParams) -> None:
        task = ls.tasks.pop(params.text_document.uri, None)
        if task is not None:
            task.cancel()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(
        ls: RefauditServer, params: types.DidChangeConfigurationParams
    ) -> None:
        if not Options.given(params.settings):
            # Editors send every server all their settings, or none (Neovim's empty
            # table): without refaudit's own, the initialization options stand.
            return
        ls.options = Options.read(params.settings)
        for uri, audit in ls.audits.items():
            ls.publish(uri, audit, audit.published)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: RefauditServer, params: types.HoverParams) -> types.Hover | None:
        at = Position(params.position.line, params.position.character)
        result = ls.result_at(params.text_document.uri, at)
        if result is None:
            return None
        return types.Hover(
            contents=types.MarkupContent(
                kind=types.MarkupKind.Markdown, value=hover_text(result, ls.context)
            )
        )

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll]
        ),
    )
    def code_action(ls: RefauditServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        start, end = params.range.start, params.range.end
        span = Span(Position(start.line, start.character), Position(end.line, end.character))
        return ls.code_actions(params.text_document.uri, span, params.context.diagnostics)

    return server
