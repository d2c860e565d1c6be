"""`refaudit cache info|clear`: look at and empty the response cache."""

from __future__ import annotations

import typer

from refaudit.cli.common import handle_errors, stdout_console

cache_app = typer.Typer(
    help="Inspect or clear the cache of upstream answers.", no_args_is_help=True
)


@cache_app.command("info")
@handle_errors
def info() -> None:
    """Show where the cache lives, how many answers it holds, and for which sources.

    Example: refaudit cache info
    """
    from refaudit.cache import ResponseCache
    from refaudit.config import load_settings

    cache = ResponseCache.in_dir(load_settings().resolved_cache_dir())
    try:
        details = cache.info()
    finally:
        cache.close()
    console = stdout_console()
    console.print(f"path:     {details.path}", highlight=False)
    console.print(f"entries:  {details.entries}", highlight=False)
    console.print(f"expired:  {details.expired}", highlight=False)
    console.print(f"size:     {_human_size(details.size_bytes)}", highlight=False)
    for source, count in sorted(details.per_source.items()):
        console.print(f"  {source:<16} {count}", highlight=False)


@cache_app.command("clear")
@handle_errors
def clear(
    sources: str | None = typer.Option(
        None, "--sources", help="Only answers from these sources (comma list, e.g. crossref)."
    ),
    expired: bool = typer.Option(False, "--expired", help="Only answers past their TTL."),
) -> None:
    """Delete cached answers (all, one source's, or only expired ones).

    Example: refaudit cache clear --sources crossref --expired
    """
    from refaudit.cache import CacheUnusable, ResponseCache, remove_cache_files
    from refaudit.config import load_settings
    from refaudit.errors import ConfigError
    from refaudit.sources.registry import ENDPOINT_NAMES, SOURCE_NAMES

    names = [n.strip().lower() for n in (sources or "").split(",") if n.strip()]
    unknown = [n for n in names if n not in (*SOURCE_NAMES, *ENDPOINT_NAMES)]
    if unknown or (sources is not None and not names):
        raise ConfigError(
            f"--sources: unknown source(s) {', '.join(unknown) or '(none given)'}",
            hint=f"known: {', '.join(SOURCE_NAMES)}",
        )
    directory = load_settings().resolved_cache_dir()
    try:
        cache = ResponseCache.in_dir(directory)
    except CacheUnusable as error:
        # A file that is not a usable cache holds nothing worth keeping: start afresh.
        gone = remove_cache_files(directory)
        removed_files = ", ".join(path.name for path in gone) or "nothing"
        stdout_console().print(
            f"removed the unusable cache ({error.reason}): {removed_files} in {directory}",
            highlight=False,
        )
        return
    try:
        scopes: list[str | None] = list(names) if names else [None]
        removed = sum(cache.clear(source=name, expired_only=expired) for name in scopes)
    finally:
        cache.close()
    what = " expired" if expired else ""
    scope = f" from {', '.join(names)}" if names else ""
    stdout_console().print(f"removed {removed}{what} cached answers{scope}", highlight=False)


def _human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    value, unit = size / 1024, "KB"
    for larger in ("MB", "GB"):
        if value < 1024:
            break
        value, unit = value / 1024, larger
    return f"{value:.1f} {unit}"


def register(app: typer.Typer) -> None:
    """Add the `cache` command group to the app."""
    app.add_typer(cache_app, name="cache")
