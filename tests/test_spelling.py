"""A mistyped task word read as the indexed word it most likely is (lamina/retrieval/spelling.py; schema 24's
session, from a new-user run on urfave/cli: "sugestion for mistyped comand names" missed suggestions.go)."""

from __future__ import annotations

import numpy as np

from lamina.packet import unknown_words_note
from lamina.retrieval.localization import LocalizeParams, build_chunk_corpus, localize, word_coverage
from lamina.retrieval.spelling import read_as, spelling_index
from lamina.runtime.selection_model import load_english_words

VOCABULARY = [
    "suggestion",
    "command",
    "commands",
    "timestamp",
    "necessary",
    "production",
    "render",
    "renders",
]


def _index(counts: list[int] | None = None):
    vocabulary = {term: column for column, term in enumerate(VOCABULARY)}
    chunks = np.asarray(counts or [3] * len(VOCABULARY))
    return spelling_index(vocabulary, chunks, frozenset({"unnecessary", "protection", "think"}))


def test_a_word_one_edit_from_an_indexed_term_is_read_as_it() -> None:
    said = {"sugestion": "sugestion", "comand": "comand", "timestmap": "timestmap"}
    assert read_as(["sugestion", "comand", "timestmap"], said, _index) == {
        "sugestion": "suggestion",  # a letter left out
        "comand": "command",
        "timestmap": "timestamp",  # two neighbours swapped: one edit
    }


def test_english_words_identifiers_compounds_and_short_words_are_not_respelt() -> None:
    said = {
        "unnecessary": "unnecessary",  # English: a commit's word, no typo of `necessary`
        "protection": "protection",
        "rendr": "rendr",  # 5 letters: read
        "rend": "rend",  # 4: too short to tell a typo from a word
        "asynccomand": "asyncComand",  # an identifier the code does not have yet
        "commandz": "command-z",  # a compound
    }
    found = read_as(list(said), said, _index)
    assert found == {"rendr": "render"}


def test_of_two_indexed_words_one_edit_away_the_one_in_more_chunks_wins() -> None:
    counts = [3] * len(VOCABULARY)
    said = {"renderz": "renderz"}
    assert read_as(["renderz"], said, lambda: _index(counts)) == {"renderz": "render"}  # a tie: the smaller
    counts[VOCABULARY.index("renders")] = 9
    assert read_as(["renderz"], said, lambda: _index(counts)) == {"renderz": "renders"}


def test_the_english_words_come_from_the_selection_models_vocabulary() -> None:
    english = load_english_words()
    assert all(w in english for w in ("unnecessary", "protection", "suggestion", "think"))
    assert not any(w in english for w in ("sugestion", "comand", "timestmap", "renederer"))


def test_a_task_with_typos_finds_the_file_its_words_name_and_says_how_it_read_them() -> None:
    paths = ["suggestions.go", "command.go", "help.go"]
    texts = [
        "func suggestCommand(commands []*Command, provided string) string: the suggestion for a misspelt word",
        "type Command struct: a command of the application and its flags",
        "func helpCommand: prints the help of the application, its flags and their names",
    ]
    corpus = build_chunk_corpus(
        paths, ["suggestCommand", "Command", "helpCommand"], ["function", "struct", "function"],
        [1, 1, 1], [9, 9, 9], texts, None, roles=["code"] * 3,
    )  # fmt: skip
    task = "sugestion for mistyped names is not shown"
    first = localize(corpus, task, None)[0]
    assert first["file"] == "suggestions.go"
    # the word as the code writes it (the path suggestions.go), not the index's term
    assert any("sugestion (as suggestions)" in reason for reason in first["reasons"]), first["reasons"]
    unread = localize(corpus, task, None, params=LocalizeParams(read_misspelt=False))
    assert unread[0]["file"] != "suggestions.go"  # by its other words alone, help.go says more
    coverage = word_coverage(corpus, task)
    assert coverage["read_as"] == {"sugestion": "suggestions"} and "sugestion" in coverage["unknown_words"]
    assert unknown_words_note(coverage) == (
        "Not in any indexed file: sugestion (read as suggestions), mistyped, shown."
    )
    # a 4-letter word that folds to five ("Groß" -> gross) is no word to read as another
    assert (
        read_as(
            ["gross"], {"gross": "Groß"}, lambda: spelling_index({"cross": 0}, np.asarray([5]), frozenset())
        )
        == {}
    )


