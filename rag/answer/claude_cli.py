"""`claude -p` (Claude Code) as a backend: the prompt on stdin, our system prompt, no built-in tool
and no MCP server of the user's; the answer streamed from its `stream-json` output.

When the answering model may search again, Claude Code gets exactly one tool: the search of
rag.answer.tool_server, its only MCP server (--strict-mcp-config), the only tool allowed
(--allowedTools, --permission-mode dontAsk denies anything else), within a bounded number of turns
(--max-turns). The server itself refuses searches past the limit. Claude runs in a session of its
own from an empty temporary folder; a timeout or Ctrl-C ends that session (claude, the server and
anything else it started), so nothing outlives the command.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, NamedTuple

from rag.answer.defaults import DEFAULT_MODEL
from rag.answer.generation import (
    USAGE_FIELDS,
    CallerError,
    Generation,
    OnRetract,
    OnSearch,
    OnText,
    TextGate,
    one_line,
    render_text_prompt,
)
from rag.errors import BackendError, terminations_as_exit

if TYPE_CHECKING:
    import subprocess

    from rag.answer.followups import SearchTool
    from rag.answer.prompts import Prompt

DEFAULT_CLAUDE_TIMEOUT = 300.0  # seconds for one `claude -p` run
CLAUDE_EXIT_GRACE = 2.0  # seconds to wait for the pipes to close once `claude` itself has exited
MCP_SERVER = "rag"  # the tool server's name in Claude Code: its tool is mcp__rag__search
EXTRA_TURNS = 2  # turns past the searches: the answer, and one more should the model search past its limit
LOG = "searches.jsonl"  # in an answer's folder: the searches its tool server ran


class _Early(NamedTuple):
    """An answer's `claude -p`, started before its prompt was known, and what it was started for."""

    proc: subprocess.Popen[bytes]
    cwd: str
    log: str
    system: str
    follow_ups: int
    tool: SearchTool | None


def tool_name() -> str:
    """The search tool as Claude Code names it."""
    from rag.answer.followups import TOOL_NAME

    return f"mcp__{MCP_SERVER}__{TOOL_NAME}"


