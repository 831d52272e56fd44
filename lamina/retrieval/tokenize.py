"""Code-aware tokenization shared by indexing and queries, so both sides always agree on terms.

A *word* is a run of letters, digits, `_` and `-` (snake_case, kebab-case). Each word yields its
*parts* (split at `_`/`-`, camelCase and acronym boundaries, and letter/digit boundaries) and, when it
has more than one part, the *whole identifier*: the case-folded word without separators, stemmed like
any term ("RefundService", "refund_service" and "refund-service" all give "refundservic"), so an exact
identifier in a task matches strongly while its parts still match loosely. Every other character
(spaces, `/`, `.`, `(`, quotes …) separates words, which splits paths into their segments.

Terms are case-folded; stopwords, single letters and over-long runs are dropped; ASCII words get a
light suffix stripper (`stem`). The rules are deterministic and documented in docs/ranking.md
("Ranking primitives").
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from lamina.constants import ISSUE_BOILERPLATE_MIN_LINES, TOKEN_MAX_CHARS
from lamina.retrieval.stopwords import HYPHEN_PREFIXES
from lamina.retrieval.stopwords import TASK_STOPWORDS as TASK_STOPWORDS_FOR_QUERY

# A word: letters, digits, '_' and '-' in any script. Leading, trailing and repeated joiners are
# harmless (word_terms drops empty segments), and this simple pattern is the fastest scan.
_WORD_RE = re.compile(r"[\w-]+")
_JOINERS_RE = re.compile(r"[_-]+")
# ASCII case parts: an acronym's plural ("URLs", "IDs" -> URL, ID: the first group), an acronym before a
# capitalised word ("HTTPServer" -> HTTP, Server), a (capitalised) lower-case run, a trailing acronym, or a
# digit run (the second group). Before session 38 a plural acronym split as "UR", "Ls" and "APIs" never met `API`.
_ASCII_PART_RE = re.compile(r"([A-Z]{2,})s(?![a-z])|([A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+)")

# Kept short on purpose: only words that carry no meaning in a task *or* in code. Words that can be
# domain terms stay ("return", "order", "class", "new", "not", "no", "get", "set", "import").
STOPWORDS: frozenset[str] = frozenset(
    # English function words
    "a an and are as at be been but by for from has have in into is it its of on or such than that the "
    "their then there these they this to was were will with "
    # code noise: receiver names, keywords and literals that appear in nearly every chunk
    "self cls def elif args kwargs none null nil true false void var let const fn func".split()
)

_VOWELS = frozenset("aeiouy")
# Doubled consonants undone after "-ed"/"-ing" ("shipped" -> ship). Not d, f, l, s, z: "added",
# "staffed", "called", "passed", "buzzing" keep their double letter.
_UNDOUBLE = frozenset("bgmnprt")


def stem(term: str) -> str:
    """A tiny deterministic suffix stripper for lower-case ASCII words; other terms are unchanged.

    Aims at *consistency* (both sides of a match get the same stem), not at dictionary words:
    "cache", "caches" -> "cach"; "placed", "place", "placing" -> "plac"; "shipped", "shipping",
    "ships" -> "ship"; "policies", "policy" -> "policy"; "cancelled", "canceled" -> "cancel".
    """
    if not (term.isascii() and term.isalpha()):
        return term
    w = term
    # Each step looks at the last letter first: most terms end in none of these and return fast.
    # 1. plurals
    if w[-1] == "s":
        if w.endswith("ies") and len(w) > 4:
            w = w[:-3] + "y"
        elif w.endswith("sses"):
            w = w[:-2]
        elif w.endswith(("xes", "ches", "shes", "zzes")) and len(w) > 4:
            w = w[:-2]
        elif len(w) >= 4 and not w.endswith(("ss", "us", "is", "ias")):
            w = w[:-1]
    # 2. verb endings; the stem must keep a vowel ("string", "thing", "shed" stay whole)
    if w[-1] == "d":
        if w.endswith("ied") and len(w) > 4:
            w = w[:-3] + "y"
        elif w.endswith("ed") and not w.endswith("eed") and len(w) >= 4 and _has_vowel(w[:-2]):
            w = _undouble(w[:-2])
    elif w[-1] == "g" and w.endswith("ing") and len(w) >= 5 and _has_vowel(w[:-3]):
        w = _undouble(w[:-3])
    # 3. a final "e" goes everywhere, so "place"/"placed" and "cache"/"caches" meet
    if w[-1] == "e" and len(w) >= 3:
        w = w[:-1]
    # 4. long words lose one of a final "ll" ("cancelled" -> cancel, "install" -> instal)
    if w[-1] == "l" and w.endswith("ll") and len(w) >= 6:
        w = w[:-1]
    return w


def _has_vowel(s: str) -> bool:
    return any(c in _VOWELS for c in s)


def _undouble(s: str) -> str:
    if len(s) >= 3 and s[-1] == s[-2] and s[-1] in _UNDOUBLE:
        return s[:-1]
    return s


def _case_parts(segment: str) -> list[str]:
    """Split one separator-free segment at case and letter/digit boundaries."""
    if segment.isascii():
        return [plural or part for plural, part in _ASCII_PART_RE.findall(segment)]
    # Any script: same rules, by character class. Uncased letters (e.g. CJK) count as lower case.
    parts: list[str] = []
    start = 0
    for i in range(1, len(segment)):
        prev, cur = segment[i - 1], segment[i]
        boundary = (
            prev.isdigit() != cur.isdigit()
            or (not prev.isupper() and not prev.isdigit() and cur.isupper())
            or (prev.isupper() and cur.isupper() and i + 1 < len(segment) and segment[i + 1].islower())
        )
        if boundary:
            parts.append(segment[start:i])
            start = i
    parts.append(segment[start:])
    return parts


def _keep(term: str) -> bool:
    return (
        0 < len(term) <= TOKEN_MAX_CHARS
        and term not in STOPWORDS
        and not (len(term) == 1 and not term.isdigit())
    )


def _word_parts(word: str) -> tuple[list[str], list[str]]:
    """One word's parts as written and case-folded (the segmentation word_terms and word_term_texts share)."""
    # A separator-free run longer than TOKEN_MAX_CHARS is a hash or an encoded blob: its pieces would
    # be noise ("a1b2…" -> a, 1, b, 2, …), so it is dropped whole.
    segments = [s for s in _JOINERS_RE.split(word) if 0 < len(s) <= TOKEN_MAX_CHARS]
    raw_parts = [part for segment in segments for part in _case_parts(segment)]
    return raw_parts, [part.casefold() for part in raw_parts]


