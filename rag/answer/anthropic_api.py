"""The Messages API: the answer streamed with document citations and the answering model's searches
as tool use, through the `anthropic` SDK; short plain calls (a search plan), through the standard
library.

Importing the SDK takes 1-1.5 s on a 2-core machine, longer than a planning call. Retrieval never
needs it; an answered question starts importing it in the background (prepare()) when the question
comes in, and sends its plan without it, so that the import runs while the planning model thinks.
An answer's call that comes before the import is done goes out through the standard library too
(rag.answer.messages_stream), falling back to the SDK if it fails before its stream begins.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from typing import TYPE_CHECKING, Any

from rag.answer.defaults import DEFAULT_MODEL
from rag.answer.generation import (
    USAGE_FIELDS,
    ApiCitation,
    CallerError,
    Generation,
    OnRetract,
    OnSearch,
    OnText,
    TextGate,
    add_usage,
    one_line,
)
from rag.errors import BackendError

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    import anthropic

    from rag.answer.followups import Round, SearchTool
    from rag.answer.messages_stream import NotStarted
    from rag.answer.prompts import Prompt
    from rag.ranking.hits import Hit

DEFAULT_MAX_TOKENS = 2048
# seconds the SDK waits to connect, and for each read of the stream (not the whole answer); the
# SDK's own default read timeout is 600 s, retried twice: half an hour of silence
API_CONNECT_TIMEOUT = 10.0
API_READ_TIMEOUT = 120.0
# while the model may search; then, once its searches are used up, it must answer
MAY_SEARCH = {"type": "auto", "disable_parallel_tool_use": True}
MUST_ANSWER = {"type": "none"}
API_URL = "https://api.anthropic.com"  # the SDK's own default, unless ANTHROPIC_BASE_URL is set
API_VERSION = "2023-06-01"
_importing: list[threading.Thread] = []  # the background import of the SDK, once started


def import_sdk_in_background() -> None:
    """Start importing the SDK in a thread (once a process), unless it is imported already. A
    later `import anthropic` waits for that import to finish, as Python's module locks make it."""
    if _importing or "anthropic" in sys.modules:
        return
    import urllib.request  # noqa: F401  # complete()'s client, imported here first, outside the thread's import

    thread = threading.Thread(target=_import_sdk, name="import anthropic", daemon=True)
    _importing.append(thread)
    thread.start()


def _credentials(headers: dict[str, str]) -> bool:
    """Whether a request's headers carry a key or a token (else the SDK finds the credentials)."""
    return "x-api-key" in headers or "authorization" in headers


def _sdk_imported() -> bool:
    """Whether the SDK is imported whole: in sys.modules, and no import of it still running."""
    return "anthropic" in sys.modules and not any(thread.is_alive() for thread in _importing)


def _import_sdk() -> None:
    before = sys.getswitchinterval()
    # the main thread opens the index and searches meanwhile, in many short reads: each would wait
    # out the interval (5 ms) for the interpreter's lock while this thread runs Python code
    sys.setswitchinterval(min(before, 0.0005))
    try:
        with contextlib.suppress(ImportError):  # the call that needs it imports it again and says so
            import anthropic  # noqa: F401
    finally:
        sys.setswitchinterval(before)


def document(hit: Hit) -> dict[str, Any]:
    """One passage as a plain-text document with citations on: its text, titled path:lines (match)
    symbol, the match's breadcrumb as context (shown to the model, never cited)."""
    from rag.answer.prompts import document_title

    doc: dict[str, Any] = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": hit.passage.text},
        "title": document_title(hit),
        "citations": {"enabled": True},
    }
    if hit.chunk.context:
        doc["context"] = hit.chunk.context
    return doc


