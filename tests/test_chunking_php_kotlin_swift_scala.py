"""PHP, Kotlin, Swift and Scala are chunked into symbols (schema 16); before, they were line windows.

Shapes checked on guzzle (PHP), okio (Kotlin), Alamofire (Swift) and os-lib (Scala): classes and their
methods, interfaces, traits, enums, objects; declarations without a body (abstract, interface, protocol
members) stay lines of their type's chunk; namespaces and packages do not qualify names (they mirror the
folders, as Java's packages do).
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


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("src/Client.php", "php"),
        ("okio/src/commonMain/kotlin/okio/Buffer.kt", "kotlin"),
        ("build.gradle.kts", "kotlin"),
        ("Source/Core/Session.swift", "swift"),
        ("os/src/FileOps.scala", "scala"),
        ("build.sc", "scala"),
    ],
)
def test_language_by_suffix(path: str, language: str) -> None:
    assert language_for(path) == language


PHP = source(
    """
    <?php
    namespace GuzzleHttp\\Handler;

    use Psr\\Http\\Message\\RequestInterface;

    /**
     * HTTP handler that uses PHP's HTTP stream wrapper.
     */
    #[Final]
    class StreamHandler
    {
        private $lastHeaders = [];

        public function __invoke(RequestInterface $request, array $options): PromiseInterface
        {
            return $this->createResponse($request, $options);
        }

        abstract protected function finish(): void;
    }

    interface HandlerInterface
    {
        public function handle(): void;
    }

    trait Retries
    {
        private function retry(int $times)
        {
            return $times;
        }
    }

    enum Status: string
    {
        case Ok = 'ok';

        public function label(): string
        {
            return 'OK';
        }
    }

    function choose_handler(): callable
    {
        return new StreamHandler();
    }
    """
)


def test_php_classes_methods_interfaces_traits_enums_and_functions() -> None:
    assert named(chunk_file("src/Handler/StreamHandler.php", PHP)) == [
        ("StreamHandler", "class", 6, 20),  # its doc comment and attribute included
        ("StreamHandler.__invoke", "method", 14, 17),  # `finish` (abstract) stays a line of the class
        ("HandlerInterface", "interface", 22, 25),
        ("Retries", "trait", 27, 33),
        ("Retries.retry", "method", 29, 32),
        ("Status", "enum", 35, 43),
        ("Status.label", "method", 39, 42),
        ("choose_handler", "function", 45, 48),
    ]


def test_php_braced_namespace_is_searched_but_does_not_qualify() -> None:
    text = source(
        """
        <?php
        namespace App\\Models {
            class User
            {
                public function name() { return 'x'; }
            }
        }
        """
    )
    assert named(chunk_file("app/Models/User.php", text)) == [
        ("User", "class", 3, 6),
        ("User.name", "method", 5, 5),
    ]


KOTLIN = source(
    """
    package okio

    /** A collection of bytes in memory. */
    class Buffer : BufferedSource {
      val size: Long
        get() = 0L

      fun readByte(): Byte {
        return 0
      }

      companion object {
        fun of(vararg data: Byte): Buffer = Buffer()
      }
    }

    interface Source {
      fun read(sink: Buffer, byteCount: Long): Long
      fun close() {
      }
    }

    enum class Level { LOW, HIGH; fun up(): Level = HIGH }

    object Utf8 {
      fun size(s: String): Long {
        return s.length.toLong()
      }
    }

    fun String.encodeUtf8(): ByteString {
      return ByteString(this)
    }
    """
)


def test_kotlin_classes_interfaces_enums_objects_companions_and_functions() -> None:
    assert named(chunk_file("okio/src/commonMain/kotlin/okio/Buffer.kt", KOTLIN)) == [
        ("Buffer", "class", 3, 15),  # its KDoc, which the grammar puts in the package header, included
        ("Buffer.readByte", "method", 8, 10),
        ("Buffer.of", "method", 13, 13),  # a companion object's member: the class's
        ("Source", "interface", 17, 21),
        ("Source.close", "method", 19, 20),  # `read` has no body: a line of the interface
        ("Level", "enum", 23, 23),
        ("Level.up", "method", 23, 23),
        ("Utf8", "class", 25, 29),
        ("Utf8.size", "method", 26, 28),
        ("String.encodeUtf8", "method", 31, 33),  # an extension function: named by its receiver type
    ]


SWIFT = source(
    """
    import Foundation

    /// Manages requests.
    open class Session {
        var count = 0
        var label: String { "session" }
        var isIdle: Bool {
            get { count == 0 }
            set { count = newValue ? 0 : 1 }
        }

        init(count: Int) {
            self.count = count
        }

        func request(_ url: String) -> Request {
            Request(url)
        }
    }

    protocol Convertible {
        func asURL() throws -> URL
    }

    struct Empty { func check() -> Bool { true } }

    enum Method { case get, post }

    extension Session: CustomStringConvertible {
        public func cancelAll() {
            count = 0
        }
    }
    """
)


def test_swift_types_by_declaration_kind_extensions_and_computed_properties() -> None:
    assert named(chunk_file("Source/Core/Session.swift", SWIFT)) == [
        ("Session", "class", 3, 19),
        (
            "Session.isIdle",
            "property",
            7,
            10,
        ),  # computed, 3+ lines; `label` (one line) and stored `count` not
        ("Session.init", "method", 12, 14),
        ("Session.request", "method", 16, 18),
        ("Convertible", "interface", 21, 23),
        ("Empty", "struct", 25, 25),
        ("Empty.check", "method", 25, 25),
        ("Method", "enum", 27, 27),
        ("Session", "impl", 29, 33),  # an extension is named by the type it extends, like a Rust impl
        ("Session.cancelAll", "method", 30, 32),
    ]


def test_swift_conditional_compilation_is_read_through_its_first_branches() -> None:
    """Alamofire's Session.swift: an attribute line between `#if` and a member breaks the grammar's parse;
    read through each group's first branch, as C's `#if`, the member is a method of its class."""
    text = source(
        """
        open class Session {
            func plain() {
                work()
            }

            #if canImport(Darwin)
            @available(macOS 10.15, *)
            func webSocketRequest(to url: String) -> Request {
                Request(url)
            }
            #elseif os(Linux)
            func linuxOnly() {
            }
            #endif

            func after() {
                work()
            }
        }
        """
    )
    symbols = [s for s, *_ in named(chunk_file("Source/Core/Session.swift", text))]
    assert "Session.webSocketRequest" in symbols
    assert "Session.after" in symbols
    assert all(not s.startswith("<") for s in symbols)


SCALA = source(
    """
    package os

    /** File operations. */
    class FileOps(root: Path) extends Ops {
      def copy(from: Path, to: Path): Unit = {
        Files.copy(from, to)
      }
      val x = 1
    }

    object FileOps {
      def apply(): FileOps = new FileOps(pwd)
    }

    trait Ops { def name: String }

    case class Stat(size: Long)

    def top(x: Int): Int =
      x * 2
    """
)


def test_scala_classes_objects_traits_and_defs() -> None:
    assert named(chunk_file("os/src/FileOps.scala", SCALA)) == [
        ("FileOps", "class", 3, 9),
        ("FileOps.copy", "method", 5, 7),
        ("FileOps", "class", 11, 13),  # the companion object
        ("FileOps.apply", "method", 12, 12),
        ("Ops", "trait", 15, 15),  # `def name: String` has no body: a line of the trait
        ("Stat", "class", 17, 17),
        ("top", "function", 19, 20),
    ]


def test_kotlin_as_ktfmt_writes_it() -> None:
    """KotlinPoet (a new-user run, session 35): ktfmt puts the primary constructor on the line after the
    class name, and a delegation (`: Taggable by tagMap {`) makes the grammar read the body as a lambda — its
    18 core classes had no members; a KDoc after the imports and an annotation on its own line were left
    out of the class's chunk; extension overloads were indistinguishable (`asClassName` three times)."""
    text = source(
        """
        package com.squareup.kotlinpoet

        import java.io.Closeable

        /** A generated property. */
        @OptIn(ExperimentalX::class)
        public class PropertySpec
        private constructor(
          builder: Builder,
          private val tagMap: TagMap = builder.buildTagMap(),
        ) : Taggable by tagMap {
          public val name: String = builder.name

          public fun toBuilder(): Builder {
            return Builder(name)
          }
        }

        public fun KClass<*>.asClassName(): ClassName {
          return ClassName(this)
        }

        public fun Class<*>.asClassName(): ClassName {
          return ClassName(this)
        }

        internal fun `escape if needed`(s: String) {
          return
        }

        class Pool {
          private fun Long.jitterBy(amount: Int): Long {
            return this + amount
          }
        }
        """
    )
    assert named(chunk_file("kotlinpoet/src/jvmMain/kotlin/PropertySpec.kt", text)) == [
        ("PropertySpec", "class", 5, 17),  # its KDoc and annotation included
        ("PropertySpec.toBuilder", "method", 14, 16),
        ("KClass.asClassName", "method", 19, 21),  # an extension: named by its receiver type, as Go's methods
        ("Class.asClassName", "method", 23, 25),
        ("escape if needed", "function", 27, 29),  # without the backticks
        ("Pool", "class", 31, 35),
        (
            "Pool.jitterBy",
            "method",
            32,
            34,
        ),  # an extension declared in a class is the class's, not Pool.Long's
    ]
    (chunk,) = [c for c in chunk_file("PropertySpec.kt", text) if c.symbol == "PropertySpec"]
    assert chunk.text.splitlines()[2:4] == [
        "public class PropertySpec",
        "private constructor(",
    ]  # the file's lines


