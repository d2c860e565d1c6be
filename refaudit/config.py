"""Settings: one object holding every knob, loaded flags > env > config file > defaults.

The config file is `refaudit.toml` or the `[tool.refaudit]` table of
`pyproject.toml`, searched from the working directory upwards. API keys are
best kept in the environment (or a `.env` file); they are never printed.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from refaudit.errors import ConfigError
from refaudit.findings import DEFAULT_FAIL_ON, parse_fail_on
from refaudit.sources import registry

SOURCE_NAMES = registry.SOURCE_NAMES
OTHER_ENDPOINTS = registry.ENDPOINT_NAMES
#: the local mirror (`refaudit mirror`): asked before the live sources, never by default
MIRROR_SOURCE = registry.MIRROR.name

DEFAULT_BASE_URLS: dict[str, str] = {item.name: item.base_url for item in registry.UPSTREAMS}

DEFAULT_TTL_DAYS: dict[str, float] = {
    "lookup": 30.0,
    "search": 7.0,
    "negative": 1.0,
    "integrity": 1.0,
}

DEFAULT_RETRACTION_POLICY: dict[str, str] = {
    "retraction": "error",
    "partial_retraction": "error",
    "withdrawal": "error",
    "removal": "error",
    "expression_of_concern": "warning",
    "correction": "info",
    "reinstatement": "info",
}

# Share of unverified references above which `check` exits 3 (docs/ci.md).
DEFAULT_REQUIRE_VERIFIED = 0.1


@dataclass
class IgnoreRule:
    """Skip a reference by citation key or DOI; the reason is shown in the report."""

    reason: str
    key: str | None = None
    doi: str | None = None


@dataclass
class ServeSettings:
    """`refaudit serve` as a shared service: OAuth resource-server mode and per-client limits.

    The `[serve]` table of the config file, `REFAUDIT_<KEY>` in the environment
    (`REFAUDIT_OAUTH_ISSUER`, `REFAUDIT_CLIENT_CONCURRENT_AUDITS`, …) and `serve`'s flags.
    """

    #: the authorization server whose JWTs the HTTP transport accepts; None: no OAuth mode
    oauth_issuer: str | None = None
    #: this server's resource URL (the tokens' audience); None: the URL it listens on
    oauth_resource: str | None = None
    #: scopes every token must carry
    oauth_scopes: list[str] = field(default_factory=list)
    #: where the issuer publishes its keys; None: read from the issuer's metadata
    oauth_jwks_url: str | None = None
    #: audits (calls that ask the sources) one client may have running at once
    client_concurrent_audits: int = 4
    #: references one client may have checked per minute (a bibliography counts each entry)
    client_references_per_minute: int = 600

    def validated(self, where: Callable[[str], str] = lambda key: f"`serve.{key}`") -> None:
        """Refuse limits below one and an OAuth mode without an issuer."""
        for key in ("client_concurrent_audits", "client_references_per_minute"):
            if getattr(self, key) < 1:
                raise ConfigError(f"{where(key)} must be 1 or more")
        if not self.oauth_issuer and (self.oauth_resource or self.oauth_jwks_url):
            raise ConfigError(
                f"{where('oauth_resource')} and {where('oauth_jwks_url')} need "
                f"{where('oauth_issuer')}: the authorization server that issues the tokens"
            )


#: The `[serve]` keys: ServeSettings' fields, each read as the kind of its default.
_SERVE_DEFAULTS = ServeSettings()
_SERVE_KEYS = tuple(item.name for item in dataclasses.fields(ServeSettings))


def _serve_value(key: str, value: Any, origin: str) -> Any:
    """One `[serve]` value (or its environment variable, given as text) of the kind of
    the setting's default: a list, a whole number, or text (None when empty)."""
    kind = type(getattr(_SERVE_DEFAULTS, key))
    if kind is list:
        words = value.replace(",", " ").split() if isinstance(value, str) else value
        return [str(word) for word in _list(words, origin, "scope names")]
    if kind is int:
        try:
            if isinstance(value, bool) or isinstance(value, float):
                raise ValueError
            return int(value)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{origin} must be a whole number, not {value!r}") from exc
    return str(value).strip() or None


