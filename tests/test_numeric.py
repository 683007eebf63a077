"""rag.numeric: a query with many postings adds them up in numpy arrays when numpy is installed
and worth its import, with the standard library's results to the last bit."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from zipf import SCORINGS, zipf_repo

from rag import Index, ingest, search

pytest.importorskip("numpy")


@SCORINGS
@pytest.mark.parametrize("seed", [1, 2])
def test_numpy_sums_equal_the_standard_librarys_to_the_last_bit(
    tmp_path: Path, seed: int, scoring: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # with numpy installed, a query with many postings adds them up in numpy arrays: the same
    # hits with the same scores, bit for bit, pruned or not, as the standard library's sums;
    # a chunk repeating a word 300 times takes the cosine tf weight's computed path; thresholds
    # sampled from fewer chunks than the candidates wanted are still lower bounds
    repo, vocab = zipf_repo(tmp_path / "r", 150, seed)
    (repo / "loud.txt").write_text("w1 " * 300 + "w2 w3\n")
    ingest(repo)
    topk_module = sys.modules["rag.retrieval.topk"]
    monkeypatch.setattr(topk_module, "_THRESHOLD_SAMPLE", 5)
    rng = random.Random(seed)
    with Index(repo / ".rag" / "index.sqlite") as index:
        for _ in range(40):
            question = " ".join(rng.choices(vocab[:40], k=rng.randint(1, 8)))
            k = rng.choice([1, 4, 10])
            found = []
            for postings, prune in ((10**12, False), (0, True), (0, False)):
                monkeypatch.setattr(topk_module, "NUMPY_POSTINGS", postings)
                monkeypatch.setattr(topk_module, "NUMPY_IMPORT_POSTINGS", postings)
                found.append(
                    [
                        (h.chunk.path, h.chunk.start_line, h.score)
                        for h in search(index, question, k, scoring=scoring, prune=prune)
                    ]
                )
            assert found[0] == found[1] == found[2], question


@pytest.mark.parametrize("batch", [1 << 20, 7], ids=["one-batch", "many-batches"])
def test_numpy_score_bounds_equal_the_standard_librarys_to_the_last_bit(
    batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an index's pruning bounds, a term's largest weight over its postings, computed in numpy
    # when it is installed: the same doubles as the standard library's, for terms without
    # postings, with tfs above 255, and batches that end inside and between terms
    from array import array

    import rag.numeric
    import rag.weights

    rng = random.Random(5)
    n_chunks = 500
    norms = array("d", [rng.uniform(0.5, 40.0) for _ in range(n_chunks)])
    normalisers = array("d", [rng.uniform(0.2, 3.0) for _ in range(n_chunks)])
    ids_of = [array("I", sorted(rng.sample(range(n_chunks), rng.randint(0, 40)))) for _ in range(300)]
    tfs_of = [array("H", [rng.choice([1, 2, 3, 7, 300, 65535]) for _ in ids]) for ids in ids_of]
    assert any(not ids for ids in ids_of)
    monkeypatch.setattr(rag.weights, "_BOUNDS_BATCH", batch)
    fast = rag.weights.score_bounds(ids_of, tfs_of, norms, normalisers)
    monkeypatch.setattr(rag.numeric, "numpy_or_none", lambda: None)
    slow = rag.weights.score_bounds(ids_of, tfs_of, norms, normalisers)
    assert [[x.hex() for x in xs] for xs in fast] == [[x.hex() for x in xs] for xs in slow]
    assert fast[0][0] == max(rag.weights.tf_weight(tf) / norms[i] for i, tf in zip(ids_of[0], tfs_of[0]))


def test_a_query_too_small_to_repay_the_import_leaves_numpy_unloaded(tmp_path: Path) -> None:
    # in a process that has not loaded numpy, a query whose postings are fewer than its import
    # repays is range-checked and added up by the standard library, and numpy stays unloaded;
    # once numpy is loaded, the same query adds up in numpy with the same hits, to the last bit.
    # The thresholds of work numpy takes once loaded are lowered to every list, so that only
    # the import's own threshold keeps it out
    repo, vocab = zipf_repo(tmp_path / "r", 150, 3)
    ingest(repo)
    code = f"""
import json, sys
import rag.retrieval.topk as topk, rag.store.packing as packing
from rag import Index, search
topk.NUMPY_POSTINGS = packing._NUMPY_VALUES = 1
with Index({str(repo / ".rag" / "index.sqlite")!r}) as index:
    hits = lambda: [(h.chunk.path, h.score.hex()) for h in search(index, {" ".join(vocab[:6])!r}, 4)]
    small = hits()
    unloaded = "numpy" not in sys.modules
    topk.NUMPY_IMPORT_POSTINGS = 1  # now every query repays it
    large = hits()
