"""JS/TS `const`/`let`/`var` declarations that are symbols although their value is not a function.

Most of zod v4's implementation is `export const $ZodString = core.$constructor("$ZodString", (inst, def)
=> {…})`, and config-style code is `export const config = {…}`: a top-level declaration of a call, `new`,
object or class expression of DECLARATION_MIN_LINES lines or more is a symbol named after its variable;
one-line constants stay module code.
"""

from __future__ import annotations

import textwrap

from lamina.chunking import Chunk, chunk_file
from lamina.constants import DECLARATION_MIN_LINES


def source(text: str) -> bytes:
    return textwrap.dedent(text).lstrip("\n").encode()


def named(chunks: list[Chunk]) -> list[tuple[str, str, int, int]]:
    return [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks if not c.symbol.startswith("<")]


SCHEMAS = source(
    """
    import * as core from "./core";

    export const MAX_DEPTH = 3;
    export const idnEmail = unicodeEmail;

    /** The string schema. */
    export const $ZodString = /*@__PURE__*/ core.$constructor("$ZodString", (inst, def) => {
      core.$ZodType.init(inst, def);
      inst._zod.pattern = def.pattern;
    });

    export const parse: <T extends core.$ZodType>(
      schema: T,
      value: unknown
    ) => core.output<T> = /*@__PURE__*/ core._parse(core.$ZodRealError);

    export const defaults = {
      depth: 3,
      strict: false,
    } as const;

    export const api = createApi({
      base: "/v1",
      get(path: string) {
        return fetch(path);
      },
    });

    const Base = class extends Model {
      save() {
        return 1;
      }
    };

    namespace Checks {
      export const email = check(
        "email",
        isEmail,
      );
    }

    if (process.env.DEBUG) {
      const verbose = createLogger({
        level: "debug",
      });
    }
    """
)


def test_top_level_calls_objects_and_class_expressions_are_symbols() -> None:
    chunks = chunk_file("src/schemas.ts", SCHEMAS)
    assert named(chunks) == [
        ("$ZodString", "function", 6, 10),  # a function argument; its doc comment and `export` included
        ("parse", "function", 12, 15),  # declared with a function type
        ("defaults", "variable", 17, 20),  # `{…} as const`
        ("api", "variable", 22, 27),
        ("api.get", "method", 24, 26),  # an object's method is a member, qualified by the variable
        ("Base", "class", 29, 33),
        ("Base.save", "method", 30, 32),
        ("Checks.email", "variable", 36, 39),  # a namespace's top level; qualified by it
    ]
    module = next(c for c in chunks if c.symbol == "<module>")
    # One-line constants and a declaration inside a block stay module code.
    assert "export const MAX_DEPTH = 3;" in module.text and "export const idnEmail" in module.text
    assert "const verbose = createLogger({" in module.text
    api = next(c for c in chunks if c.symbol == "api")
    assert "get(path: string) {" in api.text and "return fetch(path);" not in api.text


def test_short_declarations_and_destructuring_stay_module_code() -> None:
    assert DECLARATION_MIN_LINES == 3
    data = source(
        """
        var express = require("../")
          , request = require("supertest")
          , assert = require("assert");

        const {
          join,
          resolve,
        } = require("path");

        const limits = { max: 3,
          min: 1 };

        const app = express({
          strict: true,
        });
        """
    )
    # Three require lines are three one-line declarators; a destructuring names no one symbol.
    assert named(chunk_file("test/app.js", data)) == [("app", "variable", 13, 15)]


def test_a_call_whose_callee_is_a_function_is_a_function() -> None:
    data = source(
        """
        const getUser = ((cache) => async (sha) => {
          return cache[sha];
        })({});
        """
    )
    assert named(chunk_file("bin/users.js", data)) == [("getUser", "function", 1, 3)]


def test_long_python_module_level_assignments_are_symbols() -> None:
    """django-rest-framework (a new-user run, session 35): `DEFAULTS = {…}` in settings.py and Django's
    `urlpatterns = […]` were lines of a `<module>` window no search put first."""
    text = source(
        """
        import os

        # The settings every view reads.
        DEFAULTS = {
            "PAGE_SIZE": None,
            "DEFAULT_VERSION": None,
        }
        VERSION = "3.15"
        urlpatterns: list = [
            path("users/", UserList.as_view()),
        ]

        class Settings:
            cached = {
                "a": 1,
            }

        if TYPE_CHECKING:
            HOOKS = [
                1,
            ]
        """
    )
    assert named(chunk_file("rest_framework/settings.py", text)) == [
        ("DEFAULTS", "variable", 3, 7),  # its comment included
        ("urlpatterns", "variable", 9, 11),
        ("Settings", "class", 13, 16),  # a class attribute stays a line of its class
    ]  # one-line constants and assignments under an `if` stay module code


def test_long_typescript_type_aliases_are_symbols() -> None:
    """excalidraw: its element model is `type` aliases (`type PointerDownState = Readonly<{…}>`, 72 lines),
    all in `<module>` windows; `type Id = string` stays a line of code."""
    text = source(
        """
        export type PointerDownState = Readonly<{
          origin: { x: number; y: number };
          lastCoords: { x: number; y: number };
        }>;
        type Id = string;
        export type ActionName =
          | "copy"
          | "paste";
        """
    )
    assert named(chunk_file("packages/excalidraw/types.ts", text)) == [
        ("PointerDownState", "type", 1, 4),
        ("ActionName", "type", 6, 8),
    ]


def test_javascript_test_blocks_are_named_by_their_titles() -> None:
    """excalidraw: every `*.test.tsx` was `<module>` windows, so `related` said `shortcuts.test.tsx:1-34
    <module>` for a test whose title says what it proves. A `describe`/`it`/`test` block with a title and a
    function is a symbol named by the title, nested blocks its members; a variable named `test` is not one."""
    text = source(
        """
        import { render } from "../tests/test-utils";

        describe("Clear canvas", () => {
          it("shows a confirm dialog", async () => {
            render();
          });
          it.skip("keeps the library", () => {});
        });

        const test = spawn("node");
        test.on("exit", function (code) {
          process.exit(code);
        });
        """
    )
    assert named(chunk_file("packages/excalidraw/tests/clearCanvas.test.tsx", text)) == [
        ("Clear canvas", "function", 3, 8),
        ("Clear canvas.shows a confirm dialog", "function", 4, 6),
        ("Clear canvas.keeps the library", "function", 7, 7),
    ]
