"""Vue and Svelte components, shell, Lua, Elixir and Dart are chunked into symbols (schema 24); before, they
were line windows, so no packet could name a function in them.

Shapes checked on vue-element-admin and sveltejs/kit (components), nvm (shell), telescope.nvim (Lua), ecto
(Elixir) and dart-lang/http (Dart): the names a developer of each language uses, declarations without a body
left as lines of their enclosing chunk, doc comments and attributes leading their symbol.
"""

from __future__ import annotations

import textwrap

import pytest

from lamina.chunking import Chunk, chunk_file
from lamina.chunking.languages import language_for


def source(text: str) -> bytes:
    return textwrap.dedent(text).lstrip("\n").encode()


def named(chunks: list[Chunk]) -> list[tuple[str, str, int, int]]:
    return [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks if not c.symbol.startswith("<")]


def module_lines(chunks: list[Chunk]) -> str:
    return "\n".join(c.text for c in chunks if c.symbol == "<module>")


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("src/components/Cart.vue", "vue"),
        ("src/routes/+page.svelte", "svelte"),
        ("nvm.sh", "bash"),
        ("scripts/release.bash", "bash"),
        ("lua/telescope/pickers.lua", "lua"),
        ("lib/ecto/changeset.ex", "elixir"),
        ("test/ecto/changeset_test.exs", "elixir"),
        ("lib/src/client.dart", "dart"),
        ("AFNetworking/AFHTTPSessionManager.m", "objc"),
        ("Sources/Bridge.mm", "objc"),
    ],
)
def test_language_by_suffix(path: str, language: str) -> None:
    assert language_for(path) == language


VUE = source(
    """
    <template>
      <div class="cart">
        <button @click="addItem(item)">Add</button>
      </div>
    </template>

    <script setup lang="ts">
    import { ref } from 'vue'

    const items = ref<string[]>([])

    /** Adds an item to the cart. */
    function addItem(item: string) {
      items.value.push(item)
    }

    const removeItem = (i: number) => {
      items.value.splice(i, 1)
    }
    </script>

    <style scoped>
    .cart { color: red; }
    </style>
    """
)


def test_a_vue_components_script_is_parsed_in_place_and_its_template_is_module_lines() -> None:
    chunks = chunk_file("src/components/Cart.vue", VUE)
    assert named(chunks) == [("addItem", "function", 12, 15), ("removeItem", "function", 17, 19)]
    assert chunks[1].text.splitlines()[0] == "/** Adds an item to the cart. */"  # the source's own lines
    module = module_lines(chunks)
    assert '<button @click="addItem(item)">Add</button>' in module and ".cart { color: red; }" in module
    assert "const items = ref<string[]>([])" in module


def test_a_vue_2_options_object_names_its_methods() -> None:
    text = source(
        """
        <template><div>{{ total }}</div></template>
        <script>
        export default {
          name: 'Cart',
          methods: {
            fetchData() {
              return this.load()
            }
          }
        }
        </script>
        """
    )
    assert ("fetchData", "function", 6, 8) in named(chunk_file("src/views/Cart.vue", text))


def test_a_svelte_components_scripts_are_read_and_the_markup_is_not() -> None:
    text = source(
        """
        <script context="module">
          export function preload() {
            return {}
          }
        </script>
        <script>
          export let name = 'world';
          function greet() {
            alert(`Hello ${name}`);
          }
        </script>

        <h1 on:click={greet}>Hello {name}! function fake() {}</h1>
        """
    )
    assert named(chunk_file("src/routes/+page.svelte", text)) == [
        ("preload", "function", 2, 4),
        ("greet", "function", 8, 10),
    ]


def test_shell_functions_in_both_forms_with_their_comments() -> None:
    text = source(
        """
        #!/usr/bin/env bash
        set -euo pipefail

        # Print usage
        usage() {
          echo "usage"
        }

        function build_all {
          make all
        }
        usage
        """
    )
    chunks = chunk_file("scripts/build.sh", text)
    assert named(chunks) == [("usage", "function", 4, 7), ("build_all", "function", 9, 11)]
    assert "set -euo pipefail" in module_lines(chunks)


LUA = source(
    """
    local M = {}

    --- Adds two numbers.
    function M.add(a, b)
      return a + b
    end

    function M:refresh(x)
      return self.v + x
    end

    local function helper(x)
      return x * 2
    end

    M.handler = function(req)
      return req
    end

    local on_exit = function()
      print("bye")
    end

    _resolve_map[function(val) return val end] = function(selector, val)
      return val
    end

    return M
    """
)


def test_lua_functions_methods_and_functions_assigned_to_names() -> None:
    assert named(chunk_file("lua/telescope/pickers.lua", LUA)) == [
        ("M.add", "method", 3, 6),
        ("M.refresh", "method", 8, 10),  # `M:refresh` is defined on M
        ("helper", "function", 12, 14),
        ("M.handler", "method", 16, 18),
        ("on_exit", "function", 20, 22),
        # a function stored under a computed key is an entry of a table, not a name
    ]


