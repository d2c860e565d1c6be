"""The options several commands take, each declared once so that a flag reads and
behaves the same wherever it appears, and option groups: a dataclass whose fields are
options, handed to a command as one object (`SettingsFlags`, the options Settings are
read from).

Only typer is imported at the top, so `refaudit --help` stays fast.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from typer.core import TyperCommand

F = TypeVar("F", bound=Callable[..., Any])

ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", help="Read settings from this TOML file.", dir_okay=False),
]
OfflineOption = Annotated[
    bool, typer.Option("--offline", help="Answer from the cache only; send no request.")
]
NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Neither read nor write the response cache.")
]
SourcesOption = Annotated[
    str | None,
    typer.Option("--sources", help="Comma list of sources to ask (default: all)."),
]
MailtoOption = Annotated[
    str | None, typer.Option("--mailto", help="Contact e-mail for the polite API pools.")
]
TimeoutOption = Annotated[
    float | None, typer.Option("--timeout", help="Seconds to wait for one request.", min=0.1)
]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or notes.")]
MirrorOption = Annotated[
    str | None,
    typer.Option(
        "--mirror",
        metavar="[URL]",
        help="Take evidence from a local mirror first (`refaudit mirror build`): a SQLite "
        "file or postgresql:// URL; alone, the default mirror. `--sources mirror`: no network.",
    ),
]
FailOnOption = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-on",
        help="What fails a reference, and so the run (repeatable or comma list): error, warning, "
        "info, flagged, not_found, mismatch, unverified, doi, retracted, integrity, none, or a "
        "finding code.",
    ),
]
AllowUnverifiedOption = Annotated[
    bool,
    typer.Option(
        "--allow-unverified",
        help="Never exit 3 for unverified references (sources down, offline).",
    ),
]
AllEntriesOption = Annotated[
    bool,
    typer.Option("--all-entries", help="For .tex input, audit uncited .bib entries too."),
]


class OutputFormat(enum.StrEnum):
    """How a command that prints records prints them: a table for people, JSON for scripts."""

    TABLE = "table"
    JSON = "json"


FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f", help="table or json.")]


REQUIRE_VERIFIED_DEFAULT = 0.1


class OptionalValueCommand(TyperCommand):
    """Typer options always take a value; let a bare `--require-verified` or `--mirror` work."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, fill_optional_value(args))


def fill_optional_value(args: list[str]) -> list[str]:
    """Options whose value is optional get it filled in when none follows.

    `--require-verified` not followed by a number becomes `--require-verified=0.1`;
    `--mirror` not followed by a mirror location (a postgresql:// URL or a .sqlite3 /
    .sqlite / .db file) becomes `--mirror=` (the default mirror).
    """
    filled: list[str] = []
    for index, arg in enumerate(args):
        if arg == "--":
            return filled + args[index:]
        following = args[index + 1] if index + 1 < len(args) else ""
        if arg == "--require-verified" and not _is_number(following):
            arg = f"--require-verified={REQUIRE_VERIFIED_DEFAULT}"
        if arg == "--mirror" and not _is_mirror_location(following):
            arg = "--mirror="
        filled.append(arg)
    return filled


def _is_mirror_location(text: str) -> bool:
    return text.startswith(("postgresql://", "postgres://")) or text.endswith(
        (".sqlite3", ".sqlite", ".db")
    )


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def load_config(config: Path | None, overrides: dict[str, Any] | None = None) -> Any:
    """Settings from `--config` (which must exist), the environment and `overrides`."""
    from refaudit.config import load_settings
    from refaudit.errors import ConfigError

    if config is not None and not config.is_file():
        raise ConfigError(f"{config}: configuration file not found")
    return load_settings(config_path=config, overrides=overrides)