class ClaudeCliBackend:
    """`claude -p` (Claude Code) in a subprocess: prompt on stdin, streamed JSON events out."""

    name = "claude"

    def __init__(
        self, executable: str = "claude", model: str = DEFAULT_MODEL, timeout: float = DEFAULT_CLAUDE_TIMEOUT
    ) -> None:
        self.executable = executable
        self.model = model
        self.timeout = timeout
        self._early: _Early | None = None  # the answer's `claude -p`, started by prepare()
        # a planning call's `claude -p` (its system prompt and model), started by prepare_completion()
        self._early_completion: tuple[str, str, subprocess.Popen[str]] | None = None

    def command(self, system: str, model: str | None = None) -> list[str]:
        """Return the argument vector of a short call: print mode, the prompt as a stream-json
        message (which needs stream-json out: the result is its last event), no tools."""
        return [
            self.executable,
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",  # stream-json in print mode requires it
            "--input-format",
            "stream-json",
            "--tools",
            "",
            "--strict-mcp-config",
            "--no-session-persistence",
            "--model",
            model or self.model,
            "--system-prompt",
            system,
        ]

    def answer_command(self, system: str, follow_ups: int, mcp_config: str | None = None) -> list[str]:
        """Return the argument vector of an answer: streamed events, no built-in tool, no MCP server
        but `mcp_config`'s, and with it only its search allowed, in a bounded number of turns."""
        argv = [
            self.executable,
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",  # stream-json in print mode requires it
            "--include-partial-messages",
            "--input-format",
            "stream-json",  # the prompt as a message: sent 0.05 s after it is written, not 0.17
            "--tools",
            "",
            "--strict-mcp-config",
            "--no-session-persistence",
            "--model",
            self.model,
            "--system-prompt",
            system,
        ]
        if mcp_config is None:
            return [*argv, "--max-turns", "1"]
        return [
            *argv,
            "--mcp-config",
            mcp_config,
            "--allowedTools",
            tool_name(),
            "--permission-mode",
            "dontAsk",
            "--max-turns",
            str(follow_ups + EXTRA_TURNS),
        ]

    @contextmanager
    def prepare(self, follow_ups: int, tool: SearchTool | None) -> Iterator[None]:
        """Start the answer's `claude -p` now; its prompt follows on stdin once the passages are
        known, so Claude Code starts up (its MCP server too) while the search is planned and run.
        What the prompt needs and cannot yet hold (the passages sent, for the server) is written
        before the prompt is sent. A start the answer does not take is ended with the block."""
        from rag.answer.prompts import system_prompt

        with self._launched(system_prompt(follow_ups), follow_ups, tool) as early:
            self._early = early
            try:
                yield
            finally:
                self._early = None

    @contextmanager
    def prepare_completion(self, system: str, model: str) -> Iterator[None]:
        """Start the `claude -p` of a complete() with `system` and `model` now (the planning call):
        its prompt follows once the index has been glanced at, and Claude Code's start is over by
        then. A start complete() does not take is ended with the block."""
        with _session(lambda cwd: self.command(system, model), self.executable, text=True) as (proc, _):
            self._early_completion = (system, model, proc)
            try:
                yield
            finally:
                self._early_completion = None

    @contextmanager
    def _launched(self, system: str, follow_ups: int, tool: SearchTool | None) -> Iterator[_Early]:
        """An answer's `claude -p`, waiting for its prompt on stdin (_session); with `tool` and
        follow-ups, served the search tool."""

        def argv(cwd: str) -> list[str]:
            config = (
                _tool_config(tool, cwd, os.path.join(cwd, LOG)) if tool is not None and follow_ups else None
            )
            return self.answer_command(system, follow_ups, config)

        with _session(argv, self.executable, text=False) as (proc, cwd):
            yield _Early(proc, cwd, os.path.join(cwd, LOG), system, follow_ups, tool)

    def render(self, prompt: Prompt) -> str:
        """Return the system prompt (passed as --system-prompt) and the user prompt (sent on stdin);
        with follow-ups, the search tool's definition, as its MCP server lists it."""
        text = render_text_prompt(prompt)
        if not prompt.follow_ups:
            return text
        from rag.answer.followups import tool_definition

        definition = tool_definition(prompt.follow_ups)
        return (
            f"{text}\n--- tool: {tool_name()} (served by rag's own MCP server, the only tool allowed; "
            f"at most {prompt.follow_ups} searches, {prompt.follow_ups + EXTRA_TURNS} turns) ---\n"
            + json.dumps(definition, indent=2, ensure_ascii=False)
        )

    def render_completion(self, prompt: Prompt, *, model: str, max_tokens: int) -> str:
        """Return what complete() sends: the same parts as an answer's, to `model`."""
        return render_text_prompt(prompt)

    def complete(self, prompt: Prompt, *, model: str, max_tokens: int, timeout: float) -> Generation:
        """One more `claude -p` run, with `model`, cut at `timeout` seconds (claude takes no token limit)."""
        return self._run(prompt, model, timeout)

    def generate(
        self,
        prompt: Prompt,
        on_text: OnText | None = None,
        tool: SearchTool | None = None,
        on_search: OnSearch | None = None,
        on_retract: OnRetract | None = None,
    ) -> Generation:
        """Run `claude -p` (the one prepare() started, when it was started for this prompt) and
        stream its answer to `on_text`; with `tool` and prompt.follow_ups, serve it the search tool,
        and read back the searches it made."""
        searching = tool is not None and bool(prompt.follow_ups)
        events = _Events(TextGate(on_text, on_retract), prompt.follow_ups if searching else 0, on_search)
        early, self._early = self._early, None
        taken = early is not None and (early.system, early.follow_ups, early.tool) == (
            prompt.system,
            prompt.follow_ups,
            tool,
        )
        if not taken:
            self._early = early  # another prompt's start, if any: prepare()'s block ends it
        started = (
            nullcontext(early)
            if taken
            else self._launched(prompt.system, prompt.follow_ups, tool if searching else None)
        )
        with started as answer:
            assert answer is not None
            if taken and tool is not None and searching:
                _tool_config(tool, answer.cwd, answer.log)  # the passages sent, before the prompt
            returncode, stderr = _follow(answer.proc, user_message(prompt.user), self.timeout, events.line)
            rounds = _read_rounds(answer.log) if searching else ()
        if tool is not None and searching:
            tool.rounds[:] = rounds
            tool.sent.extend(h for r in rounds for h in r.hits)
        return events.generation(returncode, stderr, self.model, rounds)

    def _run(self, prompt: Prompt, model: str, timeout: float) -> Generation:
        """One `claude -p` call: the one prepare_completion() started, when it was started for
        this system prompt and model, else a new one."""
        import subprocess

        early = self._early_completion
        if early is not None and early[:2] == (prompt.system, model):
            self._early_completion = None  # taken (another call's start is left to its block to end)
            started: AbstractContextManager[tuple[subprocess.Popen[Any], str]] = nullcontext((early[2], ""))
        else:
            started = _session(lambda cwd: self.command(prompt.system, model), self.executable, text=True)
        with started as (proc, _):
            try:
                with terminations_as_exit():  # then claude's session is ended too
                    stdout, stderr = _communicate(proc, user_message(prompt.user), timeout)
            except subprocess.TimeoutExpired:
                _kill(proc)
                raise BackendError(
                    f"`claude -p` gave no answer within {timeout:g} s — try again, or use --backend anthropic"
                ) from None
            except BaseException:
                _kill(proc)
                raise
        return parse_claude_result(proc.returncode, stdout, stderr, model)