def with_serve_flags(settings: Settings, **flags: Any) -> Settings:
    """`settings` with the `serve` flags the user gave (None: not given) on top, checked."""
    given = {key: value for key, value in flags.items() if value not in (None, [])}
    settings.serve = dataclasses.replace(settings.serve, **given)
    settings.serve.validated(lambda key: f"--{key.replace('_', '-')}")
    return settings


def _apply_serve(
    serve: ServeSettings, table: Mapping[str, Any], origin: Callable[[str], str]
) -> None:
    for key, value in table.items():
        if key not in _SERVE_KEYS:
            raise ConfigError(
                f"{origin(key)}: unknown setting", hint=f"known: {', '.join(_SERVE_KEYS)}"
            )
        setattr(serve, key, _serve_value(key, value, origin(key)))


@dataclass
class Settings:
    """Every setting refaudit reads. Build it with `load_settings()`."""

    mailto: str | None = None
    api_keys: dict[str, str] = field(default_factory=dict)
    #: sources whose base URL a project file set (refaudit.toml, pyproject.toml, .env) →
    #: that file: a key is never sent there unless it is the source's official host
    untrusted_urls: dict[str, str] = field(default_factory=dict)
    sources: list[str] = field(default_factory=lambda: list(SOURCE_NAMES))
    base_urls: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_BASE_URLS))
    rate_limits: dict[str, float] = field(default_factory=dict)
    cache_dir: Path | None = None
    data_dir: Path | None = None
    use_cache: bool = True
    offline: bool = False
    timeout: float = 20.0
    max_retries: int = 4
    ttl_days: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_TTL_DAYS))
    fail_on: list[str] = field(default_factory=lambda: list(DEFAULT_FAIL_ON))
    retraction_policy: dict[str, str] = field(
        default_factory=lambda: dict(DEFAULT_RETRACTION_POLICY)
    )
    ignore: list[IgnoreRule] = field(default_factory=list)
    require_verified: float | None = DEFAULT_REQUIRE_VERIFIED
    #: the local mirror: a SQLite path or postgresql:// URL; "" means the default file
    mirror: str | None = None
    #: processes for a long mirror-only audit (`refaudit.mirror.parallel`); None: one per core
    processes: int | None = None
    serve: ServeSettings = field(default_factory=ServeSettings)
    #: `--check-urls`: ask whether each skipped web resource's URL still answers
    check_urls: bool = False
    config_file: Path | None = None

    def resolved_cache_dir(self) -> Path:
        if self.cache_dir:
            return self.cache_dir
        import platformdirs

        return Path(platformdirs.user_cache_dir("refaudit"))

    def resolved_data_dir(self) -> Path:
        if self.data_dir:
            return self.data_dir
        import platformdirs

        return Path(platformdirs.user_data_dir("refaudit"))

    def api_key(self, source: str) -> str | None:
        """The key for `source`, or None (also when it may not go to the configured URL)."""
        if self.key_withheld(source):
            return None
        return self.api_keys.get(source)

    def key_withheld(self, source: str) -> str | None:
        """Why `source`'s key is not sent to its configured base URL, or None when it may be."""
        if not self.api_keys.get(source) or source not in DEFAULT_BASE_URLS:
            return None
        url = self.base_urls.get(source, "")
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if host != urlsplit(DEFAULT_BASE_URLS[source]).hostname and source in self.untrusted_urls:
            return (
                f"its URL {url} comes from {self.untrusted_urls[source]}, a project file, "
                "and is not the official host"
            )
        if parts.scheme == "https" or (parts.scheme == "http" and _is_loopback(host)):
            return None
        return f"its URL {url} is not https"

    def warnings(self) -> list[str]:
        """One line per key that is configured but withheld, saying why and what to do."""
        return [
            f"{source} API key withheld: {why}; name the URL in an environment variable "
            f"or in {user_config_file()} to send the key there"
            for source in sorted(self.api_keys)
            if (why := self.key_withheld(source))
        ]

    def masked(self) -> dict[str, Any]:
        """The effective settings as plain data, secrets replaced by stars."""
        data = dataclasses.asdict(self)
        data["api_keys"] = {name: _mask(value) for name, value in self.api_keys.items()}
        data["cache_dir"] = str(self.resolved_cache_dir())
        data["data_dir"] = str(self.resolved_data_dir())
        data["config_file"] = str(self.config_file) if self.config_file else None
        return data


