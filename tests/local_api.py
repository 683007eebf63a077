"""A local server that speaks the Messages API from a script of responses, for the SDK's own client
in tests (no network), and the bodies it sends: whole messages and event streams."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic

NOT_QUEUED = json.dumps(
    {"type": "error", "error": {"type": "api_error", "message": "no response queued"}}
).encode()


@dataclass
class FakeApi:
    """A local HTTP server that answers POST /v1/messages from a script of responses."""

    url: str
    responses: list[tuple[int, dict[str, str], bytes | float]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def reply(self, status: int, body: object, **headers: str) -> FakeApi:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.responses.append((status, {"content-type": "application/json", **headers}, data))
        return self

    def stream(self, events: list[dict[str, Any]]) -> FakeApi:
        data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
        self.responses.append((200, {"content-type": "text/event-stream"}, data))
        return self

    def hang(self, seconds: float) -> FakeApi:
        self.responses.append((200, {}, seconds))
        return self

    def client(self, max_retries: int = 1, timeout: float = 10.0) -> anthropic.Anthropic:
        return anthropic.Anthropic(
            base_url=self.url, api_key="test", max_retries=max_retries, timeout=timeout
        )


def plan_reply(
    text: str, stop_reason: str = "end_turn", model: str = "claude-fast", usage: dict[str, int] | None = None
) -> dict[str, Any]:
    """A whole (not streamed) message holding `text`: the reply to a search-planning call."""
    return {
        "id": "msg_plan",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 50, "output_tokens": 6},
    }


def delta(index: int, **fields: Any) -> dict[str, Any]:
    """Return a content_block_delta event."""
    return {"type": "content_block_delta", "index": index, "delta": fields}


def text_events(text: str, model: str = "claude-test", stop_reason: str = "end_turn") -> list[dict[str, Any]]:
    """The events of a streamed answer that is one uncited text block."""
    return [
        {
            "type": "message_start",
            "message": {
                "id": "m",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 200, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        delta(0, type="text_delta", text=text),
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]


@contextmanager
def serving() -> Iterator[FakeApi]:
    """Serve a FakeApi on a free loopback port while the block runs."""
    fake = FakeApi(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            headers = {k.lower(): v for k, v in self.headers.items()}
            fake.requests.append({"path": self.path, "headers": headers, "json": json.loads(body)})
            if not fake.responses:  # more calls than the test queued: an API error the client reports
                status, headers, data = 500, {"content-type": "application/json"}, NOT_QUEUED
            else:
                status, headers, data = fake.responses.pop(0)
            if isinstance(data, float):
                time.sleep(data)
                return
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


def _message_start(model: str, input_tokens: int) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1},
        },
    }


def search_events(
    query: object, preamble: str = "", use_id: str = "toolu_1", model: str = "claude-test"
) -> list[dict[str, Any]]:
    """The events of a turn that ends in a call of the search tool (`query` its argument, or the
    whole input when it is not a string), after the text `preamble` if any."""
    events = [_message_start(model, 300)]
    index = 0
    if preamble:
        events += [
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            delta(0, type="text_delta", text=preamble),
            {"type": "content_block_stop", "index": 0},
        ]
        index = 1
    arguments = {"query": query} if isinstance(query, str) else query
    events += [
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "tool_use", "id": use_id, "name": "search", "input": {}},
        },
        delta(index, type="input_json_delta", partial_json=json.dumps(arguments)),
        {"type": "content_block_stop", "index": index},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 20},
        },
        {"type": "message_stop"},
    ]
    return events


def cited_events(
    text: str, citation: dict[str, Any] | None = None, model: str = "claude-test"
) -> list[dict[str, Any]]:
    """The events of an answer that is one text block, cited by `citation` (a char_location) if given."""
    block: list[dict[str, Any]] = [
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "text", "text": "", "citations": []},
        }
    ]
    if citation is not None:
        block.append(delta(0, type="citations_delta", citation=citation))
    return [
        _message_start(model, 500),
        *block,
        delta(0, type="text_delta", text=text),
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 30},
        },
        {"type": "message_stop"},
    ]
