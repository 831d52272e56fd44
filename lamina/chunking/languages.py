"""Which language a path is, and what each grammar's declarations look like.

The chunker is one generic walk over a tree-sitter tree; everything language-specific is data here:
which node types are symbols (and of what kind), which only qualify names (namespaces, modules), which
wrap a declaration (decorators, `export`, `template<>`), and which comments or attributes lead one.
Grammars come from tree_sitter_language_pack==0.13.0, which ships them in its wheel (1.x downloads).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

# Roles of a symbol node: a "function" is a leaf whose body is never searched for more symbols;
# a "container" (class, impl, trait…) is searched for members; a "leaf" (enum, plain struct) is not.
FUNCTION = "function"
CONTAINER = "container"
LEAF = "leaf"


@dataclass(frozen=True)
class SymbolRule:
    kind: str  # Chunk.kind: function class struct enum interface trait impl variable property (methods by scope)
    role: str  # FUNCTION | CONTAINER | LEAF


@dataclass(frozen=True)
class CodeLanguage:
    grammar: str  # name for tree_sitter_language_pack.get_parser
    symbols: dict[str, SymbolRule]
    namespaces: frozenset[str] = frozenset()  # qualify member names; their own lines stay module code
    namespace_members_are_methods: bool = False  # Ruby modules hold methods, C++ namespaces functions
    namespaces_qualify: bool = True  # C#'s do not (they mirror the folders, as Java's packages do)
    wrappers: frozenset[str] = frozenset()  # a symbol inside one of these takes the wrapper's range
    leading: frozenset[str] = frozenset({"comment"})  # attached to the symbol that follows them


_F = SymbolRule("function", FUNCTION)
_CLASS = SymbolRule("class", CONTAINER)
_STRUCT = SymbolRule("struct", CONTAINER)
_INTERFACE = SymbolRule("interface", CONTAINER)
_ENUM_LEAF = SymbolRule("enum", LEAF)
_PROPERTY = SymbolRule("property", LEAF)

_JS_SYMBOLS = {
    "function_declaration": _F,
    "generator_function_declaration": _F,
    "method_definition": _F,
    "class_declaration": _CLASS,
    # `const f = () => …` and class fields holding arrow functions are functions too (checked by value);
    # a long top-level `const x = f(…)`, `{…}` or `class {…}` is a function, variable or class (chunker._declared).
    "lexical_declaration": _F,
    "variable_declaration": _F,
    "field_definition": _F,
    "public_field_definition": _F,
    # a test block `describe("…", () => {…})`, `it("…", …)`, `test("…", …)` is named by its title, and nested
    # blocks are its members (chunker._test_block); any other call is searched through, as before
    "call_expression": SymbolRule("function", CONTAINER),
}
_TS_SYMBOLS = {
    **_JS_SYMBOLS,
    "abstract_class_declaration": _CLASS,
    "interface_declaration": SymbolRule("interface", LEAF),
    "enum_declaration": _ENUM_LEAF,
    # `type PointerDownState = Readonly<{…}>` of DECLARATION_MIN_LINES lines or more (chunker._long_enough)
    "type_alias_declaration": SymbolRule("type", LEAF),
}
_JS_WRAPPERS = frozenset({"export_statement"})

CODE_LANGUAGES: dict[str, CodeLanguage] = {
    "python": CodeLanguage(
        grammar="python",
        # a module-level `DEFAULTS = {…}` or `urlpatterns = […]` of DECLARATION_MIN_LINES lines or more is a
        # symbol too (kind variable; chunker._python_assignment), as a long top-level JS `const` is
        symbols={
            "function_definition": _F,
            "class_definition": _CLASS,
            "assignment": SymbolRule("variable", LEAF),
        },
        wrappers=frozenset({"decorated_definition"}),
    ),
    "javascript": CodeLanguage(grammar="javascript", symbols=_JS_SYMBOLS, wrappers=_JS_WRAPPERS),
    "typescript": CodeLanguage(
        grammar="typescript",
        symbols=_TS_SYMBOLS,
        namespaces=frozenset({"internal_module", "module"}),
        wrappers=_JS_WRAPPERS,
    ),
    "tsx": CodeLanguage(
        grammar="tsx",
        symbols=_TS_SYMBOLS,
        namespaces=frozenset({"internal_module", "module"}),
        wrappers=_JS_WRAPPERS,
    ),
    "go": CodeLanguage(
        grammar="go",
        symbols={
            "function_declaration": _F,
            "method_declaration": _F,  # qualified by its receiver type
            "type_spec": SymbolRule("struct", LEAF),  # struct or interface by its type; others skipped
        },
        wrappers=frozenset({"type_declaration"}),  # `type X struct` (not a grouped `type ( … )`)
    ),
    "rust": CodeLanguage(
        grammar="rust",
        symbols={
            "function_item": _F,
            "struct_item": SymbolRule("struct", LEAF),
            "union_item": SymbolRule("struct", LEAF),
            "enum_item": _ENUM_LEAF,
            "trait_item": SymbolRule("trait", CONTAINER),
            "impl_item": SymbolRule("impl", CONTAINER),
        },
        namespaces=frozenset({"mod_item"}),
        leading=frozenset({"line_comment", "block_comment", "attribute_item"}),
    ),
    "java": CodeLanguage(
        grammar="java",
        symbols={
            "class_declaration": _CLASS,
            "record_declaration": _CLASS,
            "interface_declaration": _INTERFACE,
            "annotation_type_declaration": _INTERFACE,
            "enum_declaration": SymbolRule("enum", CONTAINER),
            "method_declaration": _F,
            "constructor_declaration": _F,
            "compact_constructor_declaration": _F,
        },
        leading=frozenset({"line_comment", "block_comment"}),
    ),
    "c": CodeLanguage(
        grammar="c",
        symbols={
            "function_definition": _F,
            "struct_specifier": SymbolRule("struct", LEAF),
            "union_specifier": SymbolRule("struct", LEAF),
            "enum_specifier": _ENUM_LEAF,
            "type_definition": SymbolRule("struct", LEAF),  # `typedef struct {…} name;`
        },
    ),
    "cpp": CodeLanguage(
        grammar="cpp",
        symbols={
            "function_definition": _F,
            "class_specifier": _CLASS,
            "struct_specifier": _STRUCT,
            "union_specifier": _STRUCT,
            "enum_specifier": _ENUM_LEAF,
            "type_definition": SymbolRule("struct", LEAF),
            # a Catch2 case, `TEST_CASE("name", "[tag]") {…}`: the call and the block after it (chunker._catch2_case)
            "expression_statement": _F,
        },
        namespaces=frozenset({"namespace_definition"}),
        wrappers=frozenset({"template_declaration"}),
    ),
    "csharp": CodeLanguage(
        grammar="csharp",
        symbols={
            "class_declaration": _CLASS,
            "record_declaration": _CLASS,
            "struct_declaration": _STRUCT,
            "record_struct_declaration": _STRUCT,
            "interface_declaration": _INTERFACE,
            "enum_declaration": _ENUM_LEAF,
            "method_declaration": _F,
            "constructor_declaration": _F,
            "destructor_declaration": _F,
            # Properties, indexers, events with accessors (property) and operators, conversions (method):
            # only with code, and DECLARATION_MIN_LINES lines or more from their name (chunker._csharp_member).
            "property_declaration": _PROPERTY,
            "indexer_declaration": _PROPERTY,
            "event_declaration": _PROPERTY,
            "operator_declaration": _F,
            "conversion_operator_declaration": _F,
        },
        # searched through, but naming nothing: `CleanArchitecture.Application.TodoItems.Commands.CreateTodoItem.
        # CreateTodoItemCommandHandler.Handle` repeated the folders in every name and filled reasons with them
        namespaces=frozenset({"namespace_declaration", "file_scoped_namespace_declaration"}),
        namespaces_qualify=False,
    ),
    "ruby": CodeLanguage(
        grammar="ruby",
        symbols={"class": _CLASS, "method": _F, "singleton_method": _F},
        namespaces=frozenset({"module"}),
        namespace_members_are_methods=True,
    ),
    # PHP, Kotlin, Swift and Scala names are not qualified by their namespace or package: like Java's
    # packages, these mirror the folders (PSR-4, Gradle source sets), which the path already says.
    "php": CodeLanguage(
        grammar="php",
        symbols={
            "class_declaration": _CLASS,
            "interface_declaration": _INTERFACE,
            "trait_declaration": SymbolRule("trait", CONTAINER),
            "enum_declaration": SymbolRule("enum", CONTAINER),
            "method_declaration": _F,
            "function_definition": _F,
        },
    ),
    "kotlin": CodeLanguage(
        grammar="kotlin",
        # `interface` and `enum class` are class_declaration too (chunker._kotlin_symbol tells them);
        # companion objects are searched through, their members qualified by the enclosing class.
        # a top-level property of DECLARATION_MIN_LINES lines or more (`val NiaTypography = Typography(…)`) too
        symbols={
            "class_declaration": _CLASS,
            "object_declaration": _CLASS,
            "function_declaration": _F,
            "property_declaration": SymbolRule(
                "variable", CONTAINER
            ),  # `object : ThreadLocal<…>() { fun … }`
        },
        leading=frozenset({"line_comment", "multiline_comment"}),
    ),
    "swift": CodeLanguage(
        grammar="swift",
        symbols={
            # class, struct, enum, actor and extension (impl, named by the type) by declaration_kind
            "class_declaration": _CLASS,
            "protocol_declaration": SymbolRule("interface", LEAF),
            "function_declaration": _F,
            "init_declaration": _F,
            "deinit_declaration": _F,
            # a computed property or subscript with DECLARATION_MIN_LINES lines or more (SwiftUI's `var body`)
            "property_declaration": _PROPERTY,
            "subscript_declaration": _PROPERTY,
        },
        leading=frozenset({"comment", "multiline_comment"}),
    ),
    "scala": CodeLanguage(
        grammar="scala",
        symbols={
            "class_definition": _CLASS,
            "object_definition": _CLASS,
            "trait_definition": SymbolRule("trait", CONTAINER),
            "enum_definition": SymbolRule("enum", CONTAINER),
            "function_definition": _F,
            # `package object fastparse {…}` and Scala 3's `given intShow: Show[Int] with …` hold members like
            # an object; `extension (s: String) …` is named by the type it extends, like a Swift extension
            "package_object": _CLASS,
            "given_definition": _CLASS,
            "extension_definition": SymbolRule("impl", CONTAINER),
        },
        leading=frozenset({"comment", "block_comment"}),
    ),
    # Objective-C: classes by their @interface/@implementation (a category's methods are its class's), protocols,
    # methods named by their selector (`Foo.startWithName:options:`), and C functions (chunker._objc_symbol)
    "objc": CodeLanguage(
        grammar="objc",
        symbols={
            "class_implementation": _CLASS,
            "class_interface": _CLASS,
            "protocol_declaration": SymbolRule("interface", LEAF),
            "method_definition": _F,
            "function_definition": _F,
        },
        wrappers=frozenset({"implementation_definition"}),
    ),
    # Single-file components: the `<script>` blocks are read as TypeScript (which reads their JavaScript
    # too) in place, the template and styles are the file's `<module>` lines (chunker._script_blocks).
    "vue": CodeLanguage(grammar="typescript", symbols=_TS_SYMBOLS, wrappers=_JS_WRAPPERS),
    "svelte": CodeLanguage(grammar="typescript", symbols=_TS_SYMBOLS, wrappers=_JS_WRAPPERS),
    "bash": CodeLanguage(grammar="bash", symbols={"function_definition": _F}),
    "lua": CodeLanguage(
        grammar="lua",
        # `function M.add(…)`, `function M:method(…)` (named M.method), `local function f`, and a function
        # assigned to a name (`M.handler = function(req) … end`; chunker._lua_assignment)
        # busted's `describe("…", function() … end)` and `it(…)` are test blocks named by their titles
        symbols={
            "function_declaration": _F,
            "assignment_statement": _F,
            "field": _F,  # `local M = { refresh = function(self) … end }`: M.refresh (chunker._lua_field)
            "function_call": SymbolRule("function", CONTAINER),
        },
        wrappers=frozenset({"variable_declaration"}),  # `local f = function() … end`
    ),
    # Elixir is all calls: `defmodule`, `def`, `defp`, `defmacro`, `defprotocol`, `defimpl`, ExUnit's
    # `describe`/`test` blocks are symbols (chunker._elixir_symbol); any other call is searched through.
    # `@doc`, `@spec` and `@impl` above a `def` lead it.
    "elixir": CodeLanguage(
        grammar="elixir",
        symbols={"call": SymbolRule("function", CONTAINER)},
        leading=frozenset({"comment", "unary_operator"}),
    ),
    # Erlang (session 37, a new-user run on ranch): each clause of a function is a `fun_decl` of its own, named by
    # its `function_clause`; the clauses one after another are one symbol (chunker._clauses_merged).
    "erlang": CodeLanguage(
        grammar="erlang",
        symbols={
            "fun_decl": _F,
            "record_decl": SymbolRule("struct", LEAF),
            "type_alias": SymbolRule("struct", LEAF),
        },
    ),
    # Haskell (session 37, doclayout): a function's type signature and its equations, one after another, are one
    # symbol (chunker._clauses_merged); data, newtype, type classes and synonyms are types.
    "haskell": CodeLanguage(
        grammar="haskell",
        symbols={
            "signature": _F,
            "function": _F,
            "bind": _F,
            "data_type": SymbolRule("struct", LEAF),
            "newtype": SymbolRule("struct", LEAF),
            "type_synomym": SymbolRule("struct", LEAF),
            "class": SymbolRule("interface", LEAF),
        },
        leading=frozenset({"comment", "haddock"}),
    ),
    # Zig (session 37, zig-clap): the grammar has no field names; a `Decl` is a function (`fn` with a body) or a
    # type (`const Point = struct {…}`, its functions methods), a `test "title" {…}` a test (chunker._zig_symbol).
    "zig": CodeLanguage(
        grammar="zig",
        symbols={"Decl": SymbolRule("function", CONTAINER), "TestDecl": _F},
        leading=frozenset({"doc_comment", "line_comment"}),
    ),
    # Dart's grammar puts a function's signature and its body side by side: the symbol is the signature
    # with the `function_body` after it (chunker._dart_symbol); a signature without one (abstract) is a line.
    "dart": CodeLanguage(
        grammar="dart",
        symbols={
            "class_definition": _CLASS,
            "mixin_declaration": _CLASS,
            "extension_declaration": SymbolRule("impl", CONTAINER),
            "extension_type_declaration": _CLASS,
            "enum_declaration": SymbolRule("enum", CONTAINER),
            "function_signature": _F,
            "method_signature": _F,
            # package:test's and flutter_test's `group`/`test`/`testWidgets`, bloc_test's `blocTest`, named by
            # their titles (chunker._dart_test_block); `main`'s body is searched for them
            "expression_statement": SymbolRule("function", CONTAINER),
        },
        leading=frozenset({"comment", "documentation_comment", "annotation"}),
    ),
}

# Text formats chunked into sections (headings, tables, top-level keys) rather than symbols.
SECTION_LANGUAGES = frozenset({"markdown", "toml", "yaml"})
TEXT = "text"  # Chunk.language of any other text file (line windows)

_BY_SUFFIX = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",  # the javascript grammar parses JSX
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    # .h is parsed as C++: the C++ grammar reads C headers well, the C grammar fails on C++ headers.
    ".h": "cpp",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".ipp": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".ru": "ruby",  # rackup files (config.ru)
    ".php": "php",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".swift": "swift",
    ".scala": "scala",
    ".sc": "scala",
    ".m": "objc",
    ".mm": "objc",
    ".vue": "vue",
    ".svelte": "svelte",
    ".sh": "bash",
    ".bash": "bash",
    ".lua": "lua",
    ".ex": "elixir",
    ".exs": "elixir",
    ".dart": "dart",
    ".erl": "erlang",
    ".hrl": "erlang",
    ".hs": "haskell",
    ".zig": "zig",
    ".md": "markdown",
    ".markdown": "markdown",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
}
_BY_NAME = {"Rakefile": "ruby", "Gemfile": "ruby"}


def language_for(path: str) -> str | None:
    """The language of a path by its name, or None for a file chunked as plain text windows."""
    pure = PurePosixPath(path)
    return _BY_NAME.get(pure.name) or _BY_SUFFIX.get(pure.suffix.lower())
