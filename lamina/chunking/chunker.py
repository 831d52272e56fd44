"""Syntax-aware chunks: one per symbol (function, method, class, …), with qualified names.

Every source line belongs to exactly one chunk, except member signature lines, which also appear in
their class's chunk: a class chunk is the class's own lines (header, fields, docstring) plus the first
line of each member; member bodies live only in their own chunks. So no text is embedded twice, and a
class still matches the names of its methods. Lines outside every top-level symbol (imports, constants,
module docstring, `if __name__ …`) form the "<module>" chunk. A chunk longer than CHUNK_MAX_LINES lines
or CHUNK_MAX_CHARS characters is split into overlapping windows (part 0, 1, …). Markdown, TOML and YAML
become sections; any other text, minified code, and code that is mostly parse errors with no symbol
in them, becomes line windows ("<file>"); symbols inside parse errors are still symbols, and C, C++ and C#
with parse errors may be read through the first branch of each `#if`. docs/chunking.md has the full rules.
"""

from __future__ import annotations

import bisect
import re
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from tree_sitter import Node, Parser
from tree_sitter_language_pack import get_parser

from lamina.chunking.languages import (
    CODE_LANGUAGES,
    CONTAINER,
    FUNCTION,
    SECTION_LANGUAGES,
    TEXT,
    CodeLanguage,
    SymbolRule,
    language_for,
)
from lamina.constants import (
    CHUNK_MAX_CHARS,
    CHUNK_MAX_LINES,
    CHUNK_WINDOW_OVERLAP,
    DECLARATION_MIN_LINES,
    MINIFIED_AVG_LINE_CHARS,
    PARSE_ERROR_MAX_FRACTION,
    SYMBOL_SEARCH_DEPTH,
)

MODULE_SYMBOL = "<module>"
FILE_SYMBOL = "<file>"
HEADING_SEPARATOR = " > "


@dataclass(frozen=True)
class Chunk:
    path: str
    language: str
    symbol: str  # "RefundService.issue"; "<module>" for top-level code; "Install > Linux" for a heading
    kind: str  # function method class struct enum interface trait impl variable property | module | section
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    text: str
    part: int = 0  # window index when a long symbol is split (0 when not split)


@dataclass(frozen=True)
class _Symbol:
    name: str  # qualified
    kind: str
    start: int  # 0-based row, including leading comments, decorators and wrappers
    end: int  # 0-based row, inclusive
    head: int  # the row that names it: its line in the enclosing class's chunk
    members: tuple[_Symbol, ...]


# Function-like expressions: never searched for declarations (their insides are not the file's API).
_OPAQUE = frozenset(
    {
        "arrow_function",
        "function_expression",
        "function",
        "generator_function",
        "lambda",
        "closure_expression",
    }
)
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
# JS/TS `const`/`let`/`var`, and what a declared value may be wrapped in (`{…} as const`, `x satisfies T`).
_DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration"})
_VALUE_WRAPPERS = frozenset(
    {"as_expression", "satisfies_expression", "non_null_expression", "parenthesized_expression"}
)
_DECLARED_FUNCTION_VALUE = SymbolRule("function", FUNCTION)  # `const f = () => …`, anywhere searched
# A long top-level declaration of a call, `new`, object or class expression (_declared): members searched.
_DECLARED_CLASS = SymbolRule("class", CONTAINER)
_DECLARED_FUNCTION = SymbolRule("function", CONTAINER)  # `$constructor("X", (inst, def) => {…})`
_DECLARED_VARIABLE = SymbolRule("variable", CONTAINER)
# Declarations that are symbols only with a body (Java/C#/Go/TS abstract, interface or extern ones).
_BODY_REQUIRED = frozenset(
    {"method_declaration", "constructor_declaration", "destructor_declaration", "function_declaration"}
)
# C# members that are symbols only with code and DECLARATION_MIN_LINES lines from their name (_csharp_member).
_CSHARP_ACCESSOR_MEMBERS = frozenset({"property_declaration", "indexer_declaration", "event_declaration"})
_CSHARP_OPERATORS = frozenset({"operator_declaration", "conversion_operator_declaration"})
_C_NAME_TYPES = frozenset(
    {"identifier", "field_identifier", "qualified_identifier", "destructor_name", "operator_name"}
)
# Statements a broken C parse can misread as `type name(…) {` (`else if (x) {`): never function names.
_C_STATEMENT_WORDS = frozenset(
    {"if", "else", "while", "for", "do", "switch", "case", "return", "sizeof", "goto"}
)
# What may precede a C/C++ declarator in a function header (`static const struct x *`, `uInt`, `Cart<T>`).
_C_TYPE_PARTS = frozenset(
    {
        "storage_class_specifier",
        "type_qualifier",
        "primitive_type",
        "sized_type_specifier",
        "type_identifier",
        "struct_specifier",
        "union_specifier",
        "enum_specifier",
        "macro_type_specifier",
        "template_type",
        "qualified_identifier",
        "placeholder_type_specifier",
        "attribute_specifier",
        "attribute_declaration",
        "ms_declspec_modifier",
        "virtual",
        "explicit_function_specifier",
    }
)
# Conditional-compilation directives of C, C++, C# and Swift (`#elseif`), and the grammars that have them.
_CONDITIONAL = re.compile(r"[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|elseif|else|endif)\b")
_PREPROCESSED = frozenset({"c", "cpp", "csharp", "swift"})
_GENERIC_ARGS = re.compile(r"<[^<>]*>")
_SPACE = re.compile(r"\s+")


def chunk_file(path: str, data: bytes) -> list[Chunk]:
    """Chunks of one file, ordered by (start_line, part). Pure, and never raises on bad input."""
    language = language_for(path) or TEXT
    try:
        text = decode_source(data).removeprefix("\ufeff")
        lines = [line.removesuffix("\r") for line in text.split("\n")]
        if lines and lines[-1] == "":
            lines.pop()
        if not any(line.strip() for line in lines):
            return []
        chunks = _structured_chunks(path, language, text, lines)
        if chunks is None and path.lower().endswith(TEMPLATE_SUFFIXES):
            chunks = _template_chunks(path, language, lines)
        if chunks is None:
            chunks = _line_window_chunks(path, language, lines)
    except Exception:  # a grammar or decoding surprise must never stop indexing: plain windows
        try:
            lines = decode_source(data).split("\n")
            chunks = _line_window_chunks(path, language, lines)
        except Exception:
            return []
    return sorted(chunks, key=lambda c: (c.start_line, c.part, -c.end_line, c.symbol, c.kind))


# Django, Jinja, Twig, Nunjucks and Liquid templates: `{% block content %}…{% endblock %}` and Jinja/Twig/Nunjucks
# `{% macro field(name) %}…{% endmacro %}` are their named parts. They were 80-line windows, so "add a block for
# the page title in base.html" listed lines 211-247, not the `title` block at line 5 (healthchecks, a new-user run
# of session 37). A template without them stays line windows.
TEMPLATE_SUFFIXES = (".html", ".htm", ".jinja", ".jinja2", ".j2", ".twig", ".njk", ".liquid", ".tmpl")
_TEMPLATE_TAG = re.compile(r"\{%-?\s*(block|endblock|macro|endmacro)\b\s*([A-Za-z_][\w.]*)?")


def _template_chunks(path: str, language: str, lines: list[str]) -> list[Chunk] | None:
    """A template's blocks and macros as symbols (blocks inside a block are its members, named `outer.inner`),
    the rest `<module>`; None when it has none or they do not nest (line windows, as before)."""
    opened: list[tuple[str, str, int, list[_Symbol]]] = []  # (tag, name, start row, members)
    top: list[_Symbol] = []
    for row, line in enumerate(lines):
        for match in _TEMPLATE_TAG.finditer(line):
            tag, name = match.group(1), match.group(2) or ""
            if tag in ("block", "macro"):
                if not name:
                    return None
                opened.append((tag, name, row, []))
                continue
            if not opened or opened[-1][0] != tag.removeprefix("end"):
                return None  # an end without its start: not the template language these rules read
            kind_tag, name, start, members = opened.pop()
            scope = [o[1] for o in opened]
            qualified = ".".join((*scope, name))
            kind = "function" if kind_tag == "macro" else "section"
            symbol = _Symbol(
                name=qualified, kind=kind, start=start, end=row, head=start, members=tuple(members)
            )
            (opened[-1][3] if opened else top).append(symbol)
    if opened or not top:
        return None
    return _symbol_chunks(path, language, top, lines)


# An encoding declared in the first two lines: PEP 263 (`# -*- coding: latin-1 -*-`), Emacs and Vim modelines.
_CODING_COOKIE = re.compile(rb"coding[:=][ \t]*([-\w.]+)")
# os.fsdecode-style surrogates of the bytes 0x80-0xFF back to the Latin-1 characters of those bytes.
_STRAY_BYTES = {0xDC80 + b: chr(0x80 + b) for b in range(128)}


