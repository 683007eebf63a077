"""After scoring: choose the final top k from the best-scored candidates.

Three adjustments, each measured in bench/LEVERS.md, and a code-aware stage before them:

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

With the question (the code tokenizer; never under the plain one, the original design), a
code-aware stage comes first (`boost`): a question that is one identifier ranks the chunk that
defines it first (also one found past the pool, in a file named like it: rag.retrieval.search; a class line
above its first method counts), a file whose name holds words of the question ranks up, and so
does a code file that holds much of the pool's score (file coherence: its best chunk most, its
others a quarter of that). Markup, data and config files (HTML templates, JSON, YAML) and example
code rank at half their score: they mention the words of the code they render or show. The boosts
see the scores (after those demotions) raised to SCORE_POWER, so that a narrow lexical lead can
yield to them and a wide one holds. Its levers and their measures on the three evaluation sets are
in bench/LEVERS.md.

The first passages of a top k are the same for every k up to 10 (MIN_CANDIDATES): asking
for more never changes what came first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import NamedTuple

from rag.retrieval.results import Hit
from rag.store.format import name_key

# How many scored candidates search() hands to rank_hits() for a top k. Up to k = 10 it is the
# same pool whatever k, so that the first passages of a longer list are exactly the shorter
# list (the prompt's top 4 is what `rag eval`, which asks for 10, scores as hit@4): with 12 for
# k = 4 and 30 for k = 10, a demoted test passage kept a place in the top 4 that a code passage
# from the larger pool took from it (docstring set: hit@4 0.606 at k = 4 against 0.613).
CANDIDATES_PER_K = 3
MIN_CANDIDATES = 30
TEST_FACTOR = 0.5
DUPLICATE_JACCARD = 0.8  # word-set overlap above which two passages count as the same text
PROMPT_K = 4  # the passages a prompt gets (rag.retrieval.search.DEFAULT_TOP_K)
MIX_RATIO = 0.8
MIX_DEPTH = 14  # the mix looks for the missing kind among ranks PROMPT_K + 1 to MIX_DEPTH
# The code-aware stage (bench/LEVERS.md, "ranking stack"): a boost is a fraction of the best
# candidate's score, added to a candidate's; a multiplier scales the candidate's own.
DEFINITION_BOOST = 3.0  # a chunk that defines the identifier a question names
# a plain-language question's passage scores x (1 + this x the share of the question's words its file
# name and folder hold)
PATH_MULT = 0.5
COHERENCE_MULT = 0.15  # a file's best chunk scores x (1 + this x the file's share of the pool's score)
# the boosts are given each candidate's score after its demotions, raised to this power: BM25's gaps
# between near answers shrink, so a file-level boost (coherence, the file's name) can overturn a narrow
# lexical lead but not a wide one; the order without boosts is the same
SCORE_POWER = 0.8
COHERENCE_REST = 0.25  # a file's other chunks get this fraction of its best chunk's coherence factor
COHERENCE_CODE = True  # only code files get the coherence boost: not prose sections, markup or data
DATA_FACTOR = 0.5  # markup, data and config files (HTML, JSON, YAML, ...) are ranked at this fraction
EXAMPLE_FACTOR = 0.5  # example code (examples/, samples/, demos/, docs_src/)
COHERENCE_SKIP_DEMOTED = True  # tests, licences and change logs get no coherence boost
DEFINES_IN_TEXT = True  # a structured chunk whose text holds the definition (a class line above its first method) defines it too
PATH_MIN = 5  # letters a question word and a file-name part must share at their start
PATH_FOLDER = 1  # the folder's name counts too
# after the first PROMPT_K passages, each next one is ranked at SPREAD ** (passages of its file already
# listed, less SPREAD_FREE - 1): a top 10 covers more files, the prompt's top 4 is the same; code search
# +0.017 (symbol 0.951 -> 0.961), docstring's answers at ranks 5-10, often the listed file's next
# function, partly pushed out (hit@10 -0.03; bench/LEVERS.md, stop 20). 1 switches it off
SPREAD = 0.7
SPREAD_FREE = 2  # a file's passages listed before the spread applies to its next one
DEFINITION_LINE = (
    True  # of one definition's windows, those holding its definition line are the ones that define it
)
DEFINITION_SCAN = 200  # a symbol question also looks, past the pool, in files named like the symbol (up to this many chunks)

_DATA_PATH = re.compile(
    r"\.(html?|xml|json|ya?ml|toml|ini|cfg|in|csv|svg|css|scss|sass|less|j2|jinja2?|tmpl|tpl|mustache|hbs)$",
    re.IGNORECASE,
)
_EXAMPLE_PATH = re.compile(r"(^|/)(examples?|samples?|demos?|docs_src)/", re.IGNORECASE)
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


def _demoted(path: str, tests: bool, boilerplate: bool) -> str | None:
    """Why a passage at `path` is ranked at TEST_FACTOR of its score, or None."""
    if tests and is_test_path(path):
        return "test"
    if boilerplate and is_boilerplate_path(path):
        return "licence or change log"
    return None


class Shape(NamedTuple):
    """What a question looks like to the code-aware stage."""

    symbol: str | None  # the identifier a question made of one names (`APIRouter`, `Sinatra::Base`)
    words: tuple[str, ...]  # a plain-language question's words, lowercased, for file-name matching


_SYMBOL_QUESTION = re.compile(
    r"^(?:[A-Za-z_$][\w$]*(?:(?:::|\\|->|\.|#)[A-Za-z_$][\w$]*)+"  # qualified: a.b, A::B, A#b
    r"|_\w*"  # _private, __init__
    r"|[A-Za-z][A-Za-z0-9]*[A-Z_][\w]*"  # an upper-case letter or underscore after the first
    r"|[A-Z][A-Za-z0-9]*)$"  # Capitalised: URL, Base
)
_QUESTION_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_PATH_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "if",
        "in",
        "is",
        "it",
        "not",
        "of",
        "on",
        "or",
        "the",
        "to",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "with",
    ]
)
_SEPARATORS = ("::", "\\", "->", "#", ".")


def question_shape(question: str) -> Shape:
    """Classify a question: one identifier (a symbol lookup), or plain-language words."""
    text = question.strip()
    if _SYMBOL_QUESTION.match(text):
        return Shape(text, ())
    words = tuple(
        dict.fromkeys(
            w.lower() for w in _QUESTION_WORD.findall(text) if len(w) > 2 and w.lower() not in _PATH_STOPWORDS
        )
    )
    return Shape(None, words)


def _last_name(symbol: str) -> str:
    for sep in _SEPARATORS:
        if sep in symbol:
            symbol = symbol.rsplit(sep, 1)[-1]
    return symbol


_DEFINING = (
    "class|struct|interface|enum|trait|type|typealias|def|defp|defmodule|defmacro|fn|func|function|fun|"
    "module|object|protocol|record|typedef|namespace|impl|extension|actor|macro"
)
# a variable that holds a definition (`const Router = ...`, `val engine: Engine = ...`): the name then
# `=` or `:`, not a typed declaration that only uses it (C++ `const Status status`)
_BINDING = "val|var|let|const"


_MODIFIERS = (
    "public|private|protected|internal|export|default|abstract|final|static|sealed|open|data|"
    "pub(?:\\([^)\\n]*\\))?|async|partial|inline|override|declare|unsafe|extern|case|implicit|lazy|"
    "fileprivate|package|value|enum|annotation|inner|companion|readonly|local|const|mutating|virtual|"
    "indirect|@[\\w.]+(?:\\([^)\\n]*\\))?"
)


@cache
def _definition_line(names: tuple[str, ...]) -> re.Pattern[str]:
    """A line that opens a definition of one of `names`: the keyword first on it (after modifiers),
    not in a comment or a usage example inside one."""
    alternatives = "|".join(map(re.escape, names))
    return re.compile(
        rf"^[ \t]*(?:(?:{_MODIFIERS})[ \t]+)*(?:(?:{_DEFINING})[ \t]+(?:[\w$]+(?:\.|::))*(?:{alternatives})"
        rf"(?:\s|[<({{\[;=]|:(?!:)|$)|(?:{_BINDING})[ \t]+(?:{alternatives})[ \t]*(?:=|:(?!:)))",
        re.MULTILINE,
    )


def _is_constructor(symbol: str) -> bool:
    for sep in _SEPARATORS:
        if sep in symbol:
            parts = symbol.split(sep)
            return len(parts) >= 2 and parts[-1] == parts[-2]
    return False


def _opening_windows(hits: list[Hit], defining: list[int], names: tuple[str, ...]) -> set[int]:
    """Of the defining hits (indexes), those that are a window of a definition split in several
    and do not hold its definition line, when another window of it does."""
    groups: dict[tuple[str, str | None], list[int]] = {}
    for i in defining:
        groups.setdefault((hits[i].chunk.path, hits[i].chunk.symbol), []).append(i)
    line = _definition_line(names)
    out: set[int] = set()
    for members in groups.values():
        if len(members) < 2:
            continue
        opening = [i for i in members if line.search(hits[i].chunk.text)]
        if opening:
            out.update(i for i in members if i not in opening)
    return out


@cache
def _definition_of(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(map(re.escape, names))
    return re.compile(
        rf"(?:^|\s)(?:(?:{_DEFINING})[ \t]+(?:[\w$]+(?:\.|::))*(?:{alternatives})(?:\s|[<({{\[;=]|:(?!:)|$)"
        rf"|(?:{_BINDING})[ \t]+(?:{alternatives})[ \t]*(?:=|:(?!:)))",
        re.MULTILINE,
    )


def _defines(hit: Hit, names: tuple[str, ...]) -> bool:
    """Whether a passage defines one of `names`: its symbol's last part is one, or (a passage
    chunked without structure) a definition keyword precedes one in its text."""
    chunk = hit.chunk
    if chunk.symbol and chunk.kind not in ("section", "text"):
        if chunk.symbol in names:  # asked for by its whole name (a constructor too)
            return True
        if _last_name(chunk.symbol) in names:
            # `ObjectMapper.ObjectMapper`, `Foo::Foo`: a constructor, which names the class it builds
            if DEFINITION_LINE and _is_constructor(chunk.symbol):
                return _definition_line(names).search(chunk.text) is not None
            return True
        if not DEFINES_IN_TEXT:
            return False
    return _definition_of(names).search(chunk.text) is not None


def _path_parts(path: str) -> set[str]:
    """The words of a file's name (without extension) and of its folder's, split as identifiers."""
    folder, _, name = path.rpartition("/")
    stem = name.split(".", 1)[0] if not name.startswith(".") else name
    parts = {p.lower() for p in re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+", stem)}
    parent = folder.rpartition("/")[2]
    if parent and PATH_FOLDER:
        parts.update(
            p.lower() for p in re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+", parent)
        )
    return parts


def _path_overlap(words: tuple[str, ...], parts: set[str]) -> int:
    """How many question words a file's name and folder hold, a shared beginning of 3+ letters counting."""
    n = 0
    for word in words:
        if word in parts:
            n += 1
            continue
        for part in parts:
            short, long_ = sorted((word, part), key=len)
            if len(short) >= PATH_MIN and long_.startswith(short):
                n += 1
                break
    return n


