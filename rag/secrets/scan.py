"""Run the rules over a text as written and as it reads; redact what they find."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator

from rag.secrets.anywhere import DEFAULT_KIND, PUBLISHABLE, encrypted_block, public_key
from rag.secrets.decoded import decoded_view, encoded_texts
from rag.secrets.finders import Budget, Finder, Finding, Rescanning, WordFinder, WordGate
from rag.secrets.nature import digest_cells
from rag.secrets.rules import RULES, Rule

__all__ = ["Finding", "find_secrets", "redact"]


_LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
# an example's fill in a token of a known shape (AKIAXXXXXXXXXXXXXXXX, ghp_xxxx...): no key holds
# eight in a row (a password may hold `xxxx`)
_FILL = re.compile(r"[Xx]{8}")


def _anycase_matches(rule: Rule, text: str, lowered: str, at: list[int]) -> Iterator[re.Match[str]]:
    """Find `rule.regex` in `text` at the occurrences `at` of its word where `rule.scan` matches
    the lowered text (of the same length)."""
    assert rule.scan is not None
    scan, pos = rule.scan, 0
    if len(at) * 64 > len(text):  # frequent: a search, led by the word, skips in C what a test at
        hits: Iterator[int] = _searched(scan, lowered)  # each occurrence looks at in Python
    else:  # (a megabyte of `key,`: 250,000 of them; most texts: a few)
        hits = (hit for hit in at if scan.match(lowered, hit) is not None)
    for hit in hits:
        if hit < pos:
            continue
        match = rule.regex.match(text, hit)
        if match is None:  # a Unicode case-folding difference: skip the candidate
            continue
        yield match
        pos = max(match.end(), hit + 1)


def _searched(pattern: re.Pattern[str], text: str) -> Iterator[int]:
    """Yield every position where `pattern` matches `text`, overlapping ones too."""
    pos = 0
    while (found := pattern.search(text, pos)) is not None:
        yield found.start()
        pos = found.start() + 1


def find_secrets(text: str) -> list[Finding]:
    """Find high-confidence secrets in `text`, in order, without overlaps: as written, and as they
    read once escapes are decoded and values split over lines are joined (see decoded_view)."""
    found = _scan(text)
    view = decoded_view(text)
    if view is not None:
        for f in _scan(view.text()):
            span = view.original(f.start, f.end)
            if span is not None:
                found.append(Finding(f.kind, *span))
    for start, end, decoded in encoded_texts(text):  # a block whose text holds a secret: whole
        if start >= 3 and text.startswith("pk.", start - 3) and PUBLISHABLE.match(text, start - 3):
            continue  # (the body of a public token: Mapbox's names its account)
        inner = _scan(decoded)
        if inner:
            found.append(Finding(inner[0].kind, start, end))
    found = [
        f for f in found if not public_key(text[f.start : f.end]) and not _in_encrypted_block(text, f.start)
    ]
    if any(f.kind == DEFAULT_KIND for f in found) and (
        "INSERT" in text or "insert" in text or "COPY" in text
    ):
        cells = digest_cells(text)  # (a dump's digest column: its values are kept, but a credential's)
        starts = [a for a, _ in cells]
        found = [f for f in found if f.kind != DEFAULT_KIND or not _within(cells, starts, f)]
    if len(found) < 2:
        return found
    # overlapping spans become one, named by a rule's context where one names it (the default's
    # span reaches past it when literals joined by `+` follow the one after a credential's name)
    found.sort(key=lambda f: (f.start, -f.end, f.kind == DEFAULT_KIND))
    kept = [found[0]]
    for finding in found[1:]:
        last = kept[-1]
        if finding.start >= last.end:
            kept.append(finding)
        elif finding.end > last.end or last.kind == DEFAULT_KIND != finding.kind:
            kind = finding.kind if last.kind == DEFAULT_KIND else last.kind
            kept[-1] = Finding(kind, last.start, max(last.end, finding.end))
    return kept


def _within(cells: list[tuple[int, int]], starts: list[int], f: Finding) -> bool:
    """Whether the finding lies inside one of `cells` (in order; `starts` their starts)."""
    i = bisect.bisect_right(starts, f.start) - 1
    return i >= 0 and f.end <= cells[i][1]


def _in_encrypted_block(text: str, at: int) -> bool:
    """Whether the finding at `at` stands in a block encrypted for the repository (see
    encrypted_block); a line longer than a block's lines are is none."""
    start = text.rfind("\n", max(0, at - 4096), at) + 1
    return (start > 0 or at <= 4096) and encrypted_block(text, start)


def _gate_plan() -> tuple[
    tuple[Callable[[str], object] | WordGate, ...],
    tuple[tuple[int, Rule | Finder | Rescanning | WordFinder], ...],
]:
    """Return the distinct gates (a test of the text, or a WordGate), and each rule in order with
    the index of its gate (-1: none): rules that share a gate (the same literal, see
    rules._search) have its answer from one test per text."""
    gates: dict[int, int] = {}
    distinct: list[Callable[[str], object] | WordGate] = []
    plan: list[tuple[int, Rule | Finder | Rescanning | WordFinder]] = []
    for rule in RULES:
        gate = None if isinstance(rule, WordFinder) else rule.gate
        if gate is not None and id(gate) not in gates:
            gates[id(gate)] = len(distinct)
            distinct.append(gate)
        plan.append((-1 if gate is None else gates[id(gate)], rule))
    return tuple(distinct), tuple(plan)


