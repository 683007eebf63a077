"""One streamed Messages API call through the standard library: the answer's first request, sent while
the SDK is still importing (rag.answer.anthropic_api), so that the answer never waits for that import.

It reads the event stream the API documents (message_start, content blocks with their text, citation
and tool-input deltas, message_delta, message_stop, error) into the shapes the SDK's stream gives:
objects with the same attribute names, so the backend handles either. A call that fails before its
stream begins (no connection, an HTTP error status, a timeout) raises NotStarted, and is sent again
through the SDK, with its retries and its errors. The one-line messages for the API's failures, which
both paths give, are here too.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from rag.answer.generation import one_line
from rag.errors import BackendError


class NotStarted(Exception):
    """The call failed before its event stream began: nothing was read. `retry`: whether the SDK
    would send it again (a timeout, no connection, 408, 409, 429 or 5xx, unless the API says not
    to), after `wait` seconds (the API's retry-after, as the SDK reads it, or its first backoff)."""

    def __init__(
        self, kind: str, status: int = 0, body: object = None, retry: bool = True, wait: float | None = None
    ) -> None:
        super().__init__(kind)
        wait = _backoff() if wait is None else wait
        self.kind, self.status, self.body, self.retry, self.wait = kind, status, body, retry, wait

    @classmethod
    def answered(cls, status: int, body: object, headers: Any) -> NotStarted:
        """An HTTP error status, with the SDK's reading of whether and when to send it again."""
        should = (headers.get("x-should-retry") or "").lower()
        retry = should == "true" or (should != "false" and (status in (408, 409, 429) or status >= 500))
        return cls("status", status, body, retry, _retry_after(headers))

    def message(self, model: str) -> str:
        """The one line the failure gives when it is not sent again."""
        if self.kind == "status":
            return status_message(self.status, self.body, model, retried=False)
        return TIMED_OUT if self.kind == "timeout" else UNREACHABLE


def post(url: str, headers: dict[str, str], body: dict[str, Any], connect: float, read: float) -> Any:
    """POST `body` to the Messages API at `url` (connected within `connect` seconds, each read within
    `read`): the open response, or NotStarted when it fails before one comes."""
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode()
    call = urllib.request.Request(f"{url}/v1/messages", data=data, headers=headers, method="POST")
    try:
        return _opener(read).open(call, timeout=connect)
    except urllib.error.HTTPError as exc:
        raise NotStarted.answered(exc.code, json_body(exc), exc.headers) from None
    except TimeoutError:
        raise NotStarted("timeout") from None
    except urllib.error.URLError as exc:
        raise NotStarted("timeout" if isinstance(exc.reason, TimeoutError) else "connection") from None
    except (OSError, http.client.HTTPException):
        raise NotStarted("connection") from None


class Stream:
    """The events of one streamed call, as the SDK's message stream yields them, then its message."""

    def __init__(self, url: str, headers: dict[str, str], body: dict[str, Any], connect: float, read: float):
        self._request = (url, headers, body, connect, read)
        self._response: Any = None
        self.message: SimpleNamespace | None = None

    def __enter__(self) -> Stream:
        url, headers, body, connect, read = self._request
        try:
            self._response = post(
                url, {**headers, "accept": "text/event-stream"}, {**body, "stream": True}, connect, read
            )
        except ValueError:  # a base URL urllib cannot use: the SDK says what it makes of it
            raise NotStarted("connection") from None
        return self

    def __exit__(self, *exc: object) -> None:
        if self._response is not None:
            self._response.close()

    def __iter__(self) -> Iterator[SimpleNamespace]:
        """Yield `text`, `content_block_start` and `content_block_stop` events as the SDK names them
        (a stop carries its whole block); keep the message they build in `message`. Events are
        told by their SSE name, as the SDK tells them; others (ping, new kinds) are passed over."""
        blocks: list[SimpleNamespace] = []
        raw: list[dict[str, Any]] = []  # each block as the API sent it, its deltas applied
        inputs: dict[int, list[str]] = {}  # a tool call's input, as JSON in parts
        try:
            for name, data in _events(self._response):
                if name == "error":
                    model = self.message.model if self.message is not None else ""
                    raise BackendError(status_message(200, json.loads(data), model, retried=False))
                if name not in _MESSAGE_EVENTS:
                    continue
                event = json.loads(data)
                if name == "message_start":
                    start = event["message"]
                    self.message = SimpleNamespace(
                        model=start.get("model"),
                        content=blocks,
                        stop_reason=start.get("stop_reason"),
                        usage=SimpleNamespace(**(start.get("usage") or {})),
                    )
                elif name == "content_block_start":
                    raw.append(dict(event["content_block"]))
                    blocks.append(_block(raw[-1]))
                    yield SimpleNamespace(type="content_block_start", content_block=blocks[-1])
                elif name == "content_block_delta":
                    i, delta = event["index"], event["delta"]
                    block = blocks[i]
                    if delta["type"] == "text_delta":
                        block.text += delta["text"]
                        yield SimpleNamespace(type="text", text=delta["text"])
                    elif delta["type"] == "citations_delta":
                        block.citations.append(SimpleNamespace(**delta["citation"]))
                    elif delta["type"] == "input_json_delta":
                        inputs.setdefault(i, []).append(delta["partial_json"])
                    elif delta["type"] == "thinking_delta":
                        raw[i]["thinking"] = raw[i].get("thinking", "") + delta["thinking"]
                    elif delta["type"] == "signature_delta":
                        raw[i]["signature"] = delta["signature"]
                elif name == "content_block_stop":
                    block = blocks[event["index"]]
                    if block.type == "tool_use":
                        block.input = json.loads("".join(inputs.get(event["index"], ())) or "{}")
                    yield SimpleNamespace(type="content_block_stop", content_block=block)
                elif name == "message_delta" and self.message is not None:
                    self.message.stop_reason = event["delta"].get("stop_reason")
                    for key, value in (event.get("usage") or {}).items():
                        if value is not None:
                            setattr(self.message.usage, key, value)
                elif name == "message_stop":
                    break
        except TimeoutError:
            raise BackendError(TIMED_OUT) from None
        except (OSError, http.client.HTTPException):
            pass  # cut off: the message has no stop reason, which the backend reports

    def get_final_message(self) -> SimpleNamespace:
        """The message the stream built (the SDK's name)."""
        if self.message is None:
            raise ValueError("the stream held no message")
        return self.message


_MESSAGE_EVENTS = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)