def decode_source(data: bytes) -> str:
    """A file's text: UTF-8; else the encoding its first two lines declare; else UTF-8 with each byte that
    is not UTF-8 read as its Latin-1 character. Not U+FFFD: a replacement character ends an identifier, so a
    Latin-1 `def calcule_la_récupération()` was the symbol `ration` (a new-user run, session 35), while a
    Latin-1 `é` keeps the name whole (and right, for Latin-1 files) and valid UTF-8 around it stays as it is."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    for line in data.split(b"\n", 2)[:2]:
        cookie = _CODING_COOKIE.search(line)
        if cookie is not None:
            try:
                return data.decode(cookie.group(1).decode("ascii"))
            except (LookupError, UnicodeDecodeError):  # unknown, not a text encoding, or not what it says
                break
    return data.decode("utf-8", errors="surrogateescape").translate(_STRAY_BYTES)


def _structured_chunks(path: str, language: str, text: str, lines: list[str]) -> list[Chunk] | None:
    """Symbol or section chunks, or None when line windows serve better."""
    if language == TEXT or len(text) / len(lines) > MINIFIED_AVG_LINE_CHARS:
        return None
    # an Objective-C header (`.h` is read as C++ otherwise)
    if language == "cpp" and _OBJC_HEADER.search(text):
        language = "objc"
    code = CODE_LANGUAGES.get(language)
    grammar = code.grammar if code else language
    if grammar == "cpp":
        text = _without_annotation_macros(text)
    elif grammar == "kotlin":
        text = _with_one_annotation_each(_with_constructors_joined(text))
    if language in _SINGLE_FILE_COMPONENTS:
        text = _script_blocks(text)
    root = _parser(grammar).parse(text.encode("utf-8")).root_node
    if code is not None:
        return _code_chunks(path, language, code, root, lines, text)
    if _mostly_unparsed(root, len(lines)):
        return None
    if language in SECTION_LANGUAGES:
        return _section_chunks(path, language, root, lines)
    return None


# --- parsing ----------------------------------------------------------------------------------------

_PARSERS = threading.local()  # tree-sitter parsers are not thread-safe: one set per thread


# C++ macros the grammar cannot know, in two places where they break a declaration: an export or
# capability macro between `class`/`struct` and the name (`class LEVELDB_EXPORT DB {`, read as a function
# `DB` of type `class LEVELDB_EXPORT`), and annotations after a parameter list (`bool Insert(…)
# LOCKS_EXCLUDED(mu_) {`, read as a function named LOCKS_EXCLUDED). An all-caps word there is a macro.
_CLASS_MACRO = re.compile(
    r"\b(?:class|struct)\s+([A-Z][A-Z0-9_]*[A-Z0-9])\s+(?=[A-Za-z_]\w*\s*(?:final\b\s*)?[:{])"
)
# (Session 37, spdlog:) a specifier macro that opens a declaration's line (`SPDLOG_INLINE std::shared_ptr<logger>
# registry::get(…)` was named `std.shared_ptrregistry.get`; `FMT_CONSTEXPR auto f(…)`, `Q_INVOKABLE void g()`), and
# a macro alone on its line (`FMT_BEGIN_NAMESPACE` / `namespace detail {` was a function named `namespace`). A word
# with an underscore in capitals is a macro; a type such as `DWORD` has none and is left alone.
_LEADING_MACRO = re.compile(r"(?m)^[ \t]*([A-Z][A-Z0-9]*_[A-Z0-9_]*(?:\([^()\n]*\))?)[ \t]+(?=[A-Za-z_~]|::)")
_MACRO_LINE = re.compile(r"(?m)^[ \t]*([A-Z][A-Z0-9]*_[A-Z0-9_]*)[ \t]*$")
_TRAILING_MACRO = re.compile(
    r"\)(?:\s|const\b|noexcept\b|override\b|final\b)*([A-Z][A-Z0-9_]*[A-Z0-9](?:\s*\([^()]*\))?)"
    r"(?=\s*(?:[{;]|:(?!:)|->|override\b|final\b|[A-Z][A-Z0-9_]*[A-Z0-9]\b))"
)


# ktfmt's class header: the primary constructor on the line after the name (`public class PropertySpec` /
# `private constructor(…) : Taggable {`). The grammar ends the class at the newline and reads the rest as
# garbage, so KotlinPoet's 18 core classes had no members.
_KOTLIN_CLASS_HEADER_END = re.compile(r"\b(?:class|object)\s+[\w`$]+(?:\s*<[^<>]*(?:<[^<>]*>[^<>]*)*>)?\s*$")
_KOTLIN_CONSTRUCTOR_LINE = re.compile(
    r"^[ \t]*(?:@[\w.]+(?:\([^()]*\))?[ \t]+)*(?:(?:public|private|internal|protected)[ \t]+)?constructor\b"
)


# An Objective-C header's declarations, which the C++ grammar cannot read (AFNetworking's `.h` files).
_OBJC_HEADER = re.compile(r"(?m)^[ \t]*@(?:interface|protocol|implementation)\b")
# Vue and Svelte components: only what their `<script>` blocks hold is code to parse.
_SINGLE_FILE_COMPONENTS = frozenset({"vue", "svelte"})
_SCRIPT_BLOCK = re.compile(r"(<script\b[^>]*>)(.*?)(</script\s*>)", re.DOTALL | re.IGNORECASE)
_NOT_NEWLINE = re.compile(r"[^\n]")


def _script_blocks(text: str) -> str:
    """A component's text with everything outside its `<script>` blocks blanked to spaces, so the script
    parses as a program at its own rows and columns and the template and styles stay `<module>` lines."""
    out, at = [], 0
    for match in _SCRIPT_BLOCK.finditer(text):
        out.append(_NOT_NEWLINE.sub(" ", text[at : match.start(2)]))
        out.append(match.group(2))
        at = match.end(2)
    out.append(_NOT_NEWLINE.sub(" ", text[at:]))
    return "".join(out)


def _with_constructors_joined(text: str) -> str:
    """Such a constructor line moved up to its class's line, leaving an empty line: rows stay the file's (the
    chunks keep the file's own lines)."""
    if "constructor" not in text:
        return text
    lines = text.split("\n")
    for row in range(len(lines) - 1):
        if _KOTLIN_CONSTRUCTOR_LINE.match(lines[row + 1]) and _KOTLIN_CLASS_HEADER_END.search(lines[row]):
            lines[row] = f"{lines[row]} {lines[row + 1].strip()}"
            lines[row + 1] = ""
    return "\n".join(lines)


# Kotlin annotations alone on their lines above a declaration (`@Preview` / `@Composable` / `private fun A()`):
# with two or more of them and a modifier, the grammar reads the declaration as an annotated expression when another
# declaration follows, and the function is lost (18 of nowinandroid's composables, a new-user run of session 37).
# Only the last annotation of such a run (comment lines among them belong to it) is kept for the parse (the others
# blanked to spaces: rows and columns stay the file's); the chunk still starts at the first (_leading_start).
_KOTLIN_ANNOTATION = re.compile(r"@[\w.:]+(?:\([^()\n]*\))?")
_KOTLIN_ANNOTATION_LINE = re.compile(r"^[ \t]*(?:@[\w.:]+(?:\([^()\n]*\))?[ \t]*)+$")


def _in_annotation_run(line: str) -> bool:
    """An annotation-only line, or a comment line among or above annotations."""
    return _KOTLIN_ANNOTATION_LINE.match(line) is not None or line.lstrip().startswith(("//", "/*", "*"))


def _with_one_annotation_each(text: str) -> str:
    """The text with every annotation of a run of annotation-only lines but the last blanked (see above)."""
    if text.count("@") < 2:
        return text
    lines = text.split("\n")
    row = 0
    while row < len(lines):
        if not _KOTLIN_ANNOTATION_LINE.match(lines[row]):
            row += 1
            continue
        end = row  # the run: annotation lines and the comment lines among them
        while end < len(lines) and _in_annotation_run(lines[end]):
            end += 1
        spans = [
            (r, m.start(), m.end())
            for r in range(row, end)
            if _KOTLIN_ANNOTATION_LINE.match(lines[r])
            for m in _KOTLIN_ANNOTATION.finditer(lines[r])
        ]
        for r, start, stop in spans[:-1]:
            lines[r] = lines[r][:start] + " " * (stop - start) + lines[r][stop:]
        row = end
    return "\n".join(lines)


def _without_annotation_macros(text: str) -> str:
    """The text with those macros blanked (spaces: rows, columns and byte offsets stay the file's)."""

    def blank(match: re.Match[str]) -> str:
        start, end = match.span(1)
        whole = match.group(0)
        offset = start - match.start()
        return (
            whole[:offset]
            + re.sub(r"[^\n]", " ", whole[offset : offset + end - start])
            + whole[offset + end - start :]
        )

    if "class" in text or "struct" in text:
        text = _CLASS_MACRO.sub(blank, text)
    text = _MACRO_LINE.sub(blank, _LEADING_MACRO.sub(blank, text))
    for _ in range(3):  # `LOCKS_EXCLUDED(a) ACQUIRE(b)`: one macro per pass
        blanked = _TRAILING_MACRO.sub(blank, text)
        if blanked == text:
            break
        text = blanked
    return text


def _parser(grammar: str) -> Parser:
    cache: dict[str, Parser] | None = getattr(_PARSERS, "cache", None)
    if cache is None:
        cache = _PARSERS.cache = {}
    if grammar not in cache:
        cache[grammar] = get_parser(grammar)  # type: ignore[arg-type]
    return cache[grammar]


def _end_row(node: Node) -> int:
    """Last row that holds part of the node (tree-sitter ends a node that eats its newline at col 0)."""
    row = node.end_point.row
    if node.end_point.column == 0 and row > node.start_point.row:
        row -= 1
    return row


def _mostly_unparsed(root: Node, line_count: int) -> bool:
    """The root is ERROR, or top-level ERROR nodes cover more than PARSE_ERROR_MAX_FRACTION of the lines."""
    if root.type == "ERROR":
        return True
    if not root.has_error:
        return False
    broken = sum(_end_row(c) - c.start_point.row + 1 for c in root.children if c.type == "ERROR")
    return broken > PARSE_ERROR_MAX_FRACTION * line_count


def _text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def _clean_name(raw: str) -> str:
    """`Cart<T>::add` → `Cart.add`: generic arguments dropped, `::` and whitespace normalised."""
    name = _SPACE.sub("", raw)
    while True:
        stripped = _GENERIC_ARGS.sub("", name)
        if stripped == name:
            break
        name = stripped
    return name.replace("::", ".").strip(".'\"")


# --- code -------------------------------------------------------------------------------------------


def _code_chunks(
    path: str, language: str, code: CodeLanguage, root: Node, lines: list[str], text: str
) -> list[Chunk] | None:
    """Symbol chunks and the <module> chunk, or None (line windows) for a mostly unparsed file with no symbol.

    Symbols are searched for inside ERROR nodes too (a C `#ifdef` that splits a function header or an
    unclosed `extern "C" {` can make one ERROR of the rest of the file, with whole function definitions
    inside it); whatever no symbol covers, error or not, is <module> code. A C, C++ or C# file with parse
    errors may be read through the first branch of each `#if` instead (_first_branch_parse).
    """
    symbols = _find_symbols(root, code, (), False, lines, 0)
    if root.has_error and code.grammar in _PREPROCESSED:
        root, symbols = _first_branch_parse(code, text, lines, root, symbols)
    if not symbols and _mostly_unparsed(root, len(lines)):
        return None
    return _symbol_chunks(path, language, symbols, lines)


def _symbol_chunks(path: str, language: str, symbols: list[_Symbol], lines: list[str]) -> list[Chunk]:
    """The chunks of these symbols, and the `<module>` chunk of every line none covers."""
    covered = _covered_rows(symbols)
    module_rows = [r for r in range(len(lines)) if r not in covered]
    chunks = _window_chunks(path, language, MODULE_SYMBOL, "module", module_rows, lines)
    _emit_symbols(path, language, symbols, lines, chunks)
    return chunks


def _first_branch_parse(
    code: CodeLanguage, text: str, lines: list[str], root: Node, symbols: list[_Symbol]
) -> tuple[Node, list[_Symbol]]:
    """C, C++, C#, Swift: the parse of the file's first `#if` branches, when it reads the file better than the whole.

    Branches of one `#if … #elif … #else … #endif` group are alternatives that need not be complete
    syntax each (`#if X } else { #endif`, one body under two headers), which the grammars cannot place. The
    second parse sees only the code of each group's first branch (_first_branches). It is taken when it has
    fewer lines in errors and names every function and method the first parse named, as many times (by
    unqualified name: `main` under `#else` must not give way to `umain` under `#ifdef WIN32`, nor an `#else`
    copy of a function disappear) — but for names the second parse has as a qualifier: a broken parse reads
    an out-of-line `PosixEnv::Schedule` as a function `PosixEnv` (leveldb's env_posix.cc, where an `#if`
    inside a constructor's initializer list broke 891 lines). Chunks keep the file's lines.
    """
    # Swift's branches must each be whole statements or declarations (the compiler parses them all), so
    # they are all kept: an `#if os(macOS) func draw… #else func draw… #endif` at the top of a type's body
    # broke the whole body (Kingfisher), and the first branch alone would lose the `#else` copy.
    blanked = _first_branches(text, all_branches=code.grammar == "swift")
    if blanked is None:
        return root, symbols
    other = _parser(code.grammar).parse(blanked.encode("utf-8")).root_node
    if _error_rows(other) >= _error_rows(root):
        return root, symbols
    found = _find_symbols(other, code, (), False, lines, 0)
    lost = _function_names(symbols) - _function_names(found)
    if any(name not in _qualifiers(found) for name in lost):
        return root, symbols
    return other, found


def _first_branches(text: str, all_branches: bool = False) -> str | None:
    """The text with every conditional directive line and each `#elif`/`#else` branch's lines made empty
    (with `all_branches`, only the directive lines: Swift's branches are whole declarations each).

    Line numbers stay those of the file. `#if 0` is a group like any other (its first branch is kept).
    None when there is no directive or they do not balance (an `#endif` with no `#if`, an `#if` never
    closed: a directive inside a comment or string, say).
    """
    lines = text.split("\n")
    outer: list[bool] = []  # per open group: whether the code around it is left out
    skipping = False  # the current line is left out (a later branch, or inside one)
    row, changed = 0, False
    while row < len(lines):
        match = _CONDITIONAL.match(lines[row])
        if match is None:
            if skipping:
                lines[row], changed = "", True
            row += 1
            continue
        word = match.group(1)
        if word.startswith("if"):
            outer.append(skipping)
        elif not outer:
            return None
        elif word == "endif":
            skipping = outer.pop()
        else:  # elif, elseif, else: the group's first branch is over
            skipping = not all_branches
        while True:  # the directive and its continuation lines
            continued = lines[row].rstrip().endswith("\\")
            lines[row], changed, row = "", True, row + 1
            if not continued or row >= len(lines):
                break
    if outer or not changed:
        return None
    return "\n".join(lines)


def _error_rows(root: Node) -> int:
    """How many rows hold part of an ERROR node, a MISSING token, or a node with an error none of its
    children has (a `#pragma` line with a hidden error)."""
    if not root.has_error:
        return 0
    rows: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        inner = [child for child in node.children if child.has_error]
        if node.type == "ERROR" or node.is_missing or not inner:
            rows.update(range(node.start_point.row, _end_row(node) + 1))
        else:
            stack.extend(inner)
    return len(rows)


def _qualifiers(symbols: Iterable[_Symbol]) -> set[str]:
    """Every name that qualifies a function or method (`PosixEnv` of `leveldb.PosixEnv.Schedule`)."""
    names: set[str] = set()
    for sym in symbols:
        if sym.kind in ("function", "method"):
            names.update(sym.name.split(".")[:-1])
        names |= _qualifiers(sym.members)
    return names


def _function_names(symbols: Iterable[_Symbol]) -> Counter[str]:
    """How many functions and methods of each unqualified name."""
    names: Counter[str] = Counter()
    for sym in symbols:
        if sym.kind in ("function", "method"):
            names[sym.name.rsplit(".", 1)[-1]] += 1
        names += _function_names(sym.members)
    return names


def _emit_symbols(
    path: str, language: str, symbols: Iterable[_Symbol], lines: list[str], out: list[Chunk]
) -> None:
    for sym in symbols:
        if sym.members:
            covered = _covered_rows(sym.members)
            heads = {m.head for m in sym.members}
            rows = [r for r in range(sym.start, sym.end + 1) if r not in covered or r in heads]
            _emit_symbols(path, language, sym.members, lines, out)
        else:
            rows = list(range(sym.start, sym.end + 1))
        out.extend(_window_chunks(path, language, sym.name, sym.kind, rows, lines, span=(sym.start, sym.end)))


def _covered_rows(symbols: Iterable[_Symbol]) -> set[int]:
    rows: set[int] = set()
    for sym in symbols:
        rows.update(range(sym.start, sym.end + 1))
    return rows


def _find_symbols(
    node: Node, code: CodeLanguage, scope: tuple[str, ...], in_type: bool, lines: list[str], depth: int
) -> list[_Symbol]:
    found: list[_Symbol] = []
    for child in node.named_children:
        if child.type in code.namespaces and child.child_by_field_name("body") is None:
            # C# `namespace A.B;`: it qualifies the declarations that follow it, its siblings.
            name = _clean_name(_text(child.child_by_field_name("name")))
            if name and child.type == "file_scoped_namespace_declaration" and code.namespaces_qualify:
                scope = (*scope, name)
            continue
        found.extend(_visit(child, code, scope, in_type, lines, depth))
    if node.type == "ERROR" and code.grammar in ("c", "cpp"):
        found = _with_open_functions(node, code, scope, in_type, lines, found)
    if code.grammar in ("elixir", "erlang", "haskell"):
        found = _clauses_merged(found)
    return _without_overlaps(found, lines)


def _clauses_merged(found: list[_Symbol]) -> list[_Symbol]:
    """Elixir: the clauses of one function, one after another (`def decode(<<>>)`, `def decode(rest)`, and a
    bodiless head that declares default arguments), are one symbol from the first to the last: plug's
    `decode_value` was five chunks and the packet showed one clause's lines. Erlang's clauses and Haskell's type
    signature and equations the same way."""
    out: list[_Symbol] = []
    for sym in found:
        last = out[-1] if out else None
        if last is not None and last.kind == sym.kind == "function" and last.name == sym.name:
            out[-1] = replace(last, end=max(last.end, sym.end), members=last.members + sym.members)
        else:
            out.append(sym)
    return out


def _without_overlaps(found: list[_Symbol], lines: list[str]) -> list[_Symbol]:
    """Sibling symbols end before the next one starts, and not on blank lines. Scala's indentation grammar
    lets `def a(x: Int): String =` + an indented body take the next declaration's doc comment and first line
    (fastparse: 42 of 1,648 symbols), and a Scala 3 `enum Color:` end on the blank line after it."""
    later: list[int] = []  # the starts of the symbols after the current one, sorted
    ends = []
    for sym in reversed(
        found
    ):  # from the end, so each symbol sees those after it (sorted: no quadratic scan)
        end = sym.end
        at = bisect.bisect_right(later, sym.start)
        if at < len(later) and end >= later[at]:  # the first sibling after it that starts after it
            end = later[at] - 1
        bisect.insort(later, sym.start)
        ends.append(end)
    out = []
    for sym, end in zip(found, reversed(ends), strict=True):
        while end > sym.start and not lines[end].strip():
            end -= 1
        out.append(sym if end == sym.end else replace(sym, end=end))
    return out


def _visit(
    node: Node, code: CodeLanguage, scope: tuple[str, ...], in_type: bool, lines: list[str], depth: int
) -> list[_Symbol]:
    rule = code.symbols.get(node.type)
    if rule is not None:
        symbol = _make_symbol(node, rule, code, scope, in_type, lines)
        if symbol is not None:
            return [symbol]
    if node.type in code.namespaces:
        name = _clean_name(_text(node.child_by_field_name("name")))
        body = node.child_by_field_name("body") or node
        inner = (*scope, name) if name and code.namespaces_qualify else scope
        return _find_symbols(body, code, inner, code.namespace_members_are_methods, lines, 0)
    if node.type == "ERROR":  # no syntax level of its own: what the parser could not place, in order
        return _find_symbols(node, code, scope, in_type, lines, depth)
    if depth >= SYMBOL_SEARCH_DEPTH or node.type in _OPAQUE:
        return []
    if node.type == "function_body" and code.grammar == "dart":  # a signature's body: a local function in
        return []  # it is the method's, as in any language (bloc's AnalysisOptions.resolve was cut to 2 lines)
    if node.type == "expression_statement" and code.grammar == "dart":
        return []  # a statement that is no test block: nothing declared in it
    return _find_symbols(node, code, scope, in_type, lines, depth + 1)


def _make_symbol(
    node: Node, rule: SymbolRule, code: CodeLanguage, scope: tuple[str, ...], in_type: bool, lines: list[str]
) -> _Symbol | None:
    if code.grammar == "kotlin":
        body = _kotlin_body(node)
    elif code.grammar == "elixir":  # `defmodule X do … end`: the call holds its do-block
        body = node
    elif code.grammar == "dart" and node.type == "expression_statement":  # a test block: its closure's body
        body = _dart_test_body(node) or node
    elif node.type == "extension_definition":  # Scala 3: its body may be the one `def` itself
        body = node
    elif node.type in ("call_expression", "function_call"):  # a JS/TS or Lua test block: its function's body
        body = _test_block_body(node) or node
    else:
        body = node.child_by_field_name("body") or node
    named: tuple[str, int, str | None] | None
    if node.type in _DECLARATIONS:
        declared = _declared(node, code)
        if declared is None:
            return None
        name_node, rule, body = declared
        named = (_clean_name(_text(name_node)), name_node.start_point.row, None)
        if not named[0]:
            return None
    else:
        named = _symbol_name(node, code)
    if named is None:
        return None
    local, head, kind = named[0], named[1], named[2] or rule.kind
    if rule.role == FUNCTION:
        kind = "method" if in_type or "." in local else "function"
    qualified = ".".join((*scope, local))
    outer = node
    while outer.parent is not None and _wraps_only(outer.parent, code):
        outer = outer.parent
    start = _leading_start(outer, code, lines)
    detached = _dart_function_body(node) if code.grammar == "dart" else None  # a signature's body beside it
    if node.type == "expression_statement" and code.grammar == "cpp":  # a Catch2 case's block beside it
        detached = _catch2_block(node)
    members: tuple[_Symbol, ...] = ()
    if rule.role == CONTAINER:
        members = tuple(_find_symbols(body, code, (*scope, local), True, lines, 0))
    elif detached is not None and local == "main" and not scope:  # a Dart test file's groups and tests
        members = tuple(_find_symbols(detached, code, (), False, lines, -1))
    end = min(_end_row(detached if detached is not None else outer), len(lines) - 1)
    return _Symbol(name=qualified, kind=kind, start=start, end=end, head=head, members=members)


def _with_open_functions(
    error: Node,
    code: CodeLanguage,
    scope: tuple[str, ...],
    in_type: bool,
    lines: list[str],
    found: list[_Symbol],
) -> list[_Symbol]:
    """C/C++: add the functions whose header an ERROR node holds loose, their body never closed in the tree.

    `static double ulp(U *x) {` as a declarator followed by a bare `{` (the parser could not match the
    braces across `#ifdef` branches) is a function from its header (the type words and comments above
    it included) to the `}` that balances that `{` among the node's children, or else to its last child
    before the next symbol or loose header in the same ERROR node, without trailing comments and
    preprocessor lines.
    """
    kids = error.children  # by index: tree-sitter's sibling steps cost the number of siblings each
    headers: list[tuple[int, int, str, int | None]] = []  # (first row, name row, name, index of its `{`)
    for at, child in enumerate(kids):
        if child.type not in ("function_declarator", "pointer_declarator"):
            continue
        name_node: Node | None = child
        is_function = False
        while name_node is not None and name_node.type not in _C_NAME_TYPES:
            is_function = is_function or name_node.type == "function_declarator"
            name_node = name_node.child_by_field_name("declarator")
        local = _clean_name(_text(name_node))
        if name_node is None or not is_function or not local or local in _C_STATEMENT_WORDS:
            continue
        first = at
        while first > 0 and kids[first - 1].type in _C_TYPE_PARTS:
            if _end_row(kids[first - 1]) < kids[first].start_point.row - 1:
                break
            first -= 1
        start, back = kids[first].start_point.row, first - 1
        while back >= 0 and (
            kids[back].type in code.leading
            and _end_row(kids[back]) >= start - 1
            and not lines[kids[back].start_point.row][: kids[back].start_point.column].strip()  # trailing
        ):
            start, back = kids[back].start_point.row, back - 1
        brace = at + 1 if at + 1 < len(kids) and kids[at + 1].type == "{" else None
        headers.append((start, name_node.start_point.row, local, brace))
    # Where each symbol or loose header starts: a header without `{` is no function, but ends the one above.
    starts = sorted([s.start for s in found] + [h[0] for h in headers])
    before = sorted(found, key=lambda s: s.start)
    taken, i = -1, 0  # the last row of a symbol above the header; symbols in `before` passed
    for start, head, local, brace in headers:
        while i < len(before) and before[i].start <= head:
            taken, i = max(taken, before[i].end), i + 1
        if brace is None or max(start, taken + 1) > head:
            continue  # a header without a body, or its line already belongs to a symbol
        nxt = bisect.bisect_right(starts, head)
        bound = starts[nxt] if nxt < len(starts) else len(lines)  # the first row that is not its
        end, depth, step = _end_row(kids[brace]), 1, brace + 1
        while step < len(kids) and depth > 0 and _end_row(kids[step]) < bound:
            depth += {"{": 1, "}": -1}.get(kids[step].type, 0)
            if kids[step].type != "comment":
                end = max(end, _end_row(kids[step]))
            step += 1
        while depth > 0 and end > head and (not lines[end].strip() or lines[end].lstrip().startswith("#")):
            end -= 1  # no balancing `}`: `#endif` and `#ifdef` lines at the end are the module's
        kind = "method" if in_type or "." in local else "function"
        found.append(_Symbol(".".join((*scope, local)), kind, max(start, taken + 1), end, head, ()))
        taken = end
    return sorted(found, key=lambda s: s.start)


def _wraps_only(parent: Node, code: CodeLanguage) -> bool:
    """A wrapper (`export`, decorators, `template<>`, Go's `type`) of exactly one declaration."""
    return parent.type in code.wrappers and sum(c.type in code.symbols for c in parent.named_children) == 1


def _leading_start(outer: Node, code: CodeLanguage, lines: list[str]) -> int:
    """Include the doc comments and attributes directly above a declaration (no blank line between)."""
    start = outer.start_point.row
    prev = outer.prev_named_sibling
    while prev is not None:
        for _ in range(3):  # Kotlin's grammar ends a package header or import list with the comments below it
            if prev.type in code.leading or _annotation_alone(prev) or not prev.named_children:
                break
            prev = prev.named_children[-1]
        if not (
            (prev.type in code.leading or _annotation_alone(prev))
            and _end_row(prev) >= start - 1
            and not lines[prev.start_point.row][: prev.start_point.column].strip()  # not a trailing comment
        ):
            break
        start = prev.start_point.row
        prev = prev.prev_named_sibling
    if code.grammar == "kotlin" and start > 0 and _KOTLIN_ANNOTATION_LINE.match(lines[start - 1]):
        # the annotations _with_one_annotation_each blanked for the parse, and the doc comment above them
        while start > 0 and _in_annotation_run(lines[start - 1]):
            start -= 1
    return start


def _annotation_alone(node: Node) -> bool:
    """Kotlin: `@OptIn(X::class)` on its own line above a class, which the grammar reads as an annotated
    expression rather than the class's modifier."""
    return (
        node.type == "prefix_expression"
        and bool(node.named_children)
        and node.named_children[0].type == "annotation"
    )


def _symbol_name(node: Node, code: CodeLanguage) -> tuple[str, int, str | None] | None:
    """(local name, row of the name, kind override) or None when the node is no symbol after all."""
    kind: str | None = None
    name_node: Node | None
    t = node.type
    if code.grammar == "kotlin":
        return _kotlin_symbol(node)
    if code.grammar == "elixir":
        return _elixir_symbol(node)
    if code.grammar == "dart":
        return _dart_symbol(node)
    if t == "expression_statement" and code.grammar == "cpp":
        return _catch2_case(node)
    if code.grammar == "zig":
        return _zig_symbol(node)
    if code.grammar == "erlang" and t == "fun_decl":  # named by its clause
        clause = node.named_children[0] if node.named_children else None
        name_node = clause.child_by_field_name("name") if clause is not None else None
        name = _clean_name(_text(name_node))
        return (name, name_node.start_point.row, None) if name_node is not None and name else None
    if code.grammar == "objc" and t != "function_definition":
        return _objc_symbol(node)
    if code.grammar == "lua" and t == "assignment_statement":
        return _lua_assignment(node)
    if code.grammar == "lua" and t == "function_call":
        return _lua_test_block(node)
    if code.grammar == "lua" and t == "field":
        return _lua_field(node)
    if t in _BODY_REQUIRED and node.child_by_field_name("body") is None:
        return None  # an abstract or interface method: a line of its type's chunk, not a chunk
    if code.grammar == "csharp" and (t in _CSHARP_ACCESSOR_MEMBERS or t in _CSHARP_OPERATORS):
        return _csharp_member(node)
    if t == "assignment":  # Python: only a long one at module level
        return _python_assignment(node)
    if t == "call_expression":  # JS/TS: only a test block
        return _test_block(node)
    if t == "type_alias_declaration":  # TypeScript: only a long one (`type Id = string` is a line of code)
        name_node = node.child_by_field_name("name")
        if name_node is None or not _long_enough(node, name_node):
            return None
        return _clean_name(_text(name_node)), name_node.start_point.row, None
    if code.grammar == "swift" and t in _SWIFT_SPECIAL:
        return _swift_symbol(node)
    if t == "extension_definition":  # Scala 3 `extension (s: String)`: named by the extended type
        params = node.child_by_field_name("parameters")
        first = params.named_children[0] if params is not None and params.named_children else None
        extended = first.child_by_field_name("type") if first is not None else None
        name = _clean_name(_text(extended)).rsplit(".", 1)[-1]
        return (name, node.start_point.row, None) if extended is not None and name else None
    if t in ("field_definition", "public_field_definition"):
        if not _is_function_value(node.child_by_field_name("value")):
            return None
        name_node = node.child_by_field_name("property") or node.child_by_field_name("name")
    elif t == "function_definition" and code.grammar in ("c", "cpp", "objc"):  # the end of a declarator chain
        if node.child_by_field_name("body") is None:
            return None  # `Foo(const Foo&) = delete;`, `= default;`: a declaration, no code
        name_node = _c_declarator_name(node)
        test_case = _gtest_case(node, name_node)
        if test_case is not None:
            return test_case
    elif t in ("struct_specifier", "union_specifier", "enum_specifier", "class_specifier"):
        if node.child_by_field_name("body") is None:
            return None  # a use (`struct foo x;`), not a definition
        name_node = node.child_by_field_name("name")
    elif t == "type_definition":
        spec = node.child_by_field_name("type")
        if spec is None or spec.child_by_field_name("body") is None:
            return None
        kind = "enum" if spec.type == "enum_specifier" else "struct"
        name_node = node.child_by_field_name("declarator")
    elif t == "type_spec":  # Go
        kind = {"struct_type": "struct", "interface_type": "interface"}.get(
            getattr(node.child_by_field_name("type"), "type", "")
        )
        if kind is None:
            return None
        name_node = node.child_by_field_name("name")
    elif t == "impl_item":  # Rust: named by the type it implements for
        name_node = node.child_by_field_name("type")
    else:
        name_node = node.child_by_field_name("name")
    name = _clean_name(_text(name_node))
    if not name or name_node is None:
        return None
    if code.grammar == "lua":  # `function M:method()` is called as M:method, defined on M as M.method
        name = name.replace(":", ".")
    if name in _C_STATEMENT_WORDS and code.grammar in ("c", "cpp"):
        return None  # `else if (x) {` misread as a function in a broken parse
    if t == "method_declaration" and code.grammar == "go":
        receiver = _first_of_type(node.child_by_field_name("receiver"), "type_identifier")
        if receiver is not None:
            name = f"{_text(receiver)}.{name}"
    return name, name_node.start_point.row, kind


def _csharp_member(node: Node) -> tuple[str, int, str | None] | None:
    """A C# property, indexer, event with accessors, operator or conversion operator, as a symbol.

    (name, row of the name, None), or None when it stays lines of its type's chunk: it has no code (an
    auto-property `{ get; set; }`, an abstract or interface member, an initializer only, as a field), or
    fewer than DECLARATION_MIN_LINES lines from its name to its end (attribute lines above do not count):
    one-line and two-line members are whole in the class chunk already, as its outline. Names: `MaxDepth`,
    `this[]` (an indexer), `operator==`, `operator true`, `explicit operator DateTime` (the target type
    without namespace or generic arguments).
    """
    t = node.type
    name_node: Node | None
    if t in _CSHARP_OPERATORS:
        if node.child_by_field_name("body") is None:
            return None
        name_node = next((c for c in node.children if c.type == "operator"), None)
        if t == "operator_declaration":
            symbol = _text(node.child_by_field_name("operator")).strip()
            name = f"operator {symbol}" if symbol.isalpha() else f"operator{symbol}"
        else:
            direction = next((c.type for c in node.children if c.type in ("implicit", "explicit")), "")
            target = _clean_name(_text(node.child_by_field_name("type"))).rsplit(".", 1)[-1]
            name = f"{direction} operator {target}".strip() if target else ""
    else:
        accessors = node.child_by_field_name("accessors")
        has_code = any(c.type == "arrow_expression_clause" for c in node.children) or any(
            a.type == "accessor_declaration" and a.child_by_field_name("body") is not None
            for a in (accessors.named_children if accessors is not None else ())
        )
        if not has_code:
            return None
        if t == "indexer_declaration":
            name_node = next((c for c in node.children if c.type == "this"), None)
            name = "this[]"
        else:
            name_node = node.child_by_field_name("name")
            name = _clean_name(_text(name_node))
    if name_node is None or not name:
        return None
    if not _long_enough(node, name_node):
        return None
    return name, name_node.start_point.row, None


_TEST_BLOCK_CALLS = frozenset({"describe", "it", "test", "suite", "context", "specify"})
_TEST_BLOCK_MODIFIERS = frozenset({"only", "skip", "concurrent", "todo", "failing", "sequential"})


def _test_block(node: Node) -> tuple[str, int, str | None] | None:
    """A JS/TS test block (`describe("Clear canvas", () => {…})`, `it.only("shows a dialog", async () => {…})`):
    named by its title, so `related` says which test, not `<module>` (a new-user run on excalidraw: every
    `*.test.tsx` was `<module>` windows). Any other call is no symbol."""
    callee = node.child_by_field_name("function")
    if callee is not None and callee.type == "member_expression":  # it.only, describe.skip, test.concurrent
        if _text(callee.child_by_field_name("property")) not in _TEST_BLOCK_MODIFIERS:
            return None  # `test.on("exit", …)`: a variable named test
        callee = callee.child_by_field_name("object")
    if callee is None or callee.type != "identifier" or _text(callee) not in _TEST_BLOCK_CALLS:
        return None
    args = node.child_by_field_name("arguments")
    named = args.named_children if args is not None else []
    if len(named) < 2 or named[0].type not in ("string", "template_string") or _test_block_body(node) is None:
        return None
    title = _SPACE.sub(" ", _text(named[0])[1:-1]).strip()
    return (title, node.start_point.row, None) if title else None


def _test_block_body(node: Node) -> Node | None:
    args = node.child_by_field_name("arguments")
    for arg in args.named_children if args is not None else []:
        if arg.type in _FUNCTION_VALUES or arg.type == "function_definition":  # Lua's `function() … end`
            return arg.child_by_field_name("body")
    return None


def _python_assignment(node: Node) -> tuple[str, int, str | None] | None:
    """A module-level `NAME = …` (or `NAME: T = …`) spanning DECLARATION_MIN_LINES lines or more: the settings
    dicts, URL tables and registries a task names (django-rest-framework's `DEFAULTS`, Django's `urlpatterns`)
    were lines of a `<module>` window no search put first. Class attributes and one-line constants are not."""
    parent = node.parent
    if parent is not None and parent.type == "expression_statement":
        parent = parent.parent
    left = node.child_by_field_name("left")
    if parent is None or parent.type != "module" or left is None or left.type != "identifier":
        return None
    if not _long_enough(node, left):
        return None
    return _text(left), left.start_point.row, None


def _kotlin_symbol(node: Node) -> tuple[str, int, str | None] | None:
    """A Kotlin class, interface, enum class, object, function with a body, or top-level property of
    DECLARATION_MIN_LINES lines or more (the grammar has no fields).

    The name is the declaration's own identifier child, without backticks; an extension function is named
    by its receiver type too (`KClass.asClassName`: the overloads for KClass, Class and TypeElement are told
    apart). A function without a body (abstract, in an interface) stays a line of its type's chunk.
    """
    kinds = {child.type for child in node.children}
    receiver = ""
    if (
        node.type == "property_declaration"
    ):  # a long top-level one: a theme, a composition local (nowinandroid)
        variable = next((c for c in node.children if c.type == "variable_declaration"), None)
        name_node = (
            next((c for c in variable.children if c.type == "simple_identifier"), None) if variable else None
        )
        top = node.parent is not None and node.parent.type == "source_file"
        if name_node is None or not top or not _long_enough(node, name_node):
            return None
        kind = None
    elif node.type == "function_declaration":
        if "function_body" not in kinds:
            return None
        name_node = next((c for c in node.children if c.type == "simple_identifier"), None)
        kind = None
        receiver_type = next((c for c in node.children if c.type == "receiver_type"), None)
        # `fun KClass<*>.asClassName()`: a method of KClass, as Go's `Recv.Method`; an extension declared in
        # a class stays the class's (`Pool.jitterBy`, not `Pool.Long.jitterBy`, read as a nested class)
        if receiver_type is not None and node.parent is not None and node.parent.type == "source_file":
            receiver = _clean_name(_text(receiver_type).rstrip("?")).rsplit(".", 1)[-1]
    else:
        name_node = next((c for c in node.children if c.type == "type_identifier"), None)
        kind = "interface" if "interface" in kinds else "enum" if "enum_class_body" in kinds else None
    raw = _text(name_node)
    name = raw[1:-1] if len(raw) > 2 and raw[0] == raw[-1] == "`" else _clean_name(raw)  # `escape if needed`
    if name_node is None or not name:
        return None
    return (f"{receiver}.{name}" if receiver else name), name_node.start_point.row, kind


_ZIG_CONTAINER_KINDS = {"struct": "struct", "enum": "enum", "union": "struct", "opaque": "struct"}


def _zig_symbol(node: Node) -> tuple[str, int, str | None] | None:
    """A Zig function with a body (a method inside a type), a type declared as `const Name = struct {…}` (enum,
    union, opaque), or a test named by its title; None for any other declaration (`const std = @import("std")`)."""
    children = {c.type: c for c in node.named_children}
    if node.type == "TestDecl":
        title = children.get("STRINGLITERALSINGLE") or children.get("IDENTIFIER")
        name = " ".join(_text(title).strip('"').split()) if title is not None else ""
        # named as written (`test "add works"`): a code file's inline test, which roles.chunk_role makes a test
        return (f'test "{name}"', node.start_point.row, "function") if name else None
    proto = children.get("FnProto")
    if proto is not None:
        name_node = next((c for c in proto.named_children if c.type == "IDENTIFIER"), None)
        if name_node is None or "Block" not in children:
            return None  # `extern fn …;`: a declaration
        in_type = node.parent is not None and node.parent.type == "ContainerDecl"
        return _text(name_node), name_node.start_point.row, "method" if in_type else "function"
    var = children.get("VarDecl")
    if var is None:
        return None
    name_node = next((c for c in var.named_children if c.type == "IDENTIFIER"), None)
    value = next((c for c in var.named_children if c.type == "ErrorUnionExpr"), None)  # `= struct {…}` itself
    suffix = value.named_children[0] if value is not None and value.named_children else None
    inner = suffix.named_children[0] if suffix is not None and suffix.named_children else None
    container = inner if inner is not None and inner.type == "ContainerDecl" else None
    if name_node is None or container is None:
        return None
    declared = next((c for c in container.named_children if c.type == "ContainerDeclType"), None)
    kind = _ZIG_CONTAINER_KINDS.get(_text(declared).split("(", 1)[0].strip(), "struct")
    return _text(name_node), name_node.start_point.row, kind


def _kotlin_body(node: Node) -> Node:
    """A Kotlin class's body: its class_body; or, after a delegation (`: Taggable by tagMap {…}`), the lambda
    the grammar reads the body as (a trailing lambda of the delegate), when it ends the class; else the node."""
    for child in node.children:
        if child.type in ("class_body", "enum_class_body"):
            return child
    last = node.named_children[-1] if node.named_children else None
    while last is not None and last.type != "lambda_literal":
        last = last.named_children[-1] if last.named_children else None
    return last if last is not None and last.end_byte == node.end_byte else node


_SWIFT_KINDS = {"class": "class", "actor": "class", "struct": "struct", "enum": "enum", "extension": "impl"}


_SWIFT_SPECIAL = frozenset(
    {"class_declaration", "property_declaration", "deinit_declaration", "subscript_declaration"}
)


def _swift_symbol(node: Node) -> tuple[str, int, str | None] | None:
    """A Swift type by its declaration kind (an extension is named by the type it extends, like a Rust
    impl), or a computed property with code DECLARATION_MIN_LINES lines or more from its name (a stored
    or one-line property stays a line of its type's chunk)."""
    if node.type == "deinit_declaration":  # no name of its own: its keyword, as `init` is
        keyword = node.children[0] if node.children else None
        return ("deinit", keyword.start_point.row, None) if keyword is not None else None
    if node.type == "subscript_declaration":  # a C# indexer's kin: `subscript`, a property when 3+ lines
        keyword = node.children[0] if node.children else None
        if keyword is None or not _long_enough(node, keyword):
            return None
        return "subscript", keyword.start_point.row, None
    name_node = node.child_by_field_name("name")
    name = _clean_name(_text(name_node))
    if name_node is None or not name:
        return None
    if node.type == "class_declaration":
        return (
            name,
            name_node.start_point.row,
            _SWIFT_KINDS.get(_text(node.child_by_field_name("declaration_kind"))),
        )
    if node.child_by_field_name("computed_value") is None:
        return None
    if not _long_enough(node, name_node):
        return None
    return name, name_node.start_point.row, None


# Elixir's definitions are calls by name: what each defines, as a Chunk.kind.
_ELIXIR_FUNCTIONS = frozenset(
    {"def", "defp", "defmacro", "defmacrop", "defguard", "defguardp", "defdelegate", "defn", "defnp"}
)
_ELIXIR_MODULES = {"defmodule": "module", "defprotocol": "interface", "defimpl": "impl"}
_ELIXIR_TEST_BLOCKS = frozenset({"describe", "test"})  # ExUnit


def _elixir_symbol(node: Node) -> tuple[str, int, str | None] | None:
    """An Elixir definition: `defmodule MyApp.Accounts` (its functions are MyApp.Accounts.get_user),
    `def get_user(id)`, `defp normalize(x) when …`, `defprotocol`, `defimpl String.Chars, for: User` (named
    String.Chars.User, the module Elixir compiles it to), or an ExUnit `describe`/`test "title" do` block,
    named by its title as JS test blocks are. Any other call is no symbol."""
    if node.type != "call":
        return None
    target = node.child_by_field_name("target")
    args = next((c for c in node.named_children if c.type == "arguments"), None)
    if target is None or target.type != "identifier" or args is None or not args.named_children:
        return None
    word, first = _text(target), args.named_children[0]
    has_body = (
        any(c.type == "do_block" for c in node.named_children) or _elixir_keyword(args, "do") is not None
    )
    if word in _ELIXIR_FUNCTIONS:
        # a protocol's `def size(data)` is a line of its chunk (a bodiless head elsewhere declares default
        # arguments and joins the clauses after it: _clauses_merged)
        if not has_body and word != "defdelegate" and _in_protocol(node):
            return None
        head: Node | None = first
        while head is not None and head.type == "binary_operator":  # `f(x) when is_binary(x)`
            head = head.child_by_field_name("left")
        if head is not None and head.type == "call":
            head = head.child_by_field_name("target")
        if head is None or head.type != "identifier":
            return None  # `def unquote(name)(…)`: generated, no name to give
        return _text(head), head.start_point.row, "function"
    if word in _ELIXIR_MODULES:
        if first.type != "alias":
            return None
        name = _text(first)
        if word == "defimpl":
            implemented = _elixir_keyword(args, "for")
            if implemented is not None:
                name = f"{name}.{_text(implemented)}"
        return name, first.start_point.row, _ELIXIR_MODULES[word]
    if word in _ELIXIR_TEST_BLOCKS and first.type == "string" and has_body:
        title = _SPACE.sub(" ", _text(first).strip('"')).strip()
        return (title, first.start_point.row, "function") if title else None
    return None


def _elixir_keyword(args: Node, key: str) -> Node | None:
    """The value of a call's keyword argument (`do: …`, `for: User`), or None."""
    for keywords in args.named_children:
        if keywords.type == "keywords":
            for pair in keywords.named_children:
                if _text(pair.child_by_field_name("key")).strip() == f"{key}:":
                    return pair.child_by_field_name("value")
    return None


def _objc_symbol(node: Node) -> tuple[str, int, str | None] | None:
    """An Objective-C class (`@interface Foo`, `@implementation Foo`, a category `Foo (Networking)` is Foo's),
    protocol, or method named by its selector: `- (void)startWithName:(NSString *)name options:(int)opts`
    is `startWithName:options:`, `+ (instancetype)sharedFoo` is `sharedFoo`."""
    if node.type != "method_definition":
        named = next((c for c in node.children if c.type == "identifier"), None)
        return (_text(named), named.start_point.row, None) if named is not None else None
    keywords = [c for c in node.children if c.type == "identifier"]
    if not keywords:
        return None
    takes = any(c.type == "method_parameter" for c in node.children)
    name = "".join(f"{_text(k)}:" for k in keywords) if takes else _text(keywords[0])
    return name, keywords[0].start_point.row, None


def _in_protocol(node: Node) -> bool:
    """Whether an Elixir call sits directly in a `defprotocol`'s do-block."""
    block = node.parent
    owner = block.parent if block is not None and block.type == "do_block" else None
    target = owner.child_by_field_name("target") if owner is not None and owner.type == "call" else None
    return _text(target) == "defprotocol"


def _dart_function_body(node: Node) -> Node | None:
    """The body Dart's grammar puts after a function's or method's signature, as its sibling."""
    if node.type not in ("function_signature", "method_signature"):
        return None
    after = node.next_named_sibling
    return after if after is not None and after.type == "function_body" else None


_DART_TEST_CALLS = frozenset({"group", "test", "testWidgets", "blocTest", "testGoldens"})


def _dart_test_block(node: Node) -> tuple[str, int, str | None] | None:
    """`group('Bloc', () {…})`, `test('emits states', …)`, `testWidgets(…)`, `blocTest<B, S>('emits [1]', …)`:
    named by the title, as JS test blocks are (bloc's 1,677-line bloc_test.dart was 80-line windows of `main`)."""
    callee = node.named_children[0] if node.named_children else None
    if callee is None or callee.type != "identifier" or _text(callee) not in _DART_TEST_CALLS:
        return None
    arguments = _first_of_type(node, "arguments")
    first = arguments.named_children[0] if arguments is not None and arguments.named_children else None
    literal = _first_of_type(first, "string_literal") if first is not None else None
    if literal is None:
        return None
    title = _SPACE.sub(" ", _text(literal).strip("'\"")).strip()
    return (title, node.start_point.row, None) if title else None


def _dart_test_body(node: Node) -> Node | None:
    """The body of a test block's closure (`() { test(…); }`), searched for nested blocks."""
    arguments = _first_of_type(node, "arguments")
    for argument in arguments.named_children if arguments is not None else []:
        closure = _first_of_type(argument, "function_expression")
        if closure is not None:
            return closure.child_by_field_name("body")
    return None


def _dart_symbol(node: Node) -> tuple[str, int, str | None] | None:
    """A Dart class, mixin, extension or enum by its name, or a function, method, getter, setter, constructor
    or operator that has a body. A named constructor is named as it is called (`Point.zero`, in class Point);
    an operator by its symbol (`Point.operator+`)."""
    t = node.type
    if t == "expression_statement":
        return _dart_test_block(node)
    if t in ("function_signature", "method_signature"):
        if _dart_function_body(node) is None:
            return None  # abstract, or a constructor with only initializers: a line of its class's chunk
        signature = node.named_children[0] if t == "method_signature" and node.named_children else node
        if signature.type in ("constructor_signature", "factory_constructor_signature"):
            parts = [c for c in signature.named_children if c.type == "identifier"]
            if not parts:
                return None
            named = parts[-1] if len(parts) > 1 else parts[0]
            return _text(named), named.start_point.row, None
        if signature.type == "operator_signature":
            operator = next((c for c in signature.named_children if "operator" in c.type), None)
            if operator is None:
                return None
            return f"operator{_SPACE.sub('', _text(operator))}", signature.start_point.row, None
        name_node = signature.child_by_field_name("name")
    elif t == "mixin_declaration":  # no name field: its identifier
        name_node = next((c for c in node.named_children if c.type == "identifier"), None)
    elif t == "extension_declaration":  # `extension on String`: named by the type it extends
        name_node = node.child_by_field_name("name") or node.child_by_field_name("class")
    else:
        name_node = node.child_by_field_name("name")
    name = _clean_name(_text(name_node))
    if name_node is None or not name:
        return None
    return name, name_node.start_point.row, None


def _lua_test_block(node: Node) -> tuple[str, int, str | None] | None:
    """busted's `describe("actions", function() … end)` and `it("works", function() … end)`, named by their
    titles as JS test blocks are. Any other call is no symbol."""
    callee = node.child_by_field_name("name")
    args = node.child_by_field_name("arguments")
    named = args.named_children if args is not None else []
    if callee is None or callee.type != "identifier" or _text(callee) not in _TEST_BLOCK_CALLS:
        return None
    if len(named) < 2 or named[0].type != "string" or _test_block_body(node) is None:
        return None
    content = named[0].child_by_field_name("content")
    title = _SPACE.sub(" ", _text(content)).strip()
    return (title, node.start_point.row, None) if title else None


def _lua_field(node: Node) -> tuple[str, int, str | None] | None:
    """A function in a table constructor, by its key, qualified by the one name the table is assigned to:
    trouble.nvim's actions (`local M = { refresh = function(self) … end, … }`) had no symbol at all."""
    key, value = node.child_by_field_name("name"), node.child_by_field_name("value")
    if key is None or key.type != "identifier" or value is None or value.type != "function_definition":
        return None
    owner = ""
    table = node.parent
    assignment = table.parent.parent if table is not None and table.parent is not None else None
    if assignment is not None and assignment.type == "assignment_statement":
        names = next((c for c in assignment.named_children if c.type == "variable_list"), None)
        if names is not None and len(names.named_children) == 1:
            owner = _clean_name(_text(names.named_children[0]))
    name = f"{owner}.{_text(key)}" if owner else _text(key)
    return name, key.start_point.row, None


def _lua_assignment(node: Node) -> tuple[str, int, str | None] | None:
    """A function assigned to one name (`M.handler = function(req) … end`, `local f = function() … end`)."""
    names = next((c for c in node.named_children if c.type == "variable_list"), None)
    values = next((c for c in node.named_children if c.type == "expression_list"), None)
    if names is None or values is None or len(names.named_children) != 1 or len(values.named_children) != 1:
        return None
    if values.named_children[0].type != "function_definition":
        return None
    target = names.named_children[0]
    if target.type not in ("identifier", "dot_index_expression"):
        return None  # `map[key] = function …`: an entry of a table, not a name
    name = _clean_name(_text(target))
    return (name, target.start_point.row, None) if name else None


def _long_enough(node: Node, name: Node) -> bool:
    """Whether a declaration spans DECLARATION_MIN_LINES lines or more from its name's line to its end: the
    one rule for declarations that are symbols only when long (C# and Swift properties, Python assignments,
    TypeScript type aliases, JS/TS top-level `const`s). Shorter ones are whole in their enclosing chunk."""
    return _end_row(node) - name.start_point.row + 1 >= DECLARATION_MIN_LINES


def _is_function_value(value: Node | None) -> bool:
    return value is not None and value.type in _FUNCTION_VALUES


def _declared(node: Node, code: CodeLanguage) -> tuple[Node, SymbolRule, Node] | None:
    """What a JS/TS `const`/`let`/`var` declaration is a symbol as: (name, rule, node holding its members).

    Its first declarator holding a function (`const f = () => …`) makes it a function, wherever the search
    finds it. At the top level of a file or namespace, a declarator (an identifier, not a destructuring)
    of DECLARATION_MIN_LINES lines or more makes it a symbol too when it holds a call or `new` (a function
    when the callee or an argument is a function or its declared type is a function type, else a
    variable), an object literal (a variable) or a class expression (a class); what the search finds
    inside (object methods, class members) are its members.
    """
    declarators = [d for d in node.named_children if d.type == "variable_declarator"]
    for d in declarators:
        name, value = d.child_by_field_name("name"), d.child_by_field_name("value")
        if name is not None and value is not None and _is_function_value(value):
            return name, _DECLARED_FUNCTION_VALUE, value
    if not _at_top_level(node, code):
        return None
    for d in declarators:
        name, value = d.child_by_field_name("name"), _unwrapped(d.child_by_field_name("value"))
        if name is None or name.type != "identifier" or value is None:
            continue
        if not _long_enough(d, d):
            continue
        if value.type == "class":
            return name, _DECLARED_CLASS, value.child_by_field_name("body") or value
        if value.type in ("call_expression", "new_expression"):
            arguments = value.child_by_field_name("arguments")
            parts = [
                _unwrapped(value.child_by_field_name("function") or value.child_by_field_name("constructor"))
            ]
            parts += arguments.named_children if arguments is not None else []
            typed = d.child_by_field_name("type")  # `: (s: T) => T`
            calls_back = any(_is_function_value(part) for part in parts) or (
                typed is not None and any(t.type == "function_type" for t in typed.named_children)
            )
            return name, _DECLARED_FUNCTION if calls_back else _DECLARED_VARIABLE, value
        if value.type == "object":
            return name, _DECLARED_VARIABLE, value
    return None


def _unwrapped(value: Node | None) -> Node | None:
    """The expression inside `(…)`, `… as T`, `… satisfies T`, `…!`."""
    while value is not None and value.type in _VALUE_WRAPPERS:
        value = value.named_children[0] if value.named_children else None
    return value


def _at_top_level(node: Node, code: CodeLanguage) -> bool:
    """A statement of the file, or of a namespace's body, `export` or not."""
    parent = node.parent
    if parent is not None and parent.type in code.wrappers:
        parent = parent.parent
    if parent is None or parent.type == "program":
        return parent is not None
    return (
        parent.type == "statement_block"
        and parent.parent is not None
        and parent.parent.type in code.namespaces
    )


_GTEST_MACROS = frozenset({"TEST", "TEST_F", "TEST_P", "TYPED_TEST", "TYPED_TEST_P"})
# Catch2's cases: the grammar reads `TEST_CASE("logger name", "[logger]") {…}` as a call statement and a block
# beside it (spdlog's tests were `<module>` windows: a new-user run of session 37). Named by their title.
_CATCH2_MACROS = frozenset(
    {"TEST_CASE", "TEST_CASE_METHOD", "SCENARIO", "TEMPLATE_TEST_CASE", "TEMPLATE_PRODUCT_TEST_CASE"}
)


def _catch2_call(node: Node) -> Node | None:
    """The `TEST_CASE(…)` call of a statement whose next sibling is its block, else None."""
    call = node.named_children[0] if node.named_children else None
    if call is None or call.type != "call_expression" or _catch2_block(node) is None:
        return None
    function = call.child_by_field_name("function")
    return call if function is not None and _text(function) in _CATCH2_MACROS else None


def _catch2_block(node: Node) -> Node | None:
    after = node.next_named_sibling
    return after if after is not None and after.type == "compound_statement" else None


def _catch2_case(node: Node) -> tuple[str, int, str | None] | None:
    """A Catch2 case named by its title (the first string argument: `TEST_CASE_METHOD(Fixture, "title")`)."""
    call = _catch2_call(node)
    arguments = call.child_by_field_name("arguments") if call is not None else None
    titles = [
        a for a in (arguments.named_children if arguments is not None else ()) if a.type == "string_literal"
    ]
    if call is None or not titles:
        return None
    title = " ".join(_text(titles[0]).strip('"').split())
    return (title, call.start_point.row, None) if title else None


def _gtest_case(node: Node, name_node: Node | None) -> tuple[str, int, str | None] | None:
    """GoogleTest's `TEST_F(WriteBatchTest, Append) {…}` is the case `WriteBatchTest.Append`, not `TEST_F`."""
    if name_node is None or _text(name_node) not in _GTEST_MACROS:
        return None
    declarator = node.child_by_field_name("declarator")
    params = declarator.child_by_field_name("parameters") if declarator is not None else None
    words = [_text(p).strip() for p in params.named_children] if params is not None else []
    if len(words) != 2 or not all(re.fullmatch(r"[A-Za-z_]\w*", w) for w in words):
        return None
    return f"{words[0]}.{words[1]}", name_node.start_point.row, None


def _c_declarator_name(node: Node) -> Node | None:
    current = node.child_by_field_name("declarator")
    while current is not None and current.type not in _C_NAME_TYPES:
        current = current.child_by_field_name("declarator")
    return current


def _first_of_type(node: Node | None, node_type: str) -> Node | None:
    if node is None:
        return None
    if node.type == node_type:
        return node
    for child in node.named_children:
        hit = _first_of_type(child, node_type)
        if hit is not None:
            return hit
    return None


# --- sections: markdown, toml, yaml -----------------------------------------------------------------


def _section_chunks(path: str, language: str, root: Node, lines: list[str]) -> list[Chunk]:
    if language == "markdown":
        starts = _markdown_sections(root)
    elif language == "toml":
        starts = [
            (c.start_point.row, _clean_section_key(_text(c.named_children[0]) if c.named_children else ""))
            for c in root.named_children
            if c.type in ("table", "table_array_element")
        ]
        starts = _attach_comments(starts, lines)
    else:
        starts = _attach_comments(_yaml_sections(root), lines)
    bounds = [(row, name or FILE_SYMBOL) for row, name in sorted(starts)]
    if not bounds or bounds[0][0] > 0:
        bounds.insert(0, (0, FILE_SYMBOL))  # text before the first heading, table or key
    chunks: list[Chunk] = []
    for i, (start, name) in enumerate(bounds):
        end = bounds[i + 1][0] - 1 if i + 1 < len(bounds) else len(lines) - 1
        rows = list(range(start, end + 1))
        chunks.extend(_window_chunks(path, language, name, "section", rows, lines))
    return chunks


def _markdown_sections(root: Node) -> list[tuple[int, str]]:
    """(row, heading path) for every ATX or setext heading, in order."""
    found: list[tuple[int, str]] = []
    stack: list[tuple[int, str]] = []  # (level, title)

    def walk(node: Node) -> None:
        for child in node.named_children:
            if child.type in ("atx_heading", "setext_heading"):
                level, title = _markdown_heading(child)
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, title))
                found.append((child.start_point.row, HEADING_SEPARATOR.join(t for _, t in stack)))
            elif child.type == "section":
                walk(child)

    walk(root)
    return found


