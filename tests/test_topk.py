"""Max-score pruning returns exactly the exhaustive top k, under cosine and under BM25."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from conftest import write_tree
from zipf import SCORINGS, zipf_repo

from rag import Index, ingest, search
from rag.weights import Cosine


@pytest.fixture(autouse=True, params=["dict", "array", "numpy"])
def accumulator(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run every test here with scores summed in a dict, in a dense array and in numpy arrays
    (rag.retrieval.topk picks by the number of postings, and numpy only when it is installed;
    these small indexes would always get the dict)."""
    if request.param == "numpy":
        pytest.importorskip("numpy")
    topk_module = sys.modules["rag.retrieval.topk"]
    monkeypatch.setattr(topk_module, "DENSE_RATIO", 0.0 if request.param == "array" else 1e9)
    for threshold in ("NUMPY_POSTINGS", "NUMPY_IMPORT_POSTINGS"):
        monkeypatch.setattr(topk_module, threshold, 0 if request.param == "numpy" else 10**12)
    return str(request.param)


@SCORINGS
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pruned_top_k_equals_exhaustive(tmp_path: Path, seed: int, scoring: str) -> None:
    repo, vocab = zipf_repo(tmp_path / "r", 150, seed)
    ingest(repo)
    rng = random.Random(seed)
    weights = [1 / (i + 1) ** 0.5 for i in range(len(vocab))]
    with Index(repo / ".rag" / "index.sqlite") as index:
        for _ in range(60):
            question = " ".join(rng.choices(vocab, weights, k=rng.randint(1, 8)))
            k = rng.choice([1, 4, 10])
            fast = [
                (h.chunk.path, h.chunk.start_line, h.score)
                for h in search(index, question, k, scoring=scoring)
            ]
            slow = [
                (h.chunk.path, h.chunk.start_line, h.score)
                for h in search(index, question, k, prune=False, scoring=scoring)
            ]
            assert fast == slow, question


@SCORINGS
def test_pruning_probes_common_terms_instead_of_scanning_them(
    tmp_path: Path, mocker, scoring: str, accumulator: str
) -> None:
    # 30 chunks hold the rare words; "common" is in all 1,000: once the rare terms have filled
    # the candidate list, the common term's postings are probed for those candidates only
    files = {f"f{i:04d}.txt": "common filler text\n" for i in range(1000)}
    files.update({f"target{i:02d}.txt": f"rare needle common {'needle ' * (i % 3)}\n" for i in range(30)})
    repo = write_tree(tmp_path / "r", files)
    ingest(repo)
    spy = mocker.spy(sys.modules["rag.retrieval.topk"], "bisect_left")
    with Index(repo / ".rag" / "index.sqlite") as index:
        hits = search(index, "rare needle common", k=4, scoring=scoring)
        calls = spy.call_count
        exhaustive = search(index, "rare needle common", 4, prune=False, scoring=scoring)
        assert [h.chunk.path for h in hits] == [h.chunk.path for h in exhaustive]
    assert all(h.chunk.path.startswith("target") for h in hits)
    if accumulator != "numpy":  # numpy masks the common term's postings instead
        assert 0 < calls <= 30


@SCORINGS
def test_pruning_stays_exact_after_in_place_updates(tmp_path: Path, mocker, scoring: str) -> None:
    # updates widen the stored bounds instead of recomputing them all; they must stay bounds,
    # whether files shrink (smaller norms) or grow (a longer average chunk for BM25)
    repo, vocab = zipf_repo(tmp_path / "r", 150, 7)
    ingest(repo)
    update = mocker.spy(sys.modules["rag.indexing.pipeline"], "update_index")
    rng = random.Random(7)
    docs = sorted(repo.glob("doc*.txt"))
    for step in range(6):
        for path in rng.sample(docs, 6):
            if not path.exists():
                continue
            words = path.read_text().split()
            if step < 3:  # shrink: fewer terms, smaller df, smaller norms
                path.write_text(" ".join(words[: rng.randint(3, 12)]) + f" step{step}\n")
            else:  # grow: one long paragraph, a longer average chunk
                path.write_text(" ".join(words * 3 + rng.choices(vocab, k=40)) + f" step{step}\n")
        victim = docs[step]
        if victim.exists():
            victim.unlink()
        ingest(repo)
    assert update.call_count == 6
    with Index(repo / ".rag" / "index.sqlite") as index:
        assert index.manifest.bound_scale >= 1.0
        assert (
            index.view().length / index.view().n_chunks > index.manifest.bm25_avglen
        )  # the bounds are scaled
        for _ in range(80):
            question = " ".join(rng.choices(vocab, k=rng.randint(1, 6)))
            fast = [
                (h.chunk.path, h.chunk.start_line, h.score)
                for h in search(index, question, 4, scoring=scoring)
            ]
            slow = [
                (h.chunk.path, h.chunk.start_line, h.score)
                for h in search(index, question, 4, prune=False, scoring=scoring)
            ]
            assert fast == slow, question