def _block(start: dict[str, Any]) -> SimpleNamespace:
    """A content block as it starts: text with its citations, a tool call, or another kind (a
    thinking block), which is sent back as the API sent it, deltas applied (`to_dict`)."""
    if start.get("type") == "text":
        return SimpleNamespace(type="text", text=start.get("text") or "", citations=[])
    if start.get("type") == "tool_use":
        return SimpleNamespace(type="tool_use", id=start.get("id"), name=start.get("name"), input={})
    return SimpleNamespace(type=start.get("type"), to_dict=lambda: dict(start))


def _events(response: Any) -> Iterator[tuple[str, str]]:
    """Server-sent events: each one's name and data (its data lines joined), in order."""
    name, data = "", list[str]()
    for raw in response:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data:
                yield name or "message", "\n".join(data)
            name, data = "", []
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        yield name or "message", "\n".join(data)


def _opener(read: float) -> Any:
    """A urllib opener (proxies as urllib finds them) whose connections, once connected within the
    call's timeout, wait up to `read` seconds for each read: the SDK's connect and read timeouts."""
    import urllib.request

    class Connection(http.client.HTTPConnection):
        def connect(self) -> None:
            super().connect()
            self.sock.settimeout(read)

    class SecureConnection(http.client.HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            self.sock.settimeout(read)

    class Plain(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> Any:
            return self.do_open(Connection, req)

    class Secure(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> Any:
            return self.do_open(SecureConnection, req)

    return urllib.request.build_opener(Plain, Secure)


def _retry_after(headers: Any) -> float:
    """Seconds to wait before sending again, as the SDK reads them: retry-after-ms, or retry-after in
    seconds or as a date, when positive; else its first backoff."""
    import email.utils
    import time

    wait: float | None = None
    try:
        wait = float(headers.get("retry-after-ms")) / 1000
    except (TypeError, ValueError):
        after = headers.get("retry-after")
        try:
            wait = float(after)
        except (TypeError, ValueError):
            when = email.utils.parsedate_tz(after) if isinstance(after, str) else None
            wait = float(email.utils.mktime_tz(when) - time.time()) if when is not None else None
    if wait is not None and wait > 0:
        return min(wait, 4_294_967.0)
    return _backoff()


def _backoff() -> float:
    """The SDK's wait before its first retry: half a second, less up to a quarter of it."""
    import random

    return 0.5 * (1 - 0.25 * random.random())


def json_body(exc: Any) -> object:
    """An HTTP error's body as JSON, None when it is not."""
    try:
        return json.loads(exc.read())
    except (ValueError, OSError):
        return None


TIMED_OUT = "The Anthropic API timed out — check your connection and try again"
UNREACHABLE = "Cannot reach the Anthropic API — check your network connection (or ANTHROPIC_BASE_URL)"


def status_message(status: int, body: object, model: str, *, retried: bool) -> str:
    """One line for an HTTP error of the Messages API, saying what to do."""
    again = ", even after retries" if retried else ""
    if status == 401:
        return "The Anthropic API rejected the API key (401) — check ANTHROPIC_API_KEY"
    if status == 403:
        return "This API key may not use the Anthropic API or this model (403) — check the key's workspace"
    if status == 404:
        return f"The Anthropic API does not know model {model!r} (404) — pick another: --model or RAG_MODEL"
    if status == 429:
        return f"Rate limited by the Anthropic API (429){again} — wait a minute and ask again"
    if status == 529 or _error_type(body) == "overloaded_error":
        return f"The Anthropic API is overloaded (529){again} — try again shortly"
    detail = _error_detail(body) or f"HTTP {status}"
    return f"The Anthropic API failed ({status}): {detail} — try again, or use --backend claude"


def _error_type(body: object) -> str | None:
    error = body.get("error") if isinstance(body, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) else None


def _error_detail(body: object) -> str:
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return one_line(message) if isinstance(message, str) else ""
