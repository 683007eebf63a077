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


def _scan(text: str) -> list[Finding]:
    """Run every rule over `text` as it is; the findings may overlap."""
    found: list[Finding] = []
    lowered: str | None = None
    # (gate, whether it is given the lowered text) -> its answer: rules that share a gate (the same
    # literal, see rules._search) scan the text for it once
    passed: dict[tuple[int, bool], bool] = {}

    def passes(gate: Callable[[str], object], of: str) -> bool:
        key = (id(gate), of is lowered)
        if key not in passed:
            passed[key] = bool(gate(of))
        return passed[key]

    for rule in RULES:
        if isinstance(rule, Finder):
            if passes(rule.gate, text):
                found.extend(Finding(kind, start, end) for kind, start, end in rule.find(text))
            continue
        matches: Iterator[re.Match[str]]
        if rule.scan is None:
            if not passes(rule.gate, text):
                continue
            matches = rule.regex.finditer(text)
        else:
            if lowered is None:
                lowered = text.lower()
            if not passes(rule.gate, lowered):
                continue
            matches = _anycase_matches(rule, text, lowered)
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