def _markdown_heading(node: Node) -> tuple[int, str]:
    level = 1
    title = ""
    for child in node.named_children:
        if child.type.startswith("atx_h") and child.type.endswith("_marker"):
            level = int(child.type[len("atx_h")])
        elif child.type == "setext_h2_underline":
            level = 2
        elif child.type in ("inline", "paragraph"):
            title = _text(child)
    return level, _SPACE.sub(" ", title.strip().rstrip("#").strip()) or "<heading>"


def _yaml_sections(root: Node) -> list[tuple[int, str]]:
    """(row, key) for each top-level key of each document whose root is a mapping."""
    found: list[tuple[int, str]] = []
    for document in (c for c in root.named_children if c.type == "document"):
        for block in document.named_children:
            mapping = next((c for c in block.named_children if c.type == "block_mapping"), None)
            for pair in mapping.named_children if mapping is not None else ():
                if pair.type == "block_mapping_pair":
                    key = _text(pair.child_by_field_name("key")).strip().strip("'\"")
                    found.append((pair.start_point.row, key))
    return found


def _clean_section_key(raw: str) -> str:
    return _SPACE.sub("", raw)


def _attach_comments(starts: Sequence[tuple[int, str]], lines: list[str]) -> list[tuple[int, str]]:
    """Move each section start up over the `#` comment lines directly above it."""
    moved: list[tuple[int, str]] = []
    floor = 0
    for row, name in starts:
        start = row
        while start - 1 >= floor and lines[start - 1].lstrip().startswith("#"):
            start -= 1
        moved.append((start, name))
        floor = row + 1
    return moved


