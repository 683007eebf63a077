"""The semantic stage with the real model (the semantic extra is in the test extra): it fixes a
wrong lexical order, its vectors are cached and invalidated by content and model, and a missing or
damaged model falls back to the lexical order with one line."""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import write_tree

from rag.chunking.base import Chunk
from rag.cli import main
from rag.retrieval.results import Hit
from rag.semantic import background as embedding
from rag.semantic import model as semantic
from rag.semantic import rerank as semantic_rerank
from rag.semantic.rerank import NOT_INSTALLED, mix, rerank, safe_rerank
from rag.semantic.vectors import VectorCache, cache_path, content_key

QUESTION = "how do I remove a user's account?"


def _hit(score: float, path: str, text: str) -> Hit:
    return Hit(score, Chunk(path, 1, text.count("\n") + 1, "function", None, text))


def _pool() -> list[Hit]:
    # the lexical order is wrong: the banner shares the question's words, the answer does not
    return [
        _hit(
            10.0,
            "banner.py",
            "def show_account_banner(user):\n    print(f'How do I {user}? Account banner')\n",
        ),
        _hit(
            9.0,
            "users.py",
            "def delete_member(member):\n    '''Erase this member and their profile from the database.'''\n"
            "    db.members.drop(member.id)\n",
        ),
    ]


def test_the_semantic_rerank_fixes_a_wrong_lexical_order(tmp_path: Path) -> None:
    hits = rerank(tmp_path / "index.sqlite", QUESTION, _pool(), 2)
    assert [h.chunk.path for h in hits] == ["users.py", "banner.py"]
    assert all(h.semantic is not None and h.mix is not None for h in hits)
    assert hits[0].score == 9.0  # the lexical score is kept beside the cosine and the mix


def test_mix_weighs_the_lexical_share_and_the_cosine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(semantic_rerank, "FILE_COHERENCE", 0.0)  # the mix alone
    pool = _pool()
    out = mix(pool, [0.1, 0.3], 2)
    w = semantic_rerank.LEXICAL_WEIGHT
    assert out[0].mix == pytest.approx(max(w + (1 - w) * 0.1, w * 0.9 + (1 - w) * 0.3))


