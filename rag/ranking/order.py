"""After scoring: choose the final top k from the best-scored candidates.

Three adjustments, each measured in docs/levers.md, and a code-aware stage before them (their
numbers: rag.weights.RankingWeights, passed in as `weights`):

* tests: a passage under a test folder or in a test file is scored `test_factor` times
  its score; a question about how the code behaves is answered by the code and its
  docs, which the tests of that behaviour otherwise outrank by repeating its words.
  Licence texts and change logs (LICENSE, COPYING, NOTICE, CHANGELOG, CHANGES, HISTORY,
  NEWS, release-notes folders) are demoted the same way: they mention everything once.
* dedupe: a passage whose words are nearly those of a better one already chosen
  (compiled copies, vendored files, the same text in two places) is dropped.
* mix: the first PROMPT_K passages (the ones a prompt gets) hold both a docs section and
  code when the best passage of the missing kind (ranked above `mix_depth`) scores within
  `mix_ratio` of the last of them.

With the question (the code tokenizer; never under the plain one, which ranks by the scores alone), a
code-aware stage comes first (`boost`): a question that is one identifier ranks the chunk that
defines it first (also one found past the pool, in a file named like it: rag.retrieval.search; a class line
above its first method counts), a file whose name holds words of the question ranks up, and so
does a code file that holds much of the pool's score (file coherence: its best chunk most, its
others a quarter of that). Markup, data and config files (HTML templates, JSON, YAML) and example
code rank at half their score: they mention the words of the code they render or show. The boosts
see the scores (after those demotions) raised to `score_power`, so that a narrow lexical lead can
yield to them and a wide one holds. Its levers and their measures on the three evaluation sets are
in docs/levers.md.

The first passages of a top k are the same for every k up to 10 (`min_candidates`): asking
for more never changes what came first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

from rag.ranking.hits import Hit
from rag.store.format import name_key
from rag.weights import DEFAULTS, RankingWeights

if TYPE_CHECKING:
    from rag.chunking.base import Chunk

PROMPT_K = 4  # the passages a prompt gets: a query's default top k, and the size rag eval reports
TEST_FACTOR = DEFAULTS.test_factor  # the factor `rag query` names beside a demoted passage
# why file coherence ranked a passage up (Hit.boosted), for a question; rag.retrieval.related words it
# for a passage
COHERENCE_REASON = "much of the question is answered in its file"

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


def candidate_count(k: int, weights: RankingWeights = DEFAULTS) -> int:
    """Return how many of the best-scored chunks to fetch for a final top k."""
    return max(k * weights.candidates_per_k, weights.min_candidates)


def is_test_path(path: str) -> bool:
    """Return whether a path is a test file or lies under a test folder."""
    return _TEST_PATH.search(path) is not None


def is_boilerplate_path(path: str) -> bool:
    """Return whether a path is a licence text or a change log / release notes."""
    return _BOILERPLATE_PATH.search(path) is not None


def _demoted(path: str, tests: bool, boilerplate: bool) -> str | None:
    """Why a passage at `path` is ranked at `test_factor` of its score, or None."""
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


# a name a question writes as code: `backticked`, snake_case, camelCase or dotted (res.sendFile, url_for,
# QuerySet.get_or_create, toJSON()); a path with a file name (src/app.py)
_CODE_NAME = re.compile(
    r"`([^`\n]{2,80})`"
    r"|(?<![\w/.])([A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)+)\(\)"  # a call: Response.json()
    r"|(?<![\w/.])([A-Z][\w$]*(?:\.|::|#)[a-z_$][\w$]+)(?![\w/(])"  # a member of a class: Response.json
    r"|(?<![\w/.])((?:[A-Za-z_$][\w$]*(?:\.|::|#))*[A-Za-z_$][\w$]*(?:_[\w$]+|[a-z][A-Z][\w$]*))(?:\(\))?(?![\w/])"
    r"|(?<![\w/])((?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,5})(?![\w/])"
)


def names_in(question: str) -> tuple[str, ...]:
    """The names a question writes as code (see _CODE_NAME), as written: identifiers and paths."""
    return tuple(dict.fromkeys(next(g for g in m.groups() if g) for m in _CODE_NAME.finditer(question)))


def names_found(question: str, first: Chunk) -> bool:
    """Whether the passage a question's own search ranks first is what the question names as code: it
    defines a named identifier (its symbol's last name) or is the named file. Such a question is its
    own search: a model's searches would add words to a lookup already made."""
    symbol = (_last_name(first.symbol) if first.symbol else "").lower()
    file_name = first.path.rpartition("/")[2].lower()
    for name in names_in(question):
        if "/" in name:
            if file_name == name.rpartition("/")[2].lower() and first.path.endswith(name):
                return True
        elif symbol and _last_name(name.removesuffix("()")).lower() == symbol:
            return True
    return False


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


def _defines(hit: Hit, names: tuple[str, ...], weights: RankingWeights) -> bool:
    """Whether a passage defines one of `names`: its symbol's last part is one, or (a passage
    chunked without structure) a definition keyword precedes one in its text."""
    chunk = hit.chunk
    if chunk.symbol and chunk.kind not in ("section", "text"):
        if chunk.symbol in names:  # asked for by its whole name (a constructor too)
            return True
        if _last_name(chunk.symbol) in names:
            # `ObjectMapper.ObjectMapper`, `Foo::Foo`: a constructor, which names the class it builds
            if weights.definition_line and _is_constructor(chunk.symbol):
                return _definition_line(names).search(chunk.text) is not None
            return True
        if not weights.defines_in_text:
            return False
    return _definition_of(names).search(chunk.text) is not None


def _path_parts(path: str, folder_too: bool) -> set[str]:
    """The words of a file's name (without extension) and of its folder's, split as identifiers."""
    folder, _, name = path.rpartition("/")
    stem = name.split(".", 1)[0] if not name.startswith(".") else name
    parts = {p.lower() for p in re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+", stem)}
    parent = folder.rpartition("/")[2]
    if parent and folder_too:
        parts.update(
            p.lower() for p in re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+", parent)
        )
    return parts


def _path_overlap(words: tuple[str, ...], parts: set[str], min_shared: int) -> int:
    """How many question words a file's name and folder hold, a shared beginning of `min_shared`
    letters counting."""
    n = 0
    for word in words:
        if word in parts:
            n += 1
            continue
        for part in parts:
            short, long_ = sorted((word, part), key=len)
            if len(short) >= min_shared and long_.startswith(short):
                n += 1
                break
    return n


def file_key(symbol: str) -> str:
    """The name_key of the files named like a symbol's last part: `Router` -> Router.php, router.go,
    routers.py (rag.store.format.name_key)."""
    return name_key(_last_name(symbol))


def definitions(hits: list[Hit], symbol: str, weights: RankingWeights = DEFAULTS) -> list[Hit]:
    """The passages among `hits` that define `symbol`."""
    names = tuple(dict.fromkeys((symbol, _last_name(symbol))))
    return [h for h in hits if _defines(h, names, weights)]


def boost(
    hits: list[Hit],
    shape: Shape,
    demoted: list[float],
    reasons: list[str | None],
    weights: RankingWeights = DEFAULTS,
) -> tuple[list[float], list[str | None]]:
    """Each candidate's score for the final order: its `demoted` score (its score times its
    demotion factor) plus the code-aware boosts, all in units of the best candidate's; and why
    each was boosted, if it was."""
    w = weights
    scores = demoted
    if w.data_factor != 1.0 or w.example_factor != 1.0:
        factors: dict[str, float] = {}  # path -> its markup/data and example factors, looked up once a file
        for h in hits:
            if h.chunk.path not in factors:
                path = h.chunk.path
                factors[path] = (w.data_factor if _DATA_PATH.search(path) else 1.0) * (
                    w.example_factor if _EXAMPLE_PATH.search(path) else 1.0
                )
        scores = [s * factors[h.chunk.path] for s, h in zip(scores, hits)]
    if w.score_power != 1.0:  # after every demotion: the order without boosts stays the same
        scores = [max(s, 0.0) ** w.score_power for s in scores]
    why: list[str | None] = [None] * len(hits)
    if not scores:
        return scores, why
    top = max(scores)
    out = list(scores)
    if shape.symbol is not None and w.definition_boost:
        names = tuple(dict.fromkeys((shape.symbol, _last_name(shape.symbol))))
        wanted = file_key(shape.symbol)
        defining = [i for i, h in enumerate(hits) if _defines(h, names, w)]
        inner = _opening_windows(hits, defining, names) if w.definition_line else set()
        for i in defining:
            h = hits[i]
            if i not in inner:
                out[i] += (
                    top
                    * w.definition_boost
                    * (w.definition_file if name_key(h.chunk.path) == wanted else 1.0)
                )
                why[i] = f"defines {shape.symbol}"
    if shape.words and w.path_mult:
        cache: dict[str, float] = {}
        for i, h in enumerate(hits):
            ratio = cache.get(h.chunk.path)
            if ratio is None:
                parts = _path_parts(h.chunk.path, w.path_folder)
                ratio = cache[h.chunk.path] = _path_overlap(shape.words, parts, w.path_min) / len(shape.words)
            if ratio >= w.path_share:
                out[i] += scores[i] * w.path_mult * ratio
                why[i] = why[i] or "its file's name holds words of the question"
    if w.coherence_mult:
        _add_coherence(hits, scores, reasons, out, why, w)
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
    weights: RankingWeights,
) -> None:
    """Rank up the code files that hold much of the pool's score: a file's best chunk gains
    `coherence_mult` times the file's share (relative to the file that holds the most), its other
    chunks `coherence_rest` of that, so the file's second passage is not overtaken by the best of
    files that merely mention the question. Prose and demoted files (tests, licences, change logs)
    gain nothing: many sections or tests repeat the words of what they document or test."""
    found = file_shares([h.chunk.path for h in hits], scores, scores)
    if found is None:
        return
    share_of, best = found
    left_out = {  # the files that gain nothing, decided once a file (reasons: the demotion of each hit)
        path
        for path, i in best.items()
        if (weights.coherence_code and not is_code(hits[i]))
        or (weights.coherence_skip_demoted and reasons[i])
    }
    for i, h in enumerate(hits):
        path = h.chunk.path
        if path in left_out:
            continue
        share = share_of[path]
        if best[path] == i:
            out[i] += scores[i] * weights.coherence_mult * share
        else:
            out[i] += scores[i] * weights.coherence_mult * weights.coherence_rest * share
        why[i] = why[i] or COHERENCE_REASON


def rank_hits(
    hits: list[Hit],
    k: int,
    *,
    tests: bool = True,
    dedupe: bool = True,
    mix: bool = True,
    boilerplate: bool = True,
    question: str | None = None,
    spread: bool = True,
    weights: RankingWeights = DEFAULTS,
) -> list[Hit]:
    """Return the final top k from scored candidates sorted best first; a demoted hit says why
    (Hit.demoted). With `question`, the code-aware boosts apply, a hit they moved above a
    better-scored one says why (Hit.boosted), and (`spread`) the passages after the first PROMPT_K
    cover more files (spread_files; the semantic stage, which reorders this list, asks for it
    unspread and spreads its own)."""
    reasons = [_demoted(h.chunk.path, tests, boilerplate) for h in hits]
    factor = weights.test_factor
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
        final, boosted = boost(hits, question_shape(question), base, reasons, weights)
        order = sorted(range(len(hits)), key=lambda i: (-final[i], i))
        # a boost is named only where it moved a passage above one that scored more
        best_below = 0.0
        for i in reversed(order):
            if base[i] >= best_below:
                boosted[i] = None
            best_below = max(best_below, base[i])
    ranked = [hits[i]._replace(demoted=reasons[i], boosted=boosted[i], ranked=final[i]) for i in order]
    spreading = spread and question is not None and weights.spread != 1.0 and k > PROMPT_K
    if dedupe:
        # spreading chooses from past the top k: the whole pool while it is the same for every k (up to
        # k = 10: min_candidates), so that the first passages are too; twice k beyond (deduplicating is
        # quadratic)
        fixed_pool = k * weights.candidates_per_k <= weights.min_candidates
        want = (len(ranked) if fixed_pool else 2 * k) if spreading else max(k, weights.mix_depth)
        ranked = _drop_duplicates(ranked, want, weights.duplicate_jaccard)
    top = ranked if spreading else ranked[:k]
    if mix and k >= PROMPT_K:
        # spreading hands it the whole list: it looks at the same ranks (5 to mix_depth) either way
        top = _mix(top, [] if spreading else ranked[k:], weights)
    if spreading:
        top = spread_files(top, k, weights=weights)
    return top


def spread_files(
    hits: Sequence[Hit], k: int, values: Sequence[float] | None = None, weights: RankingWeights = DEFAULTS
) -> list[Hit]:
    """Return the top k of `hits` (in their final order, each valued by `values`, by default its
    lexical value: Hit.ranked, else its score): the first
    PROMPT_K as they are (a prompt's passages), then each next one chosen greedily by its value x
    `spread` ** (the passages of its file already chosen), so that a longer list covers more files
    rather than more windows of one. The first passages are the same for every k."""
    spread, free = weights.spread, weights.spread_free
    if spread == 1.0 or len(hits) <= PROMPT_K or k <= PROMPT_K:
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
                values[left[m]] * spread ** max(0, listed.get(hits[left[m]].chunk.path, 0) - free + 1),
                -m,
            ),
        )
        h = hits[left.pop(j)]
        chosen.append(h)
        listed[h.chunk.path] = listed.get(h.chunk.path, 0) + 1
    return chosen