@lru_cache(maxsize=1 << 18)
def word_terms(word: str) -> tuple[str, ...]:
    """The terms of one word (as matched by the word pattern): its parts, then the whole identifier."""
    _raw, folded = _word_parts(word)
    terms = [stem(part) for part in folded if _keep(part)]
    if len(folded) > 1:
        whole = "".join(folded)
        if len(whole) <= TOKEN_MAX_CHARS:
            terms.append(stem(whole))
    return tuple(terms)


def word_term_texts(word: str) -> tuple[tuple[str, str], ...]:
    """word_terms(word), each with the text it stands for: a part's own letters ("entries" of
    `from_entries`, "buffer" of `heap-buffer-overflow`), the whole word for the whole-identifier term. Reasons
    quote these, so they never claim a match on a word of which only a part matched."""
    raw_parts, folded = _word_parts(word)
    texts = [raw for raw, part in zip(raw_parts, folded, strict=True) if _keep(part)]
    if len(texts) < len(terms := word_terms(word)):  # the whole identifier's term comes last
        texts.append(word)
    return tuple(zip(terms, texts, strict=True))


def task_word_term_texts(word: str) -> tuple[tuple[str, str], ...]:
    """word_term_texts as a task reads it: a hyphenated word's leading prefix ("non-", "multi-": HYPHEN_PREFIXES)
    is no term of its own."""
    parts = word_term_texts(word)
    prefix = word.split("-", 1)[0].casefold() if "-" in word else ""
    if prefix in HYPHEN_PREFIXES and len(parts) > 1:
        return tuple((t, said) for t, said in parts if said.casefold() != prefix)
    return parts


