"""The planned search through `rag query`: the SDK against a local Messages API, `claude -p` faked,
the flags that turn it off, every way the planning call can fail, and what a caller may not read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import FAKE_CLAUDE, write_tree
from local_api import FakeApi, plan_reply, text_events

from rag import ingest
from rag.cli import main

PROJECT = Path(__file__).resolve().parent.parent
# the question's own words find the docs page; the code that answers holds none of them
REPO = {
    "docs/tasks.md": (
        "# Tasks\n\nA task runs when its time comes. If a task never runs, read on: the task list "
        "shows each task and when it runs.\n"
    ),
    "jobs/queue.py": (
        "def enqueue_job(job, ready_at):\n"
        '    """Put job on the worker queue; poll_ready hands it to a worker once ready_at has passed."""\n'
        "    QUEUE.append((ready_at, job))\n"
    ),
    "jobs/clock.py": "def now():\n    return CLOCK.time()\n",
}
QUESTION = "Why does my task never run?"
PLAN = "enqueue_job poll_ready\nworker queue ready_at"
ANSWER = "It waits for ready_at [jobs/queue.py:1-3]."


@pytest.fixture
def index(tmp_path: Path) -> Path:
    return ingest(write_tree(tmp_path / "repo", REPO), tmp_path / "index.sqlite").index_path


def query(index: Path, *args: str) -> Any:
    """`rag query`, quiet about which index answered (stderr then holds only the notes tested here)."""
    return CliRunner().invoke(main, ["query", "--quiet", "--index", str(index), *args])


@pytest.fixture
def sdk(api: FakeApi, monkeypatch: pytest.MonkeyPatch) -> FakeApi:
    """The anthropic backend, pointed at the local API."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    monkeypatch.setenv("RAG_SEARCH_MODEL", "claude-fast")
    return api


def test_the_model_writes_the_search_that_finds_the_code(index: Path, sdk: FakeApi) -> None:
    alone = json.loads(query(index, "--no-llm", "--json", QUESTION).stdout)
    assert alone["results"][0]["path"] == "docs/tasks.md"  # the question's own words
    sdk.reply(200, plan_reply(PLAN, usage={"input_tokens": 300, "output_tokens": 12}))
    sdk.stream(text_events(ANSWER))
    result = query(index, "--json", QUESTION)
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert got["searches"] == ["enqueue_job poll_ready", "worker queue ready_at"]
    assert (got["search_model"], got["search_note"]) == ("claude-fast", None)
    first = got["results"][0]
    assert (first["path"], sorted(first["found_by"])) == ("jobs/queue.py", ["search 1", "search 2"])
    assert [r["path"] for r in got["results"]][1] == "docs/tasks.md"
    assert got["results"][1]["found_by"] == ["question"]
    # usage counts both calls; the plan's own is beside it
    assert got["usage"] == {"input_tokens": 500, "output_tokens": 21}
    assert got["search_usage"] == {"input_tokens": 300, "output_tokens": 12}
    assert result.stderr == "searched: enqueue_job poll_ready | worker queue ready_at\n"
    plan, answer = sdk.requests
    assert plan["json"]["model"] == "claude-fast" and plan["json"]["max_tokens"] <= 300
    assert "<question>\nWhy does my task never run?\n</question>" in plan["json"]["messages"][0]["content"]
    # the answer prompt's first document is the passage the planned search found
    assert answer["json"]["messages"][0]["content"][0]["title"].startswith("jobs/queue.py:1-3")


def test_explain_names_the_search_each_passage_was_found_by(index: Path, sdk: FakeApi) -> None:
    sdk.reply(200, plan_reply(PLAN)).stream(text_events(ANSWER))
    result = query(index, "--json", "--explain", QUESTION)
    first = json.loads(result.stdout)["results"][0]
    assert first["found_by"] == ["search 2", "search 1"]  # most of its score first
    assert {t["term"] for t in first["explain"]} >= {"enqueu", "job", "poll", "readi", "worker", "queue"}


def _answered_from_the_question(result: Any, sdk: FakeApi, note: str) -> None:
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert got["answer"] == ANSWER and got["searches"] == [] and got["search_note"] == note
    assert got["results"][0]["path"] == "docs/tasks.md"  # the question's own search
    assert result.stderr == note + "\n"
    assert sdk.requests[-1]["json"]["stream"] is True  # the answer was still asked for