def _drop_duplicates(hits: list[Hit], want: int, jaccard: float) -> list[Hit]:
    kept: list[Hit] = []
    seen: list[frozenset[str]] = []
    for hit in hits:
        words = frozenset(map(str.lower, _WORD.findall(hit.chunk.text)))  # each word lowered, at C speed
        if any(_similar(words, s, jaccard) for s in seen):
            continue
        kept.append(hit)
        seen.append(words)
        if len(kept) >= want:
            break
    return kept


def _similar(a: frozenset[str], b: frozenset[str], threshold: float) -> bool:
    """Jaccard(a, b) >= threshold; sets whose sizes alone rule it out (the overlap is at most the
    smaller, the union at least the larger) are not intersected."""
    small, large = (len(a), len(b)) if len(a) <= len(b) else (len(b), len(a))
    if small < threshold * large:
        return False
    return _jaccard(a, b) >= threshold


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


def _mix(top: list[Hit], rest: list[Hit], weights: RankingWeights) -> list[Hit]:
    head = top[:PROMPT_K]
    kinds = {_is_doc(h) for h in head}
    if len(kinds) != 1:
        return top
    missing = not kinds.pop()
    pool = (top[PROMPT_K:] + rest)[: weights.mix_depth - PROMPT_K]  # the same ranks whatever k
    best = next((h for h in pool if _is_doc(h) == missing), None)
    if best is None or best.score < weights.mix_ratio * head[-1].score:
        return top
    out = head[:-1] + [best] + [h for h in top[PROMPT_K - 1 :] if h is not best]
    return out[: len(top)]