def split_words(text: str) -> list[str]:
    """The words of `text`, in order, before they are split into terms (see the module docstring)."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)  # full-width letters, ligatures, composed accents
    return _WORD_RE.findall(text)


def tokenize(text: str) -> list[str]:
    """All terms of `text`, in order, with repeats (the index side)."""
    return [term for word in split_words(text) for term in word_terms(word)]


def count_terms(text: str) -> dict[str, int]:
    """Term -> occurrences; equal to Counter(tokenize(text)), but each distinct word is split once."""
    counts: dict[str, int] = {}
    for word, n in Counter(split_words(text)).items():
        for term in word_terms(word):
            counts[term] = counts.get(term, 0) + n
    return counts


def query_terms(text: str) -> list[str]:
    """The distinct terms of a query, in first-seen order: a repeated word counts once (see bm25.py)."""
    return list(dict.fromkeys(tokenize(text)))


# --- Reading a task (query side only; the index side above is unchanged) ----------------------------
# A raw token of a task: words joined by the characters identifiers and paths are written with.
_RAW_TOKEN_RE = re.compile(r"[\w./:#-]+(?:\(\))?")
_BACKTICKED_RE = re.compile(r"`([^`\n]+)`")
# A commit subject's scope: `tpl/collections: …`, `net/http, net/url: …`, `fix(query-builder): …`.
_SCOPE_RE = re.compile(
    r"^\s*(?:(?P<type>[a-z]+)\((?P<conv>[^)\n]+)\)!?|(?P<plain>[\w./-]+(?:\s*,\s*[\w./-]+)*)):\s"
)
# Conventional-commit types and their kin: words about the change, not about the code.
COMMIT_TYPES = frozenset(
    "feat feature fix bugfix hotfix chore refactor docs doc test tests build ci perf style revert deps "
    "release wip".split()
)
_CAMEL_RE = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2,}[a-z]")
# What a commit message carries that is not about the code (strip_commit_noise): commit hashes (7-64 hex
# digits with at least one digit and one letter a-f), git's cherry-pick trailer, a backport bot's
# "[PR /abc1234 backport]" subject and "**This is a backport of PR … as merged into …**" line, and
# "[3.15]" branch tags. Their pieces (`de`, `fb`, `98382`, `cherry`, `master`, `15`) matched chunks at
# random. Issue 15, session 9 (bench/file_structure.py clean; 80 of the 285 tuning tasks change, 75 of
# them aiohttp's backports), paired against the task read as it is: file MRR +0.018 [+0.003, +0.033],
# file R@1 +0.029 [+0.009, +0.053], symbol R@10 +0.007 [-0.004, +0.018]; hashes alone +0.011 [-0.001,
# +0.023], without the branch tags +0.017 [+0.003, +0.031].
_COMMIT_HASH_RE = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b", re.IGNORECASE)
_BACKPORT_RE = re.compile(
    r"\(?cherry[- ]picked from commit[^)\n]*\)?"
    r"|\*\*this is a backport of pr[^\n]*"
    r"|\[pr\s*/?\s*\w*\s+backport\]",
    re.IGNORECASE,
)
_BRANCH_TAG_RE = re.compile(r"\[\d+(?:\.\d+)+\]")


def commit_hashes(text: str) -> tuple[str, ...]:
    """The commit hashes a task names ("This reverts commit 55fcffe…", "backport of 83b06e4"), lower-case,
    each once, in the task's order: the same pattern strip_commit_noise drops from the task's terms. Whether
    one names a commit of the repository is git's to say (lamina/repo/git.py commit_paths)."""
    return tuple(dict.fromkeys(h.lower() for h in _COMMIT_HASH_RE.findall(text)))


def _subject_scope(text: str) -> re.Match[str] | None:
    """The commit scope on the task's first line (`tpl/collections: …`, `fix(query-builder): …`), if any."""
    return _SCOPE_RE.match(text.lstrip().split("\n", 1)[0])


def commit_scope(text: str) -> str | None:
    """The plain commit scope the task's first line starts with (`ignore/types: add Gleam` -> `ignore/types`), as
    written; None for none, a conventional `type(scope): …` or a commit type (`fix: …`)."""
    scope = _subject_scope(text)
    if scope is None or scope.group("type") or not scope.group("plain"):
        return None
    plain = scope.group("plain").strip()
    return None if plain.casefold() in COMMIT_TYPES else plain


# A task about configuration by its first line: a commit type or scope for builds, CI or dependencies
# (`ci: …`, `build(deps): …`, `chore(deps): …`, `deps: qs@2.2.0`), or the word "Bump" first ("Bump MSRV to
# 1.58", Dependabot's "Bump pytest from 9.1.0 to 9.1.1").
CONFIGURATION_SCOPES = frozenset("build ci deps deps-dev dependencies".split())


