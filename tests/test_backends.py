"""Tests for rag.answer.backends: the SDK mocked and against a local Messages API, and `claude -p` faked on PATH."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anthropic
import httpx2
import pytest
from conftest import FAKE_CLAUDE
from local_api import FakeApi, delta, plan_reply

from rag.answer.backends import (
    DEFAULT_MODEL,
    AnthropicBackend,
    ApiCitation,
    ClaudeCliBackend,
    parse_claude_result,
    resolve_backend,
)
from rag.answer.prompts import build_prompt
from rag.chunking import Chunk
from rag.errors import BackendError
from rag.ranking.hits import Hit

PROJECT = Path(__file__).resolve().parent.parent

HITS = [
    Hit(
        0.9,
        Chunk(
            "rag/auth.py",
            10,
            13,
            "function",
            "check_password",
            "def check_password(user, password):\n    stored = load_hash(user)\n"
            "    return verify(stored, password)\n",
            "",
            0,
        ),
    ),
    Hit(0.5, Chunk("rag/session.py", 1, 2, "class", "Session", "class Session:\n    token: str\n", "", 0)),
]
PROMPT = build_prompt("how does auth work?", HITS)
CITED = "    stored = load_hash(user)\n"
CITED_START = HITS[0].chunk.text.index(CITED)


# --- the request ----------------------------------------------------------------------------------------


def test_request_sends_each_hit_as_a_cited_document_then_the_question() -> None:
    req = AnthropicBackend(model="m").request(PROMPT)
    assert set(req) == {"model", "max_tokens", "system", "messages"}  # SDK 2.x: no temperature
    assert req["model"] == "m" and req["system"] == PROMPT.system
    [message] = req["messages"]
    docs, question = message["content"][:-1], message["content"][-1]
    assert [d["source"]["data"] for d in docs] == [h.chunk.text for h in HITS]
    assert all(d["type"] == "document" and d["citations"] == {"enabled": True} for d in docs)
    assert [d["title"] for d in docs] == ["rag/auth.py:10-13 check_password", "rag/session.py:1-2 Session"]
    assert question["type"] == "text" and "<question>\nhow does auth work?\n</question>" in question["text"]


# --- the SDK client mocked --------------------------------------------------------------------------------


def _block(text: str, citations: list[Any] | None = None) -> SimpleNamespace:
    return SimpleNamespace(type="text", text=text, citations=citations)


def _char_citation(index: int, text: str, start: int) -> SimpleNamespace:
    return SimpleNamespace(
        type="char_location",
        document_index=index,
        cited_text=text,
        start_char_index=start,
        end_char_index=start + len(text),
    )


def _mock_stream(mocker: Any, events: list[Any], message: Any) -> Any:
    stream = mocker.MagicMock()
    stream.__enter__.return_value = stream
    stream.__iter__.return_value = iter(events)
    stream.get_final_message.return_value = message
    client = mocker.MagicMock()
    client.messages.stream.return_value = stream
    return client


def test_generate_streams_text_and_keeps_only_text_blocks(mocker: Any) -> None:
    cited = _block("Passwords are checked against a stored hash.", [_char_citation(0, CITED, CITED_START)])
    thinking = SimpleNamespace(type="thinking", thinking="secret musings", signature="x")
    message = SimpleNamespace(
        content=[thinking, cited, _block(" That is all.")],
        stop_reason="end_turn",
        model="claude-x",
        usage=SimpleNamespace(input_tokens=50, output_tokens=12, cache_read_input_tokens=None),
    )
    events = [
        SimpleNamespace(type="thinking", thinking="secret musings"),
        SimpleNamespace(type="text", text="Passwords are checked "),
        SimpleNamespace(type="text", text="against a stored hash."),
        SimpleNamespace(type="content_block_stop", content_block=cited),
        SimpleNamespace(type="text", text=" That is all."),
        SimpleNamespace(type="content_block_stop", content_block=message.content[2]),
    ]
    client = _mock_stream(mocker, events, message)
    streamed: list[str] = []
    gen = AnthropicBackend(client=client, model="m").generate(PROMPT, streamed.append)
    assert "".join(streamed) == gen.text == "Passwords are checked against a stored hash. [1] That is all."
    assert gen.api_citations == (ApiCitation(0, CITED, CITED_START, CITED_START + len(CITED)),)
    assert gen.stop_reason == "end_turn" and gen.model == "claude-x"
    assert gen.usage == {"input_tokens": 50, "output_tokens": 12}
    kwargs = client.messages.stream.call_args.kwargs
    assert "temperature" not in kwargs and kwargs["model"] == "m"


def _status_error(cls: type[anthropic.APIStatusError], status: int, body: object = None) -> Exception:
    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    return cls("error", response=httpx2.Response(status, request=request), body=body)


def _request() -> httpx2.Request:
    return httpx2.Request("POST", "https://api.anthropic.com/v1/messages")


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            lambda: _status_error(anthropic.AuthenticationError, 401),
            "rejected the API key (401) — check ANTHROPIC_API_KEY",
        ),
        (lambda: _status_error(anthropic.RateLimitError, 429), "Rate limited by the Anthropic API (429)"),
        (lambda: _status_error(anthropic.OverloadedError, 529), "overloaded (529)"),
        (
            lambda: _status_error(anthropic.APIStatusError, 200, {"error": {"type": "overloaded_error"}}),
            "overloaded (529)",
        ),
        (lambda: _status_error(anthropic.NotFoundError, 404), "does not know model 'm' (404) — pick another"),
        (
            lambda: _status_error(
                anthropic.BadRequestError, 400, {"error": {"message": "prompt is\ntoo long"}}
            ),
            "failed (400): prompt is too long",
        ),
        (lambda: anthropic.APITimeoutError(request=_request()), "timed out"),
        (lambda: anthropic.APIConnectionError(request=_request()), "Cannot reach the Anthropic API"),
    ],
    ids=[
        "auth",
        "rate-limit",
        "overloaded",
        "overloaded-in-stream",
        "unknown-model",
        "bad-request",
        "timeout",
        "network",
    ],
)
def test_sdk_errors_become_one_line_backend_errors(mocker: Any, error: Any, expected: str) -> None:
    client = mocker.MagicMock()
    client.messages.stream.side_effect = error()
    with pytest.raises(BackendError) as info:
        AnthropicBackend(client=client, model="m").generate(PROMPT)
    assert expected in str(info.value)
    assert "\n" not in str(info.value)


def test_ctrl_c_while_streaming_propagates_and_closes_the_stream(mocker: Any) -> None:
    def interrupted() -> Iterator[Any]:
        yield SimpleNamespace(type="text", text="Half an ans")
        raise KeyboardInterrupt

    client = _mock_stream(mocker, [], None)
    stream = client.messages.stream.return_value
    stream.__iter__.return_value = interrupted()
    with pytest.raises(KeyboardInterrupt):
        AnthropicBackend(client=client).generate(PROMPT, lambda _: None)
    stream.__exit__.assert_called_once()


# --- the real SDK against a local Messages API ------------------------------------------------------------


def answer_events(model: str = DEFAULT_MODEL, stop_reason: str = "end_turn") -> list[dict[str, Any]]:
    """A streamed reply: a thinking block, a text block with a citation, then an uncited text block."""
    citation = {
        "type": "char_location",
        "cited_text": CITED,
        "document_index": 0,
        "document_title": "rag/auth.py:10-13 check_password",
        "start_char_index": CITED_START,
        "end_char_index": CITED_START + len(CITED),
    }
    return [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 321, "output_tokens": 1},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        delta(0, type="thinking_delta", thinking="hmm"),
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "text", "text": "", "citations": []},
        },
        delta(1, type="citations_delta", citation=citation),
        delta(1, type="text_delta", text="It loads "),
        delta(1, type="text_delta", text="the stored hash."),
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        delta(2, type="text_delta", text=" Then verifies."),
        {"type": "content_block_stop", "index": 2},
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 42},
        },
        {"type": "message_stop"},
    ]


def test_real_sdk_streams_a_cited_answer(api: FakeApi, via: Any) -> None:
    api.stream(answer_events())
    streamed: list[str] = []
    gen = via().generate(PROMPT, streamed.append)
    assert streamed == ["It loads ", "the stored hash.", " [1]", " Then verifies."]
    assert gen.text == "It loads the stored hash. [1] Then verifies."
    title = "rag/auth.py:10-13 check_password"  # the API names the document it cites
    assert gen.api_citations == (ApiCitation(0, CITED, CITED_START, CITED_START + len(CITED), title),)
    assert gen.stop_reason == "end_turn"
    assert gen.usage == {"input_tokens": 321, "output_tokens": 42}
    [sent] = api.requests
    assert sent["path"] == "/v1/messages"
    assert sent["headers"]["user-agent"].startswith(
        "Python-urllib" if via.path == "standard-library" else "Anthropic"
    )
    assert sent["json"]["stream"] is True and "temperature" not in sent["json"]
    assert sent["json"]["model"] == DEFAULT_MODEL
    assert sent["json"]["messages"][0]["content"][0]["citations"] == {"enabled": True}


def test_real_sdk_retries_a_429_then_succeeds(api: FakeApi, via: Any) -> None:
    api.reply(
        429,
        {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
        **{"retry-after-ms": "1"},
    )
    api.stream(answer_events())
    gen = via(max_retries=1).generate(PROMPT)
    assert gen.text.startswith("It loads")
    assert len(api.requests) == 2


@pytest.mark.parametrize(
    ("status", "kind", "expected"),
    [
        (429, "rate_limit_error", "Rate limited by the Anthropic API (429), even after retries"),
        (529, "overloaded_error", "The Anthropic API is overloaded (529), even after retries"),
        (401, "authentication_error", "rejected the API key (401)"),
    ],
    ids=["rate-limit", "overloaded", "auth"],
)
def test_real_sdk_errors_after_retries(api: FakeApi, via: Any, status: int, kind: str, expected: str) -> None:
    body = {"type": "error", "error": {"type": kind, "message": "nope"}}
    for _ in range(2):
        api.reply(status, body, **{"retry-after-ms": "1"})
    with pytest.raises(BackendError, match=re.escape(expected)):
        via(max_retries=1).generate(PROMPT)
    # 401 is not retried; a key rejected on the standard library's request is sent as the SDK sends it
    assert len(api.requests) == (1 if status == 401 else 2) + (status == 401 and via.path != "sdk")


def test_real_sdk_overload_inside_the_stream(api: FakeApi, via: Any) -> None:
    start = answer_events()[0]
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    api.stream([start, error])
    with pytest.raises(BackendError, match="overloaded"):
        via().generate(PROMPT)


def test_real_sdk_refusal_is_reported_as_the_stop_reason(api: FakeApi, via: Any) -> None:
    api.stream(answer_events(stop_reason="refusal"))
    assert via().generate(PROMPT).stop_reason == "refusal"


def test_real_sdk_timeout(api: FakeApi, via: Any) -> None:
    api.hang(1.0)
    with pytest.raises(BackendError, match="timed out"):
        via(max_retries=0, timeout=0.2).generate(PROMPT)


def test_real_sdk_network_down() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again before the request: nothing listens there
    client = anthropic.Anthropic(base_url=f"http://127.0.0.1:{port}", api_key="test", max_retries=0)
    with pytest.raises(BackendError, match="Cannot reach the Anthropic API — check your network"):
        AnthropicBackend(client=client).generate(PROMPT)


def test_real_sdk_stream_cut_off_before_its_end_is_an_error_not_an_answer(api: FakeApi, via: Any) -> None:
    events = answer_events()
    api.stream(events[:7])  # message_start ... "It loads ": the connection closes there
    streamed: list[str] = []
    with pytest.raises(BackendError, match="closed before the answer was complete"):
        via().generate(PROMPT, streamed.append)
    assert streamed == ["It loads "]


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/json", b"{not json"),  # a proxy that does not stream
        ("text/event-stream", b"event: message_start\ndata: {broken json\n\n"),
        ("text/html", b"<html><body>Gateway</body></html>"),
    ],
    ids=["json-body", "garbled-event", "html"],
)
def test_real_sdk_unreadable_response_is_one_line(
    api: FakeApi, via: Any, content_type: str, body: bytes
) -> None:
    api.responses.append((200, {"content-type": content_type}, body))
    with pytest.raises(BackendError, match="response this tool cannot read"):
        via().generate(PROMPT)


def test_real_sdk_empty_answer_is_an_error(api: FakeApi, via: Any) -> None:
    events = answer_events()
    api.stream([events[0], events[-2], events[-1]])  # start, stop reason end_turn, stop: no text
    with pytest.raises(BackendError, match="returned an empty answer"):
        via().generate(PROMPT)


def test_the_client_made_here_has_bounded_timeouts(mocker: Any) -> None:
    made = mocker.patch("anthropic.Anthropic")
    made.return_value.messages.stream.side_effect = anthropic.APIConnectionError(request=_request())
    with pytest.raises(BackendError):
        AnthropicBackend(api_key="k").generate(PROMPT)
    timeout = made.call_args.kwargs["timeout"]
    assert (timeout.connect, timeout.read) == (10.0, 120.0)  # the SDK's default read timeout is 600 s


# --- claude -p ----------------------------------------------------------------------------------------------


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put a fake `claude` first on PATH; return the file where it logs how it was called."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "claude"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CLAUDE}" "$@"\n')
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    log = tmp_path / "claude-call.json"
    monkeypatch.setenv("FAKE_CLAUDE_LOG", str(log))
    return log


def test_claude_runs_without_tools_from_a_temporary_directory(
    fake_claude: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    backend = resolve_backend("claude", "some-model")
    assert isinstance(backend, ClaudeCliBackend)
    streamed: list[str] = []
    gen = backend.generate(PROMPT, streamed.append)
    assert gen.text == "From the documents: see [rag/auth.py:10-13]. Also [nowhere.py:1-2]."
    assert len(streamed) == 2 and "".join(streamed) == gen.text  # as it streamed, in two deltas
    assert gen.usage == {"input_tokens": 120, "output_tokens": 14}
    assert (gen.rounds, gen.calls) == ((), 1)
    call = json.loads(fake_claude.read_text())
    assert call["argv"] == [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--input-format",
        "stream-json",  # the prompt comes as one user message
        "--tools",
        "",
        "--strict-mcp-config",  # no MCP server of the user's: no tool at all
        "--no-session-persistence",
        "--model",
        "some-model",
        "--system-prompt",
        PROMPT.system,
        "--max-turns",
        "1",
    ]
    assert call["stdin"] == PROMPT.user and call["stdin_is_pipe"]
    assert Path(call["cwd"]).resolve() != tmp_path.resolve()
    assert Path(call["cwd"]).name.startswith("rag-claude-")
    assert not Path(call["cwd"]).exists()  # removed afterwards


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("error", r"`claude -p` returned an error \(exit 1\): Credit balance is too low"),
        ("text-error", r"`claude -p` failed \(exit 1\): Error: Invalid API key · Please run /login"),
        ("garbage", r"`claude -p` failed \(exit 0\): <html>not json</html>"),
        ("empty", r"`claude -p` returned an empty answer"),
    ],
    ids=["json-error", "text-error", "not-json", "empty"],
)
def test_claude_failures_are_backend_errors(
    fake_claude: Path, monkeypatch: pytest.MonkeyPatch, mode: str, expected: str
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_MODE", mode)
    with pytest.raises(BackendError, match=expected):
        ClaudeCliBackend().generate(PROMPT)


def test_claude_hang_is_cut_by_the_timeout(fake_claude: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "hang")
    started = time.monotonic()
    with pytest.raises(BackendError, match=r"no answer within 0.5 s"):
        ClaudeCliBackend(timeout=0.5).generate(PROMPT)
    assert time.monotonic() - started < 10


def test_claude_that_leaves_a_process_holding_its_output_still_answers(
    fake_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "daemon")
    # the answer comes once claude has exited, not at the timeout ("gave no answer within 30 s")
    gen = ClaudeCliBackend(timeout=30).generate(PROMPT)
    assert gen.text.startswith("From the documents")


def test_claude_whose_left_process_escapes_its_session_still_answers(
    fake_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "setsid-daemon")  # holds stdout 30 s, out of reach
    # claude has answered and exited: its answer, not "gave no answer within 20 s" at the deadline
    gen = ClaudeCliBackend(timeout=20).generate(PROMPT)
    assert gen.text.startswith("From the documents")


def test_an_ignored_hangup_stays_ignored_while_claude_runs() -> None:
    import signal

    from rag.errors import terminations_as_exit

    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as under nohup
    try:
        with terminations_as_exit():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_an_error_of_the_callers_writer_is_not_blamed_on_the_api(api: FakeApi) -> None:
    api.stream(answer_events())

    def write(text: str) -> None:
        raise UnicodeEncodeError("ascii", text, 0, 1, "the terminal cannot show it")

    with pytest.raises(UnicodeEncodeError):
        AnthropicBackend(client=api.client()).generate(PROMPT, write)


def test_a_terminated_query_ends_claude_too(
    tmp_path: Path, fake_claude: Path, worked_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import signal
    import subprocess

    from rag import ingest

    ingest(worked_repo)
    pid_file = tmp_path / "claude.pid"
    env = {
        **os.environ,
        "FAKE_CLAUDE_MODE": "hang",
        "FAKE_CLAUDE_PID": str(pid_file),
        "RAG_BACKEND": "claude",
    }
    env.pop("ANTHROPIC_API_KEY", None)
    query = subprocess.Popen(
        [sys.executable, str(PROJECT / "query.py"), "billing refunds"],
        cwd=worked_repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(200):
        if pid_file.exists() and pid_file.read_text():
            break
        time.sleep(0.05)
    claude_pid = int(pid_file.read_text())
    query.send_signal(signal.SIGTERM)  # what `timeout`, systemd or a closing terminal sends
    assert query.wait(timeout=30) == 128 + signal.SIGTERM
    for _ in range(100):  # the process may take a moment to be reaped
        try:
            os.kill(claude_pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        os.kill(claude_pid, signal.SIGKILL)
        pytest.fail("claude kept running after the query was terminated")


def test_claude_not_installed(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="is not installed or not on PATH"):
        ClaudeCliBackend(executable=str(tmp_path / "no-claude")).generate(PROMPT)


def test_claude_short_call_is_run_with_a_pipe_and_a_timeout(mocker: Any) -> None:
    proc = mocker.MagicMock(returncode=0)
    proc.communicate.return_value = (json.dumps({"is_error": False, "result": "ok [a.py:1-2]"}), "")
    popen = mocker.patch("subprocess.Popen", return_value=proc)
    gen = ClaudeCliBackend(executable="claude").complete(PROMPT, model="fast", max_tokens=10, timeout=7)
    assert gen.text == "ok [a.py:1-2]"
    kwargs = popen.call_args.kwargs
    assert kwargs["stdin"] is subprocess.PIPE and kwargs["start_new_session"] is True
    assert popen.call_args.args[0][:5] == ["claude", "-p", "--output-format", "stream-json", "--verbose"]
    proc.communicate.assert_called_once()  # answered at once: one read, in a slice of the timeout
    [sent] = proc.communicate.call_args.args  # the prompt as one stream-json user message
    assert json.loads(sent) == {"type": "user", "message": {"role": "user", "content": PROMPT.user}}
    assert sent.endswith("\n") and sent.count("\n") == 1
    assert popen.call_args.args[0][5:7] == ["--input-format", "stream-json"]
    assert 0 < proc.communicate.call_args.kwargs["timeout"] <= 7


def test_parse_claude_result_takes_the_result_event_of_a_stream() -> None:
    events = [
        {"type": "system", "subtype": "init", "tools": []},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "draft"}]}},
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": "searches",
            "usage": {"input_tokens": 9},
        },
    ]
    stdout = "\n".join(json.dumps(e) for e in events) + "\n"
    gen = parse_claude_result(0, stdout, "", "m")
    assert (gen.text, gen.usage) == ("searches", {"input_tokens": 9})
    with pytest.raises(BackendError, match="failed"):  # a stream cut before its result
        parse_claude_result(0, "\n".join(json.dumps(e) for e in events[:2]), "", "m")


@pytest.mark.parametrize(
    ("returncode", "stdout", "expected"),
    [
        (0, {"is_error": False, "result": "fine"}, None),
        (1, {"is_error": False, "result": "fine"}, "returned an error (exit 1)"),
        (0, {"is_error": True, "result": "boom"}, "returned an error (exit 0): boom"),
        (0, {"result": "no is_error field"}, "returned an error"),
        (0, {"is_error": False, "result": "  \n"}, "empty answer"),
        (0, {"is_error": False, "result": None}, "empty answer"),
        (0, [1, 2], "failed (exit 0)"),
    ],
    ids=["ok", "nonzero-exit", "is-error", "no-is-error", "blank", "null-result", "not-an-object"],
)
def test_parse_claude_result(returncode: int, stdout: object, expected: str | None) -> None:
    if expected is None:
        assert parse_claude_result(returncode, json.dumps(stdout), "", "m").text == "fine"
    else:
        with pytest.raises(BackendError) as info:
            parse_claude_result(returncode, json.dumps(stdout), "", "m")
        assert expected in str(info.value)


# --- choosing a backend -----------------------------------------------------------------------------------


def test_resolve_backend(tmp_path: Path, fake_claude: Path) -> None:
    with_claude = {"PATH": os.environ["PATH"]}
    no_claude = {"PATH": str(tmp_path / "empty")}
    keyed = {"ANTHROPIC_API_KEY": "sk-test", **no_claude}
    assert resolve_backend("none", env=keyed) is None
    assert isinstance(resolve_backend("auto", env=keyed), AnthropicBackend)
    assert isinstance(resolve_backend("auto", env={**keyed, **with_claude}), AnthropicBackend)
    assert isinstance(resolve_backend("auto", env=with_claude), ClaudeCliBackend)
    assert resolve_backend("auto", env=no_claude) is None
    anthropic_backend = resolve_backend("anthropic", "my-model", env=keyed)
    assert isinstance(anthropic_backend, AnthropicBackend)
    assert (anthropic_backend.model, anthropic_backend.api_key) == ("my-model", "sk-test")
    with pytest.raises(BackendError, match="ANTHROPIC_API_KEY is not set — export it"):
        resolve_backend("anthropic", env=no_claude)
    pasted = resolve_backend("anthropic", env={"ANTHROPIC_API_KEY": "sk-test\n", **no_claude})
    assert isinstance(pasted, AnthropicBackend) and pasted.api_key == "sk-test"  # not an illegal header
    for garbled in ("sk-test\nsk-other", "sk-test sk-other", "sk-\ttest"):  # was "cannot reach the API"
        with pytest.raises(BackendError, match="ANTHROPIC_API_KEY holds a space or a line break — set it"):
            resolve_backend("auto", env={"ANTHROPIC_API_KEY": garbled, **no_claude})
    with pytest.raises(BackendError, match="`claude` is not on PATH"):
        resolve_backend("claude", env=no_claude)


# --- the search plan: one call through the standard library, while the SDK imports ---------------------


PLAN_SCRIPT = """
import json, sys
from rag.answer.backends import AnthropicBackend
from rag.answer.plan import planning_prompt
from rag.retrieval.results import Glance
backend = AnthropicBackend(api_key="sk-plan")
prompt = planning_prompt("how does auth work?", Glance("repo", ("Python",), ()))
reply = backend.complete(prompt, model="claude-fast", max_tokens=50, timeout=5)
print(json.dumps([reply.text, reply.usage, reply.model, "anthropic" in sys.modules]))
"""


def test_a_search_plan_goes_out_without_importing_the_sdk(api: FakeApi) -> None:
    api.reply(200, plan_reply("verify_password load_hash", usage={"input_tokens": 40, "output_tokens": 4}))
    env = {**os.environ, "ANTHROPIC_BASE_URL": api.url + "/"}
    out = subprocess.run(
        [sys.executable, "-c", PLAN_SCRIPT], capture_output=True, text=True, env=env, cwd=PROJECT, check=True
    ).stdout
    text, usage, model, imported = json.loads(out)
    assert (text, usage, model, imported) == (
        "verify_password load_hash",
        {"input_tokens": 40, "output_tokens": 4},
        "claude-fast",
        False,
    )
    [sent] = api.requests
    assert sent["path"] == "/v1/messages"
    assert (sent["headers"]["x-api-key"], sent["headers"]["anthropic-version"]) == ("sk-plan", "2023-06-01")
    assert sent["json"]["model"] == "claude-fast" and "stream" not in sent["json"]


ANSWER_SCRIPT = """
import json, sys
from rag.answer import anthropic_api
from rag.answer.prompts import build_prompt
PROMPT = build_prompt("how does auth work?", [])
backend = anthropic_api.AnthropicBackend(api_key="sk-answer")
backend.prepare(0, None)  # as a query does when the question comes in
streamed = []
gen = backend.generate(PROMPT, streamed.append)
importing = anthropic_api._importing[0].is_alive()
print(json.dumps([streamed, gen.text, gen.stop_reason, importing]))
"""


def test_an_answer_streams_while_the_sdk_is_still_importing(api: FakeApi) -> None:
    api.stream(answer_events())
    env = {**os.environ, "ANTHROPIC_BASE_URL": api.url}
    out = subprocess.run(
        [sys.executable, "-c", ANSWER_SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        cwd=PROJECT,
        check=True,
    ).stdout
    streamed, text, stop_reason, importing = json.loads(out)
    assert streamed == ["It loads ", "the stored hash.", " [1]", " Then verifies."]
    assert (text, stop_reason) == ("It loads the stored hash. [1] Then verifies.", "end_turn")
    assert importing  # the answer was read before the SDK finished importing
    [sent] = api.requests
    assert sent["headers"]["user-agent"].startswith("Python-urllib")
    assert (sent["headers"]["x-api-key"], sent["headers"]["anthropic-version"]) == ("sk-answer", "2023-06-01")
    assert sent["json"]["stream"] is True


def test_a_plan_that_cannot_connect_is_one_line() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket closes
    backend = AnthropicBackend(client=anthropic.Anthropic(base_url=f"http://127.0.0.1:{port}", api_key="k"))
    with pytest.raises(BackendError, match=r"^Cannot reach the Anthropic API — check your network"):
        backend.complete(PROMPT, model="m", max_tokens=5, timeout=2)


def test_prepare_imports_the_sdk_in_the_background_only_without_credentials_in_sight() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")}
    # with a key, the first request goes through the standard library: no import beside the search
    script = (
        "import sys; from rag.answer import anthropic_api as a; "
        "a.AnthropicBackend(api_key='k').prepare(2, None); print(a._importing, 'anthropic' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=PROJECT, check=True, env=env
    )
    assert out.stdout.split() == ["[]", "False"]
    # without, the SDK finds them: its import starts at once, in one thread that never holds the process open
    script = (
        "import sys; from rag.answer import anthropic_api as a; assert 'anthropic' not in sys.modules; "
        "a.AnthropicBackend().prepare(0, None); a.AnthropicBackend().prepare(2, None); "
        "[t] = a._importing; t.join(); print('anthropic' in sys.modules, t.daemon)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=PROJECT, check=True, env=env
    )
    assert out.stdout.split() == ["True", "True"]
