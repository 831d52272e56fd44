"""Release tasks: "Bumped v5.11.3", "Version 0.28.1", "chore(release): v1.7.0".

A task that only names a new version changes the code that states the current one (`__version__ = "…"`,
`const VERSION = '…'`), whose words the task does not share: BM25 and the model rank it anywhere (session 32,
on repositories that chose no constant: fastify's 17 release commits put `fastify.js` at ranks 2-6, httpx's 12 put
`httpx/__version__.py` at 1-5 or nowhere). Localization lists the code files that state a version first for
such a task. Both readings are pure functions of text; a chunk's is computed once per chunk version (graphd, when
it caches the version's text). Chunk texts are untrusted data: they can only move a file among the sources.
"""

from __future__ import annotations

import re

# A task whose first line is a release: an optional conventional prefix (`chore(release): `), then "release",
# "version", "bump(ed) [the version] [to]" or nothing, then a version number. "Bump serde from 1.0 to 1.1" is
# not one (its first word after "bump" is not a version).
_RELEASE_TASK = re.compile(
    r"^\s*(?:[a-z]+(?:\([^)\n]*\))?!?:\s*)?"
    r"(?:(?:prepare\s+)?release|version|bump(?:ed)?(?:\s+(?:the\s+)?version)?(?:\s+to)?)?"
    r"\s*v?\d+\.\d+(?:\.\d+)?(?:[-.+]?[0-9A-Za-z]+)*\.?\s*(?:$|\*|\(|\n)",
    re.IGNORECASE,
)
# A line that states a version: an assignment or constant whose name is or ends in "version" (any case, with
# underscores), given a string literal that starts like a version number.
_STATES_VERSION = re.compile(
    r"^[ \t]*(?:export[ \t]+)?(?:(?:pub|const|static|final|public|private|let|var|val|readonly)[ \t]+)*"
    r"(?:[\w<>\[\]]+[ \t]+)?\w*?_{0,2}version_{0,2}[ \t]*(?::[ \t]*[\w<>\[\]&']+[ \t]*)?:?=[ \t]*['\"]v?\d+\.\d+",
    re.IGNORECASE | re.MULTILINE,
)


def reads_as_release(task: str) -> bool:
    """Whether the task's first line is a release: a version number, perhaps after "release", "version" or
    "bump(ed) to"."""
    return _RELEASE_TASK.match(task.lstrip().split("\n", 1)[0]) is not None


def states_version(text: str) -> bool:
    """Whether a chunk's text assigns a version string to a name ending in "version"."""
    return ("ersion" in text or "ERSION" in text) and _STATES_VERSION.search(text) is not None