def _mask(secret: str) -> str:
    """Not one character of a key: its length or first letters would help a guess."""
    return "********" if secret else ""


def _is_loopback(host: str) -> bool:
    """Plain http is acceptable only on this machine (a local simulator or proxy)."""
    return host in ("localhost", "::1") or host.startswith("127.")


def user_config_file(environ: Mapping[str, str] | None = None) -> Path:
    """The user's own configuration (not a project's): REFAUDIT_USER_CONFIG, or the platform's."""
    chosen = (os.environ if environ is None else environ).get("REFAUDIT_USER_CONFIG")
    if chosen:
        return Path(chosen).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("refaudit")) / "config.toml"


def find_config_file(start: Path | None = None) -> tuple[Path, dict[str, Any]] | None:
    """The nearest refaudit.toml, or pyproject.toml with a [tool.refaudit] table."""
    directory = (start or Path.cwd()).resolve()
    for folder in (directory, *directory.parents):
        candidate = folder / "refaudit.toml"
        if candidate.is_file():
            return candidate, _read_toml(candidate)
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            table = _read_toml(pyproject).get("tool", {}).get("refaudit")
            if isinstance(table, dict):
                return pyproject, table
        if (folder / ".git").exists():
            break
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc}") from exc


def load_settings(
    *,
    config_path: Path | None = None,
    env: dict[str, str] | None = None,
    overrides: dict[str, Any] | None = None,
) -> Settings:
    """Build Settings from defaults, the config file, the environment and CLI overrides.

    `overrides` holds only the flags the user actually gave (None values are ignored).
    """
    environ = dict(os.environ if env is None else env)
    dotenv = _dotenv_values() if env is None else {}
    from_dotenv = {name for name in dotenv if name not in environ}
    environ = {**dotenv, **environ}
    settings = Settings()
    user_file = user_config_file(environ)
    if user_file.is_file():
        _apply_file(settings, _read_toml(user_file), user_file, trusted=True)
    found = (config_path, _config_table(config_path)) if config_path else find_config_file()
    if found:
        settings.config_file = found[0]
        _apply_file(settings, found[1], found[0])
    _apply_env(settings, environ, from_dotenv)
    for name, value in (overrides or {}).items():
        if value is None:
            continue
        if not hasattr(settings, name):
            raise ConfigError(f"unknown setting {name!r}")
        setattr(settings, name, value)
    file_keys = set(found[1]) if found else set()

    def where(key: str) -> str:
        top = key.split(".")[0]
        return f"`{key}` in {settings.config_file}" if top in file_keys else f"`{key}`"

    _validate(settings, where)
    for warning in settings.warnings():
        _warn_once(warning)
    return settings


_WARNED: set[str] = set()


def _warn_once(message: str) -> None:
    """Log a configuration warning once per process (settings are loaded more than once)."""
    if message not in _WARNED:
        _WARNED.add(message)
        logging.getLogger(__name__).warning("warning: %s", message)


def _config_table(path: Path) -> dict[str, Any]:
    data = _read_toml(path)
    if path.name == "pyproject.toml":
        return data.get("tool", {}).get("refaudit", {})
    return data


def _dotenv_values() -> dict[str, str]:
    path = Path.cwd() / ".env"
    if not path.is_file():
        return {}
    from dotenv import dotenv_values

    return {k: v for k, v in dotenv_values(path).items() if v is not None}


