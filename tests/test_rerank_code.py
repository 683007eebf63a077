"""The code-aware rerank: a symbol question finds the definition, even past the scorer's pool; a
file named like the question's words ranks up; the reasons are shown; the plain design is untouched."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write_tree

import rag.rerank as rr
from rag import Index, ingest, search
from rag.cli import main
from rag.rerank import Shape, question_shape


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("APIRouter", Shape("APIRouter", (), ())),
        ("Sinatra::Base", Shape("Sinatra::Base", (), ())),
        ("field_validator", Shape("field_validator", (), ())),
        ("_private", Shape("_private", (), ())),
        ("session", Shape(None, (), ("session",))),  # a lower-case word is a plain-language question
        ("how does safeParse report errors", Shape(None, ("safeParse",), ("safeparse", "report", "errors"))),
    ],
    ids=["pascal", "qualified", "snake", "underscore", "plain-word", "embedded"],
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


def test_a_symbol_question_ranks_its_definition_first(tmp_path: Path, monkeypatch) -> None:
    report = ingest(write_tree(tmp_path / "r", _users_of_router(8)))
    with Index(report.index_path) as index:
        top = search(index, "Router", k=4)[0]
        assert (top.chunk.path, top.chunk.symbol, top.boosted) == (
            "app/routing.py",
            "Router",
            "defines Router",
        )
        monkeypatch.setattr(rr, "DEFINITION_BOOST", 0.0)
        assert (
            search(index, "Router", k=4)[0].chunk.path != "app/routing.py"
        )  # the users repeat the name more


def test_the_definition_is_found_past_the_scorers_pool(tmp_path: Path, monkeypatch) -> None:
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
        monkeypatch.setattr(rr, "DEFINITION_SCAN", 0)
        assert "app/router.py" not in [h.chunk.path for h in search(index, "Router", k=10)]


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


def test_a_file_named_like_the_question_ranks_up_within_bounds(tmp_path: Path, monkeypatch) -> None:
    close = ingest(_session_repo(tmp_path / "close", 2, 2)).index_path  # helpers scores 0.715, sessions 0.682
    far = ingest(_session_repo(tmp_path / "far", 5, 1)).index_path  # helpers 0.932, sessions 0.707
    with Index(close) as a, Index(far) as b:
        monkeypatch.setattr(rr, "PATH_MULT", 0.0)
        assert [h.chunk.path for h in search(a, "session cookie", k=2)] == [
            "pkg/helpers.py",
            "pkg/sessions.py",
        ]
        monkeypatch.setattr(rr, "PATH_MULT", 0.5)  # half the question's words are in its name: x1.25
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
    assert result.output.splitlines()[0].endswith(
        "app/routing.py:1-3 Router (class)  [ranked up: defines Router]"
    )


def test_an_index_of_the_plain_design_gets_no_code_aware_stage(tmp_path: Path) -> None:
    from rag import IngestOptions, TokenizerSettings

    report = ingest(
        write_tree(tmp_path / "r", _users_of_router(8)),
        options=IngestOptions(settings=TokenizerSettings(mode="plain")),
    )
    with Index(report.index_path) as index:
        hits = search(index, "Router", k=4)
    assert hits and all(h.boosted is None for h in hits) and hits[0].chunk.path != "app/routing.py"
