"""The query flow, plan -> retrieve -> prompt -> generate, in one place (the CLI and the library
call it). The plan is rag.answer.plan's; the answer and its citation check are rag.answer.citations'."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import ExitStack
from typing import TYPE_CHECKING, NamedTuple

from rag.retrieval.results import Glance
from rag.retrieval.retrieve import Request, Retrieval, retrieve

if TYPE_CHECKING:  # the model's side is imported when a prompt is built: a query for passages never loads it
    from rag.answer.citations import Answer
    from rag.answer.followups import SearchTool
    from rag.answer.generation import Backend, OnRetract, OnSearch, OnText
    from rag.answer.plan import Plan
    from rag.answer.prompts import Prompt
    from rag.store.paths import Where


class Planning(NamedTuple):
    """Who plans the search: `backend` with `model` (None: rag.answer.plan.search_model()). With no
    backend the planning prompt is only built (to be shown: --show-prompt), and the question is
    searched alone."""

    backend: Backend | None
    model: str | None = None


class Outcome(NamedTuple):
    """What one question came to: the passages retrieved, the prompt built from them, the answer,
    and the search plan (its prompt, and what the model made of it)."""

    retrieval: Retrieval
    prompt: Prompt | None  # None when nothing was retrieved, or only passages were asked for
    answer: Answer | None  # None when no model was asked
    plan_prompt: Prompt | None = None  # None when the search was not planned
    plan: Plan | None = None  # None when no planning call was made


def ask(
    index_path: Where | os.PathLike[str],
    request: Request,
    backend: Backend | None = None,
    *,
    build_prompt: bool = True,
    planning: Planning | None = None,
    on_retrieved: Callable[[Retrieval], None] | None = None,
    on_planned: Callable[[Plan], None] | None = None,
    on_text: OnText | None = None,
    follow_ups: int = 0,
    on_search: OnSearch | None = None,
    on_retract: OnRetract | None = None,
) -> Outcome:
    """Answer a question from the index: with `planning`, have the model write the searches first
    (rag.answer.plan), retrieve the passages, build the prompt (unless `build_prompt` is off), and
    with a backend generate the answer, streamed to `on_text`. `on_planned` sees the plan as soon as
    it is made, `on_retrieved` the retrieval before any model answers (to print their notes first).
    With `follow_ups`, the prompt offers the answering model that many searches of its own before
    it answers (rag.answer.followups), each told to `on_search`; 0 is a single round, the prompt
    as --prompt-only prints it. With `on_retract`, text that may precede such a search is streamed at
    once and taken back through it if one follows. The answer's usage counts every call's tokens, the plan's too.

    When nothing is retrieved no model is called: with a backend, the answer is empty, stop_reason NO_CONTEXT.
    """
    answering = backend is not None and build_prompt
    tool = None
    if answering and follow_ups:
        from rag.answer.followups import SearchTool

        tool = SearchTool(index_path, request, (), follow_ups)  # the first passages join it once found
    # what the plan and the answer need starts while the index opens and the plan is made
    with ExitStack() as started:
        plan_start = started.enter_context(ExitStack())  # ended once the search is done
        if planning is not None and planning.backend is not None:
            from rag.answer.plan import prepare_planning

            plan_start.enter_context(prepare_planning(planning.backend, planning.model))
        if backend is not None and answering:
            started.enter_context(backend.prepare(follow_ups, tool))
        plan_prompt: Prompt | None = None
        plan: Plan | None = None

        def planner(glance: Glance) -> tuple[str, ...]:
            nonlocal plan_prompt, plan
            from rag.answer.plan import plan_search, planning_prompt

            assert planning is not None
            plan_prompt = planning_prompt(request.question, glance)
            if planning.backend is None:
                return ()
            plan = plan_search(planning.backend, plan_prompt, planning.model)
            if on_planned is not None:
                on_planned(plan)
            return plan.searches

        retrieval = retrieve(index_path, request, planner if planning is not None else None)
        plan_start.close()  # a planning call not made (the question's own search was sure) needs it no more
        if on_retrieved is not None:
            on_retrieved(retrieval)
        if not retrieval.hits:
            return Outcome(
                retrieval,
                None,
                None if backend is None else no_context_answer(request.question, backend),
                plan_prompt,
                plan,
            )
        if not build_prompt:
            return Outcome(retrieval, None, None, plan_prompt, plan)
        from rag.answer.prompts import build_prompt as build

        prompt = build(request.question, retrieval.hits, follow_ups)
        if backend is None:
            return Outcome(retrieval, prompt, None, plan_prompt, plan)
        if tool is not None:
            tool.sent.extend(retrieval.hits)
        answer = generate(prompt, backend, on_text, tool, on_search, on_retract)
        if plan is not None:
            from rag.answer.generation import add_usage

            answer = answer._replace(usage=add_usage(plan.usage, answer.usage), calls=answer.calls + 1)
        return Outcome(retrieval, prompt, answer, plan_prompt, plan)


def no_context_answer(question: str, backend: Backend) -> Answer:
    """The answer when no passage matched: empty, no model called."""
    from rag.answer.citations import NO_CONTEXT, Answer

    return Answer(question, "", (), (), backend.name, backend.model, {}, NO_CONTEXT)


def generate(
    prompt: Prompt,
    backend: Backend,
    on_text: OnText | None = None,
    tool: SearchTool | None = None,
    on_search: OnSearch | None = None,
    on_retract: OnRetract | None = None,
) -> Answer:
    """Send `prompt` to `backend` (with `tool`, the model may search first) and check the citations
    of its answer against every passage it was sent."""
    from rag.answer.citations import Answer, check_citations

    gen = backend.generate(prompt, on_text, tool=tool, on_search=on_search, on_retract=on_retract)
    sent = (*prompt.hits, *(h for r in gen.rounds for h in r.hits))
    citations = check_citations(gen.text, gen.api_citations, sent)
    return Answer(
        prompt.question,
        gen.text,
        prompt.hits,
        tuple(citations),
        backend.name,
        gen.model or backend.model,
        gen.usage,
        gen.stop_reason,
        gen.rounds,
        gen.calls,
    )
