"""What is indexed for a chunk: text and breadcrumb, plus the path and symbol fields."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_tree

from rag import Index, IngestOptions, TokenizerSettings, ingest, search
from rag.chunking import Chunk
from rag.text.terms import chunk_counts, path_text
from rag.text.tokenizer import Tokenizer

METHOD = Chunk(
    "src/flask/sessions.py",
    10,
    12,
    "method",
    "SecureCookieSessionInterface.open_session",
    "def open_session(self, app, request):\n    return None\n",
    context="class SecureCookieSessionInterface(SessionInterface):",
)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/flask/sessions.py", "src flask sessions"),
        ("README.md", " README"),
        ("lib/core/Axios.test.js", "lib core Axios"),
        (".eslintrc", " .eslintrc"),
    ],
    ids=["nested", "top-level", "double-extension", "dotfile"],
)
def test_path_text(path: str, expected: str) -> None:
    assert path_text(path) == expected


def test_path_and_symbol_terms_carry_their_weights() -> None:
    tokenizer = Tokenizer(TokenizerSettings(path_weight=2, symbol_weight=3))
    counts = chunk_counts(METHOD, tokenizer)
    text_only = tokenizer.counts(f"{METHOD.context}\n{METHOD.text}")
    # path: src, flask, session (x2 each); symbol: secure, cooki, session, interfac, open,
    # securecookiesessioninterface, opensession (x3 each)
    assert counts["src"] == 2
    assert counts["flask"] == 2
    assert counts["secur"] == text_only["secur"] + 3
    assert counts["securecookiesessioninterface"] == text_only["securecookiesessioninterface"] + 3
    assert counts["session"] == text_only["session"] + 2 + 2 * 3  # path once, symbol twice
    assert counts["opensession"] == text_only["opensession"] + 3
    assert "py" not in counts  # the extension is not a word of the path


def test_zero_weights_and_plain_mode_index_text_only() -> None:
    off = Tokenizer(TokenizerSettings(path_weight=0, symbol_weight=0))
    assert chunk_counts(METHOD, off) == off.counts(f"{METHOD.context}\n{METHOD.text}")
    plain = Tokenizer(TokenizerSettings(mode="plain", path_weight=5, symbol_weight=5))
    assert chunk_counts(METHOD, plain) == plain.counts(f"{METHOD.context}\n{METHOD.text}")


SESSION_REPO = {
    "src/app/sessions.py": (
        "class SecureCookieSessionInterface:\n"
        "    def open_session(self, app, request):\n"
        "        value = request.cookies.get(app.config['NAME'])\n"
        "        return self.serializer.loads(value)\n"
    ),
    "src/app/helpers.py": (
        "def make_response(body):\n"
        "    '''Build a response; a session may have set a cookie header on it.'''\n"
        "    return Response(body)\n"
    ),
    "src/app/testing.py": (
        "def client(app):\n"
        "    '''A test client that keeps cookies between requests, like a browser.'''\n"
        "    return Client(app, use_cookies=True)\n"
    ),
}


def test_path_and_symbol_rank_the_session_cookie_interface_first(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", SESSION_REPO)
    scores = {}
    for name, settings in (
        ("fields", TokenizerSettings()),
        ("no fields", TokenizerSettings(path_weight=0, symbol_weight=0)),
    ):
        index_path = tmp_path / f"{name}.sqlite"
        ingest(repo, index_path, IngestOptions(settings=settings))
        with Index(index_path) as index:
            scores[name] = [
                (h.chunk.symbol, round(h.score, 4))
                for h in search(index, "session cookie", k=3, scoring="tfidf")
            ]
            scores[f"{name}, bm25"] = [
                h.chunk.symbol for h in search(index, "session cookie", k=3, scoring="bm25")
            ]
    # the class line alone puts it first; its path and symbol more than double the lead
    assert scores["no fields"] == [
        ("SecureCookieSessionInterface", 0.337),
        ("make_response", 0.2343),
        ("client", 0.1473),
    ]
    assert scores["fields"] == [
        ("SecureCookieSessionInterface", 0.4081),
        ("make_response", 0.173),
        ("client", 0.124),
    ]
    assert (
        scores["fields, bm25"]
        == scores["no fields, bm25"]
        == ["SecureCookieSessionInterface", "make_response", "client"]
    )