def reads_as_configuration(text: str) -> bool:
    """Whether the task's first line says it changes configuration (CONFIGURATION_SCOPES, or "Bump" first)."""
    first = text.lstrip().split("\n", 1)[0]
    scope = _subject_scope(first)
    if scope is not None:
        said = {
            scope.group("type") or "",
            *re.split(r"[,\s]+", scope.group("conv") or scope.group("plain") or ""),
        }
        if {w.casefold() for w in said} & CONFIGURATION_SCOPES:
            return True
        first = first[scope.end() :]
    return first.lstrip().casefold().startswith("bump ")


# Stack-trace frames a task may quote, each giving the source file of the frame:
#   Java/Kotlin `at org.shop.UserService.updateUser(UserService.java:192)` (the class's package names its folders),
#   .NET `at Shop.IdentityService.AuthorizeAsync(String id) in /src/IdentityService.cs:line 56`,
#   JS `at handle (/app/src/routes/user.js:42:7)` or `at /app/src/x.ts:3:1`,
#   Python `File "/srv/app/shop/refunds.py", line 12, in issue`,
#   Go `\t/home/me/shop/refunds.go:12 +0x1d` and `shop/refunds.go:12`.
_JAVA_FRAME = re.compile(r"\bat\s+([\w$.]+)\.[\w$<>]+\(([\w$]+\.(?:java|kt|scala|groovy)):\d+\)")
_DOTNET_FRAME = re.compile(r"\bat\s+[^\n]*?\bin\s+([^\s:]*[\w/\\.-]+\.(?:cs|fs|vb)):line\s+\d+")
_JS_FRAME = re.compile(r"\bat\s+(?:[^\n(]*\()?((?:[A-Za-z]:)?[\w/\\.@-]+\.(?:[cm]?[jt]sx?)):\d+(?::\d+)?\)?")
_PYTHON_FRAME = re.compile(r'File\s+"([^"]+\.py)",\s+line\s+\d+')
_GO_FRAME = re.compile(r"(?:^|\s)((?:[A-Za-z]:)?[\w/\\.@-]+\.go):\d+")


def stack_frames(text: str) -> tuple[str, ...]:
    """The source files of the stack-trace frames the task quotes, innermost frame first, as path tails to
    match against the repository's files (`org/shop/UserService.java`, `src/IdentityService.cs`,
    `shop/refunds.py`). Python prints its innermost frame last, the others first. Empty without a trace."""
    frames: list[str] = []
    for match in _JAVA_FRAME.finditer(text):
        owner, file = match.group(1), match.group(2)
        package = owner.split("$", 1)[0].rsplit(".", 1)[0] if "." in owner else ""
        frames.append(f"{package.replace('.', '/')}/{file}" if package else file)
    frames += [m.group(1) for m in _DOTNET_FRAME.finditer(text)]
    frames += [m.group(1) for m in _JS_FRAME.finditer(text)]
    frames += [m.group(1) for m in reversed(list(_PYTHON_FRAME.finditer(text)))]
    frames += [m.group(1) for m in _GO_FRAME.finditer(text)]
    return tuple(dict.fromkeys(f.replace("\\", "/") for f in frames))