def test_the_index_is_built_only_when_a_word_could_be_mistyped() -> None:
    asked: list[int] = []

    def index_of():
        asked.append(1)
        return _index()

    assert read_as(["asyncclient", "ab12c", "rend"], {"asyncclient": "asyncClient"}, index_of) == {}
    assert asked == []  # an identifier, a word with digits, a short word: nothing to read
    assert read_as(["sugestion"], {}, index_of) == {"sugestion": "suggestion"} and asked == [1]


def test_inflected_english_words_and_names_inside_a_sentence_are_not_respelt() -> None:
    """New-user runs (session 37) saw "setters" read as `better`, "quirks" as `quick` and "Discord" as `discard`."""
    vocabulary = {term: column for column, term in enumerate(["better", "quick", "discard", "command"])}
    english = frozenset({"setter", "quirk", "revert", "make"})
    index = spelling_index(vocabulary, np.asarray([3, 3, 3, 3]), english)
    said = {
        "setters": "setters",
        "quirks": "quirks",
        "reverted": "reverted",
        "making": "making",
        "discord": "Discord",
    }
    assert read_as(list(said), said, lambda: index, frozenset({"Discord"})) == {}
    assert read_as(["discord"], {"discord": "Discord"}, lambda: index) == {"discord": "discard"}  # not a name
    assert read_as(["comand"], {"comand": "comand"}, lambda: index) == {
        "comand": "command"
    }  # a typo still is


def test_the_english_words_include_a_dictionarys_not_only_the_vocabulary() -> None:
    english = load_english_words()
    assert all(w in english for w in ("revert", "setter", "quirk", "discord", "fallback", "suggestion"))
    assert not any(w in english for w in ("sugestion", "comand", "timestmap", 3, None))
    assert english.hashes.nbytes < 4_000_000  # hashes, not 270,000 strings (~70 MB as a set)


def test_a_capitalised_name_inside_the_task_is_never_read_as_a_typo() -> None:
    corpus = build_chunk_corpus(
        ["src/discard.py"], ["discard_message"], ["function"], [1], [5], ["def discard_message(): drop it"],
        None, roles=["code"],
    )  # fmt: skip
    assert word_coverage(corpus, "Post the release to Dicard channels")["read_as"] == {}
    assert word_coverage(corpus, "post the release to dicard channels")["read_as"] == {"dicard": "discard"}


def test_a_common_misspelt_inflection_is_no_english_word_but_a_proper_one_is() -> None:
    """A second new-user run (session 37): "occured", "refered", "failes" and "loger" passed as English by their
    plain forms, so they were never read as the code's words; "setters", "reverting", "occurred" are English."""
    from lamina.retrieval.spelling import is_english

    english = frozenset({"occur", "refer", "fail", "log", "setter", "revert", "make", "stop", "box"})
    for typo in ("occured", "refered", "failes", "loger"):
        assert not is_english(typo, english), typo
    for word in (
        "occurred",
        "referred",
        "fails",
        "logger",
        "setters",
        "reverting",
        "making",
        "stopped",
        "boxes",
    ):
        assert is_english(word, english), word


def test_a_word_whose_stem_alone_is_one_edit_away_is_not_read_as_another() -> None:
    """ "sqlite" was read as `split` (stems `sqlit` and `split`; a new-user run, session 37): the task's word itself
    must be one edit from the term or from the code's word for it."""
    index = spelling_index({"split": 0, "suggestion": 1}, np.asarray([4, 4]), frozenset())
    words = {"sqlit": "sqlite", "sugestion": "sugestion"}
    surface = {"split": "split", "suggestion": "suggestions"}.__getitem__
    assert read_as(["sqlit", "sugestion"], words, lambda: index, surface=surface) == {
        "sugestion": "suggestion"
    }
    assert read_as(["sqlit"], words, lambda: index) == {"sqlit": "split"}  # stems alone: the old reading
