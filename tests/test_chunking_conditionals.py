"""`#if` branches in C, C++ and C#: a file the grammar misreads whole is read through its first branches.

Each source reproduces a pattern from a real repository (JamesNK/Newtonsoft.Json, jqlang/jq) where the
alternatives of one `#if` group are not complete syntax each, so the parse of the whole file went wrong
and methods fell out of their class or functions into the one above. The original parse of each is
checked too, so a grammar upgrade that reads them cleanly shows up here rather than silently testing
nothing.
"""

from __future__ import annotations

import textwrap

import pytest

from lamina.chunking import Chunk, chunk_file
from lamina.chunking.chunker import _first_branches, _parser


def source(text: str) -> bytes:
    return textwrap.dedent(text).lstrip("\n").encode()


def named(chunks: list[Chunk]) -> list[tuple[str, str, int, int]]:
    return [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks if not c.symbol.startswith("<")]


def has_error(grammar: str, data: bytes) -> bool:
    return _parser(grammar).parse(data).root_node.has_error


# `else if` under `#if`, then `else` after `#endif` (Newtonsoft.Json's DictionaryWrapper.cs, JValue.cs,
# JsonTextReader.cs): the grammar closed the class early and every later method became a namespace function.
ELSE_IF_BRANCH = source(
    """
    namespace Shop.Collections
    {
        internal class Wrapper<TKey, TValue> : IDictionary<TKey, TValue>
        {
            public TValue this[TKey key]
            {
                set
                {
                    if (_dictionary != null)
                    {
                        _dictionary[key!] = value;
                    }
    #if HAVE_READ_ONLY_COLLECTIONS
                    else if (_readOnly != null)
                    {
                        throw new NotSupportedException();
                    }
    #endif
                    else
                    {
                        _generic[key] = value;
                    }
                }
            }

            void ICollection.CopyTo(Array array, int index)
            {
                if (_dictionary != null)
                {
                    _dictionary.CopyTo(array, index);
                }
    #if HAVE_READ_ONLY_COLLECTIONS
                else if (_readOnly != null)
                {
                    throw new NotSupportedException();
                }
    #endif
                else
                {
                    _generic.CopyTo(array, index);
                }
            }

            public void Clear()
            {
                _dictionary.Clear();
            }
        }
    }
    """
)


def test_methods_after_an_else_if_under_if_stay_in_their_class() -> None:
    assert has_error("csharp", ELSE_IF_BRANCH)
    chunks = chunk_file("Src/Wrapper.cs", ELSE_IF_BRANCH)
    assert named(chunks) == [
        ("Wrapper", "class", 3, 48),
        ("Wrapper.this[]", "property", 5, 24),  # an indexer with code, 3+ lines
        ("Wrapper.CopyTo", "method", 26, 42),
        ("Wrapper.Clear", "method", 44, 47),
    ]
    # The chunk text is the file's: both branches of every group are in it.
    copy_to = next(c for c in chunks if c.symbol.endswith("CopyTo"))
    assert "#if HAVE_READ_ONLY_COLLECTIONS" in copy_to.text and "else if (_readOnly != null)" in copy_to.text


# A base list under `#if` (Newtonsoft.Json's JsonReader.Async.cs, JsonWriter.Async.cs): the class was named
# after the `#if` condition.
BASE_LIST_BRANCH = source(
    """
    namespace Shop.Json
    {
        public abstract partial class Reader
    #if HAVE_ASYNC_DISPOSABLE
            : IAsyncDisposable
    #endif
        {
            public Task<bool> ReadAsync()
            {
                return Task.FromResult(Read());
            }
        }
    }
    """
)


def test_a_class_whose_base_list_is_under_if_keeps_its_name() -> None:
    assert has_error("csharp", BASE_LIST_BRANCH)
    assert named(chunk_file("Src/Reader.Async.cs", BASE_LIST_BRANCH)) == [
        ("Reader", "class", 3, 12),
        ("Reader.ReadAsync", "method", 8, 11),
    ]