def user_message(text: str) -> str:
    """`text` as the one user message of `--input-format stream-json` (a JSON line; stdin then
    closes, and claude ends once it has answered)."""
    message = {"type": "user", "message": {"role": "user", "content": text}}
    return json.dumps(message, ensure_ascii=False) + "\n"


def _tool_config(tool: SearchTool, cwd: str, log: str) -> str:
    """Write the tool server's spec into `cwd`; return the --mcp-config JSON that starts it."""
    from rag.answer.followups import round_record

    spec = os.path.join(cwd, "search-tool.json")
    request = tool.request
    with open(spec + ".new", "w", encoding="utf-8") as f:
        json.dump(
            {
                "index": (
                    list(tool.index_path)
                    if isinstance(tool.index_path, tuple)
                    else os.path.abspath(tool.index_path)
                ),
                "groups": sorted(request.groups),
                "scoring": request.scoring,
                "rerank": request.rerank,
                "limit": tool.left,
                "sent": round_record(_sent_round(tool))["hits"],
                "log": log,
            },
            f,
            ensure_ascii=False,
        )
    os.replace(spec + ".new", spec)  # the server reads it whole, never half written
    # the server runs with this Python, and finds this rag even from a checkout that is not installed
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p)
    server = {
        "command": sys.executable,
        "args": ["-m", "rag.answer.tool_server", spec],
        "env": {"PYTHONPATH": path},
    }
    return json.dumps({"mcpServers": {MCP_SERVER: server}})


def _sent_round(tool: SearchTool) -> Any:
    from rag.answer.followups import Round

    return Round("", tuple(tool.sent))


def _read_rounds(log: str) -> tuple[Any, ...]:
    from rag.answer.followups import round_from_record

    try:
        with open(log, encoding="utf-8") as f:
            return tuple(round_from_record(json.loads(line)) for line in f if line.strip())
    except FileNotFoundError:
        return ()


class _Events:
    """Reads claude's stream-json events: the answer's text through the gate, each search (a tool
    call) told to `on_search`, and the closing result."""

    def __init__(self, gate: TextGate, follow_ups: int, on_search: OnSearch | None) -> None:
        self.gate = gate
        self.follow_ups = follow_ups
        self.on_search = on_search
        self.searches: set[str] = set()  # tool call ids already told
        self.result: dict[str, Any] | None = None
        self.streamed = False  # the text came as partial messages
        self.stop_reason: str | None = None
        self.block = ""  # the kind of the content block being streamed
        self.other: list[str] = []  # lines that are not events: what claude printed on failure

    def line(self, line: str) -> None:
        """Take one line of claude's stdout."""
        try:
            event = json.loads(line)
        except ValueError:
            event = None
        if not isinstance(event, dict):
            if line.strip():
                self.other.append(line)
            return
        kind = event.get("type")
        if kind == "stream_event" and isinstance(event.get("event"), dict):
            self._api_event(event["event"])
        elif kind == "assistant":
            self._message(event.get("message"))
        elif kind == "result":
            self.result = event

    def _api_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start":
            self.gate.start_turn(hold=len(self.searches) < self.follow_ups)
            self.stop_reason = None
        elif kind == "content_block_start":
            self.block = str((event.get("content_block") or {}).get("type", ""))
            self.gate.block_start(self.block)
        elif kind == "content_block_delta":
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
                self.streamed = True
                self.gate.add(delta["text"])
        elif kind == "content_block_stop" and self.block == "text":
            self.gate.block_stop()
        elif kind == "message_delta":
            self.stop_reason = (event.get("delta") or {}).get("stop_reason")
        elif kind == "message_stop":
            self.gate.end_turn(searched=self.stop_reason == "tool_use")

    def _message(self, message: object) -> None:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            use_id = str(block.get("id"))
            if use_id in self.searches:
                continue
            self.searches.add(use_id)
            query = (block.get("input") or {}).get("query") if isinstance(block.get("input"), dict) else None
            if (
                self.on_search is not None
                and isinstance(query, str)
                and len(self.searches) <= self.follow_ups
            ):
                self.on_search(" ".join(query.split()))

    def generation(self, returncode: int, stderr: str, model: str, rounds: tuple[Any, ...]) -> Generation:
        """The answer the events came to; any failure is a BackendError."""
        result = self.result
        if result is None:
            detail = one_line(stderr or "\n".join(self.other)) or "no output"
            raise BackendError(
                f"`claude -p` failed (exit {returncode}): {detail} — check that `claude -p` works in a terminal"
            )
        text = result.get("result")
        if result.get("subtype") == "error_max_turns":
            raise BackendError(
                "The model kept searching instead of answering — ask again, or use --follow-ups 0"
            )
        if returncode != 0 or result.get("is_error") is not False:
            detail = one_line(str(text or result.get("subtype") or stderr or "unknown error"))
            raise BackendError(f"`claude -p` returned an error (exit {returncode}): {detail}")
        if not self.streamed and isinstance(text, str):  # no partial messages: the result is the answer
            self.gate.start_turn(hold=False)
            self.gate.add(text)
        answer = self.gate.text
        if not answer.strip():
            raise BackendError("`claude -p` returned an empty answer — try again, or use --backend anthropic")
        raw = result.get("usage")
        usage = (
            {k: v for k in USAGE_FIELDS if isinstance(v := raw.get(k), int)} if isinstance(raw, dict) else {}
        )
        turns = result.get("num_turns")
        return Generation(
            text=answer,
            stop_reason=result.get("stop_reason") or None,
            usage=usage,
            model=model,
            rounds=rounds,
            calls=turns if isinstance(turns, int) and turns > 0 else 1 + len(rounds),
        )