@pytest.mark.parametrize(
    ("status", "body", "note"),
    [
        (
            401,
            {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}},
            "Search planning failed (The Anthropic API rejected the API key (401) — check ANTHROPIC_API_KEY)",
        ),
        (
            429,
            {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
            "Search planning failed (Rate limited by the Anthropic API (429) — wait a minute and ask again)",
        ),
        (
            500,
            {"type": "error", "error": {"type": "api_error", "message": "boom"}},
            "Search planning failed (The Anthropic API failed (500): boom — try again, or use --backend claude)",
        ),
        (
            200,
            b"<html>not json</html>",
            "Search planning failed (The Anthropic API sent a response this tool cannot read (JSONDecodeError))",
        ),
        (
            200,
            plan_reply("I can't help with that.", stop_reason="refusal"),
            "The model declined to plan the search",
        ),
        (200, plan_reply("```\n```"), "The model's search plan held no words"),
    ],
    ids=["401", "429", "500", "garbage", "refusal", "no-words"],
)
def test_a_failed_plan_answers_from_the_question_with_a_note(
    index: Path, sdk: FakeApi, status: int, body: Any, note: str
) -> None:
    sdk.reply(status, body).stream(text_events(ANSWER))
    result = query(index, "--json", QUESTION)
    _answered_from_the_question(result, sdk, note + ": searched the question's own words")
    assert len(sdk.requests) == 2  # a failed plan is not retried