# A brace opened under `#ifdef` and closed under another (jq's src/jv_print.c): the function swallowed
# every function after it.
SPLIT_BRACES = source(
    """
    #include <stdio.h>

    static void dump_term(struct jv x, FILE *f) {
      switch (x.kind) {
      case KIND_NULL:
        fputs("null", f);
        break;
      case KIND_NUMBER: {
        if (x.nan) {
          fputs("null", f);
        } else {
    #ifdef USE_DECNUM
          const char *literal = x.literal;
          if (literal) {
            fputs(literal, f);
          } else {
    #endif
            fprintf(f, "%.17g", x.number);
          }
    #ifdef USE_DECNUM
        }
    #endif
        break;
      }
      default:
        break;
      }
    }

    void dump_file(struct jv x, FILE *f) {
      dump_term(x, f);
      fputc('\\n', f);
    }

    void dump(struct jv x) {
      dump_file(x, stdout);
    }
    """
)


def test_functions_after_braces_split_across_ifdef_groups_are_their_own() -> None:
    assert has_error("c", SPLIT_BRACES)
    assert named(chunk_file("src/print.c", SPLIT_BRACES)) == [
        ("dump_term", "function", 3, 28),
        ("dump_file", "function", 30, 33),
        ("dump", "function", 35, 37),
    ]


# One body under two headers (Newtonsoft.Json's TestFixtureBase.cs; jq's `int umain(…) { #else int
# main(…) { #endif` is the C form in test_chunking_errors.py): the first branch alone would drop
# `TestSetup`, so the whole file's parse is kept.
TWO_HEADERS = source(
    """
    namespace Shop.Tests
    {
        public abstract class FixtureBase
        {
    #if DNXCORE50
            protected FixtureBase()
    #else
            [SetUp]
            protected void TestSetup()
    #endif
            {
                Reset();
            }

            protected void Reset()
            {
                Count = 0;
            }
        }
    }
    """
)


def test_a_first_branch_parse_that_loses_a_method_name_is_not_used() -> None:
    assert named(chunk_file("Tests/FixtureBase.cs", TWO_HEADERS)) == [
        ("FixtureBase", "class", 3, 19),
        ("FixtureBase.TestSetup", "method", 8, 13),
        ("FixtureBase.Reset", "method", 15, 18),
    ]


def test_first_branches_blanks_directives_and_later_branches_keeping_line_numbers() -> None:
    text = textwrap.dedent(
        """\
        a
        #if defined(X) && \\
            defined(Y)
        b
        #  ifdef Z
        c
        #  else
        d
        #  endif
        #elif W
        e
        #if 0
        f
        #endif
        #else
        g
        #endif
        h
        """
    )
    blanked = _first_branches(text)
    assert blanked is not None and blanked.split("\n") == [
        "a", "", "", "b", "", "c", "", "", "", "", "", "", "", "", "", "", "", "h", ""
    ]  # fmt: skip


def test_if_0_keeps_its_first_branch() -> None:
    assert _first_branches("#if 0\nold();\n#else\nnew();\n#endif\n") == "\nold();\n\n\n\n"


@pytest.mark.parametrize(
    "text",
    [
        "int x;\n",  # no directive
        "#define X 1\n#include <a.h>\n#pragma once\n",  # directives, none conditional
        "#if A\nint x;\n",  # never closed
        "int x;\n#endif\n",  # closed, never opened
        "int x;\n#else\nint y;\n",  # a branch of no group
    ],
)
def test_first_branches_is_none_without_a_balanced_conditional(text: str) -> None:
    assert _first_branches(text) is None


def test_a_first_branch_parse_that_drops_an_else_copy_of_a_function_is_not_used() -> None:
    # Newtonsoft.Json's ReflectionUtils.cs (`GetAttributes` under `#if` and again under `#else`) and curl's
    # disabled-feature stubs: the first branch alone holds one definition of two.
    data = (
        source(
            """
            #ifdef USE_TLS
            static int tls_on(void) {
              return 1;
            }
            #else
            static int tls_on(void) {
              return 0;
            }
            #endif

            """
        )
        + SPLIT_BRACES
    )
    first = _first_branches(data.decode())
    assert first is not None and not has_error("c", first.encode())  # the first branches parse cleanly
    assert [s for s, *_ in named(chunk_file("src/print.c", data))][:2] == ["tls_on", "tls_on"]