def file_key(symbol: str) -> str:
    """The name_key of the files named like a symbol's last part: `Router` -> Router.php, router.go,
    routers.py (rag.store.format.name_key)."""
    return name_key(_last_name(symbol))


def definitions(hits: list[Hit], symbol: str) -> list[Hit]:
    """The passages among `hits` that define `symbol`."""
    names = tuple(dict.fromkeys((symbol, _last_name(symbol))))
    return [h for h in hits if _defines(h, names)]


def boost(
    hits: list[Hit], shape: Shape, demoted: list[float], reasons: list[str | None]
) -> tuple[list[float], list[str | None]]:
    """Each candidate's score for the final order: its `demoted` score (its score times its
    demotion factor) plus the code-aware boosts, all in units of the best candidate's; and why
    each was boosted, if it was."""
    scores = demoted
    if DATA_FACTOR != 1.0 or EXAMPLE_FACTOR != 1.0:
        factors: dict[str, float] = {}  # path -> its markup/data and example factors, looked up once a file
        for h in hits:
            if h.chunk.path not in factors:
                path = h.chunk.path
                factors[path] = (DATA_FACTOR if _DATA_PATH.search(path) else 1.0) * (
                    EXAMPLE_FACTOR if _EXAMPLE_PATH.search(path) else 1.0
                )
        scores = [s * factors[h.chunk.path] for s, h in zip(scores, hits)]
    if SCORE_POWER != 1.0:  # after every demotion: the order without boosts stays the same
        scores = [max(s, 0.0) ** SCORE_POWER for s in scores]
    why: list[str | None] = [None] * len(hits)
    if not scores:
        return scores, why
    top = max(scores)
    out = list(scores)
    if shape.symbol is not None and DEFINITION_BOOST:
        names = tuple(dict.fromkeys((shape.symbol, _last_name(shape.symbol))))
        wanted = file_key(shape.symbol)
        defining = [i for i, h in enumerate(hits) if _defines(h, names)]
        inner = _opening_windows(hits, defining, names) if DEFINITION_LINE else set()
        for i in defining:
            h = hits[i]
            if i not in inner:
                out[i] += top * DEFINITION_BOOST * (1.5 if name_key(h.chunk.path) == wanted else 1.0)
                why[i] = f"defines {shape.symbol}"
    if shape.words and PATH_MULT:
        cache: dict[str, float] = {}
        for i, h in enumerate(hits):
            ratio = cache.get(h.chunk.path)
            if ratio is None:
                ratio = cache[h.chunk.path] = _path_overlap(shape.words, _path_parts(h.chunk.path)) / len(
                    shape.words
                )
            if ratio >= 0.1:
                out[i] += scores[i] * PATH_MULT * ratio
                why[i] = why[i] or "its file's name holds words of the question"
    if COHERENCE_MULT:
        _add_coherence(hits, scores, reasons, out, why)
    return out, why


