"""A release task ("Bumped v5.11.3") and the code that states a version (lamina/retrieval/release.py)."""

from __future__ import annotations

import pytest

from lamina.retrieval.release import reads_as_release, states_version


@pytest.mark.parametrize(
    "task",
    [
        "Bumped v5.11.3",
        "Bumped v6.0.0-alpha.2",
        "Version 0.28.1",
        "Version 0.27.0 * Version 0.27.0 * Update CHANGELOG.md",
        "Release v3.14.3",
        "chore(release): v1.7.0",
        "0.74.3",
        "Bump version to 1.2.3",
        "Bump to 7.3.0\n\nAnd the changelog.",
        "Prepare release 2.0.0",
    ],
)
def test_a_task_that_names_a_new_version_reads_as_a_release(task: str) -> None:
    assert reads_as_release(task)


@pytest.mark.parametrize(
    "task",
    [
        "Bump serde from 1.0 to 1.1",  # a dependency, not this project's version
        "Update to v2.1 of the API",
        "Fix the 1.2 regression in the client",
        "fix: handle version 2 headers",
        "Version the API",
        "Release the lock before 1.2 seconds pass",
        "Add a --version flag\n\nVersion 1.2.0 printed nothing.",  # only the first line counts
    ],
)
def test_other_tasks_do_not(task: str) -> None:
    assert not reads_as_release(task)


@pytest.mark.parametrize(
    ("text", "states"),
    [
        ('__version__ = "0.28.1"', True),
        ("'use strict'\n\nconst VERSION = '5.5.0'\n", True),
        ('var version = "0.74"', True),
        ('pub const VERSION: &str = "1.2.3";', True),
        ('public static final String VERSION = "2.11";', True),
        ('export const VERSION = "1.7.2";', True),
        ('APP_VERSION := "1.2"', True),
        ("  version: '1.2.0',", False),  # an object's field (route constraints, test data)
        ("x = version(1.2)", False),
        ("versions = '1.2'", False),
        ("self.version = '1.2'", False),
        ('PROTOCOL = "1.1"', False),
    ],
)
def test_a_chunk_states_a_version_when_it_assigns_one_to_a_version_name(text: str, states: bool) -> None:
    assert states_version(text) is states


def test_a_long_line_is_not_read_however_many_versions_it_assigns() -> None:
    """Minified code or a hostile file: one long line is skipped (it held 50,000 hits, and each copied the
    900 KB line before); a short line after it still counts."""
    line = "var version='1.2';" * 50_000
    assert not states_version(line)
    assert states_version(line + '\n__version__ = "1.2.0"\n')


def test_reading_a_long_version_like_task_takes_no_backtracking() -> None:
    """A version and then a long run of letters that fails: each part can be read one way only (an optional
    separator between letter runs once made this exponential: 26 letters took 17 s)."""
    assert not reads_as_release("v1.2.3" + "a" * 5_000 + "!")
    assert not reads_as_release("1.2" + ".a1" * 5_000 + " and more words")
    assert reads_as_release("v1.2.3rc1-beta.2+build.5")