def tool_result(use_id: str, found: Round) -> dict[str, Any]:
    """A search's answer to the model: its passages as documents, or why there are none."""
    from rag.answer.followups import NO_NEW_PASSAGES

    if found.error is not None:
        return {"type": "tool_result", "tool_use_id": use_id, "content": found.error, "is_error": True}
    if not found.hits:
        return {"type": "tool_result", "tool_use_id": use_id, "content": NO_NEW_PASSAGES}
    return {"type": "tool_result", "tool_use_id": use_id, "content": [document(h) for h in found.hits]}


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
        """Return the arguments of messages.stream: each hit one plain-text document, then the
        question; with prompt.follow_ups, the search tool the model may call."""
        from rag.answer.prompts import question_text

        content = [
            *(document(hit) for hit in prompt.hits),
            {"type": "text", "text": question_text(prompt.question)},
        ]
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": prompt.system,
            "messages": [{"role": "user", "content": content}],
        }
        if prompt.follow_ups:
            from rag.answer.followups import tool_definition

            body["tools"] = [tool_definition(prompt.follow_ups)]
            body["tool_choice"] = MAY_SEARCH
        return body

    def prepare(self, follow_ups: int, tool: SearchTool | None) -> AbstractContextManager[None]:
        """An answer call will follow. With credentials in sight, its first request goes through the
        standard library and the SDK is imported once that request is sent (an import beside the
        search would slow it: both need the interpreter's lock); without, the SDK finds them, and
        its import starts now, in the background."""
        if not _credentials(self._endpoint()[1]):
            import_sdk_in_background()
        return contextlib.nullcontext()

    def prepare_completion(self, system: str, model: str) -> AbstractContextManager[None]:
        """Nothing to start: the planning call goes out through the standard library."""
        return contextlib.nullcontext()

    def render(self, prompt: Prompt) -> str:
        """Return the request body as JSON (the tool's definition in it)."""
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
        """One messages call, not streamed and not retried, within `timeout` seconds to connect and
        to read, through the standard library: the plan goes out while the SDK is still importing.
        Not retried: its failure costs only the plan, and a retry's wait (a Retry-After can be a
        minute) would hold the answer back."""
        from rag.answer.messages_stream import TIMED_OUT, UNREACHABLE, NotStarted, post

        url, headers = self._endpoint()
        try:
            with post(
                url, headers, self.completion_request(prompt, model, max_tokens), timeout, timeout
            ) as response:
                message = json.loads(response.read())
            text = "".join(b["text"] for b in message["content"] if b.get("type") == "text")
            stop_reason = message.get("stop_reason")
            usage = {k: v for k in USAGE_FIELDS if isinstance(v := (message.get("usage") or {}).get(k), int)}
        except NotStarted as failed:
            raise BackendError(failed.message(model)) from None
        except TimeoutError:  # reading the reply
            raise BackendError(TIMED_OUT) from None
        except OSError:
            raise BackendError(UNREACHABLE) from None
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BackendError(
                f"The Anthropic API sent a response this tool cannot read ({type(exc).__name__})"
            ) from None
        return Generation(
            text=text, stop_reason=stop_reason, usage=usage, model=message.get("model") or model
        )

    def _endpoint(self) -> tuple[str, dict[str, str]]:
        """Where complete() posts, and its headers: the given client's, else the SDK's defaults."""
        headers = {"content-type": "application/json", "anthropic-version": API_VERSION}
        if self.client is not None:
            url, key, token = str(self.client.base_url), self.client.api_key, self.client.auth_token
        else:
            url = os.environ.get("ANTHROPIC_BASE_URL") or API_URL
            key = self.api_key or os.environ.get("ANTHROPIC_API_KEY") or None
            token = None if key else os.environ.get("ANTHROPIC_AUTH_TOKEN") or None  # the SDK's choice
            for line in os.environ.get("ANTHROPIC_CUSTOM_HEADERS", "").split("\n"):  # as the SDK reads them
                name, colon, value = line.partition(":")
                if colon and name.strip():
                    headers[name.strip().lower()] = value.strip()
        if key:
            headers["x-api-key"] = key
        elif token:
            headers["authorization"] = f"Bearer {token}"
        return url.rstrip("/"), headers

    def generate(
        self,
        prompt: Prompt,
        on_text: OnText | None = None,
        tool: SearchTool | None = None,
        on_search: OnSearch | None = None,
        on_retract: OnRetract | None = None,
    ) -> Generation:
        """Stream the answer; after each cited text block, emit its reference numbers, e.g. " [1][2]".

        With `tool` and prompt.follow_ups, each turn that ends in a search runs it and sends its
        passages back as documents, until the model answers; once its searches are used up, the
        next turn must answer (tool_choice none)."""
        body = self.request(prompt)
        searching = tool is not None and bool(prompt.follow_ups)
        if not searching:
            body.pop("tools", None)
            body.pop("tool_choice", None)
        gate = TextGate(on_text, on_retract)
        numbers: dict[object, int] = {}  # document -> reference number, in order of first citation
        citations: list[ApiCitation] = []
        usage: dict[str, int] = {}
        calls = 0
        try:
            while True:
                may_search = tool is not None and searching and tool.left > 0
                if searching:
                    body["tool_choice"] = MAY_SEARCH if may_search else MUST_ANSWER
                calls += 1
                message = self._turn(body, gate, may_search, numbers)
                usage = add_usage(usage, _usage(message))
                for block in message.content:
                    if block.type == "text":
                        citations.extend(
                            a for c in block.citations or () if (a := _api_citation(c)) is not None
                        )
                uses = [b for b in message.content if b.type == "tool_use"]
                if not (tool is not None and searching and message.stop_reason == "tool_use" and uses):
                    break
                if calls >= prompt.follow_ups + 2:  # told its searches were used up, it searched again
                    break
                body["messages"].append(
                    {"role": "assistant", "content": [_param(b) for b in message.content]}
                )
                body["messages"].append(
                    {"role": "user", "content": [self._search(tool, b, on_search) for b in uses]}
                )
        except CallerError as exc:
            assert exc.__cause__ is not None
            raise exc.__cause__ from None
        except _sdk_error() as exc:
            raise BackendError(_api_error_message(exc, self.model)) from None
        except (ValueError, AssertionError, AttributeError, KeyError, TypeError) as exc:
            # a body that is not the Messages API's event stream (a proxy's JSON or HTML, a
            # garbled event): the SDK fails on it with an assertion or a JSON error
            raise BackendError(
                f"The Anthropic API sent a response this tool cannot read ({type(exc).__name__}) "
                "— check ANTHROPIC_BASE_URL and any proxy, or try again"
            ) from None
        text = gate.text
        if not text.strip() and message.stop_reason == "tool_use":
            raise BackendError(
                "The model kept searching instead of answering — ask again, or use --follow-ups 0"
            )
        if not text.strip() and message.stop_reason == "end_turn":
            raise BackendError(
                "The Anthropic API returned an empty answer — try again, or use --backend claude"
            )
        return Generation(
            text=text,
            api_citations=tuple(citations),
            stop_reason=message.stop_reason,
            usage=usage,
            model=message.model or self.model,
            rounds=tuple(tool.rounds) if tool is not None and searching else (),
            calls=calls,
        )

    def _turn(
        self, body: dict[str, Any], gate: TextGate, may_search: bool, numbers: dict[object, int]
    ) -> Any:
        """One streamed model call: its text through `gate`, markers after each cited block."""
        gate.start_turn(hold=may_search)
        with contextlib.ExitStack() as stack:
            stream = self._stream(stack, body)
            for event in stream:
                if event.type == "text":
                    gate.add(event.text)
                elif event.type == "content_block_start":
                    gate.block_start(event.content_block.type)
                elif event.type == "content_block_stop" and event.content_block.type == "text":
                    gate.add(_markers(event.content_block.citations, numbers))
                    gate.block_stop()
            message = stream.get_final_message()
        if message.stop_reason is None:  # the stream ended before its message_stop event
            raise BackendError(
                "The connection to the Anthropic API closed before the answer was complete — try again"
            )
        gate.end_turn(searched=message.stop_reason == "tool_use")
        return message

    def _stream(self, stack: contextlib.ExitStack[Any], body: dict[str, Any]) -> Any:
        """Open one call's event stream: while the SDK is still importing, through the standard
        library (the answer never waits for the import; a call that fails before its stream begins
        is sent again through the SDK, with its retries); else through the SDK."""
        url, headers = self._endpoint()
        if self.client is None and _credentials(headers) and not _sdk_imported():
            from rag.answer.messages_stream import NotStarted, Stream

            try:
                stream = stack.enter_context(
                    Stream(url, headers, body, API_CONNECT_TIMEOUT, API_READ_TIMEOUT)
                )
            except NotStarted as failed:
                return stack.enter_context(self._send_again(failed, body))
            import_sdk_in_background()  # for the turns that follow, while the model answers this one
            return stream
        return stack.enter_context(self._client().messages.stream(**body))

    def _send_again(self, failed: NotStarted, body: dict[str, Any]) -> Any:
        """After a first attempt through the standard library failed, the SDK's retries: those left
        of its own count, the first after the wait it would have taken; or the error it would give."""
        import time

        client = self._client()
        if failed.kind == "status" and failed.status in (401, 403):
            return client.messages.stream(**body)  # credentials as the SDK finds and sends them decide
        if not failed.retry or client.max_retries < 1:
            raise BackendError(failed.message(self.model))
        time.sleep(failed.wait)
        return client.with_options(max_retries=client.max_retries - 1).messages.stream(**body)

    @staticmethod
    def _search(tool: SearchTool, use: Any, on_search: OnSearch | None) -> dict[str, Any]:
        from rag.answer.followups import NO_SEARCHES_LEFT

        found = tool.call(use.input)
        if on_search is not None and found.error != NO_SEARCHES_LEFT:
            on_search(found.search)
        return tool_result(use.id, found)


