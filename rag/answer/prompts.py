"""Prompt building: retrieved passages framed as documents, then the question; templates live in prompts/."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from rag.ranking.hits import Hit

if TYPE_CHECKING:
    from string import Template

# prompts/ of the source checkout, through the link rag/answer/templates; the wheel holds the files there
TEMPLATES = Path(__file__).resolve().parent / "templates"

# Anything that could open or close one of our framing elements, e.g. "</document>", "< /Documents",
# "<question": its "<" becomes "&lt;" so a passage cannot end its document or start a new one.
_FRAMING_TAG = re.compile(r"<(?=\s*/?\s*(?:documents?|question)(?![\w-]))", re.IGNORECASE)
# the planning prompt's framing (rag.answer.plan) adds its own elements
_PLAN_TAG = re.compile(r"<(?=\s*/?\s*(?:documents?|question|passages|repository)(?![\w-]))", re.IGNORECASE)
# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): invisible when rendered, so
# "</doc\u00admen\u200bt>" reads as a closing tag to a model while it slips past _FRAMING_TAG
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
# in a double-quoted attribute only these matter; ">" stays readable ("Install > Linux")
_ATTRIBUTE_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", '"': "&quot;", "\n": " ", "\r": " "})


@dataclass(frozen=True, slots=True)
class Prompt:
    """What is sent to a model: instructions, then the documents and the question."""

    system: str
    user: str
    hits: tuple[Hit, ...]
    question: str = ""
    follow_ups: int = 0  # searches the model may make before it answers (rag.answer.followups)

    @property
    def text(self) -> str:
        """Return the prompt as one text, for a model that takes no separate system prompt (`claude -p`)."""
        return render("standalone", system=self.system, user=self.user)


@cache
def template(name: str) -> Template:
    """Return the template `prompts/<name>.md`."""
    from string import Template  # loaded on first use: the retrieval-only path builds no prompt

    text = (TEMPLATES / f"{name}.md").read_text(encoding="utf-8")
    # a template file ends with a newline; the text it stands for does not
    return Template(text.removesuffix("\n"))


def render(name: str, **values: object) -> str:
    """Fill template `name` with `values` (every placeholder must be given)."""
    return template(name).substitute(values)


def normalise(text: str) -> str:
    """Return `text` as a model reads it: NFKC (full-width and small forms such as "＜／" become
    "</"), without default-ignorable code points (zero-width characters, soft hyphens)."""
    import unicodedata  # loaded with the first prompt: the retrieval-only path builds none

    if text.isascii():
        return text
    return _IGNORABLE.sub("", unicodedata.normalize("NFKC", _IGNORABLE.sub("", text)))


def neutralise(text: str, plan: bool = False) -> str:
    """Normalise `text` (see normalise), then escape whatever in it looks like an opening or closing
    tag of our framing (with `plan`, the planning prompt's): a look-alike is escaped as its ASCII
    form is."""
    return (_PLAN_TAG if plan else _FRAMING_TAG).sub("&lt;", normalise(text))


def attribute(value: str | None) -> str:
    """Normalise `value` and escape it for a double-quoted attribute on one line."""
    return normalise(value or "").translate(_ATTRIBUTE_ESCAPES)


def document_title(hit: Hit) -> str:
    """Return the label of a passage: path:start-end of the lines sent, the match's lines and symbol."""
    c, m = hit.passage, hit.chunk
    match = (
        ""
        if (c.start_line, c.end_line) == (m.start_line, m.end_line)
        else f" (match {m.start_line}-{m.end_line})"
    )
    return render(
        "title", path=c.path, start_line=c.start_line, end_line=c.end_line, match=match, symbol=m.symbol or ""
    ).strip()


def question_text(question: str) -> str:
    """Return the question part of the user message."""
    return render("question", question=neutralise(question.strip()))


def documents_text(hits: Sequence[Hit], first_index: int = 1) -> str:
    """Frame each hit as one labelled document, numbered from `first_index`."""
    return "\n".join(
        render(
            "document",
            index=i,
            path=attribute(h.passage.path),
            start_line=h.passage.start_line,
            end_line=h.passage.end_line,
            match=f"{h.chunk.start_line}-{h.chunk.end_line}",
            symbol=attribute(h.chunk.symbol),
            context=attribute(h.chunk.context),
            text=neutralise(h.passage.text),
        )
        for i, h in enumerate(hits, first_index)
    )


def build_prompt(question: str, hits: Sequence[Hit], follow_ups: int = 0) -> Prompt:
    """Frame each hit as one labelled document, documents first and the question last; with
    `follow_ups`, the system prompt says when and how to search again (rag.answer.followups)."""
    user = render("user", documents=documents_text(hits), question=question_text(question))
    return Prompt(
        system=system_prompt(follow_ups),
        user=user,
        hits=tuple(hits),
        question=question.strip(),
        follow_ups=follow_ups,
    )


def system_prompt(follow_ups: int = 0) -> str:
    """The answer's system prompt: the rules, and with `follow_ups`, when and how to search again.
    It depends on nothing else, so that a backend can start with it before the passages are known."""
    system = render("system")
    if follow_ups:
        system += "\n\n" + render("search_system", limit=follow_ups)
    return system
