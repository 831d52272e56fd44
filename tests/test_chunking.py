"""chunk_file on small realistic sources of every supported language, and on bad input."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lamina.chunking import Chunk, chunk_file, language_for
from lamina.constants import CHUNK_MAX_CHARS, CHUNK_MAX_LINES, CHUNK_WINDOW_OVERLAP


def chunks_of(path: str, source: str) -> list[Chunk]:
    return chunk_file(path, textwrap.dedent(source).lstrip("\n").encode())


def outline(chunks: list[Chunk]) -> list[tuple[str, str, int, int]]:
    return [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks]


def named_outline(chunks: list[Chunk]) -> list[tuple[str, str, int, int]]:
    """outline() without the `<module>` / `<file>` chunks."""
    return [entry for entry in outline(chunks) if not entry[0].startswith("<")]


def symbols(chunks: list[Chunk]) -> dict[str, str]:
    return {c.symbol: c.kind for c in chunks}


PYTHON = '''
"""Refunds."""

import logging

LOG = logging.getLogger(__name__)


class RefundService:
    """Issues refunds."""

    limit = 100

    def __init__(self, gateway):
        self.gateway = gateway

    # Refund a paid order.
    @audited
    def issue(self, order):
        if order.paid:
            return self.gateway.refund(order)
        return None

    class Policy:
        def allows(self, order):
            return True


def helper(x):
    def inner():
        return x

    return inner


if __name__ == "__main__":
    helper(1)
'''


def test_python_symbols_and_exact_lines() -> None:
    chunks = chunks_of("shop/refunds.py", PYTHON)
    assert outline(chunks) == [
        ("<module>", "module", 1, 36),
        ("RefundService", "class", 8, 25),
        ("RefundService.__init__", "method", 13, 14),
        ("RefundService.issue", "method", 16, 21),  # its comment and decorator included
        ("RefundService.Policy", "class", 23, 25),
        ("RefundService.Policy.allows", "method", 24, 25),
        ("helper", "function", 28, 32),  # `inner` stays inside: no symbols within functions
    ]
    assert all(c.language == "python" and c.part == 0 for c in chunks)
    by_symbol = {c.symbol: c for c in chunks}
    module = by_symbol["<module>"].text
    assert "import logging" in module and 'if __name__ == "__main__":' in module
    assert "def helper" not in module and "class RefundService" not in module
    # The class chunk: header, docstring, fields and member signatures, never member bodies.
    service = by_symbol["RefundService"].text
    assert "limit = 100" in service and "def issue(self, order):" in service
    assert "self.gateway.refund" not in service
    issue = by_symbol["RefundService.issue"].text
    assert issue.splitlines()[:3] == [
        "    # Refund a paid order.",
        "    @audited",
        "    def issue(self, order):",
    ]


TYPESCRIPT = """
import { Gateway } from "./gateway";

export interface Refund {
  id: string;
}

export class RefundService {
  private limit = 100;

  constructor(private gateway: Gateway) {}

  /** Refund a paid order. */
  async issue(order: Order): Promise<Refund> {
    return this.gateway.refund(order);
  }

  handle = (e: Event) => {
    console.log(e);
  };
}

export const makeService = (g: Gateway) => new RefundService(g);

export enum Status {
  Open,
  Done,
}

