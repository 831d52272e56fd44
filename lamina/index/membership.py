"""Content addressing of document versions and the membership digest graphd checks before activating."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence

import blake3

# What `version_id` makes: graphd refuses anything else, so an id can never be mistaken for JSON, a
# separator or a query fragment by the database.
VERSION_ID_PATTERN = re.compile(r"v[0-9a-f]{40}")


def text_digest(text: str) -> str:
    return blake3.blake3(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def embedding_key(model_digest: str, text_digest_hex: str) -> str:
    """Embeddings depend on the model and the text only, never on where the text sits."""
    return blake3.blake3(f"{model_digest}\0{text_digest_hex}".encode()).hexdigest()


def version_id(
    kind: str,
    path: str,
    symbol: str,
    symbol_kind: str,
    start_line: int,
    end_line: int,
    part: int,
    text_dig: str,
    meta: str = "",
    emb_key: str = "",
) -> str:
    """A document version: its text, where it sits and which embedding it carries (so a model change
    makes new versions). Moving code makes a new version, not a new embedding."""
    fields = (
        kind,
        path,
        symbol,
        symbol_kind,
        str(start_line),
        str(end_line),
        str(part),
        text_dig,
        meta,
        emb_key,
    )
    return "v" + blake3.blake3("\0".join(fields).encode("utf-8", errors="surrogatepass")).hexdigest()[:40]


def is_version_id(value: object) -> bool:
    return isinstance(value, str) and VERSION_ID_PATTERN.fullmatch(value) is not None


def membership_digest(version_ids: Iterable[str]) -> tuple[int, str]:
    """(count, digest) over the sorted, de-duplicated version ids of a generation."""
    return sorted_membership_digest(sorted(set(version_ids)))


def sorted_membership_digest(unique_sorted_ids: Sequence[str]) -> tuple[int, str]:
    """membership_digest of ids the caller has already sorted and de-duplicated (both sides of a build
    have: 16,700 ids are sorted once, not twice)."""
    # One update of "id\n" for every id: the same bytes (so the same digest) as one update per id, faster.
    text = "\n".join(unique_sorted_ids) + "\n" if unique_sorted_ids else ""
    return len(unique_sorted_ids), blake3.blake3(text.encode()).hexdigest()


_VERSION_ID_LINES = re.compile(r"(?:v[0-9a-f]{40}\n)*")


def all_version_ids(values: Sequence[object]) -> bool:
    """Whether every value is a version id: one regex pass over them joined (16,700 ids: ~1 ms, not 10)."""
    if not all(type(v) is str and len(v) == 41 for v in values):  # fixed width: lines cannot straddle
        return False
    return _VERSION_ID_LINES.fullmatch("".join(f"{v}\n" for v in values)) is not None  # type: ignore[str-format]


class SortedMembership:
    """A set of version ids kept as a sorted base plus the ids added and removed since. A build from the
    identity's current generation changes a few of 16,700 members; sorting the whole set again on each
    side of the build cost ~4-5 ms each. The base is never mutated (it is shared with its owner)."""

    def __init__(self, base: Sequence[str] = ()) -> None:
        self._base = base  # sorted, unique
        self._added: set[str] = set()  # not in the base
        self._removed: set[str] = set()  # in the base

    def _in_base(self, version: str) -> bool:
        at = bisect.bisect_left(self._base, version)
        return at < len(self._base) and self._base[at] == version

    def update(self, ids: Iterable[str]) -> None:
        if not self._base:
            self._added.update(ids)
            return
        for version in ids:
            if version in self._removed:
                self._removed.discard(version)
            elif not self._in_base(version):
                self._added.add(version)

    def difference_update(self, ids: Iterable[str]) -> None:
        for version in ids:
            if version in self._added:
                self._added.discard(version)
            elif self._in_base(version):
                self._removed.add(version)

    def __len__(self) -> int:
        return len(self._base) - len(self._removed) + len(self._added)

    def sorted_ids(self) -> list[str]:
        """The members, sorted (a new list)."""
        kept = [v for v in self._base if v not in self._removed] if self._removed else list(self._base)
        if len(self._added) > 64:  # a large change: one sort over the (already sorted) runs
            return sorted([*kept, *self._added])
        for version in self._added:
            bisect.insort(kept, version)
        return kept