print(json.dumps([unloaded, "numpy" in sys.modules, small == large, len(small)]))
"""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )
    assert json.loads(out.stdout) == [True, True, True, 4]


def test_a_query_that_adds_up_in_numpy_imports_it_before_reading_its_postings(tmp_path: Path) -> None:
    # a query whose postings repay numpy's import loads it first, so that the range checks of
    # its lists (rag.store.packing.largest) use it too
    repo, vocab = zipf_repo(tmp_path / "r", 150, 4)
    ingest(repo)
    code = f"""
import json, sys
import rag.retrieval.topk as topk, rag.store.packing as packing, rag.store.reader as reader
from rag import Index, search
topk.NUMPY_POSTINGS = topk.NUMPY_IMPORT_POSTINGS = 1
seen = []
def largest(values):
    seen.append("numpy" in sys.modules)
    return packing.largest(values)
reader.largest = largest
with Index({str(repo / ".rag" / "index.sqlite")!r}) as index:
    search(index, {" ".join(vocab[:6])!r}, 4)
print(json.dumps(seen))
"""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )
    seen = json.loads(out.stdout)
    assert seen and all(seen)


def test_a_process_asking_many_questions_loads_numpy_once_their_sum_repays_it(tmp_path: Path) -> None:
    # each question alone is too small to repay numpy's import, but a process that keeps asking
    # (a server, an evaluation) counts what it added up without numpy: the question that brings
    # the sum past the import's worth loads it, and every later one uses it; the hits are the
    # same to the last bit throughout
    repo, vocab = zipf_repo(tmp_path / "r", 150, 5)
    ingest(repo)
    question = " ".join(vocab[:6])
    code = f"""
import json, sys
import rag.retrieval.topk as topk
from rag import Index, search
from rag.retrieval.search import query_counts
topk.NUMPY_POSTINGS = 1
with Index({str(repo / ".rag" / "index.sqlite")!r}) as index:
    postings = index.postings_count(query_counts(index, {question!r}))
    topk.NUMPY_IMPORT_POSTINGS = int(2.5 * postings)  # repaid during the third question
    loaded, hits = [], []
    for _ in range(4):
        hits.append([(h.chunk.path, h.score.hex()) for h in search(index, {question!r}, 4)])
        loaded.append("numpy" in sys.modules)
print(json.dumps([loaded, all(h == hits[0] for h in hits), len(hits[0])]))
"""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )
    assert json.loads(out.stdout) == [[False, False, True, True], True, 4]


def test_the_search_imports_numpy_without_the_semantic_model() -> None:
    # the lexical search's numpy comes without the model's module, and the one-thread setting of
    # its BLAS is not left behind for the processes this one starts
    code = (
        "import json, os, sys, rag.numeric\n"
        "np = rag.numeric.numpy_or_none()\n"
        "print(json.dumps([np is sys.modules['numpy'], 'rag.semantic.model' in sys.modules, "
        "'OPENBLAS_NUM_THREADS' in os.environ]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert json.loads(out.stdout) == [True, False, False]


def test_an_ingest_of_a_large_index_names_the_scale_extra_once_when_numpy_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner
    from conftest import write_tree

    import rag.numeric
    from rag.cli import main

    root = write_tree(tmp_path / "repo", {f"m{n}.py": f"def f{n}():\n    return {n}\n" for n in range(3)})
    monkeypatch.setattr(rag.numeric, "SCALE_CHUNKS", 3)  # three chunks count as large here
    with_numpy = CliRunner().invoke(main, ["ingest", "--full", str(root)])
    assert with_numpy.exit_code == 0 and "rag-code[scale]" not in with_numpy.stderr
    monkeypatch.setattr(rag.numeric, "find_spec", lambda name: None)
    without = CliRunner().invoke(main, ["ingest", "--full", str(root)])
    assert without.exit_code == 0 and without.stderr.count(rag.numeric.SCALE_HINT) == 1
    monkeypatch.setattr(rag.numeric, "SCALE_CHUNKS", 4)
    small = CliRunner().invoke(main, ["ingest", "--full", str(root)])
    assert "rag-code[scale]" not in small.stderr
    quiet = CliRunner().invoke(main, ["ingest", "-q", "--full", str(root)])
    assert quiet.stderr == "" and quiet.stdout == ""
