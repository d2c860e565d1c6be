"""What every command shares: exit codes, consoles, errors as messages, tables.

Only the CLI maps outcomes to exit codes; library code returns data or raises. The
options several commands take are in `refaudit.cli.options`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, NoReturn, TypeVar

import typer
from typer.core import TyperGroup

from refaudit.errors import RefauditError

F = TypeVar("F", bound=Callable[..., Any])


class ExitCode(enum.IntEnum):
    """Documented in docs/cli.md."""

    CLEAN = 0
    FLAGGED = 1
    USAGE = 2
    INCOMPLETE = 3
    INTERNAL = 4


def progress_bars(
    quiet: bool, bars: Callable[[], AbstractContextManager[Any]]
) -> AbstractContextManager[Any]:
    """`bars()` for a person watching a terminal; a context yielding None for anyone else."""
    if quiet or os.environ.get("CI") or not sys.stderr.isatty():
        return contextlib.nullcontext(None)
    return bars()


def stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True, no_color=bool(os.environ.get("NO_COLOR")) or None, soft_wrap=True)


@contextlib.contextmanager
def task_progress(task: str, *columns: Any) -> Iterator[Callable[[int, int | None], None]]:
    """One task's progress bar (`columns`) on stderr, gone once it is done; yields the
    `update(done, total)` that moves it (a total of None: not known yet)."""
    from rich.progress import Progress

    with Progress(*columns, console=stderr_console(), transient=True) as progress:
        handle = progress.add_task(task, total=None)

        def update(done: int, total: int | None) -> None:
            progress.update(handle, completed=done, total=total)

        yield update


def stdout_console() -> Any:
    from rich.console import Console

    # Lines of text never wrap (a piped log line stays one line); tables fit the width.
    return Console(no_color=bool(os.environ.get("NO_COLOR")) or None, soft_wrap=True)


def print_error(message: str, *, hint: str | None = None) -> None:
    """The one style every error takes on stderr: `error: …` and an optional `hint: …`."""
    from rich.markup import escape

    console = stderr_console()
    # Messages carry file names and citation keys ("[smith2020]"): never read them as markup.
    console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True)
    if hint:
        console.print(f"[dim]hint:[/] {escape(hint)}", highlight=False)


def print_note(message: str) -> None:
    """A note on stderr beside a result (why a search found little, a source that failed):
    `note: …`, the message never read as markup."""
    from rich.markup import escape

    stderr_console().print(f"[yellow]note:[/] {escape(message)}", highlight=False)


def fail(message: str, *, hint: str | None = None, code: ExitCode = ExitCode.USAGE) -> NoReturn:
    """Print a one-line error (and hint) to stderr and exit; never a traceback."""
    print_error(message, hint=hint)
    raise typer.Exit(int(code))


def exit_when_unverified(
    share: float, allowed: float | None, *, set_by: str, said: bool = False
) -> None:
    """Exit 3 when more than `allowed` of the checked references are unverified (None: any
    share is accepted, `--allow-unverified`). `set_by` names where the user sets `allowed`;
    `said`: the outage line already told why."""
    if allowed is None or share <= allowed:
        return
    if not said:
        typer.echo(
            f"exit 3: {share:.0%} of the references are unverified, more than the "
            f"{allowed:.0%} allowed ({set_by} {allowed:g}; --allow-unverified accepts an "
            "incomplete audit)",
            err=True,
        )
    raise typer.Exit(int(ExitCode.INCOMPLETE))


def _click_exception(name: str) -> type[Exception]:
    """One of click's exception classes, whether Typer uses click or its vendored copy.

    Typer re-exports `BadParameter` but not its bases, so the bases are found through it.
    """
    return next(cls for cls in typer.BadParameter.__mro__ if cls.__name__ == name)


_UsageError = _click_exception("UsageError")
_ClickException = _click_exception("ClickException")


class RefauditGroup(TyperGroup):
    """The root command group: click's usage errors in refaudit's one-line style.

    Typer would draw a boxed panel under a usage block; refaudit's own errors are one
    `error:` line with a hint, so a CI log reads the same whichever layer refused.
    """

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            outcome = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _UsageError as error:
            if type(error).__name__ == "NoArgsIsHelpError":  # `refaudit` alone: the help
                error.show()  # type: ignore[attr-defined]
            else:
                print_error(error.format_message(), hint=_help_hint(error))  # type: ignore[attr-defined]
            sys.exit(ExitCode.USAGE)
        except _ClickException as error:
            print_error(error.format_message())  # type: ignore[attr-defined]
            sys.exit(error.exit_code)  # type: ignore[attr-defined]
        except typer.Abort:
            print("interrupted", file=sys.stderr)
            sys.exit(130)
        sys.exit(outcome if isinstance(outcome, int) else ExitCode.CLEAN)


def _help_hint(error: Exception) -> str | None:
    ctx = getattr(error, "ctx", None)
    if ctx is None or ctx.command.get_help_option(ctx) is None:
        return None
    return f"see '{ctx.command_path} --help'"


def handle_errors(function: F) -> F:
    """Turn RefauditError into a clean message and exit code 2."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except RefauditError as exc:
            fail(exc.message, hint=exc.hint)
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]