def test_scala_indented_bodies_end_before_the_next_declaration() -> None:
    """fastparse (a new-user run, session 35): a `def` whose body starts on the next line took the next
    declaration's doc comment and first line (42 of 1,648 symbols), and an indented `enum Color:` ended on
    the blank line after it."""
    text = source(
        """
        object O {
          def a(x: Int): String =
            if (x > 0) "p" else "n"

          /** doc b */
          def b(): Int = {
            1
          }
        }
        enum Color:
          case Red, Green

        val after = 1
        """
    )
    assert named(chunk_file("O.scala", text)) == [
        ("O", "class", 1, 9),
        ("O.a", "method", 2, 3),
        ("O.b", "method", 5, 8),
        ("Color", "enum", 10, 11),
    ]


def test_scala_package_objects_givens_and_extensions_name_their_members() -> None:
    text = source(
        """
        package object fastparse {
          def P[T](t: T): T = t
        }
        given intShow: Show[Int] with
          def show(a: Int): String = a.toString
        extension (s: String)
          def shout: String = s.toUpperCase
        """
    )
    assert named(chunk_file("fastparse/src-3/package.scala", text)) == [
        ("fastparse", "class", 1, 3),
        ("fastparse.P", "method", 2, 2),
        ("intShow", "class", 4, 5),
        ("intShow.show", "method", 5, 5),
        ("String", "impl", 6, 7),  # named by the type it extends, as a Swift extension
        ("String.shout", "method", 7, 7),
    ]