@contextmanager
def _session(
    argv: Callable[[str], list[str]], executable: str, text: bool
) -> Iterator[tuple[subprocess.Popen[Any], str]]:
    """A `claude -p` started from an empty temporary directory (so no CLAUDE.md or project settings
    load) with the arguments `argv` gives for that directory, and the directory. When the block
    ends, a claude still running (never given its prompt) is ended, and the directory removed."""
    import shutil
    import tempfile

    cwd = tempfile.mkdtemp(prefix="rag-claude-")
    proc = None
    try:
        proc = _start(argv(cwd), cwd, executable, text)
        yield proc, cwd
    finally:
        if proc is not None and proc.poll() is None:
            _kill(proc)
        shutil.rmtree(cwd, ignore_errors=True)


def _start(argv: list[str], cwd: str, executable: str, text: bool) -> subprocess.Popen[Any]:
    import subprocess

    try:
        # its own session, so that a timeout or Ctrl-C can end claude and anything it started
        return subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            text=text,
            encoding="utf-8" if text else None,
            errors="replace" if text else None,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise BackendError(
            f"`{executable}` is not installed or not on PATH — install Claude Code, "
            "or use --backend anthropic with ANTHROPIC_API_KEY"
        ) from None


def _follow(
    proc: subprocess.Popen[bytes], text: str, timeout: float, on_line: Callable[[str], None]
) -> tuple[int, str]:
    """Send `text` to a started claude, passing each line of its stdout to `on_line` as it comes,
    for at most `timeout` seconds; return its exit code and stderr. A process it left behind
    holding its output open does not hold the answer back (CLAUDE_EXIT_GRACE)."""
    import subprocess

    try:
        with terminations_as_exit():
            stderr = _pump(proc, text, timeout, on_line)
    except subprocess.TimeoutExpired:
        _kill(proc)
        raise BackendError(
            f"`claude -p` gave no answer within {timeout:g} s — try again, or use --backend anthropic"
        ) from None
    except CallerError as exc:
        _kill(proc)
        assert exc.__cause__ is not None
        raise exc.__cause__ from None
    except BaseException:
        _kill(proc)
        raise
    return proc.wait(), stderr


