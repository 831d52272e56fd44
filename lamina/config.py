"""lamina.toml → typed settings. Unknown keys are errors, so a typo never silently does nothing."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lamina.constants import DEFAULT_MAX_FILE_BYTES
from lamina.errors import LaminaError

CONFIG_FILE = "lamina.toml"
DODO_FILE = "dodo.py"  # the doit task file `lamina init` writes beside CONFIG_FILE
OWN_FILES = (CONFIG_FILE, DODO_FILE)  # Lamina's own files in a repository: never the project's config or code

# Paths never indexed whatever the globs say: vendored and generated trees.
DEFAULT_EXCLUDES = (
    "**/node_modules/**",
    "**/vendor/**",
    "**/third_party/**",
    "**/dist/**",
    "**/build/**",
    "**/*.min.js",
    "**/*.lock",
    "**/package-lock.json",
    "**/*_pb2.py",
    "**/*.generated.*",
)


@dataclass(frozen=True)
class GraphConfig:
    paths: tuple[str, ...] = ("product/**/*.toml",)


@dataclass(frozen=True)
class IndexConfig:
    include: tuple[str, ...] = ("**/*",)
    exclude: tuple[str, ...] = ()
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    store: str | None = None  # content-addressed store directory; None = <git-common-dir>/lamina/store


@dataclass(frozen=True)
class RuntimeConfig:
    threads: int = 2


@dataclass(frozen=True)
class GraphdConfig:
    idle_timeout_seconds: int | None = None  # None = constants.GRAPHD_IDLE_TIMEOUT_SECONDS


CACHE_MODES = ("read", "read-write")


@dataclass(frozen=True)
class CacheConfig:
    """The shared remote cache of embeddings (lamina/cache/); LAMINA_CACHE_* variables override it."""

    remote: str | None = None  # "s3://bucket/prefix"; None = no remote cache (today's local-only build)
    endpoint: str | None = None  # an S3-compatible server's URL; None = AWS (or AWS_ENDPOINT_URL)
    region: str | None = None  # None = AWS_REGION / AWS_DEFAULT_REGION, else us-east-1
    mode: str = "read"  # "read" (developers) or "read-write" (CI)


@dataclass(frozen=True)
class RolesConfig:
    """[roles]: globs that give files a role before the path conventions (lamina/repo/roles.py)."""

    code: tuple[str, ...] = ()
    test: tuple[str, ...] = ()
    docs: tuple[str, ...] = ()
    config: tuple[str, ...] = ()
    generated: tuple[str, ...] = ()
    data: tuple[str, ...] = ()


@dataclass(frozen=True)
class Config:
    graph: GraphConfig = field(default_factory=GraphConfig)
    index: IndexConfig = field(default_factory=IndexConfig)
    runtime: RuntimeConfig = field(default_factory=RuntimeConfig)
    graphd: GraphdConfig = field(default_factory=GraphdConfig)
    cache: CacheConfig = field(default_factory=CacheConfig)
    roles: RolesConfig = field(default_factory=RolesConfig)

    @property
    def all_excludes(self) -> tuple[str, ...]:
        return DEFAULT_EXCLUDES + self.index.exclude


_SCHEMA: dict[str, dict[str, type | tuple[type, ...]]] = {
    "graph": {"paths": list},
    "index": {"include": list, "exclude": list, "max_file_bytes": int, "store": str},
    "runtime": {"threads": int},
    "graphd": {"idle_timeout_seconds": int},
    "cache": {"remote": str, "endpoint": str, "region": str, "mode": str},
    "roles": {r: list for r in ("code", "test", "docs", "config", "generated", "data")},
}


def _config_error(path: Path, what: str) -> LaminaError:
    return LaminaError("LAMINA_CONFIG", f"{path}: {what}")


def _did_you_mean(word: str, known: Any) -> str:
    """ " (did you mean 'x'?)" for a near miss among `known` names, as graph errors say it ("" when none)."""
    from difflib import get_close_matches

    close = get_close_matches(word, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


# How an error names a TOML value's type, and the type a setting wants ("a list" of strings, for lists).
_KIND_WORDS: dict[object, str] = {
    bool: "a boolean",
    int: "a whole number",
    float: "a number",
    str: "a string",
    list: "a list",
}


def _toml_kind(value: Any) -> str:
    return _KIND_WORDS.get(type(value), "a table" if isinstance(value, dict) else type(value).__name__)


def parse_config(data: dict[str, Any], path: Path) -> Config:
    sections: dict[str, dict[str, Any]] = {}
    for name, body in data.items():
        if name not in _SCHEMA and not isinstance(body, dict):
            sections_known = ", ".join(f"[{n}]" for n in _SCHEMA)
            raise _config_error(
                path, f"unknown top-level key {name} (settings belong in a section: {sections_known})"
            )
        if name not in _SCHEMA:
            raise _config_error(path, f"unknown section [{name}]{_did_you_mean(name, _SCHEMA)}")
        if not isinstance(body, dict):
            raise _config_error(path, f"[{name}] must be a table")
        for key, value in body.items():
            expected = _SCHEMA[name].get(key)
            if expected is None:
                raise _config_error(path, f"unknown key {name}.{key}{_did_you_mean(key, _SCHEMA[name])}")
            if not isinstance(value, expected) or isinstance(value, bool):
                wanted = _KIND_WORDS.get(expected, "") + (" of strings" if expected is list else "")
                raise _config_error(
                    path, f"{name}.{key} must be {wanted}, not {_toml_kind(value)} ({value!r})"
                )
            if isinstance(value, list) and not all(isinstance(v, str) for v in value):
                raise _config_error(path, f"{name}.{key} must be a list of strings")
        sections[name] = {k: tuple(v) if isinstance(v, list) else v for k, v in body.items()}
    cfg = Config(
        graph=GraphConfig(**sections.get("graph", {})),
        index=IndexConfig(**sections.get("index", {})),
        runtime=RuntimeConfig(**sections.get("runtime", {})),
        graphd=GraphdConfig(**sections.get("graphd", {})),
        cache=CacheConfig(**sections.get("cache", {})),
        roles=RolesConfig(**sections.get("roles", {})),
    )
    if cfg.index.max_file_bytes <= 0:
        raise _config_error(path, "index.max_file_bytes must be positive")
    if cfg.runtime.threads <= 0:
        raise _config_error(path, "runtime.threads must be positive")
    if cfg.graphd.idle_timeout_seconds is not None and cfg.graphd.idle_timeout_seconds <= 0:
        # 0 made graphd exit the moment it started: every command then failed with "graphd is not running"
        raise _config_error(
            path, "graphd.idle_timeout_seconds must be positive (or left out for the default)"
        )
    if cfg.cache.mode not in CACHE_MODES:
        raise _config_error(path, f"cache.mode must be one of {', '.join(CACHE_MODES)}")
    if cfg.cache.remote is not None and not cfg.cache.remote.startswith("s3://"):
        raise _config_error(path, 'cache.remote must be an s3:// URL ("s3://bucket/prefix")')
    return cfg


def load_config(repo_root: Path) -> Config:
    """Read <repo_root>/lamina.toml; a repository without one uses the defaults."""
    path = repo_root / CONFIG_FILE
    if not path.exists():
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise _config_error(path, f"not valid TOML: {exc}") from exc
    return parse_config(data, path)