def test_swift_deinit_subscripts_and_conditional_members_at_the_top_of_a_body() -> None:
    """Kingfisher: `#if os(macOS) … #else … #endif` opening an extension's body broke the whole body (its
    members were top-level functions); `deinit` and `subscript` were never symbols. Swift's branches are
    whole declarations each, so both are kept."""
    text = source(
        """
        final class Player {
            deinit {
                print("gone")
            }
            subscript(i: Int) -> Int {
                get { i }
                set { }
            }
            subscript(key k: String) -> Int { 1 }
        }
        extension Wrapper {
            #if os(macOS)
            func draw() -> Int { return 1 }
            #else
            func draw() -> Int { return 2 }
            #endif
            func after() {
                work()
            }
        }
        """
    )
    assert named(chunk_file("Sources/Player.swift", text)) == [
        ("Player", "class", 1, 10),
        ("Player.deinit", "method", 2, 4),
        ("Player.subscript", "property", 5, 8),  # the one-line subscript stays a line of the class
        ("Wrapper", "impl", 11, 20),
        ("Wrapper.draw", "method", 13, 13),
        ("Wrapper.draw", "method", 15, 15),  # the #else copy too
        ("Wrapper.after", "method", 17, 19),
    ]


def test_kotlin_functions_under_two_or_more_annotations_are_symbols() -> None:
    """nowinandroid (a new-user run, session 37): `@Preview` / `@Composable` / `private fun A()` followed by another
    declaration parsed as an annotated expression, and 18 composables were no symbols. The chunk still starts at
    the first annotation, with the doc comment above it and comments among the annotations."""
    text = source(
        """
        package x

        /** The first screen. */
        @Preview
        @Composable
        private fun ForYouScreen() {
            Text("a")
        }

        @Preview @Composable
        internal fun LinksPanel() {
            Text("b")
        }

        @RunWith(Runner::class)
        // a comment among the annotations
        @Config(sdk = [33])
        @HiltAndroidTest
        class SnackbarTests {
            @Before
            @Throws(Exception::class)
            fun setup() {
            }
        }

        fun B() {
            x()
        }
        """
    )
    assert named(chunk_file("ui/Screens.kt", text)) == [
        ("ForYouScreen", "function", 3, 8),
        ("LinksPanel", "function", 10, 13),
        ("SnackbarTests", "class", 15, 24),
        ("SnackbarTests.setup", "method", 20, 23),
        ("B", "function", 26, 28),
    ]


def test_a_long_top_level_kotlin_property_is_a_symbol_with_its_objects_functions() -> None:
    """nowinandroid (session 37): `internal val NiaTypography = Typography(…)` (120 lines) and the colour schemes
    were `<module>` lines, so a task about the typography found no symbol; short and member properties stay lines."""
    text = source(
        """
        package x

        internal val NiaTypography = Typography(
            displayLarge = TextStyle(fontSize = 57.sp),
            displayMedium = TextStyle(fontSize = 45.sp),
        )

        private val STANDARD_DATE_FORMAT =
            object : ThreadLocal<DateFormat>() {
                override fun initialValue(): DateFormat {
                    return SimpleDateFormat("EEE", Locale.US)
                }
            }

        const val MAX_DATE = 253402300799999L

        class Holder {
            val inside = listOf(
                1,
                2,
            )
        }
        """
    )
    assert named(chunk_file("theme/Type.kt", text)) == [
        ("NiaTypography", "variable", 3, 6),
        ("STANDARD_DATE_FORMAT", "variable", 8, 13),
        ("STANDARD_DATE_FORMAT.initialValue", "method", 10, 12),
        ("Holder", "class", 17, 22),
    ]
