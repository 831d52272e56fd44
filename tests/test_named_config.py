"""The configuration files a task names: packet `config` (localization._named_config, session 37)."""

from __future__ import annotations

from lamina.retrieval.localization import build_chunk_corpus, localize_all
from lamina.retrieval.tokenize import read_task, reads_as_configuration


def _corpus():  # type: ignore[no-untyped-def]
    rows = [
        # path, symbol, role, text
        ("src/main/java/io/shop/Json.java", "Json.parse", "code",
         "public Object parse(String text) { return mapper.readValue(text); } // jackson mapper"),
        ("src/main/java/io/shop/Orders.java", "Orders.cancel", "code",
         "public void cancel(Order order) { order.refund(); queue.send(order); } // qs query string"),
        ("pom.xml", "<module>", "config",
         "<dependency><groupId>com.fasterxml.jackson.core</groupId><artifactId>jackson-databind</artifactId>"
         "<version>2.15.0</version></dependency>"),
        ("package.json", "<module>", "config", '{"dependencies": {"qs": "2.1.0", "etag": "1.4.0"}}'),
        (".github/workflows/ci.yml", "jobs", "config", "jobs: build: runs-on: ubuntu-latest steps: mvn verify"),
        ("lamina.toml", "<module>", "config", "[index] include jackson databind qs etag"),
        ("src/test/java/io/shop/OrdersTest.java", "OrdersTest.cancels", "test", "void cancels() { cancel(order); }"),
    ]  # fmt: skip
    return build_chunk_corpus(
        [r[0] for r in rows], [r[1] for r in rows], ["function"] * len(rows), [1] * len(rows),
        [9] * len(rows), [r[3] for r in rows], None, roles=[r[2] for r in rows],
    )  # fmt: skip


def test_a_dependency_bump_lists_the_build_file_that_declares_it() -> None:
    found = localize_all(
        _corpus(), "Bump com.fasterxml.jackson.core:jackson-databind from 2.15.0 to 2.17.1", None
    )
    assert [c["file"] for c in found.config][:1] == ["pom.xml"]
    first = found.config[0]
    assert first["role"] == "config" and first["start_line"] == 1 and first["end_line"] == 9
    assert (
        first["reasons"] and first["reasons"][0].startswith("lexical: ") and "jackson" in first["reasons"][0]
    )
    assert all(s["role"] == "code" for s in found.sources)  # sources stay code
    assert "lamina.toml" not in {c["file"] for c in found.config}  # Lamina's own settings never


def test_a_code_task_names_no_configuration() -> None:
    found = localize_all(_corpus(), "Cancel should refund the order before it is queued", None)
    assert found.sources and found.sources[0]["file"] == "src/main/java/io/shop/Orders.java"
    assert found.config == []


def test_a_task_that_says_it_is_about_dependencies_lists_them_even_when_code_matches_better() -> None:
    """`qs` is in Orders.java's comment too; the plain wording lists no configuration, the `deps:` scope does."""
    plain = localize_all(_corpus(), "qs query string order cancel refund", None)
    assert plain.config == []
    scoped = localize_all(_corpus(), "deps: qs@2.2.0", None)
    assert [c["file"] for c in scoped.config][:1] == ["package.json"]


def test_reads_as_configuration_by_the_first_line() -> None:
    assert reads_as_configuration("chore(deps): bump golang.org/x/sys from 0.21.0 to 0.22.0")
    assert reads_as_configuration("deps: qs@2.2.0")
    assert reads_as_configuration("ci: run the tests on Windows too")
    assert reads_as_configuration("build(deps-dev): bump vitest")
    assert reads_as_configuration("Bump MSRV to 1.58")
    assert not reads_as_configuration("fix: crash in the parser")
    assert not reads_as_configuration("Bumper cars are not a dependency")
    assert not reads_as_configuration("Fix the parser\n\nci: later")  # only the first line says it