def _sdk_error() -> type[Exception]:
    """The SDK's base error once it is imported (an `except` evaluates this only when it matches)."""
    sdk = sys.modules.get("anthropic")
    error = getattr(sdk, "AnthropicError", None)
    return error if isinstance(error, type) and issubclass(error, Exception) else _NoError


class _NoError(Exception):
    """Never raised: what _sdk_error matches before the SDK is imported."""


def _param(block: Any) -> dict[str, Any]:
    """A block of the model's reply as it is sent back: its text, or its tool call."""
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if block.type == "text":
        return {"type": "text", "text": block.text}
    return dict(block.to_dict()) if hasattr(block, "to_dict") else {"type": block.type}


def _usage(message: Any) -> dict[str, int]:
    return {k: v for k in USAGE_FIELDS if isinstance(v := getattr(message.usage, k, None), int)}


def _document_key(c: Any) -> object:
    title = getattr(c, "document_title", None)
    return title if isinstance(title, str) and title else getattr(c, "document_index", None)


def _markers(citations: Any, numbers: dict[object, int]) -> str:
    out = []
    for c in citations or ():
        if getattr(c, "document_index", None) is None:
            continue
        n = numbers.setdefault(_document_key(c), len(numbers) + 1)
        marker = f"[{n}]"
        if marker not in out:
            out.append(marker)
    return " " + "".join(out) if out else ""


def _api_citation(c: Any) -> ApiCitation | None:
    index = getattr(c, "document_index", None)
    if index is None:
        return None  # a web or search-result citation: not one of our documents
    title = getattr(c, "document_title", None)
    return ApiCitation(
        document_index=index,
        cited_text=getattr(c, "cited_text", "") or "",
        start_char=getattr(c, "start_char_index", None),
        end_char=getattr(c, "end_char_index", None),
        document_title=title if isinstance(title, str) else None,
    )


def _api_error_message(exc: Exception, model: str) -> str:
    """Turn an SDK error into one line that says what to do."""
    import anthropic

    from rag.answer.messages_stream import TIMED_OUT, UNREACHABLE, status_message

    if isinstance(exc, anthropic.APIStatusError):
        return status_message(exc.status_code, exc.body, model, retried=True)
    if isinstance(exc, anthropic.APITimeoutError):
        return TIMED_OUT
    if isinstance(exc, anthropic.APIConnectionError):
        return UNREACHABLE
    return f"The Anthropic API failed: {one_line(str(exc))}"