def settings_from_flags(config: Path | None, **flags: Any) -> Any:
    """Settings from file + env, with only the flags the user actually gave on top."""
    from refaudit.errors import ConfigError
    from refaudit.sources import registry, unusable_reason

    overrides: dict[str, Any] = {
        "offline": True if flags.pop("offline") else None,
        "use_cache": False if flags.pop("no_cache") else None,
        "sources": source_names(flags.pop("sources")),
    }
    overrides.update(flags)
    settings = load_config(config, overrides)
    # Names are known by now (the mirror is not a registry source); a keyed one needs its key.
    for name in overrides["sources"] or []:
        problem = unusable_reason(name, settings) if name in registry.BY_NAME else None
        if problem:
            raise ConfigError(f"--sources: {problem[0]}", hint=problem[1])
    return settings


def source_names(value: str | list[str] | None) -> list[str] | None:
    """`--sources a,b` (comma list, repeatable where the option is a list) as checked names."""
    if value is None:
        return None
    from refaudit.config import MIRROR_SOURCE
    from refaudit.errors import ConfigError
    from refaudit.sources.registry import SOURCE_NAMES

    known = (*SOURCE_NAMES, MIRROR_SOURCE)
    given = value if isinstance(value, list) else [value]
    names = [n.strip().lower() for part in given for n in part.split(",") if n.strip()]
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        raise ConfigError(
            f"--sources: unknown source(s) {', '.join(unknown) or '(none given)'}",
            hint=f"known: {', '.join(known)}",
        )
    return names


@dataclasses.dataclass(frozen=True)
class SettingsFlags:
    """The options Settings are read from, as given on the command line.

    A command asks for its Settings when it is ready to (after checking its own
    options), so a usage mistake is reported before a configuration one.
    """

    offline: OfflineOption = False
    no_cache: NoCacheOption = False
    sources: SourcesOption = None
    mailto: MailtoOption = None
    config: ConfigOption = None
    timeout: TimeoutOption = None
    mirror: MirrorOption = None

    def settings(self, **overrides: Any) -> Any:
        """Settings from file + env, these flags and `overrides` (None: not given) on top."""
        given = dataclasses.asdict(self)
        return settings_from_flags(given.pop("config"), **given, **overrides)


#: No option given: Settings from the configuration file and the environment alone.
NO_FLAGS = SettingsFlags()


def settings_options(*leave_out: str) -> Callable[[F], F]:
    """Give a command the options of `SettingsFlags` (all but `leave_out`) as its `flags`."""
    return option_group(SettingsFlags, *leave_out)


def option_group(group: type[Any], *leave_out: str) -> Callable[[F], F]:
    """Give a command the fields of the dataclass `group` (all but `leave_out`) as options,
    handed to it as one `group` in its `flags` parameter.

    Each field is declared as a command parameter would be (an `Annotated` option and
    its default); the options stand where `flags` stands in the command's signature.
    """
    hints = typing.get_type_hints(group, include_extras=True)
    defaults = {field.name: field.default for field in dataclasses.fields(group)}
    unknown = set(leave_out) - set(defaults)
    if unknown:
        raise ValueError(f"no {group.__name__} option {', '.join(sorted(unknown))}")
    names = [name for name in defaults if name not in leave_out]

    def decorate(command: F) -> F:
        signature = inspect.signature(command, eval_str=True)
        if "flags" not in signature.parameters:
            raise TypeError(f"{command.__name__} takes no `flags` parameter")
        parameters: list[inspect.Parameter] = []
        for parameter in signature.parameters.values():
            if parameter.name != "flags":
                parameters.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY))
                continue
            for name in names:
                kind = inspect.Parameter.KEYWORD_ONLY
                parameters.append(
                    inspect.Parameter(name, kind, default=defaults[name], annotation=hints[name])
                )

        @functools.wraps(command)
        def wrapper(**given: Any) -> Any:
            flags = group(**{name: given.pop(name) for name in names})
            return command(**given, flags=flags)

        wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
        wrapper.__annotations__["return"] = signature.return_annotation
        return wrapper  # type: ignore[return-value]

    return decorate