def report_internal_error(error: BaseException, *, debug: bool) -> None:
    """A bug in refaudit: one line naming a bug-report file, exit 4 (never 1, which means findings).

    The traceback goes to the report file (and to stderr with `--debug`), so CI logs
    stay one line while the details are kept for the bug report.
    """
    import platform
    import tempfile
    import traceback

    from refaudit.version import installed_version

    details = "".join(traceback.format_exception(error))
    header = (
        f"refaudit {installed_version()}, "
        f"Python {platform.python_version()} on {platform.platform()}\n"
        f"command: {' '.join(sys.argv)}\n\n"
    )
    try:
        handle, report = tempfile.mkstemp(prefix="refaudit-crash-", suffix=".txt")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(header + details)
    except OSError:
        report = "(could not write a report file)"
    if debug:
        print(details, file=sys.stderr, end="")
    summary = " ".join(f"{type(error).__name__}: {error}".split())[:200]
    print(
        f"refaudit: internal error ({summary}); this is a bug, please report it with {report}"
        + ("" if debug else " (rerun with --debug to see the traceback)"),
        file=sys.stderr,
    )
    raise SystemExit(int(ExitCode.INTERNAL))


_TYPE_LABELS = {
    "str": "TEXT",
    "int": "INTEGER",
    "float": "NUMBER",
    "file": "FILE",
    "dir": "DIR",
    "path": "PATH",
    "Path": "PATH",
    "float range": "NUMBER",
    "int range": "INTEGER",
}


def use_plain_type_labels() -> None:
    """Help shows what to type (FILE, TEXT, INTEGER), not Python types (`<list[Path]>`).

    Typer labels every parameter with its annotation; a flag gets no label at all.
    """
    from typer import core

    def label(self: Any, ctx: Any) -> str | None:
        if isinstance(self, core.TyperOption) and self.metavar is not None:
            return str(self.metavar)
        if getattr(self, "is_flag", False):
            return None
        raw = core._TyperParameter.display_type(self, ctx).strip("<>")
        repeated = raw.startswith("list[")
        raw = raw.removeprefix("list[").removesuffix("]")
        shown = "|".join(_TYPE_LABELS.get(part, part) for part in raw.split("|"))
        return f"{shown}..." if repeated and isinstance(self, core.TyperArgument) else shown

    core._TyperParameter.display_type_rich = label  # type: ignore[method-assign]
    core.TyperOption.display_type_rich = label  # type: ignore[method-assign]


@dataclasses.dataclass(frozen=True)
class Columns:
    """The columns of a `fitted_table`, declared once beside the command that prints it.

    `prose` columns (titles, names) wrap at spaces; every other column holds
    identifiers (DOIs, URLs, dates, keys) and is never wrapped. `drop_order` names
    the columns left out, in turn, on a terminal too narrow for them all. Both must
    name columns of `names`, which is checked when the command's module is read,
    not first on a narrow terminal.
    """

    names: tuple[str, ...]
    prose: tuple[str, ...] = ()
    drop_order: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = sorted(set(self.prose + self.drop_order) - set(self.names))
        if unknown:
            raise ValueError(f"not a column of {self.names}: {', '.join(unknown)}")


def fitted_table(title: str, columns: Columns, rows: list[list[str]]) -> Any:
    """A table that fits the terminal (stdout's width) without splitting identifiers.

    While the unwrapped columns and a readable prose column do not fit, the columns
    of `columns.drop_order` are left out (the JSON output keeps everything).
    """
    from rich.table import Table

    width = stdout_console().width

    def need(names: list[str]) -> int:
        total = 0
        for index, name in enumerate(columns.names):
            if name not in names:
                continue
            prose = name in columns.prose
            total += max(len(name), 16 if prose else _longest(rows, index)) + 3
        return total + 1

    shown = list(columns.names)
    for name in columns.drop_order:
        if need(shown) <= width:
            break
        shown.remove(name)
    crowded = need(shown) > width
    table = Table(title=title, title_justify="left")
    kept = [index for index, name in enumerate(columns.names) if name in shown]
    for index in kept:
        name = columns.names[index]
        if name not in columns.prose and not (crowded and _longest(rows, index) > 40):
            table.add_column(name, no_wrap=True)
        else:
            # Still too wide: only text, and identifiers longer than 40 characters, fold.
            table.add_column(name, ratio=1, overflow="fold")
    for row in rows:
        table.add_row(*(row[index] for index in kept))
    return table


def _longest(rows: list[list[str]], index: int) -> int:
    return max((len(line) for row in rows for line in row[index].splitlines()), default=0)


@dataclasses.dataclass(frozen=True)
class Card:
    """A work as one card of `work_cards`: its first column, the plain text that
    describes it (the card adds the markup), its year, identifier and citation count."""

    first: str
    title: str
    authors: str
    venue: str | None
    note: str
    year: int | None
    identifier: str
    cites: int | None


def work_cards(headings: tuple[str, str], first_width: int, cards: Iterable[Card]) -> Any:
    """Works in a table, one card each (search results, similar papers).

    One wide column describes the work (title, authors, venue, a note), the others are
    narrow so 80 columns stay readable.
    """
    from rich.markup import escape
    from rich.table import Table

    table = Table(show_lines=True, expand=True)
    table.add_column(headings[0], justify="right", width=first_width)
    table.add_column(headings[1], overflow="fold", ratio=1, min_width=30)
    table.add_column("Year", width=4)
    table.add_column("DOI / arXiv", overflow="fold", width=18)
    table.add_column("Cites", justify="right", width=6)
    for card in cards:
        lines = [f"[bold]{escape(card.title)}[/]", escape(card.authors)]
        if card.venue:
            lines.append(f"[italic]{escape(card.venue)}[/]")
        lines.append(f"[dim]{escape(card.note)}[/]")
        table.add_row(
            card.first,
            "\n".join(lines),
            str(card.year or ""),
            card.identifier,
            "" if card.cites is None else str(card.cites),
        )
    return table