def test_busted_blocks_are_named_by_their_titles() -> None:
    text = source(
        """
        local eq = assert.are.same
        describe("actions", function()
          it("moves the selection", function()
            eq(1, 1)
          end)
        end)
        print("done")
        """
    )
    assert named(chunk_file("lua/tests/actions_spec.lua", text)) == [
        ("actions", "function", 2, 6),
        ("actions.moves the selection", "function", 3, 5),
    ]


ELIXIR = source(
    '''
    defmodule MyApp.Accounts do
      @moduledoc """
      Accounts context.
      """
      alias MyApp.Repo

      @doc "Gets a user."
      @spec get_user(integer) :: User.t()
      def get_user(id) do
        Repo.get(User, id)
      end

      def create_user(attrs \\\\ %{}), do: %User{} |> User.changeset(attrs) |> Repo.insert()

      defp normalize(x) when is_binary(x) do
        String.trim(x)
      end

      defmodule Inner do
        defmacro my_macro(a) do
          quote do: unquote(a)
        end
      end
    end

    defimpl String.Chars, for: MyApp.User do
      def to_string(u), do: u.name
    end

    defprotocol Size do
      def size(data)
    end
    '''
)


def test_elixir_modules_and_their_functions_by_the_names_elixir_gives_them() -> None:
    assert named(chunk_file("lib/my_app/accounts.ex", ELIXIR)) == [
        ("MyApp.Accounts", "module", 1, 24),
        ("MyApp.Accounts.get_user", "function", 7, 11),  # with its @doc and @spec
        ("MyApp.Accounts.create_user", "function", 13, 13),
        ("MyApp.Accounts.normalize", "function", 15, 17),  # the guard is not the name
        ("MyApp.Accounts.Inner", "module", 19, 23),
        ("MyApp.Accounts.Inner.my_macro", "function", 20, 22),
        ("String.Chars.MyApp.User", "impl", 26, 28),  # the module Elixir compiles the impl to
        ("String.Chars.MyApp.User.to_string", "function", 27, 27),
        ("Size", "interface", 30, 32),  # `def size(data)` has no body: a line of the protocol
    ]


def test_exunit_blocks_are_named_by_their_titles() -> None:
    text = source(
        """
        defmodule MyApp.AccountsTest do
          use ExUnit.Case, async: true

          describe "get_user/1" do
            test "returns the user", %{user: user} do
              assert Accounts.get_user(user.id) == user
            end
          end
        end
        """
    )
    assert named(chunk_file("test/my_app/accounts_test.exs", text)) == [
        ("MyApp.AccountsTest", "module", 1, 9),
        ("MyApp.AccountsTest.get_user/1", "function", 4, 8),
        ("MyApp.AccountsTest.get_user/1.returns the user", "function", 5, 7),
    ]


DART = source(
    """
    import 'package:flutter/material.dart';

    /// A counter widget.
    class Counter extends StatelessWidget {
      final int value;

      const Counter({super.key, required this.value});

      Counter.fromJson(Map<String, dynamic> json) : value = json['value'];

      /// Builds it.
      @override
      Widget build(BuildContext context) {
        return Text('$value');
      }

      int get doubled => value * 2;

      factory Counter.zero() {
        return Counter(value: 0);
      }

      Counter operator +(Counter other) {
        return Counter(value: value + other.value);
      }
    }

    void main() {
      runApp(Counter(value: 1));
    }

    mixin Logger on Object {
      void log(String m) {
        print(m);
      }
    }

    extension on String {
      String shout() => toUpperCase();
    }

    abstract class Repo {
      Future<void> save();
    }
    """
)


def test_dart_signatures_take_the_body_beside_them() -> None:
    assert named(chunk_file("lib/src/counter.dart", DART)) == [
        ("Counter", "class", 3, 26),
        ("Counter.build", "method", 11, 15),  # with its doc comment and annotation
        ("Counter.doubled", "method", 17, 17),
        ("Counter.zero", "method", 19, 21),  # a named constructor, as it is called
        ("Counter.operator+", "method", 23, 25),
        ("main", "function", 28, 30),
        ("Logger", "class", 32, 36),
        ("Logger.log", "method", 33, 35),
        ("String", "impl", 38, 40),  # an unnamed extension: by the type it extends
        ("String.shout", "method", 39, 39),
        ("Repo", "class", 42, 44),  # `save` has no body: a line of its class, as `const Counter(…);` is
    ]
    counter = next(c for c in chunk_file("lib/src/counter.dart", DART) if c.symbol == "Counter")
    assert "const Counter({super.key, required this.value});" in counter.text
    assert "Counter.fromJson(Map<String, dynamic> json) : value = json['value'];" in counter.text