namespace Billing {
  export function total(): number {
    return 0;
  }
}
"""


def test_typescript_symbols_and_exact_lines() -> None:
    chunks = chunks_of("src/refunds.ts", TYPESCRIPT)
    assert outline(chunks) == [
        ("<module>", "module", 1, 33),
        ("Refund", "interface", 3, 5),
        ("RefundService", "class", 7, 20),
        ("RefundService.constructor", "method", 10, 10),
        ("RefundService.issue", "method", 12, 15),
        ("RefundService.handle", "method", 17, 19),
        ("makeService", "function", 22, 22),
        ("Status", "enum", 24, 27),
        ("Billing.total", "function", 30, 32),
    ]
    assert {c.language for c in chunks} == {"typescript"}


def test_tsx_component() -> None:
    source = """
    export function Button({ label }: Props) {
      return <button>{label}</button>;
    }
    """
    chunks = chunks_of("ui/Button.tsx", source)
    assert outline(chunks) == [("Button", "function", 1, 3)]
    assert chunks[0].language == "tsx"


def test_javascript() -> None:
    source = """
    const express = require("express");

    class Router {
      route(path) {
        return path;
      }
    }

    function* ids() {
      yield 1;
    }

    module.exports = { Router };
    """
    chunks = chunks_of("lib/router.js", source)
    assert symbols(chunks) == {
        "<module>": "module",
        "Router": "class",
        "Router.route": "method",
        "ids": "function",
    }


def test_go() -> None:
    source = """
    package shop

    // Cart holds items.
    type Cart struct {
        items []Item
    }

    type Store interface {
        Get(id string) (*Cart, error)
    }

    func (c *Cart) Add(item Item) {
        c.items = append(c.items, item)
    }

    func New() *Cart {
        return &Cart{}
    }
    """
    chunks = chunks_of("shop/cart.go", source)
    assert outline(chunks) == [
        ("<module>", "module", 1, 1),
        ("Cart", "struct", 3, 6),
        ("Store", "interface", 8, 10),
        ("Cart.Add", "method", 12, 14),
        ("New", "function", 16, 18),
    ]


def test_rust() -> None:
    source = """
    use std::fmt;

    /// A cart.
    #[derive(Debug)]
    pub struct Cart {
        items: Vec<Item>,
    }

    impl Cart {
        pub fn add(&mut self, item: Item) {
            self.items.push(item);
        }
    }

    impl fmt::Display for Cart {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "cart")
        }
    }

    pub trait Store {
        fn get(&self) -> Cart;
    }

    pub enum Status { Open, Done }

    mod tests {
        fn check() {}
    }
    """
    chunks = chunks_of("src/cart.rs", source)
    assert outline(chunks)[1:] == [
        ("Cart", "struct", 3, 7),  # doc comment and attribute included
        ("Cart", "impl", 9, 13),
        ("Cart.add", "method", 10, 12),
        ("Cart", "impl", 15, 19),
        ("Cart.fmt", "method", 16, 18),
        ("Store", "trait", 21, 23),
        ("Status", "enum", 25, 25),
        ("tests.check", "function", 28, 28),
    ]


def test_java() -> None:
    source = """
    package com.shop;

    public class Cart {
      private int size;

      public Cart() {}

      @Override
      public String toString() {
        return "cart";
      }

      enum Status { OPEN; boolean open() { return true; } }

      interface Listener { void changed(); }
    }
    """
    chunks = chunks_of("src/Cart.java", source)
    assert symbols(chunks) == {
        "<module>": "module",
        "Cart": "class",
        "Cart.Cart": "method",
        "Cart.toString": "method",
        "Cart.Status": "enum",
        "Cart.Status.open": "method",
        "Cart.Listener": "interface",
    }
    to_string = next(c for c in chunks if c.symbol == "Cart.toString")
    assert (to_string.start_line, to_string.end_line) == (8, 11)


def test_c() -> None:
    source = """
    #include <stdio.h>

    struct point { int x; int y; };

    typedef enum { RED, GREEN } color;

    static int add(int a, int b) {
      return a + b;
    }
    """
    chunks = chunks_of("src/math.c", source)
    assert outline(chunks) == [
        ("<module>", "module", 1, 1),
        ("point", "struct", 3, 3),
        ("color", "enum", 5, 5),
        ("add", "function", 7, 9),
    ]


def test_cpp() -> None:
    source = """
    namespace shop {
    namespace detail {

    template <typename T>
    class Cart {
     public:
      int size() const { return n_; }
      void add(T item);
     private:
      int n_ = 0;
    };

    }  // namespace detail

    void detail::Cart<int>::add(int item) { n_ += item; }

    }  // namespace shop
    """
    chunks = chunks_of("src/cart.cpp", source)
    assert symbols(chunks) == {
        "<module>": "module",
        "shop.detail.Cart": "class",
        "shop.detail.Cart.size": "method",
        "shop.detail.Cart.add": "method",  # out-of-line definition, qualified by its own name
    }
    cart = next(c for c in chunks if c.symbol == "shop.detail.Cart")
    assert (cart.start_line, cart.end_line) == (4, 11)  # the template line belongs to the class


def test_csharp_namespaces_are_searched_but_qualify_nothing() -> None:
    """Block and file-scoped namespaces hold the declarations but are not part of their names (session 36, as
    Java's packages are not): they mirror the folders, and `CleanArchitecture.Application.TodoItems.Commands…`
    repeated them in every name and every reason."""
    block = """
    namespace Shop.Core {
      public class Cart {
        public int Count { get; set; }
        public void Add(Item item) { Count++; }
      }
      public interface IStore { Cart Get(); }
      public struct Point { public int X; }
      public enum Status { Open }
    }
    """
    assert symbols(chunks_of("Cart.cs", block)) == {
        "<module>": "module",
        "Cart": "class",
        "Cart.Add": "method",
        "IStore": "interface",
        "Point": "struct",
        "Status": "enum",
    }
    file_scoped = """
    namespace Shop.Core;

    public class Cart {
      public void Add(Item item) { }
    }
    """
    assert symbols(chunks_of("Cart.cs", file_scoped)) == {
        "<module>": "module",
        "Cart": "class",
        "Cart.Add": "method",
    }


def test_ruby() -> None:
    source = """
    module Shop
      class Cart < Base
        def add(item)
          items << item
        end

        def self.build
          new
        end
      end

      def self.version
        "1"
      end
    end
    """
    chunks = chunks_of("lib/shop/cart.rb", source)
    assert outline(chunks) == [
        ("<module>", "module", 1, 15),
        ("Shop.Cart", "class", 2, 10),
        ("Shop.Cart.add", "method", 3, 5),
        ("Shop.Cart.build", "method", 7, 9),
        ("Shop.version", "method", 12, 14),
    ]


def test_rackup_file_is_ruby() -> None:
    source = """
    require_relative "app"

    class Health
      def call(env)
        [200, {}, ["ok"]]
      end
    end

    use Rack::Lint
    map("/health") { run Health.new }
    run Shop::App.new
    """
    chunks = chunks_of("config.ru", source)
    assert outline(chunks) == [
        ("<module>", "module", 1, 11),
        ("Health", "class", 3, 7),
        ("Health.call", "method", 4, 6),
    ]
    assert {c.language for c in chunks} == {"ruby"}


def test_markdown_sections_follow_heading_paths() -> None:
    source = """
    Intro text.

    # Install

    Run it.

    ```sh
    # not a heading
    ```

    ## Linux

    apt install.

    ## macOS

    brew install.

    # Usage
    Go.
    """
    chunks = chunks_of("README.md", source)
    assert outline(chunks) == [
        ("<file>", "section", 1, 1),
        ("Install", "section", 3, 9),  # the "# not a heading" inside the code fence is no heading
        ("Install > Linux", "section", 11, 13),  # trailing blank lines are trimmed
        ("Install > macOS", "section", 15, 17),
        ("Usage", "section", 19, 20),
    ]


def test_toml_tables_and_yaml_keys() -> None:
    toml = """
    title = "x"

    # The index.
    [index]
    include = ["**/*"]

    [[workflow.operations]]
    id = "a"
    """
    assert outline(chunks_of("lamina.toml", toml)) == [
        ("<file>", "section", 1, 1),
        ("index", "section", 3, 5),
        ("workflow.operations", "section", 7, 8),
    ]
    yaml = """
    name: ci
    on:
      push: {}
    jobs:
      test:
        runs-on: ubuntu
    """
    assert outline(chunks_of(".github/workflows/ci.yml", yaml)) == [
        ("name", "section", 1, 1),
        ("on", "section", 2, 3),
        ("jobs", "section", 4, 6),
    ]


def test_other_text_is_line_windows() -> None:
    data = "".join(f"line {i}\n" for i in range(1, 201)).encode()
    chunks = chunk_file("notes/log.txt", data)
    step = CHUNK_MAX_LINES - CHUNK_WINDOW_OVERLAP
    assert [(c.start_line, c.end_line, c.part) for c in chunks] == [
        (1, CHUNK_MAX_LINES, 0),
        (1 + step, step + CHUNK_MAX_LINES, 1),
        (1 + 2 * step, 200, 2),
    ]
    assert {(c.symbol, c.kind, c.language) for c in chunks} == {("<file>", "section", "text")}


def test_a_long_function_is_split_into_overlapping_windows() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(200))
    source = f"def long_one():\n{body}    return x0\n"
    chunks = chunk_file("big.py", source.encode())
    assert all(c.symbol == "long_one" and c.kind == "function" for c in chunks)
    assert [c.part for c in chunks] == [0, 1, 2]
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 202
    for before, after in zip(chunks, chunks[1:], strict=False):
        assert after.start_line == before.end_line - CHUNK_WINDOW_OVERLAP + 1
    assert all(len(c.text.splitlines()) <= CHUNK_MAX_LINES for c in chunks)


def test_invalid_utf8_is_read_byte_by_byte_not_fatal_and_keeps_identifiers_whole() -> None:
    """U+FFFD ended an identifier: a Latin-1 `calcule_la_récupération` was the symbol `ration`."""
    data = b"def calcule_la_r\xe9cup\xe9ration():\n    return '\xff\xfe'\n"
    (chunk,) = chunk_file("bad.py", data)
    assert chunk.kind == "function" and chunk.symbol == "calcule_la_récupération"
    assert "\ufffd" not in chunk.text and "'ÿþ'" in chunk.text


def test_valid_utf8_around_a_stray_byte_stays_as_it_is() -> None:
    (chunk,) = chunk_file("mixed.py", "def café():\n    return 1  # ".encode() + b"\x92\n")
    assert chunk.symbol == "café" and chunk.text.endswith("# \x92")


@pytest.mark.parametrize(
    ("cookie", "encoding"),
    [("# -*- coding: latin-1 -*-", "latin-1"), ("# vim: set fileencoding=cp1251 :", "cp1251")],
)
def test_a_declared_encoding_is_honoured(cookie: str, encoding: str) -> None:
    name = "calcule_la_récupération" if encoding == "latin-1" else "обработать_платеж"
    data = f"{cookie}\ndef {name}():\n    return 1\n".encode(encoding)
    assert [c.symbol for c in chunk_file("legacy.py", data) if c.kind == "function"] == [name]


def test_a_cookie_naming_no_text_encoding_falls_back_to_bytes() -> None:
    for codec in ("base64", "rot13", "no-such-codec"):
        data = f"# coding: {codec}\ndef caf".encode() + b"\xe9():\n    return 1\n"
        assert [c.symbol for c in chunk_file("x.py", data) if c.kind == "function"] == ["café"]


def test_minified_javascript_does_not_make_a_gigantic_chunk() -> None:
    data = ("function a(){return 1}var b=" + "1+" * 500_000 + "1;").encode()  # one 1 MB line
    chunks = chunk_file("dist2/app.js", data)
    assert chunks and all(len(c.text) <= CHUNK_MAX_CHARS for c in chunks)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [("<file>", 1, 1)]


def test_unparsable_code_falls_back_to_line_windows() -> None:
    data = b"this is ) not ( python {{{ at all\n" * 30
    chunks = chunk_file("broken.py", data)
    assert [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks] == [("<file>", "section", 1, 30)]


@pytest.mark.parametrize(
    "data", [b"", b"\n\n   \n", b"\x00\x01\x02\xff" * 100, b"\xef\xbb\xbfx = 1\r\ny = 2\r\n"]
)
def test_odd_input_never_raises(data: bytes) -> None:
    for path in ("a.py", "a.ts", "a.md", "a.yaml", "a.toml", "a.bin", "a.rs"):
        for chunk in chunk_file(path, data):
            assert chunk.start_line <= chunk.end_line and "\r" not in chunk.text


def test_output_is_deterministic_and_ordered() -> None:
    first = chunks_of("shop/refunds.py", PYTHON)
    assert first == chunks_of("shop/refunds.py", PYTHON)
    assert first == sorted(first, key=lambda c: (c.start_line, c.part, -c.end_line))


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a/b.py", "python"),
        ("x.tsx", "tsx"),
        ("x.mjs", "javascript"),
        ("x.h", "cpp"),
        ("Gemfile", "ruby"),
        ("config.ru", "ruby"),  # a rackup file
        ("README.MD", "markdown"),
        ("ci.yml", "yaml"),
        ("notes.txt", None),
        ("Makefile", None),
    ],
)
def test_language_for(path: str, language: str | None) -> None:
    assert language_for(path) == language


def test_every_line_of_this_project_lands_in_a_chunk() -> None:
    root = Path(__file__).resolve().parents[1]
    for path in sorted((root / "lamina").rglob("*.py")):
        lines = path.read_text().splitlines()
        chunks = chunk_file(str(path), path.read_bytes())
        covered: set[int] = set()
        for chunk in chunks:
            covered.update(range(chunk.start_line, chunk.end_line + 1))
        missing = [n for n, line in enumerate(lines, 1) if line.strip() and n not in covered]
        assert not missing, f"{path}: lines {missing[:5]} in no chunk"


def test_the_chunks_step_remembers_file_rows_only_for_the_store_that_holds_their_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """graphd remembers each file's shard rows between builds (BuildMemory.file_rows): the
    rows must be those a fresh chunking gives, and a replaced content store must be filled again, never
    skipped because the rows were remembered (its texts would be missing when embedding)."""
    import shutil

    from lamina.index import worker
    from lamina.index.cas import ContentStore
    from lamina.index.memory import BuildMemory
    from lamina.index.session import context_for
    from tests.helpers import make_repo

    repo = make_repo(tmp_path / "repo", {
        "lamina.toml": '[graph]\npaths = []\n',
        "src/pay.py": "def pay(order):\n    return order.total\n\n\nclass Refund:\n    def issue(self):\n        return 1\n",
        "README.md": "# Shop\n\nPayments and refunds.\n",
    })  # fmt: skip
    monkeypatch.setenv("LAMINA_STORE", str(tmp_path / "store"))

    memory = BuildMemory()  # graphd's build host keeps one for the builds it hosts

    def chunk_all() -> dict[str, list[str]]:
        ctx = context_for(repo, allow_lexical=True, quiet=True, memory=memory)
        worker.step_manifest(ctx)
        for shard in worker.shard_names():
            worker.step_chunks(ctx, shard)
        columns = {s: worker._read_columns(ctx, worker.chunks_file(ctx, s)) for s in worker.shard_names()}
        return {s: c["id"] + c["text_digest"] for s, c in columns.items() if c["id"]}

    fresh = chunk_all()
    lookups: list[str] = []
    real_get = ContentStore.get_chunks
    monkeypatch.setattr(
        ContentStore, "get_chunks", lambda self, key: lookups.append(key) or real_get(self, key)
    )
    assert chunk_all() == fresh and lookups == []  # every file's rows from memory, the same rows
    shutil.rmtree(tmp_path / "store")  # another store at the same path: nothing remembered applies
    assert chunk_all() == fresh and len(lookups) >= 2
    digests = [d for ids in fresh.values() for d in ids if not d.startswith("v")]
    assert set(ContentStore(tmp_path / "store").texts(digests)) == set(digests)


def test_the_embeddings_step_asks_the_store_only_about_texts_not_seen_embedded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The content store only grows, so graphd remembers which texts it has seen embedded (per store and
    model) and asks the store about the others only; what is missing is never taken from memory."""
    import shutil

    import numpy as np

    from lamina.index import worker
    from lamina.index.cas import ContentStore
    from lamina.index.memory import BuildMemory
    from lamina.index.session import context_for
    from tests.helpers import make_repo

    repo = make_repo(tmp_path / "repo", {
        "lamina.toml": '[graph]\npaths = []\n',
        "src/pay.py": "".join(f"def pay_{i}(order):\n    return order.total * {i}\n\n\n" for i in range(12)),
    })  # fmt: skip
    monkeypatch.setenv("LAMINA_STORE", str(tmp_path / "store"))
    asked: list[int] = []
    real_missing = ContentStore.missing_embeddings
    monkeypatch.setattr(
        ContentStore,
        "missing_embeddings",
        lambda self, keys: asked.append(len(keys)) or real_missing(self, keys),
    )

    memory = BuildMemory()

    def missing() -> list[tuple[str, str]]:
        ctx = context_for(repo, allow_lexical=True, quiet=True, memory=memory)
        worker.step_manifest(ctx)
        for shard in worker.shard_names():
            worker.step_chunks(ctx, shard)
        ctx.model_digest = "test-model"  # what the embedding keys are made of; no model runs here
        return [pair for shard in worker.shard_names() for pair in worker._missing_for(ctx, shard)]

    everything = missing()
    assert len(everything) >= 12 and sum(asked) == len(everything)
    half = everything[: len(everything) // 2]
    ContentStore(tmp_path / "store").put_embeddings([k for k, _ in half], np.ones((len(half), 4), np.float32))
    asked.clear()
    assert missing() == everything[len(half) :] and sum(asked) == len(everything)  # nothing seen embedded yet
    asked.clear()
    assert missing() == everything[len(half) :] and sum(asked) == len(everything) - len(half)
    shutil.rmtree(tmp_path / "store")  # another store at the same path: asked about everything again
    asked.clear()
    assert missing() == everything and sum(asked) == len(everything)
    # What the embeddings step itself stores is known at once: the next check asks the store nothing.
    monkeypatch.setattr(worker, "_embed", lambda ctx, texts: np.ones((len(texts), 4), np.float32))
    ctx = context_for(repo, allow_lexical=True, quiet=True, memory=memory)
    ctx.model_digest = "test-model"
    for shard in worker.shard_names():
        worker.step_embeddings(ctx, shard)
    asked.clear()
    assert missing() == [] and sum(asked) == 0


def test_template_blocks_and_macros_are_symbols() -> None:
    """healthchecks (a new-user run, session 37): "Add a block for the page title in base.html" listed an 80-line
    window far from the `title` block. Django/Jinja/Twig blocks and macros are symbols (nested blocks members);
    a template without them, or with tags that do not nest, stays line windows."""
    text = (
        b"{% load static %}\n<html>\n<head>\n<title>{% block title %}Healthchecks{% endblock %}</title>\n</head>\n"
        b"{% block content %}\n  <div>\n  {%- block inner -%}\n    hi\n  {% endblock inner %}\n  </div>\n"
        b'{% endblock %}\n{% macro field(name) %}\n  <input name="{{ name }}">\n{% endmacro %}\n</html>\n'
    )
    chunks = chunk_file("templates/base.html", text)
    assert named_outline(chunks) == [
        ("title", "section", 4, 4),
        ("content", "section", 6, 12),
        ("content.inner", "section", 8, 10),
        ("field", "function", 13, 15),
    ]
    assert [c.symbol for c in chunks if c.symbol.startswith("<")] == ["<module>"]
    plain = chunk_file("templates/plain.html", b"<html>\n<body>\nhi\n</body>\n</html>\n")
    assert [c.symbol for c in plain] == ["<file>"]
    unclosed = chunk_file("templates/bad.html", b"{% block a %}\nx\n{% endmacro %}\n")
    assert [c.symbol for c in unclosed] == ["<file>"]
    assert [c.symbol for c in chunk_file("notes/block.txt", b"{% block a %}\nx\n{% endblock %}\n")] == [
        "<file>"
    ]


def test_erlang_and_haskell_functions_are_one_symbol_from_their_first_clause_to_their_last() -> None:
    """ranch and doclayout (a new-user run, session 37) were line windows: a task about `mergeBlocks` listed a
    window 300 lines away. Erlang's clauses and Haskell's signature and equations are one symbol each."""
    erlang = chunk_file(
        "src/ranch.erl",
        b"-module(ranch).\n-export([start/0]).\n\n%% Start it.\nstart() ->\n    ok.\n\n"
        b"hide(Opts) when is_map(Opts) ->\n    maps:remove(cert, Opts);\nhide(Opts) ->\n    Opts.\n\n"
        b"-record(state, {a, b}).\n",
    )
    assert named_outline(erlang) == [
        ("start", "function", 4, 6),
        ("hide", "function", 8, 11),
        ("state", "struct", 13, 13),
    ]
    haskell = chunk_file(
        "src/Text/DocLayout.hs",
        b"module Text.DocLayout where\n\nimport Data.List\n\nmergeBlocks :: Int -> [a] -> [a]\n"
        b"mergeBlocks n xs = go xs\n  where go = id\n\nrealLength :: String -> Int\nrealLength [] = 0\n"
        b"realLength (x:xs) = 1 + realLength xs\n\ndata Doc = Empty | Text String\n\n"
        b"class Pretty a where\n  pretty :: a -> Doc\n",
    )
    assert named_outline(haskell) == [
        ("mergeBlocks", "function", 5, 7),
        ("realLength", "function", 9, 11),
        ("Doc", "struct", 13, 13),
        ("Pretty", "interface", 15, 16),
    ]
    assert {c.language for c in erlang} == {"erlang"} and {c.language for c in haskell} == {"haskell"}


def test_zig_functions_types_methods_and_inline_tests_are_symbols() -> None:
    """zig-clap (a new-user run, session 37) was line windows. Zig's grammar has no field names: a `Decl` is a
    function with a body, or a type declared as `const Name = struct {…}` whose functions are its methods; an
    inline `test "title" {…}` is named as written, and roles make it a test."""
    from lamina.repo.roles import chunk_role

    chunks = chunk_file(
        "src/main.zig",
        b'//! module doc\nconst std = @import("std");\n\n/// adds\npub fn add(a: i32, b: i32) i32 {\n'
        b"    return a + b;\n}\n\nconst Point = struct {\n    x: i32,\n    pub fn init() Point {\n"
        b"        return .{ .x = 0 };\n    }\n};\n\npub const Kind = enum { a, b };\nextern fn foo() void;\n\n"
        b'test "add works" {\n    try std.testing.expect(add(1, 2) == 3);\n}\n',
    )
    assert named_outline(chunks) == [
        ("add", "function", 4, 7),
        ("Point", "struct", 9, 14),
        ("Point.init", "method", 11, 13),
        ("Kind", "enum", 16, 16),
        ('test "add works"', "function", 19, 21),
    ]
    assert chunk_role("code", "src/main.zig", 'test "add works"') == "test"
    assert chunk_role("code", "src/main.zig", "add") == "code"
