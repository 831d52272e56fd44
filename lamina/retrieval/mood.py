"""Whether a task asks for something or only reports what happened. Pure; English word lists.

A product manager reads "A screening agency rang to check a candidate's degree and was told she'd never
studied here" as one problem to fix, however many workflows its story passes through; "When a student
withdraws, send back whatever fees they overpaid" asks for two things. A task *reads as a report* when it
tells in the past tense (`was`, `rang`, `dropped` …) and asks for nothing: no wish or obligation
(`should`, `needs to`, `wants`, `please` …), no piece that starts with an order (`Refund …`, `…, then
send …`), no list of points. Selection reads a report as one intent (lamina/retrieval/intents.py); the
lists below are the only English it knows, so a report in another language is read as before.
"""

from __future__ import annotations

import re

from lamina.constants import ADDED_SENTENCES

# Wishes and obligations anywhere in a task: it asks for something.
_ASKS = re.compile(
    r"""\b(?:should|shouldn't|must|mustn't|ought|please|needs?(?:\s+to)?|wants?|wanted\s+to|let|lets
    |make\s+sure|ha(?:ve|s)\s+to|(?:can|could|would)\s+(?:we|you)|(?:would|we'd|i'd)\s+like|is\s+it\s+possible)\b""",
    re.IGNORECASE | re.VERBOSE,
)
# Words that open a sentence adding a request to the one before ("… Also, send …", "Separately, …").
ADDING_WORDS = (
    r"(?:also|then|plus|and|additionally|separately|besides|secondly|second|in\s+addition|on\s+top\s+of\s+that"
    r"|while\s+we'?re\s+at\s+it|another\s+thing)"
)
_ADDED_SENTENCE = re.compile(rf"(?:^|[.!?]\s+){ADDING_WORDS}\b", re.IGNORECASE)
# A list of points ("1) …", "- …", "Two things: …") asks for each.
_LIST = re.compile(r"(?:^|\s)(?:\(?1[).]|-\s)|\btwo\s+things\b|\bboth\b", re.IGNORECASE)
# Where an order can start: after a sentence end, a colon, a semicolon, a comma, "and", "then".
_PIECE_START = re.compile(
    r"(?<=[.!?;:])\s+|\n+|\s*;\s*|,\s*(?:and\s+)?(?:then\s+|also\s+)?|\s+and\s+(?:also\s+|then\s+)?|\s+then\s+",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_NAMED_BY_NUMBER = re.compile(r"^\W*[A-Za-z][A-Za-z'-]*\s+\d")  # "Route 3 needs …": a name, not an order
_LEAD_INS = frozenset("also and then please so just now separately".split())
# Verbs a task orders with (the imperative); a piece starting with one asks for something.
ORDER_VERBS: frozenset[str] = frozenset(
    """
    add allow apply approve archive arrange assign attach automate award block book bring build calculate
    cancel capture carry change charge chase check clear close collect confirm connect copy create declare
    deduct delete disable don't draft drop email enable end enter export extend fetch file find fix flag
    forward generate get give handle hide hold import include invite issue keep let link list load lock log
    make mark match merge move never notify offer open pay pick plan post prevent print publish push put
    raise record reduce refund register reject release remind remove renew reopen reply report request
    require reset restart restore retry return review route run save schedule send set show sort split
    start stop store submit suggest support switch take tell text track transfer trigger try turn unlock
    update upload validate verify warn
    accept adjust allocate cap convert deliver display encrypt enforce expose fill implement improve
    integrate introduce limit localise localize migrate optimise optimize provide rebuild redirect
    refactor rename replace restrict rewrite sell ship simplify sync translate unblock
    """.split()
)
# The past tense: irregular forms, and regular ones (-ed).
_IRREGULAR_PAST = frozenset(
    """
    was were had did got went came rang paid sent told left found took gave kept said saw forgot made ran
    lost bought sold wrote brought caught spent thought knew became began broke chose drove fell felt heard
    held hit hung led meant met quit read rode rose shut sat slept spoke stood stole struck swore tore threw
    understood woke wore won
    """.split()
)
_REGULAR_PAST = re.compile(r"\b[a-z]{3,}ed\b")
# Finite verbs in the present that follow a subject ("Refund is …", "Report keeps …").
_FINITE = frozenset("is isn't are aren't has hasn't have haven't does doesn't keeps still never".split())
_LOWER_WORD = re.compile(r"[a-z']+")


def starts_with_order(piece: str) -> bool:
    """The text starts with a verb in the imperative ("Refund a paid order …", "… then send …")."""
    words = _WORD.findall(piece)
    if not words or _NAMED_BY_NUMBER.match(piece.lstrip()):
        return False
    lowered = [w.lower() for w in words]
    if lowered[0] in _LEAD_INS and len(lowered) > 1:
        lowered = lowered[1:]
    # "Refund went to the wrong card": a verb after the first word makes it the subject, not an order.
    subject = len(lowered) > 1 and (lowered[1] in _FINITE or _is_past(lowered[1]))
    return lowered[0] in ORDER_VERBS and not subject


def asks_for_something(task: str) -> bool:
    """A wish or obligation, a list of points, a sentence that adds a point ("… Also, …"), or a piece that
    starts with an order."""
    if _ASKS.search(task) or _LIST.search(task) or (ADDED_SENTENCES and _ADDED_SENTENCE.search(task)):
        return True
    return any(starts_with_order(piece) for piece in _PIECE_START.split(task))


def _is_past(word: str) -> bool:
    return word in _IRREGULAR_PAST or bool(_REGULAR_PAST.fullmatch(word))


def tells_the_past(task: str) -> bool:
    lowered = task.lower()
    return bool(set(_LOWER_WORD.findall(lowered)) & _IRREGULAR_PAST) or bool(_REGULAR_PAST.search(lowered))


# Where a request names the verb it asks for: after "let <someone>" (up to three words on) and after a
# modal ("should be able to", "can", "needs to", "wants to", "must"; the next two words).
_ASKED_AFTER = (
    (re.compile(r"\blets?\s+", re.IGNORECASE), 3),
    (re.compile(r"\b(?:should(?:\s+be\s+able\s+to)?|can|needs?\s+to|wants?\s+to|must)\s+", re.IGNORECASE), 2),
)


def asked_words(task: str) -> list[str]:
    """The words where a request names the verb it asks for ("Let buyers **cancel** an order …", "Shoppers
    should be able to **enter** a code"), as written, in pattern order; a few neighbours come with them."""
    return [
        word
        for pattern, span in _ASKED_AFTER
        for m in pattern.finditer(task)
        for word in task[m.end() :].split()[:span]
    ]


# A capitalised word (a person, a place, a firm, a day or a month: "Mrs Kowalski", "the Hexley desk",
# "Harlow Engineering", "by Friday") where the text does not start a sentence, a line or a list item.
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+")
_STARTS_HERE = re.compile(r"(?:^|[.!?:;\n]|\n\s*(?:\d+[.)]|[-*\u2022]))[\s\"'(\u201c\u2018*]*$")
_LOOK_BACK = 24  # characters read before a word: a list marker, quotes and spaces fit; reading stays linear


def capitalised_names(task: str) -> list[str]:
    """The capitalised words inside a sentence (not starting a sentence, a line or a list item), as written."""
    names = []
    for m in _CAPITALISED.finditer(task):
        start = m.start()
        # "\0" stands for the text cut off before the window, so `^` matches only the task's own start.
        before = ("\0" if start > _LOOK_BACK else "") + task[max(0, start - _LOOK_BACK) : start]
        if not _STARTS_HERE.search(before):
            names.append(m.group(0))
    return names


def names_an_instance(task: str) -> bool:
    """The task names one particular case — someone, somewhere, some firm or day — by a capitalised word
    inside a sentence: it is about running the product as it is, not about behaviour it lacks."""
    return bool(capitalised_names(task))


def reads_as_report(task: str) -> bool:
    """True when the task tells what happened and asks for nothing: one problem, read as one intent."""
    return tells_the_past(task) and not asks_for_something(task)