def _apply_file(
    settings: Settings, table: dict[str, Any], origin: Path, *, trusted: bool = False
) -> None:
    """Apply one config file; `trusted` is the user's own file, whose URLs may receive keys."""

    def where(key: str) -> str:
        return f"`{key}` in {origin}"

    for key, value in table.items():
        if key == "sources" and isinstance(value, dict):
            enabled = value.get("enabled")
            if enabled is not None:
                settings.sources = _source_list(enabled, where("sources.enabled"))
            for name, section in value.items():
                if name == "enabled":
                    continue
                _check_source(name, where(f"sources.{name}"))
                if not isinstance(section, dict):
                    raise ConfigError(f"{where(f'sources.{name}')} must be a table")
                if "url" in section:
                    settings.base_urls[name] = str(section["url"]).rstrip("/")
                    _note_url_origin(settings, name, None if trusted else str(origin))
                if "rate_limit" in section:
                    settings.rate_limits[name] = _number(
                        section["rate_limit"], where(f"sources.{name}.rate_limit")
                    )
                upstream = next((u for u in registry.UPSTREAMS if u.name == name), None)
                if upstream is not None:
                    for credential in upstream.credentials:
                        if credential.setting in section:
                            settings.api_keys[credential.storage_key(name)] = str(
                                section[credential.setting]
                            )
        elif key == "ignore":
            settings.ignore = [
                _ignore_rule(item, where("ignore")) for item in _list(value, where(key), "tables")
            ]
        elif key == "retraction_policy":
            settings.retraction_policy.update(
                {str(k): str(v) for k, v in _table(value, where(key)).items()}
            )
        elif key == "ttl_days":
            settings.ttl_days.update(
                {
                    str(k): _number(v, where(f"ttl_days.{k}"))
                    for k, v in _table(value, where(key)).items()
                }
            )
        elif key == "mirror":
            section = _table(value, where(key))
            if "url" in section:
                settings.mirror = str(section["url"])
        elif key == "serve":
            _apply_serve(settings.serve, _table(value, where(key)), lambda k: where(f"serve.{k}"))
        elif key == "fail_on":
            words = [str(v) for v in _list(value, where(key), "words such as `error`")]
            settings.fail_on = _fail_on_words(words, where(key))
        elif key in ("cache_dir", "data_dir"):
            setattr(settings, key, Path(str(value)).expanduser())
        elif key in _SCALARS:
            setattr(settings, key, _scalar(key, value, where(key)))
        else:
            import difflib

            known = [*_SCALARS, *_FILE_TABLES]
            close = difflib.get_close_matches(key, known, n=1)
            raise ConfigError(
                f"{origin}: unknown setting `{key}`"
                + (f" (did you mean `{close[0]}`?)" if close else ""),
                hint="settings: docs/configuration.md",
            )


# Settings of the file that are not scalars (tables and lists).
_FILE_TABLES = (
    "sources",
    "ignore",
    "retraction_policy",
    "ttl_days",
    "mirror",
    "serve",
    "fail_on",
    "cache_dir",
    "data_dir",
)
_KIND_WORDS = {str: "text in quotes", bool: "true or false"}


def _fail_on_words(words: list[str], origin: str) -> list[str]:
    """The --fail-on words of a file or variable, rejected in terms of where they came from."""
    from refaudit.policy import parse_fail_on

    try:
        return parse_fail_on(words)
    except ConfigError as exc:
        raise ConfigError(
            f"{origin}: {exc.message.removeprefix('unknown --fail-on value ')} is not a fail-on"
            " word",
            hint=exc.hint,
        ) from exc


_SCALARS: dict[str, type] = {
    "mailto": str,
    "timeout": float,
    "max_retries": int,
    "use_cache": bool,
    "offline": bool,
    "require_verified": float,
    "processes": int,
}


