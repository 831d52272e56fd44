"""C++ as libraries write it: macros the grammar cannot know, deleted members, GoogleTest cases.

Found by a new-user run on google/leveldb (session 35): its whole public API (`class LEVELDB_EXPORT DB {`)
was chunked as functions with no members, methods annotated for thread safety were named after the
annotation (`LOCKS_EXCLUDED`), `= delete` declarations were symbols, every test was `TEST_F`, and an
`#if` inside a constructor's initializer list misnamed every symbol of env_posix.cc.
"""

from __future__ import annotations

import textwrap

from lamina.chunking import Chunk, chunk_file


def source(text: str) -> bytes:
    return textwrap.dedent(text).lstrip("\n").encode()


def named(chunks: list[Chunk]) -> list[tuple[str, str, int, int]]:
    return [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks if not c.symbol.startswith("<")]


def test_an_export_macro_between_class_and_its_name_keeps_the_class_and_its_members() -> None:
    text = source(
        """
        namespace leveldb {
        class LEVELDB_EXPORT Status {
         public:
          bool ok() const { return state_ == nullptr; }
        };
        struct LEVELDB_EXPORT Options final : Base {
          Options() {
            x = 1;
          }
        };
        class Plain {
          int size() { return 0; }
        };
        }  // namespace leveldb
        """
    )
    assert named(chunk_file("include/leveldb/status.h", text)) == [
        ("leveldb.Status", "class", 2, 5),
        ("leveldb.Status.ok", "method", 4, 4),
        ("leveldb.Options", "struct", 6, 10),
        ("leveldb.Options.Options", "method", 7, 9),
        ("leveldb.Plain", "class", 11, 13),
        ("leveldb.Plain.size", "method", 12, 12),
    ]


def test_annotation_macros_after_the_parameters_do_not_name_the_method() -> None:
    text = source(
        """
        class PosixLockTable {
         public:
          bool Insert(const std::string& fname) LOCKS_EXCLUDED(mu_) {
            return true;
          }
          explicit MutexLock(Mutex* mu) EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
            mu_->Lock();
          }
          void Remove() const LOCKS_EXCLUDED(a) ACQUIRE(b) {
            work();
          }
          bool FinishErase(LRUHandle* e) EXCLUSIVE_LOCKS_REQUIRED(mutex_);
        };
        """
    )
    assert named(chunk_file("util/env_posix.cc", text)) == [
        ("PosixLockTable", "class", 1, 13),
        ("PosixLockTable.Insert", "method", 3, 5),
        ("PosixLockTable.MutexLock", "method", 6, 8),
        ("PosixLockTable.Remove", "method", 9, 11),
    ]
    # the chunk keeps the file's own text, macros included
    (insert,) = [c for c in chunk_file("util/env_posix.cc", text) if c.symbol == "PosixLockTable.Insert"]
    assert "LOCKS_EXCLUDED(mu_)" in insert.text


def test_deleted_and_defaulted_members_are_declarations_not_symbols() -> None:
    text = source(
        """
        class DBImpl {
         public:
          DBImpl(const DBImpl&) = delete;
          DBImpl& operator=(const DBImpl&) = delete;
          ~DBImpl() = default;
          DBImpl(int x) : x_(x) {}
        };
        """
    )
    assert named(chunk_file("db/db_impl.h", text)) == [
        ("DBImpl", "class", 1, 7),
        ("DBImpl.DBImpl", "method", 6, 6),
    ]


def test_googletest_cases_are_named_by_suite_and_case() -> None:
    text = source(
        """
        namespace leveldb {
        TEST(WriteBatchTest, Empty) {
          WriteBatch batch;
        }

        TEST_F(DBTest, Append) {
          ASSERT_OK(Put("a", "b"));
        }

        TEST_P(ParamTest, Runs) {
          Run(GetParam());
        }
        }
        """
    )
    assert named(chunk_file("db/write_batch_test.cc", text)) == [
        ("leveldb.WriteBatchTest.Empty", "method", 2, 4),
        ("leveldb.DBTest.Append", "method", 6, 8),
        ("leveldb.ParamTest.Runs", "method", 10, 12),
    ]