def file_shares(
    paths: Sequence[str], weights: Sequence[float], by: Sequence[float]
) -> tuple[dict[str, float], dict[str, int]] | None:
    """For file coherence: each file's share of `weights` summed over its passages (relative to the
    file that holds the most), and the index of its best passage by `by` (the first of equals);
    None when no file holds a positive sum."""
    per_file: dict[str, float] = {}
    best: dict[str, int] = {}
    for i, path in enumerate(paths):
        per_file[path] = per_file.get(path, 0.0) + weights[i]
        if path not in best or by[i] > by[best[path]]:
            best[path] = i
    most = max(per_file.values(), default=0.0)
    if most <= 0:
        return None
    return {path: total / most for path, total in per_file.items()}, best


def _add_coherence(
    hits: list[Hit],
    scores: list[float],
    reasons: list[str | None],
    out: list[float],
    why: list[str | None],
) -> None:
    """Rank up the code files that hold much of the pool's score: a file's best chunk gains
    COHERENCE_MULT times the file's share (relative to the file that holds the most), its other
    chunks COHERENCE_REST of that, so the file's second passage is not overtaken by the best of
    files that merely mention the question. Prose and demoted files (tests, licences, change logs)
    gain nothing: many sections or tests repeat the words of what they document or test."""
    found = file_shares([h.chunk.path for h in hits], scores, scores)
    if found is None:
        return
    share_of, best = found
    left_out = {  # the files that gain nothing, decided once a file (reasons: the demotion of each hit)
        path
        for path, i in best.items()
        if (COHERENCE_CODE and not is_code(hits[i])) or (COHERENCE_SKIP_DEMOTED and reasons[i])
    }
    for i, h in enumerate(hits):
        path = h.chunk.path
        if path in left_out:
            continue
        share = share_of[path]
        if best[path] == i:
            out[i] += scores[i] * COHERENCE_MULT * share
        else:
            out[i] += scores[i] * COHERENCE_MULT * COHERENCE_REST * share
        why[i] = why[i] or "much of the question is answered in its file"