def test_a_plan_that_times_out_answers_from_the_question(
    index: Path, sdk: FakeApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("rag.answer.plan.PLAN_TIMEOUT", 0.5)
    sdk.hang(3.0).stream(text_events(ANSWER))
    result = query(index, "--json", QUESTION)
    note = (
        "Search planning failed (The Anthropic API timed out — check your connection and try again): "
        "searched the question's own words"
    )
    _answered_from_the_question(result, sdk, note)


@pytest.mark.parametrize(
    ("args", "env"),
    [(["--search", "question"], {}), ([], {"RAG_SEARCH": "question"})],
    ids=["flag", "environment"],
)
def test_planning_turned_off_makes_one_call(
    index: Path, sdk: FakeApi, monkeypatch: pytest.MonkeyPatch, args: list[str], env: dict[str, str]
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    sdk.stream(text_events(ANSWER))
    result = query(index, "--json", *args, QUESTION)
    assert result.exit_code == 0, result.output
    assert [r["json"].get("stream") for r in sdk.requests] == [True]
    assert json.loads(result.stdout)["searches"] == [] and result.stderr == ""


@pytest.mark.parametrize(
    "args", [["--no-llm"], ["--no-llm", "--json"], ["--prompt-only"]], ids=["no-llm", "json", "prompt-only"]
)
def test_no_model_answering_means_no_plan(index: Path, sdk: FakeApi, args: list[str]) -> None:
    result = query(index, *args, QUESTION)
    assert result.exit_code == 0, result.output
    assert sdk.requests == [] and "searched" not in result.stderr


def test_show_prompt_prints_the_planning_prompt_then_the_answer_prompt(index: Path, sdk: FakeApi) -> None:
    result = query(index, "--show-prompt", QUESTION)
    assert result.exit_code == 0, result.output
    assert sdk.requests == []  # nothing is sent
    plan_part, answer_part = result.stdout.split("=== answer:")
    assert plan_part.startswith("=== search planning: sent first, to claude-fast ===\n")
    request = json.loads(plan_part.split("===\n", 1)[1])
    assert request["model"] == "claude-fast"
    user = request["messages"][0]["content"]
    assert f"<question>\n{QUESTION}\n</question>" in user
    assert '<repository name="repo" languages="Python, Markdown">' in user
    assert "<passages>\ndocs/tasks.md:1-3 Tasks\n</passages>" in user  # the one passage that matched
    answer = json.loads(answer_part.split("===\n", 1)[1])
    assert answer["messages"][0]["content"][0]["title"].startswith("docs/tasks.md")


def test_one_identifier_and_words_the_index_lacks_are_not_planned(index: Path, sdk: FakeApi) -> None:
    sdk.stream(text_events(ANSWER))
    result = query(index, "--json", "enqueue_job")  # a lookup: the definition ranks first by itself
    assert result.exit_code == 0, result.output
    assert [r["json"].get("stream") for r in sdk.requests] == [True]
    result = query(index, "--json", "zzyzx qwertyuiop")  # nothing found: no model is called at all
    assert result.exit_code == 0 and len(sdk.requests) == 1


def test_a_question_whose_own_search_finds_the_code_it_names_is_not_planned(
    index: Path, sdk: FakeApi
) -> None:
    sdk.stream(text_events(ANSWER))
    result = query(index, "--json", "when does enqueue_job hand the job to a worker?")
    assert result.exit_code == 0, result.output
    assert [r["json"].get("stream") for r in sdk.requests] == [True]  # the answer's call alone
    assert json.loads(result.stdout)["results"][0]["symbol"] == "enqueue_job"
    # named, but its own search ranks other code first: planned
    sdk.reply(200, plan_reply(PLAN)).stream(text_events(ANSWER))
    result = query(index, "--json", "why does my task never run when QUEUE_size grows?")
    assert result.exit_code == 0, result.output
    assert [r["json"].get("stream") for r in sdk.requests[1:]] == [None, True]


def test_a_caller_plans_with_what_they_may_read(tmp_path: Path, sdk: FakeApi) -> None:
    files = {
        **REPO,
        "secret/payroll_task.py": "def run_payroll_task():\n    '''Why a payroll task never runs.'''\n",
        ".rag-access": "secret/** hr\n",
    }
    index = ingest(write_tree(tmp_path / "repo", files), tmp_path / "index.sqlite").index_path
    sdk.reply(200, plan_reply(PLAN)).stream(text_events(ANSWER))
    sdk.reply(200, plan_reply(PLAN)).stream(text_events(ANSWER))
    public = query(index, "--json", QUESTION)
    hr = query(index, "--json", "--as", "hr", QUESTION)
    assert public.exit_code == hr.exit_code == 0
    public_plan, _, hr_plan, _ = (r["json"]["messages"][0]["content"] for r in sdk.requests)
    assert isinstance(public_plan, str) and isinstance(hr_plan, str)
    assert "payroll" not in public_plan and "secret/payroll_task.py" in hr_plan


def test_claude_plans_in_one_more_process(index: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "claude"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CLAUDE}" "$@"\n')
    exe.chmod(0o755)
    calls = tmp_path / "calls.jsonl"
    env = {
        **{k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"},
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "FAKE_CLAUDE_CALLS": str(calls),
        "FAKE_CLAUDE_PLAN": PLAN,
        "RAG_SEARCH_MODEL": "claude-fast",
    }
    done = subprocess.run(
        [sys.executable, str(PROJECT / "query.py"), "--index", str(index), "--json", QUESTION],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["backend"] == "claude" and got["searches"] == [
        "enqueue_job poll_ready",
        "worker queue ready_at",
    ]
    assert got["results"][0]["path"] == "jobs/queue.py"
    plan, answer = (json.loads(line) for line in calls.read_text().splitlines())
    assert plan["argv"][plan["argv"].index("--model") + 1] == "claude-fast"
    assert QUESTION in plan["stdin"] and "<document" not in plan["stdin"]
    assert (
        answer["argv"][answer["argv"].index("--model") + 1] != "claude-fast"
        and "<document" in answer["stdin"]
    )


def test_explain_after_an_answer_lists_the_passages_sent_and_their_searches(
    index: Path, sdk: FakeApi
) -> None:
    sdk.reply(200, plan_reply(PLAN)).stream(text_events(ANSWER))
    result = query(index, "--explain", QUESTION)
    assert result.exit_code == 0, result.output
    sent = result.stdout.split("Passages sent:\n", 1)[1].splitlines()
    assert sent[0] == "1. jobs/queue.py:1-3 enqueue_job (function)"
    assert sent[1].startswith("     score ")
    assert sent[2] == "     found by search 2, search 1"
    assert any(line.startswith("     poll: idf") for line in sent)
