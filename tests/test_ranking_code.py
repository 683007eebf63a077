"""The code-aware ranking: a symbol question finds the definition, even past the scorer's pool; a
file named like the question's words ranks up; the reasons are shown; the plain design is untouched."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write_tree

import rag.ranking.order as rr
from rag import Index, ingest, search
from rag.chunking.base import Chunk
from rag.cli import main
from rag.ranking.hits import Hit
from rag.ranking.order import Shape, names_found, names_in, question_shape
from rag.weights import DEFAULTS


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("APIRouter", Shape("APIRouter", ())),
        ("Sinatra::Base", Shape("Sinatra::Base", ())),
        ("field_validator", Shape("field_validator", ())),
        ("_private", Shape("_private", ())),
        ("session", Shape(None, ("session",))),  # a lower-case word is a plain-language question
        ("how does safeParse report errors", Shape(None, ("safeparse", "report", "errors"))),
    ],
    ids=["pascal", "qualified", "snake", "underscore", "plain-word", "camel-case-in-words"],
)
def test_question_shape(question: str, expected: Shape) -> None:
    assert question_shape(question) == expected


def _users_of_router(n: int) -> dict[str, str]:
    """`n` modules that use Router heavily, and the one small module that defines it."""
    files = {
        f"app/handlers/h{i:02d}.py": (
            f"from app.routing import Router\n\n\ndef handler_{i}(router: Router) -> Router:\n"
            f"    '''Register handler {i} on a Router.'''\n"
            "    router = Router(router)\n    return Router(router.routes)\n"
        )
        for i in range(n)
    }
    files["app/routing.py"] = (
        "class Router:\n    def __init__(self, routes=()):\n        self.routes = list(routes)\n"
    )
    return files


def test_a_symbol_question_ranks_its_definition_first(tmp_path: Path) -> None:
    report = ingest(write_tree(tmp_path / "r", _users_of_router(8)))
    with Index(report.index_path) as index:
        top = search(index, "Router", k=4)[0]
        assert (top.chunk.path, top.chunk.symbol, top.boosted) == (
            "app/routing.py",
            "Router",
            "defines Router",
        )
        unboosted = DEFAULTS._replace(definition_boost=0.0)
        assert (
            search(index, "Router", k=4, weights=unboosted)[0].chunk.path != "app/routing.py"
        )  # the users repeat the name more


def test_the_definition_is_found_past_the_scorers_pool(tmp_path: Path) -> None:
    # 45 users named and filled with the word (the pool holds 30); the definition in a file named like it
    files = {}
    for i in range(45):
        words = " ".join(f"w{i}x{j}" for j in range(6))
        files[f"app/router_uses/router_use_{i:02d}.py"] = (
            f"from app.router import Router\n\n\ndef mount_{i}(router: Router) -> Router:\n"
            f'    """Mount part {i} ({words}) on the Router."""\n'
            "    return Router(Router(router).routes, Router.default, Router())\n"
        )
    files["app/router.py"] = (
        "class Router:\n    def __init__(self, routes=()):\n        self.routes = list(routes)\n"
    )
    report = ingest(write_tree(tmp_path / "r", files))
    with Index(report.index_path) as index:
        hits = search(index, "Router", k=10)
        assert hits[0].chunk.path == "app/router.py" and hits[0].score > 0  # its own lexical score
        no_scan = DEFAULTS._replace(definition_scan=0)
        assert "app/router.py" not in [h.chunk.path for h in search(index, "Router", k=10, weights=no_scan)]


def _session_repo(root: Path, helper_lines: int, session_lines: int) -> Path:
    return write_tree(
        root,
        {
            "pkg/sessions.py": "def open_store(app, request):\n    '''Load the store of a request.'''\n"
            + "    return loads(request.cookie)\n" * session_lines,
            "pkg/helpers.py": "def sign_value(value, key):\n    '''Sign a session value for its cookie.'''\n"
            + "    return hmac(key, value) + session_cookie_marker(value)\n" * helper_lines,
        },
    )


def test_a_file_named_like_the_question_ranks_up_within_bounds(tmp_path: Path) -> None:
    close = ingest(_session_repo(tmp_path / "close", 2, 2)).index_path  # helpers scores 0.715, sessions 0.682
    far = ingest(_session_repo(tmp_path / "far", 5, 1)).index_path  # helpers 0.932, sessions 0.707
    with Index(close) as a, Index(far) as b:
        no_path = DEFAULTS._replace(path_mult=0.0)
        assert [h.chunk.path for h in search(a, "session cookie", k=2, weights=no_path)] == [
            "pkg/helpers.py",
            "pkg/sessions.py",
        ]
        assert DEFAULTS.path_mult == 0.5  # half the question's words are in its name: x1.25
        hits = search(a, "session cookie", k=2)
        assert [h.chunk.path for h in hits] == ["pkg/sessions.py", "pkg/helpers.py"]
        assert hits[0].boosted == "its file's name holds words of the question" and hits[1].boosted is None
        assert [h.chunk.path for h in search(b, "session cookie", k=2)] == [
            "pkg/helpers.py",
            "pkg/sessions.py",
        ]


def test_the_reason_is_printed(tmp_path: Path) -> None:
    report = ingest(write_tree(tmp_path / "r", _users_of_router(8)))
    result = CliRunner().invoke(
        main, ["query", "--index", str(report.index_path), "--no-llm", "-k", "1", "Router"]
    )
    assert result.exit_code == 0
    head, notes = result.stdout.splitlines()[:2]
    assert head == "1. app/routing.py:1-3 Router (class)"
    assert notes == "   matched router · ranked up: defines Router"


def test_an_index_of_the_plain_design_gets_no_code_aware_stage(tmp_path: Path) -> None:
    from rag import IngestOptions, TokenizerSettings

    report = ingest(
        write_tree(tmp_path / "r", _users_of_router(8)),
        options=IngestOptions(settings=TokenizerSettings(mode="plain")),
    )
    with Index(report.index_path) as index:
        hits = search(index, "Router", k=4)
    assert hits and all(h.boosted is None for h in hits) and hits[0].chunk.path != "app/routing.py"


def _function(name: str, doc: str) -> str:
    return f"def {name}(entry):\n    '''{doc}'''\n    return entry\n\n\n"


_STORE = (
    _function("expire", "Drop an entry whose lease ran out.")
    + _function("renew", "Extend the lease of an entry.")
    + _function("sweep", "Drop every entry whose lease ran out, oldest first.")
)


def test_a_code_file_that_answers_much_of_the_question_ranks_up(tmp_path: Path) -> None:
    # three functions of store.py match; helpers.py's one function matches a little better (1.077 to 1.034)
    files = {"pkg/store.py": _STORE, "pkg/helpers.py": _function("check", "Whether an entry lease ran out.")}
    with Index(ingest(write_tree(tmp_path / "r", files)).index_path) as index:
        hits = search(index, "entry whose lease ran out", k=2)
        assert [(h.chunk.path, h.chunk.symbol) for h in hits] == [
            ("pkg/store.py", "expire"),
            ("pkg/helpers.py", "check"),
        ]
        assert (
            hits[0].score < hits[1].score
            and hits[0].boosted == "much of the question is answered in its file"
        )
        no_coherence = DEFAULTS._replace(coherence_mult=0.0)
        assert [
            h.chunk.symbol for h in search(index, "entry whose lease ran out", k=2, weights=no_coherence)
        ] == [
            "check",
            "expire",
        ]


def _hit(path: str, kind: str, score: float) -> Hit:
    return Hit(score, Chunk(path, 1, 2, kind, None, "text"))


@pytest.mark.parametrize(("lone", "coherent_first"), [(11.0, True), (14.0, False)], ids=["narrow", "wide"])
def test_a_narrow_lead_yields_to_a_file_that_holds_much_of_the_question(
    lone: float, coherent_first: bool
) -> None:
    # one passage at `lone` against a file of three (10, 9, 9): the boosts see the scores ** 0.8, so
    # the coherent file's best passage (10 ** 0.8 x 1.15 = 7.26) passes a lone 11 (6.81 x 1.057 = 7.20)
    # but not a lone 14 (8.83); on the raw scores even the 11 would keep its lead (11.65 against 11.5)
    def ranked(power: float = DEFAULTS.score_power) -> list[str]:
        hits = [
            Hit(lone, Chunk("pkg/single.py", 1, 2, "function", None, "alpha")),
            *(
                Hit(s, Chunk("pkg/store.py", n, n, "function", None, w))
                for n, s, w in ((3, 10.0, "b"), (5, 9.0, "c"), (7, 9.0, "d"))
            ),
        ]
        weights = DEFAULTS._replace(score_power=power)
        top = rr.rank_hits(
            hits, 4, question="entry whose lease ran out", dedupe=False, mix=False, weights=weights
        )
        return [h.chunk.path for h in top[:2]]

    assert ranked() == (
        ["pkg/store.py", "pkg/single.py"] if coherent_first else ["pkg/single.py", "pkg/store.py"]
    )
    assert ranked(1.0) == ["pkg/single.py", "pkg/store.py"]


def test_the_power_leaves_the_demotions_as_they_are() -> None:
    # a test passage at 10 is ranked at 5 (x 0.5), above a section at 4.5; neither gets a boost (prose and
    # tests hold no coherence, no file name holds the question's words): the power, applied after the
    # demotion, keeps that order (applied before it, the test would weigh 10 ** 0.8 x 0.5 = 3.15 < 3.33)
    hits = [
        Hit(10.0, Chunk("tests/test_store.py", 1, 2, "function", None, "alpha")),
        Hit(4.5, Chunk("docs/guide.md", 1, 2, "section", "Guide", "beta")),
    ]
    for power in (0.8, 1.0):
        weights = DEFAULTS._replace(score_power=power)
        top = rr.rank_hits(
            hits, 2, question="entry whose lease ran out", dedupe=False, mix=False, weights=weights
        )
        assert [(h.chunk.path, h.demoted) for h in top] == [
            ("tests/test_store.py", "test"),
            ("docs/guide.md", None),
        ]


def _passages(path: str, values: list[float]) -> list[Hit]:
    return [
        Hit(v, Chunk(path, 10 * n + 1, 10 * n + 5, "function", f"f{n}", f"w{path}{n}"))
        for n, v in enumerate(values)
    ]


def test_after_the_prompts_passages_a_longer_list_covers_more_files() -> None:
    # one file's six passages (10 to 5) and another file's one (4): the first four stay as they are;
    # the fifth of a file that already has four listed weighs 6 x 0.7 ** 3 = 2.06 (two of a file's
    # passages are free), so the other file comes fifth instead of seventh
    hits = _passages("pkg/big.py", [10.0, 9.0, 8.0, 7.0, 6.0, 5.0]) + _passages("pkg/other.py", [4.0])
    values = [h.score for h in hits]
    paths = [h.chunk.path for h in rr.spread_files(hits, 7, values)]
    assert paths == ["pkg/big.py"] * 4 + ["pkg/other.py"] + ["pkg/big.py"] * 2
    for k in range(1, 8):  # the first passages are the same whatever k
        assert rr.spread_files(hits, k, values) == rr.spread_files(hits, 7, values)[:k]
    # four of a file's passages free: its fifth weighs 6 x 0.7 = 4.2 > 4
    four_free = DEFAULTS._replace(spread_free=4)
    assert [h.chunk.path for h in rr.spread_files(hits, 7, values, four_free)][4:] == [
        "pkg/big.py",
        "pkg/other.py",
        "pkg/big.py",
    ]
    unspread = four_free._replace(spread=1.0)
    assert [h.chunk.path for h in rr.spread_files(hits, 7, values, unspread)][4:] == ["pkg/big.py"] * 2 + [
        "pkg/other.py"
    ]


def test_the_lexical_list_is_spread_only_past_the_prompts_passages() -> None:
    hits = _passages("pkg/big.py", [10.0, 9.8, 9.6, 9.4, 9.2, 9.0]) + _passages("pkg/other.py", [6.0])

    def paths(k: int, spread: bool = True) -> list[str]:
        top = rr.rank_hits(hits, k, question="entry whose lease ran out", mix=False, spread=spread)
        return [h.chunk.path for h in top]

    assert paths(5)[:4] == paths(4) == ["pkg/big.py"] * 4  # the prompt's passages: never spread
    assert paths(7)[:5] == ["pkg/big.py"] * 4 + ["pkg/other.py"]
    assert paths(7, spread=False)[4:] == ["pkg/big.py"] * 2 + ["pkg/other.py"]  # as the semantic stage asks


@pytest.mark.parametrize(
    ("path", "kind", "boosted"),
    [
        ("pkg/store.py", "function", True),
        ("tests/test_store.py", "function", False),
        ("docs/store.md", "section", False),
    ],
    ids=["code", "test", "prose"],
)
def test_the_coherence_boost_by_how_much_and_for_which_files(path: str, kind: str, boosted: bool) -> None:
    unpowered = DEFAULTS._replace(score_power=1.0)  # the boosts' arithmetic on the scores as given
    hits = [
        _hit(path, kind, 1.0),
        _hit(path, kind, 0.9),
        _hit(path, kind, 0.4),
        _hit("pkg/helpers.py", "function", 1.05),
    ]
    scores = [1.0, 0.9, 0.4, 1.05]  # as demoted, which boost() is handed
    reasons = ["test" if rr.is_test_path(h.chunk.path) else None for h in hits]
    out, why = rr.boost(hits, Shape(None, ("zzz",)), scores, reasons, unpowered)
    # the file holds 2.3 of the pool's score, the most: its best chunk x (1 + 0.15), its others x (1 + 0.15 * 0.25);
    # helpers.py holds 1.05 / 2.3 of that; a test or prose file gets nothing (but still holds its share)
    helper = 1.05 * (1 + 0.15 * 1.05 / 2.3)
    expected = [1.15, 0.9 * 1.0375, 0.4 * 1.0375] if boosted else [1.0, 0.9, 0.4]
    assert out == pytest.approx([*expected, helper])
    assert (why[0] == "much of the question is answered in its file") is boosted


def test_a_class_line_above_its_first_method_defines_the_class(tmp_path: Path) -> None:
    # the class is too long for one chunk: its header shares a chunk with __init__, which is named for the method
    auth = (
        "class DigestAuth(AuthBase):\n    def __init__(self, username, password):\n"
        "        self.username = username\n        self.password = password\n\n"
        "    def build_header(self, method, url):\n"
        + "        realm = self.realm + method + url  # the challenge's parts, one by one\n"
        * 40
        + "        return 'Digest ' + realm\n\n    def __ne__(self, other):\n"
        "        return not isinstance(other, DigestAuth) or self.username != other.username\n"
    )
    files = {
        "pkg/auth.py": auth,
        "pkg/api.py": "def digest_session(user):\n    return DigestAuth(user, DigestAuth.default)\n",
    }
    with Index(ingest(write_tree(tmp_path / "r", files)).index_path) as index:
        top = search(index, "DigestAuth", k=4)[0]
        assert (top.chunk.start_line, top.chunk.symbol, top.boosted) == (
            1,
            "DigestAuth.__init__",
            "defines DigestAuth",
        )
        by_name_only = DEFAULTS._replace(defines_in_text=False)
        assert (
            search(index, "DigestAuth", k=4, weights=by_name_only)[0].chunk.symbol == "DigestAuth.__ne__"
        )  # short, so it scores more


def test_markup_and_example_files_rank_below_the_code(tmp_path: Path) -> None:
    page = "<p>Your entry lease ran out.</p>\n"
    example = "def main():\n    print('Your entry lease ran out: an entry whose lease ran out is dropped.')\n"
    for name, text, lever in (
        ("pkg/templates/expired.html", page, "data_factor"),
        ("examples/expired.py", example, "example_factor"),
    ):
        with Index(
            ingest(write_tree(tmp_path / lever, {name: text, "pkg/store.py": _STORE})).index_path
        ) as index:
            assert search(index, "entry whose lease ran out", k=1)[0].chunk.path == "pkg/store.py", name
            undemoted = DEFAULTS._replace(**{lever: 1.0})
            assert search(index, "entry whose lease ran out", k=1, weights=undemoted)[0].chunk.path == name


def _engine_rb() -> str:
    """A Ruby class whose long guide comment (with a usage example naming the class) comes first:
    tree-sitter windows the class, and the guide's windows repeat the question's words most."""
    guide = "".join(f"  # A Rails engine is a miniature Rails application, engine {i}.\n" for i in range(24))
    usage = "  #\n  #   module MyEngine\n  #     class Engine < Rails::Engine\n  #       isolate_namespace MyEngine\n"
    usage += "  #     end\n  #   end\n  #\n"
    tail = "".join(f"  # Its paths, routes and initializers, line {i}.\n" for i in range(20))
    return (
        "module Rails\n" + (guide + usage) * 2 + tail + "  class Engine < Railtie\n"
        "    autoload :Configuration, 'rails/engine/configuration'\n\n"
        "    def load_console(app = self)\n      require 'rails/console/app'\n      self\n    end\n\n"
        "    def routes\n      @routes ||= ActionDispatch::Routing::RouteSet.new\n    end\n  end\nend\n"
    )


def test_of_a_windowed_class_the_window_that_opens_it_defines_it(tmp_path: Path) -> None:
    pytest.importorskip("tree_sitter_ruby")
    root = write_tree(tmp_path / "r", {"lib/engine.rb": _engine_rb()})
    assert _engine_rb().splitlines()[83] == "  class Engine < Railtie"  # line 84
    with Index(ingest(root).index_path) as index:
        hits = search(index, "Rails::Engine", k=4)
        assert [(h.chunk.start_line, h.chunk.end_line, h.chunk.symbol) for h in hits] == [
            (61, 85, "Rails.Engine"),  # holds line 84
            (1, 25, "Rails.Engine"),
            (21, 45, "Rails.Engine"),
            (41, 65, "Rails.Engine"),
        ]
        assert hits[0].boosted == "defines Rails::Engine" and hits[0].score < hits[1].score
        every_window = DEFAULTS._replace(definition_line=False)
        assert (
            search(index, "Rails::Engine", k=1, weights=every_window)[0].chunk.start_line == 1
        )  # every window defined it


def _object_mapper_java() -> str:
    writers = "".join(
        f"\n    /** Writes the value as JSON to a {n}. */\n    public void writeValueTo{n}({n} target, Object value) {{\n"
        "        _writeValueAndClose(createGenerator(target), value);\n    }\n"
        for n in ("File", "Writer", "OutputStream", "DataOutput", "Path", "Buffer", "Channel", "Socket")
    )
    return (
        "package tools.jackson.databind;\n\nimport java.util.Objects;\n\n/**\n"
        " * Reads and writes JSON, either to and from basic POJOs or a general-purpose tree model.\n */\n"
        "public class ObjectMapper\n    implements java.io.Serializable\n{\n"
        "    private static final long serialVersionUID = 3L;\n\n"
        "    protected final MapperBuilder<?, ?> _savedBuilderState;\n\n"
        "    /**\n     * Constructs an ObjectMapper with the default JsonFactory; an ObjectMapper\n"
        "     * made this way reads and writes JSON. See ObjectMapper(JsonFactory).\n     */\n"
        "    public ObjectMapper() {\n        this(new ObjectMapper.Builder(new JsonFactory()));\n    }\n\n"
        "    /**\n     * Constructs an ObjectMapper over the given factory, for ObjectMapper\n"
        "     * instances that read other formats than JSON.\n     */\n"
        "    public ObjectMapper(TokenStreamFactory streamFactory) {\n"
        "        this(new ObjectMapper.Builder(streamFactory));\n    }\n"
        + writers
        + "\n    public JsonNode readTree(String content) {\n        return _readTreeAndClose(content);\n    }\n}\n"
    )


def test_a_class_outranks_its_constructors(tmp_path: Path) -> None:
    pytest.importorskip("tree_sitter_java")
    root = write_tree(tmp_path / "r", {"src/ObjectMapper.java": _object_mapper_java()})
    with Index(ingest(root).index_path) as index:
        top, second = search(index, "ObjectMapper", k=4)[:2]
        # the constructors (named ObjectMapper.ObjectMapper) repeat the name more, but do not define the class
        assert (top.chunk.start_line, top.chunk.symbol, top.boosted) == (
            1,
            "ObjectMapper",
            "defines ObjectMapper",
        )
        assert (second.chunk.symbol, second.boosted) == ("ObjectMapper.ObjectMapper", None)
        assert top.score < second.score
        # asked for by its whole name, the constructor is what is asked for
        assert search(index, "ObjectMapper.ObjectMapper", k=1)[0].chunk.symbol == "ObjectMapper.ObjectMapper"
        by_name = DEFAULTS._replace(definition_line=False)
        assert (
            search(index, "ObjectMapper", k=1, weights=by_name)[0].chunk.symbol == "ObjectMapper.ObjectMapper"
        )


@pytest.mark.parametrize(
    ("line", "opens"),
    [
        ("  class Engine < Railtie", True),
        ("  #     class Engine < Rails::Engine", False),  # a usage example in a comment
        ("pub(crate) struct Engine {", True),
        ("export default class Engine {", True),
        ("public sealed class Engine : IDisposable", True),
        ("    engine = Engine()", False),
        ("export const Engine = createEngine()", True),  # a binding that holds the definition
        ("val Engine: EngineFactory = EngineFactory()", True),
        ("  const absl::Engine engine(options);", False),  # a typed declaration that only uses it
        ("  const Engine::Code code = e.code();", False),  # `::` is not a type annotation's `:`
        ("struct Engine::Impl {", False),  # defines Engine::Impl, not Engine
        ("@Deprecated public final class Engine", True),  # an annotation on the same line
        ("pub const fn Engine() -> Self {", True),
    ],
)
def test_a_definition_line(line: str, opens: bool) -> None:
    assert bool(rr._definition_line(("Rails::Engine", "Engine")).search(line)) is opens
    assert bool(rr._definition_of(("Rails::Engine", "Engine")).search(line)) is (opens or "#" in line)


def test_a_keyword_and_a_name_on_different_lines_are_no_definition() -> None:
    text = "}  // namespace\n\nStatus ErrnoToStatus(int error_number) {\n  return Status(error_number);\n}\n"
    assert rr._definition_of(("Status",)).search(text) is None
    assert rr._definition_of(("Status",)).search("namespace Status {") is not None


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("What happens when url_for can't build a URL?", ("url_for",)),
        ("Which exception does Response.json() raise on an empty body?", ("Response.json",)),
        ("Can QuerySet.get_or_create insert duplicates?", ("QuerySet.get_or_create",)),
        ("Why does res.sendFile fail for 'public/index.html'?", ("res.sendFile", "public/index.html")),
        ("where is `parse config` read", ("parse config",)),
        ("how does the library decide, e.g. for a stream?", ()),
        ("Why does my task never run?", ()),
    ],
    ids=["snake", "call", "dotted", "member-and-path", "backticks", "abbreviation", "plain"],
)
def test_the_names_a_question_writes_as_code(question: str, names: tuple[str, ...]) -> None:
    assert names_in(question) == names


def test_a_question_names_what_its_first_passage_defines_or_is() -> None:
    defining = Chunk("src/flask/helpers.py", 28, 33, "function", "App.url_for", "def url_for(): ...", "", 0)
    assert names_found("What happens when url_for can't build a URL?", defining)
    assert not names_found("What happens when url_for_static can't build?", defining)
    assert not names_found("Why does my task never run?", defining)
    page = Chunk("public/index.html", 1, 9, "text", None, "<html>", "", 0)
    assert names_found("Why does res.sendFile fail for 'public/index.html'?", page)