# A pasted issue's boilerplate: environment dumps (`GOARCH='amd64'`, `export PATH="…"`, `set GOPATH=…`) and
# template checklists (`- [x] I have searched the existing issues`). urfave/cli: a 2,083-character issue sent
# every entry to scripts/build.go, on the `GO*` words of its `go env` output.
_ENV_LINE_RE = re.compile(r"(?m)^[ \t]*(?:export[ \t]+|set[ \t]+)?[A-Z][A-Z0-9_]{2,}=.*$")
_CHECKLIST_LINE_RE = re.compile(r"(?m)^[ \t]*[-*][ \t]+\[[ xX]\].*$")
# A collapsed block (`<details>…</details>`): what a pull request or issue pastes and folds away — Dependabot's
# release notes and commit lists of the bumped package, logs. Its words sent "Bump distlib from 0.4.2 to 0.4.3"
# to the CI workflows instead of requirements/dev.txt (session 37).
_DETAILS_TAG_RE = re.compile(r"<(/?)details\b[^>]*>", re.IGNORECASE)
# What a pull request's description carries that is not the task (a new-user run on trpc, session 37: its
# template's comments, badge links and co-author lines sent the task to other files, and `Co-authored-by` and
# PR numbers filled `unknown_words`): HTML comments, images, a link's scheme and host (its path and text stay:
# `/docs/inference` says where), trailers
# (`Signed-off-by: …`, `Co-authored-by: …`, Gerrit's `Change-Id: …`), and references to issues or pull
# requests (`(#2601)`, "Fixes #12", `GH-12`).
_HTML_COMMENT_RE = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_IMAGE_RE = re.compile(r"!\[[^\]\n]*\]\([^)\s]*\)")
_URL_RE = re.compile(r"\bhttps?://[^\s/)>\]]+", re.IGNORECASE)  # the scheme and host; the path stays
_TRAILER_RE = re.compile(
    r"(?im)^[ \t]*(?:signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|suggested-by|"
    r"helped-by|change-id|reviewed-on|cc):.*$"
)
# (Session 37, a second new-user run on pino and miniflux:) markdown comments (`[//]: # (dependabot-automerge-start)`),
# Dependabot's `updated-dependencies:` block, a list of bare links (`- [Release notes](…)`, `- [Commits](…)`), its
# "Dependabot will resolve …" footer, HTML tags with their attributes (`<img alt=… width="600">`; the text between
# tags stays), and references to another repository's issue (`pinojs/pino#2293`).
_MARKDOWN_COMMENT_RE = re.compile(r"(?m)^[ \t]*\[(?://|comment)\]:[ \t]*(?:#|<>).*$")
_DEPENDENCY_BLOCK_RE = re.compile(r"(?ms)^---[ \t]*\nupdated-dependencies:.*?(?:^\.\.\.[ \t]*$|\Z)")
_LINK_LIST_LINE_RE = re.compile(r"(?m)^[ \t]*[-*][ \t]+\[[^\]\n]{1,40}\]\([^)\n]*\)[ \t.,;]*$")
_BOT_FOOTER_RE = re.compile(
    r"(?ms)^[ \t]*(?:Dependabot will resolve|You can trigger Dependabot actions)\b.*\Z"
)
_HTML_TAG_RE = re.compile(
    r"</?(?:img|br|hr|p|div|span|a|b|i|em|strong|sub|sup|kbd|summary|table|thead|tbody|tr|td|th|ul|ol|li|pre|"
    r"code|h[1-6]|picture|source|video|blockquote)\b[^>\n]*>",
    re.IGNORECASE,
)
_CROSS_REPO_REF_RE = re.compile(r"\b[\w.-]+/[\w.-]+#\d+\b")
_ISSUE_REF_RE = re.compile(
    r"\(#\d+\)|\bgh-\d+\b|"
    r"\b(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?|see|refs?|pr|issue|pull request)[ \t]+#\d+\b",
    re.IGNORECASE,
)


def _without_details(text: str) -> str:
    """`text` without its collapsed `<details …>…</details>` blocks, nested ones whole (an unclosed one runs to the
    end: the rest was folded away)."""
    if "<details" not in text.lower():
        return text
    out, depth, at = [], 0, 0
    for tag in _DETAILS_TAG_RE.finditer(text):
        if not tag.group(1):  # an opening tag
            if depth == 0:
                out.append(text[at : tag.start()])
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                at = tag.end()
                out.append(" ")
    if depth == 0:
        out.append(text[at:])
    return "".join(out)


def strip_commit_noise(text: str) -> str:
    """`text` without commit hashes, cherry-pick and backport boilerplate, `[3.15]` branch tags, collapsed
    `<details>` blocks, HTML comments, images, a URL's scheme and host, trailers, issue and pull-request references, and a pasted
    issue's environment dumps and checklists (each replaced by a space). Query side only: read_task calls it;
    indexed text is never changed."""
    text = _COMMIT_HASH_RE.sub(" ", text)
    text = _BACKPORT_RE.sub(" ", text)
    text = _without_details(text)
    text = _HTML_COMMENT_RE.sub(" ", text)
    text = _MARKDOWN_COMMENT_RE.sub(" ", text)
    text = _DEPENDENCY_BLOCK_RE.sub(" ", text)
    text = _LINK_LIST_LINE_RE.sub(" ", text)
    text = _BOT_FOOTER_RE.sub(" ", text)
    text = _HTML_TAG_RE.sub(" ", text)
    text = _CROSS_REPO_REF_RE.sub(" ", text)
    text = _IMAGE_RE.sub(" ", text)
    text = _URL_RE.sub(" ", text)
    text = _TRAILER_RE.sub(" ", text)
    text = _ISSUE_REF_RE.sub(" ", text)
    for boilerplate in (_ENV_LINE_RE, _CHECKLIST_LINE_RE):  # a dump or a list, not one line a task is about
        if len(boilerplate.findall(text)) >= ISSUE_BOILERPLATE_MIN_LINES:  # ("MAX_RETRIES=3 is too low")
            text = boilerplate.sub(" ", text)
    return _BRANCH_TAG_RE.sub(" ", text)


