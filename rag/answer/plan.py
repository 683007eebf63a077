"""Search planning: before retrieval, the model that will answer writes the keyword searches.

A plain question ("why does my task never run?") rarely holds the words of the code that answers
it; the model does know how code is written. One short call shows it the question, the repository's
name and languages and what the question's own words found first (path:lines symbol, framed as
data), and asks for up to MAX_SEARCHES keyword searches. Retrieval then searches the question and
those words in one query (rag.retrieval.search). Whatever goes wrong with the call (a timeout, an
HTTP error, a refusal, a reply with no words) costs only the plan: the question is searched alone,
with a one-line note. docs/benchmarks.md has the figures.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

from rag.answer.defaults import FALLBACK_SEARCH_MODEL, SEARCH_MODEL_ENV
from rag.answer.prompts import Prompt, attribute, neutralise, render
from rag.errors import BackendError

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from rag.answer.backends import Backend
    from rag.retrieval.results import Glance

MAX_SEARCHES = 3  # searches kept from a reply
MAX_TERMS = 16  # words kept of one search
MAX_CHARS = 300  # characters kept of one search
PLAN_MAX_TOKENS = 200  # a reply is a few lines of words
PLAN_TIMEOUT = 20.0  # seconds the SDK call may take (its retries included); `claude -p` gets PLAN_CLI_TIMEOUT
PLAN_CLI_TIMEOUT = 60.0  # `claude -p` starts a whole program first


# the names line's last sentence, with a first search's passages shown and without
NAMES_FROM_PASSAGES = (
    "Take names from the passages above where they fit the question, not because they ranked high, "
    "and add the names you expect the answering code to have."
)
NAMES_EXPECTED = "Give the names you expect the answering code to have."


class Plan(NamedTuple):
    """What the planning call came to: the searches to run with the question (none when it failed,
    with `note` saying why), the model asked and the tokens it used."""

    searches: tuple[str, ...]
    model: str
    usage: dict[str, int]
    note: str | None = None  # one line for stderr when the question is searched alone


def planning_prompt(question: str, glance: Glance) -> Prompt:
    """Return the planning prompt: the repository's name and languages, the question's own first
    passages as `path:start-end symbol` lines, and the question verbatim."""
    candidates = "\n".join(
        neutralise(_one_line(f"{c.path}:{c.start_line}-{c.end_line} {c.symbol or ''}".strip()), plan=True)
        for c in glance.candidates
    )
    user = render(
        "plan",
        repository=attribute(glance.repository),
        languages=attribute(", ".join(glance.languages) or "unknown"),
        passages=render("plan_passages", candidates=candidates) if candidates else "",
        names_hint=NAMES_FROM_PASSAGES if candidates else NAMES_EXPECTED,
        question=neutralise(question.strip(), plan=True),
    )
    return Prompt(system=render("plan_system"), user=user, hits=(), question=question.strip())


def prepare_planning(backend: Backend, model: str | None = None) -> AbstractContextManager[None]:
    """Start what the planning call will need (a `claude -p`) while the index opens and is glanced at."""
    return backend.prepare_completion(render("plan_system"), model or search_model())


def _one_line(text: str) -> str:
    return " ".join(text.split())


def plan_search(backend: Backend, prompt: Prompt, model: str | None = None) -> Plan:
    """Ask `backend` for the searches of a planning prompt, with the search model (`model`, else
    search_model()); any failure is a Plan with no searches and a note, never an exception."""
    model = model or search_model()
    timeout = PLAN_CLI_TIMEOUT if backend.name == "claude" else PLAN_TIMEOUT
    try:
        reply = backend.complete(prompt, model=model, max_tokens=PLAN_MAX_TOKENS, timeout=timeout)
    except BackendError as exc:
        return Plan((), model, {}, f"Search planning failed ({exc}): searched the question's own words")
    if reply.stop_reason == "refusal":
        return Plan(
            (), model, reply.usage, "The model declined to plan the search: searched the question's own words"
        )
    searches = parse_searches(reply.text, prompt.question)
    if not searches:
        return Plan(
            (), model, reply.usage, "The model's search plan held no words: searched the question's own words"
        )
    return Plan(searches, reply.model or model, reply.usage)


# a line's leading list marker: "-", "*", "•", "1.", "2)", "#"
_BULLET = re.compile(r"^\s*(?:[-*•+>]|\d{1,2}[.):]|#+|\(\d{1,2}\))\s*")
# a label before the words: "names:", "Search 2:", "behaviour -" (a colon or dash then a space)
_LABEL = re.compile(r"^\s*[A-Za-z][A-Za-z0-9 /'()-]{0,30}?\s*(?::|\s[-–—])\s+")
_PROSE = re.compile(
    r"^(here|sure|okay|ok|these|this|i\b|i'|note|searches|output|search queries|the searches)\b",
    re.IGNORECASE,
)
_QUOTES = "\"'`“”‘’«»"


def parse_searches(text: str, question: str = "") -> tuple[str, ...]:
    """Return the keyword searches in a model's reply: one a line, at most MAX_SEARCHES, each at
    most MAX_TERMS words. Tolerates what models add: code fences, a JSON list or object, bullets,
    numbering, labels, quotes and a line of prose around them; a search that repeats the question
    is dropped. A word repeated in a search is kept: its count weighs it, as the model wrote it."""
    lines = _json_searches(text)
    if lines is None:
        lines = [line for line in text.splitlines() if not line.strip().startswith("```")]
    searches: list[str] = []
    for line in lines:
        line = _BULLET.sub("", line.strip())
        if not line or line.endswith(":") or _PROSE.match(line):
            continue
        line = _LABEL.sub("", line, count=1) if _LABEL.match(line) and len(line.split()) > 2 else line
        words = [w.strip(_QUOTES + ",;") for w in line.split()]
        words = [w for w in words if w]
        if words:
            searches.append(" ".join(words))
    if len(searches) > MAX_SEARCHES:  # one word a line: the lines are one search's words
        if sum(len(s.split()) <= 2 for s in searches) * 2 > len(searches):
            searches = [" ".join(searches)]
        searches = searches[:MAX_SEARCHES]
    out: list[str] = []
    asked = " ".join(question.lower().split())
    for s in searches:
        s = " ".join(s.split()[:MAX_TERMS])[:MAX_CHARS].strip()
        if s and s.lower() != asked and s not in out:
            out.append(s)
    return tuple(out)


def _json_searches(text: str) -> list[str] | None:
    """The strings of a reply that is a JSON list or object (in a code fence or not), else None."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    body = body.strip()
    if not body.startswith(("[", "{")):
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    out: list[str] = []

    def collect(value: object) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            for item in value:
                collect(item)
        elif isinstance(value, dict):
            for item in value.values():
                collect(item)

    collect(data)
    return out


_HAIKU = re.compile(r"['\"](claude-haiku-(\d+)-(\d+))['\"]")


def search_model() -> str:
    """The model that plans searches: RAG_SEARCH_MODEL, else the fastest current one the installed
    SDK lists (the newest Claude Haiku), else FALLBACK_SEARCH_MODEL."""
    return os.environ.get(SEARCH_MODEL_ENV, "").strip() or _newest_haiku() or FALLBACK_SEARCH_MODEL


@cache
def _newest_haiku() -> str | None:
    """The newest `claude-haiku-X-Y` of the SDK's model list (anthropic.types.Model), read from its
    source: importing the SDK takes a third of a second, which `claude -p` need not pay."""
    from importlib.util import find_spec
    from pathlib import Path

    spec = find_spec("anthropic")
    if spec is None or not spec.submodule_search_locations:
        return None
    try:
        text = (Path(next(iter(spec.submodule_search_locations))) / "types" / "model.py").read_text("utf-8")
    except OSError:
        return None
    found = [(int(major), int(minor), name) for name, major, minor in _HAIKU.findall(text)]
    return max(found)[2] if found else None


def searched_line(searches: Sequence[str]) -> str:
    """The stderr note of what was searched besides the question."""
    return "searched: " + " | ".join(searches)
