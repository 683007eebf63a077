"""The query command answering questions: each backend through CliRunner, and the scripts in subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import FAKE_CLAUDE, FakeBackend, write_tree
from local_api import FakeApi, delta, plan_reply

from rag import ingest
from rag.answer.backends import ApiCitation, Generation, render_text_prompt
from rag.answer.defaults import DEFAULT_FOLLOW_UPS
from rag.answer.prompts import build_prompt
from rag.cli import main
from rag.cli.output import NO_CONTEXT_MESSAGE
from rag.errors import BackendError

PROJECT = Path(__file__).resolve().parent.parent
REPO = {
    "auth.py": (
        '"""Authentication helpers."""\n\n\n'
        "def check_password(user, password):\n"
        '    """Return True when the password matches the stored hash for user."""\n'
        "    stored = load_hash(user)\n"
        "    return verify(stored, password)\n"
    ),
    "README.md": "# Demo\n\nA tiny project about gardening and tomatoes, nothing else.\n",
}
QUESTION = "how is the password checked?"

NO_BACKEND_HINT = (  # as `rag query` says it
    "No model was asked: set ANTHROPIC_API_KEY, install Claude Code (`claude`), or pipe "
    "`rag query --prompt-only QUESTION | claude -p`."
)


@pytest.fixture
def index(tmp_path: Path) -> Path:
    repo = write_tree(tmp_path / "repo", REPO)
    return ingest(repo, tmp_path / "index.sqlite").index_path


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def use_fake(monkeypatch: pytest.MonkeyPatch, fake_backend: FakeBackend) -> FakeBackend:
    """Make every backend name resolve to the FakeBackend, which answers from the question's own
    search (the planned search has its tests in test_plan_cli.py)."""
    monkeypatch.setattr("rag.answer.backends.resolve_backend", lambda name, model, env=None: fake_backend)
    monkeypatch.setenv("RAG_SEARCH", "question")
    return fake_backend


def query(runner: CliRunner, index: Path, *args: str) -> Any:
    # -q: stderr holds only what these tests are about, not the line naming the index
    return runner.invoke(main, ["query", "-q", "--index", str(index), *args])


def expected_prompt(index: Path, question: str = QUESTION, follow_ups: int = DEFAULT_FOLLOW_UPS) -> Any:
    from rag import Index, search

    with Index(index) as idx:
        return build_prompt(question, search(idx, question), follow_ups)


# --- errors -------------------------------------------------------------------------------------------------


def test_missing_api_key_is_one_line_and_exit_1(runner: CliRunner, index: Path) -> None:
    result = query(runner, index, "--backend", "anthropic", QUESTION)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == (
        "Error: ANTHROPIC_API_KEY is not set — export it, or use --backend claude or --backend none\n"
    )


def test_backend_from_the_environment(
    runner: CliRunner, index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAG_BACKEND", "anthropic")
    assert query(runner, index, QUESTION).exit_code == 1


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--backend", "gpt", QUESTION], 2, "'gpt' is not one of 'auto', 'anthropic', 'claude', 'none'"),
        (["--show-prompt", "--prompt-only", QUESTION], 2, "do not combine — pick one"),
        (["--no-llm", "--show-prompt", QUESTION], 2, "do not combine — pick one"),
        (["--backend", "none", "   "], 1, "The question is empty"),
    ],
    ids=["unknown-backend", "show-and-prompt-only", "no-llm-and-show", "empty-question"],
)
def test_usage_errors(runner: CliRunner, index: Path, args: list[str], code: int, message: str) -> None:
    result = query(runner, index, *args)
    assert result.exit_code == code
    assert message in result.stderr


@pytest.mark.parametrize(
    ("failure", "code", "stderr"),
    [
        (
            BackendError("Rate limited by the Anthropic API (429), even after retries — wait a minute"),
            1,
            "Error: Rate limited by the Anthropic API (429), even after retries — wait a minute\n",
        ),
        (KeyboardInterrupt(), 130, "Interrupted.\n"),
    ],
    ids=["backend-error", "ctrl-c"],
)
def test_backend_failures(
    runner: CliRunner, index: Path, use_fake: FakeBackend, failure: BaseException, code: int, stderr: str
) -> None:
    use_fake.answers.append(failure)
    result = query(runner, index, QUESTION)
    assert result.exit_code == code
    assert result.stderr == stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_when_the_model_cannot_be_reached_the_passages_still_print(
    runner: CliRunner, index: Path, use_fake: FakeBackend, as_json: bool
) -> None:
    unreachable = "Cannot reach the Anthropic API — check your network connection (or ANTHROPIC_BASE_URL)"
    use_fake.answers.append(BackendError(unreachable))
    result = query(runner, index, *(["--json"] if as_json else []), QUESTION)
    assert (result.exit_code, result.stderr) == (1, f"Error: {unreachable}\n")
    # the passages as retrieval alone prints them; --json keeps stdout for one whole object
    passages = query(runner, index, "--no-llm", QUESTION).stdout
    assert "auth.py:" in passages
    assert result.stdout == ("" if as_json else passages)


@pytest.mark.parametrize(
    ("stop_reason", "message"),
    [
        ("refusal", "Error: The model declined to answer (stop_reason: refusal)\n"),
        (
            "max_tokens",
            "Error: The answer was cut off at the token limit and is incomplete (stop_reason: max_tokens)\n",
        ),
    ],
)
def test_refusal_and_truncation_are_reported_not_passed_off(
    runner: CliRunner, index: Path, use_fake: FakeBackend, stop_reason: str, message: str
) -> None:
    use_fake.queue("Partial answer", stop_reason=stop_reason)
    result = query(runner, index, QUESTION)
    assert result.exit_code == 1
    assert result.stderr.endswith(message)


# --- no context, no call ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [[], ["--json"], ["--prompt-only"], ["--backend", "none"]],
    ids=["text", "json", "prompt-only", "none"],
)
def test_nothing_retrieved_means_no_call(
    runner: CliRunner, index: Path, use_fake: FakeBackend, args: list[str]
) -> None:
    result = query(runner, index, *args, "quantum chromodynamics")
    assert result.exit_code == 0
    assert use_fake.prompts == []
    if "--json" in args:
        got = json.loads(result.stdout)
        assert (got["answer"], got["results"], got["stop_reason"]) == ("", [], "no_context")
    elif "--prompt-only" in args:
        assert (result.stdout, result.stderr) == ("", NO_CONTEXT_MESSAGE + "\n")
    else:
        assert result.stdout == NO_CONTEXT_MESSAGE + "\n"


# --- backends ---------------------------------------------------------------------------------------------


def test_backend_none_prints_the_passages_and_the_hint_not_the_prompt(runner: CliRunner, index: Path) -> None:
    result = query(runner, index, "--backend", "none", QUESTION)
    assert result.exit_code == 0
    assert result.stdout.startswith("1. ")
    assert "auth.py:1-7 check_password (function)" in result.stdout
    # the prompt would repeat the passages: only --show-prompt or --prompt-only prints it
    assert "--- prompt ---" not in result.stdout and "<document" not in result.stdout
    passages = query(runner, index, "--no-llm", QUESTION).stdout
    assert result.stdout == passages
    assert result.stderr == NO_BACKEND_HINT + "\n"


def test_auto_without_key_or_claude_is_none(
    runner: CliRunner, index: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    result = query(runner, index, QUESTION)
    assert result.exit_code == 0 and result.stderr == NO_BACKEND_HINT + "\n"


def test_show_prompt_prints_the_exact_prompt_and_stops(
    runner: CliRunner, index: Path, use_fake: FakeBackend
) -> None:
    result = query(runner, index, "--show-prompt", QUESTION)
    assert result.exit_code == 0
    assert result.stdout == render_text_prompt(expected_prompt(index)) + "\n"
    assert use_fake.prompts == []


def test_show_prompt_for_the_api_is_the_request(
    runner: CliRunner, index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    result = query(
        runner,
        index,
        "--backend",
        "anthropic",
        "--model",
        "claude-test",
        "--search",
        "question",
        "--show-prompt",
        QUESTION,
    )
    assert result.exit_code == 0, result.output
    request = json.loads(result.stdout)
    assert request["model"] == "claude-test"
    assert request["messages"][0]["content"][0]["source"]["data"] == expected_prompt(index).hits[0].chunk.text


def test_prompt_only_prints_just_the_prompt(runner: CliRunner, index: Path) -> None:
    result = query(runner, index, "--prompt-only", "--backend", "anthropic", QUESTION)  # no key needed
    assert result.exit_code == 0
    # for a model with no search of ours: the single round's prompt
    assert (result.stdout, result.stderr) == (expected_prompt(index, follow_ups=0).text + "\n", "")
    assert "`search`" not in result.stdout


def test_answer_is_streamed_then_sources_are_listed_and_checked(
    runner: CliRunner, index: Path, use_fake: FakeBackend
) -> None:
    use_fake.queue(
        "It compares hashes [auth.py:6-7] and logs in [login.py:1-4].",
        usage={"input_tokens": 321, "output_tokens": 42},
    )
    result = query(runner, index, QUESTION)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "It compares hashes [auth.py:6-7] and logs in [login.py:1-4].\n\n"
        "Sources:\n"
        "  [1] auth.py:6-7\n"
        "  [2] login.py:1-4  (!) not among the passages sent: unverified\n"
    )
    assert result.stderr == "(fake-model via fake; 321 input + 42 output tokens)\n"
    [prompt] = use_fake.prompts
    assert prompt.user == expected_prompt(index).user


def test_api_citations_become_numbered_sources(runner: CliRunner, index: Path, use_fake: FakeBackend) -> None:
    quoted = "    stored = load_hash(user)\n"
    use_fake.answers.append(Generation("It loads the hash. [1]", (ApiCitation(0, quoted),), "end_turn", {}))
    result = query(runner, index, QUESTION)
    assert result.stdout == "It loads the hash. [1]\n\nSources:\n  [1] auth.py:1-7\n"


def test_json_answer_shape(runner: CliRunner, index: Path, use_fake: FakeBackend) -> None:
    use_fake.queue("It compares hashes [auth.py:6-7]. Also [gone.py:1-2].")
    result = query(runner, index, "--json", "-k", "1", QUESTION)
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert list(got) == [
        "question",
        "answer",
        "citations",
        "results",
        "backend",
        "model",
        "usage",
        "calls",
        "stop_reason",
        "rounds",
        "index",
        "repository",
        "corrections",
        "searches",
    ]
    assert got["question"] == QUESTION
    assert got["answer"] == "It compares hashes [auth.py:6-7]. Also [gone.py:1-2]."
    assert got["citations"] == [
        {
            "path": "auth.py",
            "start_line": 6,
            "end_line": 7,
            "cited_text": "    stored = load_hash(user)\n    return verify(stored, password)",
            "valid": True,
        },
        {"path": "gone.py", "start_line": 1, "end_line": 2, "cited_text": "", "valid": False},
    ]
    [hit] = got["results"]
    assert set(hit) == {
        "rank",
        "score",
        "path",
        "start_line",
        "end_line",
        "chunk",
        "kind",
        "symbol",
        "context_start_line",
        "context_end_line",
        "text",
        "matched",
        "marked_lines",
        "demoted",
        "boosted",
    }
    assert (hit["rank"], hit["path"], hit["symbol"]) == (1, "auth.py", "check_password")
    assert (got["backend"], got["model"], got["usage"]) == (
        "fake",
        "fake-model",
        {"input_tokens": 10, "output_tokens": 5},
    )
    assert (got["calls"], got["rounds"]) == (1, [])  # the passages sufficed: no search of its own
    assert result.stderr == ""  # nothing streamed, no usage line: stdout is one JSON object


def test_anthropic_backend_end_to_end_against_a_local_api(
    runner: CliRunner, index: Path, api: FakeApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = expected_prompt(index).hits[0].chunk.text
    quoted = "    stored = load_hash(user)\n"
    start = text.index(quoted)
    api.reply(
        200, plan_reply("check_password verify load_hash", usage={"input_tokens": 60, "output_tokens": 5})
    )
    citation = {
        "type": "char_location",
        "cited_text": quoted,
        "document_index": 0,
        "document_title": "t",
        "start_char_index": start,
        "end_char_index": start + len(quoted),
    }
    api.stream(
        [
            {
                "type": "message_start",
                "message": {
                    "id": "m",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-test",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 200, "output_tokens": 1},
                },
            },
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            delta(0, type="citations_delta", citation=citation),
            delta(0, type="text_delta", text="It loads the hash."),
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 9},
            },
            {"type": "message_stop"},
        ]
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    monkeypatch.setenv("RAG_SEARCH_MODEL", "claude-fast")
    result = query(runner, index, "--model", "claude-test", QUESTION)
    assert result.exit_code == 0, result.output
    assert result.stdout == "It loads the hash. [1]\n\nSources:\n  [1] auth.py:1-7\n"
    assert result.stderr == (
        "searched: check_password verify load_hash\n"
        "(claude-test via anthropic, search by claude-fast; 260 input + 14 output tokens in 2 calls)\n"
    )
    plan, answer = api.requests
    assert (
        plan["headers"]["x-api-key"] == "sk-test"
    )  # the plan goes out without the SDK, as the API documents
    assert plan["headers"]["anthropic-version"] == "2023-06-01"
    assert "sk-test" in answer["headers"].get("authorization", answer["headers"].get("x-api-key", ""))
    assert (plan["json"]["model"], plan["json"].get("stream")) == ("claude-fast", None)
    assert QUESTION in plan["json"]["messages"][0]["content"]
    assert (answer["json"]["model"], answer["json"]["stream"]) == ("claude-test", True)


# --- the scripts, as a user runs them -----------------------------------------------------------------------


def run_script(
    script: str, *args: str, cwd: Path, env: dict[str, str] | None = None, stdin: Any = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(PROJECT / script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=stdin,
    )


@pytest.fixture
def scripted_repo(tmp_path: Path) -> Path:
    """A repository indexed by `python ingest.py`, as a user would."""
    repo = write_tree(tmp_path / "repo", REPO)
    done = run_script("ingest.py", str(repo), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return repo


@pytest.fixture
def claude_bin(tmp_path: Path) -> Path:
    """A directory holding a fake `claude` executable."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "claude"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CLAUDE}" "$@"\n')
    exe.chmod(0o755)
    return bin_dir


