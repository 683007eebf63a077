"""Tests for the answering model's own searches (rag.answer.followups): the tool itself, the SDK's
tool loop against a local Messages API, `claude -p` (faked) with the tool served over MCP to the MCP
SDK's own client, and what `rag query` prints and returns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import FAKE_CLAUDE, FakeBackend, write_tree
from local_api import FakeApi, cited_events, search_events

from rag.answer.ask import Planning, ask, generate
from rag.answer.backends import ClaudeCliBackend
from rag.answer.followups import (
    NO_NEW_PASSAGES,
    NO_SEARCHES_LEFT,
    PASSAGES_PER_SEARCH,
    SearchTool,
    tool_definition,
    unseen,
)
from rag.answer.prompts import build_prompt, document_title
from rag.chunking import Chunk
from rag.cli import main
from rag.errors import BackendError
from rag.indexing.pipeline import IngestOptions, ingest
from rag.ranking.hits import Hit
from rag.retrieval.retrieve import Request, retrieve

PROJECT = Path(__file__).resolve().parent.parent
QUESTION = "how long may a request take in start_server?"
# start_server reads the timeout, but its default is defined in another file: the first passage
# (k=1) lacks it, and a search for its name finds it
REPO = {
    "server.py": (
        "from settings import DEFAULT_REQUEST_TIMEOUT\n"
        "\n"
        "\n"
        "def start_server(config):\n"
        '    """Start the server; a request may take the configured timeout."""\n'
        '    timeout = config.get("request_timeout", DEFAULT_REQUEST_TIMEOUT)\n'
        "    return Server(timeout)\n"
    ),
    "settings.py": "DEFAULT_REQUEST_TIMEOUT = 30  # seconds a request may take before it is cut\n",
    "ops/override.py": "def request_timeout_override():\n    return 5  # DEFAULT_REQUEST_TIMEOUT for ops\n",
    ".rag-access": "ops/ ops\n",
}


@pytest.fixture
def index(tmp_path: Path) -> Path:
    repo = write_tree(tmp_path / "repo", REPO)
    return ingest(repo, tmp_path / "index.sqlite", IngestOptions(workers=1)).index_path


def first(index: Path, k: int = 1) -> Any:
    return retrieve(index, Request(QUESTION, k)).hits


# --- the tool ---------------------------------------------------------------------------------------------------


def lines_hit(path: str, match: tuple[int, int], shown: tuple[int, int], marks: tuple[int, ...] = ()) -> Hit:
    def chunk(start: int, end: int) -> Chunk:
        text = "\n".join(f"line {n}" for n in range(start, end + 1))
        return Chunk(path, start, end, "function", "f", text)

    return Hit(1.0, chunk(*match), context=chunk(*shown), marks=marks)


def test_a_passage_bordering_one_sent_is_new_from_the_first_line_not_sent() -> None:
    sent = [lines_hit("a.py", (12, 18), (10, 20))]
    # its match (22-30) was never sent, though its context reaches back into lines 15-20
    part = unseen(lines_hit("a.py", (22, 30), (15, 35), marks=(16, 23, 34)), sent)
    assert part is not None
    assert (part.passage.start_line, part.passage.end_line) == (21, 35)
    assert part.passage.text.split("\n")[0] == "line 21" and part.passage.text.endswith("line 35")
    assert (part.chunk.start_line, part.chunk.end_line, part.marks) == (22, 30, (23, 34))
    # a match inside what was sent is not sent again, whatever its context adds
    assert unseen(lines_hit("a.py", (12, 14), (5, 25)), sent) is None
    # sent lines on both sides: only the gap between them and the match remain
    both = unseen(lines_hit("a.py", (22, 24), (18, 33)), [*sent, lines_hit("a.py", (31, 40), (30, 40))])
    assert both is not None and (both.passage.start_line, both.passage.end_line) == (21, 29)
    other = lines_hit("b.py", (12, 18), (10, 20))
    assert unseen(other, sent) is other


def test_a_search_returns_only_passages_not_sent_yet(index: Path) -> None:
    sent = first(index)
    assert [h.chunk.path for h in sent] == ["server.py"]
    tool = SearchTool(index, Request(QUESTION), sent, limit=2)
    found = tool.call({"query": "start_server DEFAULT_REQUEST_TIMEOUT"})
    # server.py matches both words, but was sent: the default's definition comes back alone
    assert found.error is None and [h.chunk.path for h in found.hits] == ["settings.py"]
    assert len(found.hits) <= PASSAGES_PER_SEARCH
    assert [h.chunk.path for h in tool.sent] == ["server.py", "settings.py"]
    again = tool.call({"query": "DEFAULT_REQUEST_TIMEOUT"})
    assert again.hits == () and again.error is None  # nothing is sent twice
    assert tool.left == 0 and len(tool.rounds) == 2


def test_searches_past_the_limit_are_refused(index: Path) -> None:
    tool = SearchTool(index, Request(QUESTION), first(index), limit=1)
    tool.call({"query": "settings"})
    refused = tool.call({"query": "DEFAULT_REQUEST_TIMEOUT"})
    assert (refused.error, refused.hits) == (NO_SEARCHES_LEFT, ())
    assert len(tool.rounds) == 1  # the refusal is not a search


@pytest.mark.parametrize(
    "arguments",
    [{"q": "timeout"}, {"query": "   "}, {"query": 5}, "timeout", None],
    ids=["wrong-key", "blank", "not-a-string", "not-an-object", "none"],
)
def test_bad_arguments_are_an_error_the_model_reads(index: Path, arguments: object) -> None:
    found = SearchTool(index, Request(QUESTION), first(index)).call(arguments)
    assert found.hits == () and found.error is not None and "needs `query`" in found.error


def test_a_search_sees_only_what_the_caller_may_read(index: Path) -> None:
    public = SearchTool(index, Request(QUESTION), first(index)).call({"query": "request_timeout_override"})
    assert "ops/override.py" not in [h.chunk.path for h in public.hits]
    ops = Request(QUESTION, groups=frozenset({"ops"}))
    staff = SearchTool(index, ops, first(index)).call({"query": "request_timeout_override"})
    assert [h.chunk.path for h in staff.hits][:1] == ["ops/override.py"]


def test_a_search_that_fails_is_an_error_result_not_an_exception(index: Path, tmp_path: Path) -> None:
    tool = SearchTool(tmp_path / "no-such-index.sqlite", Request(QUESTION), first(index))
    found = tool.call({"query": "DEFAULT_REQUEST_TIMEOUT"})
    assert found.hits == () and found.error is not None and found.error.startswith("The search failed (")


# --- the answer flow, with a fake model ----------------------------------------------------------------------


def test_the_model_searches_then_cites_what_its_search_found(index: Path, fake_backend: FakeBackend) -> None:
    fake_backend.search({"query": "DEFAULT_REQUEST_TIMEOUT"})
    fake_backend.queue("Up to 30 seconds [settings.py:1-1], read in [server.py:4-7].")
    told: list[str] = []
    outcome = ask(index, Request(QUESTION, 1), fake_backend, follow_ups=2, on_search=told.append)
    answer = outcome.answer
    assert answer is not None and told == ["DEFAULT_REQUEST_TIMEOUT"]
    [prompt] = fake_backend.prompts
    assert "`search`, up to 2 times" in prompt.system and prompt.follow_ups == 2
    [round_] = answer.rounds
    assert [h.chunk.path for h in round_.hits] == ["settings.py"]
    assert [(c.path, c.valid) for c in answer.citations] == [("settings.py", True), ("server.py", True)]
    assert [h.chunk.path for h in answer.sent] == ["server.py", "settings.py"]
    assert answer.calls == 2


def test_no_follow_ups_is_the_single_round(index: Path, fake_backend: FakeBackend) -> None:
    fake_backend.queue("Up to 30 seconds [settings.py:1-1].")
    answer = ask(index, Request(QUESTION, 1), fake_backend, follow_ups=0).answer
    assert fake_backend.tools == [None]
    assert "`search`" not in fake_backend.prompts[0].system
    # the default was never sent: the citation is flagged
    assert answer is not None and [(c.path, c.valid) for c in answer.citations] == [("settings.py", False)]


# --- the SDK: tool use against a local Messages API -----------------------------------------------------------


def citation_of(hit: Any, text: str, index: int) -> dict[str, Any]:
    start = hit.passage.text.index(text)
    return {
        "type": "char_location",
        "cited_text": text,
        "document_index": index,
        "document_title": document_title(hit),
        "start_char_index": start,
        "end_char_index": start + len(text),
    }


def test_sdk_runs_the_search_and_sends_its_passages_back_as_documents(
    index: Path, api: FakeApi, via: Any
) -> None:
    sent = first(index)
    tool = SearchTool(index, Request(QUESTION), sent, limit=1)
    prompt = build_prompt(QUESTION, sent, follow_ups=1)
    settings = SearchTool(index, Request(QUESTION), sent).call({"query": "DEFAULT_REQUEST_TIMEOUT"}).hits[0]
    api.stream(search_events("DEFAULT_REQUEST_TIMEOUT", preamble="Let me find the default."))
    api.stream(cited_events("A request may take 30 seconds.", citation_of(settings, "30", 1)))
    streamed: list[str] = []
    told: list[str] = []
    answer = generate(prompt, via(), streamed.append, tool, told.append)
    # the words before the search are no part of the answer
    assert "".join(streamed) == answer.text == "A request may take 30 seconds. [1]"
    assert told == ["DEFAULT_REQUEST_TIMEOUT"]
    first_call, second_call = (r["json"] for r in api.requests)
    assert first_call["tools"] == [tool_definition(1)]
    assert first_call["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert second_call["tool_choice"] == {"type": "none"}  # its one search used: it must answer
    assistant, results = second_call["messages"][1:]
    assert assistant["content"][-1] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "search",
        "input": {"query": "DEFAULT_REQUEST_TIMEOUT"},
    }
    [result] = results["content"]
    assert result["tool_use_id"] == "toolu_1" and "is_error" not in result
    [doc] = result["content"]
    assert doc["type"] == "document" and doc["citations"] == {"enabled": True}
    assert (doc["title"], doc["source"]["data"]) == (document_title(settings), settings.passage.text)
    # the citation names the tool's document: checked against it, and listed as its passage
    assert [(c.path, c.valid) for c in answer.citations] == [("settings.py", True)]
    assert answer.usage == {"input_tokens": 800, "output_tokens": 50} and answer.calls == 2
    assert [h.chunk.path for r in answer.rounds for h in r.hits] == ["settings.py"]


def test_sdk_search_errors_go_back_to_the_model(index: Path, api: FakeApi, via: Any) -> None:
    sent = first(index)
    tool = SearchTool(index, Request(QUESTION), sent, limit=2)
    api.stream(search_events({"words": "timeout"}))  # no `query`
    api.stream(search_events("server", use_id="toolu_2"))  # only server.py, sent already
    api.stream(cited_events("It is not shown."))
    answer = generate(build_prompt(QUESTION, sent, 2), via(), None, tool)
    bad = api.requests[1]["json"]["messages"][2]["content"][0]
    assert bad["is_error"] is True and "needs `query`" in bad["content"]
    none_new = api.requests[2]["json"]["messages"][4]["content"][0]
    assert none_new["content"] == NO_NEW_PASSAGES and "is_error" not in none_new
    assert answer.text == "It is not shown." and answer.calls == 3


def test_sdk_model_that_will_not_stop_searching_is_an_error(index: Path, api: FakeApi, via: Any) -> None:
    tool = SearchTool(index, Request(QUESTION), first(index), limit=1)
    api.stream(search_events("settings"))
    api.stream(search_events("more", use_id="toolu_2"))  # its one search used, it searched again
    api.stream(search_events("again", use_id="toolu_3"))  # told there are none left, again
    with pytest.raises(BackendError, match="kept searching instead of answering"):
        generate(build_prompt(QUESTION, first(index), 1), via(), None, tool)
    assert len(api.requests) == 3
    refused = api.requests[2]["json"]["messages"][4]["content"][0]
    assert (refused["content"], refused["is_error"]) == (NO_SEARCHES_LEFT, True)


def test_sdk_without_follow_ups_offers_no_tool(index: Path, api: FakeApi, via: Any) -> None:
    api.stream(cited_events("From the passage."))
    generate(build_prompt(QUESTION, first(index)), via())
    [call] = api.requests
    assert "tools" not in call["json"] and "tool_choice" not in call["json"]


# --- claude -p, the tool served over MCP ------------------------------------------------------------------------


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake `claude` first on PATH; return the file where it records the tool it was served."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "claude"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CLAUDE}" "$@"\n')
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_CLAUDE_LOG", str(tmp_path / "claude-call.json"))
    monkeypatch.setenv("FAKE_CLAUDE_TOOLS", str(tmp_path / "claude-tools.json"))
    return tmp_path


def servers_running(marker: str) -> list[str]:
    """The processes whose command line holds `marker`."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline:
            found.append(cmdline)
    return found


