"""Model backends behind one small interface: the Anthropic SDK and `claude -p`.

The `anthropic` SDK is imported only inside AnthropicBackend.generate: it is slow to import, and the
retrieval-only path never needs it. For the same reason subprocess and tempfile load only when used.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from rag.answer.defaults import BACKENDS, DEFAULT_MODEL
from rag.errors import BackendError, terminations_as_exit

if TYPE_CHECKING:
    import subprocess

    import anthropic

    from rag.answer.prompts import Prompt

DEFAULT_MAX_TOKENS = 2048
DEFAULT_CLAUDE_TIMEOUT = 300.0  # seconds for one `claude -p` run
# seconds the SDK waits to connect, and for each read of the stream (not the whole answer); the
# SDK's own default read timeout is 600 s, retried twice: half an hour of silence
API_CONNECT_TIMEOUT = 10.0
API_READ_TIMEOUT = 120.0
# a short call (a search plan) is not retried: its failure costs only the plan, and a retry's wait
# (the SDK honours a Retry-After of up to a minute) would hold the answer back
COMPLETION_RETRIES = 0
USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")

OnText = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class ApiCitation:
    """A citation the Messages API attached to the answer: a span of one of the documents sent."""

    document_index: int  # 0-based, in the order the documents were sent (= the order of the hits)
    cited_text: str
    start_char: int | None = None  # into the document's text, when the API gives a char location
    end_char: int | None = None


@dataclass(frozen=True, slots=True)
class Generation:
    """What a backend returns: the answer text and what is known about how it was produced."""

    text: str
    api_citations: tuple[ApiCitation, ...] = ()
    stop_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    model: str | None = None  # the model that answered, when the backend reports it


class Backend(Protocol):
    """A model that answers a prompt."""

    name: str
    model: str

    def generate(self, prompt: Prompt, on_text: OnText | None = None) -> Generation:
        """Answer `prompt`, passing text to `on_text` as it arrives."""
        ...

    def render(self, prompt: Prompt) -> str:
        """Return exactly what would be sent for `prompt`, readably (for --show-prompt)."""
        ...

    def complete(self, prompt: Prompt, *, model: str, max_tokens: int, timeout: float) -> Generation:
        """Answer a short prompt of plain text (no documents) with `model`, in one call, not streamed."""
        ...

    def render_completion(self, prompt: Prompt, *, model: str, max_tokens: int) -> str:
        """Return exactly what complete() would send for `prompt`, readably (for --show-prompt)."""
        ...


def render_text_prompt(prompt: Prompt) -> str:
    """Show a prompt as its system part and its user part."""
    return f"--- system ---\n{prompt.system}\n--- user ---\n{prompt.user}"


class AnthropicBackend:
    """The Messages API through the `anthropic` SDK, streamed, with document citations enabled."""

    name = "anthropic"

    def __init__(
        self,
        client: anthropic.Anthropic | None = None,
        model: str = DEFAULT_MODEL,
        api_key: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        self.client = client
        self.model = model
        self.api_key = api_key
        self.max_tokens = max_tokens

    def request(self, prompt: Prompt) -> dict[str, Any]:
        """Return the arguments of messages.stream: each hit one plain-text document, then the question."""
        from rag.answer.prompts import document_title, question_text

        documents: list[dict[str, Any]] = []
        for hit in prompt.hits:
            doc: dict[str, Any] = {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": hit.passage.text},
                "title": document_title(hit),
                "citations": {"enabled": True},
            }
            if hit.chunk.context:
                doc["context"] = hit.chunk.context  # shown to the model, never cited
            documents.append(doc)
        content = [*documents, {"type": "text", "text": question_text(prompt.question)}]
        return {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": prompt.system,
            "messages": [{"role": "user", "content": content}],
        }

    def render(self, prompt: Prompt) -> str:
        """Return the request body as JSON."""
        return json.dumps(self.request(prompt), indent=2, ensure_ascii=False)

    def _client(self) -> anthropic.Anthropic:
        """The SDK client, made once: a plan and an answer share its connection."""
        import anthropic

        if self.client is None:
            self.client = anthropic.Anthropic(
                api_key=self.api_key, timeout=anthropic.Timeout(API_READ_TIMEOUT, connect=API_CONNECT_TIMEOUT)
            )
        return self.client

    def completion_request(self, prompt: Prompt, model: str, max_tokens: int) -> dict[str, Any]:
        """Return the arguments of messages.create for a short plain-text prompt."""
        return {
            "model": model,
            "max_tokens": max_tokens,
            "system": prompt.system,
            "messages": [{"role": "user", "content": prompt.user}],
        }

    def render_completion(self, prompt: Prompt, *, model: str, max_tokens: int) -> str:
        """Return the request body of complete() as JSON."""
        return json.dumps(self.completion_request(prompt, model, max_tokens), indent=2, ensure_ascii=False)

    def complete(self, prompt: Prompt, *, model: str, max_tokens: int, timeout: float) -> Generation:
        """One messages.create call, not retried, within `timeout` seconds to connect and to read."""
        import anthropic

        client = self._client().with_options(
            timeout=anthropic.Timeout(timeout, connect=min(timeout, API_CONNECT_TIMEOUT)),
            max_retries=COMPLETION_RETRIES,
        )
        try:
            message = client.messages.create(**self.completion_request(prompt, model, max_tokens))
            text = "".join(block.text for block in message.content if block.type == "text")
        except anthropic.AnthropicError as exc:
            raise BackendError(_api_error_message(exc, model)) from None
        except (ValueError, AssertionError, AttributeError, KeyError, TypeError) as exc:
            raise BackendError(
                f"The Anthropic API sent a response this tool cannot read ({type(exc).__name__})"
            ) from None
        usage = {k: v for k in USAGE_FIELDS if isinstance(v := getattr(message.usage, k, None), int)}
        return Generation(
            text=text, stop_reason=message.stop_reason, usage=usage, model=message.model or model
        )

    def generate(self, prompt: Prompt, on_text: OnText | None = None) -> Generation:
        """Stream the answer; after each cited text block, emit its reference numbers, e.g. " [1][2]"."""
        import anthropic

        client = self._client()
        write = on_text or (lambda _: None)

        def emit(text: str) -> None:  # an error of the caller's writer is not the API's
            try:
                write(text)
            except Exception as exc:
                raise _CallerError from exc

        numbers: dict[int, int] = {}  # document index -> reference number, in order of first citation
        try:
            with client.messages.stream(**self.request(prompt)) as stream:
                for event in stream:
                    if event.type == "text":
                        emit(event.text)
                    elif event.type == "content_block_stop" and event.content_block.type == "text":
                        markers = _markers(event.content_block.citations, numbers)
                        if markers:
                            emit(markers)
                message = stream.get_final_message()
        except _CallerError as exc:
            assert exc.__cause__ is not None
            raise exc.__cause__ from None
        except anthropic.AnthropicError as exc:
            raise BackendError(_api_error_message(exc, self.model)) from None
        except (ValueError, AssertionError, AttributeError, KeyError, TypeError) as exc:
            # a body that is not the Messages API's event stream (a proxy's JSON or HTML, a
            # garbled event): the SDK fails on it with an assertion or a JSON error
            raise BackendError(
                f"The Anthropic API sent a response this tool cannot read ({type(exc).__name__}) "
                "— check ANTHROPIC_BASE_URL and any proxy, or try again"
            ) from None
        if message.stop_reason is None:  # the stream ended before its message_stop event
            raise BackendError(
                "The connection to the Anthropic API closed before the answer was complete — try again"
            )
        parts: list[str] = []
        citations: list[ApiCitation] = []
        final_numbers: dict[int, int] = {}
        for block in message.content:
            if block.type != "text":
                continue  # keep only text: no thinking, tool use or other block reaches the answer
            parts.append(block.text + _markers(block.citations, final_numbers))
            citations.extend(a for c in block.citations or () if (a := _api_citation(c)) is not None)
        text = "".join(parts)
        if not text.strip() and message.stop_reason == "end_turn":
            raise BackendError(
                "The Anthropic API returned an empty answer — try again, or use --backend claude"
            )
        usage = {k: v for k in USAGE_FIELDS if isinstance(v := getattr(message.usage, k, None), int)}
        return Generation(
            text=text,
            api_citations=tuple(citations),
            stop_reason=message.stop_reason,
            usage=usage,
            model=message.model or self.model,
        )


class _CallerError(Exception):
    """Carries an exception raised by the on_text callback past the handlers for the API's."""