def _scalar(key: str, value: Any, origin: str) -> Any:
    """Check a config-file scalar's type (TOML gives ints where floats are meant: accept them)."""
    expected = _SCALARS[key]
    if expected is float:
        return _number(value, origin)
    if expected is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(f"{origin} must be an integer, not {value!r}")
    if expected in (str, bool) and not isinstance(value, expected):
        raise ConfigError(f"{origin} must be {_KIND_WORDS[expected]}, not {value!r}")
    return value


def _number(value: Any, origin: str) -> float:
    if isinstance(value, bool):
        raise ConfigError(f"{origin} must be a number, not {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{origin} must be a number, not {value!r}") from exc


def _list(value: Any, origin: str, of: str = "values") -> list[Any]:
    if not isinstance(value, list):
        raise ConfigError(f"{origin} must be a list of {of}, e.g. [{_example(of)}], not {value!r}")
    return value


def _example(of: str) -> str:
    return '"error", "retracted"' if "word" in of else "…"


def _table(value: Any, origin: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{origin} must be a table (a [section] of name = value lines)")
    return value


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


def _flag(environ: dict[str, str], variable: str) -> bool | None:
    """A boolean environment variable, or None when unset."""
    if variable not in environ:
        return None
    value = environ[variable].strip().lower()
    if value not in _TRUE + _FALSE:
        raise ConfigError(f"{variable} must be 1/0, true/false, yes/no or on/off")
    return value in _TRUE


def _note_url_origin(settings: Settings, name: str, untrusted: str | None) -> None:
    if untrusted is None:
        settings.untrusted_urls.pop(name, None)
    else:
        settings.untrusted_urls[name] = untrusted


def _apply_env(
    settings: Settings, environ: dict[str, str], from_dotenv: set[str] | None = None
) -> None:
    """Apply environment variables; those only a project's .env set are not trusted for URLs."""
    from_dotenv = from_dotenv or set()

    def origin(variable: str) -> str | None:
        return f".env ({variable})" if variable in from_dotenv else None

    for item in registry.UPSTREAMS:
        url = environ.get(item.url_env)
        if url:
            settings.base_urls[item.name] = url.rstrip("/")
            _note_url_origin(settings, item.name, origin(item.url_env))
    for source in registry.UPSTREAMS:
        for credential in source.credentials:
            value = next((environ[v] for v in credential.env if environ.get(v)), None)
            if value:
                settings.api_keys[credential.storage_key(source.name)] = value
    if environ.get("REFAUDIT_MAILTO"):
        settings.mailto = environ["REFAUDIT_MAILTO"]
    if "REFAUDIT_MIRROR" in environ:
        settings.mirror = environ["REFAUDIT_MIRROR"].strip()
    if environ.get("REFAUDIT_SOURCES"):
        settings.sources = _source_list(environ["REFAUDIT_SOURCES"], "REFAUDIT_SOURCES")
    if environ.get("REFAUDIT_CACHE_DIR"):
        settings.cache_dir = Path(environ["REFAUDIT_CACHE_DIR"]).expanduser()
    if environ.get("REFAUDIT_DATA_DIR"):
        settings.data_dir = Path(environ["REFAUDIT_DATA_DIR"]).expanduser()
    if environ.get("REFAUDIT_TIMEOUT"):
        try:
            settings.timeout = float(environ["REFAUDIT_TIMEOUT"])
        except ValueError as exc:
            raise ConfigError("REFAUDIT_TIMEOUT must be a number of seconds") from exc
    if environ.get("REFAUDIT_FAIL_ON"):
        settings.fail_on = _fail_on_words([environ["REFAUDIT_FAIL_ON"]], "REFAUDIT_FAIL_ON")
    _apply_serve(
        settings.serve,
        {
            key: environ[f"REFAUDIT_{key.upper()}"]
            for key in _SERVE_KEYS
            if environ.get(f"REFAUDIT_{key.upper()}")
        },
        lambda key: f"REFAUDIT_{key.upper()}",
    )
    offline = _flag(environ, "REFAUDIT_OFFLINE")
    if offline is not None:
        settings.offline = offline
    no_cache = _flag(environ, "REFAUDIT_NO_CACHE")
    if no_cache is not None:
        settings.use_cache = not no_cache


def _source_list(value: str | list[str], origin: str) -> list[str]:
    names = value.split(",") if isinstance(value, str) else list(value)
    names = [name.strip().lower() for name in names if name.strip()]
    for name in names:
        _check_source(name, origin)
    return names


def _check_source(name: str, origin: str) -> None:
    if name not in (*SOURCE_NAMES, *OTHER_ENDPOINTS, MIRROR_SOURCE):
        raise ConfigError(
            f"unknown source {name!r} ({origin})", hint=f"known: {', '.join(SOURCE_NAMES)}"
        )


def _ignore_rule(item: Any, origin: str) -> IgnoreRule:
    if not isinstance(item, dict) or not (item.get("key") or item.get("doi")):
        raise ConfigError(f"each entry of {origin} needs a key or a doi, and a reason")
    from refaudit.identifiers import normalize_doi

    return IgnoreRule(
        reason=str(item.get("reason") or "ignored by configuration"),
        key=item.get("key"),
        doi=normalize_doi(item.get("doi")),
    )


def _validate(settings: Settings, where: Callable[[str], str]) -> None:
    """Check ranges and names; `where(key)` says which file a bad value came from."""
    settings.fail_on = parse_fail_on(settings.fail_on)
    for kind in settings.retraction_policy:
        if kind not in DEFAULT_RETRACTION_POLICY:
            raise ConfigError(
                f"{where(f'retraction_policy.{kind}')}: unknown notice kind",
                hint=f"known: {', '.join(DEFAULT_RETRACTION_POLICY)}",
            )
    for kind, severity in settings.retraction_policy.items():
        if severity not in ("error", "warning", "info", "ignore"):
            raise ConfigError(
                f"{where(f'retraction_policy.{kind}')} = {severity!r}:"
                " use error, warning, info or ignore"
            )
    if settings.timeout <= 0:
        raise ConfigError(f"{where('timeout')} must be a positive number of seconds")
    if settings.max_retries < 0:
        raise ConfigError(f"{where('max_retries')} must be zero or more")
    if settings.processes is not None and settings.processes < 1:
        raise ConfigError(f"{where('processes')} must be 1 or more")
    if settings.require_verified is not None and not 0 <= settings.require_verified <= 1:
        raise ConfigError(
            f"{where('require_verified')} must be a fraction between 0 and 1, e.g. 0.1"
        )
    settings.serve.validated(lambda key: where(f"serve.{key}"))
    for band, days in settings.ttl_days.items():
        if band not in DEFAULT_TTL_DAYS:
            raise ConfigError(
                f"{where(f'ttl_days.{band}')}: unknown cache band",
                hint=f"known: {', '.join(DEFAULT_TTL_DAYS)}",
            )
        if days < 0:
            raise ConfigError(f"{where(f'ttl_days.{band}')} must be zero or more days")
    for name, rate in settings.rate_limits.items():
        if rate <= 0:
            raise ConfigError(
                f"{where(f'sources.{name}.rate_limit')} must be a positive number of requests"
                " per second"
            )


def setting_origins(
    *, config_path: Path | None = None, env: dict[str, str] | None = None
) -> dict[str, str]:
    """Where each top-level setting's effective value comes from: default, file or env.

    Computed by loading the layers one at a time and noting which layer changed
    a value, so it cannot disagree with `load_settings`.
    """
    defaults = Settings().masked()
    file_only = load_settings(config_path=config_path, env={}).masked()
    full = load_settings(config_path=config_path, env=env).masked()
    origin_file = file_only.get("config_file") or "config file"
    origins = {}
    for key, value in full.items():
        if value != file_only.get(key):
            origins[key] = "env"
        elif value != defaults.get(key):
            origins[key] = f"file ({origin_file})"
        else:
            origins[key] = "default"
    origins["config_file"] = "found" if full.get("config_file") else "default"
    return origins