def test_claude_gets_the_search_tool_over_mcp_and_nothing_else(
    index: Path, fake_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_SEARCH", "DEFAULT_REQUEST_TIMEOUT")
    monkeypatch.setenv("FAKE_CLAUDE_PREAMBLE", "Let me look for the default.")
    sent = first(index)
    tool = SearchTool(index, Request(QUESTION), sent, limit=2)
    streamed: list[str] = []
    told: list[str] = []
    answer = generate(
        build_prompt(QUESTION, sent, 2), ClaudeCliBackend(model="m"), streamed.append, tool, told.append
    )
    seen = json.loads((fake_claude / "claude-tools.json").read_text())
    [listed] = seen["tools"]
    assert (listed["name"], listed["schema"]["required"]) == ("search", ["query"])
    [result] = seen["results"]
    assert not result["is_error"]
    assert result["text"].startswith('<documents>\n<document index="2" path="settings.py" lines="1-1"')
    argv = json.loads((fake_claude / "claude-call.json").read_text())["argv"]
    assert argv[argv.index("--tools") + 1] == "" and "--strict-mcp-config" in argv
    assert argv[argv.index("--allowedTools") + 1] == "mcp__rag__search"
    assert argv[argv.index("--permission-mode") + 1] == "dontAsk"
    assert argv[argv.index("--max-turns") + 1] == "4"
    config = json.loads(argv[argv.index("--mcp-config") + 1])
    assert list(config["mcpServers"]) == ["rag"]
    assert told == ["DEFAULT_REQUEST_TIMEOUT"]
    assert "Let me look" not in "".join(streamed) and "".join(streamed) == answer.text
    assert [h.chunk.path for r in answer.rounds for h in r.hits] == ["settings.py"]
    cited = [(c.path, c.valid) for c in answer.citations]
    assert ("settings.py", True) in cited and answer.calls == 2
    # the server ended with claude: nothing it started outlives the answer
    spec = config["mcpServers"]["rag"]["args"][-1]
    assert servers_running(spec) == []


def test_claude_searches_past_the_limit_are_refused_by_the_server(
    index: Path, fake_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_SEARCH", "settings|DEFAULT_REQUEST_TIMEOUT")
    sent = first(index)
    tool = SearchTool(index, Request(QUESTION), sent, limit=1)
    answer = generate(build_prompt(QUESTION, sent, 1), ClaudeCliBackend(), None, tool)
    results = json.loads((fake_claude / "claude-tools.json").read_text())["results"]
    assert [r["is_error"] for r in results] == [False, True]
    assert results[1]["text"] == NO_SEARCHES_LEFT
    assert len(answer.rounds) == 1


# --- rag query ------------------------------------------------------------------------------------------------


@pytest.fixture
def use_fake(monkeypatch: pytest.MonkeyPatch, fake_backend: FakeBackend) -> FakeBackend:
    monkeypatch.setattr("rag.answer.backends.resolve_backend", lambda name, model, env=None: fake_backend)
    monkeypatch.setenv("RAG_SEARCH", "question")
    return fake_backend


def query(index: Path, *args: str) -> Any:
    return CliRunner().invoke(main, ["query", "-q", "--index", str(index), "-k", "1", *args])


def test_query_says_what_the_model_searched_and_lists_sources_in_the_order_cited(
    index: Path, use_fake: FakeBackend
) -> None:
    use_fake.search({"query": "DEFAULT_REQUEST_TIMEOUT"})
    use_fake.queue("30 seconds [settings.py:1-1], read by start_server [server.py:4-7].")
    result = query(index, QUESTION)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == "searched again: DEFAULT_REQUEST_TIMEOUT"
    assert result.stdout.endswith("Sources:\n  [1] settings.py:1-1\n  [2] server.py:4-7\n")
    assert "in 2 calls" in result.stderr


def test_query_json_has_each_round(index: Path, use_fake: FakeBackend) -> None:
    use_fake.search({"query": "DEFAULT_REQUEST_TIMEOUT"})
    use_fake.queue("30 seconds [settings.py:1-1].")
    got = json.loads(query(index, "--json", QUESTION).stdout)
    [round_] = got["rounds"]
    assert (round_["search"], round_["error"]) == ("DEFAULT_REQUEST_TIMEOUT", None)
    assert [(r["rank"], r["path"]) for r in round_["results"]] == [(2, "settings.py")]
    assert [r["path"] for r in got["results"]] == ["server.py"]  # the first round's, as before
    assert got["calls"] == 2 and got["citations"][0]["valid"] is True


@pytest.mark.parametrize(("args", "env"), [(["--follow-ups", "0"], {}), ([], {"RAG_FOLLOWUPS": "0"})])
def test_follow_ups_zero_is_a_single_round(
    index: Path, use_fake: FakeBackend, monkeypatch: pytest.MonkeyPatch, args: list[str], env: dict[str, str]
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    use_fake.queue("From the passage [server.py:4-7].")
    assert query(index, *args, QUESTION).exit_code == 0
    assert use_fake.tools == [None] and use_fake.prompts[0].follow_ups == 0


def test_follow_ups_out_of_range_is_a_usage_error(index: Path) -> None:
    result = query(index, "--follow-ups", "11", QUESTION)
    assert result.exit_code == 2 and "--follow-ups" in result.output


def test_show_prompt_shows_the_tool(index: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    result = query(index, "--backend", "anthropic", "--search", "question", "--show-prompt", QUESTION)
    body = json.loads(result.stdout)
    assert body["tools"] == [tool_definition(2)] and "`search`, up to 2 times" in body["system"]


def test_show_prompt_for_claude_shows_the_tool(index: Path, fake_claude: Path) -> None:
    result = query(index, "--backend", "claude", "--search", "question", "--show-prompt", QUESTION)
    assert "--- tool: mcp__rag__search" in result.stdout and '"name": "search"' in result.stdout


def test_query_through_claude_searches_again_in_a_real_process(index: Path, fake_claude: Path) -> None:
    env = {
        **os.environ,
        "RAG_BACKEND": "claude",
        "RAG_SEARCH": "question",
        "FAKE_CLAUDE_SEARCH": "DEFAULT_REQUEST_TIMEOUT",
    }
    done = subprocess.run(
        [sys.executable, str(PROJECT / "query.py"), "-q", "--index", str(index), "-k", "1", QUESTION],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "searched again: DEFAULT_REQUEST_TIMEOUT" in done.stderr
    assert "settings.py:1-1" in done.stdout.split("Sources:")[1]
    assert "(!)" not in done.stdout.split("Sources:")[1].split("nowhere.py")[0]


def started(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_claude_answer_starts_before_its_prompt_and_serves_the_passages_sent(
    index: Path, fake_claude: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag.answer import claude_cli

    log = tmp_path / "started.jsonl"
    monkeypatch.setenv("FAKE_CLAUDE_STARTED", str(log))
    monkeypatch.setenv("FAKE_CLAUDE_SEARCH", "DEFAULT_REQUEST_TIMEOUT start_server")
    spawned: list[tuple[bool, float]] = []  # in the order rag started them: an answer's claude? when

    def start(argv: list[str], cwd: str, executable: str, text: bool) -> Any:
        spawned.append(("--include-partial-messages" in argv, time.time()))
        return real_start(argv, cwd, executable, text)

    real_start = claude_cli._start
    monkeypatch.setattr(claude_cli, "_start", start)
    backend = ClaudeCliBackend(executable="claude", model="m")
    # (QUESTION names start_server, whose definition its own search ranks first: it would not be planned)
    planned = "how long may a request take when the server starts?"
    outcome = ask(index, Request(planned, 1), backend, planning=Planning(backend, "fast"), follow_ups=1)
    # the planning call's claude, then the answer's, both started before the plan's prompt was written
    assert [answering for answering, _ in spawned] == [False, True]
    records = started(log)
    starts = [r for r in records if "at" in r]
    prompts = {r["pid"]: r["prompt_at"] for r in records if "prompt_at" in r}
    [plan] = [r for r in starts if not r["answer"]]
    [answer_start] = [r for r in starts if r["answer"]]
    assert spawned[1][1] < prompts[plan["pid"]]
    assert prompts[plan["pid"]] < prompts[answer_start["pid"]]  # its prompt came once the plan was read
    answer = outcome.answer
    assert answer is not None and [r.search for r in answer.rounds] == [
        "DEFAULT_REQUEST_TIMEOUT start_server"
    ]
    # the server knew what the first round sent, though it was started before that was known
    sent_first = {h.passage.path for h in answer.hits}
    assert all(h.passage.path not in sent_first for h in answer.rounds[0].hits)
    assert [h.passage.path for h in answer.rounds[0].hits] == ["settings.py"]


def test_an_answer_start_not_taken_is_ended_with_the_question(
    index: Path, fake_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag.answer import claude_cli

    begun: list[tuple[Any, str]] = []

    def start(argv: list[str], cwd: str, executable: str, text: bool) -> Any:
        proc = real_start(argv, cwd, executable, text)
        begun.append((proc, cwd))
        return proc

    real_start = claude_cli._start
    monkeypatch.setattr(claude_cli, "_start", start)
    backend = ClaudeCliBackend(executable="claude", model="m")
    outcome = ask(index, Request("zebra quagga okapi", 1), backend, follow_ups=2)  # nothing matches
    assert outcome.answer is not None and outcome.answer.text == ""  # no model was asked
    [(proc, cwd)] = begun  # the answer's claude was started ahead of the search...
    assert proc.poll() is not None and not Path(cwd).exists()  # ...and ended with the question


def test_a_planning_start_not_taken_is_ended_once_the_search_is_done(
    index: Path, fake_claude: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag.answer import claude_cli

    calls = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_CLAUDE_CALLS", str(calls))
    begun: list[tuple[Any, str, bool]] = []

    def start(argv: list[str], cwd: str, executable: str, text: bool) -> Any:
        proc = real_start(argv, cwd, executable, text)
        begun.append((proc, cwd, "--include-partial-messages" in argv))
        return proc

    real_start = claude_cli._start
    monkeypatch.setattr(claude_cli, "_start", start)
    backend = ClaudeCliBackend(executable="claude", model="m")

    def answered(prompt: Any, *args: Any, **kwargs: Any) -> Any:
        [(plan_proc, plan_cwd, _), _] = begun
        assert plan_proc.poll() is not None and not Path(plan_cwd).exists()  # ended before the answer
        return real_generate(prompt, *args, **kwargs)

    real_generate = backend.generate
    monkeypatch.setattr(backend, "generate", answered)
    # QUESTION names start_server, whose definition its own search ranks first: no planning call
    outcome = ask(index, Request(QUESTION, 1), backend, planning=Planning(backend, "fast"), follow_ups=1)
    assert outcome.plan is None and outcome.answer is not None and outcome.answer.text
    assert [answering for _, _, answering in begun] == [False, True]
    [call] = [json.loads(line) for line in calls.read_text().splitlines()]  # the answer's prompt alone
    assert "<document" in call["stdin"]


def test_the_tool_server_lists_its_tool_before_the_passages_sent_are_known(
    index: Path, tmp_path: Path
) -> None:
    import io

    from rag.answer import claude_cli, tool_server

    tool = SearchTool(index, Request(QUESTION), (), limit=1)
    config = json.loads(claude_cli._tool_config(tool, str(tmp_path), str(tmp_path / "log.jsonl")))
    spec = config["mcpServers"]["rag"]["args"][-1]

    def lines() -> Any:
        yield json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}) + "\n"
        tool.sent.extend(first(index))  # the first passage is known only now, before any call
        claude_cli._tool_config(tool, str(tmp_path), str(tmp_path / "log.jsonl"))
        call = {"name": "search", "arguments": {"query": "start_server DEFAULT_REQUEST_TIMEOUT"}}
        yield json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}) + "\n"

    out = io.StringIO()
    tool_server.serve(spec, lines(), out)  # type: ignore[arg-type]
    listed, called = (json.loads(line) for line in out.getvalue().splitlines())
    assert [t["name"] for t in listed["result"]["tools"]] == ["search"]
    text = called["result"]["content"][0]["text"]
    assert 'path="settings.py"' in text and 'path="server.py"' not in text  # server.py was sent first


def test_an_answer_is_passed_on_before_its_block_ends_once_longer_than_a_preamble() -> None:
    from rag.answer.generation import TextGate

    written: list[str] = []
    gate = TextGate(written.append)
    gate.start_turn(hold=True)
    gate.block_start("text")
    sentence = "The timeout defaults to 30 seconds, set where the session is made. "
    for _ in range(TextGate.HOLD // len(sentence)):
        gate.add(sentence)
    assert written == []  # as long as a sentence or two written before a search, it waits
    gate.add(sentence)
    assert "".join(written) == sentence * (TextGate.HOLD // len(sentence) + 1)  # an answer: passed on
    gate.add("More.")
    assert written[-1] == "More."
    # a short text followed by a search is dropped
    written.clear()
    gate = TextGate(written.append)
    gate.start_turn(hold=True)
    gate.block_start("text")
    gate.add("Let me look for where the session sets its timeout, which these passages do not show.")
    gate.block_stop()
    gate.block_start("tool_use")
    gate.end_turn(searched=True)
    assert written == [] and gate.text == ""


def test_on_a_terminal_an_answer_shows_at_once_and_a_preamble_is_taken_back(
    index: Path, api: FakeApi, via: Any
) -> None:
    sent = first(index)
    tool = SearchTool(index, Request(QUESTION), sent, limit=1)
    settings = SearchTool(index, Request(QUESTION), sent).call({"query": "DEFAULT_REQUEST_TIMEOUT"}).hits[0]
    api.stream(search_events("DEFAULT_REQUEST_TIMEOUT", preamble="Let me find the default."))
    api.stream(cited_events("A request may take 30 seconds.", citation_of(settings, "30", 1)))
    shown: list[tuple[str, str]] = []
    answer = generate(
        build_prompt(QUESTION, sent, follow_ups=1),
        via(),
        lambda text: shown.append(("write", text)),
        tool,
        lambda words: shown.append(("search", words)),
        lambda text: shown.append(("erase", text)),
    )
    # written before the search was known, erased before the search is told, then the answer
    assert shown[:3] == [
        ("write", "Let me find the default."),
        ("erase", "Let me find the default."),
        ("search", "DEFAULT_REQUEST_TIMEOUT"),
    ]
    assert "".join(t for kind, t in shown[3:] if kind == "write") == answer.text
    assert answer.text == "A request may take 30 seconds. [1]"


def test_a_later_turn_after_text_passed_on_is_held_even_on_a_terminal() -> None:
    from rag.answer.generation import TextGate

    events: list[tuple[str, str]] = []
    gate = TextGate(lambda t: events.append(("write", t)), lambda t: events.append(("erase", t)))
    gate.start_turn(hold=True)
    gate.block_start("text")
    gate.add("Start")
    gate.add("s the server.")
    assert events == [("write", "Start"), ("write", "s the server.")]  # nothing held: the first text
    gate.block_stop()
    gate.end_turn(searched=False)
    assert gate.text == "Starts the server."
    # a second turn's text would follow text already written: it cannot be erased alone, so it waits
    gate.start_turn(hold=True)
    gate.block_start("text")
    gate.add("Let me check.")
    assert events[2:] == []
    gate.block_start("tool_use")
    gate.end_turn(searched=True)
    assert events[2:] == [] and gate.text == "Starts the server."
    gate.start_turn(hold=False)
    gate.block_start("text")
    gate.add("It listens on 8080.")
    assert events[2:] == [("write", "\n\nIt listens on 8080.")]


def preamble_env() -> dict[str, str]:
    """The environment of `query.py` answering through the fake `claude` (on PATH by the fixture),
    which writes a sentence and then searches."""
    return {
        **os.environ,
        "RAG_BACKEND": "claude",
        "RAG_SEARCH": "question",
        "FAKE_CLAUDE_SEARCH": "DEFAULT_REQUEST_TIMEOUT",
        "FAKE_CLAUDE_PREAMBLE": "Let me look for the default.",
    }


def test_query_on_a_terminal_erases_what_the_model_wrote_before_its_search(
    index: Path, fake_claude: Path
) -> None:
    import pty

    env = {**preamble_env(), "COLUMNS": "80", "LINES": "24"}
    primary, secondary = pty.openpty()
    with subprocess.Popen(
        [sys.executable, str(PROJECT / "query.py"), "-q", "--index", str(index), "-k", "1", QUESTION],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=subprocess.PIPE,
    ) as proc:
        os.close(secondary)
        seen = b""
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the terminal's other end closed: the run is over
                break
            if not chunk:
                break
            seen += chunk
        assert proc.wait(timeout=120) == 0
    os.close(primary)
    shown = seen.decode()
    before, erased, after = shown.partition("Let me look for the default.\r\x1b[J")
    assert erased and before == ""  # written first, then erased
    assert "Let me look" not in after and "Sources:" in after


def test_query_through_a_pipe_keeps_what_the_model_wrote_before_its_search_apart(
    index: Path, fake_claude: Path
) -> None:
    env = preamble_env()
    argv = [sys.executable, str(PROJECT / "query.py"), "-q", "--index", str(index), "-k", "1"]
    piped = subprocess.run([*argv, QUESTION], env=env, capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0, piped.stderr
    # written as it came, before the search was known; nothing can be erased from a pipe
    preamble, gap, rest = piped.stdout.partition("\n\n")
    assert (preamble, gap) == ("Let me look for the default.", "\n\n")
    as_json = subprocess.run(
        [*argv, "--json", QUESTION], env=env, capture_output=True, text=True, timeout=120
    )
    answer = json.loads(as_json.stdout)["answer"]
    assert "Let me look" not in answer and rest.startswith(answer.strip()[:40])
    assert "Let me look" not in rest and "Sources:" in rest
