"""Symbols inside parse errors: C that tree-sitter cannot read whole still gives named chunks.

Each source reproduces a pattern that made the C grammar return one large ERROR node (found on
jqlang/jq): a function header split by `#ifdef`, an `extern "C" {` under `#ifdef __cplusplus` whose
brace closes in another file, and a file whose root node is ERROR. The parse of each is checked too, so
a grammar upgrade that reads them cleanly shows up here rather than silently testing nothing.
"""

from __future__ import annotations

import textwrap

import pytest
from tree_sitter import Node

from lamina.chunking import Chunk, chunk_file, chunker
from lamina.chunking.chunker import _end_row, _mostly_unparsed, _parser


def source(text: str) -> bytes:
    return textwrap.dedent(text).lstrip("\n").encode()


def named(chunks: list[Chunk]) -> list[tuple[str, str, int, int]]:
    return [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks if not c.symbol.startswith("<")]


def assert_sane(chunks: list[Chunk], data: bytes) -> None:
    """Every non-blank line in a chunk, and no two top-level symbols share a line."""
    lines = data.decode().splitlines()
    covered = {n for c in chunks for n in range(c.start_line, c.end_line + 1)}
    assert [n for n, line in enumerate(lines, 1) if line.strip() and n not in covered] == []
    spans = sorted((c.start_line, c.end_line) for c in chunks if not c.symbol.startswith("<"))
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False)), spans
    assert len({(c.symbol, c.start_line, c.part) for c in chunks}) == len(chunks)


def c_root(data: bytes) -> Node:
    return _parser("c").parse(data).root_node


# `#ifdef WIN32 … int umain(…) { #else int main(…) { #endif`: two headers for one body (jq's src/main.c).
SPLIT_MAIN = source(
    """
    #include <stdio.h>
    #include <stdlib.h>

    /* Print how to call the tool and exit. */
    static void usage(int code) {
      fprintf(stderr, "usage: tool [options] FILE\\n");
      exit(code);
    }

    static int is_option(const char *arg) {
      return arg[0] == '-';
    }

    #ifdef WIN32
    int umain(int argc, char* argv[]);

    int wmain(int argc, wchar_t* wargv[]) {
      char **argv = convert(argc, wargv);
      return umain(argc, argv);
    }

    int umain(int argc, char* argv[]) {
    #else
    int main(int argc, char* argv[]) {
    #endif
      int ret = 0;
      for (int i = 1; i < argc; i++) {
        if (is_option(argv[i])) {
          ret++;
        }
      }
      if (ret > 3) {
        usage(2);
      }
      printf("%d\\n", ret);
      ret = ret * 2;
      ret = ret + 1;
      ret = ret - 1;
      ret = ret / 2;
      return ret;
    }
    """
)


def test_functions_before_and_inside_a_split_header_error_are_symbols() -> None:
    root = c_root(SPLIT_MAIN)
    errors = [(c.start_point.row + 1, _end_row(c) + 1) for c in root.children if c.type == "ERROR"]
    assert errors == [(14, 41)] and _mostly_unparsed(root, 41)  # the pattern as the grammar reads it
    chunks = chunk_file("src/main.c", SPLIT_MAIN)
    assert named(chunks) == [
        ("usage", "function", 4, 8),  # before the error: kept, its comment included
        ("is_option", "function", 10, 12),
        ("wmain", "function", 17, 20),  # inside the ERROR node
        ("umain", "function", 22, 22),  # a loose header: its body is main's, whose own header follows
        ("main", "function", 24, 41),
    ]
    # The first `#ifdef` branches parse without error, but would name main's body `umain` only: not used.
    first = chunker._first_branches(SPLIT_MAIN.decode())
    assert first is not None and not c_root(first.encode()).has_error
    module = next(c for c in chunks if c.symbol == "<module>")
    assert "#ifdef WIN32" in module.text and "int umain(int argc, char* argv[]);" in module.text
    assert "#else" in module.text and "int main" not in module.text
    assert_sane(chunks, SPLIT_MAIN)


