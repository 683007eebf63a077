"""The query flow, retrieve -> prompt -> generate, in one place (the CLI and the library call it).
The answer and its citation check are rag.answer.citations'."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from rag.retrieval.retrieve import Request, Retrieval, retrieve

if TYPE_CHECKING:  # the model's side is imported when a prompt is built: a query for passages never loads it
    from rag.answer.backends import Backend, OnText
    from rag.answer.citations import Answer
    from rag.answer.prompts import Prompt


class Outcome(NamedTuple):
    """What one question came to: the passages retrieved, the prompt built from them, the answer."""

    retrieval: Retrieval
    prompt: Prompt | None  # None when nothing was retrieved, or only passages were asked for
    answer: Answer | None  # None when no model was asked


def ask(
    index_path: str | os.PathLike[str],
    request: Request,
    backend: Backend | None = None,
    *,
    build_prompt: bool = True,
    on_retrieved: Callable[[Retrieval], None] | None = None,
    on_text: OnText | None = None,
) -> Outcome:
    """Answer a question from the index: retrieve its passages, build the prompt (unless
    `build_prompt` is off), and with a backend generate the answer, streamed to `on_text`.
    `on_retrieved` sees the retrieval before any model is asked (to print its notes first).

    When nothing is retrieved no model is called: with a backend, the answer is empty, stop_reason NO_CONTEXT.
    """
    retrieval = retrieve(index_path, request)
    if on_retrieved is not None:
        on_retrieved(retrieval)
    if not retrieval.hits:
        return Outcome(
            retrieval, None, None if backend is None else no_context_answer(request.question, backend)
        )
    if not build_prompt:
        return Outcome(retrieval, None, None)
    from rag.answer.prompts import build_prompt as build

    prompt = build(request.question, retrieval.hits)
    return Outcome(retrieval, prompt, None if backend is None else generate(prompt, backend, on_text))


def no_context_answer(question: str, backend: Backend) -> Answer:
    """The answer when no passage matched: empty, no model called."""
    from rag.answer.citations import NO_CONTEXT, Answer

    return Answer(question, "", (), (), backend.name, backend.model, {}, NO_CONTEXT)


def generate(prompt: Prompt, backend: Backend, on_text: OnText | None = None) -> Answer:
    """Send `prompt` to `backend` and check the citations of its answer."""
    from rag.answer.citations import Answer, check_citations

    gen = backend.generate(prompt, on_text)
    citations = check_citations(gen.text, gen.api_citations, prompt.hits)
    return Answer(
        prompt.question,
        gen.text,
        prompt.hits,
        tuple(citations),
        backend.name,
        gen.model or backend.model,
        gen.usage,
        gen.stop_reason,
    )
