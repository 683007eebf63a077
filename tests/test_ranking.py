"""The lexical ranking (rank_hits): tests demoted, near-duplicates collapsed, docs and code both in the prompt."""

from __future__ import annotations

import pytest

from rag.chunking import Chunk
from rag.ranking.hits import Hit
from rag.ranking.order import PROMPT_K, candidate_count, is_boilerplate_path, is_test_path, rank_hits


def hit(score: float, path: str, text: str | None = None, kind: str = "function") -> Hit:
    return Hit(
        score, Chunk(path, 1, 3, kind, None, text if text is not None else f"def {path}(): pass  # {score}")
    )


def paths(hits: list[Hit]) -> list[str]:
    return [h.chunk.path for h in hits]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("tests/test_app.py", True),
        ("src/test/Foo.java", True),
        ("pkg/tests", True),
        ("test_utils.py", True),
        ("src/__tests__/query.ts", True),
        ("src/query.test.ts", True),
        ("lib/axios.spec.js", True),
        ("src/flask/testing.py", False),
        ("src/contest.py", False),
        ("docs/testing.rst", False),
        ("src/attestation/x.py", False),
    ],
)
def test_is_test_path(path: str, expected: bool) -> None:
    assert is_test_path(path) is expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("LICENSE", True),
        ("LICENSE.txt", True),
        ("licence.md", True),
        ("COPYING", True),
        ("NOTICE", True),
        ("CHANGELOG.md", True),
        ("CHANGES.rst", True),
        ("HISTORY.md", True),
        ("NEWS", True),
        ("pkg/change_log.txt", True),
        ("docs/releases/5.2.txt", True),
        ("changelog/1.0.md", True),
        ("LICENSE-MIT", True),
        ("src/license_check.py", False),
        ("src/history.py", False),
        ("src/flask/sessions.py", False),
        ("docs/news_feed/index.md", False),
        ("src/notices.ts", False),
        ("lib/changes_tracker.js", False),
    ],
)
def test_is_boilerplate_path(path: str, expected: bool) -> None:
    assert is_boilerplate_path(path) is expected


def test_licences_and_change_logs_are_demoted_like_tests() -> None:
    hits = [
        hit(0.50, "LICENSE", "Permission is hereby granted ...", kind="text"),
        hit(0.45, "HISTORY.md", "0.7.5: hooks for responses", kind="section"),
        hit(0.30, "src/hooks.py"),
        hit(0.20, "src/models.py"),
        hit(0.10, "src/utils.py"),
    ]
    assert paths(rank_hits(hits, 4, mix=False)) == ["src/hooks.py", "LICENSE", "HISTORY.md", "src/models.py"]
    assert paths(rank_hits(hits, 4, boilerplate=False, mix=False)) == paths(hits)[:4]


def test_the_candidate_pool_is_the_same_for_every_k_up_to_ten() -> None:
    assert {candidate_count(k) for k in range(1, 11)} == {30}
    assert candidate_count(20) == 60


def test_test_files_are_demoted_not_dropped() -> None:
    hits = [hit(0.50, "tests/test_a.py"), hit(0.40, "src/a.py"), hit(0.20, "src/b.py"), hit(0.10, "src/c.py")]
    assert paths(rank_hits(hits, 4, mix=False)) == ["src/a.py", "tests/test_a.py", "src/b.py", "src/c.py"]
    assert paths(rank_hits(hits, 4, tests=False, mix=False)) == paths(hits)


def test_near_duplicates_collapse_to_the_best() -> None:
    text = "def parse(value):\n    '''Parse a header value into its parts.'''\n    return value.split(';')\n"
    hits = [
        hit(0.9, "src/a.py", text),
        hit(0.8, "dist/a.js", text + "\n// compiled"),
        hit(0.7, "src/b.py", "def other(): return 1"),
        hit(0.6, "vendor/a.py", text),
    ]
    assert paths(rank_hits(hits, 2, mix=False)) == ["src/a.py", "src/b.py"]
    assert paths(rank_hits(hits, 2, dedupe=False, mix=False)) == ["src/a.py", "dist/a.js"]


def test_docs_and_code_both_reach_the_prompt() -> None:
    code = [hit(1.0 - i / 20, f"src/m{i}.py") for i in range(6)]
    doc = hit(0.80, "docs/guide.md", "Sessions\n\nHow the session is saved.", kind="section")
    top = rank_hits([*code, doc], 6)
    assert paths(top[:PROMPT_K]) == ["src/m0.py", "src/m1.py", "src/m2.py", "docs/guide.md"]
    assert paths(top[PROMPT_K:]) == ["src/m3.py", "src/m4.py"]
    assert len({h.chunk.path for h in top}) == 6


def test_a_weak_doc_does_not_displace_code() -> None:
    code = [hit(1.0 - i / 20, f"src/m{i}.py") for i in range(6)]
    doc = hit(0.30, "docs/guide.md", "Unrelated.", kind="section")
    assert paths(rank_hits([*code, doc], 4)) == [f"src/m{i}.py" for i in range(4)]


def test_code_is_mixed_into_an_all_docs_top() -> None:
    docs = [
        hit(1.0 - i / 20, f"docs/d{i}.md", f"Section {i} about a topic {i}", kind="section") for i in range(5)
    ]
    code = hit(0.84, "src/impl.py")
    assert paths(rank_hits([*docs, code], 4)) == ["docs/d0.md", "docs/d1.md", "docs/d2.md", "src/impl.py"]


def test_rank_hits_keeps_order_without_adjustments_and_handles_few_hits() -> None:
    hits = [hit(0.5, "tests/test_a.py"), hit(0.4, "src/a.py")]
    kept = rank_hits(hits, 4, tests=False, dedupe=False, mix=False)
    assert kept == [h._replace(ranked=h.score) for h in hits]  # in order, each ranked by its own score
    assert rank_hits([], 4) == []
    assert paths(rank_hits(hits, 1)) == ["src/a.py"]


def test_a_longer_list_starts_with_the_shorter_one(tmp_path) -> None:
    # test passages outscore the code for the question; demoted by half, they fall below code
    # passages ranked lower. With a pool of 12 for k = 4 (and 30 for k = 10) the prompt's top 4
    # kept test passages that the list of ten put below code.
    from conftest import write_tree

    from rag import Index, ingest, search

    files = {
        f"tests/test_cache_{i}.py": f"def test_cache_{i}():\n    cache = Cache()\n"
        f"    cache.evict(); cache.evict(); cache.evict()\n    assert cache.evicted == {i}\n"
        for i in range(14)
    }
    words = [
        "alpha beta gamma",
        "delta epsilon zeta",
        "eta theta iota",
        "kappa lambda mu",
        "nu xi omicron",
        "pi rho sigma",
        "tau upsilon phi",
        "chi psi omega",
    ]  # distinct passages, not near-duplicates
    files |= {
        f"src/cache_{i}.py": f"def evict_{i}(cache):\n    # Evict the oldest entry of the cache: {w}.\n"
        f"    return cache.pop_oldest({w.replace(' ', ', ')})\n"
        for i, w in enumerate(words)
    }
    report = ingest(write_tree(tmp_path / "r", files))
    with Index(report.index_path) as index:
        lists = {k: [(h.chunk.path, h.score) for h in search(index, "cache evict", k)] for k in range(1, 11)}
    for k in range(1, 10):
        assert lists[k] == lists[10][:k]
    assert sum(p.startswith("src/") for p, _ in lists[4]) == 4
