"""A shared remote cache of embeddings: records on an S3-compatible object store, keyed like the local
content store (blake3 of model digest and text digest), so a fresh clone or a CI runner fetches what a
teammate or CI already embedded. See docs/configuration.md ([cache]) and the README."""

from collections.abc import Mapping

CACHE_ENVIRONMENT_PREFIXES = ("LAMINA_CACHE_", "AWS_")  # what changes the remote cache a build uses


def cache_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables that choose the remote cache and its credentials: graphd hosts a build only when
    its own are the command's (it would otherwise use its own remote, mode or credentials)."""
    return {k: v for k, v in environ.items() if k.startswith(CACHE_ENVIRONMENT_PREFIXES)}