def test_elixir_clauses_of_one_function_are_one_symbol_with_their_default_arguments_head() -> None:
    """plug's `decode_value` was five chunks, one per clause, and the packet showed one clause's lines; a
    bodiless head declaring default arguments (`def fetch_query_params(conn, opts \\\\ [])`) was left out, and
    with it the @doc above it (a new-user run on plug, session 36)."""
    text = source(
        """
        defmodule Plug.Conn.Cookies do
          @doc "Decodes a value."
          def decode_value(""), do: ""

          def decode_value(<<?", rest::binary>>) do
            rest
          end

          @doc "Fetches query params."
          def fetch_query_params(conn, opts \\\\ [])

          def fetch_query_params(conn, opts) do
            conn
          end

          defp month_name(1), do: "Jan"
          defp month_name(2), do: "Feb"
        end
        """
    )
    assert named(chunk_file("lib/plug/conn/cookies.ex", text)) == [
        ("Plug.Conn.Cookies", "module", 1, 18),
        ("Plug.Conn.Cookies.decode_value", "function", 2, 7),
        ("Plug.Conn.Cookies.fetch_query_params", "function", 9, 14),
        ("Plug.Conn.Cookies.month_name", "function", 16, 17),
    ]


def test_a_dart_local_function_stays_in_its_method_and_test_blocks_are_named_by_their_titles() -> None:
    """bloc's `AnalysisOptions.resolve` was cut to its signature and its local `recursiveResolver` made a method;
    a test file was 80-line windows of `main` (a new-user run on bloc, session 36)."""
    options = source(
        """
        class AnalysisOptions {
          AnalysisOptions resolve() {
            AnalysisOptions recursiveResolver(AnalysisOptions options) {
              return options;
            }
            return recursiveResolver(this);
          }
        }
        """
    )
    assert named(chunk_file("lib/src/analysis_options.dart", options)) == [
        ("AnalysisOptions", "class", 1, 8),
        ("AnalysisOptions.resolve", "method", 2, 7),
    ]
    tests = source(
        """
        void main() {
          group('Bloc', () {
            test('emits states', () {
              expect(1, 1);
            });

            blocTest<CounterBloc, int>(
              'emits [1] when increment is added',
              build: () => CounterBloc(),
              expect: () => [1],
            );
          });

          testWidgets('renders', (tester) async {
            await tester.pumpWidget(App());
          });
        }
        """
    )
    assert named(chunk_file("test/bloc_test.dart", tests)) == [
        ("main", "function", 1, 17),
        ("Bloc", "function", 2, 12),
        ("Bloc.emits states", "function", 3, 5),
        ("Bloc.emits [1] when increment is added", "function", 7, 11),
        ("renders", "function", 14, 16),
    ]


def test_lua_functions_in_a_table_constructor_are_named_by_their_keys() -> None:
    """trouble.nvim's actions are a table of functions (`local M = { refresh = function(self) … end }`) and had
    no symbol (a new-user run, session 36); a key that is a string or a value that is no function names none."""
    text = source(
        """
        local M = {
          -- Refresh the view.
          refresh = function(self)
            return self
          end,
          close = "x",
          ["odd key"] = function() end,
        }
        return M
        """
    )
    assert named(chunk_file("lua/trouble/config/actions.lua", text)) == [("M.refresh", "method", 2, 5)]


def test_objective_c_classes_categories_protocols_and_selectors() -> None:
    """AFNetworking (schema 24): a method is named by its selector, a category's methods are its class's, a
    protocol's declarations are lines of it, and a C function is a function."""
    text = source(
        """
        #import "Foo.h"

        @interface Foo ()
        @property (nonatomic) int count;
        @end

        @implementation Foo

        /// Starts it.
        - (void)startWithName:(NSString *)name options:(int)opts {
            self.count = opts;
        }

        + (instancetype)sharedFoo {
            return nil;
        }

        @end

        static void helper(int x) {
            printf("%d", x);
        }

        @implementation Foo (Networking)
        - (void)fetch {
        }
        @end

        @protocol FooDelegate <NSObject>
        - (void)fooDidFinish:(Foo *)foo;
        @end
        """
    )
    assert named(chunk_file("Sources/Foo.m", text)) == [
        ("Foo", "class", 3, 5),
        ("Foo", "class", 7, 18),
        ("Foo.startWithName:options:", "method", 9, 12),
        ("Foo.sharedFoo", "method", 14, 16),
        ("helper", "function", 20, 22),
        ("Foo", "class", 24, 27),
        ("Foo.fetch", "method", 25, 26),
        ("FooDelegate", "interface", 29, 31),
    ]


def test_an_objective_c_header_is_read_as_objective_c() -> None:
    """A `.h` is read as C++, which cannot parse `@interface`: AFNetworking's 31 headers had no symbol. One that
    declares an Objective-C class or protocol is read as Objective-C; a C header stays C++."""
    header = source(
        """
        #import <Foundation/Foundation.h>

        @interface AFImageDownloader : NSObject
        @property (nonatomic, strong) NSURLCache *imageCache;
        - (void)cancelTaskForImageDownloadReceipt:(id)receipt;
        @end
        """
    )
    assert named(chunk_file("UIKit+AFNetworking/AFImageDownloader.h", header)) == [
        ("AFImageDownloader", "class", 3, 6)
    ]
    c_header = source(
        """
        struct point {
          int x;
        };
        """
    )
    assert [c.language for c in chunk_file("include/point.h", c_header)] == ["cpp"]
