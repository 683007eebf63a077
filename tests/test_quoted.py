"""Quoted text in a question is looked up as written: the passage holding a pasted message ranks
first even when its words are the repository's commonest."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_tree

from rag import Index, ingest, search
from rag.ranking.quoted import quotes

# many different files that run tasks on the reactor and report errors; one holds the message
JOBS = ["fetch", "parse", "store", "index", "notify", "render", "upload", "resize", "compress", "sign"]
RUNNERS = {
    f"runtime/{job}.py": (
        f"def {job}_on_reactor(task, {job}_limit=3):\n"
        f"    '''Run the {job} task on the reactor: there is a thread running each {job} step.'''\n"
        f"    for attempt in range({job}_limit):\n"
        f"        if task.{job}_error is None:\n"
        f"            return task.run_{job}(attempt)\n"
        f"    raise RuntimeError(task.{job}_error)\n"
    )
    for job in JOBS
}
ERRORS = (
    "CONTEXT_MISSING = 'there is no reactor running, must be called from the context of a runtime'\n"
    "SHUTDOWN = 'the runtime is shutting down'\n"
)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Why does it panic with 'there is no reactor running'?", ["there is no reactor running"]),
        ('It says "No such  file or directory" when', ["no such file or directory"]),
        ("It says \u201cconnection reset by peer\u201d", ["connection reset by peer"]),
        ("Why don't my variables leak? Isn't the app shared?", []),  # apostrophes, not quotes
        ("What does the 'strict' flag do?", []),  # one quoted word is a term like any other
        ("What does `run_worker` do with errors?", []),  # backticks name code
    ],
    ids=["single", "double-spaces", "curly", "apostrophes", "one-word", "backticks"],
)
def test_quotes(question: str, expected: list[str]) -> None:
    assert quotes(question) == expected


def test_the_passage_holding_the_quoted_message_ranks_first(tmp_path: Path) -> None:
    report = ingest(write_tree(tmp_path / "r", {**RUNNERS, "runtime/errors.py": ERRORS}))
    with Index(report.index_path) as index:
        plain = search(index, "why does running a task panic with there is no reactor running", k=4)
        quoted = search(
            index, "why does running a task panic with 'there is no reactor running'", k=4, explain=True
        )
    # unquoted, the message's words are those every runner repeats: a runner comes first
    assert plain[0].chunk.path != "runtime/errors.py"
    top = quoted[0]
    assert top.chunk.path == "runtime/errors.py"
    gained = [c for c in top.contributions if c.term == '"there is no reactor running"']
    assert len(gained) == 1 and gained[0].score == pytest.approx(
        top.score - sum(c.score for c in top.contributions if c is not gained[0])
    )


def test_a_quote_no_passage_holds_changes_nothing(tmp_path: Path) -> None:
    report = ingest(write_tree(tmp_path / "r", {**RUNNERS, "runtime/errors.py": ERRORS}))
    with Index(report.index_path) as index:
        words = search(index, "why does a task panic with the reactor running", k=4)
        quoted = search(index, "why does a task panic with 'the reactor running'", k=4)
    # "the reactor running" stands nowhere as written: the order is the words' own
    assert [(h.chunk.path, h.score) for h in quoted] == [(h.chunk.path, h.score) for h in words]