def _markers(citations: Any, numbers: dict[int, int]) -> str:
    out = []
    for c in citations or ():
        index = getattr(c, "document_index", None)
        if index is None:
            continue
        n = numbers.setdefault(index, len(numbers) + 1)
        marker = f"[{n}]"
        if marker not in out:
            out.append(marker)
    return " " + "".join(out) if out else ""


def _api_citation(c: Any) -> ApiCitation | None:
    index = getattr(c, "document_index", None)
    if index is None:
        return None  # a web or search-result citation: not one of our documents
    return ApiCitation(
        document_index=index,
        cited_text=getattr(c, "cited_text", "") or "",
        start_char=getattr(c, "start_char_index", None),
        end_char=getattr(c, "end_char_index", None),
    )


def _api_error_message(exc: anthropic.AnthropicError, model: str) -> str:
    """Turn an SDK error into one line that says what to do."""
    import anthropic

    if isinstance(exc, anthropic.AuthenticationError):
        return "The Anthropic API rejected the API key (401) — check ANTHROPIC_API_KEY"
    if isinstance(exc, anthropic.PermissionDeniedError):
        return "This API key may not use the Anthropic API or this model (403) — check the key's workspace"
    if isinstance(exc, anthropic.NotFoundError):
        return f"The Anthropic API does not know model {model!r} (404) — pick another: --model or RAG_MODEL"
    if isinstance(exc, anthropic.RateLimitError):
        return "Rate limited by the Anthropic API (429), even after retries — wait a minute and ask again"
    if isinstance(exc, anthropic.APIStatusError) and (
        exc.status_code == 529 or _error_type(exc.body) == "overloaded_error"
    ):
        return "The Anthropic API is overloaded (529), even after retries — try again shortly"
    if isinstance(exc, anthropic.APITimeoutError):
        return "The Anthropic API timed out — check your connection and try again"
    if isinstance(exc, anthropic.APIConnectionError):
        return "Cannot reach the Anthropic API — check your network connection (or ANTHROPIC_BASE_URL)"
    if isinstance(exc, anthropic.APIStatusError):
        detail = _error_detail(exc.body) or exc.__class__.__name__
        return f"The Anthropic API failed ({exc.status_code}): {detail} — try again, or use --backend claude"
    return f"The Anthropic API failed: {_one_line(str(exc))}"