@SCORINGS
def test_a_term_repeated_hundreds_of_times_scores_like_the_formula(tmp_path: Path, scoring: str) -> None:
    # tfs above 255 leave the cosine weight table for the computed path: same figures
    repo = write_tree(
        tmp_path / "r",
        {
            "loud.py": f"def loud():\n    return '{'echo ' * 300}tail'\n",
            "quiet.txt": "echo once tail\n",
            "other.txt": "nothing here\n",
        },
    )
    ingest(repo)
    with Index(repo / ".rag" / "index.sqlite") as index:
        hits = search(index, "echo tail", 4, explain=True, scoring=scoring)
        assert [h.chunk.path for h in hits] == [
            h.chunk.path for h in search(index, "echo tail", 4, prune=False, scoring=scoring)
        ]
    loud = next(h for h in hits if h.chunk.path == "loud.py")
    assert max(c.tf for c in loud.contributions) >= 300
    assert sum(c.score for c in loud.contributions) == pytest.approx(loud.score, abs=1e-12)


def test_probing_drops_candidates_as_the_bounds_left_shrink(mocker, accumulator: str) -> None:
    if accumulator == "numpy":
        pytest.skip("the standard library's probe")
    # 100 candidates: chunks 0-9 have 10 so far, the others 1. Two terms are left to probe,
    # each adding at most 0.5. After the first, the 4th best is 10.5 and only 0.5 is left to
    # add, so chunks 10-99 cannot make the top 4: the second term is looked up for 10 only.
    topk_module = sys.modules["rag.retrieval.topk"]
    from array import array

    start = {c: (10.0 if c < 10 else 1.0) for c in range(100)}
    acc: dict[int, float] | array[float]
    acc = dict(start) if accumulator == "dict" else array("d", [start.get(c, 0.0) for c in range(1000)])
    first = (0.5, array("I", range(100)), array("H", [1] * 100), 0.5)
    second = (0.5, array("I", range(1000)), array("H", [1] * 1000), 0.5)
    spy = mocker.spy(topk_module, "bisect_left")
    kept = topk_module._probe(
        acc, list(range(100)), [first, second], Cosine(), topk_module._scorer(acc, None), 4, 0.0, [0.5, 0.0]
    )
    assert kept == list(range(10))
    assert [acc[c] for c in kept] == [11.0] * 10
    assert acc[50] == 1.5  # probed for the first term, dropped before the second
    assert spy.call_count == 10


@SCORINGS
def test_array_path_equals_the_dict_path_when_chunk_norms_vary_widely(
    tmp_path: Path, scoring: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one-line chunks beside long, repetitive ones: a chunk's sum and another chunk's norm,
    # paired by mistake, would give a threshold far from any real score
    rng = random.Random(11)
    vocab = [f"w{i}" for i in range(60)]
    files = {}
    for f in range(200):
        if f % 2:
            files[f"doc{f:03d}.txt"] = " ".join(rng.choices(vocab[:8], k=2)) + "\n"
        else:
            files[f"doc{f:03d}.txt"] = (
                " ".join(rng.choices(vocab[:8], k=300) + rng.choices(vocab, k=40)) + "\n"
            )
    repo = write_tree(tmp_path / "r", files)
    ingest(repo)
    topk_module = sys.modules["rag.retrieval.topk"]
    with Index(repo / ".rag" / "index.sqlite") as index:
        for _ in range(80):
            question = " ".join(
                rng.choices(vocab[:8], k=rng.randint(1, 3)) + rng.choices(vocab, k=rng.randint(0, 3))
            )
            k = rng.choice([1, 4])
            monkeypatch.setattr(topk_module, "DENSE_RATIO", 0.0)
            pruned = [(h.chunk.path, h.score) for h in search(index, question, k, scoring=scoring)]
            exhaustive = [
                (h.chunk.path, h.score) for h in search(index, question, k, prune=False, scoring=scoring)
            ]
            monkeypatch.setattr(topk_module, "DENSE_RATIO", 1e9)
            reference = [
                (h.chunk.path, h.score) for h in search(index, question, k, prune=False, scoring=scoring)
            ]
            assert pruned == exhaustive == reference, question


def test_a_term_that_adds_nothing_still_makes_its_chunks_candidates(accumulator: str) -> None:
    # a term weighted 0 (a guess weighted down to nothing) touches chunks without adding to them:
    # they are candidates at 0.0 all the same, tied with the 4th best, whichever way sums are kept
    from array import array

    from rag.retrieval.topk import top_scores

    found = top_scores(
        [
            (1.0, array("I", [0, 1]), array("H", [1, 1]), 1.0),
            (0.0, array("I", [2, 3, 4, 5]), array("H", [1, 1, 1, 1]), 0.0),
        ],
        4,
        Cosine(),
        None,
        6,
    )
    assert sorted(found) == [(0.0, 2), (0.0, 3), (0.0, 4), (0.0, 5), (1.0, 0), (1.0, 1)]
