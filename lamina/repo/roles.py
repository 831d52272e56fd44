"""What a file is for: code to change, a test that proves it, docs, config, generated output or data.

Decided from the path alone (folder and name conventions per language), so it is a pure function of the
path and the repository's lamina.toml: `[roles]` globs (gitignore semantics, as [index]) win over the
conventions, and the product graph's own files (`[graph] paths`) are the role `graph` whatever else
matches. Packet `sources` hold `code`; `related` holds tests and docs (docs/packet-v5.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath

import pathspec

CODE = "code"
TEST = "test"
DOCS = "docs"
CONFIG = "config"
GENERATED = "generated"
DATA = "data"
GRAPH = "graph"
ROLES = (CODE, TEST, DOCS, CONFIG, GENERATED, DATA, GRAPH)
# Roles a lamina.toml can assign with globs ([roles] <role> = [...]); `graph` comes from [graph] paths.
ASSIGNABLE_ROLES = (CODE, TEST, DOCS, CONFIG, GENERATED, DATA)
# The order in which [roles] globs are tried: the narrower kinds first, code last.
_OVERRIDE_ORDER = (GENERATED, DATA, TEST, DOCS, CONFIG, CODE)

CODE_SUFFIXES = frozenset(
    """
    .py .pyi .pyx .js .mjs .cjs .jsx .ts .mts .cts .tsx .vue .svelte .go .rs .java .kt .kts .scala .groovy
    .c .h .cc .cpp .cxx .c++ .hh .hpp .hxx .ipp .cs .fs .rb .rake .gemspec .php .swift .m .mm .lua .pl .pm
    .r .jl .ex .exs .erl .hrl .hs .ml .clj .dart .zig .nim .sh .bash .zsh .ps1 .sql .proto .graphql .gql
    .html .htm .jinja .j2 .jinja2 .tmpl .css .scss .sass .less .y .yy .l .ll .ru .astro .eex .heex .leex
    .razor .cshtml .xaml .erb .haml .slim .twig .liquid .hbs .handlebars .mustache .njk .ejs .pug .jade
    .pcss .postcss
    """.split()
)  # .y/.yy and .l/.ll: yacc/bison grammars and lex/flex scanners (their generated C is skipped); .ru: rackup
DOCS_SUFFIXES = frozenset(
    ".md .mdx .markdown .rst .txt .adoc .asciidoc .org .tex .rtf .pod .rdoc .texi .texinfo .scalatex".split()
)
CONFIG_SUFFIXES = frozenset(
    """
    .toml .yaml .yml .json .jsonc .json5 .ini .cfg .conf .properties .xml .gradle .editorconfig .env .cmake
    .mk .m4 .csproj .fsproj .vbproj .props .targets .sln .slnx .slnf .nuspec .config .zon .cabal
    """.split()
)
DATA_SUFFIXES = frozenset(
    ".csv .tsv .svg .png .jpg .jpeg .gif .ico .webp .pdf .snap .golden .po .pot .mo .dat .bin .wasm .jmx".split()
)
# Names without a telling suffix.
DOCS_NAMES = re.compile(
    r"^(readme|changelog|changes|history|news|release[-_]?notes?|releases|authors|contributors|contributing|"
    r"license|licence|copying|notice|code_of_conduct|security|support|governance|maintainers|upgrading)"
    r"([._-].*)?$",
    re.IGNORECASE,
)
CONFIG_NAMES = frozenset(
    """
    makefile dockerfile containerfile justfile procfile vagrantfile jenkinsfile gemfile rakefile pipfile
    codeowners .gitignore .gitattributes .dockerignore .npmignore .prettierrc .eslintrc .babelrc .nvmrc
    .editorconfig .flake8 .pylintrc .coveragerc go.mod go.work setup.py conftest.py noxfile.py tox.ini
    manage.py dodo.py cmakelists.txt meson.build meson_options.txt configure.ac configure.in makefile.am
    makefile.in gnumakefile sconstruct sconscript build.bazel workspace.bazel build.sbt build.sc build.mill mill package.swift gradlew gradlew.bat mvnw
    fastfile appfile podfile cartfile mix.exs .formatter.exs .luacheckrc .busted mvnw.cmd nuget.config
    build.zig setup.hs setup.lhs rebar.config .credo.exs
    """.split()
)  # dodo.py: doit's task file (`lamina init` writes one: Lamina's own, never a source)
GENERATED_NAMES = re.compile(
    r"(\.lock|-lock\.json|-lock\.yaml|\.sum|[.-]min\.js|[.-]min\.css|-\d+\.\d+\.\d+\.(js|css)|\.map|"
    r"_pb2\.pyi?|_pb2_grpc\.py|\.pb\.go|"
    r"\.pb\.gw\.go|_gen\.go|\.gen\.go|_generated\.go|\.generated\.[^/]+|\.designer\.cs|"
    r"\.(g|freezed|gr|mocks|pb|pbenum|pbjson|pbgrpc|pbserver)\.dart)$",
    re.IGNORECASE,
)
TEST_DIRS = frozenset(
    "test tests testing __tests__ __test__ __mocks__ spec specs e2e integration-tests integration_tests "
    "integration_test "
    "benches bench benchmarks benchmark perftests perftest conformance".split()
)
DATA_DIRS = frozenset(
    "testdata test-data test_data fixtures fixture __fixtures__ __snapshots__ snapshots".split()
)
DOCS_DIRS = frozenset(
    "docs doc documentation examples example samples sample demo demos man changelog.d changes".split()
)
# build/ is neither: tracked files there are build scripts (code by their suffix: a task "fix build signing"
# means Build/sign.ps1) and settings (config by theirs); build output is gitignored, and [index]'s default
# excludes skip a lowercase build/ anyway. Newtonsoft.Json keeps its signing scripts in Build/.
# Folders of programs whose files often have no suffix (`scripts/test`, `bin/setup`, `libexec/rbenv-init`).
SCRIPT_DIRS = frozenset("bin scripts script libexec tools".split())
# Folders of translation catalogues (miniflux's locale/*.json filled `config` and matched Italian words, session 37).
LOCALE_DIRS = frozenset("locale locales i18n l10n translations lang langs".split())
CONFIG_DIRS = frozenset(".github .circleci .gitlab .devcontainer .vscode .idea .husky ci .ci".split())
GENERATED_DIRS = frozenset(
    "node_modules vendor vendors third_party thirdparty third-party 3rdparty bundled dist out target __generated__ "
    "gen generated".split()
)  # bundled: spdlog's include/spdlog/fmt/bundled/ (a copy of fmt) was 57% of its chunks (session 37)
# .NET and Java test projects: Newtonsoft.Json.Tests/, Foo.UnitTests/, Bar.IntegrationTests/ (a folder named
# after the project it tests, with a suffix), where only some files are named *Tests.cs.
TEST_DIR_SUFFIXES = (
    ".tests",
    ".test",
    ".unittests",
    ".integrationtests",
    ".fuzztests",
    ".functionaltests",
    ".acceptancetests",
    ".specs",
    ".benchmarks",
)
# A test by its file name: test_x.py, x_test.py, x_test.go, x.test.ts, x.spec.js, XTest.java, XTests.cs,
# XIT.java, XTest.php, XSuite.scala, x_spec.rb, x_spec.lua (busted), x_test.dart, x.bats, tests.rs, Django's
# tests.py (healthchecks' app tests were code: a new-user run, session 37; `test.py` stays code: DRF's test client),
# x_tests.rs; conftest.py is config (fixtures), test-utils stay by folder.
TEST_NAMES = re.compile(
    r"^test_.+\.py$|^tests\.py$|_tests?\.(py|go|rs|rb|exs?|c|cc|cpp)$|\.(test|spec|bench|test-d)\.[cm]?[jt]sx?$|"
    r"_spec\.(rb|lua)$|\.bats$|"
    r"^tests?\.rs$|[a-z0-9](Tests?|IT|Spec)\.(java|kt|scala|groovy|cs|swift|php|m|mm)$|[a-z0-9]Suite\.scala$|"
    r"^Test[A-Z].*\.(java|kt|cs)$",
)
# pip's dependency lists (a .txt, which would be docs): requirements.txt, requirements-dev.txt, constraints.txt,
# and any .txt or .in in a requirements/ folder (requirements/base.txt).
DEPENDENCY_LISTS = re.compile(r"^(requirements|constraints)([._-][\w.-]*)?\.(txt|in)$", re.IGNORECASE)
DJANGO_MIGRATION = re.compile(r"^\d{4}_\w+\.py$")  # app/migrations/0002_auto_20160226_1747.py
# Any migration tool's numbered or dated steps in a migrations folder (knex's 2023-08-16-0000-create-uptime.js,
# TypeORM's 1680000000000-Init.ts, golang-migrate's 000001_init.up.sql, Flyway's V1_2__init.sql), and SQL patches
# there: history a change adds to, never edits (uptime-kuma's 104 took source slots in 7 packets, session 38)
NUMBERED_MIGRATION = re.compile(r"^(\d|V\d+(_\d+)*__)|\.sql$")
EF_MIGRATION = re.compile(r"^\d{14}_\w+\.cs$")  # Migrations/20240106121712_UseEnumForOrderStatus.cs (EF Core)
# Rails (db/migrate/20240106121712_add_index.rb) and Laravel (database/migrations/2024_01_06_121712_create_x.php)
RAILS_MIGRATION = re.compile(r"^\d{14}_\w+\.rb$")
LARAVEL_MIGRATION = re.compile(r"^\d{4}_\d{2}_\d{2}_\d{6}_\w+\.php$")
# What Rails writes from the migrations: db/schema.rb, db/structure.sql
RAILS_SCHEMA_FILES = ("db/schema.rb", "db/structure.sql")
# Build scripts named by a suffix a code file has too: Gradle's Kotlin scripts, SwiftPM's per-version
# manifests (Package@swift-6.0.swift).
CONFIG_NAME_PATTERNS = re.compile(
    r"\.gradle\.kts$|^package@swift-[0-9.]+\.swift$|\.(xml|neon|ini|yml|yaml|json)\.dist$|\.neon$|\.podspec$|"
    r"\.pbxproj$|\.xcconfig$|\.mill$|\.rockspec$|\.dockerfile$|^(dockerfile|containerfile)\.[\w.-]+$",
    re.IGNORECASE,
)  # phpunit.xml.dist, phpstan.neon(.dist): PHP tools' settings; CocoaPods and Xcode projects; Mill builds;
# Dockerfile.dev, docker/base.dockerfile (data before: a new-user run on uptime-kuma, session 38). JavaScript tools'
# settings written as programs (vite.config.ts, .eslintrc.js) stay code: as config in schema 14, no task could
# reach them ("adjust rollup config to preserve license header" lost its only file; schema 15).
# Kotlin Multiplatform and Android source sets of tests: src/commonTest/, src/jvmTest/, src/androidUnitTest/
# (camelCase, so src/latest/ is not one).
_SOURCE_SET_TEST = re.compile(r"^[a-z][A-Za-z0-9]*Test$")
_SOURCE_SET_MAIN = re.compile(r"^[a-z][A-Za-z0-9]*Main$")
_FLAVOUR_TEST_SET = re.compile(r"^(?:test|androidTest)[A-Z][A-Za-z0-9]*$")  # testDemo, androidTestProd
SPEC_NAME = re.compile(r"[a-z0-9]Spec\.[A-Za-z]+$")  # Spock/Kotest/ScalaTest specs, or KotlinPoet's TypeSpec


@dataclass(frozen=True)
class RoleRules:
    """The globs that decide roles before the conventions: `[roles]` of lamina.toml and `[graph] paths`."""

    overrides: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # role -> globs
    graph: tuple[str, ...] = ()

    def key(self) -> tuple[object, ...]:
        return (tuple(sorted((r, tuple(g)) for r, g in self.overrides.items())), self.graph)


def conventional_role(path: str) -> str:
    """The role of a repository-relative posix path by folder and file-name conventions alone."""
    pure = PurePosixPath(path)
    name = pure.name
    lower = name.lower()
    suffix = pure.suffix.lower()
    folders = [p.lower() for p in pure.parts[:-1]]
    if GENERATED_NAMES.search(name) or any(f in GENERATED_DIRS for f in folders):
        return GENERATED
    # makemigrations' output: history, never what a task changes (DRF's migrations took source slots)
    # (EF Core's too: history `dotnet ef` wrote; a change adds a migration, never edits one: eShop)
    if folders and folders[-1] == "migrations" and (DJANGO_MIGRATION.match(name) or EF_MIGRATION.match(name)):
        return GENERATED
    # (Rails' and Laravel's too; lobsters' 150 old migrations took 7 source slots in 6 packets, session 37)
    migrations_folder = bool(folders) and (
        folders[-1] in ("migrate", "migration") or "migrations" in folders[-1]
    )
    if migrations_folder and (
        RAILS_MIGRATION.match(name) or LARAVEL_MIGRATION.match(name) or NUMBERED_MIGRATION.search(name)
    ):
        return GENERATED
    # Alembic's revisions (alembic/versions/, migrations/versions/): generated steps, as above
    if (
        len(folders) >= 2
        and folders[-1] == "versions"
        and (folders[-2] == "alembic" or "migrations" in folders[-2])
    ):
        return GENERATED
    if path.endswith(RAILS_SCHEMA_FILES) and path.count("/") <= 2:
        return GENERATED
    if any(f in DATA_DIRS for f in folders):
        return DATA
    if any(f in CONFIG_DIRS for f in folders) and (
        suffix in DOCS_SUFFIXES or DOCS_NAMES.match(name) or "issue_template" in folders
    ):
        # .github/ISSUE_TEMPLATE/bug_report.md (and its issue forms, .yml), PULL_REQUEST_TEMPLATE.md,
        # CONTRIBUTING.md: prose, not settings (they were listed as configuration a task names, session 37)
        return DOCS
    if suffix in CONFIG_SUFFIXES and any(f in LOCALE_DIRS for f in folders):
        return DATA  # translation catalogues (locale/fr_FR.json): words in other languages, no settings
    if lower in CONFIG_NAMES or CONFIG_NAME_PATTERNS.search(name) or any(f in CONFIG_DIRS for f in folders):
        return CONFIG
    if DEPENDENCY_LISTS.match(name) or (folders[-1:] == ["requirements"] and suffix in (".txt", ".in")):
        return CONFIG  # requirements.txt, requirements-dev.txt, constraints.txt: what pip installs
    code_like = suffix in CODE_SUFFIXES
    if suffix == ".exs" and folders == ["config"]:
        return CONFIG  # Elixir's config/config.exs, runtime.exs, dev.exs: settings, as Gradle scripts are
    if not suffix and not name.startswith(".") and len(folders) == 1 and folders[0] in SCRIPT_DIRS:
        return (
            CODE  # `scripts/test`, `bin/rails`, rbenv's `libexec/rbenv-init`: programs named without suffix
        )
    if suffix in (".ex", ".dart") and "lib" in folders:
        # Elixir and Dart libraries: everything under lib/ is the library (plug's lib/plug/adapters/test/conn.ex
        # is the test adapter users call; bloc_test's lib/src/bloc_test.dart its core); tests live in test/
        return DOCS if any(f in DOCS_DIRS for f in folders) else CODE
    if _main_source_set(pure.parts[:-1]):
        # Gradle/Maven production code: a `specs/` package or a `TypeSpec.kt` there is no test (KotlinPoet's
        # core files were tests by the Spec suffix); only a *Test/*Tests/*IT name still is.
        test_by_name = TEST_NAMES.search(name) is not None and SPEC_NAME.search(name) is None
        test_folder = False
    else:
        test_by_name = TEST_NAMES.search(name) is not None
        test_folder = any(f in TEST_DIRS or f.endswith(TEST_DIR_SUFFIXES) for f in folders)
    if test_by_name or test_folder or _java_test_tree(pure.parts[:-1]):
        # a test's JSON, XML or YAML is its data, no test to list: rich's 178 asv results under benchmarks/
        # were related tests; maven's test projects hold 2,982 pom.xml files; sphinx's test roots 410 documents.
        data_like = suffix in DATA_SUFFIXES or suffix in CONFIG_SUFFIXES
        if code_like:
            return TEST
        if DOCS_NAMES.match(name) and (not suffix or suffix in DOCS_SUFFIXES):  # the tests' README: docs
            return DOCS
        return DATA if data_like or suffix in DOCS_SUFFIXES else TEST  # sphinx's tests/roots/**/*.rst: data
    if DOCS_NAMES.match(name) and not (code_like or suffix in CONFIG_SUFFIXES) or suffix in DOCS_SUFFIXES:
        # a `history.ts` or `security.py` is code whatever its name says (excalidraw's undo), and a `news.json` an
        # app's data, not its NEWS (nowinandroid's assets, session 37)
        return DOCS
    if folders[:2] == ["src", "site"] and not code_like:
        return DOCS  # Maven's site: src/site/site.xml, xdoc/*.xml, apt/*.apt (commons-lang's upgrade notes)
    # a DocC catalog's tutorial code. Only the folders above a main source set: a package named `samples` or
    # `example` inside one is code (Spring's org/springframework/samples/petclinic and Initializr's
    # com/example/demo were all docs, session 36), a samples/ module around one (okhttp's) is not
    if any(f in DOCS_DIRS or f.endswith(".docc") for f in folders[: _main_source_root(pure.parts[:-1])]):
        return DOCS
    if code_like:
        return CODE
    if suffix in CONFIG_SUFFIXES or name.startswith("."):
        return CONFIG
    return DATA


def _source_sets(folders: Sequence[str]) -> list[tuple[str, str]]:
    """The folders right under a `src/` (Maven/Gradle source sets: main, test, jvmMain, commonTest, an Android
    flavour's prod or demo…), as written, each with the folder below it ("" for none): the source set's camelCase
    tells `jvmTest` from `latest`."""
    below = [*folders[2:], ""]
    return [(b, c) for a, b, c in zip(folders, folders[1:], below, strict=False) if a.lower() == "src"]


# The language folders of a Gradle source set: src/<set>/java/, src/<set>/kotlin/ … name <set> a source set.
_SOURCE_SET_LANGUAGES = frozenset({"java", "kotlin", "scala", "groovy", "aidl"})


def _is_test_set(name: str) -> bool:
    """src/test, src/it (Maven's integration tests), src/testFixtures, src/androidTest, src/commonTest, and an
    Android flavour's tests (src/testDemo, src/androidTestProd)."""
    return (
        name.lower() in ("test", "testfixtures", "it")
        or _SOURCE_SET_TEST.match(name) is not None
        or _FLAVOUR_TEST_SET.match(name) is not None
    )


def _is_main_set(name: str, below: str) -> bool:
    """src/main, src/jvmMain, src/commonMain, and any other set holding a language folder: an Android flavour's
    src/prod/java/ or src/demo/kotlin/ (nowinandroid's were docs by `samples` in their package path, session 37)."""
    if name == "main" or _SOURCE_SET_MAIN.match(name) is not None:
        return True
    return below in _SOURCE_SET_LANGUAGES and not _is_test_set(name)


def _main_source_set(folders: Sequence[str]) -> bool:
    """Maven/Gradle production code: src/main/…, src/jvmMain/…, src/prod/java/…"""
    return any(_is_main_set(b, c) for b, c in _source_sets(folders))


def _main_source_root(folders: Sequence[str]) -> int:
    """How many folders lie above the first main source set's `src/` (all of them when there is none)."""
    for i, (a, b) in enumerate(zip(folders, folders[1:], strict=False)):
        if a.lower() == "src" and _is_main_set(b, folders[i + 2] if i + 2 < len(folders) else ""):
            return i
    return len(folders)


def _java_test_tree(folders: Sequence[str]) -> bool:
    """Maven/Gradle tests: src/test/…, src/it/… (Maven's integration tests), src/androidTest/…,
    src/testFixtures/…, src/commonTest/… (`it` alone is no test folder: bloc's Italian docs are in docs/…/it/)."""
    return any(_is_test_set(b) for b, _ in _source_sets(folders))


@lru_cache(maxsize=64)
def _spec(globs: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(globs)


def file_role(path: str, rules: RoleRules | None = None) -> str:
    """The role of one file: the product graph's files, then [roles] globs, then the conventions."""
    if rules is not None:
        if rules.graph and _spec(rules.graph).match_file(path):
            return GRAPH
        for role in _OVERRIDE_ORDER:
            globs = rules.overrides.get(role)
            if globs and _spec(tuple(globs)).match_file(path):
                return role
    return conventional_role(path)


def unmatched_role_globs(rules: RoleRules, paths: Sequence[str]) -> list[str]:
    """`[roles]` globs that match none of these paths, as `roles.<role>: <glob>` (a typo is silent otherwise)."""
    unmatched = []
    for role, globs in rules.overrides.items():
        for glob in globs:
            spec = _spec((glob,))
            if not any(spec.match_file(p) for p in paths):
                unmatched.append(f"roles.{role}: {glob}")
    return unmatched


def role_rules(config: object) -> RoleRules:
    """The role rules of a loaded lamina.toml (lamina.config.Config)."""
    roles = getattr(config, "roles", None)
    graph = getattr(config, "graph", None)
    overrides = {
        r: tuple(getattr(roles, r)) for r in ASSIGNABLE_ROLES if roles is not None and getattr(roles, r)
    }
    return RoleRules(overrides, tuple(graph.paths) if graph is not None else ())


# Rust keeps unit tests in the file they test, in a `#[cfg(test)] mod tests { … }` (the convention the Rust
# book teaches); the chunker names what is inside `tests.<name>` (or `<module>.tests.<name>`). Those chunks
# are tests, not the code a task changes: `related`, never `sources`, and not embedded. Session 31: 61 of
# nushell's 500 held-out sources were such functions, none since (docs/evaluation.md).
_RUST_TEST_MODULE = re.compile(r"(?:^|\.)tests?\.")


def chunk_role(role: str, path: str, symbol: str) -> str:
    """The role of one chunk of a file whose role is `role`: the file's, except that a Rust code file's
    inline test module (`mod tests` / `mod test`) is `test`."""
    if role == CODE and path.endswith(".rs") and _RUST_TEST_MODULE.search(symbol):
        return TEST
    if role == CODE and path.endswith(".zig") and symbol.startswith('test "'):  # Zig's inline `test "…" {…}`
        return TEST
    return role


# Only these roles' chunks are embedded: `sources` are code, and the dense ranker ranks code only, so
# embedding tests, docs and config (often half of a repository's chunks) bought nothing but cold-index
# time. Every role stays in the BM25 index (`related` is found lexically).
EMBEDDED_ROLES = frozenset({CODE})