def rank_hits(
    hits: list[Hit],
    k: int,
    *,
    tests: bool = True,
    dedupe: bool = True,
    mix: bool = True,
    test_factor: float | None = None,
    boilerplate: bool = True,
    question: str | None = None,
    spread: bool = True,
) -> list[Hit]:
    """Return the final top k from candidates sorted best first; a demoted hit says why (Hit.demoted).
    With `question`, the code-aware boosts apply (their levers above), a hit
    they moved above a better-scored one says why (Hit.boosted), and (`spread`) the passages after
    the first PROMPT_K cover more files (spread_files; the semantic stage, which reorders this list,
    asks for it unspread and spreads its own)."""
    reasons = [_demoted(h.chunk.path, tests, boilerplate) for h in hits]
    # the module's TEST_FACTOR as it is when called (bench/ranking.py sets it)
    factor = TEST_FACTOR if test_factor is None else test_factor
    base = [h.score * (factor if r else 1.0) for h, r in zip(hits, reasons)]
    boosted: list[str | None] = [None] * len(hits)
    final = base
    if question is None:  # the plain design: demotion only
        order = (
            sorted(range(len(hits)), key=lambda i: (-base[i], i))
            if tests or boilerplate
            else list(range(len(hits)))
        )
    else:
        final, boosted = boost(hits, question_shape(question), base, reasons)
        order = sorted(range(len(hits)), key=lambda i: (-final[i], i))
        # a boost is named only where it moved a passage above one that scored more
        best_below = 0.0
        for i in reversed(order):
            if base[i] >= best_below:
                boosted[i] = None
            best_below = max(best_below, base[i])
    ranked = [hits[i]._replace(demoted=reasons[i], boosted=boosted[i], ranked=final[i]) for i in order]
    spreading = spread and question is not None and SPREAD != 1.0 and k > PROMPT_K
    if dedupe:
        # spreading chooses from past the top k: the whole pool while it is the same for every k (up to
        # k = 10: MIN_CANDIDATES), so that the first passages are too; twice k beyond (deduplicating is
        # quadratic)
        fixed_pool = k * CANDIDATES_PER_K <= MIN_CANDIDATES
        want = (len(ranked) if fixed_pool else 2 * k) if spreading else max(k, MIX_DEPTH)
        ranked = _drop_duplicates(ranked, want)
    top = ranked if spreading else ranked[:k]
    if mix and k >= PROMPT_K:
        # spreading hands it the whole list: it looks at the same ranks (5 to MIX_DEPTH) either way
        top = _mix(top, [] if spreading else ranked[k:])
    if spreading:
        top = spread_files(top, k)
    return top