@dataclass(frozen=True)
class TaskQuery:
    """A task as a developer reads it: its scoring terms (task stopwords out), which of them come from
    identifiers the task names (backticks, CamelCase, snake_case, dotted and call forms, paths, commit
    scopes), and the task's own word behind each term, for reasons."""

    terms: tuple[str, ...]  # distinct scoring terms in first-seen order
    identifier_terms: frozenset[str]  # terms of named identifiers (their whole form and their parts)
    names: frozenset[str]  # the whole-identifier terms (and one-part identifiers) matched against names
    words: Mapping[str, str]  # term -> the task's text that first produced it (word_term_texts)
    # The folders its commit scope names (`fix(examples): …`, `examples/textinput: …`), lower-cased, "/"
    # between a path's folders; commit types (`docs: …`) are not folders. Localization reads the programs
    # of such a folder as code even where the folder makes them docs or tests (session 32).
    folders: tuple[str, ...] = ()
    # The examples it names ("fix the chat example", "update table-resize example"), lower-cased: localization
    # reads an examples folder's program of that name as code and lists it first (session 33).
    examples: tuple[str, ...] = ()
    # The named identifiers' words as written (case kept: Go's `Command.Run` is not `Command.run`), and each
    # adjacent pair of a qualified one (`Command.Run` -> ("Command", "Run"); not of a backticked command line,
    # `docker create --help`): which symbol the task names, and whose.
    written: frozenset[str] = frozenset()
    written_pairs: frozenset[tuple[str, str]] = frozenset()
    # The code files it names by name and suffix or by path, as written, in order (`registry.h`,
    # `src/pager.rs`): localization lists them first (session 37).
    files: tuple[str, ...] = ()
    # The names that name symbols: `names` but a path's last part, which names a file (`github/codeql-action/init`
    # made every `init` "the task names this symbol", session 37). None: all of `names` (a TaskQuery built by hand).
    symbol_names: frozenset[str] | None = None


# "<name> example": the example program a task names; the name is one word, hyphens allowed.
_EXAMPLE_RE = re.compile(r"\b([a-z0-9][a-z0-9_-]*)\s+example\b", re.IGNORECASE)


# A file suffix inside the task's text (`rich/_ratio.py`, `cells.py:207`): no word of the task (a reason
# "lexical: rich, ratio, py" quoted it, and `py` matches every Python file's imports).
_CODE_SUFFIXES = "py|pyi|go|rs|java|kt|kts|scala|ts|tsx|js|jsx|mjs|cjs|c|h|cc|cpp|hpp|cs|rb|php|swift"
# (A configuration file's suffix stays a word: leaving out yml, toml, md, lock… cost 3 training commits and gained
# none, session 37 — code that reads `state.yml` says so.)
_INLINE_SUFFIX_RE = re.compile(rf"(?<=[\w/])\.(?:{_CODE_SUFFIXES})(?=$|[\s`'\"),:;#])", re.IGNORECASE)
_FILE_SUFFIX_RE = re.compile(rf"\.({_CODE_SUFFIXES}|md|rst|toml|ya?ml|json)$", re.IGNORECASE)
# A file the task names by its name and suffix, or a path to it (`registry.h`, `packages/server/src/index.ts`).
_NAMED_FILE_RE = re.compile(
    rf"^(?:[\w.@-]+/)*[\w@-][\w.@-]*\.(?:{_CODE_SUFFIXES}|vue|svelte|html|erb|css|scss|sh|lua|ex|exs|dart|m|mm)$"
)


# A function's arity as Elixir and Erlang write it (`Repo.transaction/3`, `lists:keyfind/3`): no path. Read as a
# path, `/3` named the symbol "3" (a new-user run on oban, session 38).
_ARITY_RE = re.compile(r"(?<=[A-Za-z0-9_?!])/\d{1,2}$")


