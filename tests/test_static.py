"""The code-static model (rag.semantic.static): its weights ship inside rag, a passage's vector is
its own and of unit length, and the semantic stage run with it ranks the code that does what a
question asks above code that does not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import write_tree

from rag.chunking import chunk_file
from rag.retrieval.results import Hit
from rag.semantic import model as semantic
from rag.semantic import static
from rag.semantic.registry import MODEL_ENV, installed
from rag.semantic.rerank import passage_text, rerank
from rag.semantic.vectors import DIMENSIONS

# a small web application: each question below names a concept in other words than its code uses
APP = {
    "app/auth/tokens.py": (
        "import hashlib\nimport hmac\nimport time\n\n\n"
        "def sign_token(secret: bytes, user_id: int, ttl: int = 3600) -> str:\n"
        "    expires = int(time.time()) + ttl\n"
        "    payload = f'{user_id}:{expires}'\n"
        "    mac = hmac.new(secret, payload.encode(), hashlib.sha256).hexdigest()\n"
        "    return f'{payload}:{mac}'\n"
    ),
    "app/http/retry.py": (
        "import random\nimport time\n\n\n"
        "def with_backoff(send, attempts: int = 5, base: float = 0.5):\n"
        "    for attempt in range(attempts):\n"
        "        try:\n"
        "            return send()\n"
        "        except TimeoutError:\n"
        "            time.sleep(base * 2 ** attempt + random.random() * base)\n"
        "    raise TimeoutError('gave up after %d attempts' % attempts)\n"
    ),
    "app/views/pagination.py": (
        "def page_of(items: list, page: int, per_page: int = 20) -> dict:\n"
        "    start = (page - 1) * per_page\n"
        "    return {'items': items[start : start + per_page], 'page': page,\n"
        "            'pages': (len(items) + per_page - 1) // per_page}\n"
    ),
    "app/db/migrations.py": (
        "def apply_pending(conn, migrations):\n"
        "    done = {row[0] for row in conn.execute('SELECT name FROM schema_migrations')}\n"
        "    for name, sql in migrations:\n"
        "        if name not in done:\n"
        "            conn.executescript(sql)\n"
        "            conn.execute('INSERT INTO schema_migrations (name) VALUES (?)', (name,))\n"
    ),
}
QUESTIONS = {
    "retry a request that timed out, waiting longer each time": "app/http/retry.py",
    "how is the login token signed so that it cannot be forged": "app/auth/tokens.py",
    "split the results into pages": "app/views/pagination.py",
    "run the database schema changes that have not been applied yet": "app/db/migrations.py",
}


@pytest.fixture
def code_static(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MODEL_ENV, static.NAME)


def _hits(root: Path) -> list[Hit]:
    # all scored alike by the lexical order: the cosine alone decides
    return [
        Hit(1.0, c)
        for path in sorted(APP)
        for c in chunk_file(path, (root / path).read_text())
        if c.kind == "function"
    ]


def test_the_weights_load_from_the_package(code_static: None) -> None:
    assert installed()
    embedder = semantic.load()
    assert isinstance(embedder, static.StaticEmbedder)
    assert embedder.rows.shape == (len(embedder.terms), DIMENSIONS)
    assert 10_000 <= len(embedder.terms) <= 60_000
    assert static.WEIGHTS.stat().st_size <= 40_000_000
    assert semantic.identity().startswith("code-static/")
    assert semantic.prepare() is None  # nothing to build ahead of the first query


def test_a_passage_vector_is_its_own_and_of_unit_length(code_static: None) -> None:
    text = "def parse_http_response(raw: bytes) -> Response:\n    head, _, body = raw.partition(b'\\r\\n\\r\\n')\n"
    embedder = semantic.load()
    alone = embedder.embed([text])[0]
    among = embedder.embed(["something else entirely", text, "def main(): pass"])[1]
    assert alone.dtype == np.float32 and alone.shape == (DIMENSIONS,)
    assert np.array_equal(alone, among)
    assert np.array_equal(alone, static.StaticEmbedder().embed([text])[0])  # a fresh load: the same bits
    assert float(np.linalg.norm(alone)) == pytest.approx(1.0, abs=1e-5)
    assert not embedder.embed(["zzqx ☃"])[0].any()  # no known term: the zero vector, cosine 0


@pytest.mark.parametrize(("question", "expected"), list(QUESTIONS.items()), ids=list(QUESTIONS.values()))
def test_a_question_ranks_the_code_that_does_it_first(
    tmp_path: Path, code_static: None, question: str, expected: str
) -> None:
    root = write_tree(tmp_path / "repo", APP)
    embedder = semantic.load()
    hits = _hits(root)
    vectors = embedder.embed([passage_text(h.chunk) for h in hits])
    cosines = vectors @ embedder.embed([question])[0]
    assert hits[int(np.argmax(cosines))].chunk.path == expected
    ranked = rerank(tmp_path / "index.sqlite", question, hits, 2)
    assert ranked[0].chunk.path == expected
    assert ranked[0].semantic is not None and ranked[0].semantic > ranked[1].semantic  # type: ignore[operator]