def spread_files(hits: Sequence[Hit], k: int, values: Sequence[float] | None = None) -> list[Hit]:
    """Return the top k of `hits` (in their final order, each valued by `values`, by default its
    lexical value: Hit.ranked, else its score): the first
    PROMPT_K as they are (a prompt's passages), then each next one chosen greedily by its value x
    SPREAD ** (the passages of its file already chosen), so that a longer list covers more files
    rather than more windows of one. The first passages are the same for every k."""
    if SPREAD == 1.0 or len(hits) <= PROMPT_K or k <= PROMPT_K:
        return list(hits[:k])
    if values is None:
        values = [h.ranked if h.ranked is not None else h.score for h in hits]
    chosen = list(hits[:PROMPT_K])
    listed: dict[str, int] = {}
    for h in chosen:
        listed[h.chunk.path] = listed.get(h.chunk.path, 0) + 1
    left = list(range(PROMPT_K, len(hits)))
    while left and len(chosen) < k:
        j = max(
            range(len(left)),
            key=lambda m: (
                values[left[m]] * SPREAD ** max(0, listed.get(hits[left[m]].chunk.path, 0) - SPREAD_FREE + 1),
                -m,
            ),
        )
        h = hits[left.pop(j)]
        chosen.append(h)
        listed[h.chunk.path] = listed.get(h.chunk.path, 0) + 1
    return chosen


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


def is_code(hit: Hit) -> bool:
    """Whether a passage is code: not a prose section, nor markup or data; code chunked by
    paragraphs (a language without its grammar) is code too."""
    return hit.chunk.kind != "section" and _DATA_PATH.search(hit.chunk.path) is None


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
    out = head[:-1] + [best] + [h for h in top[PROMPT_K - 1 :] if h is not best]
    return out[: len(top)]
