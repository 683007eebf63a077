"""After scoring: choose the final top k from the best-scored candidates.

Three adjustments, each measured in bench/LEVERS.md:

* tests: a passage under a test folder or in a test file is scored TEST_FACTOR times
  its cosine; a question about how the code behaves is answered by the code and its
  docs, which the tests of that behaviour otherwise outrank by repeating its words.
  Licence texts and change logs (LICENSE, COPYING, NOTICE, CHANGELOG, CHANGES, HISTORY,
  NEWS, release-notes folders) are demoted the same way: they mention everything once.
* dedupe: a passage whose words are nearly those of a better one already chosen
  (compiled copies, vendored files, the same text in two places) is dropped.
* mix: the first PROMPT_K passages (the ones a prompt gets) hold both a docs section and
  code when the best passage of the missing kind (ranked above MIX_DEPTH) scores within
  MIX_RATIO of the last of them.

The first passages of a top k are the same for every k up to 10 (MIN_CANDIDATES): asking
for more never changes what came first.
"""

from __future__ import annotations

import re

from .hits import Hit

# How many scored candidates search() hands to rerank() for a top k. Up to k = 10 it is the
# same pool whatever k, so that the first passages of a longer list are exactly the shorter
# list (the prompt's top 4 is what `rag eval`, which asks for 10, scores as hit@4): with 12 for
# k = 4 and 30 for k = 10, a demoted test passage kept a place in the top 4 that a code passage
# from the larger pool took from it (docstring set: hit@4 0.606 at k = 4 against 0.613).
CANDIDATES_PER_K = 3
MIN_CANDIDATES = 30
TEST_FACTOR = 0.5
DUPLICATE_JACCARD = 0.8  # word-set overlap above which two passages count as the same text
PROMPT_K = 4  # the passages a prompt gets (rag.search.DEFAULT_TOP_K)
MIX_RATIO = 0.8
MIX_DEPTH = 14  # the mix looks for the missing kind among ranks PROMPT_K + 1 to MIX_DEPTH

_WORD = re.compile(r"[^\W_]+")
_TEST_PATH = re.compile(r"(^|/)(tests?|__tests__|spec)(/|$)|(^|/)test_[^/]*$|[._-](test|spec)\.[^/]+$")
_BOILERPLATE_PATH = re.compile(
    r"(^|/)((licen[cs]e|copying|notice|change_?log|changes|history|news)(\.(md|rst|txt|markdown|adoc))?"
    r"|licen[cs]e[-.][\w.-]+)$|(^|/)(releases|release-notes|changelog)/",
    re.IGNORECASE,
)


def candidate_count(k: int) -> int:
    """Return how many of the best-scored chunks to fetch for a final top k."""
    return max(k * CANDIDATES_PER_K, MIN_CANDIDATES)


def is_test_path(path: str) -> bool:
    """Return whether a path is a test file or lies under a test folder."""
    return _TEST_PATH.search(path) is not None


def is_boilerplate_path(path: str) -> bool:
    """Return whether a path is a licence text or a change log / release notes."""
    return _BOILERPLATE_PATH.search(path) is not None


def rerank(hits: list[Hit], k: int, *, tests: bool = True, dedupe: bool = True, mix: bool = True,
           test_factor: float = TEST_FACTOR, boilerplate: bool = True) -> list[Hit]:
    """Return the final top k from candidates sorted best first; a demoted hit says why (Hit.demoted)."""
    if tests or boilerplate:
        def why(path: str) -> str | None:
            if tests and is_test_path(path):
                return "test"
            if boilerplate and is_boilerplate_path(path):
                return "licence or change log"
            return None

        reasons = [why(h.chunk.path) for h in hits]
        order = sorted(range(len(hits)),
                       key=lambda i: (-hits[i].score * (test_factor if reasons[i] else 1.0), i))
        hits = [hits[i]._replace(demoted=reasons[i]) if reasons[i] else hits[i] for i in order]
    if dedupe:
        hits = _drop_duplicates(hits, max(k, MIX_DEPTH))
    top = hits[:k]
    if mix and k >= PROMPT_K:
        top = _mix(top, hits[k:])
    return top


def _drop_duplicates(hits: list[Hit], want: int) -> list[Hit]:
    kept: list[Hit] = []
    seen: list[frozenset[str]] = []
    for hit in hits:
        words = frozenset(map(str.lower, _WORD.findall(hit.chunk.text)))  # each word lowered, at C speed
        if any(_similar(words, s) for s in seen):
            continue
        kept.append(hit)
        seen.append(words)
        if len(kept) >= want:
            break
    return kept


def _similar(a: frozenset[str], b: frozenset[str]) -> bool:
    """Jaccard(a, b) >= DUPLICATE_JACCARD; sets whose sizes alone rule it out (the overlap is at
    most the smaller, the union at least the larger) are not intersected."""
    small, large = (len(a), len(b)) if len(a) <= len(b) else (len(b), len(a))
    if small < DUPLICATE_JACCARD * large:
        return False
    return _jaccard(a, b) >= DUPLICATE_JACCARD


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 1.0 if a == b else 0.0
    return len(a & b) / len(a | b)


def _is_doc(hit: Hit) -> bool:
    return hit.chunk.kind in ("section", "text")


def _mix(top: list[Hit], rest: list[Hit]) -> list[Hit]:
    head = top[:PROMPT_K]
    kinds = {_is_doc(h) for h in head}
    if len(kinds) != 1:
        return top
    missing = not kinds.pop()
    pool = (top[PROMPT_K:] + rest)[: MIX_DEPTH - PROMPT_K]  # the same ranks whatever k
    best = next((h for h in pool if _is_doc(h) == missing), None)
    if best is None or best.score < MIX_RATIO * head[-1].score:
        return top
    out = head[:-1] + [best] + [h for h in top[PROMPT_K - 1:] if h is not best]
    return out[: len(top)]
