"""C# properties, indexers, events with accessors and operators: symbols when they have code and are long.

A new-user run on JamesNK/Newtonsoft.Json could not find `JsonSerializerSettings.MaxDepth` (a getter and a
validating setter over 14 lines) for "JsonSerializerSettings MaxDepth property": it was only lines of a
class window. Such a member is now a symbol when it has code (an accessor body or an expression body) and
spans DECLARATION_MIN_LINES lines or more from its name; auto-properties and one- or two-line members stay
whole in the class chunk, which keeps the first line of every member that is a symbol.
"""

from __future__ import annotations

import textwrap
from collections import Counter

from lamina.chunking import Chunk, chunk_file
from lamina.constants import DECLARATION_MIN_LINES


def source(text: str) -> bytes:
    return textwrap.dedent(text).lstrip("\n").encode()


def named(chunks: list[Chunk]) -> list[tuple[str, str, int, int]]:
    return [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks if not c.symbol.startswith("<")]


def chunk(chunks: list[Chunk], symbol: str) -> Chunk:
    (found,) = [c for c in chunks if c.symbol == symbol]
    return found


SETTINGS = source(
    """
    namespace Json
    {
        public class Settings
        {
            internal int? _maxDepth;

            public int Count { get; set; }
            public bool HasDepth => _maxDepth != null;
            public string Name
            {
                get;
                set;
            }

            /// <summary>
            /// Gets or sets the maximum depth allowed when reading JSON.
            /// </summary>
            [DefaultValue(64)]
            public int? MaxDepth
            {
                get => _maxDepth ?? 64;
                set
                {
                    if (value <= 0)
                    {
                        throw new ArgumentException("Value must be positive.", nameof(value));
                    }
                    _maxDepth = value;
                }
            }

            public object? this[string key]
            {
                get { return Find(key); }
                set { Store(key, value); }
            }

            public event EventHandler? Changed
            {
                add { _changed += value; }
                remove { _changed -= value; }
            }

            public event EventHandler? Saved;

            public static Settings operator +(Settings a, Settings b)
            {
                return a.Merge(b);
            }

            public static explicit operator int(Settings s)
            {
                return s.Count;
            }

            public static bool operator ==(Settings a, Settings b) => a.Equals(b);

            public void Reset()
            {
                _maxDepth = null;
            }
        }
    }
    """
)


def test_long_properties_indexers_events_and_operators_are_symbols() -> None:
    chunks = chunk_file("Src/Json/Settings.cs", SETTINGS)
    assert named(chunks) == [
        ("Settings", "class", 3, 62),
        ("Settings.MaxDepth", "property", 15, 30),  # its doc comment and attribute included
        ("Settings.this[]", "property", 32, 36),
        ("Settings.Changed", "property", 38, 42),
        ("Settings.operator+", "method", 46, 49),
        ("Settings.explicit operator int", "method", 51, 54),
        ("Settings.Reset", "method", 58, 61),
    ]
    max_depth = chunk(chunks, "Settings.MaxDepth").text.splitlines()
    assert max_depth[0].strip() == "/// <summary>" and max_depth[-1].strip() == "}"
    assert 'throw new ArgumentException("Value must be positive.", nameof(value));' in map(
        str.strip, max_depth
    )


def test_the_class_chunk_keeps_short_members_whole_and_the_first_line_of_the_others() -> None:
    chunks = chunk_file("Src/Json/Settings.cs", SETTINGS)
    assert textwrap.dedent(chunk(chunks, "Settings").text) == textwrap.dedent(
        """\
        public class Settings
        {
            internal int? _maxDepth;

            public int Count { get; set; }
            public bool HasDepth => _maxDepth != null;
            public string Name
            {
                get;
                set;
            }

            public int? MaxDepth

            public object? this[string key]

            public event EventHandler? Changed

            public event EventHandler? Saved;

            public static Settings operator +(Settings a, Settings b)

            public static explicit operator int(Settings s)

            public static bool operator ==(Settings a, Settings b) => a.Equals(b);

            public void Reset()
        }"""
    )
    # Every line is in one chunk, but a member symbol's first line, which is in its class's chunk too.
    source_lines = Counter(line for line in SETTINGS.decode().splitlines() if line.strip())
    chunk_lines = Counter(line for c in chunks for line in c.text.splitlines() if line.strip())
    heads = Counter(c.text.splitlines()[0] for c in chunks if c.symbol.startswith("Settings."))
    heads["        public int? MaxDepth"] += 1  # its chunk starts at its doc comment
    heads["        /// <summary>"] -= 1
    assert chunk_lines == source_lines + heads


def test_the_span_counts_from_the_name_and_needs_code() -> None:
    assert DECLARATION_MIN_LINES == 3
    data = source(
        """
        public class Box
        {
            [JsonProperty("w")]
            [Obsolete]
            public int Width { get => _w; }

            public int Height
                => _h;

            public int Depth {
                get { return _d; } }

            public int Area {
                get { return Width * Height; }
            }

            public List<int> Sizes { get; } = new List<int>
            {
                1,
                2,
            };
        }
        """
    )
    assert named(chunk_file("Box.cs", data)) == [
        ("Box", "class", 1, 22),
        ("Box.Area", "property", 13, 15),  # 3 lines from its name: a symbol
    ]


def test_interface_abstract_and_explicit_members() -> None:
    data = source(
        """
        public interface IShape<T> where T : IShape<T>
        {
            int Sides
            {
                get;
            }

            static abstract T operator -(T a, T b);

            string Label
            {
                get { return "shape"; }
            }
        }

        public class Grid : IList<int>
        {
            int IList<int>.this[int index]
            {
                get => _cells[index];
                set => _cells[index] = value;
            }
        }
        """
    )
    assert named(chunk_file("Shape.cs", data)) == [
        ("IShape", "interface", 1, 14),
        ("IShape.Label", "property", 10, 13),  # a default implementation has code
        ("Grid", "class", 16, 23),
        ("Grid.this[]", "property", 18, 22),  # named without the interface, as a method would be
    ]


def test_other_languages_accessors_are_methods_already() -> None:
    typescript = source(
        """
        class Box {
          get width(): number {
            return this.w;
          }
        }
        """
    )
    assert named(chunk_file("box.ts", typescript)) == [("Box", "class", 1, 5), ("Box.width", "method", 2, 4)]