# --- windows ----------------------------------------------------------------------------------------


def _line_window_chunks(path: str, language: str, lines: list[str]) -> list[Chunk]:
    return _window_chunks(path, language, FILE_SYMBOL, "section", list(range(len(lines))), lines)


def _window_chunks(
    path: str,
    language: str,
    symbol: str,
    kind: str,
    rows: Sequence[int],
    lines: list[str],
    span: tuple[int, int] | None = None,
) -> list[Chunk]:
    """Chunks over these rows: blank runs collapsed, then windows bounded by lines and characters.

    `span` is the symbol's own range: the first window starts and the last ends there, so a class whose
    last line is a method body still reports the class's full range.
    """
    kept = _collapse_blank_rows(rows, lines)
    if not kept:
        return []
    windows: list[tuple[int, int]] = []  # [i, j) into kept
    i = 0
    while True:
        j, size = i, 0
        while j < len(kept) and j - i < CHUNK_MAX_LINES:
            line_size = min(len(lines[kept[j]]), CHUNK_MAX_CHARS) + 1
            if j > i and size + line_size > CHUNK_MAX_CHARS:
                break
            size += line_size
            j += 1
        windows.append((i, j))
        if j >= len(kept):
            break
        overlap = min(CHUNK_WINDOW_OVERLAP, (j - i) // 4)
        i = max(i + 1, j - overlap)
    chunks = []
    for part, (i, j) in enumerate(windows):
        body = "\n".join(lines[r] for r in kept[i:j])[:CHUNK_MAX_CHARS]
        start, end = kept[i], kept[j - 1]
        if span is not None:
            start = span[0] if part == 0 else start
            end = span[1] if part == len(windows) - 1 else end
        chunks.append(
            Chunk(
                path=path,
                language=language,
                symbol=symbol,
                kind=kind,
                start_line=start + 1,
                end_line=end + 1,
                text=body,
                part=part,
            )
        )
    return chunks


def _collapse_blank_rows(rows: Sequence[int], lines: list[str]) -> list[int]:
    """Drop leading and trailing blank rows and all but the first of each blank run."""
    kept: list[int] = []
    previous_blank = True
    for row in rows:
        blank = not lines[row].strip()
        if blank and previous_blank:
            continue
        kept.append(row)
        previous_blank = blank
    while kept and not lines[kept[-1]].strip():
        kept.pop()
    return kept
