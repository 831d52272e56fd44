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
    r"\s*v?\d+\.\d+(?:\.\d+)?[0-9A-Za-z]*(?:[-.+][0-9A-Za-z]+)*\.?\s*(?:$|\*|\(|\n)",
    re.IGNORECASE,
)
# A line that states a version: an assignment or constant whose name is or ends in "version" (any case, with
# underscores), given a string literal that starts like a version number.
_STATES_VERSION = re.compile(
    r"^[ \t]*(?:export[ \t]+)?(?:(?:pub|const|static|final|public|private|let|var|val|readonly)[ \t]+)*"
    r"(?:[\w<>\[\]]+[ \t]+)?\w*?_{0,2}version_{0,2}[ \t]*(?::[ \t]*[\w<>\[\]&']+[ \t]*)?:?=[ \t]*['\"]v?\d+\.\d+",
    re.IGNORECASE,
)


def reads_as_release(task: str) -> bool:
    """Whether the task's first line is a release: a version number, perhaps after "release", "version" or
    "bump(ed) to"."""
    return _RELEASE_TASK.match(task.lstrip().split("\n", 1)[0]) is not None


_LONGEST_LINE = 300  # characters

# Where a version may be assigned: "version", a short type annotation or nothing, "=" or ":=", a quoted number.
# Cheap; each hit's line is then read with _STATES_VERSION (maven's 30,689 chunks, a Java project that says
# "version" everywhere: 0.9 s when the whole pattern read every line, ~0.1 s so).
_VERSION_VALUE = re.compile(r"ersion_{0,2}[ \t]*(?::[^=\n]{1,40})?:?=[ \t]*['\"]v?\d+\.\d", re.IGNORECASE)


def states_version(text: str) -> bool:
    """Whether a chunk's text assigns a version string to a name ending in "version"."""
    if "ersion" not in text and "ERSION" not in text:  # most chunks: a substring test, no regex
        return False
    for hit in _VERSION_VALUE.finditer(text):
        start = text.rfind("\n", 0, hit.start()) + 1
        end = text.find("\n", hit.end())
        end = len(text) if end < 0 else end
        # a version assignment is a short line; a long one (minified code, data) is skipped, which also keeps
        # a hostile file with thousands of hits on one line from costing a copy of that line for each
        if end - start <= _LONGEST_LINE and _STATES_VERSION.match(text[start:end]) is not None:
            return True
    return False