def test_a_first_branch_parse_that_names_a_misread_qualifier_properly_is_taken() -> None:
    """leveldb's env_posix.cc: the whole-file parse (891 lines in errors) read `PosixEnv::Schedule` as a
    function `PosixEnv` inside class `Limiter`; the first-branch parse names it `PosixEnv.Schedule`. A
    name lost that way (it qualifies a function of the second parse) is no function lost, so the second
    parse is taken. A name lost otherwise (an `#else` copy) still keeps the whole-file parse."""
    from lamina.chunking import chunker
    from lamina.chunking.languages import CODE_LANGUAGES

    text = source(
        """
        int Probe() {
        #if defined(FAST)
          if (fast()) {
        #else
          if (slow()) {
        #endif
            return 1;
          }
          return 0;
        }

        void PosixEnv::Schedule(void (*function)(void*), void* arg) {
          queue_.push(function, arg);
        }
        """
    ).decode()
    lines = text.split("\n")
    code = CODE_LANGUAGES["cpp"]
    root = chunker._parser("cpp").parse(text.encode()).root_node
    assert root.has_error  # the two `if (…) {` headers cannot both open the one block
    misread = [chunker._Symbol("Limiter.PosixEnv", "method", 11, 13, 11, ())]
    taken, symbols = chunker._first_branch_parse(code, text, lines, root, misread)
    assert taken is not root
    assert "PosixEnv.Schedule" in [s.name for s in symbols]
    lost_for_real = [chunker._Symbol("Limiter.Fallback", "method", 11, 13, 11, ())]
    taken, symbols = chunker._first_branch_parse(code, text, lines, root, lost_for_real)
    assert taken is root and symbols == lost_for_real


def test_a_specifier_macro_opening_a_definition_and_a_macro_alone_on_its_line_are_read_past() -> None:
    """spdlog (a new-user run, session 37): `SPDLOG_INLINE std::shared_ptr<logger> registry::get(…)` was named
    `spdlog.std.shared_ptrregistry.get`, and `FMT_BEGIN_NAMESPACE` above a namespace made a function named
    `namespace`. A type in capitals without an underscore (`DWORD`) is no macro."""
    text = source(
        """
        FMT_BEGIN_NAMESPACE
        namespace detail {
        FMT_CONSTEXPR inline auto count(int n) -> int {
          return n;
        }
        }  // namespace detail
        FMT_END_NAMESPACE

        namespace spdlog {
        SPDLOG_INLINE std::shared_ptr<logger> registry::get(const std::string &name) {
          return loggers_[name];
        }
        SPDLOG_INLINE registry::registry()
            : formatter_(new pattern_formatter()) {
        }
        }  // namespace spdlog

        DWORD WINAPI run(void *arg) {
          return 0;
        }
        """
    )
    assert named(chunk_file("include/registry-inl.h", text)) == [
        ("detail.count", "function", 3, 5),
        ("spdlog.registry.get", "method", 10, 12),
        ("spdlog.registry.registry", "method", 13, 15),
        ("run", "function", 18, 20),
    ]


def test_catch2_cases_are_symbols_named_by_their_titles() -> None:
    """spdlog (a new-user run, session 37): its Catch2 tests were `<module>` windows, so `related` could only list
    `tests/test_registry.cpp:1-80 <module>`. A case is its call and the block beside it, named by its title."""
    text = source(
        """
        #include "includes.h"

        TEST_CASE("registry get", "[registry]") {
          REQUIRE(1 == 1);
          SECTION("drop") {
            x();
          }
        }

        TEST_CASE_METHOD(Fixture, "uses   a fixture", "[f]") {
          y();
        }

        void helper() {
          z();
        }
        """
    )
    assert named(chunk_file("tests/test_registry.cpp", text)) == [
        ("registry get", "function", 3, 8),
        ("uses a fixture", "function", 10, 12),
        ("helper", "function", 14, 16),
    ]