_GATES, _PLAN = _gate_plan()


def _line_matches(rule: Rule, text: str, occurrences: list[list[int]]) -> Iterator[re.Match[str]]:
    """Match `rule.regex` (whole lines) at the start of each line that holds an occurrence."""
    pos = 0
    for start in _line_starts(text, sorted({at for positions in occurrences for at in positions})):
        if start < pos:
            continue
        match = rule.regex.match(text, start)
        if match is not None:
            yield match
            pos = match.end()


def _line_starts(text: str, positions: list[int]) -> Iterator[int]:
    """Yield the start of each line that holds one of `positions` (ascending), once: a line break
    is looked for back to the previous position only (back to the text's start from each, one
    line of `password='` took 1.6 s per MB at 1 MB, 2.7 s per MB at 2 MB)."""
    start, last = -1, 0
    for at in positions:
        newline = text.rfind("\n", last, at)
        if newline != -1 or start == -1:
            start = text.rfind("\n", 0, at) + 1 if start == -1 else newline + 1
            yield start
        last = at


def _lowered(text: str) -> str:
    """The text in lower case, of the same length: the few characters that lengthen when lowered
    (İ) are kept as they are, so that an offset in one is the same in the other."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    lowered = "İ".join(part.lower() for part in text.split("İ"))  # the one such character today
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def _positions(lowered: str, word: str) -> list[int]:
    """Where `word` occurs in `lowered` (str.find: several times faster than a regex search)."""
    out = []
    at = lowered.find(word)
    while at != -1:
        out.append(at)
        at = lowered.find(word, at + 1)
    return out


def _scan(text: str) -> list[Finding]:
    """Run every rule over `text` as it is; the findings may overlap."""
    found: list[Finding] = []
    # names in any case are searched in the lowered text (every text has such rules); each word's
    # occurrences are found once and shared by the rules and finders that name it, and each gate
    # is tested once, when a rule that needs it first comes
    lowered = _lowered(text)
    occurrences: dict[str, list[int]] = {}

    def where(word: str) -> list[int]:
        if word not in occurrences:
            occurrences[word] = _positions(lowered, word)
        return occurrences[word]

    passed: list[bool | None] = [None] * len(_GATES)
    budget = Budget.for_text(text)  # what the word finders may read, shared by them all
    for gate, rule in _PLAN:
        words = (rule.word,) if isinstance(rule, WordFinder) else getattr(rule, "words", ())
        if words and not any([where(word) for word in words]):
            continue
        if gate >= 0:
            if passed[gate] is None:
                test = _GATES[gate]
                if isinstance(test, WordGate):
                    each = [where(word) for word in test.words]
                    if sum(map(len, each)) * 64 > len(text):  # frequent: one search costs less
                        passed[gate] = test.anywhere(text, lowered)
                    else:
                        passed[gate] = any(
                            test.test(text, lowered, i) for positions in each for i in positions
                        )
                else:
                    passed[gate] = bool(test(text))
            if not passed[gate]:
                continue
        if isinstance(rule, Finder):
            found.extend(Finding(kind, start, end) for kind, start, end in rule.find(text))
            continue
        if isinstance(rule, Rescanning):
            found.extend(Finding(kind, start, end) for kind, start, end in rule.find(text, find_secrets))
            continue
        if isinstance(rule, WordFinder):
            at = occurrences[rule.word]
            found.extend(
                Finding(kind, start, end) for kind, start, end in rule.find(text, lowered, at, budget)
            )
            continue
        if rule.lines:
            matches: Iterator[re.Match[str]] = _line_matches(rule, text, [where(word) for word in rule.words])
        elif rule.scan is None:
            matches = rule.regex.finditer(text)
        else:
            matches = _anycase_matches(rule, text, lowered, occurrences[rule.words[0]])
        for match in matches:
            if (rule.check is None or rule.check(match)) and not _FILL.search(text, *match.span(rule.group)):
                found.append(Finding(rule.kind, match.start(rule.group), match.end(rule.group)))
    return found


def redact(text: str) -> tuple[str, dict[str, int]]:
    """Replace each secret by `[REDACTED:<kind>]`, keeping every line break; count them by kind."""
    findings = find_secrets(text)
    if not findings:
        return text, {}
    counts: dict[str, int] = {}
    parts: list[str] = []
    pos = 0
    for f in findings:
        parts.append(text[pos : f.start])
        parts.append(f"[REDACTED:{f.kind}]")
        parts.extend(_LINE_BREAK.findall(text, f.start, f.end))
        counts[f.kind] = counts.get(f.kind, 0) + 1
        pos = f.end
    parts.append(text[pos:])
    return "".join(parts), counts