def _error_type(body: object) -> str | None:
    error = body.get("error") if isinstance(body, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) else None


def _error_detail(body: object) -> str:
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return _one_line(message) if isinstance(message, str) else ""


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class ClaudeCliBackend:
    """`claude -p` (Claude Code) in a subprocess: prompt on stdin, no tools, JSON result."""

    name = "claude"

    def __init__(
        self, executable: str = "claude", model: str = DEFAULT_MODEL, timeout: float = DEFAULT_CLAUDE_TIMEOUT
    ) -> None:
        self.executable = executable
        self.model = model
        self.timeout = timeout

    def command(self, prompt: Prompt, model: str | None = None) -> list[str]:
        """Return the argument vector: print mode, JSON output, tools off, our system prompt."""
        return [
            self.executable,
            "-p",
            "--output-format",
            "json",
            "--tools",
            "",
            "--model",
            model or self.model,
            "--system-prompt",
            prompt.system,
        ]

    def render(self, prompt: Prompt) -> str:
        """Return the system prompt (passed as --system-prompt) and the user prompt (sent on stdin)."""
        return render_text_prompt(prompt)

    def render_completion(self, prompt: Prompt, *, model: str, max_tokens: int) -> str:
        """Return what complete() sends: the same parts as an answer's, to `model`."""
        return render_text_prompt(prompt)

    def complete(self, prompt: Prompt, *, model: str, max_tokens: int, timeout: float) -> Generation:
        """One more `claude -p` run, with `model`, cut at `timeout` seconds (claude takes no token limit)."""
        return self._run(prompt, model, timeout)

    def generate(self, prompt: Prompt, on_text: OnText | None = None) -> Generation:
        """Run `claude -p` from an empty temporary directory, so no CLAUDE.md or project settings load."""
        generation = self._run(prompt, self.model, self.timeout)
        if on_text is not None:
            on_text(generation.text)
        return generation

    def _run(self, prompt: Prompt, model: str, timeout: float) -> Generation:
        import subprocess
        import tempfile

        with tempfile.TemporaryDirectory(prefix="rag-claude-") as cwd:
            try:
                # its own session, so that a timeout or Ctrl-C can end claude and anything it started
                proc = subprocess.Popen(
                    self.command(prompt, model),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    cwd=cwd,
                    text=True,
                    encoding="utf-8",
                    errors="replace",
                    start_new_session=True,
                )
            except FileNotFoundError:
                raise BackendError(
                    f"`{self.executable}` is not installed or not on PATH — install Claude Code, "
                    "or use --backend anthropic with ANTHROPIC_API_KEY"
                ) from None
            try:
                with terminations_as_exit():  # then claude's session is ended too
                    stdout, stderr = _communicate(proc, prompt.user, timeout)
            except subprocess.TimeoutExpired:
                _kill(proc)
                raise BackendError(
                    f"`claude -p` gave no answer within {timeout:g} s — try again, or use --backend anthropic"
                ) from None
            except BaseException:
                _kill(proc)
                raise
        return parse_claude_result(proc.returncode, stdout, stderr, model)