def _strip_token(token: str) -> str:
    token = token.rstrip(".:,;#-")
    return _ARITY_RE.sub("", token.lstrip(".:#-"))


def _is_identifier(token: str) -> bool:
    core = token[:-2] if token.endswith("()") else token
    if not core or not any(c.isalpha() for c in core):
        return False
    if token.endswith("()") or "_" in core.strip("_") or "::" in core or "#" in core:
        return True
    if "/" in core and all(core.split("/")):
        return True
    if "." in core and all(part for part in core.split(".")) and not core.replace(".", "").isdigit():
        return True
    return _CAMEL_RE.search(core) is not None


def read_task(text: str) -> TaskQuery:
    """Read a task: see TaskQuery. Pure; the index side's tokenize() is not changed by it."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    text = strip_commit_noise(text)
    named: list[str] = []  # identifier strings, in order
    scope = _subject_scope(text)
    body = text
    folders: list[str] = []
    if scope is not None:
        raw = scope.group("conv") or scope.group("plain") or ""
        pieces = [s.strip() for s in re.split(r"[,\s]+", raw) if s.strip()]
        # a commit type (`fix: …`, `docs: …`) says what kind of change it is, not where: no identifier
        named.extend(p for p in pieces if p.casefold() not in COMMIT_TYPES)
        for piece in pieces:
            folder = piece.casefold().strip("./")
            if folder and folder not in COMMIT_TYPES and folder not in folders:
                folders.append(folder)
        if scope.group("type"):
            body = text.replace(scope.group(0).strip(), " ", 1)
    named.extend(_ARITY_RE.sub("", m.group(1).strip()) for m in _BACKTICKED_RE.finditer(text))
    for raw_token in _RAW_TOKEN_RE.findall(body):
        token = _strip_token(raw_token)
        if _is_identifier(token):
            named.append(token)
    terms: dict[str, None] = {}
    words: dict[str, str] = {}
    identifier_terms: set[str] = set()
    names: set[str] = set()
    written: set[str] = set()
    written_pairs: set[tuple[str, str]] = set()
    files: dict[str, None] = {}
    symbol_names: set[str] = set()
    for ident in named:
        core = _FILE_SUFFIX_RE.sub("", _INLINE_SUFFIX_RE.sub(" ", ident).strip())
        ident_words = split_words(core)
        # a path names its file: `rich/live_render.py` names live_render, not a symbol called rich
        named_words = ident_words[-1:] if "/" in core else ident_words
        names_a_symbol = core.count("/") < 2 and not _FILE_SUFFIX_RE.search(ident)  # "min/max" is no path
        for word in ident_words:
            parts = task_word_term_texts(word)
            if not parts:
                continue
            identifier_terms.update(t for t, _ in parts)
            if word in named_words:
                names.add(parts[-1][0])  # the whole identifier (or the single part of a one-part word)
                if names_a_symbol:
                    symbol_names.add(parts[-1][0])
            for t, said in parts:
                terms.setdefault(t, None)
                words.setdefault(t, said)
        written.update(named_words)
        # a backticked command line (`docker create --help`) is no owner's
        if not any(c.isspace() for c in core):
            written_pairs.update(zip(named_words, named_words[1:], strict=False))
        if _NAMED_FILE_RE.match(ident.strip("/")):
            files.setdefault(ident.strip("/"), None)
    for word in split_words(_INLINE_SUFFIX_RE.sub(" ", body)):
        folded = word.casefold()
        if folded in TASK_STOPWORDS_FOR_QUERY or folded in COMMIT_TYPES and scope is not None:
            continue
        for t, said in task_word_term_texts(word):
            terms.setdefault(t, None)
            words.setdefault(t, said)
    examples = tuple(
        dict.fromkeys(
            name.casefold()
            for name in _EXAMPLE_RE.findall(text)
            if name.casefold() not in TASK_STOPWORDS_FOR_QUERY and name.casefold() not in COMMIT_TYPES
        )
    )
    return TaskQuery(
        tuple(terms),
        frozenset(identifier_terms),
        frozenset(names),
        words,
        tuple(folders),
        examples,
        frozenset(written),
        frozenset(written_pairs),
        tuple(files),
        frozenset(symbol_names),
    )