def test_mix_takes_the_lexical_order_with_its_boosts_not_the_bare_score(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(semantic_rerank, "FILE_COHERENCE", 0.0)  # the mix alone
    # the second passage scored 0.9 of the first, but the code-aware rerank ranked it first (twice the value)
    first, second = _pool()
    pool = [second._replace(ranked=2 * first.score), first._replace(ranked=first.score)]
    out = mix(pool, [0.3, 0.3], 2)
    w = semantic_rerank.LEXICAL_WEIGHT
    assert [h.chunk.path for h in out] == [second.chunk.path, first.chunk.path]
    assert [h.mix for h in out] == pytest.approx([w + (1 - w) * 0.3, w * 0.5 + (1 - w) * 0.3])


def _file_pool(path: str, kind: str = "function") -> list[Hit]:
    """One passage of other.py, then three of `path`: its best scores a little below other.py's."""
    return [
        _hit(10.0, "pkg/other.py", "def other():\n    pass\n"),
        Hit(9.8, Chunk(path, 1, 2, kind, None, "def first():\n    pass\n")),
        Hit(5.0, Chunk(path, 4, 5, kind, None, "def second():\n    pass\n")),
        Hit(5.0, Chunk(path, 7, 8, kind, None, "def third():\n    pass\n")),
    ]


COSINES = [0.30, 0.30, 0.25, 0.25]  # the file's three passages hold 0.8 of the cosines, other.py 0.3


def test_a_code_file_many_of_whose_passages_are_like_the_question_ranks_up() -> None:
    out = mix(_file_pool("pkg/sessions.py"), COSINES, 4)
    assert [(h.chunk.path, h.chunk.start_line) for h in out] == [
        ("pkg/sessions.py", 1),  # 0.64 x (1 + 0.08), above other.py's 0.65 x (1 + 0.08 x 0.3 / 0.8)
        ("pkg/other.py", 1),
        ("pkg/sessions.py", 4),
        ("pkg/sessions.py", 7),
    ]
    c, rest = semantic_rerank.FILE_COHERENCE, semantic_rerank.FILE_COHERENCE_REST
    assert [h.mix for h in out] == pytest.approx(
        [0.64 * (1 + c), 0.65 * (1 + c * 0.375), 0.375 * (1 + c * rest), 0.375 * (1 + c * rest)]
    )


@pytest.mark.parametrize(
    ("path", "kind", "demoted"),
    [
        ("pkg/sessions.py", "function", "off"),
        ("tests/test_sessions.py", "function", "test"),
        ("docs/sessions.md", "section", None),
        ("pkg/templates/sessions.html", "text", None),
    ],
    ids=["coherence-off", "test", "prose", "markup"],
)
def test_prose_markup_and_tests_gain_no_coherence(
    path: str, kind: str, demoted: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if demoted == "off":
        monkeypatch.setattr(semantic_rerank, "FILE_COHERENCE", 0.0)
        demoted = None
    pool = [h._replace(demoted=demoted) if h.chunk.path == path else h for h in _file_pool(path, kind)]
    # demoted hits are ranked at TEST_FACTOR of their score; here only the order of the first two matters
    out = mix(pool, COSINES, 4)
    assert out[0].chunk.path == "pkg/other.py"


def test_vectors_are_cached_by_content_and_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = tmp_path / "index.sqlite"
    first = rerank(index, QUESTION, _pool(), 2)
    identity = semantic.load().identity
    assert semantic.identity() == identity  # told without loading the model
    with sqlite3.connect(cache_path(index)) as conn:
        assert conn.execute("SELECT COUNT(*), MIN(model) FROM vectors").fetchone() == (2, identity)
        assert conn.execute("SELECT COUNT(*), MIN(model) FROM questions").fetchone() == (1, identity)
    embedder = semantic.load()
    calls: list[int] = []
    real = embedder.embed
    monkeypatch.setattr(
        embedder, "embed", lambda texts, batch=16: calls.append(len(texts)) or real(texts, batch)
    )
    monkeypatch.setattr(semantic_rerank, "load", lambda: pytest.fail("the model was loaded"))
    assert rerank(index, QUESTION, _pool(), 2) == first  # every vector cached: no model at all
    monkeypatch.setattr(semantic_rerank, "load", semantic.load)
    rerank(index, QUESTION + " again", _pool(), 2)
    assert calls == [1]  # the new question only: both passages came from the cache
    changed = [_pool()[0], _hit(9.0, "users.py", "def delete_member(member):\n    pass\n")]
    rerank(index, QUESTION, changed, 2)
    assert calls == [1, 1]  # the changed passage; the question's vector was cached
    assert (
        VectorCache(cache_path(index), identity + "-other").get(
            [content_key(semantic_rerank.passage_text(_pool()[0].chunk))]
        )
        == {}
    )  # another model reuses nothing
    assert VectorCache(cache_path(index), identity + "-other").question(content_key(QUESTION)) is None


def test_ingest_embed_spins_and_computes_the_bits_a_query_does() -> None:
    texts = [QUESTION, *(h.chunk.text for h in _pool())]
    spinning = semantic.load(spinning=True)
    assert spinning is not semantic.load() and spinning is semantic.load(spinning=True)
    assert spinning.identity == semantic.load().identity  # one cache for both
    assert spinning.embed(texts).tobytes() == semantic.load().embed(texts).tobytes()


@pytest.mark.parametrize("name", ["minilm-l6-q8", "minilm-l6-int8"])
def test_a_passage_vector_does_not_depend_on_what_is_embedded_with_it(name: str) -> None:
    import numpy as np

    embedder = semantic.load(name)
    texts = [h.chunk.text for h in _pool()]
    alone = embedder.embed(texts[:1])[0]
    together = embedder.embed([*texts, "x" * 700, "def f(): return 1e308 * 1e308"])[0]
    if name == "minilm-l6-q8":  # one text a run: the same bits
        assert alone.tobytes() == together.tobytes()
    else:  # float products: only the padding differs
        assert float(np.dot(alone, together)) > 0.99999


def test_only_the_latest_questions_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rag.semantic.vectors

    monkeypatch.setattr(rag.semantic.vectors, "QUESTIONS_KEPT", 3)
    cache = VectorCache(str(tmp_path / "v"), "model")
    vec = bytes(4 * rag.semantic.vectors.DIMENSIONS)
    for n in range(5):
        assert cache.put_question(content_key(f"q{n}"), vec)
    assert cache.put_question(content_key("q2"), vec)  # embedded again: now the latest
    assert cache.put_question(content_key("q5"), vec)
    assert [n for n in range(6) if cache.question(content_key(f"q{n}")) is not None] == [2, 4, 5]


def test_a_missing_model_package_falls_back_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        semantic.MODELS, "gone", semantic.ModelSpec("no-such-model-package", "m.onnx", 256, True)
    )
    monkeypatch.setenv(semantic.MODEL_ENV, "gone")
    hits, note = safe_rerank(None, QUESTION, _pool(), 2)
    assert [h.chunk.path for h in hits] == ["banner.py", "users.py"] and hits[0].semantic is None
    assert note is not None and "\n" not in note and "no-such-model-package is not installed" in note


def test_a_damaged_model_file_falls_back_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    # an installed package whose "model" is not an ONNX file
    monkeypatch.setitem(
        semantic.MODELS, "damaged", semantic.ModelSpec("click", "click/__init__.py", 256, True)
    )
    monkeypatch.setenv(semantic.MODEL_ENV, "damaged")
    hits, note = safe_rerank(None, QUESTION, _pool(), 2)
    assert [h.chunk.path for h in hits] == ["banner.py", "users.py"]
    assert note is not None and "\n" not in note and "cannot be loaded" in note and "reinstall click" in note


@pytest.mark.parametrize(("has_vnni", "expected"), [(True, "minilm-l6-q8"), (False, "minilm-l6-int8")])
def test_the_quantized_model_is_the_default_where_it_was_measured(
    monkeypatch: pytest.MonkeyPatch, has_vnni: bool, expected: str
) -> None:
    import rag.semantic.registry

    monkeypatch.setattr(rag.semantic.registry, "vnni", lambda: has_vnni)
    assert semantic.model_name() == expected
    monkeypatch.setenv(semantic.MODEL_ENV, "minilm-l3")
    assert semantic.model_name() == "minilm-l3"  # a model asked for by name is that model


def test_the_quantized_model_needs_the_onnx_package(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.util import find_spec

    import rag.semantic.registry

    assert semantic.installed("minilm-l6-q8") and semantic.installed("minilm-l6-int8")
    monkeypatch.setattr(
        rag.semantic.registry, "find_spec", lambda name: None if name == "onnx" else find_spec(name)
    )
    assert not semantic.installed("minilm-l6-q8") and semantic.installed("minilm-l6-int8")
    monkeypatch.setattr(semantic, "find_spec", lambda name: None if name == "onnx" else find_spec(name))
    with pytest.raises(
        semantic.ModelError, match=r"^The semantic extra is incomplete \(onnx missing\) — pip install"
    ):
        semantic.Embedder("minilm-l6-q8")


@pytest.mark.parametrize(
    "spec",
    [
        semantic.MODELS[semantic.DEFAULT_EMBEDDING_MODEL],
        semantic.ModelSpec("click", "click/__init__.py", 256, True),
    ],
    ids=["the model's package", "another package"],
)
def test_the_model_is_located_as_importlib_metadata_finds_it(spec: semantic.ModelSpec) -> None:
    from importlib import metadata

    dist = metadata.distribution(spec.package)
    assert semantic.locate(spec) == (str(dist.locate_file(spec.file)), dist.version)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = write_tree(tmp_path / "repo", {h.chunk.path: h.chunk.text for h in _pool()})
    assert CliRunner().invoke(main, ["ingest", str(root)]).exit_code == 0
    return root


def test_query_json_carries_the_semantic_score(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAG_RERANK")
    result = CliRunner().invoke(
        main, ["query", "--json", "--no-llm", "--index", str(repo / ".rag/index.sqlite"), "account"]
    )
    assert result.exit_code == 0, result.output
    results = json.loads(result.stdout)["results"]
    assert all(isinstance(r["semantic"], float) and isinstance(r["mix"], float) for r in results)
    off = CliRunner().invoke(
        main,
        [
            "query",
            "--json",
            "--no-llm",
            "--rerank",
            "none",
            "--index",
            str(repo / ".rag/index.sqlite"),
            "account",
        ],
    )
    assert "semantic" not in json.loads(off.stdout)["results"][0]


def test_explain_shows_both_scores_and_the_mix(repo: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "query",
            "--no-llm",
            "--explain",
            "--rerank",
            "semantic",
            "--index",
            str(repo / ".rag/index.sqlite"),
            "account",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "[semantic " in result.stdout and "x lexical" in result.stdout and "x cosine" in result.stdout


@pytest.fixture
def without_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default mode (auto), with the extra looking uninstalled (as if onnxruntime were absent)."""
    monkeypatch.delenv("RAG_RERANK")
    import rag.semantic.registry

    monkeypatch.setattr(rag.semantic.registry, "find_spec", lambda name: None)


@pytest.mark.usefixtures("without_extra")
def test_without_the_extra_a_query_says_once_how_to_enable_it(repo: Path) -> None:
    index = str(repo / ".rag/index.sqlite")
    text = CliRunner().invoke(main, ["query", "--no-llm", "--index", index, "account"])
    assert text.exit_code == 0 and text.stderr.count(NOT_INSTALLED) == 1
    as_json = CliRunner().invoke(main, ["query", "--json", "--no-llm", "--index", index, "account"])
    assert NOT_INSTALLED not in as_json.stderr
    none = CliRunner().invoke(
        main, ["query", "--json", "--no-llm", "--rerank", "none", "--index", index, "account"]
    )
    assert as_json.stdout == none.stdout  # the lexical output, byte for byte


def test_ingest_embed_caches_every_passage(repo: Path) -> None:
    result = CliRunner().invoke(main, ["ingest", "--embed", str(repo)])
    assert result.exit_code == 0, result.output
    assert "Embedded 2 passages (0 cached)" in result.stdout
    again = CliRunner().invoke(main, ["ingest", "--embed", str(repo)])
    assert "Embedded 0 passages (2 cached)" in again.stdout


def _cached_vectors(index: Path) -> int:
    if not Path(cache_path(index)).exists():
        return 0
    try:
        with sqlite3.connect(cache_path(index)) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])
    except sqlite3.OperationalError:  # created, its table not yet
        return 0


def _wait_for_the_lock(index: Path) -> None:
    """Return once no process holds the index's embedding lock (fail after 60 s)."""
    deadline = time.monotonic() + 60
    with open(embedding.lock_path(index), "a+b") as lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                assert time.monotonic() < deadline, "the embedding lock is still held"
                time.sleep(0.05)


def test_ingest_embeds_in_the_background_so_that_queries_load_no_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAG_RERANK")
    root = write_tree(tmp_path / "repo", {h.chunk.path: h.chunk.text for h in _pool()})
    index = tmp_path / "index.sqlite"
    # run from a folder with a `rag` package of its own: the background process must not import it
    decoy = write_tree(
        tmp_path / "elsewhere",
        {
            "rag/__init__.py": "",
            "rag/semantic/background.py": f"open({str(tmp_path / 'decoy-ran')!r}, 'w')\n",
        },
    )
    monkeypatch.chdir(decoy)
    result = CliRunner().invoke(main, ["ingest", "--index", str(index), str(root)])
    assert result.exit_code == 0, result.output
    assert "Embedding the passages for the semantic rerank in the background (pid " in result.stdout
    deadline = time.monotonic() + 120
    while _cached_vectors(index) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _cached_vectors(index) == 2  # both passages, by a process of its own
    _wait_for_the_lock(index)
    assert not (tmp_path / "decoy-ran").exists()
    monkeypatch.setattr(semantic_rerank, "load", lambda: pytest.fail("the model was loaded"))
    monkeypatch.setattr(semantic_rerank.VectorCache, "question", lambda self, key: bytes(4 * 384))
    query = CliRunner().invoke(main, ["query", "--json", "--no-llm", "--index", str(index), "account"])
    assert query.exit_code == 0, query.output
    assert all(isinstance(r["semantic"], float) for r in json.loads(query.stdout)["results"])


def test_ingest_starts_the_background_embedding_only_by_default_with_the_stage_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[str] = []
    monkeypatch.setattr(embedding, "start", lambda path: started.append(str(path)) or 4242)
    root = write_tree(tmp_path / "repo", {"users.py": _pool()[1].chunk.text})
    index = tmp_path / "index.sqlite"
    off = CliRunner().invoke(main, ["ingest", "--index", str(index), str(root)])  # RAG_RERANK=none
    assert off.exit_code == 0 and started == [] and "background" not in off.output
    monkeypatch.delenv("RAG_RERANK")
    no = CliRunner().invoke(main, ["ingest", "--no-embed", "--index", str(index), str(root)])
    assert no.exit_code == 0 and started == [] and "background" not in no.output
    quiet = CliRunner().invoke(main, ["ingest", "-q", "--index", str(index), str(root)])
    assert quiet.exit_code == 0 and quiet.output == "" and started == [str(index)]
    now = CliRunner().invoke(main, ["ingest", "--embed", "--index", str(index), str(root)])
    assert now.exit_code == 0 and "Embedded 1 passages (0 cached)" in now.stdout
    assert started == [str(index)] and "background" not in now.output
    default = CliRunner().invoke(main, ["ingest", "--index", str(index), str(root)])
    assert default.stdout.rstrip().endswith(
        "Embedding the passages for the semantic rerank in the background (pid 4242): "
        "queries get faster as it goes"
    )
    assert started == [str(index)] * 2
    monkeypatch.setenv("RAG_EMBED", "off")
    assert CliRunner().invoke(main, ["ingest", "--index", str(index), str(root)]).exit_code == 0
    assert started == [str(index)] * 2
    assert CliRunner().invoke(main, ["ingest", "--embed", "--index", str(index), str(root)]).exit_code == 0
    monkeypatch.setenv("RAG_EMBED", "now")
    now = CliRunner().invoke(main, ["ingest", "--index", str(index), str(root)])
    assert "Embedded 0 passages (1 cached)" in now.stdout and started == [str(index)] * 2
    monkeypatch.setenv("RAG_EMBED", "later")
    other = tmp_path / "other.sqlite"
    bad = CliRunner().invoke(main, ["ingest", "--index", str(other), str(root)])
    assert (bad.exit_code, bad.stdout) == (1, "") and not other.exists()  # refused before indexing
    assert bad.stderr == "Error: RAG_EMBED must be one of background, now, off, not 'later'\n"
    monkeypatch.delenv("RAG_EMBED")

    def refused(path: object) -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(embedding, "start", refused)
    failed = CliRunner().invoke(main, ["ingest", "--index", str(index), str(root)])
    assert failed.exit_code == 0 and failed.stdout.startswith("Index is up to date")
    assert failed.stderr == (
        "Note: could not start embedding in the background (Resource temporarily unavailable)\n"
    )


def test_query_refresh_starts_the_background_embedding_as_an_ingest_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[str] = []
    monkeypatch.setattr(embedding, "start", lambda path: started.append(str(path)) or 4242)
    monkeypatch.delenv("RAG_RERANK")
    (index,) = _indexes(tmp_path, "index")
    root = tmp_path / "repo"

    def query(*args: str) -> Any:
        return CliRunner().invoke(
            main, ["query", "--no-llm", "--refresh", *args, "--index", str(index), "account"]
        )

    same = query()  # nothing changed: nothing re-indexed, nothing to embed
    assert same.exit_code == 0 and started == [] and "background" not in same.stderr
    (root / "users.py").write_text(_pool()[1].chunk.text + "\n\ndef delete_account(user):\n    return user\n")
    changed = query()
    assert changed.exit_code == 0 and started == [str(index)], changed.output
    assert "Refreshed: re-indexed 1 changed or new file(s)" in changed.stderr
    assert (
        "Embedding the passages for the semantic rerank in the background (pid 4242): queries get faster as it goes"
        in changed.stderr
    )
    (root / "users.py").write_text(_pool()[1].chunk.text)
    lexical = query("--rerank", "none")  # the stage is off for this query: its vectors are not wanted
    assert lexical.exit_code == 0 and "Refreshed: re-indexed 1" in lexical.stderr and started == [str(index)]
    monkeypatch.setenv("RAG_EMBED", "off")
    (root / "users.py").write_text(_pool()[1].chunk.text + "\n")
    assert query().exit_code == 0 and started == [str(index)]
    monkeypatch.setenv("RAG_EMBED", "later")
    (root / "users.py").write_text(_pool()[1].chunk.text + "\n\n")
    bad = query()
    assert (bad.exit_code, bad.stdout) == (1, "")
    assert bad.stderr == "Error: RAG_EMBED must be one of background, now, off, not 'later'\n"
    monkeypatch.delenv("RAG_EMBED")
    again = query()  # refused before the refresh: the change is still there to re-index
    assert "Refreshed: re-indexed 1 changed or new file(s)" in again.stderr and started == [str(index)] * 2


def test_a_refresh_embeds_now_only_for_a_query_that_ranks_by_meaning_and_a_model_failure_is_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAG_RERANK")
    monkeypatch.setenv("RAG_EMBED", "now")
    (index,) = _indexes(tmp_path, "index")
    root = tmp_path / "repo"

    def refresh(*args: str) -> Any:
        (root / "users.py").write_text((root / "users.py").read_text() + "\n")
        return CliRunner().invoke(
            main, ["query", "--json", "--no-llm", "--refresh", *args, "--index", str(index), "erase a member"]
        )

    lexical = refresh("--rerank", "none")
    assert lexical.exit_code == 0 and "Embedded" not in lexical.output and _cached_vectors(index) == 0
    monkeypatch.setitem(
        semantic.MODELS, "damaged", semantic.ModelSpec("click", "click/__init__.py", 256, True)
    )
    monkeypatch.setenv(semantic.MODEL_ENV, "damaged")
    failed = refresh()  # the refresh was applied: the query answers, lexically, and says why
    assert failed.exit_code == 0, failed.output
    assert json.loads(failed.stdout)["results"][0]["path"] == "users.py"
    notes = [line for line in failed.stderr.splitlines() if line.startswith("Note:")]
    assert len(notes) == 2 and all("damaged" in line or "model" in line for line in notes), failed.stderr
    monkeypatch.delenv(semantic.MODEL_ENV)
    now = refresh()
    assert now.exit_code == 0 and "Embedded 1 passages (0 cached)" in now.stderr


def _indexes(tmp_path: Path, *names: str, files: dict[str, str] | None = None) -> list[Path]:
    """Indexes of one small repository (users.py, or `files`), ingested with --no-embed."""
    root = write_tree(tmp_path / "repo", files or {"users.py": _pool()[1].chunk.text})
    out = [tmp_path / f"{name}.sqlite" for name in names]
    for index in out:
        result = CliRunner().invoke(main, ["ingest", "--no-embed", "--index", str(index), str(root)])
        assert result.exit_code == 0, result.output
    return out


def _machine_lock() -> Path:
    machine = Path(embedding.cache_root()).parent / embedding.MACHINE_LOCK
    machine.parent.mkdir(parents=True, exist_ok=True)
    return machine


def _queued() -> list[str]:
    folder = Path(embedding.cache_root()).parent / embedding.QUEUE_FOLDER
    return sorted(entry.read_text() for entry in folder.iterdir()) if folder.exists() else []


def test_a_process_that_finds_another_embedding_queues_its_index_and_exits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {h.chunk.path: h.chunk.text for h in _pool()}
    first, second, third = _indexes(tmp_path, "first", "second", "third", files=files)
    began: list[str] = []
    done = embedding.EmbedReport(2, 0, 0.0)
    with monkeypatch.context() as fake:  # embed_index only records the indexes it is given
        fake.setattr(
            embedding, "embed_index", lambda path, until_changed=False: began.append(str(path)) or done
        )
        with open(_machine_lock(), "a+b") as machine:
            fcntl.flock(machine, fcntl.LOCK_EX)  # as another index's process holds it while it embeds
            assert embedding.run(first) is None and embedding.run(second) is None  # at once: no waiting
            assert embedding.run(first) is None  # queued once, however often its ingests ran
            assert _queued() == [str(first), str(second)] and began == []
        assert embedding.run(third) == done  # the next process takes the queue up, oldest first
        assert began == [str(first), str(second), str(third)] and _queued() == []
        with open(embedding.lock_path(first), "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # as a running process holds it while it embeds this index
            now = threading.Thread(target=embedding.embed_now, args=(first,))  # ingest --embed waits for it
            now.start()
            time.sleep(0.3)
            assert now.is_alive() and began == [str(first), str(second), str(third)]
        now.join(10)
        assert began[-1] == str(first)
    assert embedding.run(first) == embedding.EmbedReport(2, 2, pytest.approx(0.0, abs=60))
    report = embedding.run(first)
    assert report is not None and report.computed == 0  # a later one finds nothing left to do


def test_an_index_queued_while_the_embedding_process_ends_is_not_left_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine, late = _indexes(tmp_path, "mine", "late")
    began: list[str] = []
    done = embedding.EmbedReport(1, 0, 0.0)
    monkeypatch.setattr(
        embedding, "embed_index", lambda path, until_changed=False: began.append(str(path)) or done
    )
    real_oldest = embedding._oldest
    looks = []

    def oldest(folder: str, skipped: set[str]) -> str | None:
        found = real_oldest(folder, skipped)
        looks.append(found)
        if found is None and len(looks) == 2:  # the queue looked empty: another ingest's process queues
            embedding._enqueue(folder, str(late))  # its index now, finds the lock held, and exits
        return found

    monkeypatch.setattr(embedding, "_oldest", oldest)
    assert embedding.run(mine) == done
    assert began == [str(mine), str(late)] and _queued() == []


def test_an_index_that_fails_to_embed_does_not_strand_the_queue_behind_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken, queued = _indexes(tmp_path, "broken", "queued")
    began: list[str] = []

    def embed_index(path: str, until_changed: bool = False) -> embedding.EmbedReport:
        began.append(str(path))
        if path == str(broken):  # another ingest's process queues its index meanwhile, and exits
            embedding._enqueue(str(embedding._queue_folder()), str(queued))
            raise RuntimeError("onnxruntime: Failed to allocate memory")
        return embedding.EmbedReport(1, 1, 0.0)

    monkeypatch.setattr(embedding, "embed_index", embed_index)
    assert embedding.run(broken) is None
    assert began == [str(broken), str(queued)] and _queued() == []


def test_an_entry_that_cannot_be_removed_is_embedded_once_not_forever(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (index,) = _indexes(tmp_path, "index")
    began: list[str] = []
    done = embedding.EmbedReport(1, 1, 0.0)
    monkeypatch.setattr(
        embedding, "embed_index", lambda path, until_changed=False: began.append(str(path)) or done
    )
    real_unlink = os.unlink

    def unlink(path: str) -> None:
        if embedding.QUEUE_FOLDER in str(path):  # a queue folder made read-only
            raise PermissionError(13, "Permission denied", path)
        real_unlink(path)

    monkeypatch.setattr(embedding.os, "unlink", unlink)
    reports: list[embedding.EmbedReport | None] = []
    running = threading.Thread(target=lambda: reports.append(embedding.run(index)), daemon=True)
    running.start()
    running.join(30)
    assert not running.is_alive(), "it takes the entry up again and again"
    assert reports == [done] and began == [str(index)]


@pytest.fixture
def three_passages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An index of three one-function files, embedded one passage a batch."""
    root = write_tree(
        tmp_path / "repo", {f"m{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(3)}
    )
    index = tmp_path / "index.sqlite"
    assert CliRunner().invoke(main, ["ingest", "--index", str(index), str(root)]).exit_code == 0
    monkeypatch.setattr(embedding, "EMBED_BATCH", 1)
    monkeypatch.setattr(embedding, "BACKGROUND_BATCH", 1)
    monkeypatch.setattr(embedding, "_wait_while_busy", lambda: None)  # the test runner may be busy
    return index


def test_the_background_embedding_waits_while_another_process_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    others = [2, 1, 0, 3]  # what /proc/loadavg shows, less this process's threads, at each look
    monkeypatch.setattr(embedding, "_others_running", lambda: others.pop(0))
    monkeypatch.setattr(embedding, "BUSY_SLEEP", 0.0)
    embedding._wait_while_busy()
    assert others == [3]  # it looked three times: until nothing else ran
    monkeypatch.setattr(embedding, "_others_running", lambda: 1)  # a load that does not end
    monkeypatch.setattr(embedding, "BUSY_WAIT_MAX", 0.2)
    began = time.monotonic()
    embedding._wait_while_busy()
    assert 0.2 <= time.monotonic() - began < 5  # it goes on after BUSY_WAIT_MAX
    assert embedding._own_running() >= 1  # this thread, at least


def test_the_background_embedding_stops_when_the_index_changes(
    three_passages: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = three_passages
    model = semantic.load(spinning=True)

    class Touching:
        identity = model.identity

        def embed(self, texts: list[str]) -> semantic.Vectors:
            os.utime(index, ns=(1, 1))  # an ingest changed the index meanwhile
            return model.embed(texts)

    monkeypatch.setattr(embedding, "load", lambda spinning: Touching())
    report = embedding.embed_index(index, until_changed=True)
    assert (report.computed, report.stopped) == (1, True)
    assert embedding.embed_index(index).computed == 2  # ingest --embed goes on: the rest


def test_the_background_process_goes_on_after_a_change_or_takes_it_up_from_the_queue(
    three_passages: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = three_passages
    model = semantic.load(spinning=True)
    reads: list[int] = []
    real_texts = embedding.passage_texts
    monkeypatch.setattr(embedding, "passage_texts", lambda ix: reads.append(1) or real_texts(ix))

    class Touching:
        identity = model.identity
        calls = 0
        queue = True

        def embed(self, texts: list[str]) -> semantic.Vectors:
            Touching.calls += 1
            if Touching.calls == 1:  # a `query --refresh` updates the index meanwhile
                os.utime(index, ns=(Touching.calls, 1))
                if Touching.queue:  # and queues it again, as a later ingest's process does
                    embedding._enqueue(str(embedding._queue_folder()), os.path.abspath(index))
            return model.embed(texts)

    monkeypatch.setattr(embedding, "load", lambda spinning: Touching())
    report = embedding.run(index)  # the rest from the queue: its entry was taken, and embedded again
    assert report is not None and (report.computed, report.stopped) == (2, False)
    assert _cached_vectors(index) == 3 and len(reads) == 2 and _queued() == []
    for suffix in ("", "-wal", "-shm"):
        Path(cache_path(index) + suffix).unlink(missing_ok=True)
    Touching.calls, Touching.queue = 0, False
    os.utime(index)
    report = embedding.run(index)  # not queued again: it reads the index again and embeds the rest
    assert report is not None and (report.computed, report.stopped) == (2, False)
    assert _cached_vectors(index) == 3 and len(reads) == 4


def test_ingest_embed_does_not_wait_behind_another_index_embedding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (index,) = _indexes(tmp_path, "index")
    with open(_machine_lock(), "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as another index's background embedding holds it
        assert embedding.run(index) is None and _queued() == [str(index)]  # this index's process
        reports: list[embedding.EmbedReport] = []
        now = threading.Thread(target=lambda: reports.append(embedding.embed_now(index)))
        now.start()
        now.join(60)
        assert [r.computed for r in reports] == [1]  # done while the other still runs


def test_status_counts_the_cached_vectors_and_says_when_they_are_being_computed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_tree(tmp_path / "repo", {h.chunk.path: h.chunk.text for h in _pool()})
    index = tmp_path / "index.sqlite"
    assert CliRunner().invoke(main, ["ingest", "--no-embed", "--index", str(index), str(root)]).exit_code == 0
    off = CliRunner().invoke(main, ["status", "--index", str(index)])  # RAG_RERANK=none: no vectors
    assert off.exit_code == 0 and "Vectors" not in off.stdout
    monkeypatch.delenv("RAG_RERANK")
    none = CliRunner().invoke(main, ["status", "--index", str(index)])
    assert "\nVectors:    0 of 2 passages (the semantic rerank's)" in none.stdout
    query = CliRunner().invoke(main, ["query", "--json", "--no-llm", "--index", str(index), "banner"])
    assert [r["path"] for r in json.loads(query.stdout)["results"]] == ["banner.py"]  # its one candidate
    one = CliRunner().invoke(main, ["status", "--json", "--index", str(index)])
    assert (json.loads(one.stdout)["vectors"], json.loads(one.stdout)["embedding"]) == (1, False)
    assert CliRunner().invoke(main, ["ingest", "--embed", "--index", str(index), str(root)]).exit_code == 0
    with open(embedding.lock_path(index), "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as the background process holds it while it embeds
        busy = CliRunner().invoke(main, ["status", "--index", str(index)])
    assert busy.stdout.rstrip().endswith(
        "Vectors:    2 of 2 passages (the semantic rerank's; embedding in the background now)"
    )
    done = CliRunner().invoke(main, ["status", "--json", "--index", str(index)])
    assert (json.loads(done.stdout)["vectors"], json.loads(done.stdout)["embedding"]) == (2, False)
    assert json.loads(done.stdout)["queued"] is False
    with open(_machine_lock(), "a+b") as machine:
        fcntl.flock(machine, fcntl.LOCK_EX)  # another index's process embeds: this one's waits its turn
        assert embedding.run(index) is None
        waiting = CliRunner().invoke(main, ["status", "--index", str(index)])
        assert waiting.stdout.rstrip().endswith(
            "Vectors:    2 of 2 passages (the semantic rerank's; queued for the background embedding)"
        )
        as_json = CliRunner().invoke(main, ["status", "--json", "--index", str(index)])
        assert json.loads(as_json.stdout)["queued"] is True
    # the process that held the lock was killed: nobody will take the entry until the next ingest's
    orphan = CliRunner().invoke(main, ["status", "--json", "--index", str(index)])
    assert _queued() == [str(index)] and json.loads(orphan.stdout)["queued"] is False


def test_the_background_process_ends_quietly_when_it_cannot_embed(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "rag.semantic.background", str(tmp_path / "none.sqlite")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (1, "", "")
    assert list(tmp_path.iterdir()) == []  # no lock or cache file beside an index that is not there


def test_ingest_prepares_the_model_once_so_the_first_query_need_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag.semantic import model_cache

    monkeypatch.delenv("RAG_RERANK")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    monkeypatch.setenv(semantic.MODEL_ENV, "minilm-l6-int8")  # no quantizing: the cheaper build
    root = write_tree(tmp_path / "repo", {"users.py": _pool()[1].chunk.text})
    first = CliRunner().invoke(main, ["ingest", "--no-embed", str(root)])
    assert first.exit_code == 0 and "Prepared the semantic model for queries in " in first.stdout
    assert len(list(Path(model_cache.cache_root()).iterdir())) == 1
    again = CliRunner().invoke(main, ["ingest", "--no-embed", str(root)])
    assert again.exit_code == 0 and "Prepared" not in again.stdout
    monkeypatch.setenv("RAG_RERANK", "none")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "another-cache"))
    off = CliRunner().invoke(main, ["ingest", "--full", str(root)])
    assert off.exit_code == 0 and "Prepared" not in off.stdout and not (tmp_path / "another-cache").exists()


def test_ingest_with_a_damaged_model_indexes_and_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAG_RERANK")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    monkeypatch.setitem(
        semantic.MODELS, "damaged", semantic.ModelSpec("click", "click/__init__.py", 256, True)
    )
    monkeypatch.setenv(semantic.MODEL_ENV, "damaged")
    root = write_tree(tmp_path / "repo", {"users.py": _pool()[1].chunk.text})
    result = CliRunner().invoke(main, ["ingest", str(root)])
    assert result.exit_code == 0 and result.stdout.startswith("Indexed 1 file")
    assert "background" not in result.stdout  # nor is a background process started
    assert result.stderr.count("\n") == 1 and "cannot be loaded" in result.stderr
    assert result.stderr.rstrip().endswith("queries will rank the passages lexically")


def _questions(repo: Path) -> Path:
    # lexically, banner.py ranks first (it holds "account" and "user"); users.py answers
    row = {
        "id": "q1",
        "question": "delete the account of a user",
        "answers": [{"path": "users.py", "start_line": 1, "end_line": 3}],
    }
    path = repo.parent / "questions.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


def test_eval_scores_the_order_a_query_gives(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAG_RERANK")
    index = str(repo / ".rag/index.sqlite")
    questions = str(_questions(repo))
    runs = {
        mode: CliRunner().invoke(main, ["eval", questions, "--index", index, "--json", "--rerank", mode])
        for mode in ("auto", "none")
    }
    on, off = (json.loads(runs[mode].stdout) for mode in ("auto", "none"))
    assert (on["semantic_rerank"], on["overall"]["hit_at_1"]) == (True, 1.0)
    assert (off["semantic_rerank"], off["overall"]["hit_at_1"]) == (False, 0.0)
    assert off["overall"]["mrr_at_10"] == 0.5  # the answer second, as `query --rerank none` ranks it
    query = CliRunner().invoke(
        main, ["query", "--json", "--no-llm", "--index", index, "delete the account of a user"]
    )
    assert json.loads(query.stdout)["results"][0]["path"] == "users.py"
    table = CliRunner().invoke(main, ["eval", questions, "--index", index])
    assert "then by the semantic rerank" in table.stdout


@pytest.mark.usefixtures("without_extra")
def test_eval_without_the_extra_says_once_how_to_enable_it(repo: Path) -> None:
    index = str(repo / ".rag/index.sqlite")
    questions = str(_questions(repo))
    text = CliRunner().invoke(main, ["eval", questions, "--index", index])
    assert text.exit_code == 0 and text.stderr.count(NOT_INSTALLED) == 1
    assert "semantic rerank" not in text.stdout
    as_json = CliRunner().invoke(main, ["eval", questions, "--index", index, "--json"])
    assert NOT_INSTALLED not in as_json.stderr and json.loads(as_json.stdout)["semantic_rerank"] is False


def test_eval_with_a_model_that_fails_scores_the_lexical_order_and_says_so(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(
        semantic.MODELS, "gone", semantic.ModelSpec("no-such-model-package", "m.onnx", 256, True)
    )
    monkeypatch.setenv(semantic.MODEL_ENV, "gone")
    index = str(repo / ".rag/index.sqlite")
    args = ["eval", str(_questions(repo)), "--index", index, "--rerank", "semantic"]
    as_json = CliRunner().invoke(main, [*args, "--json"])
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.stdout)
    assert (data["semantic_rerank"], data["overall"]["hit_at_1"]) == (False, 0.0)  # lexical: banner.py first
    (line,) = as_json.stderr.splitlines()  # the failure, once, even with --json
    assert "no-such-model-package is not installed" in line and line.endswith("lexical order")
    table = CliRunner().invoke(main, args)
    assert "semantic rerank" not in table.stdout
