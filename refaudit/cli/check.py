"""`refaudit check`, `fix`, `baseline` and `config show`: audit, correct, and gate CI.

Each command reads its flags into Settings, runs the one pipeline
(`refaudit.audit.audit_paths`), and hands the report to a renderer or to
`refaudit.fix`. Exit codes are decided here and only here (docs/cli.md).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from refaudit.cli.common import (
    ExitCode,
    exit_when_unverified,
    fail,
    handle_errors,
    progress_bars,
)
from refaudit.cli.options import (
    NO_FLAGS,
    AllEntriesOption,
    AllowUnverifiedOption,
    ConfigOption,
    FailOnOption,
    FormatOption,
    OptionalValueCommand,
    OutputFormat,
    QuietOption,
    SettingsFlags,
    settings_options,
)

if TYPE_CHECKING:
    from refaudit.audit import BatchDone
    from refaudit.policy import Tally
    from refaudit.render import ReportStream


def register(app: typer.Typer) -> None:
    """Add `check`, `fix`, `baseline` and the `config` group to the app."""
    app.command("check", cls=OptionalValueCommand)(check_command)
    app.command("fix")(fix_command)
    app.command("baseline")(baseline_command)
    config_app = typer.Typer(help="Inspect refaudit's configuration.", no_args_is_help=True)
    config_app.command("show")(config_show_command)
    app.add_typer(config_app, name="config")


@handle_errors
@settings_options()
def check_command(
    files: Annotated[
        list[Path],
        typer.Argument(
            help=".bib, .tex, .bbl, .docx or .pdf files, a Zotero library (zotero:, "
            "zotero:collection/NAME, zotero://users/ID) or an arXiv paper (arXiv:ID).",
        ),
    ],
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            help="table, json, markdown, sarif, junit, github, gitlab or html.",
            metavar="FORMAT",
        ),
    ] = "table",
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write the report to this file instead of stdout."),
    ] = None,
    fail_on: FailOnOption = None,
    details: Annotated[
        bool, typer.Option("--details", help="Show cited vs correct value for every finding.")
    ] = False,
    quiet: QuietOption = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="List verified references too.")
    ] = False,
    flags: SettingsFlags = NO_FLAGS,
    all_entries: AllEntriesOption = False,
    baseline: Annotated[
        Path | None,
        typer.Option("--baseline", help="Fail only on findings not in this baseline file."),
    ] = None,
    require_verified: Annotated[
        float | None,
        typer.Option(
            "--require-verified",
            metavar="[FRACTION]",
            help="Exit 3 when more than FRACTION of the references are unverified (default 0.1).",
        ),
    ] = None,
    allow_unverified: AllowUnverifiedOption = False,
    check_urls: Annotated[
        bool,
        typer.Option(
            "--check-urls",
            help="Check that each web resource's URL still answers (never private addresses).",
        ),
    ] = False,
) -> None:
    """Audit references against Crossref, OpenAlex, Semantic Scholar, arXiv, DataCite,
    PubMed and DBLP, and screen them for retractions.

    Example: refaudit check refs.bib --format sarif -o refaudit.sarif
    """
    from refaudit.baseline import read_baseline
    from refaudit.policy import Tally
    from refaudit.render import FORMATS, RenderContext, outage_line, report_stream

    if output_format not in FORMATS:
        fail(f"unknown format {output_format!r}", hint=f"choose from {', '.join(FORMATS)}")
    if require_verified is not None and not 0 <= require_verified <= 1:
        fail("--require-verified takes a fraction between 0 and 1")
    if require_verified is not None and allow_unverified:
        fail("--require-verified and --allow-unverified contradict each other")
    settings = flags.settings(fail_on=fail_on, require_verified=require_verified)
    if allow_unverified:
        settings.require_verified = None
    settings.check_urls = check_urls
    if output is not None:
        from refaudit.safewrite import refuse_overwriting_inputs

        refuse_overwriting_inputs(output, [*files, *([baseline] if baseline else [])])
    known = read_baseline(baseline) if baseline else None
    context = RenderContext(
        fail_on=settings.fail_on, baseline=known, details=details, verbose=verbose, quiet=quiet
    )
    # Every format is written batch by batch as the audit goes, and only counts are
    # kept of the results (`Tally`), so a long bibliography's results are never all held.
    if output_format == "table" and output is None:
        from refaudit.cli.common import stdout_console
        from refaudit.render.table import TableStream

        stream: ReportStream = TableStream(context, stdout_console())
    else:
        stream = report_stream(output_format, context)
    tally = Tally(settings.fail_on, known)
    report = _audit(
        files, settings, all_entries=all_entries, quiet=quiet, on_batch=stream.add, tally=tally
    )
    outage = tally.nothing_answered()
    if outage and not tally.failing and output is None and output_format == "table":
        # The table would list every reference as unverified: one line says it all.
        typer.echo(f"error: {outage_line(report)}", err=True)
    else:
        _emit(report, output_format, context, output, stream)
        if outage:
            typer.echo(f"error: {outage_line(report)}", err=True)

    if tally.failing:
        raise typer.Exit(int(ExitCode.FLAGGED))
    share, allowed = tally.unverified_share(), settings.require_verified
    exit_when_unverified(share, allowed, set_by="--require-verified", said=outage)


@handle_errors
@settings_options("mirror")
def fix_command(
    file: Annotated[
        Path,
        typer.Argument(
            help="The .bib file to correct (or a .docx, .pdf or Zotero library: -o only)."
        ),
    ],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the corrected .bib here.")
    ] = None,
    in_place: Annotated[
        bool, typer.Option("--in-place", help="Rewrite FILE, keeping FILE.bak.")
    ] = False,
    diff: Annotated[
        bool, typer.Option("--diff", help="Print a unified diff instead of writing.")
    ] = False,
    add_ids: Annotated[
        bool, typer.Option("--add-ids", help="Also add missing DOIs to verified entries.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Allow -o to overwrite an existing file.")
    ] = False,
    quiet: QuietOption = False,
    flags: SettingsFlags = NO_FLAGS,
) -> None:
    """Write a corrected copy of a .bib file: mismatched entries replaced, the rest untouched.

    For a PDF, write its reference list as BibTeX to -o: identified works from their
    records, the others as printed.

    Example: refaudit fix refs.bib -o refs.fixed.bib
    """
    import difflib

    from refaudit.errors import InputError
    from refaudit.fix import apply_fixes, detect_encoding, verify_fix
    from refaudit.parsing.files import BIBTEX_SUFFIXES
    from refaudit.safewrite import (
        FileState,
        refuse_overwriting_inputs,
        rewrite_in_place,
        write_atomically,
    )

    modes = [
        name for name, on in (("-o", output), ("--in-place", in_place), ("--diff", diff)) if on
    ]
    if len(modes) != 1:
        fail(
            "choose exactly one of -o FILE, --in-place or --diff"
            + (f" (got {', '.join(modes)})" if modes else ""),
            hint="refaudit never overwrites a file you did not name",
        )
    if file.suffix.lower() not in BIBTEX_SUFFIXES:
        settings = flags.settings()
        _fix_to_new_file(
            file, output, settings, in_place=in_place, diff=diff, force=force, quiet=quiet
        )
        return
    if not file.is_file():
        raise InputError("file not found", file=str(file))
    if output is not None:
        if output.resolve() == file.resolve():
            fail("-o names the input file", hint="use --in-place to rewrite it (keeps a .bak)")
        if output.exists() and not force:
            fail(f"{output} already exists", hint="pass --force to overwrite it")

    state = FileState.read(file)
    encoding = detect_encoding(state.data)
    text = encoding.decode(state.data)
    settings = flags.settings()
    report = _audit_answered([file], settings, all_entries=True, quiet=quiet, unwritten=file)
    if output is not None:
        refuse_overwriting_inputs(output, [file, *map(Path, report.files)])
    outcome = apply_fixes(text, report, add_ids=add_ids)
    verify_fix(text, outcome, file=str(file))
    new = encoding.encode(outcome.text, file=str(file))

    backup = None
    if diff:
        lines = difflib.unified_diff(
            text.splitlines(keepends=True),
            outcome.text.splitlines(keepends=True),
            fromfile=str(file),
            tofile=f"{file} (fixed)",
        )
        typer.echo("".join(lines), nl=False)
    elif in_place:
        if new != state.data:
            backup = rewrite_in_place(state, new)
    elif output is not None:
        write_atomically(output, new)

    for change in outcome.changes:
        fields = f": {', '.join(change.fields)}" if change.fields else ""
        _note(f"{change.action} {change.key} (line {change.line}){fields}", quiet=quiet)
    for result, why in outcome.left:
        _note(f"left {result.reference.key} unchanged: {why}", quiet=quiet)
    for problem in report.problems:
        if problem.code == "parse-error" and problem.file == str(file):
            key = f" {problem.key}" if problem.key else " an entry"
            where = f"(line {problem.line}) as written, unchecked"
            _note(f"left{key} {where}: {problem.message}", quiet=quiet)
    if not outcome.changes:
        _note("nothing to correct", quiet=quiet)
    elif backup is not None:
        _note(f"rewrote {state.path} (original kept as {backup})", quiet=quiet)


def _fix_to_new_file(
    source: Path,
    output: Path | None,
    settings: Any,
    *,
    in_place: bool,
    diff: bool,
    force: bool,
    quiet: bool,
) -> None:
    """A Word file, a PDF or a Zotero library cannot be rewritten: its references,
    corrected, go to a new .bib the user names."""
    from refaudit.bibtex import entries_of_results
    from refaudit.parsing.bibtex import parse_bibtex
    from refaudit.parsing.files import PDF_SUFFIXES, WORD_SUFFIXES
    from refaudit.remote import is_remote
    from refaudit.safewrite import refuse_overwriting_inputs, write_atomically

    if not (is_remote(str(source)) or source.suffix.lower() in WORD_SUFFIXES + PDF_SUFFIXES):
        fail(f"{source}: fix works on .bib files", hint="run `refaudit check` on other inputs")
    if in_place or diff or output is None:
        fail(
            f"{source}: refaudit cannot write into this input",
            hint="name a new .bib for the corrected references with -o FILE",
        )
    if output.exists() and not force:
        fail(f"{output} already exists", hint="pass --force to overwrite it")
    refuse_overwriting_inputs(output, [source])
    report = _audit([source], settings, all_entries=True, quiet=quiet)
    text = entries_of_results(report.results)
    written = len(parse_bibtex(text, file=str(output)).references)
    if written != len(report.results):
        fail(f"the corrected BibTeX re-reads as {written} entries, not {len(report.results)}")
    write_atomically(output, text.encode("utf-8"))
    corrected = sum(1 for r in report.results if r.corrected_bibtex)
    _note(
        f"wrote {len(report.results)} entries to {output} ({corrected} checked against "
        "a record, the others as cited)",
        quiet=quiet,
    )


@handle_errors
@settings_options("mirror")
def baseline_command(
    files: Annotated[list[Path], typer.Argument(help="Inputs to audit, as for `check`.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where to write the baseline.")
    ] = Path(".refaudit-baseline.json"),
    all_entries: AllEntriesOption = False,
    quiet: QuietOption = False,
    flags: SettingsFlags = NO_FLAGS,
) -> None:
    """Record today's findings so `check --baseline` fails only on new ones.

    Example: refaudit baseline refs.bib -o .refaudit-baseline.json
    """
    from refaudit.baseline import build_baseline, write_baseline
    from refaudit.safewrite import refuse_overwriting_inputs

    refuse_overwriting_inputs(output, files)
    settings = flags.settings()
    report = _audit_answered(
        files, settings, all_entries=all_entries, quiet=quiet, unwritten=output
    )
    refuse_overwriting_inputs(output, map(Path, report.files))
    known = build_baseline(report)
    write_baseline(known, output)
    _note(f"wrote {len(known.known)} known finding(s) to {output}", quiet=quiet)


@handle_errors
def config_show_command(
    output_format: FormatOption = OutputFormat.TABLE,
    config: ConfigOption = None,
) -> None:
    """Print the effective configuration (secrets masked) and where each value comes from.

    Example: refaudit config show --format json
    """
    import json

    from refaudit.config import load_settings, setting_origins

    settings = load_settings(config_path=config)
    values = settings.masked()
    origins = setting_origins(config_path=config)
    if output_format == "json":
        data = {"settings": values, "origins": origins}
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
        return
    from rich.table import Table

    from refaudit.cli.common import stdout_console

    table = Table(title="refaudit configuration", title_justify="left")
    table.add_column("setting", style="bold")
    table.add_column("value", overflow="fold")
    table.add_column("from", style="dim")
    for key, value in values.items():
        shown = value if isinstance(value, str) else json.dumps(value, default=str)
        table.add_row(key, shown, origins.get(key, ""))
    stdout_console().print(table)


def _audit(
    files: list[Path],
    settings: Any,
    *,
    all_entries: bool,
    quiet: bool,
    on_batch: BatchDone | None = None,
    tally: Tally | None = None,
) -> Any:
    """Run the pipeline, with a progress bar only for a person watching a terminal."""
    import asyncio

    from refaudit import audit
    from refaudit.errors import InputError
    from refaudit.remote import is_remote

    for path in files:
        if is_remote(str(path)):
            continue
        if not path.exists():
            raise InputError("file not found", file=str(path))
        if path.is_dir():
            raise InputError("is a directory, not a bibliography file", file=str(path))
    with progress_bars(quiet, _rich_progress) as progress:
        return asyncio.run(
            audit.audit_paths(
                files,
                settings,
                all_entries=all_entries,
                progress=progress,
                on_batch=on_batch,
                tally=tally,
            )
        )


def _audit_answered(
    files: list[Path], settings: Any, *, all_entries: bool, quiet: bool, unwritten: Path
) -> Any:
    """The audit behind a file refaudit writes; exit 3, writing nothing, when no source answered.

    Every reference of such a run is unverified: a baseline of outages would replace the
    committed one, and a .bib fix would report "nothing to correct". (A document's
    references still go to a new .bib as printed: that needs no source.)
    """
    from refaudit.policy import Tally
    from refaudit.render import outage_line

    tally = Tally(settings.fail_on, None)
    report = _audit(files, settings, all_entries=all_entries, quiet=quiet, tally=tally)
    if tally.nothing_answered():
        typer.echo(f"error: {outage_line(report)}", err=True)
        typer.echo(f"hint: {unwritten} not written; run again when the sources answer", err=True)
        raise typer.Exit(int(ExitCode.INCOMPLETE))
    return report


@contextlib.contextmanager
def _rich_progress() -> Iterator[Callable[[int, int | None], None]]:
    from rich.progress import BarColumn, MofNCompleteColumn, TimeElapsedColumn

    from refaudit.cli.common import task_progress

    columns = ("checking references", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with task_progress("check", *columns) as update:
        yield update


def _emit(report: Any, output_format: str, context: Any, output: Path | None, stream: Any) -> None:
    """Print the report (the table in colour on a terminal) or write it to `output`.

    `stream` is the `ReportStream` that rendered the report's results as they came.
    """
    if output is None and output_format == "table":
        stream.print(report)
        return
    if output is None:
        stream.write(report, lambda piece: typer.echo(piece, nl=False))
        return
    from refaudit.render.table import outcome_lines, summary_lines
    from refaudit.safewrite import refuse_overwriting_inputs, write_atomically_with

    refuse_overwriting_inputs(output, map(Path, report.files))
    write_atomically_with(
        output, lambda out: stream.write(report, lambda piece: out.write(piece.encode("utf-8")))
    )

    # A CI log shows stderr only: it still says what fails and why.
    _note(f"wrote {output_format} report to {output}", quiet=context.quiet)
    for line in summary_lines(report, context)[:1]:
        _note(line, quiet=context.quiet)
    for line, _style in outcome_lines(report, context):
        typer.echo(line, err=True)


def _note(message: str, *, quiet: bool) -> None:
    """An informational line on stderr (stdout stays machine-readable)."""
    if not quiet:
        typer.echo(message, err=True)