def test_a_collapsed_details_block_is_no_word_of_the_task() -> None:
    """Dependabot folds the bumped package's release notes into <details>: their words sent the task to CI."""
    task = read_task(
        "Bump distlib from 0.4.2 to 0.4.3\n<details>\n<summary>Release notes</summary>\n"
        "workflow runner matrix\n</details>\nSigned by the bot"
    )
    assert "distlib" in task.terms and "workflow" not in task.terms and "runner" not in task.terms
    assert "signed" in task.terms or "sign" in task.terms  # what follows the block is read
    unclosed = read_task("Bump distlib\n<details>\nworkflow runner")
    assert "workflow" not in unclosed.terms


def test_a_configuration_file_the_task_names_leads_even_when_code_matches_better() -> None:
    """A second new-user run (session 37): "Update packaging/rpm/Dockerfile …" put the Makefile first. A file the
    task names by name or path leads `config` and says so; an ignore list is listed only when named."""
    corpus = build_chunk_corpus(
        ["src/build.go", "Makefile", "packaging/rpm/Dockerfile", "packaging/debian/Dockerfile", ".gitignore"],
        ["build", "<module>", "<module>", "<module>", "<module>"], ["function"] * 5, [1] * 5, [9] * 5,
        ["func build() { rocky linux packages build image }", "build: docker build packaging rocky",
         "FROM rockylinux:9\nRUN dnf install", "FROM debian:12", "# build output for rocky linux\nbuild/"],
        None, roles=["code", "config", "config", "config", "config"],
    )  # fmt: skip
    found = localize_all(corpus, "Update packaging/rpm/Dockerfile to build on Rocky Linux 10", None)
    assert found.config[0]["file"] == "packaging/rpm/Dockerfile"
    assert "the task names this file" in found.config[0]["reasons"]
    assert ".gitignore" not in {c["file"] for c in found.config}
    named = localize_all(corpus, "Stop ignoring build/ in .gitignore", None)
    assert named.config[0]["file"] == ".gitignore"
    both = localize_all(corpus, "Use the same base image in every Dockerfile", None)  # two have the name
    named_both = {c["file"] for c in both.config if "the task names this file" in c["reasons"]}
    assert named_both == {"packaging/rpm/Dockerfile", "packaging/debian/Dockerfile"}


def test_a_data_or_generated_file_the_task_names_is_listed_with_its_own_role() -> None:
    """A new-user run (uptime-kuma, session 38): "fix the wording in en.json" listed the translation file nowhere —
    `sources` holds code, `related` tests and docs. A data or generated file the task names by name or path is
    listed in `config` with its own role and says so; one the task does not name is not, and a repository with no
    configuration file at all still lists it."""
    corpus = build_chunk_corpus(
        ["src/util/i18n.js", "src/lang/en.json", "src/lang/de.json", "api/types.pb.go"],
        ["translate", "<module>", "<module>", "<module>"], ["function"] * 4, [1] * 4, [9] * 4,
        ["function translate(key) { return messages[key] } // wording of the status page",
         '{"statusPage": "Status page wording"}', '{"statusPage": "Statusseite"}', "type Chunk struct { Data []byte }"],
        None, roles=["code", "data", "data", "generated"],
    )  # fmt: skip
    found = localize_all(corpus, "Fix the status page wording in en.json", None)
    assert [(c["file"], c["role"]) for c in found.config] == [("src/lang/en.json", "data")]
    assert "the task names this file" in found.config[0]["reasons"]
    assert found.sources[0]["file"] == "src/util/i18n.js"  # sources stay code
    generated = localize_all(corpus, "Regenerate api/types.pb.go after the Chunk change", None)
    assert [(c["file"], c["role"]) for c in generated.config] == [("api/types.pb.go", "generated")]
    unnamed = localize_all(corpus, "Fix the status page wording", None)
    assert unnamed.config == []  # data is listed only when named


def test_the_text_packet_marks_a_named_data_file_with_its_role() -> None:
    from lamina.packet import config_line

    data = {"file": "src/lang/en.json", "symbol": "<module>", "start_line": 1, "end_line": 9, "role": "data",
            "reasons": ["the task names this file"]}  # fmt: skip
    assert config_line(data) == "src/lang/en.json:1-9 (data)  the task names this file"
    assert config_line({**data, "role": "config"}) == "src/lang/en.json:1-9  the task names this file"