# `extern "C" {` under `#ifdef __cplusplus`, its closing brace in another file: ERROR to the end. (jq's
# src/util.c has a brace-less `extern "C"` nested in `#elif`, which the grammar turns into an ERROR to the
# end only with the rest of that 1,259-line file after it; this is the small form of the same pattern.)
OPEN_EXTERN_C = source(
    """
    /* Buffers shared by the command-line tool. */
    #include <stdlib.h>
    #include <string.h>

    #ifdef __cplusplus
    extern "C" {
    #endif

    struct buffer {
      char *data;
      size_t len;
    };

    enum mode { MODE_READ, MODE_WRITE };

    static int buffer_grow(struct buffer *b, size_t n) {
      char *p = realloc(b->data, b->len + n);
      if (p == NULL)
        return -1;
      b->data = p;
      b->len += n;
      return 0;
    }

    int buffer_append(struct buffer *b, const char *s) {
      size_t n = strlen(s);
      if (buffer_grow(b, n) < 0)
        return -1;
      memcpy(b->data + b->len - n, s, n);
      return 0;
    }

    #include "buffer_end.h" /* closes the extern "C" block */
    """
)


def test_structs_enums_and_functions_after_an_open_extern_c_are_symbols() -> None:
    root = c_root(OPEN_EXTERN_C)
    errors = [(c.start_point.row + 1, _end_row(c) + 1) for c in root.children if c.type == "ERROR"]
    assert errors == [(5, 33)] and _mostly_unparsed(root, 33)
    chunks = chunk_file("src/buffer.c", OPEN_EXTERN_C)
    assert named(chunks) == [
        ("buffer", "struct", 9, 12),
        ("mode", "enum", 14, 14),
        ("buffer_grow", "function", 16, 23),
        ("buffer_append", "function", 25, 31),
    ]
    module = next(c for c in chunks if c.symbol == "<module>")
    assert (module.start_line, module.end_line) == (1, 33) and 'extern "C" {' in module.text
    assert_sane(chunks, OPEN_EXTERN_C)


# The root node itself is ERROR (jq's src/jv_dtoa.c): old-style split headers, braces opened under
# `#ifdef`/`#else`, all inside `extern "C" { … }`.
ROOT_ERROR = source(
    """
    #include <string.h>

    #ifdef __cplusplus
    extern "C" {
    #endif

    typedef struct Bigint {
      struct Bigint *next;
      int k, wds;
      unsigned long x[1];
    } Bigint;

     static Bigint *
    Balloc
     (struct context* C, int k)
    {
    \tBigint *rv = C->freelist[k];
    \tif (rv)
    \t\tC->freelist[k] = rv->next;
    \treturn rv;
     }

     static int
    lo0bits
     (unsigned long *y)
    {
    \tint k = 0;
    #ifdef Pack_32
    \tif (*y & 0xffff) {
    #else
    \tif (*y & 0xff) {
    #endif
    \t\tk = 16;
    \t}
    \treturn k;
     }

    #ifdef KR_headers
     static int cmp(a, b) Bigint *a, *b; {
    #else
     static int cmp(Bigint *a, Bigint *b) {
    #endif
    \treturn a->wds - b->wds;
     }

    #ifdef __cplusplus
    }
    #endif
    """
)


def test_symbols_under_a_root_error_node_are_symbols(monkeypatch: pytest.MonkeyPatch) -> None:
    assert c_root(ROOT_ERROR).type == "ERROR"
    # The file's first `#if` branches parse without error and name the same functions, so they are used
    # (test_chunking_conditionals.py): `cmp` starts at its first (K&R) header, the `#else` one is inside it.
    chunks = chunk_file("src/dtoa.c", ROOT_ERROR)
    assert named(chunks) == [
        ("Bigint", "struct", 7, 11),
        ("Balloc", "function", 13, 21),
        ("lo0bits", "function", 23, 36),
        ("cmp", "function", 39, 44),
    ]
    assert_sane(chunks, ROOT_ERROR)
    # The whole file's parse alone (no first-branch parse) finds them inside the ERROR node.
    monkeypatch.setattr(chunker, "_first_branches", lambda text, all_branches=False: None)
    chunks = chunk_file("src/dtoa.c", ROOT_ERROR)
    assert named(chunks) == [
        ("Bigint", "struct", 7, 11),
        ("Balloc", "function", 13, 21),
        # Not a function_definition in the tree: a loose header, then `{` and the body's statements.
        ("lo0bits", "function", 23, 36),
        ("cmp", "function", 41, 44),  # the `#else` header; the K&R one above it stays module code
    ]
    module = next(c for c in chunks if c.symbol == "<module>")
    assert (module.start_line, module.end_line) == (1, 48)
    assert "static int cmp(a, b) Bigint *a, *b; {" in module.text and "lo0bits" not in module.text
    assert_sane(chunks, ROOT_ERROR)


def test_a_file_with_no_symbol_in_its_errors_is_still_line_windows() -> None:
    data = b"this is ) not ( c {{{ at all\n" * 30
    assert [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunk_file("broken.c", data)] == [
        ("<file>", "section", 1, 30)
    ]
