"""Short forms of a question's long words (req, res, func, doc), scored on the candidates only."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import write_tree

from rag import Index, IngestOptions, TokenizerSettings, ingest, search
from rag.text.short_forms import short_forms
from rag.text.tokenizer import Tokenizer

REPO = {
    "app/reply.js": "// Writing replies.\n\n"
    "function sendJson(res, value) {\n"
    "  res.statusCode = 200;\n"
    "  res.setHeader('Content-Type', 'application/json');\n"
    "  res.end(JSON.stringify(value));\n"
    "}\n\n"
    "module.exports = { sendJson };\n",
    "app/format.js": "// Formatting values as JSON for display, and JSON for logs.\n\n"
    "function formatJson(value, pretty) {\n"
    "  return pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value);\n"
    "}\n\n"
    "module.exports = { formatJson };\n",
    # `req` and `res` only: none of the question's own words
    "app/routes.js": "// The routes of the app.\n\n"
    "function listUsers(req, res) {\n"
    "  res.end(String(req.users.length));\n"
    "}\n\n"
    "module.exports = { listUsers };\n",
}
QUESTION = "How is a response sent as JSON?"


def test_long_words_ask_for_their_first_three_and_four_letters() -> None:
    tokenizer = Tokenizer()
    assert short_forms("Read the request environment documentation", tokenizer, {"request"}) == {
        "req": "request",
        "requ": "request",
        "env": "environment",
        "envi": "environment",
        "doc": "documentation",
        "docu": "documentation",
    }
    # words under six letters, question words ("whether") and terms already asked for are left out;
    # a four-letter beginning needs three letters left after it (not "conf" of config)
    assert short_forms("Whether the config header works", tokenizer, {"con"}) == {"hea": "header"}


def test_the_short_form_lifts_the_candidate_that_abbreviates(tmp_path: Path, monkeypatch) -> None:
    path = ingest(write_tree(tmp_path / "r", REPO)).index_path
    with Index(path) as index:
        hits = search(index, QUESTION, 10, explain=True)
    assert [h.chunk.path for h in hits] == ["app/reply.js", "app/format.js"]  # routes.js: no question word
    assert hits[0].score > 1.05 * hits[1].score
    res = next(c for c in hits[0].contributions if c.term == "res")
    assert (res.expands, res.tf) == ("response", 4)
    assert abs(sum(c.score for c in hits[0].contributions) - hits[0].score) < 1e-12
    # without short forms, the file with more of the question's words wins (spelling off too: it
    # would search "send" for the unknown "sent")
    monkeypatch.setattr(sys.modules["rag.retrieval.search"], "short_forms", lambda *args: {})
    monkeypatch.setattr("rag.retrieval.spelling.CORRECT", False)
    with Index(path) as index:
        hits = search(index, QUESTION, 10)
    assert [h.chunk.path for h in hits] == ["app/format.js", "app/reply.js"]
    assert hits[0].score > 1.1 * hits[1].score


def test_short_forms_change_neither_cosine_nor_the_plain_tokenizer(tmp_path: Path) -> None:
    code = ingest(write_tree(tmp_path / "code", REPO)).index_path
    plain = ingest(
        write_tree(tmp_path / "plain", REPO), options=IngestOptions(settings=TokenizerSettings(mode="plain"))
    ).index_path
    for path, scoring in ((code, "tfidf"), (plain, "bm25")):
        with Index(path) as index:
            terms = {
                c.term
                for h in search(index, QUESTION, 10, explain=True, scoring=scoring)
                for c in h.contributions
            }
        assert "res" not in terms and "json" in terms, scoring