def test_prompt_only_pipes_into_claude(scripted_repo: Path, claude_bin: Path) -> None:
    """python query.py --prompt-only "..." | claude -p"""
    env = {**os.environ, "PATH": f"{claude_bin}{os.pathsep}{os.environ['PATH']}"}
    query_proc = subprocess.Popen(
        [sys.executable, str(PROJECT / "query.py"), "--prompt-only", QUESTION],
        cwd=scripted_repo,
        stdout=subprocess.PIPE,
        env=env,
    )
    claude = subprocess.run(
        ["claude", "-p"],
        stdin=query_proc.stdout,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=scripted_repo,
    )
    assert query_proc.stdout is not None
    query_proc.stdout.close()
    assert query_proc.wait(timeout=60) == 0
    assert claude.returncode == 0, claude.stderr
    assert claude.stdout == "From the documents: see [auth.py:1-7]. Also [nowhere.py:1-2].\n"


def test_claude_backend_through_the_script(scripted_repo: Path, claude_bin: Path, tmp_path: Path) -> None:
    log = tmp_path / "call.json"
    env = {**os.environ, "PATH": f"{claude_bin}{os.pathsep}{os.environ['PATH']}", "FAKE_CLAUDE_LOG": str(log)}
    env.pop("ANTHROPIC_API_KEY", None)
    done = run_script("query.py", "--json", QUESTION, cwd=scripted_repo, env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["backend"] == "claude"
    assert [(c["path"], c["valid"]) for c in got["citations"]] == [("auth.py", True), ("nowhere.py", False)]
    call = json.loads(log.read_text())
    assert call["stdin_is_pipe"] and "--tools" in call["argv"]


def test_claude_error_through_the_script(scripted_repo: Path, claude_bin: Path) -> None:
    env = {**os.environ, "PATH": f"{claude_bin}{os.pathsep}{os.environ['PATH']}", "FAKE_CLAUDE_MODE": "error"}
    env.pop("ANTHROPIC_API_KEY", None)
    done = run_script("query.py", QUESTION, cwd=scripted_repo, env=env)
    assert done.returncode == 1
    passages = run_script("query.py", "--no-llm", QUESTION, cwd=scripted_repo, env=env).stdout
    assert (done.stdout, done.stderr) == (
        passages,
        "Search planning failed (`claude -p` returned an error (exit 1): Credit balance is too low): "
        "searched the question's own words\n"
        f"Searching {scripted_repo.resolve()}\n"
        "Error: `claude -p` returned an error (exit 1): Credit balance is too low\n",
    )


@pytest.mark.parametrize(
    "args",
    [["--no-llm"], ["--json", "--no-llm"], ["--backend", "none"], ["--prompt-only"]],
    ids=["no-llm", "json-no-llm", "none", "prompt-only"],
)
def test_paths_without_the_api_never_import_the_sdk(scripted_repo: Path, args: list[str]) -> None:
    code = (
        "import sys\n"
        f"sys.argv = ['query.py', *{args!r}, {QUESTION!r}]\n"
        "from rag.cli import query_main\n"
        "try:\n    query_main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
        "print('SDK loaded:', 'anthropic' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=scripted_repo,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(PROJECT), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "SDK loaded: False"
    assert "auth.py" in done.stdout


def test_the_none_backend_json_has_one_shape_with_or_without_passages(runner: CliRunner, index: Path) -> None:
    found = json.loads(query(runner, index, "--json", "--backend", "none", QUESTION).stdout)
    nothing = json.loads(query(runner, index, "--json", "--backend", "none", "zzyzx qwertyuiop").stdout)
    assert (
        list(found)
        == list(nothing)
        == [
            "question",
            "answer",
            "citations",
            "results",
            "backend",
            "model",
            "usage",
            "stop_reason",
            "prompt",
            "index",
            "repository",
            "corrections",
            "searches",
        ]
    )
    assert found["searches"] == nothing["searches"] == []  # no model: the question alone was searched
    assert (found["answer"], found["usage"], found["stop_reason"]) == (None, None, None)
    assert "<document" in found["prompt"] and QUESTION in found["prompt"]
    assert (nothing["answer"], nothing["results"], nothing["stop_reason"], nothing["prompt"]) == (
        None,
        [],
        "no_context",
        None,
    )
