"""File roles (lamina/repo/roles.py) and the [roles] section of lamina.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamina.config import parse_config
from lamina.errors import LaminaError
from lamina.repo.roles import RoleRules, conventional_role, file_role, role_rules


@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("src/shop/refunds.py", "code"),
        ("tokio/src/sync/mpsc/chan.rs", "code"),
        ("pkg/cmd/pr/create/create.go", "code"),
        ("src/query-builder/SelectQueryBuilder.ts", "code"),
        ("lib/core/Axios.js", "code"),
        ("tests/test_refunds.py", "test"),
        ("aiohttp/test_utils.py", "test"),  # by the pytest name rule; [roles] code = [...] overrides
        ("pkg/cmd/pr/create/create_test.go", "test"),
        ("src/main/java/org/jsoup/nodes/Element.java", "code"),
        ("src/test/java/org/jsoup/nodes/ElementTest.java", "test"),
        ("test/functional/query-builder/select.ts", "test"),
        ("lib/core/Axios.test.js", "test"),
        ("web/src/cart.spec.tsx", "test"),
        ("tokio/tests/sync_mpsc.rs", "test"),
        ("tokio/src/runtime/tests.rs", "test"),
        ("README.md", "docs"),
        ("CHANGELOG.md", "docs"),
        ("CHANGES", "docs"),
        ("docs/guide/install.rst", "docs"),
        ("examples/basic/main.go", "docs"),
        ("release-notes.txt", "docs"),
        ("pyproject.toml", "config"),
        (".github/workflows/ci.yml", "config"),
        ("Makefile", "config"),
        ("package.json", "config"),
        ("go.mod", "config"),
        ("go.sum", "generated"),
        ("package-lock.json", "generated"),
        ("Cargo.lock", "generated"),
        ("api/service.pb.go", "generated"),
        ("testdata/input.golden", "data"),
        ("tests/fixtures/page.html", "data"),
        ("assets/logo.svg", "data"),
        ("src/parser.y", "code"),  # a bison grammar (its generated parser.c is skipped by its marker)
        ("src/lexer.l", "code"),
        ("config.ru", "code"),
        ("SPEC.rdoc", "docs"),
        ("dodo.py", "config"),  # doit's task file; `lamina init` writes one
        ("CMakeLists.txt", "config"),
        ("src/CMakeLists.txt", "config"),
        ("configure.ac", "config"),
        ("Makefile.am", "config"),
        ("cmake/FindFoo.cmake", "config"),
        # a new-user run on Newtonsoft.Json and zod (session 34)
        ("Src/Newtonsoft.Json.Tests/TestObjects/Person.cs", "test"),  # a .NET test project's folder
        ("src/Shop.UnitTests/Refunds.cs", "test"),
        ("Src/Newtonsoft.Json/JsonTextReader.cs", "code"),
        ("Build/build.ps1", "code"),  # tracked build scripts, not build output: "fix build signing"
        ("Build/version.json", "config"),
        # JS tool settings are programs a task may ask to change ("adjust the rollup config"): code
        ("packages/zod/rollup.config.js", "code"),
        ("src/app.config.service.ts", "code"),
        ("src/__mocks__/client.ts", "test"),
        ("src/parse.bench.ts", "test"),
        ("src/types.test-d.ts", "test"),
        ("test/module/cjs/index.js", "test"),  # esm/ and cjs/ folders are not build output by name
        # PHP, Kotlin, Swift and Scala (schema 16): guzzle, okio, Alamofire, os-lib
        ("src/Handler/StreamHandler.php", "code"),
        ("tests/Handler/StreamHandlerTest.php", "test"),
        ("lib/ClientTest.php", "test"),  # PHPUnit's name, outside a tests/ folder
        ("okio/src/commonMain/kotlin/okio/Buffer.kt", "code"),
        ("okio/src/commonTest/kotlin/okio/BufferTest.kt", "test"),
        ("okio/src/jvmTest/kotlin/okio/Utf8Jvm.kt", "test"),  # a Kotlin Multiplatform test source set
        ("app/src/androidUnitTest/kotlin/Foo.kt", "test"),
        ("app/src/latest/kotlin/Foo.kt", "code"),  # `latest` ends in "test" but is no camelCase source set
        ("okio/build.gradle.kts", "config"),
        ("settings.gradle.kts", "config"),
        ("Source/Core/Session.swift", "code"),
        ("Tests/SessionTests.swift", "test"),
        ("Package.swift", "config"),
        ("Package@swift-6.0.swift", "config"),
        ("os/src/FileOps.scala", "code"),
        ("core/src/ParserSuite.scala", "test"),
        ("build.sbt", "config"),
        ("build.sc", "config"),
        # a main source set is production code whatever a Spec suffix or a specs/testing folder says (KotlinPoet)
        ("kotlinpoet/src/jvmMain/kotlin/com/squareup/kotlinpoet/TypeSpec.kt", "code"),
        ("interop/metadata/src/main/kotlin/com/squareup/kotlinpoet/metadata/specs/Specs.kt", "code"),
        ("impl/maven-testing/src/main/java/org/apache/maven/testing/MojoExtension.java", "code"),
        ("src/test/groovy/com/shop/CartSpec.groovy", "test"),
        ("core/src/test/scala/ParserSpec.scala", "test"),
        ("src/main/java/com/shop/CartTest.java", "test"),  # a *Test name still is
        ("phpunit.xml.dist", "config"),
        ("phpstan.neon", "config"),
        ("gradlew", "config"),
        # Kingfisher and fastparse (session 35)
        ("Sources/Documentation.docc/Resources/code-files/01-ViewController-1.swift", "docs"),
        ("Demo/Demo/ViewController.swift", "docs"),
        ("perftests/resources/GenJSCode.scala", "test"),
        ("build.mill", "config"),
        ("Kingfisher.podspec", "config"),
        ("fastlane/Fastfile", "config"),
        ("Kingfisher.xcodeproj/project.pbxproj", "config"),
        ("readme/Changelog.scalatex", "docs"),
        # django-rest-framework (session 35): migrations and vendored static assets took source slots
        ("rest_framework/authtoken/migrations/0002_auto_20160226_1747.py", "generated"),
        ("rest_framework/authtoken/migrations/__init__.py", "code"),
        ("app/migrations/helpers.py", "code"),
        ("rest_framework/static/rest_framework/js/prettify-min.js", "generated"),
        ("rest_framework/static/rest_framework/css/font-awesome-4.0.3.css", "generated"),
        # a code file named like a docs file is code (excalidraw's history.ts, docker's image/history.go)
        ("packages/excalidraw/history.ts", "code"),
        ("cli/command/image/history.go", "code"),
        ("lib/rubocop/cop/security.rb", "code"),
        ("HISTORY.md", "docs"),
        ("SECURITY", "docs"),
        ("CHANGES.txt", "docs"),
        # Vue, Svelte, shell, Lua, Elixir, Dart (session 36: telescope.nvim, ecto, dart-lang/http)
        ("src/components/Cart.vue", "code"),
        ("src/lib/Button.svelte", "code"),
        ("nvm.sh", "code"),
        ("lua/telescope/pickers.lua", "code"),
        ("lua/telescope/pickers_spec.lua", "test"),
        ("spec/pickers_spec.lua", "test"),
        ("telescope-scm-1.rockspec", "config"),
        ("lib/ecto/changeset.ex", "code"),
        ("test/ecto/changeset_test.exs", "test"),
        ("mix.exs", "config"),
        (".formatter.exs", "config"),
        ("pkgs/http/lib/src/client.dart", "code"),
        ("pkgs/http/test/client_test.dart", "test"),
        # Dart and Elixir libraries: everything under lib/ is the library (bloc_test's core is
        # lib/src/bloc_test.dart; plug's test adapter lib/plug/adapters/test/conn.ex), tests live in test/
        ("packages/bloc_test/lib/src/bloc_test.dart", "code"),
        ("lib/plug/adapters/test/conn.ex", "code"),
        ("test/plug/conn_test.exs", "test"),
        ("config/runtime.exs", "config"),
        ("lib/plug/templates/debugger.html.eex", "code"),
        # `it` is a test folder only as Maven's src/it/ (bloc's Italian docs are docs/src/content/docs/it/)
        ("docs/src/content/docs/it/index.mdx", "docs"),
        ("core/src/it/java/org/shop/CheckoutIT.java", "test"),
        ("scripts/test", "code"),  # a program without a suffix in a scripts folder
        ("libexec/rbenv-init", "code"),
        ("tests/roots/test-root/index.rst", "data"),  # a test's documents are its data
        ("tests/README.md", "docs"),
        ("Tests/Tests/AFHTTPSessionManagerTests.m", "test"),
        # Spring and .NET (session 36): a package named samples or example inside a main source set is code;
        # a samples/ module around one stays docs
        ("src/main/java/org/springframework/samples/petclinic/owner/OwnerController.java", "code"),
        ("src/main/java/com/example/demo/GreetingController.java", "code"),
        ("samples/crawler/src/main/java/okhttp3/sample/Crawler.java", "docs"),
        ("src/WebApp/Pages/CartPage.razor", "code"),
        ("src/WebApp/Views/Home/Index.cshtml", "code"),
        ("src/ClientApp/MainPage.xaml", "code"),
        ("src/Ordering.Infrastructure/Migrations/20240106121712_UseEnumForOrderStatus.cs", "generated"),
        ("src/Web/Web.csproj", "config"),
        ("Directory.Packages.props", "config"),
        ("eShop.slnx", "config"),
        ("mvnw.cmd", "config"),
        ("src/test/jmeter/petclinic_test_plan.jmx", "data"),
        ("src/Ordering.FunctionalTests/Setup/Fixture.cs", "test"),
        ("Sources/SDWebImageTest.m", "test"),
        ("AFNetworking/AFHTTPSessionManager.m", "code"),
        ("integration_test/app_test.dart", "test"),
        ("lib/src/user.freezed.dart", "generated"),
        ("lib/src/messages.pb.dart", "generated"),
        ("lib/generated/intl/messages_all.dart", "generated"),
        ("test/install.bats", "test"),
        ("tools/install.bats", "test"),
        # a test's JSON, XML or YAML is data (rich's asv results were related tests)
        ("benchmarks/results/benchmarks.json", "data"),
        ("maven-core/src/test/projects/basic/pom.xml", "data"),
        ("tests/cases/parse.yaml", "data"),
        ("tests/test_parse.py", "test"),
        ("tests/run.sh", "test"),
        # pip's dependency lists are configuration, not docs (session 37: "Bump pytest" changes them)
        ("requirements.txt", "config"),
        ("requirements-dev.txt", "config"),
        ("requirements/constraints.txt", "config"),
        ("requirements/runtime-deps.in", "config"),
        ("docs/requirements.txt", "config"),
        ("notes.txt", "docs"),
        # prose under .github/ is docs; its workflows stay config
        (".github/ISSUE_TEMPLATE/bug_report.md", "docs"),
        (".github/PULL_REQUEST_TEMPLATE.md", "docs"),
        (".github/CONTRIBUTING.md", "docs"),
        # Maven's site is documentation (commons-lang's src/site/xdoc upgrade notes were configuration)
        ("src/site/xdoc/upgradeto2_6.xml", "docs"),
        ("src/site/site.xml", "docs"),
        ("src/site/resources/js/site.js", "code"),
        # session 37's new-user runs: Android flavours, vendored copies, Rails and Laravel, templates, builds
        ("core/analytics/src/prod/kotlin/com/google/samples/apps/nia/AnalyticsHelper.kt", "code"),
        ("core/data/src/demo/java/com/google/samples/apps/nia/DemoRepository.kt", "code"),
        ("app/src/testDemo/kotlin/com/google/samples/apps/nia/NavigationTest.kt", "test"),
        ("app/src/androidTestProd/java/com/example/ProdTest.kt", "test"),
        ("samples/src/main/java/com/example/App.java", "docs"),  # a samples/ module around a source set
        ("include/spdlog/fmt/bundled/format.h", "generated"),
        ("third-party/zlib/zlib.h", "generated"),
        ("db/migrate/20240106121712_add_index_to_stories.rb", "generated"),
        ("db/old_migrations/20120706121712_add_users.rb", "generated"),
        ("database/migrations/2024_01_06_121712_create_users_table.php", "generated"),
        ("db/schema.rb", "generated"),
        ("db/seeds.rb", "code"),
        ("app/views/stories/show.html.erb", "code"),
        ("app/views/layouts/application.html.haml", "code"),
        ("resources/views/welcome.blade.php", "code"),
        ("templates/email.twig", "code"),
        ("resources/assets/css/app.pcss", "code"),
        ("core/network/src/main/assets/news.json", "config"),  # an app's data named "news", not its NEWS
        ("NEWS", "docs"),
        ("build.zig", "config"),
        ("build.zig.zon", "config"),
        ("doclayout.cabal", "config"),
        ("Setup.hs", "config"),
        ("Web.config", "config"),
        (".github/ISSUE_TEMPLATE/bug.yml", "docs"),  # an issue form: a template for prose
        ("internal/locale/translations/fr_FR.json", "data"),
        ("src/main/resources/i18n/messages_fr.properties", "data"),
        ("resources/lang/en/messages.php", "code"),  # Laravel's language files are PHP code
        ("hc/api/tests.py", "test"),  # Django's app tests
        ("rest_framework/test.py", "code"),  # DRF's test client: library code
        # session 38's new-user runs: numbered migrations, Dockerfile variants, Credo's settings
        (".credo.exs", "config"),
        ("docker/debian-base.dockerfile", "config"),
        ("Dockerfile.dev", "config"),
        ("db/knex_migrations/2023-08-16-0000-create-uptime.js", "generated"),
        ("db/old_migrations/patch-2fa.sql", "generated"),
        ("src/migrations/1680000000000-Init.ts", "generated"),
        ("migrations/000001_init.up.sql", "generated"),
        ("src/main/resources/db/migration/V1_2__init.sql", "generated"),
        ("priv/repo/migrations/20230101000000_create_users.exs", "generated"),
        ("alembic/versions/3b1f_add_users.py", "generated"),
        ("src/migration/MigrationExecutor.ts", "code"),  # TypeORM's own migration machinery
        ("lib/oban/migrations/postgres/v12.ex", "code"),  # a library's versioned migrations are its code
        ("migrations/index.js", "code"),
    ],
)
def test_conventional_roles(path: str, role: str) -> None:
    assert conventional_role(path) == role


def test_globs_win_over_conventions_and_graph_files_are_their_own_role() -> None:
    rules = RoleRules({"code": ("examples/**",), "test": ("qa/**",)}, ("product/**/*.toml",))
    assert file_role("examples/basic/main.go", rules) == "code"
    assert file_role("qa/checkout.py", rules) == "test"
    assert file_role("product/workflows/refund.toml", rules) == "graph"
    assert file_role("src/app.py", rules) == "code"
    assert file_role("docs/index.md", rules) == "docs"


def test_roles_section_of_lamina_toml() -> None:
    config = parse_config({"roles": {"docs": ["site/**"], "generated": ["src/gen/**"]}}, Path("lamina.toml"))
    rules = role_rules(config)
    assert file_role("site/index.html", rules) == "docs"
    assert file_role("src/gen/api.py", rules) == "generated"
    assert file_role("product/x.toml", rules) == "graph"  # [graph] paths default


@pytest.mark.parametrize(
    "data",
    [{"roles": {"sources": ["x"]}}, {"roles": {"code": "src/**"}}, {"roles": {"test": [1]}}],
)
def test_bad_roles_section_is_a_config_error(data: dict) -> None:
    with pytest.raises(LaminaError) as err:
        parse_config(data, Path("lamina.toml"))
    assert err.value.code == "LAMINA_CONFIG"


def test_a_rust_files_inline_test_module_is_test_and_the_rest_keeps_the_files_role() -> None:
    from lamina.chunking import chunk_file
    from lamina.repo.roles import chunk_role

    source = (
        b"pub fn parse(text: &str) -> usize {\n    text.len()\n}\n\n"
        b"#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn parses_empty() {\n"
        b'        assert_eq!(parse(""), 0);\n    }\n}\n'
    )
    roles = {
        c.symbol: chunk_role("code", "src/parse.rs", c.symbol) for c in chunk_file("src/parse.rs", source)
    }
    assert roles["parse"] == "code" and roles["tests.parses_empty"] == "test"
    assert chunk_role("code", "src/a/b.rs", "net.tests.Fixture.new") == "test"  # nested and inside an impl
    assert chunk_role("code", "src/testing.rs", "tests_helper") == "code"  # a name, not a `tests` module
    assert chunk_role("code", "src/tests.py", "tests.parses") == "code"  # Rust only
    assert chunk_role("docs", "src/parse.rs", "tests.parses") == "docs"  # only a code file's chunks move