def _pump(proc: subprocess.Popen[bytes], text: str, timeout: float, on_line: Callable[[str], None]) -> str:
    """Feed stdin, read stdout line by line and stderr whole, until both close or the deadline."""
    import contextlib
    import selectors
    import subprocess
    import threading
    import time

    def feed() -> None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(text.encode("utf-8", "replace"))
        except OSError:  # claude exited without reading: its output says why
            pass
        finally:
            with contextlib.suppress(OSError):
                proc.stdin.close()

    threading.Thread(target=feed, daemon=True).start()
    assert proc.stdout is not None and proc.stderr is not None
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ, "out")
    selector.register(proc.stderr, selectors.EVENT_READ, "err")
    pending = {"out": b"", "err": b""}
    deadline = time.monotonic() + timeout
    exited_at: float | None = None
    while selector.get_map():
        now = time.monotonic()
        if now >= deadline:
            raise subprocess.TimeoutExpired(proc.args, timeout)
        if proc.poll() is not None:
            exited_at = exited_at or now
            if now - exited_at >= CLAUDE_EXIT_GRACE:  # claude is done; what holds its pipes is not
                _end_session(proc)
                break
        for key, _ in selector.select(timeout=min(0.25, deadline - now)):
            data = os.read(key.fd, 65536)
            if not data:
                selector.unregister(key.fileobj)
                continue
            pending[key.data] += data
            if key.data == "out":
                *lines, pending["out"] = pending["out"].split(b"\n")
                for line in lines:
                    on_line(line.decode("utf-8", "replace"))
    selector.close()
    for pipe in (proc.stdout, proc.stderr):
        pipe.close()
    if pending["out"].strip():
        on_line(pending["out"].decode("utf-8", "replace"))
    return pending["err"].decode("utf-8", "replace")


def _communicate(proc: subprocess.Popen[str], text: str, timeout: float) -> tuple[str, str]:
    """Send `text`, read the output until `claude` ends, at most `timeout` seconds. A process it
    left behind holding its output open (a daemon) does not hold the answer back: once claude
    has exited, the pipes get CLAUDE_EXIT_GRACE seconds, then its session is ended."""
    import subprocess
    import time

    deadline = time.monotonic() + timeout
    exited_at: float | None = None
    send: str | None = text
    while True:
        now = time.monotonic()
        if now >= deadline:
            raise subprocess.TimeoutExpired(proc.args, timeout)
        try:
            stdout, stderr = proc.communicate(send, timeout=min(0.5, deadline - now))
            return stdout, stderr
        except subprocess.TimeoutExpired:
            send = None  # sent once; a retry goes on reading without losing output
            if proc.poll() is None:
                continue
            exited_at = exited_at or time.monotonic()
            if time.monotonic() - exited_at >= CLAUDE_EXIT_GRACE:
                _end_session(proc)
                try:
                    return proc.communicate(timeout=1.0)
                except subprocess.TimeoutExpired as exc:
                    # a process that left claude's session (a daemon) holds the pipes: claude has
                    # finished, so what it wrote is its whole answer (or error)
                    _close_pipes(proc)
                    return _decoded(exc.output), _decoded(exc.stderr)


def _result_event(stdout: str) -> object:
    """The result of a run's output: the output itself as one JSON value, else its last line that
    is a `result` event."""
    try:
        return json.loads(stdout)
    except ValueError:
        pass
    for line in reversed(stdout.splitlines()):
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("type") == "result":
            return event
    return None


def _decoded(data: bytes | str | None) -> str:
    """What TimeoutExpired kept of a pipe (bytes, even for a text-mode Popen), as text."""
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode("utf-8", "replace")


def _end_session(proc: subprocess.Popen[Any]) -> bool:
    """Kill claude's session (claude and all it started in it); False if that was not possible."""
    import signal

    if not isinstance(proc.pid, int) or proc.pid <= 1:  # never a group that is not claude's own
        return False
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _close_pipes(proc: subprocess.Popen[Any]) -> None:
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


def _kill(proc: subprocess.Popen[Any]) -> None:
    import subprocess

    if not _end_session(proc):
        proc.kill()
    try:
        proc.communicate(timeout=1.0)
    except (subprocess.TimeoutExpired, ValueError):
        # a process outside claude's session holds the pipes, or stdin is closed already: let go
        _close_pipes(proc)
        proc.wait()


def parse_claude_result(returncode: int, stdout: str, stderr: str, model: str) -> Generation:
    """Return the answer of a `claude -p` run, its output one JSON result or stream-json events
    closed by the result; any failure is a BackendError."""
    result = _result_event(stdout)
    if not isinstance(result, dict):
        detail = one_line(stderr or stdout) or "no output"
        raise BackendError(
            f"`claude -p` failed (exit {returncode}): {detail} — check that `claude -p` works in a terminal"
        )
    text = result.get("result")
    if returncode != 0 or result.get("is_error") is not False:
        detail = one_line(str(text or result.get("subtype") or stderr or "unknown error"))
        raise BackendError(f"`claude -p` returned an error (exit {returncode}): {detail}")
    if not isinstance(text, str) or not text.strip():
        raise BackendError("`claude -p` returned an empty answer — try again, or use --backend anthropic")
    raw = result.get("usage")
    usage = {k: v for k in USAGE_FIELDS if isinstance(v := raw.get(k), int)} if isinstance(raw, dict) else {}
    return Generation(text=text, stop_reason=result.get("stop_reason") or None, usage=usage, model=model)