CLAUDE_EXIT_GRACE = 2.0  # seconds to wait for the pipes to close once `claude` itself has exited


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


def _decoded(data: bytes | str | None) -> str:
    """What TimeoutExpired kept of a pipe (bytes, even for a text-mode Popen), as text."""
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode("utf-8", "replace")


def _end_session(proc: subprocess.Popen[str]) -> bool:
    """Kill claude's session (claude and all it started in it); False if that was not possible."""
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _close_pipes(proc: subprocess.Popen[str]) -> None:
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


def _kill(proc: subprocess.Popen[str]) -> None:
    import subprocess

    if not _end_session(proc):
        proc.kill()
    try:
        proc.communicate(timeout=1.0)
    except subprocess.TimeoutExpired:  # a process outside claude's session holds the pipes: let go
        _close_pipes(proc)
        proc.wait()


def parse_claude_result(returncode: int, stdout: str, stderr: str, model: str) -> Generation:
    """Return the answer of a `claude -p --output-format json` run; any failure is a BackendError."""
    try:
        result = json.loads(stdout)
    except ValueError:
        result = None
    if not isinstance(result, dict):
        detail = _one_line(stderr or stdout) or "no output"
        raise BackendError(
            f"`claude -p` failed (exit {returncode}): {detail} — check that `claude -p` works in a terminal"
        )
    text = result.get("result")
    if returncode != 0 or result.get("is_error") is not False:
        detail = _one_line(str(text or result.get("subtype") or stderr or "unknown error"))
        raise BackendError(f"`claude -p` returned an error (exit {returncode}): {detail}")
    if not isinstance(text, str) or not text.strip():
        raise BackendError("`claude -p` returned an empty answer — try again, or use --backend anthropic")
    raw = result.get("usage")
    usage = {k: v for k in USAGE_FIELDS if isinstance(v := raw.get(k), int)} if isinstance(raw, dict) else {}
    return Generation(text=text, stop_reason=result.get("stop_reason") or None, usage=usage, model=model)


def resolve_backend(
    name: str,
    model: str = DEFAULT_MODEL,
    env: Mapping[str, str] | None = None,
) -> Backend | None:
    """Return the backend `name` stands for; None for `none`.

    `auto` is the SDK when ANTHROPIC_API_KEY is set, else `claude` when it is on PATH, else none.
    """
    import shutil

    env = os.environ if env is None else env
    key = (env.get("ANTHROPIC_API_KEY") or "").strip() or None  # a pasted key's newline is not part of it
    if name == "none":
        return None
    if key is not None and (" " in key or not key.isprintable()):
        # an HTTP header cannot hold it: the SDK would fail as if the network were down
        raise BackendError("ANTHROPIC_API_KEY holds a space or a line break — set it to the key alone")
    if name == "anthropic":
        if key is None:
            raise BackendError(
                "ANTHROPIC_API_KEY is not set — export it, or use --backend claude or --backend none"
            )
        return AnthropicBackend(model=model, api_key=key)
    claude = shutil.which("claude", path=env.get("PATH"))
    if name == "claude":
        if claude is None:
            raise BackendError(
                "`claude` is not on PATH — install Claude Code, or use --backend anthropic or --backend none"
            )
        return ClaudeCliBackend(executable=claude, model=model)
    if name == "auto":
        if key is not None:
            return AnthropicBackend(model=model, api_key=key)
        return ClaudeCliBackend(executable=claude, model=model) if claude else None
    raise ValueError(f"unknown backend {name!r}; expected one of {', '.join(BACKENDS)}")
