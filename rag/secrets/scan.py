"""Run the rules over a text as written and as it reads; redact what they find."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from rag.secrets.decoded import decoded_view
from rag.secrets.finders import Finder
from rag.secrets.rules import RULES, Rule


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret found in a text: its kind and the character span that is redacted."""

    kind: str
    start: int
    end: int


_LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def _anycase_matches(rule: Rule, text: str, lowered: str) -> Iterator[re.Match[str]]:
    """Find `rule.regex` in `text` at the candidates that `rule.scan` finds in `lowered`."""
    assert rule.scan is not None
    if len(lowered) != len(text):  # a few characters lengthen when lowered (İ): search the text itself
        yield from rule.regex.finditer(text)
        return
    pos = 0
    while (hit := rule.scan.search(lowered, pos)) is not None:
        match = rule.regex.match(text, hit.start())
        if match is None:  # a Unicode case-folding difference: skip the candidate
            pos = hit.start() + 1
            continue
        yield match
        pos = max(match.end(), hit.start() + 1)


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
    if len(found) < 2:
        return found
    found.sort(key=lambda f: (f.start, -f.end))
    kept = [found[0]]
    for finding in found[1:]:
        if finding.start >= kept[-1].end:
            kept.append(finding)
    return kept


def _gate_plan() -> tuple[
    tuple[tuple[Callable[[str], object], bool], ...], tuple[tuple[int, Rule | Finder], ...]
]:
    """Return the distinct gates (gate, whether it is given the lowered text), and each rule in
    order with the index of its gate: rules that share a gate (the same literal, see
    rules._search) have its answer from one test per text."""
    gates: dict[tuple[int, bool], int] = {}
    distinct: list[tuple[Callable[[str], object], bool]] = []
    plan: list[tuple[int, Rule | Finder]] = []
    for rule in RULES:
        lowered = not isinstance(rule, Finder) and rule.scan is not None
        key = (id(rule.gate), lowered)
        if key not in gates:
            gates[key] = len(distinct)
            distinct.append((rule.gate, lowered))
        plan.append((gates[key], rule))
    return tuple(distinct), tuple(plan)


_GATES, _PLAN = _gate_plan()


def _scan(text: str) -> list[Finding]:
    """Run every rule over `text` as it is; the findings may overlap."""
    found: list[Finding] = []
    # names in any case are searched in the lowered text (every text has such rules)
    lowered = text.lower()
    passed = [gate(lowered if low else text) for gate, low in _GATES]
    for gate, rule in _PLAN:
        if not passed[gate]:
            continue
        if isinstance(rule, Finder):
            found.extend(Finding(kind, start, end) for kind, start, end in rule.find(text))
            continue
        matches = rule.regex.finditer(text) if rule.scan is None else _anycase_matches(rule, text, lowered)
        for match in matches:
            if rule.check is None or rule.check(match):
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
